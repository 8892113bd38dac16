"""Native FMUs on the hosts users run them on: a plain C host with no environment (tests/c_host/fmu_host.c),
the win64 DLL under wine, the linux-aarch64 FMU under qemu, OSP libcosim's worker threads. Each run's
outputs are compared with FMPy's run of the Linux FMU (tests/fmi/test_native_fmu.py's helpers).
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from fmpy import extract, read_model_description, simulate_fmu

from fmu_mb.native.library import TARGETS
from tests.conftest import in_parallel
from tests.fmi.test_native_fmu import DRIVES, HERE, _outputs, _run
from tests.windows import MINGW, MISSING, WINE, run_wine


# ------------------------------------------------------------------------------------------ plain C hosts
def _compile(cc, source, out, extra=()):
    r = subprocess.run([cc, "-O2", "-std=c99", "-Wall", "-Werror", "-o", str(out), str(source), *extra],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def _host_args(model, folder, target, n, dt, out, start):
    md = read_model_description(str(Path(folder) / "modelDescription.xml"))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    names = _outputs(md)
    ext = TARGETS[target][2].rsplit(".", 1)[1]
    binary = Path(folder) / "binaries" / target / f"{model}.{ext}"
    res = (Path(folder) / "resources").as_uri() if target == "linux64" else \
        "file:///Z:" + str(Path(folder) / "resources")
    args = [str(binary), res, md.guid, str(n), repr(dt), str(out), ",".join(str(vr[x]) for x in names)]
    kind = {v.name: v.type for v in md.modelVariables}
    args += [f"{vr[k]}{'' if kind[k] == 'Real' else ':i'}={v!r}" for k, v in start.items()]
    return args, names


@pytest.mark.parametrize("model", ["five_axis", "crane", "manipulator"])
def test_a_plain_c_host_runs_the_native_fmu_without_any_environment(native_fmus, tmp_path, model):
    """tests/c_host/fmu_host.c (dlopen, the FMI 2.0 calls, nothing else) runs the extracted FMU with
    an empty environment: every Real output after each of 50 steps of 10 ms equals FMPy's run."""
    folder = extract(str(native_fmus[model].path), str(tmp_path / model))
    host = _compile(shutil.which("cc") or "gcc", HERE / "c_host" / "fmu_host.c", tmp_path / "fmu_host", ["-ldl"])
    start = {k: v for k, v in DRIVES.get(model, {}).items()}
    args, names = _host_args(model, folder, "linux64", 50, 0.01, tmp_path / "out.bin", start)
    run = subprocess.run([str(host), *args], capture_output=True, text=True, env={}, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    got = np.fromfile(tmp_path / "out.bin").reshape(50, len(names))
    ref, _ = _run(native_fmus[model].path, start, 0.5)
    want = np.array([[row[n] for n in names] for row in ref[1:]])
    assert np.array_equal(got, want), np.max(np.abs(got - want))


#: win64 runs: each model at its drives, and away from the defaults: Count and Choice options set through
#: fmi2SetInteger (another compiled mechanism of variants.arrays), a compiled trajectory table (the steering)
WINE_RUNS = [("five_axis", {}), ("three_loop", {}), ("crane", {}),
             ("crane", {"model.link": 1, "model.n_div": 7, "model.friction": 2}),
             ("manipulator", {"model.link": 1, "model.n_div": 12}),
             ("mobile_robot", {"steering.right": -0.3, "steering.t_right": 0.1, "steering.ramp": 0.2})]


@pytest.mark.parametrize("model,options", WINE_RUNS)
def test_the_win64_fmu_runs_under_wine(native_fmus, tmp_path, wine_prefix, model, options):
    """The same host built with mingw-w64 loads binaries/win64/<model>.dll under wine 8 and steps it
    50 times: the outputs equal the Linux FMU's within 1e-11 relative (to max(1, |value|)). The machine
    code is the same, the C library is not: msvcrt's exp/sin/cos round differently from glibc's in the
    last bit (states: ~1e-20, tests/native/test_native_library.py). Measured: five_axis 3.1e-15 (joint4.M[3]),
    three_loop 1.8e-14 (joint1.F[2]), crane 2.2e-12 (column.M[2]: the column's reaction moment balances the
    flexible base's 1e7 N/m supports, whose forces are large differences of small deflections).
    Not here: the manipulator at full detail (flexible base and link, LuGre in every joint), where the
    last-bit differences grow through the stiff bristle and support modes: step 1 bitwise, after 0.5 s
    q 2.9e-13, qd 1.4e-10, psi12.F[2] 6.9e-9 relative at n_div 12 (1.4e-10 at n_div 5); the same
    combination on Linux is bitwise the pythonfmu FMU's (test_every_count_value_runs_as_in_the_pythonfmu_fmu)."""
    if not (MINGW and WINE):
        pytest.skip(MISSING)
    folder = extract(str(native_fmus[model].path), str(tmp_path / model))
    host = _compile(MINGW, HERE / "c_host" / "fmu_host.c", tmp_path / "fmu_host.exe", ["-static-libgcc"])
    start = {**DRIVES.get(model, {}), **options}
    args, names = _host_args(model, folder, "win64", 50, 0.01, tmp_path / "out.bin", start)
    run = run_wine(wine_prefix, [host, *args])
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    got = np.fromfile(tmp_path / "out.bin").reshape(50, len(names))
    ref, _ = _run(native_fmus[model].path, start, 0.5)
    want = np.array([[row[n] for n in names] for row in ref[1:]])
    if options:                                     # the options move the mechanism: a dropped one would show
        plain, _ = _run(native_fmus[model].path, DRIVES.get(model, {}), 0.5)
        assert not np.array_equal(want, np.array([[row[n] for n in names] for row in plain[1:]]))
    scale = np.maximum(1.0, np.abs(want))
    rel = np.max(np.abs(got - want) / scale, axis=0)
    k = int(np.argmax(rel))
    print(f"{model}: worst {rel[k]:.2e} relative in {names[k]}; {int(np.sum(rel == 0))} of {len(names)} bitwise")
    assert rel[k] <= 1e-11, (names[k], rel[k])


# ------------------------------------------------------------------------------------------ Model Exchange
#: Model Exchange runs of the plain C host (its --me mode: classical RK4 over fmi2SetTime,
#: fmi2SetContinuousStates and fmi2GetDerivatives, M steps per 10 ms communication step, 10 steps; the crane 4):
#: the drives of five_axis; the crane at full detail (flexible jib at n_div 7, LuGre; RK4 at 2e-5 s); the mobile
#: robot's compiled steering table
ME_RUNS = [("five_axis", {}, 10), ("crane", {"model.link": 1, "model.n_div": 7, "model.friction": 2}, 500),
           ("mobile_robot", {"steering.right": -0.3, "steering.t_right": 0.1, "steering.ramp": 0.2}, 10)]


def _me_run(run, host, folder, model, target, start, m, out):
    """Every Real output after each communication step of the host's Model Exchange run."""
    nx = len(read_model_description(str(Path(folder) / "modelDescription.xml")).derivatives)
    n = 4 if model == "crane" else 10                   # (qemu runs the crane's 2e-5 s steps at ~150 per second)
    args, names = _host_args(model, folder, target, n, 0.01, out, start)
    done = run([str(host), f"--me={nx},{m}", *args])
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return np.fromfile(out).reshape(n, len(names)), names


def _linux_me_run(native_fmus, tmp_path, model, start, m):
    folder = extract(str(native_fmus[model].path), str(tmp_path / f"{model}_linux"))
    host = _compile(shutil.which("cc") or "gcc", HERE / "c_host" / "fmu_host.c", tmp_path / "fmu_host_linux",
                    ["-ldl"])
    return _me_run(lambda a: subprocess.run(a, capture_output=True, text=True, env={}, timeout=600), host, folder,
                   model, "linux64", start, m, tmp_path / "linux.bin")


@pytest.mark.parametrize("model,options,m", ME_RUNS)
def test_model_exchange_runs_under_wine_as_on_linux(native_fmus, tmp_path, wine_prefix, model, options, m):
    """The Model Exchange interface of the win64 DLL under wine: the C host's RK4 run equals the same host's run
    of the Linux binary within 1e-11 relative (to max(1, |value|); msvcrt's libm, as the co-simulation runs)."""
    if not (MINGW and WINE):
        pytest.skip(MISSING)
    start = {**DRIVES.get(model, {}), **options}
    want, names = _linux_me_run(native_fmus, tmp_path, model, start, m)
    folder = extract(str(native_fmus[model].path), str(tmp_path / model))
    host = _compile(MINGW, HERE / "c_host" / "fmu_host.c", tmp_path / "fmu_host.exe", ["-static-libgcc"])
    got, _ = _me_run(lambda a: run_wine(wine_prefix, a), host, folder, model, "win64", start, m, tmp_path / "w.bin")
    rel = np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)), axis=0)
    k = int(np.argmax(rel))
    print(f"{model}: worst {rel[k]:.2e} relative in {names[k]}; {int(np.sum(rel == 0))} of {len(names)} bitwise")
    assert rel[k] <= 1e-11, (names[k], rel[k])


# ------------------------------------------------------------------------------------------ libcosim
def test_libcosim_steps_two_native_instances_in_parallel_worker_threads(tmp_path):
    """OSP libcosim runs two five_axis instances (different drives) with its worker-thread pool: each
    gives the bits of its own sequential FMPy run."""
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    from fmu_mb.fmi.native_fmu import build_native_fmu
    log_output_level(CosimLogLevel.ERROR)
    path = str(build_native_fmu("five_axis", tmp_path, ["linux64"], enumerations=False).path)
    drives = [{"joint1.tau_drive": 2.0, "model.friction": 2}, {"joint2.tau_drive": -3.0, "joint5.tau_drive": 0.4}]
    ex = CosimExecution.from_step_size(step_size=int(1e7))
    obs = CosimObserver.create_time_series()
    ex.add_observer(obs)
    names = ["joint1.q", "joint2.q", "joint5.qd", "joint3.F[3]"]
    slaves = []
    for k, d in enumerate(drives):
        idx = ex.add_local_slave(CosimLocalSlave(fmu_path=path, instance_name=f"arm{k}"))
        vr = {(v.name.decode() if isinstance(v.name, bytes) else v.name): v.reference for v in ex.slave_variables(idx)}
        for name, value in d.items():
            if name.startswith("model."):
                ex.integer_initial_value(idx, vr[name], value)
            else:
                ex.real_initial_value(idx, vr[name], value)
        for n in names:
            obs.start_time_series(idx, vr[n], CosimVariableType.REAL)
        slaves.append((idx, vr))
    assert ex.simulate_until(int(0.5e9))
    for (idx, vr), d in zip(slaves, drives):
        got = np.array([obs.time_series_real_samples(idx, vr[n], 1, 50)[2] for n in names]).T
        ref = simulate_fmu(path, stop_time=0.5, output_interval=0.01, start_values=d, output=names)
        want = np.array([[row[n] for n in names] for row in ref[1:]])
        assert got.shape == want.shape and np.array_equal(got, want), np.max(np.abs(got - want))


# ------------------------------------------------------------------------------------------ AArch64 (qemu)
AARCH64_CC, QEMU = shutil.which("aarch64-linux-gnu-gcc"), shutil.which("qemu-aarch64")
AARCH64_SYSROOT = Path("/usr/aarch64-linux-gnu")
AARCH64_MISSING = ("needs gcc-aarch64-linux-gnu and qemu-user (apt-get install gcc-aarch64-linux-gnu qemu-user): "
                   "the linux-aarch64 native FMUs are not built or run")
#: AArch64 runs: the drives of five_axis; the crane away from its defaults through fmi2SetInteger (another
#: compiled mechanism); the mobile robot's compiled steering table
AARCH64_RUNS = [("five_axis", {}), ("crane", {"model.link": 1, "model.n_div": 7, "model.friction": 2}),
                ("mobile_robot", {"steering.right": -0.3, "steering.t_right": 0.1, "steering.ramp": 0.2})]


@pytest.fixture(scope="module")
def aarch64_fmus(tmp_path_factory):
    if not (AARCH64_CC and QEMU and AARCH64_SYSROOT.is_dir()):
        import sys
        print(f"\nWARNING: {AARCH64_MISSING}", file=sys.stderr)
        pytest.skip(AARCH64_MISSING)
    from fmu_mb.fmi.native_fmu import build_native_fmu
    out = tmp_path_factory.mktemp("aarch64")
    models = list(dict(AARCH64_RUNS))
    return dict(zip(models, in_parallel(_build_aarch64, [(m, out) for m in models])))


def _build_aarch64(model, out):
    from fmu_mb.fmi.native_fmu import build_native_fmu
    return build_native_fmu(model, out, ["linux-aarch64"])


@pytest.mark.parametrize("model,options", AARCH64_RUNS)
def test_the_aarch64_fmu_runs_under_qemu(native_fmus, aarch64_fmus, tmp_path, model, options):
    """--target linux-aarch64: the kernels' IR emitted for aarch64-unknown-linux-gnu (numba's one x86
    intrinsic, the reference count's atomic decrement, in LLVM's generic form: fmu_mb.native.library.
    portable_ir) and the C layer cross-compiled, in binaries/linux64 (FMI 2.0 has no AArch64 folder; its
    importers load linux64 there). The plain C host, cross-compiled, runs it under qemu-aarch64 for 50 steps
    of 10 ms: every Real output bitwise the x86-64 FMU's (same IR, no fused multiply-add either side, glibc's
    libm on both). Its binary needs libc and libm only."""
    folder = Path(extract(str(aarch64_fmus[model].path), str(tmp_path / model)))
    so = folder / "binaries" / "linux64" / f"{model}.so"
    dump = subprocess.run(["aarch64-linux-gnu-objdump", "-p", str(so)], capture_output=True, text=True,
                          check=True).stdout
    assert "aarch64" in dump
    assert {ln.split()[-1] for ln in dump.splitlines() if "NEEDED" in ln} == {"libc.so.6", "libm.so.6"}
    assert not (folder / "binaries" / "win64").exists()
    host = _compile(AARCH64_CC, HERE / "c_host" / "fmu_host.c", tmp_path / "fmu_host", ["-ldl"])
    start = {**DRIVES.get(model, {}), **options}
    args, names = _host_args(model, folder, "linux64", 50, 0.01, tmp_path / "out.bin", start)
    run = subprocess.run([QEMU, "-L", str(AARCH64_SYSROOT), str(host), *args], capture_output=True, text=True,
                         env={}, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    got = np.fromfile(tmp_path / "out.bin").reshape(50, len(names))
    ref, _ = _run(native_fmus[model].path, start, 0.5)
    want = np.array([[row[n] for n in names] for row in ref[1:]])
    assert np.array_equal(got, want), np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))


@pytest.mark.parametrize("model,options,m", ME_RUNS)
def test_model_exchange_runs_under_qemu_as_on_x86_64(native_fmus, aarch64_fmus, tmp_path, model, options, m):
    """The Model Exchange interface of the linux-aarch64 FMU under qemu-aarch64: the cross-compiled C host's RK4
    run is bitwise the x86-64 host's run of the x86-64 FMU."""
    if model not in aarch64_fmus:
        pytest.skip(f"no AArch64 {model} FMU in this run")
    start = {**DRIVES.get(model, {}), **options}
    want, _ = _linux_me_run(native_fmus, tmp_path, model, start, m)
    folder = extract(str(aarch64_fmus[model].path), str(tmp_path / model))
    host = _compile(AARCH64_CC, HERE / "c_host" / "fmu_host.c", tmp_path / "fmu_host", ["-ldl"])
    got, _ = _me_run(lambda a: subprocess.run([QEMU, "-L", str(AARCH64_SYSROOT), *a], capture_output=True,
                                              text=True, env={}, timeout=900),
                     host, folder, model, "linux64", start, m, tmp_path / "a.bin")
    assert np.array_equal(got, want), np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))


def test_linux64_and_aarch64_binaries_cannot_share_an_fmu():
    """Both would need binaries/linux64: refused with the way out."""
    from fmu_mb.fmi.native_fmu import check_targets
    with pytest.raises(ValueError, match="build the AArch64 FMU on its own"):
        check_targets(["linux64", "linux-aarch64"])
    with pytest.raises(ValueError, match="unknown native targets"):
        check_targets(["linux-riscv64"])
    assert check_targets(["linux-aarch64", "win64"]) == ["linux-aarch64", "win64"]
