"""The guides' code runs: each ```bash and ```python block of a guide page, in order, in one fresh folder
(``fmu-mb`` from this environment; the repository's studies/ and examples/ copied in), as a reader would run
them from the repository's root (```console blocks — installation — are
not run). A guide that drifts from the code fails here."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ["getting-started.md", "sweeps.md", "reports.md"]
#: repository folders a guide's commands name, copied into its working folder (a reader runs them at the root)
REPOSITORY_FILES = ("studies", "examples")


@pytest.mark.parametrize("guide", GUIDES)
def test_guide_code_runs(guide, tmp_path):
    text = (ROOT / "docs" / guide).read_text()
    for folder in REPOSITORY_FILES:
        shutil.copytree(ROOT / folder, tmp_path / folder)
    blocks = re.findall(r"^```(bash|python)\n(.*?)^```", text, re.S | re.M)
    assert blocks
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "MPLBACKEND": "Agg"}
    for k, (lang, code) in enumerate(blocks):
        if lang == "bash":
            cmd = ["bash", "-euo", "pipefail", "-c", code]
        else:
            script = tmp_path / f"block{k}.py"
            script.write_text(code)
            cmd = [sys.executable, str(script)]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env)
        assert r.returncode == 0, f"{guide}, block {k + 1} ({lang}):\n{code}\n{r.stdout[-1500:]}{r.stderr[-3000:]}"
