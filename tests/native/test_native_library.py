"""The native kernel library (fmu_mb.native.library): every kernel entry point in one C library
that needs no Python, numpy or numba at run time (issue 13's kernel library).

numba compiles each entry as a C-typed function; its LLVM IR, without numba's Python wrapper,
is emitted by llvmlite as one object per target and linked with a C shim and a two-function
runtime (native/runtime.c). The code below the entries is the kernels' own, lowered without
fast-math and calling the same libm, so results must be bitwise those of the JIT kernels
(tests/native/test_native.py checks the same library as the pythonfmu FMUs carry it, in a process
without numba); here it is loaded in-process through ctypes (fmu_mb.native.clib), next to
numba's JIT, which its hidden runtime symbols allow.

The Windows library is cross-linked with mingw-w64 when it is installed (Debian package
gcc-mingw-w64-x86-64): then its imports are checked, and with wine64 a C program built for Windows
steps a mechanism through it (the arrays file, fmu_mb.native.arrays, carries the compiled arrays).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.kernels.entries import ENTRIES
from fmu_mb.model.compile import compile_mechanism
from fmu_mb.simulator import Simulator
from tests.native.test_native import _run, assert_bitwise, assert_runs_without_numba
from tests.windows import MINGW, MISSING, WINE, run_wine



@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    from fmu_mb.native.library import TARGETS, cached
    if not MINGW:
        print("\nWARNING: x86_64-w64-mingw32-gcc not found: the win64 kernel library is not linked "
              "(apt-get install gcc-mingw-w64-x86-64 to enable it)", file=sys.stderr)
    dirs = cached(("linux64", "win64") if MINGW else ("linux64",))      # (compiled once per core digest)
    return {t: d / TARGETS[t][2] for t, d in dirs.items()}


@pytest.fixture(scope="module")
def clib(libraries):
    from fmu_mb.native.clib import CLibraryKernels
    return CLibraryKernels(libraries["linux64"])


def test_linux_library_needs_only_libc_and_libm(libraries):
    so = libraries["linux64"]
    ldd = subprocess.run(["ldd", str(so)], capture_output=True, text=True, check=True).stdout
    libs = {line.split()[0] for line in ldd.splitlines() if line.strip()}
    assert libs <= {"linux-vdso.so.1", "libm.so.6", "libc.so.6", "/lib64/ld-linux-x86-64.so.2"}, libs
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True, text=True,
                               check=True).stdout
    assert not re.search(r"Py|numba|NRT_|python", undefined), undefined
    defined = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True,
                             check=True).stdout.split()
    exported = {s for s in defined if s.startswith("fmu_mb_")}
    assert exported == {f"fmu_mb_{e}" for e in ENTRIES} | {"fmu_mb_release_block"}  # the entries and nothing else
    assert not any(s.startswith("NRT_") for s in defined)              # its runtime stays private


@pytest.mark.skipif(not MINGW, reason="mingw-w64 not installed (apt-get install gcc-mingw-w64-x86-64)")
def test_windows_library_imports_only_system_dlls(libraries):
    dump = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(libraries["win64"])], capture_output=True,
                          text=True, check=True).stdout
    dlls = set(re.findall(r"DLL Name: (\S+)", dump))
    assert dlls <= {"KERNEL32.dll", "msvcrt.dll"}, dlls
    exported = set(re.findall(r"^\s*\[\s*\d+\]\s+(fmu_mb_\w+)", dump, re.M))
    assert exported == {f"fmu_mb_{e}" for e in ENTRIES} | {"fmu_mb_release_block"}


@pytest.mark.parametrize("name", registry.available())
def test_library_kernels_equal_the_jit_kernels_bitwise(clib, name):
    """Statics, steps with a remainder, outputs, energies, points, uniqueness, projection."""
    cm = compile_mechanism(registry.build(name))
    assert_bitwise(name, _run(cm, "jit"), _run(cm, clib))


FULL_DETAIL = [("crane", registry.most_detailed("crane"), "ros2_lowdamp", 1e-3),
               ("manipulator", registry.most_detailed("manipulator"), "ros34pw2", 1.25e-3),
               ("rpsup", registry.most_detailed("rpsup"), "ros2", 1e-3)]


@pytest.mark.parametrize("name, opts, method, h", FULL_DETAIL)
def test_linearly_implicit_methods_at_full_detail_are_bitwise_the_jit(clib, name, opts, method, h):
    mod = registry.load(name)
    cm = compile_mechanism(mod.build(**opts))
    runs = []
    for kernels in ("jit", clib):
        sim = Simulator(cm, h=h, method=method, kernels=kernels)
        sim.initialize(static=mod.FMU.get("static_start", False))
        for _ in range(30):
            sim.step(0.01)
        runs.append((sim.x.copy(), sim.evaluate().copy(), sim.data.fF.copy()))
    assert_bitwise(name, *runs)
    assert np.max(np.abs(runs[0][0] - Simulator(cm).x)) > 1e-6


def test_two_instances_stepping_in_threads_give_the_sequential_bits(clib):
    """ctypes releases the GIL around each call, so the two instances really run at once: the
    runtime's box pool (lock-free, shared) and the kernels must not mix the instances' state."""
    cm = compile_mechanism(registry.load("rpsup").build(base="flexible", coupler="flexible", friction="lugre"))

    def run(out, drive):
        sim = Simulator(cm, h=1e-3, method="ros2_lowdamp", kernels=clib)
        sim.initialize()
        sim.tau_drive[:] = drive
        for _ in range(50):
            sim.step(0.01)
        out.append(sim.x.copy())

    seq = [[], []]
    run(seq[0], 0.0), run(seq[1], 0.2)
    par = [[], []]
    threads = [threading.Thread(target=run, args=(par[i], d)) for i, d in enumerate((0.0, 0.2))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert np.array_equal(seq[0][0], par[0][0]) and np.array_equal(seq[1][0], par[1][0])
    assert not np.array_equal(seq[0][0], seq[1][0])


def test_a_process_on_the_library_never_imports_numba(libraries):
    assert_runs_without_numba("kernels=k", "from fmu_mb.native.clib import CLibraryKernels\n"
                              f"k = CLibraryKernels({str(libraries['linux64'])!r})")


# ---------------------------------------------------------------- without Python: arrays file + C host
HOST_DIR = Path(__file__).resolve().parents[1] / "c_host"
NATIVE_SRC = Path(__file__).resolve().parents[2] / "fmu_mb" / "native"
HOST_CASES = [("three_loop", dict(friction="stribeck"), "rk4", 1e-3, 250),
              ("five_axis", dict(friction="stribeck"), "rk4", 1e-3, 250),
              ("manipulator", dict(base="flexible", link="flexible", friction="lugre"), "ros34pw2", 1.25e-3, 200),
              ("crane", dict(link="flexible", friction="lugre", base="flexible"), "ros2_lowdamp", 1e-3, 250)]


def _host_case(tmp_path, name, opts, method, h, n):
    """(arrays file, step entry and scheme, x after n steps by the Simulator): the state after statics with
    drives of 0.3, written with the model's arrays; then the Simulator steps n times."""
    from fmu_mb.native import arrays, field_schema
    from fmu_mb.simulator import METHODS
    from fmu_mb.sources import this_core_digest
    mod = registry.load(name)
    cm = compile_mechanism(mod.build(**opts))
    sim = Simulator(cm, h=h, method=method)
    sim.initialize(static=mod.FMU.get("static_start", False))
    sim.tau_drive[:] = 0.3
    schema = field_schema()
    records = arrays.schema_records("model", sim.model, schema["model"]) + \
        arrays.schema_records("data", sim.data, schema["data"]) + \
        [("state.x", sim.x), ("state.tau_drive", sim.tau_drive), ("state.t", np.array([sim.t])),
         ("state.h", np.array([h]))]
    path = arrays.write(tmp_path / f"{name}.arrays", records, this_core_digest())
    entry = (f"advance_{'constrained' if sim.model.nc else 'tree'}", int(METHODS[method].scheme))
    sim.step(n * h)
    return path, entry, sim.x.copy()


def test_arrays_file_round_trips_every_field(tmp_path):
    from fmu_mb.native import arrays, field_schema
    cm = compile_mechanism(registry.build("rpsup", coupler="flexible"))
    sim = Simulator(cm)
    schema = field_schema()
    path = arrays.write(tmp_path / "a.arrays", arrays.schema_records("model", sim.model, schema["model"]), "d1g")
    digest, got = arrays.read(path)
    assert digest == "d1g" and len(got) == len(schema["model"])
    for field, _, ndim in schema["model"]:
        want = getattr(sim.model, field)
        if ndim < 0:
            assert got[f"model.{field}"] == want
        else:
            assert got[f"model.{field}"].dtype == want.dtype and np.array_equal(got[f"model.{field}"], want)
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(Exception):
        arrays.read(path)


def test_an_arrays_file_of_several_variants_stores_each_payload_once(tmp_path):
    """write_variants: each variant reads back exactly (records it lacks absent, zero arrays as zeros),
    a payload common to several variants and an all-zero array are stored once/not at all, and two
    variants ordering their records differently are refused."""
    from fmu_mb.native import arrays
    rng = np.random.default_rng(3)
    big, other = rng.standard_normal((40, 50)), rng.standard_normal(7)
    variants = [[("model.a", big), ("model.n", 4), ("data.w", np.zeros((300, 300))), ("fmu.x", other)],
                [("model.a", big.copy()), ("model.n", 5), ("data.w", np.zeros((300, 300))),
                 ("slope.0.model.a", 2 * big)],
                [("model.a", np.arange(6, dtype=np.int64).reshape(2, 3)), ("model.n", 4), ("fmu.x", other)]]
    path = arrays.write_variants(tmp_path / "v.arrays", variants, "dg")
    assert path.stat().st_size < big.nbytes * 2 + other.nbytes + 4000       # big, 2·big once; no zeros
    for k, records in enumerate(variants):
        digest, got = arrays.read(path, k)
        assert digest == "dg" and list(got) == [n for n, _ in records]
        for name, value in records:
            assert np.asarray(got[name]).dtype == np.asarray(value).dtype and np.array_equal(got[name], value)
    with pytest.raises(ValueError, match="variant 3 of 3"):
        arrays.read(path, 3)
    with pytest.raises(ValueError, match="order their records differently"):
        arrays.write_variants(tmp_path / "w.arrays", [[("a", 1), ("b", 2)], [("b", 2), ("a", 1)]], "dg")


def _compile_host(cc, out, extra=()):
    from fmu_mb.fmi.constants import c_header
    (out.parent / "fmu_mb_constants.h").write_text(c_header())
    cmd = [cc, "-O2", "-std=c99", "-o", str(out), str(HOST_DIR / "kernels_host.c"), str(NATIVE_SRC / "arrays.c"),
           "-I", str(NATIVE_SRC), "-I", str(out.parent), *extra]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.parametrize("name, opts, method, h, n", HOST_CASES, ids=[c[0] for c in HOST_CASES])
def test_a_plain_c_program_steps_the_library_bitwise_like_the_simulator(libraries, tmp_path, name, opts, method,
                                                                         h, n):
    """No Python in the process, no environment variable: the C program loads the arrays file
    (native/arrays.c), builds the address blocks and calls the steps entry the Simulator calls."""
    path, entry, want = _host_case(tmp_path, name, opts, method, h, n)
    host = _compile_host(shutil.which("cc") or "gcc", tmp_path / "kernels_host", ["-ldl"])
    run = subprocess.run([str(host), str(libraries["linux64"]), str(path), entry[0], str(entry[1]), str(n),
                          str(tmp_path / "x.bin")],
                         capture_output=True, text=True, env={}, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    got = np.fromfile(tmp_path / "x.bin")
    assert got.shape == want.shape and np.array_equal(got, want), np.abs(got - want).max()


@pytest.mark.skipif(not (MINGW and WINE), reason=MISSING + " to run the Windows library")
@pytest.mark.parametrize("name, opts, method, h, n", HOST_CASES, ids=[c[0] for c in HOST_CASES])
def test_the_windows_library_steps_under_wine_like_the_simulator(libraries, wine_prefix, tmp_path, name, opts,
                                                                   method, h, n):
    """The win64 DLL and the same C program built with mingw-w64, run by wine 8: the kernels' code is
    the same IR emitted for x86_64-w64-windows-gnu, but exp/sin/cos are msvcrt's (wine's), not glibc's.
    Measured: three_loop bitwise, five_axis 2.2e-19 and crane 1.2e-20 relative (last bits of libm);
    the manipulator (LuGre in five joints) is bitwise for 5 steps, then 7.2e-12 after 20 and after 200
    steps (1.8e-11 after 50): a last-bit difference changes the iteration count of one friction ↔
    reaction solve, which stops at its tolerance (1e-10 relative in the friction torques,
    compile_mechanism's fric_tol); it does not grow."""
    path, entry, want = _host_case(tmp_path, name, opts, method, h, n)
    host = _compile_host(MINGW, tmp_path / "kernels_host.exe")
    win = lambda p: "Z:" + str(p).replace("/", "\\")                               # noqa: E731
    run = run_wine(wine_prefix, [host, win(libraries["win64"]), win(path), entry[0], entry[1], n,
                                 win(tmp_path / "x.bin")])
    assert run.returncode == 0, run.stdout + run.stderr
    got = np.fromfile(tmp_path / "x.bin")
    assert got.shape == want.shape
    err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
    print(f"{name}: win64 under wine vs the Simulator: max relative difference {err:.3g}"
          f"{' (bitwise)' if np.array_equal(got, want) else ''}")
    assert err <= (5e-11 if name == "manipulator" else 1e-12)


def _thread_exit_peaks(cc, shared, host, run) -> list:
    """Peak memory (KiB) of tests/c_host/thread_exit.c after a few and after many threads."""
    from fmu_mb.native.library import RUNTIME_C
    for cmd in ([cc, "-O2", "-std=gnu11", "-shared", "-o", shared[0], str(RUNTIME_C), *shared[1:]],
                [cc, "-O2", "-std=gnu11", "-I", str(HOST_DIR), "-o", host, str(HOST_DIR / "thread_exit.c"),
                 *(["-ldl", "-lpthread"] if cc != MINGW else [])]):
        built = subprocess.run(cmd, capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
    peaks = []
    for n in (500, 500, 5000):              # (the first run of a fresh wine prefix commits more: not counted)
        out = run(n)
        assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr
        peaks.append(int(out.stdout.split()[1]))
    return peaks[1:]


def test_a_thread_that_ends_takes_its_box_cache_with_it(tmp_path):
    """A host's thread pool starts and ends threads that call the runtime's box allocator: nothing may grow
    with their number (runtime.c keeps the boxes in one bounded process-wide pool, freed when the library
    unloads; the program unloads it under a running thread three times). Peak resident memory (VmHWM) after
    500 and 5000 threads: within 1 MiB (a per-thread cache that outlived its thread grew by ≈ 470 bytes per
    ended thread: 1868 and 3984 KiB)."""
    lib, host = tmp_path / "runtime.so", tmp_path / "thread_exit"
    peaks = _thread_exit_peaks(shutil.which("cc") or "gcc", [str(lib), "-fPIC", "-lm"], str(host),
                               lambda n: subprocess.run([str(host), str(lib), str(n)], capture_output=True,
                                                        text=True, env={}, timeout=300))
    assert peaks[1] - peaks[0] < 1024, peaks


@pytest.mark.skipif(not (MINGW and WINE), reason=MISSING + " to run the Windows runtime")
def test_a_windows_thread_that_ends_takes_its_box_cache_with_it(tmp_path, wine_prefix):
    """The same on Windows (wine 8): the DLL unloads under a running thread, three times. Peak committed
    memory after 500 and 5000 threads: within 1 MiB (a per-thread cache kept: 3052 and 5160 KiB)."""
    lib, host = tmp_path / "runtime.dll", tmp_path / "thread_exit.exe"
    win = lambda p: "Z:" + str(p).replace("/", "\\")                               # noqa: E731
    peaks = _thread_exit_peaks(MINGW, [str(lib), "-static-libgcc", "-Wl,--export-all-symbols"], str(host),
                               lambda n: run_wine(wine_prefix, [host, win(lib), n]))
    assert peaks[1] - peaks[0] < 1024, peaks


def test_the_library_cache_key_follows_runtime_c(tmp_path, monkeypatch):
    """The compiled library links runtime.c (C, outside the core's Python digest): an edit to it must
    give another cache key and manifest key, so no stale library is reused (fmu_mb.native.library)."""
    from fmu_mb.native import library
    key = library.library_key()
    edited = tmp_path / "runtime.c"
    edited.write_bytes(library.RUNTIME_C.read_bytes() + b"\n/* edited */\n")
    monkeypatch.setattr(library, "RUNTIME_C", edited)
    assert library.library_key() != key
    monkeypatch.undo()
    assert library.library_key() == key


def test_a_second_target_reuses_the_kept_ir_and_links_the_same_library(tmp_path):
    """The kernel IR is numba's output for any target, so library.build keeps it (one complete set per core
    version) and a later build only emits and links: a first run building both linux64 and win64 compiles
    the kernels once. Two entries: the build from the kept IR writes the same object file, byte for byte, as
    the build that compiled them."""
    from fmu_mb.native.library import build
    names, ir, said = ["energies", "world_point"], tmp_path / "ir", []
    first = build(tmp_path / "a", ("linux64",), names=names, ir_dir=ir, log=said.append)
    assert (ir / "group0" / "complete").is_file() and sum("compiled (" in s for s in said) == 2
    said.clear()
    second = build(tmp_path / "b", ("linux64",), names=names, ir_dir=ir, log=said.append)
    assert not any("compiled (" in s for s in said) and any("compiled already" in s for s in said)
    assert (first["linux64"].parent / "fmu_mb_kernels.o").read_bytes() == \
        (second["linux64"].parent / "fmu_mb_kernels.o").read_bytes()


def test_the_build_groups_hold_every_entry_once():
    """The library's entries are compiled in parallel workers along workers.GROUPS: every entry of
    kernels.entries in exactly one group (a new entry missing there would still be built, in the last
    group, but without its expected time); one CPU gives one group of all."""
    from fmu_mb.native.workers import GROUPS, entry_groups
    assert sorted(n for g in GROUPS for n in g) == sorted(ENTRIES)
    assert [sorted(g) for g in entry_groups(sorted(ENTRIES), 1)] == [sorted(ENTRIES)]
    assert len(entry_groups(sorted(ENTRIES), 8)) == len(GROUPS)


def test_a_failing_worker_fails_the_build_with_its_error(tmp_path):
    """A worker that cannot compile its group (here: an entry kernels.entries does not have) stops the build
    with a RuntimeError carrying the worker's own error, and no library is linked."""
    from fmu_mb.native.library import build
    with pytest.raises(RuntimeError, match="(?s)compiling the kernel library failed.*no_such_entry"):
        build(tmp_path, ("linux64",), names=["no_such_entry"])
    assert not (tmp_path / "linux64" / "fmu_mb_kernels.so").exists()


@pytest.mark.parametrize("name", ["crane", "five_axis", "mobile_robot"])
def test_the_demo_gains_take_the_library_mass_matrix_bitwise_the_jit_one(name):
    """demo.mass_matrix (the demo's PD gains) runs the library's crba entry once a build has put the library in
    place, instead of numba compiling crba on a first run (22 s); it is the JIT kernels' M(q) bit for bit."""
    from fmu_mb import algorithms, demo
    from fmu_mb.backend import kernel_set
    from fmu_mb.model import make_data
    from fmu_mb.native import fallback_dir
    from fmu_mb.native.library import ensure
    ensure()
    assert kernel_set("auto", (fallback_dir(),))[0].name == "native"
    cm = compile_mechanism(registry.build(name))
    q = np.asarray(cm.q0, dtype=float)
    M = demo.mass_matrix(cm, q)
    assert M.shape == (cm.model.nv, cm.model.nv) and np.all(np.diag(M) > 0)
    assert np.array_equal(M, algorithms.crba(cm.model, make_data(cm.model), q))


def test_the_library_code_counts_no_references(libraries):
    """Every box the library makes lives as long as its address block, so its code leaves out numba's
    reference counting (library.without_reference_counts): no NRT_incref / NRT_decref left in the object, and
    with them gone the destructor call they led to (NRT_MemInfo_call_dtor: runtime.c's release does it)."""
    obj = libraries["linux64"].parent / "fmu_mb_kernels.o"
    symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    assert "NRT_MemInfo_alloc_dtor" in symbols                        # (the boxes are still built)
    assert not re.search(r"\bNRT_(incref|decref|MemInfo_call_dtor)\b", symbols), symbols


def test_without_reference_counts_drops_the_calls_and_refuses_any_other_use():
    from fmu_mb.native.library import without_reference_counts
    ir = ("define i32 @f(ptr %a, ptr %b) {\n"
          "entry:\n"
          "  tail call void @NRT_incref(ptr nonnull %a), !noalias !0\n"
          "  call void @NRT_decref(ptr %b)\n"
          "  %x = load i32, ptr %a\n"
          "  ret i32 %x\n"
          "}\n"
          "declare void @NRT_incref(ptr)\n")
    out = without_reference_counts(ir)
    assert "call void @NRT_" not in out and "%x = load i32, ptr %a" in out and "declare void @NRT_incref" in out
    with pytest.raises(ValueError, match="other than as a call"):
        without_reference_counts(ir.replace("  %x = load", "  store ptr @NRT_decref, ptr %b\n  %x = load"))


@pytest.mark.parametrize("name, method", [("rpsup", "ros2_lowdamp"), ("five_axis", "rk4")])
def test_a_block_box_keeps_the_header_reference_alone_through_the_run(clib, name, method):
    """The box of each address block holds one reference (the header word's) from its build, through every
    entry call, to its release: the entries borrow it and count nothing (a counting left in on one side
    only, say the increments, would show here as a count that grows with the calls)."""
    import ctypes
    cm = compile_mechanism(registry.load(name).build(**registry.most_detailed(name)))
    sim = Simulator(cm, h=1e-3, method=method, kernels=clib)
    sim.initialize()
    for _ in range(20):
        sim.step(1e-3)
        sim.evaluate()
    for block in (sim._m, sim._d):
        assert block[0] != 0                                          # (built on first use)
        assert ctypes.c_size_t.from_address(int(block[0])).value == 1
