"""Native kernels: the entry points of fmu_mb.kernels.entries compiled ahead of time.

An FMU that carries them starts without numba: no numba import, no cache lookup, no
compilation — the extension module is imported like any other (fmu_mb.backend picks it;
the JIT kernels stay the fallback). ``fmu_mb.native.build`` compiles them with numba's
pycc into a directory holding the extension ``kernels_<digest>`` and ``manifest.json``:

    core_digest   SHA-256 of the fmu_mb sources compiled (fmu_mb.sources); the extension
                  loads only into exactly that core
    module        extension module name;  ext_suffix  Python ABI tag of the file
    target_cpu    LLVM CPU model ("" = generic for the architecture: runs on any x86-64)
    schema        dtype and ndim of every Model/Data field (address blocks, fmu_mb.backend)
    numba         numba version that compiled it;  entries  exported entry points

Importable without numba.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
from pathlib import Path

from ..model.compiled import DATA_SCHEMA, MODEL_SCHEMA
from ..sources import this_core_digest

#: where a core carries its native kernels (FMUs: resources/fmu_mb/native/lib)
LIB_DIR = Path(__file__).resolve().parent / "lib"
MANIFEST = "manifest.json"

_loaded: dict = {}


def field_schema() -> dict:
    """{"model": [[field, dtype, ndim], ...], "data": [...]} from the schema of fmu_mb.model.compiled
    (ndim -1 for a scalar int field): the kernels' argument types, whatever mechanism they run."""
    def rows(schema):
        return [[f.name, "int64", -1] if f.dtype == "int" else [f.name, _NUMPY[f.dtype], len(f.shape)]
                for f in schema]
    return {"model": rows(MODEL_SCHEMA), "data": rows(DATA_SCHEMA)}


_NUMPY = {"f8": "float64", "i8": "int64"}


def ext_suffix() -> str:
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def module_name(digest: str) -> str:
    return f"kernels_{digest[:16]}"


def check(directory) -> tuple:
    """(manifest, "") if ``directory`` holds native kernels for this core and Python, else (None, why)."""
    directory = Path(directory)
    path = directory / MANIFEST
    if not path.is_file():
        return None, f"no native kernels in {directory}"
    try:
        man = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return None, f"unreadable {path}: {exc}"
    if man.get("core_digest") != this_core_digest():
        return None, f"the native kernels in {directory} were built for another fmu_mb core"
    if man.get("ext_suffix") != ext_suffix():
        return None, f"the native kernels in {directory} are for {man.get('ext_suffix')}, not this Python"
    if not (directory / (man["module"] + man["ext_suffix"])).is_file():
        return None, f"{directory} has a manifest but no extension module"
    return man, ""


def load(directory=LIB_DIR) -> tuple:
    """(extension module, manifest) of the native kernels in ``directory``, or (None, why)."""
    man, why = check(directory)
    if man is None:
        return None, why
    name = man["module"]
    if name in _loaded:
        return _loaded[name], man
    file = Path(directory) / (name + man["ext_suffix"])
    try:
        spec = importlib.util.spec_from_file_location(name, file)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except (ImportError, OSError) as exc:
        return None, f"cannot load {file}: {exc}"
    _loaded[name] = mod
    return mod, man
