"""The native kernel library (fmu_mb.native.library): every kernel entry point in one C library
that needs no Python, numpy or numba at run time (issue 13's kernel library).

numba compiles each entry as a C-typed function; its LLVM IR, without numba's Python wrapper,
is emitted by llvmlite as one object per target and linked with a C shim and a two-function
runtime (native/runtime.c). The code below the entries is the kernels' own, lowered without
fast-math and calling the same libm, so results must be bitwise those of the JIT kernels (as
for the pycc module, tests/test_native.py); the library is loaded in-process through ctypes
(fmu_mb.native.clib), next to numba's JIT, which its hidden runtime symbols allow.

The Windows library is cross-linked with mingw-w64 when it is installed (Debian package
gcc-mingw-w64-x86-64): then its imports are checked; running it needs Windows or wine (not
shown here).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.kernels.entries import ENTRIES
from fmu_mb.model.compile import compile_mechanism
from fmu_mb.simulator import Simulator
from tests.test_native import _run, assert_bitwise, assert_runs_without_numba

MINGW = shutil.which("x86_64-w64-mingw32-gcc")


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    from fmu_mb.native.library import build
    if not MINGW:
        print("\nWARNING: x86_64-w64-mingw32-gcc not found: the win64 kernel library is not linked "
              "(apt-get install gcc-mingw-w64-x86-64 to enable it)", file=sys.stderr)
    return build(tmp_path_factory.mktemp("kernel_library"), ("linux64", "win64") if MINGW else ("linux64",))


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
    assert exported == {f"fmu_mb_{e}" for e in ENTRIES}                # the entries and nothing else
    assert not any(s.startswith("NRT_") for s in defined)              # its runtime stays private


@pytest.mark.skipif(not MINGW, reason="mingw-w64 not installed (apt-get install gcc-mingw-w64-x86-64)")
def test_windows_library_imports_only_system_dlls(libraries):
    dump = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(libraries["win64"])], capture_output=True,
                          text=True, check=True).stdout
    dlls = set(re.findall(r"DLL Name: (\S+)", dump))
    assert dlls <= {"KERNEL32.dll", "msvcrt.dll"}, dlls
    exported = set(re.findall(r"^\s*\[\s*\d+\]\s+(fmu_mb_\w+)", dump, re.M))
    assert exported == {f"fmu_mb_{e}" for e in ENTRIES}


@pytest.mark.parametrize("name", registry.available())
def test_library_kernels_equal_the_jit_kernels_bitwise(clib, name):
    """Statics, steps with a remainder, outputs, energies, points, uniqueness, projection."""
    cm = compile_mechanism(registry.build(name))
    assert_bitwise(name, _run(cm, "jit"), _run(cm, clib))


FULL_DETAIL = [("crane", dict(link="flexible", friction="lugre", base="flexible"), "ros2_lowdamp", 1e-3),
               ("manipulator", dict(base="flexible", link="flexible", friction="lugre"), "ros34pw2", 1.25e-3),
               ("rpsup", dict(base="flexible", coupler="flexible", friction="lugre"), "ros2", 1e-3)]


@pytest.mark.parametrize("name, opts, method, h", FULL_DETAIL)
def test_linearly_implicit_methods_at_full_detail_are_bitwise_the_jit(clib, name, opts, method, h):
    mod = registry.load(name)
    cm = compile_mechanism(mod.build(**opts))
    runs = []
    for kernels in ("jit", clib):
        sim = Simulator(cm, step_size=h, method=method, kernels=kernels)
        sim.initialize(static=mod.FMU.get("static_start", False))
        for _ in range(30):
            sim.step(0.01)
        runs.append((sim.x.copy(), sim.evaluate().copy(), sim.data.fF.copy()))
    assert_bitwise(name, *runs)
    assert np.max(np.abs(runs[0][0] - Simulator(cm).x)) > 1e-6


def test_two_instances_stepping_in_threads_give_the_sequential_bits(clib):
    """ctypes releases the GIL around each call, so the two instances really run at once: the
    runtime's per-thread box cache and the kernels must share no state."""
    cm = compile_mechanism(registry.load("rpsup").build(base="flexible", coupler="flexible", friction="lugre"))

    def run(out, drive):
        sim = Simulator(cm, step_size=1e-3, method="ros2_lowdamp", kernels=clib)
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
