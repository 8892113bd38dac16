"""Native kernels (fmu_mb.native: the kernel library as the pythonfmu FMUs carry it) and kernel
backends (fmu_mb.backend).

The native library is the kernels' own code compiled ahead of time: the same numba IR lowered
by the same LLVM without fast-math (so no reassociation or FMA contraction) and calling the same
libm, only for the generic x86-64 CPU. Results must therefore be bitwise those of the JIT
kernels; any difference means the two backends do not run the same code (a stale library, a
decoding error in the address blocks, a wrong argument passed through ctypes), which is what
these tests are for. The runs through the backend happen in a subprocess that must never
import numba (what an FMU's fast start promises).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fmu_mb import native, registry
from fmu_mb.backend import JitKernels, kernel_set
from fmu_mb.native.clib import address_block
from fmu_mb.model.compile import compile_mechanism, reference_placements
from fmu_mb.model.compiled import make_data
from fmu_mb.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
MODELS = registry.available()


@pytest.fixture(scope="module")
def native_dir():
    from fmu_mb.native.library import ensure
    return ensure()[0]


def test_reference_placements_equal_the_kinematics_kernel_at_zero():
    """compile_mechanism anchors supports with reference_placements (numpy, so that compiling
    a mechanism needs no numba); it must give forward_kinematics' placements bit for bit."""
    from fmu_mb.kernels.handles import data_struct, model_struct
    from fmu_mb.kernels.kinematics import forward_kinematics
    for name in MODELS:
        cm = compile_mechanism(registry.build(name))
        d = make_data(cm.model)
        z = np.zeros(cm.model.nv)
        forward_kinematics(model_struct(cm.model), data_struct(d), z, z)
        oR, op = reference_placements(cm.model)
        assert np.array_equal(oR, d.oR) and np.array_equal(op, d.op), name


def _run(cm, kernels):
    """Statics, steps with a remainder, and every Simulator call that reaches a kernel."""
    s = Simulator(cm, h=1e-3, kernels=kernels)
    s.initialize(static=True)
    s.tau_drive[:] = 0.3
    for _ in range(15):
        s.step(1e-3)
    s.step(0.00137)                                  # rk4_steps + rk4_step (remainder)
    xdot = s.evaluate().copy()
    out = [s.x.copy(), xdot, s.data.fF.copy(), s.data.fM.copy(), s.data.tau_fric.copy(), s.data.lam.copy(),
           np.array(list(s.energies().values())), s.support_forces()]
    out += [s.point(p) for p in cm.points]
    if cm.constraints:
        out.append(np.array(list(s.uniqueness().values()), float))
        s.assemble(velocities_only=True)             # project
        out.append(s.x.copy())
    return out


NATIVE_RUNS = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from fmu_mb import registry
from fmu_mb.backend import kernel_set
from fmu_mb.model.compile import compile_mechanism
from tests.native.test_native import _run
k = kernel_set("native", (sys.argv[2],))[0]
out = {}
for name in registry.available():
    for i, a in enumerate(_run(compile_mechanism(registry.build(name)), k)):
        out[f"{name}/{i}"] = a
np.savez(sys.argv[3], **out)
print("numba" in sys.modules)
"""


@pytest.fixture(scope="module")
def native_results(native_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("native") / "runs.npz"
    r = subprocess.run([sys.executable, "-c", NATIVE_RUNS, str(ROOT), str(native_dir), str(path)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split()[-1] == "False"                       # numba never imported
    with np.load(path) as z:
        return dict(z)


@pytest.mark.parametrize("name", MODELS)
def assert_bitwise(name, expected, got) -> None:
    """Every result array of two :func:`_run` runs (or any two lists) equal bit for bit."""
    for k, (a, b) in enumerate(zip(expected, got)):
        assert np.array_equal(a, b), f"{name}: result {k} differs by {np.max(np.abs(a - b)):.3e}"


def assert_runs_without_numba(simulator_args: str, setup: str = "") -> None:
    """In a fresh process: ``setup``, then every mechanism compiled, statically started, stepped and
    evaluated by a Simulator(cm, <simulator_args>); numba must never be imported."""
    code = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
{setup}
from fmu_mb import registry
from fmu_mb.model.compile import compile_mechanism
from fmu_mb.simulator import Simulator
for name in registry.available():
    s = Simulator(compile_mechanism(registry.build(name)), {simulator_args})
    s.initialize(static=True)
    s.step(0.01)
    s.evaluate()
print("numba" in sys.modules)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "False"


@pytest.mark.parametrize("name", MODELS)
def test_native_kernels_equal_the_jit_kernels_bitwise(native_results, name):
    cm = compile_mechanism(registry.build(name))
    jit = _run(cm, "jit")
    nat = [native_results[f"{name}/{i}"] for i in range(len(jit))]
    assert f"{name}/{len(jit)}" not in native_results
    assert_bitwise(name, jit, nat)
    assert np.max(np.abs(jit[0] - Simulator(cm).x)) > 1e-6          # the runs moved


def test_an_fmu_process_with_native_kernels_never_imports_numba(native_dir):
    """The point of the native kernels: the slave module, model compilation, statics, steps
    and outputs run without numba in the process."""
    assert_runs_without_numba(f'kernels="native", kernel_dirs=({str(native_dir)!r},)', "import fmu_mb.fmi.slave")


def test_native_kernels_are_refused_for_another_core(native_dir, tmp_path):
    stale = tmp_path / "stale"
    shutil.copytree(native_dir, stale)
    man = json.loads((stale / native.MANIFEST).read_text())
    man["core_digest"] = "0" * 64
    (stale / native.MANIFEST).write_text(json.dumps(man))
    assert native.check(native_dir)[0] is not None
    assert native.check(stale)[0] is None and "another fmu_mb core" in native.check(stale)[1]
    assert native.check(tmp_path / "missing")[1].startswith("no native kernels")
    man["core_digest"], man["target"] = native.check(native_dir)[0]["core_digest"], "win64"
    (stale / native.MANIFEST).write_text(json.dumps(man))
    assert native.check(stale)[0] is None and "are for win64, not this platform" in native.check(stale)[1]
    (stale / native.MANIFEST).write_text("{")
    assert "unreadable" in native.check(stale)[1]
    with pytest.raises(ValueError, match="backend must be one of"):
        kernel_set("fast")


def test_library_entries_check_an_array_on_its_first_use(native_dir):
    """The ctypes callers pass raw pointers: an array of the wrong dtype, rank or memory order is a
    TypeError before any C code runs (checked on first use, then cached per array object)."""
    k = native.load(native_dir)[0]
    cm = compile_mechanism(registry.build("five_axis"))
    mh, dh = k.handles(cm.model, make_data(cm.model))
    nv = cm.model.nv
    q = np.full(nv, 0.1)
    k.forward_kinematics(mh, dh, q, q)
    for bad in (q.astype(np.float32), q.reshape(nv, 1), np.repeat(q, 2)[::2], list(q), np.arange(nv)):
        with pytest.raises(TypeError, match="C-contiguous float64 array with 1 dimension"):
            k.forward_kinematics(mh, dh, bad, q)
    k.forward_kinematics(mh, dh, q, q)                       # still fine after the refusals
    with pytest.raises(TypeError, match="int64"):
        k.forward_kinematics(mh.astype(np.float64), dh, q, q)


def test_an_unloadable_library_falls_back_to_the_jit_with_the_reason(native_dir, tmp_path, monkeypatch):
    broken = tmp_path / "broken"
    shutil.copytree(native_dir, broken)
    man = native.check(broken)[0]
    (broken / man["library"]).write_bytes(b"not a shared library")
    k, why = native.load(broken)
    assert k is None and "cannot load" in why
    monkeypatch.setattr(native, "LIB_DIR", tmp_path / "none")
    k, why = kernel_set("auto", (broken,))
    assert isinstance(k, JitKernels) and "no native kernels in" in why and "cannot load" in why


def test_native_unavailable_is_an_error_when_asked_for(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "LIB_DIR", tmp_path / "none")
    k, why = kernel_set("auto", (tmp_path / "other",))
    assert isinstance(k, JitKernels) and "no native kernels in" in why
    with pytest.raises(RuntimeError, match="native kernels unavailable"):
        kernel_set("native", ())


def test_address_blocks_refuse_arrays_of_the_wrong_type(native_dir):
    schema = native.check(native_dir)[0]["schema"]["model"]
    cm = compile_mechanism(registry.build("five_axis"))
    assert address_block(cm.model, schema).size > len(schema)
    m = cm.model._replace(body_mass=cm.model.body_mass.astype(np.float32))
    with pytest.raises(TypeError, match="body_mass must be a C-contiguous float64"):
        address_block(m, schema)
    m = cm.model._replace(body_com=np.asfortranarray(np.ones((cm.model.nbody, 3))))
    with pytest.raises(TypeError, match="body_com"):
        address_block(m, schema)


def test_gather_checks_the_output_table_once():
    """Simulator.gather is the one public path that hands caller arrays to the (unchecked)
    native kernels: a wrong dtype, shape or index is a ValueError, not a memory error."""
    cm = compile_mechanism(registry.build("five_axis"))
    s = Simulator(cm)
    s.set_state(q=0.1 * np.arange(1, cm.model.nv + 1))
    n = 2
    good = dict(xdot=np.zeros(cm.model.nx), vr=np.array([0, 1]), kind=np.zeros(n, np.int64),
                a=np.array([0, 1]), b=np.zeros(n, np.int64), f=np.zeros((n, 3)), vals=np.zeros(2))
    s.gather(**good)
    assert np.array_equal(good["vals"], [0.1, 0.2])          # code Q: q[a]
    for key, bad in (("vr", np.array([0.0, 1.0])), ("vr", np.array([0, 2])), ("f", np.zeros((n, 2))),
                     ("xdot", np.zeros(3)), ("kind", np.zeros(3, np.int64))):
        with pytest.raises(ValueError, match="output table"):
            s.gather(**{**good, key: bad})
