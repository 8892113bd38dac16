"""The Python side of a Python FMU: the model file's Python, as the run source of the FMU core.

A Python FMU's binary is the FMU core (fmu_mb/fmi/c) with the run source python.c, which has pythonfmu's
wrapper start this slave once per process (its generated script subclasses :class:`MechanismSlave`, setting
``MODEL_NAME``, ``MODEL_FILE``, ``INTERFACE_DIGEST`` and ``CORE_DIGEST``). The slave registers two functions with the binary
(fmu_mb_python_register, through ctypes) and does nothing else: every FMI call is the core's, as in a native
FMU, with the same checks and messages.

* build: the model options among the parameter values -> the compiled arrays of the mechanism they build
  (fmu_mb.fmi.variants.variant_records, any Count/Value at any value in its range), as an arrays file's
  bytes the core reads (fmu_mb.native.arrays), and a token naming the build (the last :data:`BUILDS` are
  kept; an older one is compiled again when an instance built from it needs a trajectory table).
* table: the segment table of trajectory k of a build for its parameter values, computed by the trajectory
  object (a TableTrajectory's ``table_function``, a path's ``segments``) with the class's own checks; the core
  checks ranges, time order and durations (the words of fmu_mb.messages).

Nothing here imports numba: the kernels are the core's, compiled into the binary.
"""
from __future__ import annotations

import copy
import ctypes
import threading
from collections import OrderedDict
from pathlib import Path

from pythonfmu import Fmi2Slave

from .. import registry
from ..model import options as opt
from ..native import arrays
from ..sources import this_core_digest
from ..trajectories.paths import Trajectory
from .interface import INTERFACE_FILE, Interface
from .variants import PYTHON_TABLES, variant_records

_D, _I64 = ctypes.POINTER(ctypes.c_double), ctypes.c_int64
BUILD = ctypes.CFUNCTYPE(ctypes.c_int, _D, _I64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_I64),
                         ctypes.POINTER(_I64), ctypes.c_void_p, _I64)
TABLE = ctypes.CFUNCTYPE(ctypes.c_int, _I64, _I64, _D, _I64, _D, _D, _I64, _I64, ctypes.c_void_p, _I64)


#: builds a slave keeps compiled (more are compiled again when an instance needs their trajectories)
BUILDS = 16


def _say(buffer, size: int, text: str) -> None:
    """``text`` into a C buffer of ``size`` bytes (UTF-8, truncated, NUL-terminated)."""
    raw = text.encode("utf-8", "backslashreplace")[:max(0, size - 1)]
    ctypes.memmove(buffer, raw + b"\0", len(raw) + 1)


class MechanismSlave(Fmi2Slave):
    """The run source of a Python FMU: subclasses set MODEL_NAME, MODEL_FILE, INTERFACE_DIGEST and CORE_DIGEST
    (the digest of the core the FMU carries, which its binary checks in the arrays; empty: computed here)."""

    MODEL_NAME: str = ""
    MODEL_FILE: str | None = None
    INTERFACE_DIGEST: str | None = None
    CORE_DIGEST = ""
    author = "fmu_mb"
    license = "MIT"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.modelName = self.MODEL_NAME
        binary = self._binary()
        if binary is None:              # pythonfmu's builder instantiating the class for its XML: nothing to run
            return
        # the files of this instance's resources: a host extracting the FMU again (FMPy, at every simulate_fmu)
        # gets this module from the first extraction, whose folder may be gone
        own = Path(self.resources) / "models" / f"{self.MODEL_NAME}.py"
        self._module = registry.load_file(own if own.is_file() else self.MODEL_FILE, self.MODEL_NAME)
        self._itf = Interface.from_json((Path(self.resources) / INTERFACE_FILE).read_text(encoding="utf-8"))
        if self.INTERFACE_DIGEST and self._itf.digest() != self.INTERFACE_DIGEST:
            raise RuntimeError("the files in this FMU do not produce the interface it was built with")
        self._options = [(i, v) for i, v in enumerate(self._itf.vars) if v.source[0] == "option"]
        self._tokens: dict = {}         # option values -> token
        self._kwargs: list = []         # token -> the options it was built with
        self._built = OrderedDict()     # token -> (arrays bytes, description, compiled mechanism): the last BUILDS
        self._blobs: dict = {}          # thread -> the bytes its last build returned (the core reads them after)
        self._lock = threading.Lock()
        self._callbacks = (BUILD(self._build), TABLE(self._table))
        register = binary.fmu_mb_python_register
        register.argtypes, register.restype = [BUILD, TABLE], ctypes.c_int
        if not register(*self._callbacks):
            raise RuntimeError("the fmu_mb binary is not starting this slave (fmu_mb_python_register refused)")

    def do_step(self, current_time, step_size):
        """pythonfmu's one abstract method: never called (the core steps; pythonfmu's wrapper only starts this
        slave)."""
        return False

    def _binary(self):
        """The FMU's binary (already loaded by the host: dlopen finds it by its inode), or None outside one."""
        if not self.resources:
            return None
        path = Path(self.resources).parent / "binaries" / "linux64" / f"{self.MODEL_NAME}.so"
        if not path.is_file():
            return None
        lib = ctypes.CDLL(str(path))
        return lib if hasattr(lib, "fmu_mb_python_register") else None

    # ------------------------------------------------------------------ build
    def _model_options(self, values) -> tuple[dict, tuple]:
        """({option: value} for the model's build(), the key of the build) from the parameter values (checked
        by the core against their ranges; the options' own checks run here too)."""
        options = getattr(self._module, "OPTIONS", {})
        kwargs, key = {}, []
        for i, v in self._options:
            o, x = options[v.source[1]], float(values[i])
            key.append(x)
            kwargs[v.source[1]] = o.check(v.name, int(x) if isinstance(o, (opt.Choice, opt.Flag, opt.Count)) else x)
        return kwargs, tuple(key)

    def _compile(self, kwargs: dict):
        """(records, compiled mechanism) of the options; ValueError says why the model cannot take them."""
        try:
            mech = self._module.build(**kwargs)
        except Exception as exc:  # noqa: BLE001 - a model file's own code: any exception is a refusal
            raise ValueError(f"the parameters give an invalid mechanism: {type(exc).__name__}: {exc}") from None
        try:
            records, cm = variant_records(self._module, self._itf, kwargs, mech, PYTHON_TABLES)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"the parameters give an invalid mechanism: {exc}") from None
        table = dict(records)
        missing = [v.name for v, d in zip([v for v in self._itf.vars if v.source[0] in ("q_start", "qd_start")],
                                          table["fmu.start_dof"]) if d < 0]
        missing += [v.name for v, d in zip([v for v in self._itf.vars if v.source[0] == "tau_drive"],
                                           table["fmu.drive_dof"]) if d < 0]
        if missing:
            raise ValueError("these model options build a mechanism the FMU interface does not describe (no "
                             f"coordinate for {', '.join(missing[:5])}); this is a defect of the model file")
        return records, cm

    def _keep(self, token: int, records, cm):
        """Keep a build (the last BUILDS)."""
        what = ", ".join(f"model.{k} = {v}" for k, v in self._kwargs[token].items()) or "the defaults"
        self._built[token] = (arrays.variants_bytes([records], self.CORE_DIGEST or this_core_digest()),
                              f"built by the model file's Python for {what}", cm)
        while len(self._built) > BUILDS:
            self._built.popitem(last=False)

    def _entry(self, token: int):
        """(arrays bytes, description, compiled mechanism) of a build (compiled again if it was dropped)."""
        if token not in self._built:
            self._keep(token, *self._compile(self._kwargs[token]))
        self._built.move_to_end(token)
        return self._built[token]

    def _build(self, values, n, blob, size, token, text, tlen) -> int:
        try:
            kwargs, key = self._model_options(values)
            with self._lock:
                tok = self._tokens.get(key)
                if tok is None:
                    built = self._compile(kwargs)             # (refusals before a token is given)
                    tok = self._tokens[key] = len(self._kwargs)
                    self._kwargs.append(kwargs)
                    self._keep(tok, *built)
                data, what, _ = self._entry(tok)
                self._blobs[threading.get_ident()] = data
            blob[0] = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value
            size[0], token[0] = len(data), tok
            _say(text, tlen, what)
            return 1
        except ValueError as exc:
            _say(text, tlen, f"invalid parameter: {exc}" if str(exc).startswith("parameter '") else str(exc))
        except Exception as exc:  # noqa: BLE001 - nothing may raise into the C core
            _say(text, tlen, f"building the mechanism failed: {type(exc).__name__}: {exc}")
        return 0

    # ------------------------------------------------------------------ trajectories
    def _table(self, token, k, v, nv, time, par, nseg, width, why, wlen) -> int:
        name = ""
        try:
            with self._lock:
                cm = self._entry(token)[2]
            traj = copy.deepcopy(cm.trajectories[k])
            name = traj.name
            for slot, field in enumerate(traj.PARAMS):
                if slot < nv:
                    object.__setattr__(traj, field, float(v[slot]))
            if type(traj).validate is not Trajectory.validate:        # the class's own checks (the base's: the core)
                traj.validate()
            _, t, p = traj.table()
            if t.shape != (nseg, 2) or p.shape[0] != nseg or p.shape[1] > width:
                raise ValueError(f"its table has {t.shape[0]} segments, the compiled mechanism {nseg}")
            for i in range(nseg):
                time[2 * i], time[2 * i + 1] = float(t[i, 0]), float(t[i, 1])
                for j in range(p.shape[1]):
                    par[width * i + j] = float(p[i, j])
            return 1
        except ValueError as exc:
            text, prefix = str(exc), f"trajectory '{name}': "
            _say(why, wlen, text[len(prefix):] if text.startswith(prefix) else text)
        except Exception as exc:  # noqa: BLE001 - nothing may raise into the C core
            _say(why, wlen, f"its table failed in Python: {type(exc).__name__}: {exc}")
        return 0
