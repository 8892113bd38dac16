"""fmu_mb.linearization.linearize as a user meets it: reduced coordinates of constrained mechanisms,
the discrete-time model, names and units, the files, python-control, and every refusal."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.linalg

from fmu_mb import registry
from fmu_mb.fmi.interface import build_interface
from fmu_mb.linearization import LinearizationError, drive_inputs, linearize
from fmu_mb.model import compile_mechanism
from fmu_mb.simulator import Simulator


def test_fixed_base_by_constraint_equals_the_welded_tree():
    """The crane with base=rigid holds its free base by six constraint rows (FixedBase); reduced to its
    independent coordinates it must be the tree whose base joint is welded: same A, B, C, D."""
    crane = registry.load("crane")
    options = dict(mode="torque", base="rigid", link="flexible", friction="lugre")
    constrained = linearize("crane", options)
    mech = crane.build(**options)
    mech.constraints = [c for c in mech.constraints if c.name != "base_fixed"]
    base = next(j for j in mech.joints if j.name == "base")
    base.kind, base.q0, base.qd0 = "fixed", None, None
    mech.supports = []
    tree = linearize(mech)
    assert constrained.states == tree.states and "6 independent constraint rows" in constrained.coordinates
    for a, b in ((constrained.A, tree.A), (constrained.B, tree.B), (constrained.C, tree.C)):
        assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b))


@pytest.mark.parametrize("name", ["three_loop", "rpsup", "mobile_robot"])
def test_reduced_model_follows_a_small_motion_on_the_constraints(name):
    """From the static equilibrium (drives at their holding torques), a small perturbation of the
    independent rates (the dependent ones follow the constraints through T): the nonlinear run over
    0.2 s and the reduced linear model agree to ≤ 1e-3 of the motion (the rest is second order in the
    1e-4 perturbation), in every independent coordinate and rate — so the tangent map (positions, rates
    and the rates' dependence on the positions, knife edges included) is right."""
    from fmu_mb.linearization.coordinates import state_coordinates
    from fmu_mb.linearization.jacobians import ComplexStep
    options = dict(mode="torque")
    lm = linearize(name, options)
    cm = compile_mechanism(registry.build(name, **options))
    inputs = np.array([d for _, _, d in drive_inputs(cm)], np.int64)

    def equilibrium():
        sim = Simulator(cm, h=1e-4, method="rk4")
        sim.initialize(q=cm.q0, qd=np.zeros(cm.nv), static=True)
        sim.tau_drive[inputs] = lm.u_op
        return sim

    sim, base = equilibrium(), equilibrium()
    x0 = sim.x.copy()
    sim.evaluate()
    coords = state_coordinates(sim, ComplexStep(sim), x0, 0.0)
    assert coords.names == lm.states
    npos = lm.n_positions
    dxr = np.zeros(len(lm.states))
    dxr[npos:] = 1e-4 * np.linspace(1.0, -1.0, len(lm.states) - npos)       # rates only: positions stay put
    n = 2 * cm.nv + cm.model.nz
    x = x0.copy()
    x[:n] += coords.T @ dxr
    sim.set_state(q=x[:cm.nv], qd=x[cm.nv:2 * cm.nv], anchor=False)
    T = 0.2
    sim.step(T)
    base.step(T)
    nonlinear = (sim.x - base.x)[coords.rows]
    linear = scipy.linalg.expm(lm.A * T) @ dxr
    assert np.max(np.abs(linear - nonlinear)) <= 1e-3 * np.max(np.abs(linear))


def test_discrete_model_is_the_flow_of_the_continuous_one():
    """five_axis with RK4 at 1 ms, sampled at 1 ms: the step map equals exp(A·dt) up to RK4's local error
    (≤ 1e-6 here), and B_d = ∫ exp(A s) ds B — the two kinds of model are one model."""
    lc = linearize("five_axis", at="state", q={"joint2.q": 0.3}, qd={"joint1.q": 0.5})
    ld = linearize("five_axis", at="state", q={"joint2.q": 0.3}, qd={"joint1.q": 0.5}, dt=1e-3)
    n, m = lc.B.shape
    F = scipy.linalg.expm(np.block([[lc.A, lc.B], [np.zeros((m, n + m))]]) * 1e-3)
    assert ld.dt == 1e-3 and lc.dt is None
    assert np.max(np.abs(ld.A - F[:n, :n])) <= 1e-6
    assert np.max(np.abs(ld.B - F[:n, n:])) <= 1e-6 * np.max(np.abs(F[:n, n:])) * 1e3
    assert np.array_equal(ld.C, lc.C)


def test_names_units_and_files(tmp_path):
    lm = linearize("crane", dict(mode="torque"), outputs=["column.q", "E.r[3]", "jib.F[2]"])
    cm = compile_mechanism(registry.build("crane", mode="torque"))
    assert lm.inputs == ["column.tau_drive", "jib.tau_drive", "arm.tau_drive"]
    assert lm.input_units == ["N.m"] * 3 and lm.output_units == ["rad", "m", "N"]
    assert lm.states[:2] == ["base.x", "base.y"] and "column.q_dot" in lm.states
    assert lm.state_units[lm.states.index("column.q_dot")] == "rad/s"
    assert np.max(np.abs(lm.xdot_op)) < 1e-9 * max(1.0, np.max(np.abs(lm.A)))        # an equilibrium
    sys = lm.to_statespace()
    assert sys.ninputs == 3 and sys.noutputs == 3 and sys.input_labels == ["column_tau_drive", "jib_tau_drive", "arm_tau_drive"]
    assert np.array_equal(sys.A, lm.A) and sys.dt == 0
    mat = lm.save(tmp_path / "crane.mat")
    data = scipy.io.loadmat(mat)
    assert np.array_equal(data["A"], lm.A) and data["Ts"].item() == 0.0
    assert [str(s[0][0]) for s in data["InputName"]] == lm.inputs
    npz = np.load(lm.save(tmp_path / "crane.npz"))
    assert list(npz["OutputName"]) == lm.outputs and np.array_equal(npz["D"], lm.D)
    with pytest.raises(ValueError, match=r"\.mat or \.npz"):
        lm.save(tmp_path / "crane.csv")
    assert len(cm.dof_names) == lm.position_map.shape[0]


def test_drive_input_names_are_the_fmus():
    mod = registry.load("five_axis")
    cm = compile_mechanism(mod.build())
    itf = build_interface("five_axis", mod, cm)
    fmu = [itf.vars[i] for i in itf.of("input") if itf.vars[i].source[0] == "tau_drive"]
    assert [(n, u) for n, u, _ in drive_inputs(cm)] == [(v.name, v.unit) for v in fmu]


@pytest.mark.parametrize("kwargs,match", [
    (dict(at="somewhere"), "at must be one of"),
    (dict(at=-1.0), "a time must be ≥ 0"),
    (dict(inputs=["nope.tau_drive"]), "not a drive input"),
    (dict(outputs=["nope"]), "not a Real output"),
    (dict(dt=0.0), "sample time dt must be a number > 0"),
    (dict(drive=[1.0]), "drive needs 5 values"),
    (dict(drive={"joint1.tau_drive": float("nan")}), "finite"),
    (dict(at="state", q=[0.0]), "q needs 5 values"),
    (dict(options={"stiffness": 3}), "has no option 'stiffness'"),
    (dict(options={"friction": "glue"}), "parameter 'friction' must be one of"),
])
def test_refusals_say_why(kwargs, match):
    with pytest.raises(LinearizationError, match=match):
        linearize("five_axis", **kwargs)


def test_option_ranges_are_the_fmus():
    with pytest.raises(LinearizationError, match=r"parameter 'n_div' must be an integer in \[1, 40\]"):
        linearize("crane", {"link": "flexible", "n_div": 0})
    with pytest.raises(LinearizationError, match=r"parameter 'damping' must be a finite number"):
        linearize("crane", {"damping": float("nan")})


def test_no_equilibrium_is_refused_with_the_joint_named():
    """A passive joint under gravity has no static equilibrium with the drives alone."""
    with pytest.raises(LinearizationError, match=r"no static equilibrium with these inputs: .*jib.q \(-7.83 rad/s/s\), arm.q .* accelerate"):
        linearize("crane", dict(mode="torque"), inputs=["column.tau_drive"])


def test_operating_point_at_a_time_of_a_run():
    lm = linearize("five_axis", at=0.2, drive={"joint1.tau_drive": 2.0})
    assert lm.t_op == pytest.approx(0.2) and "t = 0.2 s" in lm.operating_point
    assert lm.x_op[lm.states.index("joint1.q_dot")] > 0.0          # it moved
    assert lm.u_op[lm.inputs.index("joint1.tau_drive")] == 2.0


def test_command_line(tmp_path, capsys, fmus):
    from fmu_mb.cli import main
    out = tmp_path / "crane.mat"
    assert main(["linearize", "crane", "--set", "mode=torque", "link=flexible", "--dt", "0.001", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "36 states, 3 inputs, 6 outputs (discrete time, dt = 0.001 s)" in said and "2.928 Hz" in said
    assert scipy.io.loadmat(out)["Ts"].item() == 0.001
    assert main(["linearize", str(fmus["five_axis"].path), "--at", "0.1", "--drive", "joint1.tau_drive=2"]) == 0
    assert "the state at t = 0.1 s of a run" in capsys.readouterr().out
    for argv, words in ((["crane", "--at", "nowhere"], "--at wants equilibrium"),
                        (["crane", "--set", "mode=sideways"], "parameter 'mode' must be one of 0 = programmed, 1 = torque"),
                        (["crane", "--set", "mode=torque", "--out", str(tmp_path / "a.txt")], ".mat or .npz"),
                        (["crane", "--set", "mode=torque", "--inputs", "column.tau_drive"], "no static equilibrium"),
                        (["five_axis", "--drive", "joint1.tau_drive=fast"], "--drive wants NAME=NUMBER"),
                        (["nothing_here"], "no model named 'nothing_here'")):
        assert main(["linearize", *argv]) == 2
        assert words in capsys.readouterr().err


@pytest.mark.parametrize("name,options,drive", [
    ("five_axis", {"friction": "stribeck"}, {"joint1.tau_drive": 2.0, "joint4.tau_drive": -0.5}),
    ("crane", {"mode": "torque", "link": "flexible"}, {"column.tau_drive": -400.0}),
])
def test_discrete_model_equals_differences_of_the_fmus_step(fmus, name, options, drive):
    """The discrete-time B at the 10 ms step equals central differences of the Python FMU's own doStep
    through fmi2GetFMUstate/SetFMUstate (inputs ± 1e-2·max(1, |u|), outputs q, qd), from the state the
    FMU and the linearization both reach at 0.1 s under the same drive (same kernels, same internal
    steps: the same state bit for bit)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    lm = linearize(name, options, at=0.1, drive=drive, dt=0.01,
                   outputs=[f"{j}.{s}" for j in ("column", "jib", "arm") for s in ("q", "qd")]
                   if name == "crane" else None)
    path = fmus[name].path
    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(path)), modelIdentifier=md.coSimulation.modelIdentifier,
                    instanceName="fd")
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    module = registry.load(name)
    for key, value in options.items():
        fmu.setInteger([vr[f"model.{key}"]], [module.OPTIONS[key].values.index(value)])
    fmu.exitInitializationMode()
    ins = [vr[n] for n in lm.inputs]
    u0 = np.array([drive.get(n, 0.0) for n in lm.inputs])
    fmu.setReal(ins, list(u0))
    for k in range(10):
        fmu.doStep(currentCommunicationPoint=k * 0.01, communicationStepSize=0.01)
    states = [s for s in lm.states if not s.startswith("base.") and ".sde" not in s]
    rows = [lm.states.index(s) for s in states]
    outs = [vr[s.replace("_dot", "d") if s.endswith(".q_dot") else s] for s in states]
    assert np.allclose(np.array(fmu.getReal(outs)), lm.x_op[rows], rtol=0, atol=0)      # the same state
    saved = fmu.getFMUstate()
    Bfd = np.zeros((len(rows), len(ins)))
    for j in range(len(ins)):
        h = 1e-2 * max(1.0, abs(u0[j]))
        ends = []
        for sign in (1.0, -1.0):
            fmu.setFMUstate(saved)
            u = u0.copy()
            u[j] += sign * h
            fmu.setReal(ins, list(u))
            fmu.doStep(currentCommunicationPoint=0.1, communicationStepSize=0.01)
            ends.append(np.array(fmu.getReal(outs)))
        Bfd[:, j] = (ends[0] - ends[1]) / (2 * h)
    fmu.freeFMUstate(saved)
    fmu.terminate()
    fmu.freeInstance()
    B = lm.B[rows]
    assert np.max(np.abs(B - Bfd)) <= 1e-6 * np.max(np.abs(Bfd)), np.max(np.abs(B - Bfd)) / np.max(np.abs(Bfd))


def test_modes_page(tmp_path, capsys):
    """fmu-mb linearize --report: one animated 3D view per mode (the jib bends in its bending modes), the
    pole map and the Bode plots; played in Chromium by tests/test_report.py's helper below."""
    from fmu_mb.cli import main
    page = tmp_path / "crane_modes.html"
    assert main(["linearize", "crane", "--set", "mode=torque", "link=flexible", "--report", str(page)]) == 0
    assert "report:" in capsys.readouterr().out
    text = page.read_text()
    for words in ("Mode 1: 0.3623 Hz", "Mode 2: 2.928 Hz", "ζ = 0.0018", "Poles", "Frequency response",
                  "column.tau_drive \\u2192 column.q", "deflection magnified"):
        assert words in text, words
