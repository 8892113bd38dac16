"""Arguments for the FMI fuzz cases (tests/fmu_cases.py fuzz for FMI 2.0, tests/fmi3_cases.py fuzz for FMI 3.0): a
function's arguments as kinds (one letter each; ``P`` a pointer, ``Z`` a count), drawn from a table of values."""
from __future__ import annotations

import itertools
from ctypes import addressof, c_char


def combinations(kinds: str, values: dict) -> list:
    """Every combination of ``values[kind]`` over ``kinds``, less those that pass a real buffer (P = 1) with a count
    of 2⁴⁰ or more: a 64-byte buffer said to hold more is the host's lie, not a case."""
    return [c for c in itertools.product(*(values[k] for k in kinds))
            if not (1 in [v for k, v in zip(kinds, c) if k == "P"]
                    and any(v >= 2 ** 40 for k, v in zip(kinds, c) if k == "Z"))]


def arguments(kinds: str, combo) -> tuple[list, list]:
    """(the ctypes arguments of ``combo``: P as NULL or a zeroed 64-byte buffer, the rest as given; the buffers, to
    keep alive during the call)."""
    buffers = [(c_char * 64)() for _ in kinds]
    return [(addressof(b) if v else None) if k == "P" else v for k, v, b in zip(kinds, combo, buffers)], buffers


class Findings:
    """What the fuzz cases look for in each call: an error status with nothing logged, a status the FMI version does
    not have (``statuses``), a NULL instance not refused (status ``error``)."""

    def __init__(self, statuses, error=3):
        self.statuses, self.error = tuple(statuses), error
        self.calls, self.silent, self.odd, self.null_accepted = 0, [], [], []

    def check(self, where: str, status: int, logged: bool, null_status: int) -> None:
        self.calls += 1
        if status == self.error and not logged:
            self.silent.append(where)
        if status not in self.statuses:
            self.odd.append(f"{where}: {status}")
        if null_status != self.error:
            self.null_accepted.append(where)

    def result(self) -> dict:
        """The case's result: the calls made and the first ten of each finding."""
        return {"calls": self.calls, "silent": self.silent[:10], "odd_status": self.odd[:10],
                "null_accepted": self.null_accepted[:10]}
