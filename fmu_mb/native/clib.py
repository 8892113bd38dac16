"""The native kernel library (fmu_mb.native.library) as a kernel set of fmu_mb.backend, through ctypes.

``CLibraryKernels(path)`` serves every entry of kernels.entries with the JIT backend's call
form, ``k.<entry>(mh, dh, *args)``: arrays are passed as pointer and shape, scalars by value,
Model and Data as int64 address blocks (:func:`address_block`). Importable without numba: a
process using it holds no numba runtime at all. An array argument is checked (dtype, number of
dimensions, C order) the first time it is passed, then its pointer and shape are reused (the
Simulator passes the same arrays on every call); a non-zero status of an entry (a numba
exception, which the kernels do not raise) becomes a RuntimeError.

Each entry's Python caller is generated (one unrolled ctypes call, no per-argument loop): with
~20 C arguments per call, the ctypes conversions are most of the remaining overhead (about
60 ns per argument measured here).
"""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from ..kernels.entries import ENTRIES, array_type
from .arrays import BLOCK_HEADER

_C = {"f8": ctypes.c_double, "i8": ctypes.c_int64, "b1": ctypes.c_int64}
_P = ctypes.c_void_p
_DTYPES = {"f8": np.dtype(np.float64), "i8": np.dtype(np.int64), "c16": np.dtype(np.complex128)}
_I8 = _DTYPES["i8"]

_ARRAYS: dict = {}


def _array(a, dtype, ndim) -> tuple:
    """(data address, *shape) of ``a``, checked on its first use. The cache refers to the array weakly
    (a freed Simulator's arrays are not kept alive) and a hit must be that very object, so a reused id
    is a miss; an ndarray's buffer does not move. Bounded."""
    hit = _ARRAYS.get(id(a))
    if hit is not None and hit[0]() is a and hit[1] is dtype:
        return hit[2]
    if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim and a.flags.c_contiguous):
        raise TypeError(f"native kernel argument must be a C-contiguous {dtype.name} array with {ndim} "
                        f"dimension(s) (got {getattr(a, 'dtype', type(a))}, {np.ndim(a)} dimension(s))")
    if len(_ARRAYS) >= 4096:
        _ARRAYS.clear()
    val = (a.ctypes.data, *a.shape)
    _ARRAYS[id(a)] = (weakref.ref(a), dtype, val)
    return val


def _block(b) -> int:
    """Data address of an int64 address block (Model or Data)."""
    return _array(b, _I8, 1)[0]


class _Block(np.ndarray):
    """An address block that keeps the arrays it points into alive (``owner``)."""


def address_block(tup, schema) -> np.ndarray:
    """int64 block of a Model/Data for the native kernels: the header word (0: the kernels keep the block's struct
    there on its first use; :meth:`CLibraryKernels.handles` releases it with the block), then per field its data
    address followed by its shape (scalar fields: the value), in ``schema`` order ([field, dtype, ndim])."""
    out = [0] * BLOCK_HEADER
    for field, dtype, ndim in schema:
        v = getattr(tup, field)
        if ndim < 0:
            out.append(int(v))
            continue
        if not (isinstance(v, np.ndarray) and v.dtype.name == dtype and v.ndim == ndim and v.flags.c_contiguous):
            raise TypeError(f"native kernels: field {field} must be a C-contiguous {dtype} array with {ndim} "
                            f"dimension(s) (got {getattr(v, 'dtype', type(v))}, {np.ndim(v)})")
        out.append(v.ctypes.data)
        out.extend(v.shape)
    block = np.array(out, dtype=np.int64).view(_Block)
    block.owner = tup
    return block


def _caller(lib, name: str):
    """The Python function calling entry ``name`` of ``lib``: ``f(mh, dh, *args)``."""
    e = ENTRIES[name]
    argtypes, params, exprs = [_P, _P], [], ["_block(mh)", "_block(dh)"]
    for i, t in enumerate(e.args):
        params.append(f"a{i}")
        if t in _C:
            argtypes.append(_C[t])
            exprs.append(f"a{i}")
            continue
        if t == "datac":                     # a complex-step Data's address block (CLibraryKernels.complex_handle)
            argtypes.append(_P)
            exprs.append(f"_block(a{i})")
            continue
        code, ndim = array_type(t)
        argtypes += [_P] + [ctypes.c_int64] * ndim
        exprs.append(f"*_array(a{i}, _{code}, {ndim})")
    fn = getattr(lib, f"fmu_mb_{name}")
    rtype = ctypes.c_double if e.result == "f8" else ctypes.c_int64
    tuple3 = e.result == "UniTuple(f8, 3)"
    if tuple3:
        argtypes.append(_P)
    argtypes.append(_P)
    fn.argtypes, fn.restype = argtypes, ctypes.c_int32
    lines = [f"def {name}(mh, dh, {', '.join(params)}):"]
    if e.result == "void":
        lines.append(f"    st = fn({', '.join(exprs)}, None)")
        result = "None"
    elif tuple3:
        lines.append("    out = (ctypes.c_double * 3)()")
        lines.append(f"    st = fn({', '.join(exprs)}, ctypes.addressof(out), None)")
        result = "(out[0], out[1], out[2])"
    else:
        lines.append("    r = rtype()")
        lines.append(f"    st = fn({', '.join(exprs)}, ctypes.addressof(r))")
        result = {"b1": "r.value != 0", "i8": "r.value", "f8": "r.value"}[e.result]
    lines.append("    if st:")
    lines.append(f"        raise RuntimeError(f'native kernel {name} returned status {{st}}')")
    lines.append(f"    return {result}")
    ns = {"fn": fn, "ctypes": ctypes, "rtype": rtype, "_array": _array, "_block": _block,
          **{f"_{code}": dtype for code, dtype in _DTYPES.items()}}
    exec("\n".join(lines), ns)
    return ns[name]


class CLibraryKernels:
    """Entry points of the native kernel library at ``path`` (a .so / .dll of fmu_mb.native.library)."""

    name = "native"

    def __init__(self, path, schema=None, description: str = ""):
        from . import field_schema
        self.path, self.schema = str(path), schema or field_schema()
        self._lib = ctypes.CDLL(self.path)
        self.description = description or f"native kernel library {self.path}"
        missing = [e for e in ENTRIES if not hasattr(self._lib, f"fmu_mb_{e}")]
        if missing:
            raise AttributeError(f"{self.path} lacks the kernel entries {', '.join(missing)}")

    def __getattr__(self, entry):
        """The caller of ``entry``, generated on first use (a Simulator uses a few of them)."""
        if entry not in ENTRIES:
            raise AttributeError(entry)
        fn = _caller(self._lib, entry)
        setattr(self, entry, fn)
        return fn

    def handles(self, model, data):
        return self._released(address_block(model, self.schema["model"])), \
            self._released(address_block(data, self.schema["data"]))

    def complex_handle(self, data_complex):
        """The address block of a complex-step Data (compiled.make_data(model, complex_step=True))."""
        return self._released(address_block(data_complex, self.schema["data_complex"]))

    def _released(self, block):
        """``block``, whose kept struct (its header word) the library releases when the block goes."""
        weakref.finalize(block, self._lib.fmu_mb_release_block, ctypes.c_void_p(block.ctypes.data))
        return block
