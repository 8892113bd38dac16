"""The documentation site (docs/, mkdocs.yml): its generated pages are current, it builds with
``mkdocs build --strict`` (a dead link or a page missing from the navigation fails), and each
mechanism's page lists every variable of the FMU that ``fmu-mb build`` writes."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fmpy import read_model_description

from fmu_mb import registry

ROOT = Path(__file__).resolve().parents[1]


def test_generated_pages_are_current():
    r = subprocess.run([sys.executable, "-m", "fmu_mb.docs_pages", "--check"], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, f"run python -m fmu_mb.docs_pages: {r.stdout}{r.stderr}"


def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="LOUD SKIP: mkdocs missing (pip install -e '.[test]')")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "mechanisms" / "crane" / "index.html").is_file()


@pytest.mark.parametrize("name", registry.available() + ["pd_controller"])
def test_each_fmus_page_lists_every_variable_of_the_fmu(fmus, name):
    page = ROOT / "docs" / "reference" / ("pd_controller.md" if name == "pd_controller" else f"mechanisms/{name}.md")
    listed = re.findall(r"^\| \d+ \| `([^`]+)` \|", page.read_text(), re.M)
    built = [v.name for v in read_model_description(str(fmus[name].path)).modelVariables]
    assert listed == built                                   # every variable, in value-reference order
