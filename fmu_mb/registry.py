"""Find and load mechanism files (``models/<name>.py``, each exposing ``build(**options)``).

The models directory is the repository's ``models/`` (next to the package) unless
the environment variable ``FMU_MB_MODELS`` names another one. Model files are
imported by path under unique module names, so they never shadow each other
or anything on sys.path.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from .model.description import Mechanism


def models_dir() -> Path:
    return Path(os.environ.get("FMU_MB_MODELS", Path(__file__).resolve().parents[1] / "models"))


def available() -> list[str]:
    """Names of the model files in :func:`models_dir`."""
    d = models_dir()
    return sorted(p.stem for p in d.glob("*.py") if not p.stem.startswith("_"))


def load(name: str) -> ModuleType:
    """Import ``models/<name>.py``."""
    path = models_dir() / f"{name}.py"
    if not path.is_file():
        raise KeyError(f"no model named {name!r} in {models_dir()} (available: {', '.join(available()) or 'none'})")
    return load_file(path, name)


def load_file(path, name: str) -> ModuleType:
    """Import the model file at ``path`` as model ``name`` (used inside FMUs). The module
    name carries a digest of the file's bytes, so two different files of the same model
    (two FMU versions in one process) never shadow each other."""
    path = Path(path)
    if not path.is_file():
        raise KeyError(f"model file {path} not found")
    modname = f"fmu_mb_models.{name}_{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    if not callable(getattr(module, "build", None)):
        raise TypeError(f"model file {path} must define build(**options) -> Mechanism")
    return module


def build(name: str, **options) -> Mechanism:
    """``load(name).build(**options)``, checked to return a Mechanism."""
    mech = load(name).build(**options)
    if not isinstance(mech, Mechanism):
        raise TypeError(f"models/{name}.py: build() returned {type(mech).__name__}, not a Mechanism")
    return mech
