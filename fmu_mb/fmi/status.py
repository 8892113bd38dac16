"""Report FMI status codes from Python through the fmu_mb shim library.

pythonfmu's C wrapper turns every Python exception into fmi2Fatal and frees the
instance's Python objects, and its only other channel is do_step's boolean
(fmi2Discard). The FMU binary fmu_mb builds (``fmu_mb/fmi/shim/fmu_mb_shim.c``)
wraps pythonfmu's library and exports ``fmu_mb_report_status``: Python calls it
while an FMI function runs, and the shim returns the worse of that status and
pythonfmu's. Where the shim is absent (a slave instantiated directly in Python,
or a platform without the shim) reporting is a no-op and the log message is the
only trace.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

OK, WARNING, DISCARD, ERROR, FATAL = 0, 1, 2, 3, 4


class StatusReporter:
    def __init__(self, resources: str | None, model_identifier: str):
        self._fn = None
        if not resources:
            return
        lib = Path(resources).parent / "binaries" / "linux64" / f"{model_identifier}.so"
        if lib.is_file():
            try:
                fn = ctypes.CDLL(str(lib)).fmu_mb_report_status
                fn.argtypes = [ctypes.c_int]
                fn.restype = None
                self._fn = fn
            except (OSError, AttributeError):
                self._fn = None

    @property
    def active(self) -> bool:
        return self._fn is not None

    def __call__(self, status: int) -> None:
        if self._fn is not None:
            self._fn(int(status))
