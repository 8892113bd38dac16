"""FMU generator (issue #3): build, validate, run in FMPy and OSP libcosim, closed loop, state, bad input."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import simulate_fmu
from fmpy.validation import validate_fmu
from lxml import etree

from fmu_mb import registry
from fmu_mb.model import compile_mechanism
from fmu_mb.simulator import METHODS, Simulator
from tests.fmu_host import Instance

ROOT = Path(__file__).resolve().parents[1]
MODELS = registry.available()


# ----------------------------------------------------------------------------- validity
@pytest.mark.parametrize("name", MODELS + ["pd_controller", "excitation"])
def test_fmu_is_valid(fmus, name):
    r = fmus[name]
    assert r.problems == [] and validate_fmu(str(r.path)) == []      # FMPy: XSD schema + consistency rules
    with zipfile.ZipFile(r.path) as z:
        names = set(z.namelist())
        root = etree.fromstring(z.read("modelDescription.xml"))
    if name in ("pd_controller", "excitation"):       # the FMU core with a signal block's model: no Python
        assert {f"binaries/linux64/{name}.so", "resources/interface.json"} <= names
        assert not any("pythonfmu" in n or n.endswith(".py") for n in names)
    else:
        assert {f"binaries/linux64/{name}.so", "binaries/linux64/pythonfmu-export.so",
                "resources/fmu_mb/kernels/dynamics.py"} <= names
        assert len([n for n in names if re.fullmatch(rf"resources/fmu_mb_slave_{name}_[0-9a-f]{{12}}\.py", n)]) == 1
        assert not any(n.startswith("resources/fmu_mb/native/lib/") for n in names)  # the kernels: in the binary
    cs = root.find("CoSimulation")
    assert cs.get("needsExecutionTool") == "false"
    assert cs.get("canGetAndSetFMUstate") == cs.get("canSerializeFMUstate") == "true"
    assert root.get("variableNamingConvention") == "structured"
    units = {u.get("name") for u in root.iter("Unit")}
    for sv in root.iter("ScalarVariable"):
        assert sv.get("description")
        t = sv[0]
        if t.tag == "Real":
            assert t.get("unit") in units, sv.get("name")
            if t.get("unit") == "rad":
                assert t.get("displayUnit") == "deg"
        else:
            assert sv.get("variability") in ("fixed", "discrete")
        if sv.get("causality") in ("parameter", "input"):
            assert t.get("start") is not None
        if sv.get("causality") == "output":
            assert t.get("start") is None and sv.get("initial") == "calculated"
    outputs = root.find("ModelStructure/Outputs")
    if name not in ("pd_controller", "excitation"):
        assert all(u.get("dependencies") == "" for u in outputs)    # no direct feedthrough
    assert len(root.find("ModelStructure/InitialUnknowns")) == len(outputs)
    doc = r.doc.read_text()
    assert doc.count("\n| ") == r.n_vars + 1


# ----------------------------------------------------------------------------- FMPy = direct simulator
DRIVE = {"joint1.tau_drive": 2.0, "joint2.tau_drive": -1.0, "joint3.tau_drive": 0.5, "joint4.tau_drive": 1.5,
         "joint5.tau_drive": -0.7}


def direct_run(friction, T, dt, method="rk4"):
    cm = compile_mechanism(registry.build("five_axis", friction=friction))
    sim = Simulator(cm, h=1e-3, method=method)
    sim.set_drive([DRIVE[f"joint{k}.tau_drive"] for k in range(1, 6)])
    rows = []
    for _ in range(int(round(T / dt))):
        sim.step(dt)
        sim.evaluate()
        F3, M1 = sim.reaction("joint3")[0][2], sim.reaction("joint2")[1][0]
        rows.append([sim.q[0], sim.q[4], sim.qd[2], F3, M1, sim.friction("joint4")[1], sim.friction("joint1")[0],
                     sim.point("tip5")[1], sim.energies()["work_in"]])
    return np.array(rows)


FMU_COLUMNS = ["joint1.q", "joint5.q", "joint3.qd", "joint3.F[3]", "joint2.M[1]", "joint4.tau_friction",
               "joint1.friction_load", "tip5.r[2]", "energy.work_in"]


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("friction,code", [("none", 0), ("stribeck", 2)])
def test_fmpy_outputs_equal_the_direct_simulator(fmus, friction, code, method):
    """solver.integrator picks the method (0 = rk4, 1 = ros2, 2 = ros2_lowdamp, 3 = ros34pw2) in the FMU as in the
    Simulator."""
    res = simulate_fmu(str(fmus["five_axis"].path), stop_time=0.5, output_interval=0.01,
                       start_values={**DRIVE, "model.friction": code,
                                     "solver.integrator": list(METHODS).index(method)}, output=FMU_COLUMNS)
    fmu = np.array([[row[c] for c in FMU_COLUMNS] for row in res[1:]])
    ref = direct_run(friction, 0.5, 0.01, method)
    assert fmu.shape == ref.shape
    assert np.max(np.abs(fmu - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))
    assert np.max(np.abs(ref[:, 0])) > 0.01                          # it moved


def test_named_options_are_fmi_enumerations(fmus):
    """Choice options and solver.integrator are FMI 2.0 Enumerations (TypeDefinitions with one
    Item per value, codes 0, 1, ...); FMPy sets them by code and the choice takes effect."""
    from fmpy import read_model_description
    md = read_model_description(str(fmus["five_axis"].path))
    v = {x.name: x for x in md.modelVariables}
    assert v["model.friction"].type == v["solver.integrator"].type == "Enumeration"
    assert [(i.name, int(i.value)) for i in v["model.friction"].declaredType.items] == \
        [("none", 0), ("coulomb_viscous", 1), ("stribeck", 2)]
    assert [i.name for i in v["solver.integrator"].declaredType.items] == list(METHODS) + ["auto"]
    assert v["solver.integrator"].start == str(len(METHODS))        # auto: the model's default where accurate
    assert v["solver.max_steps_per_call"].type == "Integer"       # a count stays an Integer
    runs = {code: simulate_fmu(str(fmus["five_axis"].path), stop_time=0.2, start_values={**DRIVE, "model.friction": code},
                               output=["joint1.tau_friction"]) for code in (0, 2)}
    assert np.all(runs[0]["joint1.tau_friction"] == 0.0) and np.max(np.abs(runs[2]["joint1.tau_friction"])) > 0.1


def test_libcosim_runs_the_same_fmu(tmp_path):
    """OSP libcosim (libcosimpy) co-simulates the FMU from its worker thread; it must give
    the FMPy result. libcosim ignores FMI 2.0 Enumeration variables (libcosim issue #246), so
    the FMU for it is built with integer options (fmu-mb build --integer-options)."""
    from fmu_mb.fmi.builder import build_fmu
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    log_output_level(CosimLogLevel.ERROR)
    path = str(build_fmu("five_axis", tmp_path, enumerations=False).path)
    ex = CosimExecution.from_step_size(step_size=int(1e7))          # 10 ms, in ns
    idx = ex.add_local_slave(CosimLocalSlave(fmu_path=path, instance_name="five_axis"))
    obs = CosimObserver.create_time_series()
    ex.add_observer(obs)
    vr = {(v.name.decode() if isinstance(v.name, bytes) else v.name): v.reference for v in ex.slave_variables(idx)}
    for name, value in DRIVE.items():
        ex.real_initial_value(idx, vr[name], value)
    ex.integer_initial_value(idx, vr["model.friction"], 2)
    for c in FMU_COLUMNS:
        obs.start_time_series(idx, vr[c], CosimVariableType.REAL)
    assert ex.simulate_until(int(0.5e9))
    cosim = np.array([obs.time_series_real_samples(idx, vr[c], 1, 50)[2] for c in FMU_COLUMNS]).T
    ref = direct_run("stribeck", 0.5, 0.01)
    assert cosim.shape == ref.shape
    assert np.max(np.abs(cosim - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))


# ----------------------------------------------------------------------------- closed loop
def pd_gains(omega=30.0, zeta=1.0):
    """Per-joint PD gains from the diagonal joint-space inertia at mid-range (q = 0.3 rad):
    Kp_i = ω² M_ii, Kd_i = 2ζω M_ii, so every joint's decoupled error dynamics has natural
    frequency ω and damping ζ, and Kd_i·h/M_ii = 2ζωh = 0.06 at h = 1 ms keeps the sampled
    loop far from its stability limit (M_ii spans 0.76–6.9 kg·m², the smallest mode 0.2)."""
    from fmu_mb import algorithms as alg
    from fmu_mb.model import make_data
    cm = compile_mechanism(registry.build("five_axis"))
    M = np.diag(alg.crba(cm.model, make_data(cm.model), np.full(5, 0.3)))
    return omega**2 * M, 2 * zeta * omega * M


def closed_loop(plant, ctrl, T, h=1e-3, amplitude=0.3):
    """FMPy master loop: every joint tracks q_ref = A·(1 − cos(π t)); returns max |e(t)|."""
    q_out = [plant.vr[f"joint{i}.q"] for i in range(1, 6)]
    qd_out = [plant.vr[f"joint{i}.qd"] for i in range(1, 6)]
    tau_in = [plant.vr[f"joint{i}.tau_drive"] for i in range(1, 6)]
    c_in = {k: [ctrl.vr[f"{k}[{i}]"] for i in range(1, 6)] for k in ("q_ref", "qd_ref", "q", "qd")}
    tau_out = [ctrl.vr[f"tau[{i}]"] for i in range(1, 6)]
    errs = []
    for k in range(int(round(T / h))):
        t = k * h
        ref = amplitude * (1 - np.cos(np.pi * t))
        ref_d = amplitude * np.pi * np.sin(np.pi * t)
        q, qd = plant.fmu.getReal(q_out), plant.fmu.getReal(qd_out)
        errs.append(np.max(np.abs(np.array(q) - ref)))
        ctrl.fmu.setReal(c_in["q_ref"], [ref] * 5)
        ctrl.fmu.setReal(c_in["qd_ref"], [ref_d] * 5)
        ctrl.fmu.setReal(c_in["q"], q)
        ctrl.fmu.setReal(c_in["qd"], qd)
        plant.fmu.setReal(tau_in, ctrl.fmu.getReal(tau_out))
        plant.fmu.doStep(t, h)
        ctrl.fmu.doStep(t, h)
    return np.array(errs)


def test_closed_loop_with_controller_fmu_in_one_process(fmus):
    """five_axis FMU + PD controller FMU (both pythonfmu-based, one process, distinct slave
    modules), FMPy master loop at 1 ms: every joint tracks q_ref = 0.3·(1 − cos(π t)).

    Bound: decoupled, the error of a joint under PD with natural frequency ω is of order
    q̈_ref/ω² = 0.3π²/900 ≈ 3.3 mrad; the inertial coupling between joints (off-diagonal M,
    not compensated) adds to it. Measured here: 9.6 mrad at most over 3 s; we require ≤ 15 mrad,
    which also rules out any instability of the 1 ms sampled loop."""
    Kp, Kd = pd_gains()
    plant = Instance(fmus["five_axis"].path, "plant").init()
    ctrl = Instance(fmus["pd_controller"].path, "ctrl").init(
        **{f"Kp[{i + 1}]": Kp[i] for i in range(5)}, **{f"Kd[{i + 1}]": Kd[i] for i in range(5)})
    errs = closed_loop(plant, ctrl, 3.0)
    assert errs.max() <= 0.015
    assert not plant.errors() and not ctrl.errors()
    plant.close()
    ctrl.close()


# ----------------------------------------------------------------------------- FMU state
def test_state_get_set_and_serialize_are_bitwise_exact(fmus):
    inst = Instance(fmus["five_axis"].path).init(**{"model.friction": 2})
    inst.set(**DRIVE)
    names = FMU_COLUMNS + ["energy.dissipated", "joint1.M[2]"]
    for k in range(20):
        inst.fmu.doStep(k * 0.01, 0.01)
    state = inst.fmu.getFMUstate()
    blob = inst.fmu.serializeFMUstate(state)
    ref = []
    for k in range(20, 40):
        inst.fmu.doStep(k * 0.01, 0.01)
        ref.append(inst.get(*names))
    for restore in ("set", "deserialize"):
        inst.fmu.setFMUstate(state if restore == "set" else inst.fmu.deSerializeFMUstate(blob))
        again = []
        for k in range(20, 40):
            inst.fmu.doStep(k * 0.01, 0.01)
            again.append(inst.get(*names))
        assert np.array_equal(np.array(again), np.array(ref)), restore
    assert not inst.errors()
    inst.fmu.freeFMUstate(state)
    inst.close()


# ----------------------------------------------------------------------------- bad input
def _fresh(fmus, **params):
    return Instance(fmus["five_axis"].path).init(**params)


BAD_CASES = {}


def case(fn):
    BAD_CASES[fn.__name__] = fn
    return fn


@case
def nan_input(inst):
    inst.fmu.doStep(0.0, 0.01)
    before = inst.get("joint1.q")
    st = inst.call_status(inst.fmu.setReal, [inst.vr["joint1.tau_drive"]], [float("nan")])
    inst.fmu.doStep(0.01, 0.01)
    kept = inst.fmu.getReal([inst.vr["joint1.tau_drive"]])[0] == 0.0
    return st, "refused (not finite)", inst, kept and np.isfinite(inst.get("joint1.q")[0]) and before[0] == 0.0


@case
def inf_input(inst):
    return inst.call_status(inst.fmu.setReal, [inst.vr["joint2.tau_drive"]], [float("inf")]), "not finite", inst, True


@case
def step_before_initialization(fmus):
    inst = Instance(fmus["five_axis"].path)
    return inst.call_status(inst.fmu.doStep, 0.0, 0.01), "fmi2DoStep is not allowed in instantiated", inst, True


@case
def zero_step(inst):
    return inst.call_status(inst.fmu.doStep, 0.0, 0.0), "communicationStepSize must be finite and > 0", inst, True


@case
def negative_step(inst):
    return inst.call_status(inst.fmu.doStep, 0.0, -0.01), "communicationStepSize must be finite and > 0", inst, True


@case
def nan_step(inst):
    return inst.call_status(inst.fmu.doStep, 0.0, float("nan")), "communicationStepSize", inst, True


@case
def huge_step(inst):
    st = inst.call_status(inst.fmu.doStep, 0.0, 1e9)
    return st, "more than solver.max_steps_per_call", inst, inst.call_status(inst.fmu.doStep, 0.0, 0.01) == 0


@case
def non_contiguous_step(inst):
    inst.fmu.doStep(0.0, 0.01)
    return inst.call_status(inst.fmu.doStep, 0.5, 0.01), "differs from the FMU time", inst, True


def _init_with(fmus, **params):
    inst = Instance(fmus["five_axis"].path)
    inst.fmu.setupExperiment(startTime=0.0)
    inst.fmu.enterInitializationMode()
    inst.set(**params)
    return inst, inst.call_status(inst.fmu.exitInitializationMode)


@case
def invalid_step_size_parameter(fmus):
    inst, st = _init_with(fmus, **{"solver.step_size": 2.0})
    return st, "'solver.step_size' must lie in [1e-09, 1] s", inst, True


@case
def invalid_option_code(fmus):
    inst, st = _init_with(fmus, **{"model.friction": 7})
    listed = "0 = none, 1 = coulomb_viscous, 2 = stribeck" in " ".join(inst.errors())
    inst.set(**{"model.friction": 1})            # fixing the parameter lets initialization succeed
    return st, "parameter 'model.friction' must be one of", inst, \
        listed and inst.call_status(inst.fmu.exitInitializationMode) == 0


@case
def parameter_after_initialization(inst):
    st = inst.call_status(inst.fmu.setReal, [inst.vr["gravity[3]"]], [-1.0])
    return st, "is fixed after initialization", inst, True


@case
def set_an_output(inst):
    return inst.call_status(inst.fmu.setReal, [inst.vr["joint1.q"]], [1.0]), "is an output and cannot be set", \
        inst, True


@case
def unknown_value_reference(inst):
    return inst.call_status(inst.fmu.getReal, [99999]), "unknown value reference 99999", inst, True


@case
def wrong_type(inst):
    return inst.call_status(inst.fmu.getInteger, [inst.vr["joint1.q"]]), "is Real, not Integer", inst, True


@case
def corrupt_serialized_state(inst):
    inst.fmu.doStep(0.0, 0.01)
    blob = bytearray(inst.fmu.serializeFMUstate(inst.fmu.getFMUstate()))
    q = inst.get("joint1.q")
    blob[60] ^= 0xFF
    st = inst.call_status(lambda: inst.fmu.setFMUstate(inst.fmu.deSerializeFMUstate(bytes(blob))))
    return st, "checksum mismatch", inst, inst.get("joint1.q") == q and inst.call_status(inst.fmu.doStep, 0.01,
                                                                                          0.01) == 0


@case
def truncated_serialized_state(inst):
    blob = inst.fmu.serializeFMUstate(inst.fmu.getFMUstate())
    st = inst.call_status(lambda: inst.fmu.setFMUstate(inst.fmu.deSerializeFMUstate(blob[:40])))
    return st, "FMU state too short", inst, True


@case
def state_of_another_fmu(fmus):
    ctrl = Instance(fmus["pd_controller"].path).init()
    blob = ctrl.fmu.serializeFMUstate(ctrl.fmu.getFMUstate())
    ctrl.close()
    inst = _fresh(fmus)
    st = inst.call_status(lambda: inst.fmu.setFMUstate(inst.fmu.deSerializeFMUstate(blob)))
    return st, "belongs to a different FMU interface", inst, True


@case
def diverging_state_is_undone(inst):
    inst.set(**{"joint1.tau_drive": 1e300})
    st = inst.call_status(inst.fmu.doStep, 0.0, 0.01)
    inst.set(**{"joint1.tau_drive": 0.0})
    return st, "produced a non-finite state", inst, inst.get("joint1.q")[0] == 0.0 and \
        inst.call_status(inst.fmu.doStep, 0.0, 0.01) == 0


@case
def step_after_terminate(inst):
    inst.fmu.terminate()
    return inst.call_status(inst.fmu.doStep, 0.0, 0.01), "fmi2DoStep is not allowed in terminated", inst, True


@case
def double_initialization(inst):
    st = inst.call_status(inst.fmu.enterInitializationMode)
    return st, "fmi2EnterInitializationMode is not allowed in stepping", inst, True


@pytest.mark.parametrize("name", list(BAD_CASES))
def test_bad_input_gives_error_status_and_message(fmus, name):
    """Each case: the call returns fmi2Error (3), a readable message naming the problem is
    logged, the host is not crashed, and (where stated) the FMU keeps working afterwards."""
    fn = BAD_CASES[name]
    status, message, inst, ok = fn(fmus) if fn.__code__.co_varnames[0] == "fmus" else fn(_fresh(fmus))
    try:
        assert status == 3, f"expected fmi2Error, got {status}"
        assert any(message in m for m in inst.errors()), inst.errors()
        assert ok is True
    finally:
        inst.close()


FRESH_RUN = r"""
import json, os, sys
sys.path.insert(0, sys.argv[2])
from tests.fmu_host import Instance
inst = Instance(sys.argv[1]).init(**{"model.friction": 2})
inst.set(**{"joint1.tau_drive": 1.0, "joint4.tau_drive": -0.5})
rows = []
for k in range(20):
    inst.fmu.doStep(k * 0.003, 0.003)
    rows.append(inst.get("joint1.q", "joint4.qd", "joint3.F[3]", "joint4.tau_friction"))
print(json.dumps({"rows": [[v.hex() for v in r] for r in rows], "log": [m for _, _, m in inst.messages if "kernels:" in m],
                  "numba": "numba" in sys.modules}))
inst.close()
"""


def test_python_fmu_runs_its_compiled_kernels_without_numba(fmus, native_fmus):
    """In a fresh process the Python FMU builds its mechanism in Python and steps it with the kernels
    compiled into its binary, never importing numba (logged at initialization); the native FMU of the same
    model gives the same bits. In a process that already has numba loaded (this one) it does the same."""
    import json
    runs = {}
    for kind, built in (("python", fmus), ("native", native_fmus)):
        env = dict(os.environ, FMU_MB_CACHE=os.environ.get("FMU_MB_TEST_CACHE", str(Path.home() / ".cache" / "fmu_mb")))
        r = subprocess.run([sys.executable, "-c", FRESH_RUN, str(built["five_axis"].path), str(ROOT)],
                           capture_output=True, text=True, env=env, timeout=1800)
        assert r.returncode == 0, r.stderr[-3000:]
        runs[kind] = json.loads(r.stdout.strip().splitlines()[-1])
    assert "kernels: compiled library (rk4), built by the model file's Python for model.friction = stribeck" \
        in runs["python"]["log"][0] and not runs["python"]["numba"]
    assert "kernels: compiled library (rk4), option combination 2: model.friction = stribeck" in runs["native"]["log"][0]
    assert runs["python"]["rows"] == runs["native"]["rows"]
    assert abs(float.fromhex(runs["python"]["rows"][-1][0])) > 1e-4
    inst = _fresh(fmus)
    log = [m for _, _, m in inst.messages if "kernels:" in m][0]
    inst.close()
    assert "kernels: compiled library (rk4), built by the model file's Python" in log


def test_two_instances_in_one_process_are_independent(fmus):
    a = _fresh(fmus)
    b = _fresh(fmus, **{"model.friction": 2})
    a.set(**{"joint1.tau_drive": 1.0})
    b.set(**{"joint1.tau_drive": -1.0})
    for k in range(10):
        a.fmu.doStep(k * 0.01, 0.01)
    qa = a.get("joint1.q")[0]
    for k in range(10):
        b.fmu.doStep(k * 0.01, 0.01)
    assert qa > 0 and b.get("joint1.q")[0] < 0 and a.get("joint1.q")[0] == qa
    a.close()
    b.close()


def test_reset_and_rerun_reproduces_the_run(fmus):
    inst = _fresh(fmus, **{"model.friction": 1})

    def run():
        inst.set(**DRIVE)
        for k in range(20):
            inst.fmu.doStep(k * 0.01, 0.01)
        return inst.get(*FMU_COLUMNS)

    first = run()
    inst.fmu.terminate()
    inst.fmu.reset()
    inst.init(**{"model.friction": 1})
    assert inst.get("joint1.q") == [0.0]
    assert run() == first
    inst.close()


def test_plain_c_host_without_preloading(fmus, tmp_path):
    """A C program dlopens the FMU binary (no libpython preloaded, no PYTHONPATH): the shim
    makes Python available, results equal FMPy's, a NaN input returns fmi2Error (3), and the
    process exits cleanly."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    host = tmp_path / "host"
    subprocess.run([cc, "-O1", "-o", str(host), str(ROOT / "tests" / "c_host" / "host.c"), "-ldl"], check=True)
    fmu_dir = tmp_path / "five_axis"
    with zipfile.ZipFile(fmus["five_axis"].path) as z:
        z.extractall(fmu_dir)
    inst = Instance(fmus["five_axis"].path).init()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["FMU_MB_CACHE"] = os.environ.get("FMU_MB_TEST_CACHE", str(Path.home() / ".cache" / "fmu_mb"))
    r = subprocess.run([str(host), str(fmu_dir), "five_axis", str(inst.vr["joint1.tau_drive"]),
                        str(inst.vr["joint1.q"]), "30", "0.001", inst.md.guid], capture_output=True, text=True, env=env,
                       timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "STATUS ok" in lines and "NAN_STATUS 3" in lines
    values = [float(x.split()[1]) for x in lines if x[:1].isdigit()]
    inst.set(**{"joint1.tau_drive": 1.0})
    for k in range(30):
        inst.fmu.doStep(k * 0.001, 0.001)
        if (k + 1) % 10 == 0:
            assert inst.get("joint1.q")[0] == values[(k + 1) // 10 - 1]
    inst.close()


def test_build_fmus_cli(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "build_fmus.py"), "--model", "five_axis", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "five_axis.fmu" in r.stdout and "valid" in r.stdout and "pd_controller.fmu" in r.stdout
    assert (tmp_path / "five_axis.md").is_file()
    r = subprocess.run([sys.executable, str(ROOT / "build_fmus.py"), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--model" in r.stdout


# ----------------------------------------------------------------------------- constrained models
CONSTRAINED = [m for m in MODELS if m != "five_axis"]
#: inputs each run sets (held over the whole run) so that something moves
CONSTRAINED_INPUTS = {"crane": {"column.tau_drive": -400.0}, "mobile_robot": {"propulsion.force": 2.0},
                      "three_loop": {}}


def _direct_value(sim, src):
    """The direct simulator's value of an FMU output, by the variable's source (slave.py)."""
    kind, *a = src
    d = sim.data
    if kind in ("q", "qd", "tau_required"):
        dof = sim.cm.joint(a[0]).dofadr + a[1]
        return {"q": sim.q, "qd": sim.qd, "tau_required": sim.tau_required}[kind][dof]
    if kind == "F":
        return d.fF[sim.cm.joint(a[0]).body, a[1]]
    if kind == "M":
        return d.fM[sim.cm.joint(a[0]).body, a[1]]
    if kind == "point":
        return sim.point(a[0])[a[1]]
    if kind in ("con_force", "con_moment"):
        if a[0] not in {c.name for c in sim.cm.constraints}:
            return 0.0
        return sim.constraint_reaction(a[0])[0 if kind == "con_force" else 1][a[1]]
    if kind == "con_violation":
        return sim.violation(a[0]) if a[0] in {c.name for c in sim.cm.constraints} else 0.0
    if kind == "unique_con":
        return float(sim.uniqueness().get(a[0], True))
    raise KeyError(kind)


@pytest.mark.parametrize("name", CONSTRAINED)
def test_constrained_fmus_equal_the_direct_simulator(fmus, name):
    """FMPy (simulate_fmu) against Simulator.initialize + step with the FMU's defaults: joint
    coordinates, required torques, constraint forces and violations, uniqueness flags. The
    direct values come from the Python-side Simulator methods (constraint_reaction, violation,
    uniqueness), the FMU's from the output kernel: two implementations of each output."""
    from fmu_mb.fmi.interface import build_interface
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    cm = compile_mechanism(mod.build())
    itf = build_interface(name, mod, cm, meta.get("step_size", 1e-3), meta.get("static_start", False),
                          meta.get("method", "rk4"))
    kinds = ("q", "qd", "tau_required", "F", "M", "point", "con_force", "con_moment", "con_violation", "unique_con")
    cols = [v for v in itf.vars if v.causality == "output" and v.source[0] in kinds][:120]
    inputs = CONSTRAINED_INPUTS.get(name, {})
    T, dt = 0.2, 0.02
    res = simulate_fmu(str(fmus[name].path), stop_time=T, output_interval=dt, start_values=inputs,
                       output=[v.name for v in cols])
    sim = Simulator(cm, h=meta.get("step_size", 1e-3), method=meta.get("method", "rk4"), assemble=False)
    sim.initialize(static=meta.get("static_start", False))
    for k, v in inputs.items():
        var = next(x for x in itf.vars if x.name == k)
        if var.source[0] == "tau_drive":
            sim.tau_drive[sim.cm.joint(var.source[1]).dofadr + var.source[2]] = v
        else:
            sim.body_force[[f.name for f in cm.mechanism.forces].index(var.source[1])] = v
    rows = []
    for k in range(int(round(T / dt))):
        # FMPy's time grid: t_k = k·dt, communication step t_{k+1} − t_k (not dt: it differs in the
        # last bit, and a programmed trajectory g(t) turns a 1-ulp time into 1e-12 of a reaction)
        t0, t1 = k * dt, (k + 1) * dt
        sim.t = t0
        sim.step(t1 - t0)
        sim.t = t1
        sim.evaluate()
        rows.append([_direct_value(sim, v.source) for v in cols])
    ref = np.array(rows)
    fmu = np.array([[row[v.name] for v in cols] for row in res[1:]], dtype=float)
    assert fmu.shape == ref.shape
    scale = np.maximum(1.0, np.abs(ref).max(axis=0))
    worst = np.argmax(np.abs(fmu - ref).max(axis=0) / scale)
    assert np.max(np.abs(fmu - ref) / scale) <= 1e-12, cols[worst].name
    q_cols = [i for i, v in enumerate(cols) if v.source[0] == "q"]
    assert np.abs(ref[-1, q_cols] - ref[0, q_cols]).max() > 1e-4            # it moved


@pytest.mark.parametrize("name", CONSTRAINED)
def test_constrained_fmu_state_round_trip(fmus, name):
    """Save the state mid-run (coordinate partition, relative-constraint offsets and trajectory
    inputs are part of it), change a trajectory input and step on, deserialize: the rerun
    reproduces the outputs bit for bit."""
    inst = Instance(fmus[name].path).init()
    try:
        inst.set(**{k.replace(".", "__"): v for k, v in CONSTRAINED_INPUTS.get(name, {}).items()})
        names = [n for n, v in inst.var.items() if v.causality == "output" and v.type == "Real"
                 and (n.endswith(".q") or ".q[" in n or n.endswith(".violation") or "tau_required" in n)]
        for k in range(5):
            inst.fmu.doStep(k * 0.01, 0.01)
        blob = inst.fmu.serializeFMUstate(inst.fmu.getFMUstate())
        first = []
        for k in range(5, 10):
            inst.fmu.doStep(k * 0.01, 0.01)
            first.append(inst.get(*names))
        traj = [n for n, v in inst.var.items() if v.causality == "input" and not n.endswith((".tau_drive", ".force"))]
        if traj:
            inst.set(**{traj[0].replace(".", "__"): inst.get(traj[0])[0] * 1.01 + 0.001})
            inst.fmu.doStep(0.1, 0.01)
        inst.fmu.setFMUstate(inst.fmu.deSerializeFMUstate(blob))
        again = []
        for k in range(5, 10):
            inst.fmu.doStep(k * 0.01, 0.01)
            again.append(inst.get(*names))
        assert np.array_equal(np.array(first), np.array(again))
        assert not inst.errors()
    finally:
        inst.close()


def test_sweep_instances_set_enumerations_by_item_name(fmus):
    """A study may name an option's item (model.friction = "stribeck"): the sweep's FMU instance
    sets its code; an unknown item is refused naming the items."""
    from fmpy import extract

    from fmu_mb.sweep.worker import _Instance
    inst = _Instance(extract(str(fmus["five_axis"].path)))
    try:
        inst.fmu.setupExperiment(startTime=0.0)
        inst.fmu.enterInitializationMode()
        inst.set("model.friction", "stribeck")
        assert inst.fmu.getInteger([inst.var["model.friction"].valueReference]) == [2]
        with pytest.raises(ValueError, match="not one of none, coulomb_viscous, stribeck"):
            inst.set("model.friction", "dry")
    finally:
        inst.free()
