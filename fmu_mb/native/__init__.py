"""Native kernels: the entry points of fmu_mb.kernels.entries compiled ahead of time into one C
library (fmu_mb.native.library), run from Python through ctypes (fmu_mb.native.clib).

A pythonfmu FMU that carries the library starts without numba: no numba import, no cache lookup,
no compilation (fmu_mb.backend picks it; the JIT kernels stay the fallback). The native FMUs
(fmu_mb.fmi.native_fmu) link the same library's object code: one compiled artefact for both FMU
kinds. ``fmu_mb.native.library.ensure`` puts the library of this core for this platform into a
directory with ``manifest.json``:

    core_digest   SHA-256 of the fmu_mb sources compiled (fmu_mb.sources); the library loads only
                  into exactly that core
    library       file name (fmu_mb_kernels.so / .dll);  target  linux64 or win64 (C ABI only: any
                  Python version of that platform can load it)
    schema        dtype and ndim of every Model/Data field (address blocks, fmu_mb.native.clib)
    numba, llvmlite  versions that compiled it;  entries  exported entry points

Importable without numba.
"""
from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

from ..model.compiled import DATA_SCHEMA, MODEL_SCHEMA, REAL_FIELDS
from ..sources import this_core_digest

#: where a core carries its native kernels (FMUs: resources/fmu_mb/native/lib)
LIB_DIR = Path(__file__).resolve().parent / "lib"
MANIFEST = "manifest.json"

_loaded: dict = {}


def cache_root() -> Path:
    """``$FMU_MB_CACHE`` (default ``~/.cache/fmu_mb``): compiled kernels, installed cores, CLI FMUs."""
    return Path(os.environ.get("FMU_MB_CACHE") or Path.home() / ".cache" / "fmu_mb")


def fallback_dir() -> Path:
    """Where this core's library goes when :data:`LIB_DIR` is not writable (library.ensure)."""
    return cache_root() / f"native-{this_core_digest()[:24]}"


def field_schema() -> dict:
    """{"model": [[field, dtype, ndim], ...], "data": [...], "data_complex": [...]} (the complex-step Data of
    compiled.make_data(model, complex_step=True)) from the schema of fmu_mb.model.compiled
    (ndim -1 for a scalar int field): the kernels' argument types, whatever mechanism they run."""
    def rows(schema, complex_step=False):
        return [[f.name, "int64", -1] if f.dtype == "int" else
                [f.name, "complex128" if complex_step and f.dtype == "f8" and f.name not in REAL_FIELDS
                 else _NUMPY[f.dtype], len(f.shape)] for f in schema]
    return {"model": rows(MODEL_SCHEMA), "data": rows(DATA_SCHEMA),
            "data_complex": rows(DATA_SCHEMA, complex_step=True)}


_NUMPY = {"f8": "float64", "i8": "int64"}


def platform_target() -> str | None:
    """The library target this process can load (linux64, win64), or None (no library for it)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    if sys.platform.startswith("linux"):
        return "linux64"
    return "win64" if sys.platform == "win32" else None


def check(directory) -> tuple:
    """(manifest, "") if ``directory`` holds the native kernel library of this core for this platform,
    else (None, why)."""
    directory = Path(directory)
    path = directory / MANIFEST
    if not path.is_file():
        return None, f"no native kernels in {directory}"
    try:
        man = json.loads(path.read_text())
        target, library = man["target"], man["library"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"unreadable {path}: {exc!r}"
    if man.get("core_digest") != this_core_digest():
        return None, f"the native kernels in {directory} were built for another fmu_mb core"
    if target != platform_target():
        return None, (f"the native kernels in {directory} are for {target}, not this platform "
                      f"({sys.platform} {platform.machine()})")
    if not (directory / library).is_file():
        return None, f"{directory} has a manifest but no {library}"
    return man, ""


def load(directory=LIB_DIR) -> tuple:
    """(kernel set, manifest) of the native kernel library in ``directory`` (fmu_mb.native.clib), or
    (None, why). Loaded once per directory and process."""
    man, why = check(directory)
    if man is None:
        return None, why
    path = (Path(directory) / man["library"]).resolve()
    if path not in _loaded:
        from .clib import CLibraryKernels
        try:
            _loaded[path] = CLibraryKernels(path, man["schema"], f"native kernel library ({man['target']}, numba "
                                            f"{man.get('numba', '?')}, generic CPU: {path})")
        except (OSError, AttributeError) as exc:     # not loadable / an entry missing
            return None, f"cannot load {path}: {exc}"
    return _loaded[path], man
