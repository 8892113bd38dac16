"""The native kernel library (fmu_mb.native.library) as a kernel set of fmu_mb.backend, through ctypes.

``CLibraryKernels(path)`` serves every entry of kernels.entries with the JIT backend's call
form, ``k.<entry>(mh, dh, *args)``: arrays are passed as pointer and shape, scalars by value,
Model and Data as the int64 address blocks of fmu_mb.backend. Importable without numba: a
process using it holds no numba runtime at all. Like the pycc backend it does not check
argument types (only the Simulator calls it, with its own arrays); a non-zero status of an
entry (a numba exception, which the kernels do not raise) becomes a RuntimeError.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..kernels.entries import ENTRIES, array_type

_C = {"f8": ctypes.c_double, "i8": ctypes.c_int64, "b1": ctypes.c_int64}
_P = ctypes.c_void_p


def _converter(t: str):
    """(ctypes argument types, function turning one Python argument into their values)."""
    if t in _C:
        return [_C[t]], (lambda a: (a,))
    code, ndim = array_type(t)
    dtype = np.float64 if code == "f8" else np.int64

    def conv(a):
        if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim and a.flags.c_contiguous):
            raise TypeError(f"native kernel argument must be a C-contiguous {dtype.__name__} array with {ndim} "
                            f"dimension(s)")
        return _pointer(a) + a.shape
    return [_P] + [ctypes.c_int64] * ndim, conv


_ADDRESSES: dict = {}


def _pointer(a) -> tuple:
    """(data address,) of array ``a``. ``a.ctypes.data`` costs ~0.8 µs and the Simulator passes the
    same arrays on every call, so the address is kept per array object (the cache holds the array:
    its id cannot be reused while it is cached; an ndarray's buffer does not move). Bounded."""
    hit = _ADDRESSES.get(id(a))
    if hit is not None and hit[0] is a:
        return hit[1]
    if len(_ADDRESSES) >= 4096:
        _ADDRESSES.clear()
    ptr = (a.ctypes.data,)
    _ADDRESSES[id(a)] = (a, ptr)
    return ptr


class _Entry:
    __slots__ = ("name", "fn", "convs", "result", "tuple3")

    def __init__(self, lib, name):
        e = ENTRIES[name]
        argtypes, self.convs = [_P, _P], []
        for t in e.args:
            ct, conv = _converter(t)
            argtypes += ct
            self.convs.append(conv)
        self.tuple3 = e.result == "UniTuple(f8, 3)"
        if self.tuple3:
            argtypes.append(_P)
        rtype = ctypes.c_double if e.result == "f8" else ctypes.c_int64
        argtypes.append(ctypes.POINTER(rtype))
        self.fn = getattr(lib, f"fmu_mb_{name}")
        self.fn.argtypes, self.fn.restype = argtypes, ctypes.c_int32
        self.name, self.result = name, (rtype, e.result)

    def __call__(self, mh, dh, *args):
        vals = [*_pointer(mh), *_pointer(dh)]
        for conv, a in zip(self.convs, args):
            vals.extend(conv(a))
        r = self.result[0]()
        out = np.empty(3) if self.tuple3 else None
        if self.tuple3:
            vals.append(out.ctypes.data)
        status = self.fn(*vals, ctypes.byref(r))
        if status != 0:
            raise RuntimeError(f"native kernel {self.name} returned status {status}")
        kind = self.result[1]
        if kind == "void":
            return None
        if self.tuple3:
            return float(out[0]), float(out[1]), float(out[2])
        return bool(r.value) if kind == "b1" else r.value


class CLibraryKernels:
    """Entry points of the native kernel library at ``path`` (a .so / .dll of fmu_mb.native.library)."""

    name = "clib"

    def __init__(self, path, schema=None):
        from . import field_schema
        self.path, self.schema = str(path), schema or field_schema()
        self._lib = ctypes.CDLL(self.path)
        self.description = f"native kernel library {self.path}"
        for entry in ENTRIES:
            setattr(self, entry, _Entry(self._lib, entry))

    def handles(self, model, data):
        from ..backend import address_block
        return address_block(model, self.schema["model"]), address_block(data, self.schema["data"])
