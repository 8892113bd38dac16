"""The Python slave's channel to the fmu_mb FMU binary (``fmu_mb/fmi/shim/fmu_mb_shim.c``).

pythonfmu's C wrapper can only return fmi2OK, fmi2Discard or fmi2Fatal, drops every log
message when the host passed ``loggingOn = false``, and knows nothing of the slave's phase.
The FMU binary fmu_mb builds wraps it and exports three functions the slave calls (ctypes)
while an FMI function runs; each acts on the instance whose call is running (the binary
keeps it per thread):

* ``fmu_mb_report_status(status)`` — the host gets the worse of this and the wrapper's status;
* ``fmu_mb_report_phase(phase, time)`` — the phase and time of the FMI state machine, which
  the binary uses for the calls it answers itself (status inquiries) and for
  fmi2GetRealStatus(fmi2LastSuccessfulTime);
* ``fmu_mb_log(status, category, text)`` — a message straight to the host's logger: errors and
  warnings always, debug messages as loggingOn / fmi2SetDebugLogging say.

Where the binary is absent (a slave instantiated directly in Python) the reporter is
inactive: statuses and phases go nowhere and messages go to pythonfmu's log queue.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

OK, WARNING, DISCARD, ERROR, FATAL = 0, 1, 2, 3, 4

_LIBS: dict = {}


def _functions(lib_path: Path):
    key = str(lib_path)
    if key not in _LIBS:
        fns = None
        try:
            lib = ctypes.CDLL(key)         # the host's copy: dlopen finds the loaded library by its inode
            status, phase, log = lib.fmu_mb_report_status, lib.fmu_mb_report_phase, lib.fmu_mb_log
            status.argtypes, status.restype = [ctypes.c_int], None
            phase.argtypes, phase.restype = [ctypes.c_int, ctypes.c_double], None
            log.argtypes, log.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p], None
            fns = (status, phase, log)
        except (OSError, AttributeError):
            fns = None
        _LIBS[key] = fns
    return _LIBS[key]


class StatusReporter:
    """Calls into the FMU binary of ``<resources>/../binaries/linux64/<model_identifier>.so``."""

    def __init__(self, resources: str | None, model_identifier: str):
        self._fns = None
        if resources:
            lib = Path(resources).parent / "binaries" / "linux64" / f"{model_identifier}.so"
            if lib.is_file():
                self._fns = _functions(lib)

    @property
    def active(self) -> bool:
        return self._fns is not None

    def __call__(self, status: int) -> None:
        if self._fns is not None:
            self._fns[0](int(status))

    def phase(self, phase: int, time: float) -> None:
        if self._fns is not None:
            self._fns[1](int(phase), float(time))

    def log(self, status: int, category: str, text: str) -> None:
        if self._fns is not None:
            self._fns[2](int(status), category.encode(), text.encode("utf-8", "backslashreplace"))
