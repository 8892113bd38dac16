"""Fixtures shared by the FMU test modules: every FMU built once per test session."""
from __future__ import annotations

import shutil

import pytest

from fmu_mb import registry
from fmu_mb.fmi.builder import build_controller_fmu, build_fmu


@pytest.fixture(scope="session")
def fmus(tmp_path_factory):
    """{name: BuildResult} of every mechanism FMU and the PD controller, built into one folder."""
    out = tmp_path_factory.mktemp("fmus")
    built = {m: build_fmu(m, out) for m in registry.available()}
    built["pd_controller"] = build_controller_fmu(out)
    return built


@pytest.fixture(scope="session")
def extracted(fmus, tmp_path_factory):
    """{name: folder} of every FMU extracted once (the robustness cases share these)."""
    root = tmp_path_factory.mktemp("extracted")
    out = {}
    for name, r in fmus.items():
        shutil.unpack_archive(str(r.path), str(root / name), "zip")
        out[name] = root / name
    return out
