"""Identity of the fmu_mb core: the SHA-256 of its Python sources.

FMUs carry the core and install it under this digest (fmi.builder); native kernels are
built for one digest and refuse to load under any other (fmu_mb.native)."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def importable_env() -> dict:
    """This process's environment with the package's parent first on PYTHONPATH: a child
    ``python -m fmu_mb...`` imports this very package (also from a checkout that is not installed)."""
    import os
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(PACKAGE.parent), os.environ.get("PYTHONPATH"))
                                                        if p)}

#: tooling inside the package that no FMU runs (command line, demo, the papers' scenarios, the native
#: FMU builder), as
#: paths relative to it: FMUs do not carry it (fmi.builder) and it is not part of the core's
#: identity, so editing it changes neither the digest nor the native kernels. native/library.py is
#: no FMU's code either but stays: it shapes the native kernels, which this digest keys
TOOLING = ("__main__.py", "cli.py", "build.py", "runs.py", "fmu_info.py", "errors.py", "demo.py", "scenarios", "interop",
           "samples.py", "sweep", "fmu_cache.py", "report", "crosscheck.py", "fmi/native_fmu.py", "fmi/native_values.py",
           "fmi/binary.py", "fmi/model_table.py", "native/trajectory_code.py", "docs_pages.py", "linearization",
           "rtbench", "system.py", "ssp.py", "fmi/block_fmu.py", "precompile.py",
           "fmi/description3.py", "fmi/arrays3.py")


def is_tooling(rel) -> bool:
    """Whether ``rel`` (a path relative to the package) is :data:`TOOLING` or inside it."""
    parts = Path(rel).parts
    return any(parts[:len(t)] == t for t in (Path(t).parts for t in TOOLING))


def core_digest(package: Path = PACKAGE) -> str:
    """SHA-256 of the core's Python sources (relative path + bytes, sorted), tooling excluded."""
    h = hashlib.sha256()
    for f in sorted(package.rglob("*.py")):
        if "__pycache__" in f.parts or is_tooling(f.relative_to(package)):
            continue
        h.update(str(f.relative_to(package)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=None)
def this_core_digest() -> str:
    """Digest of the fmu_mb package this process imported (computed once)."""
    return core_digest(PACKAGE)
