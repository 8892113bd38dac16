"""The tests' Windows toolchain: mingw-w64 builds for win64, wine64 (Debian's, 8.0) runs the result."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

MINGW = shutil.which("x86_64-w64-mingw32-gcc")
WINE = shutil.which("wine64") or next((p for p in ("/usr/lib/wine/wine64",) if Path(p).is_file()), None)
#: why a Windows run is skipped, and how to enable it
MISSING = "needs mingw-w64 and wine64 (apt-get install gcc-mingw-w64-x86-64 wine64)"


def run_wine(prefix, args, timeout=600) -> subprocess.CompletedProcess:
    """``wine64 args`` in the wine prefix ``prefix`` with a minimal environment (wine's debug output off)."""
    env = {"WINEPREFIX": str(prefix), "WINEDEBUG": "-all", "HOME": str(prefix), "PATH": "/usr/bin:/bin"}
    return subprocess.run([WINE, *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout)
