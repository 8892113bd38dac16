"""Find and load mechanism files (``models/<name>.py``, each exposing ``build(**options)``).

The models directory is the repository's ``models/`` (next to the package) unless
the environment variable ``FMU_MB_MODELS`` names another one. Model files are
imported by path under unique module names, so they never shadow each other
or anything on sys.path.
"""
from __future__ import annotations

import hashlib
import importlib.util
import keyword
import os
import re
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


def most_detailed(name: str) -> dict:
    """The model's most detailed options, its ``MOST_DETAILED`` (every physical effect it has on: what the
    benchmarks, the accuracy tests and the docs call full detail); {} for a model file without one."""
    return dict(getattr(load(name), "MOST_DETAILED", {}))


def as_fmu_parameters(name: str, options: dict) -> dict:
    """``options`` of the model as its FMU's parameter start values, {"model.<option>": value}: a Choice as the
    index of its value (the FMU's Integer/Enumeration), anything else as given."""
    from .model.options import Choice
    spec = getattr(load(name), "OPTIONS", {})
    out = {}
    for key, value in options.items():
        if key not in spec:
            raise KeyError(f"model {name!r} has no option {key!r} (options: {', '.join(spec) or 'none'})")
        o = spec[key]
        out[f"model.{key}"] = o.values.index(value) if isinstance(o, Choice) else value
    return out


class ModelFileError(ValueError):
    """A model file that cannot be imported or built; the message names the file and line."""


def locate(model) -> tuple[str, Path]:
    """(name, file) of a model given by name (``models/<name>.py``) or by the path of a model file
    anywhere (``my_arm.py``: the model is named after the file)."""
    p = Path(model)
    if p.suffix == ".py" or os.sep in str(model):
        if p.suffix != ".py":
            raise ModelFileError(f"{p}: a model file is a Python file (.py); build a URDF or MJCF file with "
                                 "fmu-mb build robot.urdf (or robot.xml)")
        if not p.is_file():
            raise ModelFileError(f"{p}: no such model file")
        if not p.stem.isidentifier():
            raise ModelFileError(f"{p}: the file's name is the model's name and must be an identifier (letters, "
                                 f"digits, _; not starting with a digit), e.g. {identifier(p.stem)}.py")
        return p.stem, p.resolve()
    path = models_dir() / f"{model}.py"
    if not path.is_file():
        raise KeyError(f"no model named {model!r} in {models_dir()} (available: {', '.join(available()) or 'none'})")
    return str(model), path


def identifier(name: str) -> str:
    """``name`` made a Python identifier (model, link and joint names become FMU variable and module
    names): characters other than letters, digits and _ become _, and a leading digit or a keyword
    gets a leading _."""
    s = re.sub(r"\W", "_", name)
    if not s or s[0].isdigit() or keyword.iskeyword(s):
        s = "_" + s
    return s


def _where(exc: BaseException, path: Path) -> str:
    """'file:line' of the deepest frame of ``exc``'s traceback inside ``path``, or the file."""
    line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    tb = exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path.resolve():
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"{path}:{line}" if line else str(path)


def build_checked(module: ModuleType, path: Path, **options) -> Mechanism:
    """``module.build(**options)``: a Mechanism, or a ModelFileError naming the file, the line of
    the user's code that failed and the reason (validation messages name object, field and range)."""
    try:
        mech = module.build(**options)
    except Exception as exc:  # noqa: BLE001 — anything a user's code raises becomes one readable line
        raise ModelFileError(f"{_where(exc, path)}: build() failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(mech, Mechanism):
        raise ModelFileError(f"{path}: build() returned {type(mech).__name__}, not a Mechanism")
    return mech


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
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 — a user's file: say where and why in one line
        del sys.modules[modname]
        raise ModelFileError(f"{_where(exc, path)}: the model file does not import: {type(exc).__name__}: "
                             f"{exc}") from None
    if not callable(getattr(module, "build", None)):
        del sys.modules[modname]
        raise ModelFileError(f"model file {path} must define build(**options) -> Mechanism")
    return module


def build(name: str, **options) -> Mechanism:
    """``load(name).build(**options)``, checked to return a Mechanism."""
    mech = load(name).build(**options)
    if not isinstance(mech, Mechanism):
        raise TypeError(f"models/{name}.py: build() returned {type(mech).__name__}, not a Mechanism")
    return mech
