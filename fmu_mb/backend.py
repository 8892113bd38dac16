"""Kernel backends: who runs the entry points of fmu_mb.kernels.entries.

* ``jit`` — the numba dispatchers, compiled on first use and cached on disk
  (kernels.handles makes their Model/Data handles).
* ``native`` — the same functions compiled ahead of time into one C library (fmu_mb.native,
  the library the native FMUs link), called through ctypes (fmu_mb.native.clib). No numba
  import, no cache load: what lets an FMU start in a fraction of a second. Handles are int64
  address blocks (fmu_mb.native.clib.address_block).

Both serve the same calls, ``k.<entry>(mh, dh, *args)`` with ``mh, dh = k.handles(model,
data)``. The native functions check an array argument's type once, on its first use (the JIT
dispatchers on every call): only the Simulator calls them, with its own arrays. (FMUs do not come here:
their binaries link the compiled kernels themselves, fmu_mb.fmi.binary.)
"""
from __future__ import annotations

import os
from importlib import import_module

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


_JIT = JitKernels()


def _checked(backend: str, name: str = "backend") -> str:
    if backend not in BACKENDS:
        raise ValueError(f"{name} must be one of {', '.join(BACKENDS)} (got {backend!r})")
    return backend


def default_kernels() -> str:
    """The backend a Simulator takes when given none: ``$FMU_MB_KERNELS`` (jit, native, auto), else jit.
    ValueError naming the variable for any other value."""
    return _checked(os.environ.get("FMU_MB_KERNELS") or "jit", "FMU_MB_KERNELS")


def kernel_set(backend: str = "jit", search=()):
    """(kernels, note): the kernel set for ``backend`` (jit, native, auto) and, when auto fell
    back to jit, why. ``search``: extra directories that may hold native kernels (the core's
    own native/lib is always tried first). native raises RuntimeError when none load."""
    if _checked(backend) == "jit":
        return _JIT, ""
    from . import native
    reasons = []
    for d in (native.LIB_DIR, *search):
        kernels, why = native.load(d)
        if kernels is not None:
            return kernels, ""
        reasons.append(why)
    if backend == "native":
        raise RuntimeError("native kernels unavailable: " + "; ".join(reasons))
    return _JIT, "; ".join(reasons)
