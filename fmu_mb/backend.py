"""Kernel backends: who runs the entry points of fmu_mb.kernels.entries.

* ``jit`` — the numba dispatchers, compiled on first use and cached on disk
  (kernels.handles makes their Model/Data handles).
* ``native`` — the same functions compiled ahead of time into one C library (fmu_mb.native,
  the library the native FMUs link), called through ctypes (fmu_mb.native.clib). No numba
  import, no cache load: what lets an FMU start in a fraction of a second. Handles are int64
  address blocks (fmu_mb.native.clib.address_block).

Both serve the same calls, ``k.<entry>(mh, dh, *args)`` with ``mh, dh = k.handles(model,
data)``. The native functions check an array argument's type once, on its first use (the JIT
dispatchers on every call): only the Simulator calls them, with its own arrays. ``FMU_MB_BACKEND``
(jit, native, auto) overrides the choice an FMU makes (auto: native when the FMU carries kernels
for its core and platform).
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


_process_kernels: dict = {}


def process_kernel_set(backend: str = "auto", search=()):
    """(kernels, note) as :func:`kernel_set`, loaded once per process and backend (FMU slaves
    use this; every instance of an FMU shares the loaded library).

    The native library holds no numba runtime (its two runtime functions are its own, hidden:
    fmu_mb/native/runtime.c), so a process may hold it and numba's JIT side by side; the aborts
    at exit once blamed on such a mix ("corrupted double-linked list") were pythonfmu's exit-time
    use-after-free, which the FMU binary prevents (fmu_mb/fmi/shim/fmu_mb_shim.c, point 5;
    tests/test_robustness.py runs the mix)."""
    key = (_checked(backend), tuple(str(d) for d in search))
    if key not in _process_kernels:
        _process_kernels[key] = kernel_set(backend, search)
    return _process_kernels[key]


def backend_override(default: str) -> str:
    """``FMU_MB_BACKEND`` if set (validated), else ``default``."""
    return _checked(os.environ.get("FMU_MB_BACKEND", "").strip().lower() or default, "FMU_MB_BACKEND")
