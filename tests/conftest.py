"""Fixtures shared by the FMU test modules: every FMU built once per test run (shared by the pytest-xdist
workers: the first to need a set builds it, the other waits and reuses it)."""
from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import sys

import pytest

# The Simulator runs the kernel library the FMUs link (fmu_mb.native; bitwise the JIT kernels' results,
# tests/native/test_native.py): the suite compiles the kernels once, ahead of time, instead of once more by numba's
# JIT in each worker (and in each process the tests start, which inherit this). Tests of the JIT backend say so.
os.environ.setdefault("FMU_MB_KERNELS", "native")

from fmu_mb import registry  # noqa: E402
from fmu_mb.fmi.builder import build_fmu  # noqa: E402
from fmu_mb.fmi.controller import build_controller_fmu  # noqa: E402
from fmu_mb.fmi.excitation import build_excitation_fmu  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def kernel_library():
    """This platform's kernel library where the Simulator finds it (FMU_MB_KERNELS=native, above): built once per
    core version, under the library's lock (the first worker builds it, on every core; the other waits)."""
    if os.environ.get("FMU_MB_KERNELS") == "native":
        from fmu_mb.native.library import ensure
        ensure(log=lambda line: None)


def built_once(tmp_path_factory, name: str, build):
    """``build(folder)`` once per test run: under pytest-xdist every worker has its own base folder, whose parent is
    the run's (tmp_path_factory.getbasetemp().parent, as pytest-xdist documents for sharing session data), so the
    first worker to get here builds into <run>/<name> under a lock and pickles the result; a worker arriving later
    waits for the lock and reads it. Without xdist: the session's own folder. (Built per worker before, the FMU sets
    took 375-461 s of setup in each of the CI's two workers.)"""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    result = root / f"{name}.pickle"
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if result.is_file():
                return pickle.loads(result.read_bytes())
            folder = root / name
            shutil.rmtree(folder, ignore_errors=True)                # (a build that failed part-way)
            folder.mkdir(parents=True)
            built = build(folder)
            result.write_bytes(pickle.dumps(built))
            return built
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def in_parallel(fn, calls: list) -> list:
    """[fn(*args) for args in calls], one process per core, the calls handed out in their order (put the costliest
    first). Serial, an FMU set's build left the other worker of the suite waiting on its lock with one core idle
    (the native set: 488 s of one test's setup in the CI run of 9911f94)."""
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(max_workers=max(1, min(len(calls), os.cpu_count() or 1))) as pool:
        return list(pool.map(fn, *zip(*calls))) if calls else []


def _build_native(name, out):
    from fmu_mb.fmi.native_fmu import build_native_fmus
    return build_native_fmus(name, {2: out, 3: out / "fmi3"})


def _every_mechanism(fn, out) -> dict:
    """{mechanism: fn(mechanism, out)}, built in parallel, the crane first (it carries 1640 distinct mechanisms)."""
    names = sorted(registry.available(), key=lambda n: n != "crane")
    return dict(zip(names, in_parallel(fn, [(n, out) for n in names])))


@pytest.fixture(scope="session")
def fmus(tmp_path_factory):
    """{name: BuildResult} of every mechanism FMU, the PD controller and the excitation, built into one folder."""
    def build(out):
        built = _every_mechanism(build_fmu, out)
        built["pd_controller"] = build_controller_fmu(out)
        built["excitation"] = build_excitation_fmu(out)
        return built
    return built_once(tmp_path_factory, "fmus", build)


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
    return built_once(tmp_path_factory, "native_fmus",
                      lambda out: _every_mechanism(_build_native, out))


@pytest.fixture(scope="session")
def native_fmus(native_builds, tmp_path_factory):
    """{name: BuildResult} of every mechanism's native FMI 2.0 FMU, the PD controller's and the excitation's (signal
    blocks: always native)."""
    built = {m: b[2] for m, b in native_builds.items()}
    blocks = built_once(tmp_path_factory, "native_blocks", lambda out: {"pd_controller": build_controller_fmu(out),
                                                                       "excitation": build_excitation_fmu(out)})
    return {**built, **blocks}


@pytest.fixture(scope="session")
def fmi3_fmus(native_builds):
    """{name: BuildResult} of every mechanism's native FMI 3.0 FMU."""
    return {m: b[3] for m, b in native_builds.items()}


@pytest.fixture(scope="session")
def extracted_native(native_fmus, tmp_path_factory):
    """{name: folder} of every native FMU extracted once."""
    return _extract_all(native_fmus, tmp_path_factory.mktemp("extracted_native"))


@pytest.fixture(scope="session")
def extracted_fmi3(fmi3_fmus, tmp_path_factory):
    """{name: folder} of every mechanism's FMI 3.0 FMU extracted once."""
    return _extract_all(fmi3_fmus, tmp_path_factory.mktemp("extracted_fmi3"))


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


#: the test files that take longest on the 2-core CI host (their summed durations in the run of 9911f94 + 2 commits,
#: setups that wait for the FMU sets included; the option matrix's pool keeps both cores busy), collected first and,
#: with --no-loadscope-reorder (scripts/test.sh), handed out first: pytest-xdist gives the files out in collection
#: order (--dist loadfile), so the longest start first and the run does not end waiting for one of them started late
#: (longest processing time first). (Without that flag xdist sorted the files by their number of tests: the option
#: matrix, 6 tests and 599 s, started last.)
LONGEST_FIRST = ("tests/test_option_matrix.py", "tests/test_robustness.py", "tests/fmi/test_native_fmu.py",
                 "tests/test_manipulator.py", "tests/linearization/test_jacobians.py",
                 "tests/interop/test_urdf_as_shipped.py", "tests/test_soak.py", "tests/native/test_native_library.py",
                 "tests/fmi/test_native_hosts.py", "tests/fmi/test_dynamics_outputs.py", "tests/test_guides.py",
                 "tests/test_report.py", "tests/kernels/test_linearly_implicit.py", "tests/fmi/test_model_exchange.py",
                 "tests/test_controlled_accuracy.py", "tests/fmi/test_fmi3.py", "tests/fmi/test_kinds_agree.py")


def pytest_collection_modifyitems(config, items):
    rank = {f: k for k, f in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))     # (stable: the rest keep their order)
