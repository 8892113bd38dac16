"""Kernel backends: who runs the entry points of fmu_mb.kernels.entries.

* ``jit`` — the numba dispatchers, compiled on first use and cached on disk
  (kernels.handles makes their Model/Data handles).
* ``native`` — the same functions compiled ahead of time into an extension module
  (fmu_mb.native). No numba import, no cache load: what lets an FMU start in a fraction
  of a second. Handles are int64 address blocks (:func:`address_block`).

Both serve the same calls, ``k.<entry>(mh, dh, *args)`` with ``mh, dh = k.handles(model,
data)``. The native functions do not check argument types (the JIT dispatchers do): only
the Simulator calls them, with its own arrays. ``FMU_MB_BACKEND`` (jit, native, auto)
overrides the choice an FMU makes (auto: native when the FMU carries kernels for its core).
"""
from __future__ import annotations

import os
from importlib import import_module

import numpy as np

from .kernels.entries import ENTRIES

BACKENDS = ("auto", "jit", "native")


class JitKernels:
    """Entry points as numba dispatchers."""

    name = "jit"
    description = "numba JIT (on-disk cache)"

    def __getattr__(self, entry):
        e = ENTRIES.get(entry)
        if e is None:
            raise AttributeError(entry)
        fn = getattr(import_module(f"fmu_mb.kernels.{e.module}"), e.function)
        setattr(self, entry, fn)
        return fn

    @staticmethod
    def handles(model, data):
        from .kernels.handles import data_struct, model_struct
        return model_struct(model), data_struct(data)


class _Block(np.ndarray):
    """An address block that keeps the arrays it points into alive (``owner``)."""


def address_block(tup, schema) -> np.ndarray:
    """int64 block of a Model/Data for the native kernels: per field its data address followed
    by its shape (scalar fields: the value), in ``schema`` order ([field, dtype, ndim])."""
    out = []
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


class NativeKernels:
    """Entry points of a native kernel module (fmu_mb.native)."""

    name = "native"

    def __init__(self, module, manifest):
        self._module, self.manifest = module, manifest
        self.description = (f"native (ahead-of-time, numba {manifest['numba']}, "
                            f"cpu {manifest['target_cpu'] or 'generic'})")
        for entry in ENTRIES:
            setattr(self, entry, getattr(module, entry))

    def handles(self, model, data):
        s = self.manifest["schema"]
        return address_block(model, s["model"]), address_block(data, s["data"])


_JIT = JitKernels()


def _checked(backend: str, name: str = "backend") -> str:
    if backend not in BACKENDS:
        raise ValueError(f"{name} must be one of {', '.join(BACKENDS)} (got {backend!r})")
    return backend


def kernel_set(backend: str = "jit", search=()):
    """(kernels, note): the kernel set for ``backend`` (jit, native, auto) and, when auto fell
    back to jit, why. ``search``: extra directories that may hold native kernels (the core's
    own native/lib is always tried first). native raises RuntimeError when none load."""
    if _checked(backend) == "jit":
        return _JIT, ""
    from . import native
    reasons = []
    for d in (native.LIB_DIR, *search):
        mod, man = native.load(d)
        if mod is not None:
            return NativeKernels(mod, man), ""
        reasons.append(man)
    if backend == "native":
        raise RuntimeError("native kernels unavailable: " + "; ".join(reasons))
    return _JIT, "; ".join(reasons)


_process_kernels: dict = {}


def process_kernel_set(backend: str = "auto", search=()):
    """(kernels, note) as :func:`kernel_set`, loaded once per process and backend (FMU slaves
    use this; every instance of an FMU shares the loaded module).

    The native module carries its own copy of numba's runtime (hidden symbols), and processes
    holding both it and numba's JIT are safe: the aborts at exit once blamed on that mix
    ("corrupted double-linked list") were pythonfmu's exit-time use-after-free, which the FMU
    binary now prevents (fmu_mb/fmi/shim/fmu_mb_shim.c, point 5; tests/test_robustness.py runs
    the mix)."""
    key = (_checked(backend), tuple(str(d) for d in search))
    if key not in _process_kernels:
        _process_kernels[key] = kernel_set(backend, search)
    return _process_kernels[key]


def backend_override(default: str) -> str:
    """``FMU_MB_BACKEND`` if set (validated), else ``default``."""
    return _checked(os.environ.get("FMU_MB_BACKEND", "").strip().lower() or default, "FMU_MB_BACKEND")
