"""Fixtures shared by the FMU test modules: every FMU built once per test session."""
from __future__ import annotations

import shutil
import sys

import pytest

from fmu_mb import registry
from fmu_mb.fmi.builder import build_fmu
from fmu_mb.fmi.controller import build_controller_fmu


@pytest.fixture(scope="session")
def fmus(tmp_path_factory):
    """{name: BuildResult} of every mechanism FMU and the PD controller, built into one folder."""
    out = tmp_path_factory.mktemp("fmus")
    built = {m: build_fmu(m, out) for m in registry.available()}
    built["pd_controller"] = build_controller_fmu(out)
    return built


def _extract_all(built: dict, root) -> dict:
    """{name: folder} of every BuildResult in ``built`` unzipped under ``root``."""
    out = {}
    for name, r in built.items():
        shutil.unpack_archive(str(r.path), str(root / name), "zip")
        out[name] = root / name
    return out


@pytest.fixture(scope="session")
def extracted_python(fmus, tmp_path_factory):
    """{name: folder} of every FMU extracted once (the robustness cases share these; test_robustness
    runs them against the native FMUs too)."""
    return _extract_all(fmus, tmp_path_factory.mktemp("extracted"))


@pytest.fixture(scope="session")
def native_fmus(tmp_path_factory):
    """{name: BuildResult} of every mechanism's native FMU (fmu_mb.fmi.native_fmu; linux64, and win64
    where mingw-w64 is installed) and the PD controller's (always native)."""
    from fmu_mb.fmi.native_fmu import build_native_fmu
    out = tmp_path_factory.mktemp("native_fmus")
    built = {m: build_native_fmu(m, out) for m in registry.available()}
    built["pd_controller"] = build_controller_fmu(out)
    return built


@pytest.fixture(scope="session")
def extracted_native(native_fmus, tmp_path_factory):
    """{name: folder} of every native FMU extracted once."""
    return _extract_all(native_fmus, tmp_path_factory.mktemp("extracted_native"))


@pytest.fixture(scope="session")
def wine_prefix(tmp_path_factory):
    """One wine prefix for the session (its first start takes ~7 s); warns once where wine cannot run."""
    from tests.windows import MINGW, MISSING, WINE
    if not (MINGW and WINE):
        print(f"\nWARNING: the win64 kernel library and native FMUs are not run: {MISSING}", file=sys.stderr)
    return tmp_path_factory.mktemp("wine")


@pytest.fixture(scope="session")
def extracted(extracted_python):
    """{name: folder} of every pythonfmu FMU (test_robustness overrides it with both kinds)."""
    return extracted_python
