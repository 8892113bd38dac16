"""Generic FMI 2.0 co-simulation behaviour over an interface table (pythonfmu ``Fmi2Slave``).

Subclasses provide the model: ``_make_interface()``, ``_build()`` (create the runtime from
the parameter values), ``_advance(t, h)``, ``_refresh()`` (copy outputs into
``self._values``), ``_state()``/``_restore(x, counter)`` (FMU states) and, where the model
has a state, ``_snapshot()``/``_revert(snap)`` and ``_result_problem(where)``. This class
provides what every fmu_mb FMU must do the same way:

* Nothing raises out of it. pythonfmu would turn an exception into fmi2Fatal and release
  the instance's Python objects (its destructor releases them a second time later); instead
  every entry point catches, logs a readable message and reports fmi2Error through the
  fmu_mb binary (:mod:`fmu_mb.fmi.status`). Errors and warnings always reach the host's
  logger; debug messages follow loggingOn.
* FMI 2.0's co-simulation state table: fmi2SetupExperiment and fmi2EnterInitializationMode
  only when instantiated; fmi2Get* from initialization mode on (also after fmi2Terminate);
  parameters only before fmi2ExitInitializationMode; fmi2DoStep and fmi2Terminate only while
  stepping. A refused call has no effect: the instance stays where it was.
* fmi2DoStep: currentCommunicationPoint must equal the FMU's time; the step must be finite,
  > 0 and end before a defined stop time. A step whose result is not finite (or, for
  constrained mechanisms, violates a constraint beyond ``solver.max_violation``) is undone:
  fmi2Error naming the output or constraint, state and outputs of t kept. The same checks
  run at fmi2ExitInitializationMode, which then fails and can be retried with other
  parameters.
* Inputs that are NaN or infinite are refused (fmi2Error) and the previous value kept;
  outputs cannot be set; parameters are checked in fmi2ExitInitializationMode, which fails
  naming every offending parameter and its valid range. No output is ever returned non-finite
  with fmi2OK.
* FMU state (get/set/serialize) is the experiment's times, every parameter and input value
  and the runtime state vector, in the checked binary format of :mod:`fmu_mb.fmi.state`. A
  restored state is checked in full before anything is overwritten: framing and checksum,
  every value finite and within its declared range, the runtime state within the
  coordinates' ranges, and its phase: a state saved while stepping can be restored in any
  phase (FMPy resumes a run by restoring one into a fresh instance) and moves the FMU to
  stepping; a state saved before initialization only into the same phase; one saved after
  fmi2Terminate never.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import math
import traceback

import numpy as np
from pythonfmu import Fmi2Slave
from pythonfmu.enums import Fmi2Causality, Fmi2Status, Fmi2Variability
from pythonfmu.variables import Boolean, Integer, Real

from . import state as fmu_state
from .status import ERROR, OK, WARNING, StatusReporter

INSTANTIATED, INITIALIZATION, STEPPING, TERMINATED = 0, 1, 2, 3
PHASES = ("instantiated", "initialization mode", "stepping", "terminated")
_VAR_CLASS = {"Real": Real, "Integer": Integer, "Boolean": Boolean}
_CATEGORY = {OK: "logAll", WARNING: "logStatusWarning", ERROR: "logStatusError"}
_PY_STATUS = {OK: Fmi2Status.ok, WARNING: Fmi2Status.warning, ERROR: Fmi2Status.error}


@contextlib.contextmanager
def collection_paused():
    """Pause Python's cyclic garbage collector, restoring the host's setting after.

    Building a mechanism imports numba and scipy and loads the cached kernels: about 10^6 new,
    long-lived objects, for which the collector runs full passes that free nothing (measured on
    the five_axis JIT start: 40-120 ms of 0.5 s, and where a pass falls moves with any change in
    import order). Reference counting frees everything as usual meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def guarded(default=None, sync: bool = False):
    """Run an FMI entry point; turn any exception into a logged fmi2Error. ``sync``: report the
    phase and time to the FMU binary afterwards (entry points that change them)."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(self, *args):
            try:
                return fn(self, *args)
            except BaseException as exc:  # noqa: BLE001 - the host must never see an exception
                try:
                    self._error(f"{fn.__name__}: internal error {type(exc).__name__}: {exc}",
                                detail=traceback.format_exc())
                except BaseException:  # noqa: BLE001
                    pass
                return default(self, *args) if callable(default) else default
            finally:
                if sync:
                    self._sync()
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
        type(self)._class_report = self._report          # for _fmu_state_from_bytes (a class method)
        self._broken = None
        self._phase = INSTANTIATED
        self._t = self._t0 = 0.0
        self._t_stop = None
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
            self._outputs = np.array(self._itf.of("output"), dtype=np.int64)
            self._built_params = None
        except Exception as exc:  # noqa: BLE001
            self._broken = f"cannot set up '{self.modelName}': {type(exc).__name__}: {exc}"
            self._values = np.zeros(0)
            self._types, self._caus = [], []
            self._type_code, self._is_output = np.zeros(0, np.int64), np.zeros(0, bool)
            self._error(self._broken)
        self._sync()

    # ------------------------------------------------------------------ to implement
    def _make_interface(self):
        raise NotImplementedError

    def _build(self) -> bool:
        """Create the runtime from the parameter values; log errors and return False if invalid."""
        raise NotImplementedError

    def _advance(self, t: float, h: float) -> bool:
        """Integrate [t, t + h] with the current inputs; log and return False on failure (the
        runtime's state at t kept)."""
        raise NotImplementedError

    def _refresh(self) -> None:
        raise NotImplementedError

    def _state(self) -> tuple[np.ndarray, int]:
        """(runtime state vector, extra integer counter) for FMU states."""
        raise NotImplementedError

    def _restore(self, x: np.ndarray, counter: int) -> None:
        """Set the runtime state from an FMU state; ValueError (nothing changed) if it does not fit."""
        raise NotImplementedError

    def _snapshot(self):
        """The outputs before a step, for :meth:`_revert`."""
        return self._values[self._outputs].copy()

    def _revert(self, snap) -> None:
        """Undo the last step: its outputs here; subclasses with a runtime state undo it too."""
        self._values[self._outputs] = snap

    @staticmethod
    def _out_of_range(v, val: float) -> str | None:
        """Why ``val`` is outside variable ``v``'s declared range (None: it is inside or none is declared)."""
        if v.min is None or v.min <= val <= v.max:
            return None
        return f"'{v.name}' must lie in [{v.min:g}, {v.max:g}]{' ' + v.unit if v.unit else ''} (got {val:g})"

    def _result_problem(self, where: str) -> str | None:
        """Why the current result may not be answered with fmi2OK (None: it may): the name of
        the first non-finite output. Subclasses add their own checks."""
        vals = self._values[self._outputs]
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(self._outputs[int(np.argmax(bad))])
            return (f"{where}: output '{self._itf.vars[i].name}' = {vals[bad][0]!r} is not finite "
                    f"({int(bad.sum())} output(s) in all)")
        return None

    # ------------------------------------------------------------------ messages
    def _emit(self, status: int, msg: str, category: str | None = None) -> None:
        category = category or _CATEGORY.get(status, "logAll")
        if self._report.active:
            self._report.log(status, category, msg)
        else:
            self.log(msg, _PY_STATUS.get(status, Fmi2Status.error), category=category)

    def _error(self, msg: str, detail: str | None = None) -> None:
        self._emit(ERROR, f"[{self.modelName}] {msg}")
        if detail:
            self._emit(OK, detail, "logAll")
        self._report(ERROR)

    def _warn(self, msg: str) -> None:
        self._emit(WARNING, f"[{self.modelName}] {msg}")
        self._report(WARNING)

    def _debug(self, msg: str) -> None:
        self._emit(OK, f"[{self.modelName}] {msg}", "logAll")

    def _sync(self) -> None:
        self._report.phase(self._phase, self._t)

    def _usable(self, what: str) -> bool:
        if self._broken:
            self._error(f"{what}: {self._broken}")
            return False
        return True

    def _phase_is(self, allowed: tuple, what: str, hint: str = "") -> bool:
        if self._phase in allowed:
            return True
        self._error(f"{what} is not allowed in {PHASES[self._phase]} (FMI 2.0 co-simulation state table)"
                    f"{'; ' + hint if hint else ''}")
        return False

    def _ensure_built(self) -> bool:
        params = self._values[self._params].copy()
        if self._ready and self._built_params is not None and np.array_equal(params, self._built_params):
            return True
        self._ready = False
        with collection_paused():
            built = self._build()
        if not built:
            return False
        self._built_params = params
        self._ready = True
        self._refresh()
        return True

    # ------------------------------------------------------------------ life cycle
    @guarded(sync=True)
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        if not self._usable("fmi2SetupExperiment") or not self._phase_is((INSTANTIATED,), "fmi2SetupExperiment"):
            return
        lim = fmu_state.TIME_LIMIT
        if not (math.isfinite(start_time) and abs(start_time) <= lim):
            return self._error(f"fmi2SetupExperiment: startTime must be finite and within ±{lim:g} s "
                               f"(got {start_time!r})")
        if stop_time is not None and (math.isnan(stop_time) or stop_time < start_time):
            return self._error(f"fmi2SetupExperiment: stopTime {stop_time!r} s must not lie before startTime "
                               f"{start_time!r} s")
        if tolerance is not None and not (math.isfinite(tolerance) and tolerance > 0):
            return self._error(f"fmi2SetupExperiment: tolerance must be finite and > 0 (got {tolerance!r}); this "
                               "FMU steps with a fixed internal step and does not use it")
        self._t = self._t0 = float(start_time)
        self._t_stop = None if stop_time is None or math.isinf(stop_time) else float(stop_time)

    @guarded(sync=True)
    def enter_initialization_mode(self):
        if self._usable("fmi2EnterInitializationMode") and \
                self._phase_is((INSTANTIATED,), "fmi2EnterInitializationMode"):
            self._phase = INITIALIZATION

    @guarded(sync=True)
    def exit_initialization_mode(self):
        if not self._usable("fmi2ExitInitializationMode") or not self._phase_is(
                (INITIALIZATION,), "fmi2ExitInitializationMode", "call fmi2EnterInitializationMode first"):
            return
        if not self._ensure_built():
            return
        problem = self._result_problem(f"fmi2ExitInitializationMode at t = {self._t:g} s")
        if problem:
            self._ready = False                 # rebuilt at the next attempt
            return self._error(problem + "; change the parameters or start values and try again")
        self._phase = STEPPING

    @guarded(sync=True)
    def terminate(self):
        if self._usable("fmi2Terminate") and self._phase_is((STEPPING,), "fmi2Terminate"):
            self._phase = TERMINATED

    @guarded(default=lambda self, *a: False, sync=True)
    def do_step(self, current_time, step_size):
        if not self._usable("fmi2DoStep") or not self._phase_is(
                (STEPPING,), "fmi2DoStep", "it is allowed after fmi2ExitInitializationMode and before fmi2Terminate"):
            return False
        if not (math.isfinite(step_size) and step_size > 0.0):
            self._error(f"fmi2DoStep: communicationStepSize must be finite and > 0 s (got {step_size!r})")
            return False
        if not math.isfinite(current_time) or abs(current_time - self._t) > 1e-9 * max(1.0, abs(self._t)) + 1e-12:
            self._error(f"fmi2DoStep: currentCommunicationPoint {current_time!r} s differs from the FMU time "
                        f"{self._t!r} s (steps must be contiguous; use fmi2SetFMUstate to go back)")
            return False
        end = current_time + step_size
        if self._t_stop is not None and end > self._t_stop + 1e-9 * max(1.0, abs(self._t_stop)):
            self._error(f"fmi2DoStep: the step to t = {end!r} s ends after the stop time {self._t_stop!r} s "
                        "given to fmi2SetupExperiment")
            return False
        if not (abs(end) <= fmu_state.TIME_LIMIT):
            self._error(f"fmi2DoStep: the step to t = {end!r} s ends beyond ±{fmu_state.TIME_LIMIT:g} s")
            return False
        snap = self._snapshot()
        if not self._advance(current_time, step_size):
            return False
        self._t = end
        self._refresh()
        problem = self._result_problem(f"fmi2DoStep from t = {current_time:g} s over {step_size:g} s")
        if problem:
            self._revert(snap)
            self._t = current_time
            self._error(f"{problem}; the state and outputs at t = {current_time:g} s are kept")
            return False
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
        if not self._usable(what) or not self._phase_is(
                (INITIALIZATION, STEPPING, TERMINATED), what, "call fmi2EnterInitializationMode first"):
            return None
        vrs = np.fromiter(vrs, dtype=np.int64)
        if not self._check_vrs(vrs, vtype, what):
            return None
        if self._is_output[vrs].any():
            if self._phase == INITIALIZATION:
                if not self._ensure_built():      # outputs in initialization mode follow the current parameters
                    return None
            elif self.FEEDTHROUGH and self._ready:
                self._refresh()
        vals = self._values[vrs]
        bad = ~np.isfinite(vals)
        if bad.any():
            vr = int(vrs[int(np.argmax(bad))])
            self._error(f"{what}: '{self._itf.vars[vr].name}' = {self._values[vr]!r} is not finite")
            return None
        return vals

    def _write(self, vrs, values, vtype, what):
        if not self._usable(what) or not self._phase_is(
                (INSTANTIATED, INITIALIZATION, STEPPING), what, "variables cannot be set after fmi2Terminate"):
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
        if self._phase_is((INITIALIZATION, STEPPING, TERMINATED), "fmi2GetString") and len(vrs):
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
        if self._phase_is((INSTANTIATED, INITIALIZATION, STEPPING), "fmi2SetString") and len(vrs):
            self._error("fmi2SetString: this FMU has no String variables")

    # ------------------------------------------------------------------ FMU state
    def _saved_indices(self) -> np.ndarray:
        return np.r_[self._params, self._inputs]

    @guarded(default=lambda self: b"")
    def _get_fmu_state(self):
        if not self._usable("fmi2GetFMUstate"):
            return b""
        x, counter = self._state() if self._ready else (np.zeros(0), 0)
        return fmu_state.pack(self._itf.digest(), self._phase, self._t0, self._t_stop, self._t, counter,
                              self._values[self._saved_indices()], x)

    def _check_saved_values(self, values: np.ndarray, keep: np.ndarray) -> None:
        """ValueError naming the first saved parameter/input value that no set call would accept."""
        for vr, val in zip(keep.tolist(), values.tolist()):
            v = self._itf.vars[vr]
            if not math.isfinite(val):
                raise ValueError(f"'{v.name}' = {val!r} is not finite")
            if v.type != "Real" and not float(val).is_integer():
                raise ValueError(f"'{v.name}' = {val!r} is not an integer")
            if v.type == "Boolean" and val not in (0.0, 1.0):
                raise ValueError(f"'{v.name}' = {val!r} is not a Boolean")
            why = self._out_of_range(v, val)
            if why:
                raise ValueError(why)

    def _check_saved_phase(self, saved: int, x: np.ndarray) -> None:
        if saved == TERMINATED:
            raise ValueError("it was saved after fmi2Terminate and cannot be restored (use fmi2Reset)")
        if saved == INSTANTIATED and x.size:
            raise ValueError("it is marked 'instantiated' but holds a simulator state")
        if saved != STEPPING and saved != self._phase:
            raise ValueError(f"it was saved in {PHASES[saved]} and the FMU is in {PHASES[self._phase]}; only a "
                             "state saved while stepping can be restored into another phase")

    @guarded(sync=True)
    def _set_fmu_state(self, blob):
        if not self._usable("fmi2SetFMUstate"):
            return
        keep = self._saved_indices()
        try:
            phase, t0, t_stop, t, counter, values, x = fmu_state.unpack(blob, self._itf.digest(), keep.size)
            self._check_saved_phase(phase, x)
            self._check_saved_values(values, keep)
        except ValueError as exc:
            return self._error(f"fmi2SetFMUstate: the state is refused: {exc}; the current state is kept")
        before = (self._values.copy(), self._phase, self._t0, self._t_stop, self._t,
                  self._state() if self._ready else None)
        self._values[keep] = values
        self._t0, self._t_stop, self._t = t0, t_stop, t
        problem = None
        if x.size or phase == STEPPING:
            if not self._ensure_built():
                problem = "its parameters do not build this FMU's model (see the messages above)"
            else:
                try:
                    self._restore(x, counter)
                    self._refresh()
                    problem = self._result_problem("its outputs")
                except ValueError as exc:
                    problem = str(exc)
        if problem:
            self._values[:], self._phase, self._t0, self._t_stop, self._t, runtime = before
            if runtime is None:
                self._ready = False
            elif self._ensure_built():
                self._restore(*runtime)
                self._refresh()
            return self._error(f"fmi2SetFMUstate: the state is refused: {problem}; the current state is kept")
        self._phase = phase

    @staticmethod
    def _fmu_state_to_bytes(state) -> bytes:
        return bytes(state) if isinstance(state, (bytes, bytearray)) else b""

    @classmethod
    def _fmu_state_from_bytes(cls, state) -> bytes:
        """fmi2DeSerializeFMUstate: check the record's framing (the content is checked by
        fmi2SetFMUstate, which knows the instance); a bad record is an fmi2Error here already."""
        blob = bytes(state) if isinstance(state, (bytes, bytearray)) else b""
        try:
            fmu_state.unpack(blob, cls.INTERFACE_DIGEST)
        except ValueError as exc:
            report = cls.__dict__.get("_class_report")
            if report is not None and report.active:
                report.log(ERROR, "logStatusError", f"[{cls.__name__}] fmi2DeSerializeFMUstate: {exc}")
                report(ERROR)
        except BaseException:  # noqa: BLE001 - never raise into pythonfmu
            pass
        return blob
