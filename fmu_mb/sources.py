"""Identity of the fmu_mb core: the SHA-256 of its Python sources.

FMUs carry the core and install it under this digest (fmi.builder); native kernels are
built for one digest and refuse to load under any other (fmu_mb.native)."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def core_digest(package: Path = PACKAGE) -> str:
    """SHA-256 of the core's Python sources (relative path + bytes, sorted)."""
    h = hashlib.sha256()
    for f in sorted(package.rglob("*.py")):
        if "__pycache__" in f.parts:
            continue
        h.update(str(f.relative_to(package)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=None)
def this_core_digest() -> str:
    """Digest of the fmu_mb package this process imported (computed once)."""
    return core_digest(PACKAGE)
