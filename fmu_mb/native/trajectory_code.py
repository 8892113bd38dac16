"""Trajectory tables as native code: the ``table_function`` of each TableTrajectory class a native FMU
carries (fmu_mb.trajectories.TableTrajectory), compiled by numba and linked into the FMU's binary.

The function is compiled as a ``cfunc`` taking raw pointers (the parameter vector, the rows of the
trajectory's time and parameter tables) and taken *without* numba's Python wrapper, as
fmu_mb.native.library does for the kernels; the helper functions of its module it calls are compiled
with it. llvmlite emits one object file per target. The FMU core (fmu_mb/fmi/c/variants.c) calls

    int32_t fmu_mb_table_<i>(int64_t *code, void **exc, const double *v, int64_t nv,
                             double *time, double *par, int64_t nseg, int64_t width)

(numba's calling convention: status 0, ``*code`` the function's result) whenever an input of the
trajectory changes, so the same source is Python in the pythonfmu FMU and machine code in the native
one. A function that allocates or calls anything but libm is refused at build time (a native FMU
has no numba runtime for it): its inputs then stay fixed, and the build says why.
"""
from __future__ import annotations

import re
import types as pytypes

from numba import carray, cfunc, njit, types
from numba.core.registry import CPUDispatcher

from ..trajectories.paths import TABLE_MAX_PARAMS as MAX_PARAMS
from .library import TARGETS, emit_object, inner_ir

#: C prototype of a compiled table function (the arguments after numba's status pointers)
C_PARAMS = "const double *v, int64_t nv, double *time, double *par, int64_t nseg, int64_t width"
SIGNATURE = types.int64(types.CPointer(types.float64), types.int64, types.CPointer(types.float64),
                        types.CPointer(types.float64), types.int64, types.int64)
#: external functions a table function may call: libm (and LLVM intrinsics, lowered to libm or instructions)
LIBM = frozenset("sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 "
                 "log1p pow sqrt cbrt hypot fmod floor ceil trunc round rint fabs copysign fmin fmax erf erfc "
                 "__powidf2".split())
#: numba runtime functions runtime.c provides that array code references (the release of a reference
#: count reaching zero: never for the borrowed arrays of a table function)
RUNTIME = frozenset({"NRT_MemInfo_call_dtor"})


def _nopython(fn, seen: dict):
    """``fn`` compiled by numba, the plain Python functions among its globals compiled with it."""
    if isinstance(fn, CPUDispatcher):
        return fn
    if fn in seen:
        return seen[fn]
    scope = dict(fn.__globals__)
    clone = pytypes.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    seen[fn] = jitted = njit(clone)
    for name in fn.__code__.co_names:
        obj = scope.get(name)
        if isinstance(obj, pytypes.FunctionType):
            scope[name] = _nopython(obj, seen)
    return jitted


def table_ir(cls, index: int) -> str:
    """LLVM IR of ``cls.table_function`` as the C function fmu_mb_table_<index> (numba's inner function,
    without the Python wrapper). ValueError when it does not compile without Python or allocation."""
    ns = {"fn": _nopython(cls.table_function, {}), "carray": carray}     # (a staticmethod: the function)
    exec("def entry(v, nv, time, par, nseg, width):\n"
         "    return fn(carray(v, (nv,)), carray(time, (nseg, 2)), carray(par, (nseg, width)))\n", ns)
    try:
        compiled = cfunc(SIGNATURE, nopython=True, error_model="numpy")(ns["entry"])
    except Exception as exc:                              # numba's typing/lowering errors, any class
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        said = [ln for ln in lines if not ln.startswith(("Failed in", "During:", "File ", "^"))]
        why = " ".join(said[:2] or lines[:1]) or type(exc).__name__
        raise ValueError(f"{cls.__name__}.table_function does not compile with numba (nopython): {why}") from None
    ir = inner_ir(compiled, f"fmu_mb_table_{index}")
    declared = set(re.findall(r'^declare [^@]*@"?([\w.$]+)"?\(', ir, flags=re.M))
    body = "\n".join(line for line in ir.splitlines() if not line.startswith("declare"))
    calls = declared & set(re.findall(r'@"?([\w.$]+)"?\(', body))
    foreign = sorted(c for c in calls if not c.startswith("llvm.") and c not in LIBM | RUNTIME)
    if foreign:
        raise ValueError(f"{cls.__name__}.table_function calls {', '.join(foreign)}: a native FMU has libm only "
                         f"(no allocation, no Python objects)")
    return ir


def table_object(irs, target: str) -> bytes:
    """One object file for ``target`` (fmu_mb.native.library.TARGETS) with the compiled table functions."""
    return emit_object(irs, TARGETS[target][0])


class TableSet:
    """The TableTrajectory classes one native FMU carries, numbered as they are first met, each compiled
    once (:func:`table_ir`); a class that does not compile, or takes more than :data:`MAX_PARAMS`
    parameters, is logged and gets None (its inputs stay fixed)."""

    def __init__(self, log=print):
        self.classes, self.irs, self._ids, self._log = [], [], {}, log

    def id_of(self, traj) -> int | None:
        """The number of ``traj``'s class, or None: not a TableTrajectory (no ``table_function``), or refused."""
        cls = type(traj)
        if not callable(getattr(cls, "table_function", None)):
            return None
        if cls not in self._ids:
            try:
                if len(cls.PARAMS) > MAX_PARAMS:
                    raise ValueError(f"{cls.__name__} has {len(cls.PARAMS)} parameters (at most {MAX_PARAMS})")
                self.irs.append(table_ir(cls, len(self.classes)))
                self._ids[cls] = len(self.classes)
                self.classes.append(cls)
            except ValueError as exc:
                self._log(f"the inputs of trajectory '{traj.name}' stay at their built values in the native FMU: "
                          f"{exc}")
                self._ids[cls] = None
        return self._ids[cls]
