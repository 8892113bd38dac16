"""Fixtures shared by the FMU test modules: every FMU built once per test session."""
from __future__ import annotations

import shutil
import sys

import pytest

from fmu_mb import registry
from fmu_mb.fmi.builder import build_fmu
from fmu_mb.fmi.controller import build_controller_fmu
from fmu_mb.fmi.excitation import build_excitation_fmu


@pytest.fixture(scope="session")
def fmus(tmp_path_factory):
    """{name: BuildResult} of every mechanism FMU, the PD controller and the excitation, built into one folder."""
    out = tmp_path_factory.mktemp("fmus")
    built = {m: build_fmu(m, out) for m in registry.available()}
    built["pd_controller"] = build_controller_fmu(out)
    built["excitation"] = build_excitation_fmu(out)
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
def native_builds(tmp_path_factory):
    """{name: {2: BuildResult, 3: BuildResult}} of every mechanism's native FMUs for FMI 2.0 (linux64, and win64
    where mingw-w64 is installed) and FMI 3.0 (also aarch64-linux where its cross compiler is), compiled once
    (fmu_mb.fmi.native_fmu.build_native_fmus)."""
    from fmu_mb.fmi.native_fmu import build_native_fmus
    out = tmp_path_factory.mktemp("native_fmus")
    return {m: build_native_fmus(m, {2: out, 3: out / "fmi3"}) for m in registry.available()}


@pytest.fixture(scope="session")
def native_fmus(native_builds, tmp_path_factory):
    """{name: BuildResult} of every mechanism's native FMI 2.0 FMU, the PD controller's and the excitation's (signal
    blocks: always native)."""
    built = {m: b[2] for m, b in native_builds.items()}
    built["pd_controller"] = build_controller_fmu(built[next(iter(built))].path.parent)
    built["excitation"] = build_excitation_fmu(built["pd_controller"].path.parent)
    return built


@pytest.fixture(scope="session")
def fmi3_fmus(native_builds):
    """{name: BuildResult} of every mechanism's native FMI 3.0 FMU."""
    return {m: b[3] for m, b in native_builds.items()}


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
