"""The dynamics outputs for computed-torque control (issue 39): ``fmu-mb build --dynamics`` FMUs output the mass
matrix M(q), the bias forces C(q, q̇)q̇ + g(q) and the gravity forces g(q) at the driven coordinates.

Checked through the FMU, at states a run reaches (flexible jib and links bent, the sprung base rocking, friction
on): the native FMU's values against Pinocchio's crba, nonLinearEffects and computeGeneralizedGravity at the full
state the FMU holds (its Model Exchange states), the Python FMU's against the native FMU's, the interface (names,
units, Model Exchange dependencies) against FMPy's validation, and the refusals (closed loops, no driven joint).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from fmpy import read_model_description, simulate_fmu

from fmu_mb import registry
from fmu_mb.build import build
from fmu_mb.errors import UserError
from fmu_mb.fmi.builder import build_fmu
from fmu_mb.fmi.native_fmu import build_native_fmu
from tests.conftest import in_parallel
from fmu_mb.interop.pinocchio import to_pinocchio
from fmu_mb.model.compile import compile_mechanism
from fmu_mb.outputs import driven_coordinates

#: model -> (model options, FMU start values): the most detailed tree options, torque-driven, moving. five_axis'
#: joint axes are parallel to its gravity (g(q) = 0): gravity along y gives its gravity forces something to show.
CASES = {
    "crane": ({"link": "flexible", "friction": "lugre", "base": "flexible", "mode": "torque"},
              {"model.link": 1, "model.friction": 2, "model.base": 0, "model.mode": 1, "column.tau_drive": -400.0}),
    "manipulator": ({"base": "flexible", "link": "flexible", "friction": "lugre", "mode": "torque"},
                    {"model.base": 1, "model.link": 1, "model.friction": 1, "model.mode": 1}),
    "five_axis": ({"friction": "stribeck"},
                  {"model.friction": 2, "gravity[2]": -9.81, "gravity[3]": 0.0, "joint1.tau_drive": 2.0,
                   "joint4.tau_drive": -0.5}),
}
STOP, INTERVAL = 0.3, 0.05


@pytest.fixture(scope="module")
def dynamics_fmus(tmp_path_factory):
    """{(model, kind): FMU path} of the three models' FMUs built with the dynamics outputs."""
    out = tmp_path_factory.mktemp("dynamics_fmus")
    calls = [(model, kind, out) for model in CASES for kind in ("native", "python")]
    return {(m, k): r for (m, k, _), r in zip(calls, in_parallel(_build, calls))}


def _build(model, kind, out):
    if kind == "native":
        return build_native_fmu(model, out / "native", ["linux64"], dynamics=True, log=lambda s: None)
    return build_fmu(model, out, dynamics=True)


def _names(md, prefix):
    return [v.name for v in md.modelVariables if v.name.startswith(prefix)]


def _run(path, start, extra=()):
    md = read_model_description(str(path))
    names = _names(md, "dynamics.") + list(extra)
    return simulate_fmu(str(path), stop_time=STOP, output_interval=INTERVAL, start_values=start, output=names), md


@pytest.mark.parametrize("model", list(CASES))
def test_dynamics_outputs_equal_pinocchio_at_the_states_of_a_run(dynamics_fmus, model):
    """At every output time of a 0.3 s run, M at the driven coordinates, C q̇ + g and g equal Pinocchio's (the
    same tree rebuilt independently by fmu_mb.interop.pinocchio, flexible links as RFEM joints, the sprung base
    as a free joint) at the full state the native FMU holds, each to ≤ 1e-9 relative to its largest entry; and
    the Python FMU's equal the native FMU's to ≤ 1e-12 relative (the same kernels, the same states)."""
    options, start = CASES[model]
    native = dynamics_fmus[model, "native"]
    assert native.problems == [] and dynamics_fmus[model, "python"].problems == []
    md = read_model_description(str(native.path))
    mech = registry.build(model, **options)
    cm = compile_mechanism(mech)
    nv = cm.nv
    res, md = _run(native.path, start, [f"state[{k + 1}]" for k in range(2 * nv)])
    driven = driven_coordinates(cm)
    n = len(driven)
    assert len(_names(md, "dynamics.M[")) == n * n and len(_names(md, "dynamics.tau_bias[")) == n
    pm, _ = to_pinocchio(mech)
    pm.gravity = pin.Motion(np.r_[[start.get(f"gravity[{k + 1}]", g) for k, g in enumerate(mech.gravity)], 0, 0, 0])
    pd = pm.createData()
    moved = 0.0
    for row in res:
        x = np.array([row[f"state[{k + 1}]"] for k in range(2 * nv)])
        q, v = x[:nv], x[nv:]
        moved = max(moved, np.abs(v).max())
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T + np.diag(cm.model.dof_armature)
        want = {"M": M[np.ix_(driven, driven)].ravel(), "tau_bias": pin.nonLinearEffects(pm, pd, q, v)[driven],
                "tau_gravity": pin.computeGeneralizedGravity(pm, pd, q)[driven]}
        for key, ref in want.items():
            got = np.array([row[f"dynamics.{key}[{r + 1},{c + 1}]"] for r in range(n) for c in range(n)] if key == "M"
                           else [row[f"dynamics.{key}[{k + 1}]"] for k in range(n)])
            assert np.abs(ref).max() > 1e-3, (model, key)        # not trivially zero
            assert np.abs(got - ref).max() <= 1e-9 * np.abs(ref).max(), (model, key, row["time"], got, ref)
    assert moved > 0.1                                           # the run moves: the velocity terms are exercised
    py, _ = _run(dynamics_fmus[model, "python"].path, start)
    for name in _names(md, "dynamics."):
        scale = max(1.0, np.abs(res[name]).max())
        assert np.abs(py[name] - res[name]).max() <= 1e-12 * scale, name


def test_dynamics_interface_names_units_and_dependencies(dynamics_fmus):
    """The manipulator's dynamics outputs: M row-major over the driven coordinates in the tau_drive inputs' order,
    units as generalized force per acceleration (N.m.s2/rad for two revolute coordinates), Model Exchange
    dependencies on the states only (no input acts on M, C q̇ + g or g directly)."""
    md = read_model_description(str(dynamics_fmus["manipulator", "native"].path))
    inputs = [v.name for v in md.modelVariables if v.name.endswith("tau_drive")]
    by_name = {v.name: v for v in md.modelVariables}
    n = len(inputs)
    assert _names(md, "dynamics.M[") == [f"dynamics.M[{r},{c}]" for r in range(1, n + 1) for c in range(1, n + 1)]
    first = inputs[0].removesuffix(".tau_drive")
    assert f"joint {first}" in by_name["dynamics.M[1,2]"].description
    assert by_name["dynamics.M[1,1]"].unit == "N.m.s2/rad" and by_name["dynamics.tau_bias[1]"].unit == "N.m"
    states = {v for v in md.modelVariables if v.name.startswith("state[")}
    for out in md.outputs:
        if out.variable.name.startswith("dynamics."):
            assert out.dependencies and set(out.dependencies) <= states, out.variable.name
    plain = build_native_fmu("manipulator", dynamics_fmus["manipulator", "native"].path.parent / "plain", ["linux64"],
                             log=lambda s: None)
    assert not _names(read_model_description(str(plain.path)), "dynamics.")     # optional: off by default


@pytest.mark.parametrize("model, why", [("rpsup", "kinematic constraints"), ("mobile_robot", "nonholonomic"),
                                        ("three_loop", "kinematic constraints")])
def test_dynamics_outputs_are_refused_where_the_tree_is_not_the_mechanism(tmp_path, model, why):
    """Closed loops and nonholonomic constraints make the tree's coordinates dependent: the open tree's M, C q̇ + g
    and g would mislead a controller, and the build says so (fmu-mb build: exit 1 with the reason)."""
    with pytest.raises(UserError, match=f"{model}: no dynamics outputs: .*{why}"):
        build([model], tmp_path, "python", controller=False, dynamics=True, log=lambda s: None)


ARM = '''"""A two-link arm whose option makes the elbow passive."""
from fmu_mb.model import Body, Joint, Mechanism
from fmu_mb.model.options import Choice

OPTIONS = {"elbow": Choice(("driven", "passive"), "driven", "the elbow's drive")}


def build(elbow="driven"):
    m = Mechanism("arm", gravity=(0.0, 0.0, -9.81))
    m.add(Body("upper", 1.0, (0.2, 0, 0), [[1e-3, 0, 0], [0, 1e-2, 0], [0, 0, 1e-2]]),
          Joint("shoulder", "revolute", "ground", "upper", axis=(0, 1, 0), actuated=True))
    m.add(Body("lower", 1.0, (0.2, 0, 0), [[1e-3, 0, 0], [0, 1e-2, 0], [0, 0, 1e-2]]),
          Joint("elbow", "revolute", "upper", "lower", origin=(0.4, 0, 0), axis=(0, 1, 0),
                actuated=elbow == "driven"))
    return m
'''


def test_dynamics_outputs_need_the_same_driven_joints_in_every_option_combination(tmp_path):
    """M's entries are indexed by position among the driven coordinates: a model file whose option takes a joint's
    drive away is refused with the combination named (not built with entries that mean other coordinates)."""
    arm = tmp_path / "arm.py"
    arm.write_text(ARM)
    with pytest.raises(ValueError, match=r"options \(elbow=passive\): the driven joints differ from the defaults' "
                                         r"\(shoulder, elbow\)"):
        build_fmu(str(arm), tmp_path / "out", dynamics=True)
