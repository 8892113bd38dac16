"""The guides' code runs: each ```bash and ```python block of a guide page, in order, in one fresh folder
(``fmu-mb`` from this environment; the repository's studies/ and examples/ copied in), as a reader would run
them from the repository's root (```console blocks — installation — are
not run). A guide that drifts from the code fails here. A page that needs system tools says so in a
``<!-- needs: TOOL ... -->`` comment; without them its test skips loudly, naming what to install."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.windows import WINE

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ["getting-started.md", "closed-loops.md", "native-fmus.md", "flexible-and-friction.md", "sweeps.md",
          "reports.md", "linear-models.md", "systems.md"]
#: tools a page may need -> the Debian package that brings it
PACKAGES = {"x86_64-w64-mingw32-gcc": "gcc-mingw-w64-x86-64", "wine": "wine64", "aarch64-linux-gnu-gcc":
            "gcc-aarch64-linux-gnu", "qemu-aarch64": "qemu-user"}
#: repository folders a guide's commands name, copied into its working folder (a reader runs them at the root)
REPOSITORY_FILES = ("studies", "examples")


@pytest.mark.parametrize("guide", GUIDES)
def test_guide_code_runs(guide, tmp_path, wine_prefix):
    text = (ROOT / "docs" / guide).read_text()
    needs = re.findall(r"<!-- needs: (.*?) -->", text)
    missing = [t for t in " ".join(needs).split() if not (WINE if t == "wine" else shutil.which(t))]
    if missing:
        pytest.skip(f"LOUD SKIP: docs/{guide} needs {', '.join(missing)} (apt-get install "
                    f"{' '.join(PACKAGES.get(t, t) for t in missing)}; scripts/test.sh does it where it can)")
    for folder in REPOSITORY_FILES:
        shutil.copytree(ROOT / folder, tmp_path / folder)
    blocks = re.findall(r"^```(bash|python)\n(.*?)^```", text, re.S | re.M)
    assert blocks
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "MPLBACKEND": "Agg", "WINEPREFIX": str(wine_prefix)}
    if WINE:
        env["PATH"] += os.pathsep + str(Path(WINE).parent)
    for k, (lang, code) in enumerate(blocks):
        if lang == "bash":
            cmd = ["bash", "-euo", "pipefail", "-c", code]
        else:
            script = tmp_path / f"block{k}.py"
            script.write_text(code)
            cmd = [sys.executable, str(script)]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env)
        assert r.returncode == 0, f"{guide}, block {k + 1} ({lang}):\n{code}\n{r.stdout[-1500:]}{r.stderr[-3000:]}"
