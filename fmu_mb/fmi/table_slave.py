"""Generic FMI 2.0 co-simulation behaviour over an interface table (pythonfmu ``Fmi2Slave``).

Subclasses provide the model: ``_make_interface()``, ``_build()`` (create the
runtime from the parameter values), ``_advance(t, h)``, ``_refresh()`` (copy
outputs into ``self._values``) and ``_state()``/``_restore(x)``. This class
provides what every fmu_mb FMU must do the same way:

* Nothing raises out of it. pythonfmu would turn an exception into fmi2Fatal and
  free the instance; instead every entry point catches, logs a readable message
  (category ``logStatusError``) and reports fmi2Error through the fmu_mb shim
  (:mod:`fmu_mb.fmi.status`).
* Call order is checked: parameters only before fmi2ExitInitializationMode,
  fmi2DoStep only after it and before fmi2Terminate, with
  currentCommunicationPoint equal to the FMU's time; a zero, negative or
  non-finite step is refused.
* Inputs that are NaN or infinite are refused (fmi2Error) and the previous
  value kept; outputs cannot be set; parameters are checked in
  fmi2ExitInitializationMode, which then fails naming every offending
  parameter and its valid range.
* FMU state (get/set/serialize) is every parameter and input value plus the
  runtime state vector, in the checked binary format of :mod:`fmu_mb.fmi.state`.
"""
from __future__ import annotations

import functools
import math
import traceback

import numpy as np
from pythonfmu import Fmi2Slave
from pythonfmu.enums import Fmi2Causality, Fmi2Status, Fmi2Variability
from pythonfmu.variables import Boolean, Integer, Real

from . import state as fmu_state
from .status import ERROR, WARNING, StatusReporter

INSTANTIATED, INITIALIZATION, STEPPING, TERMINATED = 0, 1, 2, 3
PHASES = ("instantiated", "initialization mode", "stepping", "terminated")
_VAR_CLASS = {"Real": Real, "Integer": Integer, "Boolean": Boolean}


def guarded(default=None):
    """Run an FMI entry point; turn any exception into a logged fmi2Error."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(self, *args):
            try:
                return fn(self, *args)
            except Exception as exc:  # noqa: BLE001 - the host must never see an exception
                self._error(f"{fn.__name__}: internal error {type(exc).__name__}: {exc}",
                            detail=traceback.format_exc())
                return default(self, *args) if callable(default) else default
        return wrapper
    return deco


class TableSlave(Fmi2Slave):
    """FMI behaviour shared by fmu_mb FMUs; see the module docstring."""

    INTERFACE_DIGEST: str | None = None    # digest the FMU was built with (checked at instantiation)
    #: outputs depend directly on inputs (a controller): re-evaluate them whenever they are read
    FEEDTHROUGH = False
    author = "fmu_mb"
    license = "MIT"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.modelName = type(self).__name__
        self._report = StatusReporter(self.resources, self.modelName)
        self._broken = None
        self._phase = INSTANTIATED
        self._t = 0.0
        self._ready = False
        try:
            self._itf = self._make_interface()
            if self.INTERFACE_DIGEST and self._itf.digest() != self.INTERFACE_DIGEST:
                raise RuntimeError("the files in this FMU do not produce the interface it was built with")
            vars_ = self._itf.vars
            self._values = np.array([float(v.start) if v.start is not None else 0.0 for v in vars_])
            self._types = [v.type for v in vars_]
            self._caus = [v.causality for v in vars_]
            self._type_code = np.array([("Real", "Integer", "Boolean").index(t) for t in self._types], dtype=np.int64)
            self._is_output = np.array([c == "output" for c in self._caus])
            for v in vars_:
                self.register_variable(_VAR_CLASS[v.type](
                    v.name, causality=Fmi2Causality[v.causality], variability=Fmi2Variability[v.variability],
                    description=v.description, getter=lambda: 0, setter=None), nested=False)
            self._inputs = np.array(self._itf.of("input"), dtype=np.int64)
            self._params = np.array(self._itf.of("parameter"), dtype=np.int64)
            self._built_params = None
        except Exception as exc:  # noqa: BLE001
            self._broken = f"cannot set up '{self.modelName}': {type(exc).__name__}: {exc}"
            self._values = np.zeros(0)
            self._types, self._caus = [], []
            self._type_code, self._is_output = np.zeros(0, np.int64), np.zeros(0, bool)
            self.log(self._broken, Fmi2Status.error)

    # ------------------------------------------------------------------ to implement
    def _make_interface(self):
        raise NotImplementedError

    def _build(self) -> bool:
        """Create the runtime from the parameter values; log errors and return False if invalid."""
        raise NotImplementedError

    def _advance(self, t: float, h: float) -> bool:
        """Integrate [t, t + h] with the current inputs; log and return False on failure."""
        raise NotImplementedError

    def _refresh(self) -> None:
        raise NotImplementedError

    def _state(self) -> tuple[np.ndarray, int]:
        """(runtime state vector, extra integer counter) for FMU states."""
        raise NotImplementedError

    def _restore(self, x: np.ndarray, counter: int) -> bool:
        raise NotImplementedError

    # ------------------------------------------------------------------ messages
    def _error(self, msg: str, detail: str | None = None) -> None:
        self.log(f"[{self.modelName}] {msg}", Fmi2Status.error)
        if detail:
            self.log(detail, Fmi2Status.error, category="logAll")
        self._report(ERROR)

    def _warn(self, msg: str) -> None:
        self.log(f"[{self.modelName}] {msg}", Fmi2Status.warning)
        self._report(WARNING)

    def _usable(self, what: str) -> bool:
        if self._broken:
            self._error(f"{what}: {self._broken}")
            return False
        return True

    def _ensure_built(self) -> bool:
        params = self._values[self._params].copy()
        if self._ready and self._built_params is not None and np.array_equal(params, self._built_params):
            return True
        self._ready = False
        if not self._build():
            return False
        self._built_params = params
        self._ready = True
        self._refresh()
        return True

    # ------------------------------------------------------------------ life cycle
    @guarded()
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        if not self._usable("fmi2SetupExperiment"):
            return
        if self._phase != INSTANTIATED:
            return self._error(f"fmi2SetupExperiment is allowed only before initialization (FMU is in "
                               f"{PHASES[self._phase]})")
        if not math.isfinite(start_time):
            return self._error(f"fmi2SetupExperiment: start time must be finite (got {start_time})")
        self._t = float(start_time)

    @guarded()
    def enter_initialization_mode(self):
        if not self._usable("fmi2EnterInitializationMode"):
            return
        if self._phase != INSTANTIATED:
            return self._error(f"fmi2EnterInitializationMode called in {PHASES[self._phase]}")
        self._phase = INITIALIZATION

    @guarded()
    def exit_initialization_mode(self):
        if not self._usable("fmi2ExitInitializationMode"):
            return
        if self._phase != INITIALIZATION:
            return self._error(f"fmi2ExitInitializationMode called in {PHASES[self._phase]} (call "
                               "fmi2EnterInitializationMode first)")
        if self._ensure_built():
            self._phase = STEPPING

    @guarded()
    def terminate(self):
        if not self._usable("fmi2Terminate"):
            return
        if self._phase not in (STEPPING, INITIALIZATION):
            return self._error(f"fmi2Terminate called in {PHASES[self._phase]}")
        self._phase = TERMINATED

    @guarded(default=lambda self, *a: False)
    def do_step(self, current_time, step_size):
        if not self._usable("fmi2DoStep"):
            return False
        if self._phase != STEPPING:
            self._error(f"fmi2DoStep called in {PHASES[self._phase]}; it is allowed after "
                        "fmi2ExitInitializationMode and before fmi2Terminate")
            return False
        if not (math.isfinite(step_size) and step_size > 0.0):
            self._error(f"fmi2DoStep: communicationStepSize must be finite and > 0 s (got {step_size})")
            return False
        if not math.isfinite(current_time) or abs(current_time - self._t) > 1e-9 * max(1.0, abs(self._t)) + 1e-12:
            self._error(f"fmi2DoStep: currentCommunicationPoint {current_time!r} s differs from the FMU time "
                        f"{self._t!r} s (steps must be contiguous; use fmi2SetFMUstate to go back)")
            return False
        if not self._advance(current_time, step_size):
            return False
        self._t = current_time + step_size
        self._refresh()
        return True

    # ------------------------------------------------------------------ variable access
    def _check_vrs(self, vrs, vtype, what) -> bool:
        """vrs (int64 array) exist and are of type vtype; else log which one is not."""
        n = len(self._types)
        bad = (vrs < 0) | (vrs >= n)
        if bad.any():
            self._error(f"{what}: unknown value reference {int(vrs[bad.argmax()])}")
            return False
        wrong = self._type_code[vrs] != ("Real", "Integer", "Boolean").index(vtype)
        if wrong.any():
            vr = int(vrs[wrong.argmax()])
            self._error(f"{what}: value reference {vr} ('{self._itf.vars[vr].name}') is {self._types[vr]}, "
                        f"not {vtype}")
            return False
        return True

    def _read(self, vrs, vtype, what):
        if not self._usable(what):
            return None
        vrs = np.fromiter(vrs, dtype=np.int64)
        if not self._check_vrs(vrs, vtype, what):
            return None
        if self._is_output[vrs].any():
            if self._phase == INITIALIZATION:
                self._ensure_built()      # outputs in initialization mode follow the current parameters
            elif self.FEEDTHROUGH and self._ready:
                self._refresh()
        return self._values[vrs]

    def _write(self, vrs, values, vtype, what):
        if not self._usable(what):
            return
        vrs = np.fromiter(vrs, dtype=np.int64)
        if not self._check_vrs(vrs, vtype, what):
            return
        for vr, value in zip(vrs.tolist(), values):
            v = self._itf.vars[vr]
            if v.causality == "output":
                self._error(f"{what}: '{v.name}' is an output and cannot be set")
                continue
            if v.causality == "parameter" and self._phase not in (INSTANTIATED, INITIALIZATION):
                self._error(f"{what}: parameter '{v.name}' is fixed after initialization (FMU is in "
                            f"{PHASES[self._phase]})")
                continue
            if self._phase == TERMINATED:
                self._error(f"{what}: '{v.name}' cannot be set after fmi2Terminate")
                continue
            x = float(value)
            if not math.isfinite(x):
                self._error(f"{what}: '{v.name}' = {value!r} refused (not finite); keeping {float(self._values[vr])!r}")
                continue
            self._values[vr] = x

    @guarded(default=lambda self, vrs: [0.0] * len(vrs))
    def get_real(self, vrs):
        v = self._read(vrs, "Real", "fmi2GetReal")
        return [0.0] * len(vrs) if v is None else v.tolist()

    @guarded(default=lambda self, vrs: [0] * len(vrs))
    def get_integer(self, vrs):
        v = self._read(vrs, "Integer", "fmi2GetInteger")
        return [0] * len(vrs) if v is None else [int(x) for x in v]

    @guarded(default=lambda self, vrs: [False] * len(vrs))
    def get_boolean(self, vrs):
        v = self._read(vrs, "Boolean", "fmi2GetBoolean")
        return [False] * len(vrs) if v is None else [bool(x) for x in v]

    @guarded(default=lambda self, vrs: [""] * len(vrs))
    def get_string(self, vrs):
        self._error("fmi2GetString: this FMU has no String variables")
        return [""] * len(vrs)

    @guarded()
    def set_real(self, vrs, values):
        self._write(vrs, values, "Real", "fmi2SetReal")

    @guarded()
    def set_integer(self, vrs, values):
        self._write(vrs, values, "Integer", "fmi2SetInteger")

    @guarded()
    def set_boolean(self, vrs, values):
        self._write(vrs, [1.0 if b else 0.0 for b in values], "Boolean", "fmi2SetBoolean")

    @guarded()
    def set_string(self, vrs, values):
        self._error("fmi2SetString: this FMU has no String variables")

    # ------------------------------------------------------------------ FMU state
    @guarded(default=lambda self: b"")
    def _get_fmu_state(self):
        if not self._usable("fmi2GetFMUstate"):
            return b""
        x, counter = self._state() if self._ready else (np.zeros(0), 0)
        return fmu_state.pack(self._itf.digest(), self._phase, self._t, counter,
                              self._values[np.r_[self._params, self._inputs]], x)

    @guarded()
    def _set_fmu_state(self, blob):
        if not self._usable("fmi2SetFMUstate"):
            return
        keep = np.r_[self._params, self._inputs]
        try:
            phase, t, counter, values, x = fmu_state.unpack(blob, self._itf.digest(), keep.size)
        except ValueError as exc:
            return self._error(f"fmi2SetFMUstate/fmi2DeSerializeFMUstate: {exc}; the current state is kept")
        saved, before = self._values.copy(), (self._state() if self._ready else None)
        self._values[keep] = values
        if x.size or phase >= STEPPING:
            if not self._ensure_built() or (x.size and not self._restore(x, counter)):
                self._values[:] = saved
                if before is not None and self._ensure_built():
                    self._restore(*before)
                    self._refresh()
                return self._error("fmi2SetFMUstate: the saved state does not fit this FMU's parameters; "
                                   "the current state is kept")
        self._phase = phase
        self._t = t
        if self._ready:
            self._refresh()

    @staticmethod
    def _fmu_state_to_bytes(state) -> bytes:
        return bytes(state) if isinstance(state, (bytes, bytearray)) else b""

    @staticmethod
    def _fmu_state_from_bytes(state) -> bytes:
        return bytes(state)
