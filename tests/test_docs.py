"""The documentation site (docs/, mkdocs.yml): its generated pages are current, it builds with
``mkdocs build --strict`` (a dead link or a page missing from the navigation fails), and each
mechanism's page lists every variable of the FMU that ``fmu-mb build`` writes."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
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
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "Simulator" in api and "compile_mechanism" in api and api.count("doc-heading") > 30   # from docstrings


@pytest.mark.parametrize("name", registry.available() + ["pd_controller", "excitation"])
def test_each_fmus_page_lists_every_variable_of_the_fmu(fmus, name):
    page = ROOT / "docs" / "reference" / (f"{name}.md" if name in BLOCKS else f"mechanisms/{name}.md")
    listed = re.findall(r"^\| \d+ \| `([^`]+)` \|", page.read_text(), re.M)
    built = [v.name for v in read_model_description(str(fmus[name].path)).modelVariables]
    assert listed == built                                   # every variable, in value-reference order


BLOCKS = ("pd_controller", "excitation")

#: the sections the README held before the site (issue 38): each is now a page or a section of one
FORMER_README_SECTIONS = [
    "Quick start", "The FMUs", "Cross-check artifacts", "The FMU core (`fmu_mb/fmi/c`)", "Robustness",
    "The native kernel library (`python -m fmu_mb.native.library --target linux64 win64 linux-aarch64`)",
    "Native FMUs (no Python on the host)", "Integrators", "The mechanisms", "Your own mechanism, and URDF robots",
    "Constraints (paper 000 eqs. 23–37, paper 003, paper 004)", "What is in the core", "Architecture",
    "Command line", "Studies: sweeps on Dask (`fmu_mb.sweep`, `fmu-mb sweep`)", "Reports and the demo",
    "How it is verified (`tests/`)", "Benchmarks (`bench/`)", "Dependencies",
    "Measured numba pitfalls (why the kernels look the way they do)"]


def test_no_section_of_the_former_readme_is_lost():
    headings = set()
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        headings |= {m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", page.read_text(), re.M)}
    assert not [s for s in FORMER_README_SECTIONS if s not in headings]


def test_readme_is_short_and_its_links_resolve():
    """A newcomer's five minutes: at most 150 lines; every relative link names a file of the repository,
    and its two quick-start commands are the ones .ci/run and the docs run."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert links and not [lk for lk in links if not lk.startswith("http") and not (ROOT / lk).exists()]
    commands = re.findall(r"^    (python3 -m venv .+|bash scripts/test\.sh)$", text, re.M)
    assert len(commands) == 2
    assert commands[1] in (ROOT / ".ci" / "run").read_text()
    assert commands[0] in (ROOT / "docs" / "index.md").read_text()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: one page per section of the site's navigation (its screenshot is kept in results/test-artifacts/)
SECTION_PAGES = {"home": "", "getting_started": "getting-started/", "guides": "mechanisms/", "reference": "reference/mechanisms/crane/",
                 "cli": "reference/cli/", "api": "reference/api/", "physics": "integrators/", "benchmarks": "benchmarks/",
                 "design": "design/"}


@pytest.mark.skipif(CHROMIUM is None, reason="LOUD SKIP: no Chromium (apt-get install chromium; the README's test "
                    "command does it where it can) — the site's browser test did not run")
def test_site_renders_in_headless_chromium_without_console_errors(tmp_path):
    """The built site served over HTTP (as ``mkdocs serve`` does; its search index is fetched), one page per
    navigation section: it loads with no console error and no page error, shows its title and navigation,
    and the search finds a mechanism."""
    pytest.importorskip("playwright", reason="LOUD SKIP: playwright missing (pip install -e '.[test]')")
    pytest.importorskip("mkdocs", reason="LOUD SKIP: mkdocs missing (pip install -e '.[test]')")
    from playwright.sync_api import sync_playwright
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-d", str(site)], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(site)))
    SimpleHTTPRequestHandler.log_message = lambda *a: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    keep = ROOT / "results" / "test-artifacts"
    keep.mkdir(parents=True, exist_ok=True)
    errors = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"])
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
                for name, url in SECTION_PAGES.items():
                    page.goto(base + url, wait_until="networkidle")
                    assert page.locator("article h1").count() == 1, name
                    assert page.locator("nav.md-nav").count() > 0, name
                    page.screenshot(path=str(keep / f"site_{name}.png"))
                page.goto(base, wait_until="networkidle")
                page.locator(".md-search__input").click()
                page.keyboard.type("three_loop", delay=50)
                page.wait_for_selector(".md-search-result__item", timeout=20_000)
                assert "three_loop" in page.locator(".md-search-result").inner_text()
            finally:
                browser.close()
    finally:
        server.shutdown()
    assert not errors, errors
