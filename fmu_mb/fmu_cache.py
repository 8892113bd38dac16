"""FMUs of the models in models/, built once into a content-addressed cache and reused.

``$FMU_MB_CACHE/cli-fmus/<model>-<digest>/<model>.fmu`` (default ``~/.cache/fmu_mb``); the digest
covers the core, the model file, the FMU core's C sources, pythonfmu and the Python that builds it, so an FMU is
rebuilt exactly when one of them changed. Used by ``fmu-mb simulate <model>`` and by sweeps.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path


class FmuBuildError(Exception):
    """The model's FMU could not be built (the message says why)."""


def cache_root() -> Path:
    from .native import cache_root as root
    return root() / "cli-fmus"


def cached_fmu(model: str, log=print) -> Path:
    """The FMU of ``models/<model>.py`` in the cache, built there first if missing or stale."""
    import pythonfmu

    from . import registry
    from .fmi.binary import c_sources_digest
    from .fmi.builder import VERSION, build_fmu
    from .sources import core_digest

    h = hashlib.sha256()
    for part in (core_digest().encode(), (registry.models_dir() / f"{model}.py").read_bytes(),
                 c_sources_digest().encode(), VERSION.encode(), str(pythonfmu.__version__).encode(),
                 sys.version.encode(), sys.prefix.encode()):
        h.update(hashlib.sha256(part).digest())
    folder = cache_root() / f"{model}-{h.hexdigest()[:16]}"
    fmu = folder / f"{model}.fmu"
    if fmu.is_file():
        log(f"{model}: cached FMU {fmu}")
        return fmu
    log(f"{model}: building the FMU into {folder} (once; reused while the model and core are unchanged)")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(folder, ignore_errors=True)          # an incomplete folder (no FMU in it)
        stage = Path(tempfile.mkdtemp(prefix=f".{model}-", dir=folder.parent))
        try:
            result = build_fmu(model, stage)
            if result.problems:
                raise FmuBuildError(f"the FMU of {model} is not valid: {result.problems[0]}")
            try:
                os.replace(stage, folder)
            except OSError:          # built meanwhile by another process: keep that one
                if not fmu.is_file():
                    raise
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    except (ValueError, RuntimeError, OSError) as exc:
        raise FmuBuildError(f"building the FMU of {model} failed: {exc}") from None
    return fmu


def fmu_path(target: str) -> Path:
    """A built FMU (file, or an extracted FMU's folder) or, for a model name, its cached FMU; UserError
    (fmu_mb.errors) naming what ``target`` is not."""
    from . import registry
    from .errors import UserError, close_matches, one_line
    path = Path(target)
    if path.is_file() or (path.is_dir() and (path / "modelDescription.xml").is_file()):
        return path
    models = registry.available()
    if target in models and not path.suffix:
        try:
            return cached_fmu(target)
        except FmuBuildError as exc:
            raise UserError(one_line(exc), 1) from None
    if path.suffix.lower() == ".fmu" or os.sep in target or path.exists():
        raise UserError(f"no such FMU: {target}", 2)
    raise UserError(f"{target!r} is neither an FMU file nor a model in {registry.models_dir()} "
                    f"(models: {', '.join(models) or 'none'}){close_matches(target, models)}", 2)
