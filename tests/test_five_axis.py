"""The five-axis tree of paper 002 (models/five_axis.py): inverse dynamics, reactions, friction."""
import csv

import numpy as np
import pinocchio as pin
import pytest

from fmu_mb import algorithms as alg
from fmu_mb import registry
from fmu_mb.interop.pinocchio import to_pinocchio
from fmu_mb.model import compile_mechanism, make_data
from fmu_mb.scenarios import five_axis as scenario

TIMES = np.linspace(0.0, 10.0, 21)


def compiled(friction="none"):
    cm = compile_mechanism(registry.build("five_axis", friction=friction))
    return cm, make_data(cm.model)


def test_table2_parameters():
    mech = registry.build("five_axis")
    assert [j.parent for j in mech.joints] == ["ground", "link1", "link2", "link1", "link4"]
    assert sum(b.mass for b in mech.links) == pytest.approx(11.0)
    assert mech.gravity == (0.0, 0.0, -9.8)


def test_inverse_dynamics_matches_pinocchio_rnea():
    """Driving torques and joint reactions (force and moment, joint frame) of the
    frictionless prescribed motion equal Pinocchio's rnea and data.f to ≤ 1e-9."""
    mech = registry.build("five_axis")
    cm, data = compiled()
    pmodel, ids = to_pinocchio(mech)
    pdata = pmodel.createData()
    for t in TIMES:
        q, v, a = scenario.prescribed_motion(t)
        tau = alg.inverse_dynamics(cm.model, data, q, v, a)
        tau_ref = pin.rnea(pmodel, pdata, q, v, a)
        assert np.max(np.abs(tau - tau_ref)) <= 1e-9 * max(1.0, np.max(np.abs(tau_ref)))
        mine = np.array([np.r_[data.fF[j.body], data.fM[j.body]] for j in cm.joints])
        ref = np.array([pdata.f[ids[j.name]].vector for j in cm.joints])
        assert np.max(np.abs(mine - ref)) <= 1e-9 * np.max(np.abs(ref))


@pytest.mark.parametrize("friction", ["coulomb_viscous", "stribeck"])
def test_friction_torques_are_the_difference_of_driving_torques(friction):
    cm0, d0 = compiled("none")
    cm, d = compiled(friction)
    seen = 0.0
    for t in TIMES:
        q, v, a = scenario.prescribed_motion(t)
        tau0 = alg.inverse_dynamics(cm0.model, d0, q, v, a)
        tau = alg.inverse_dynamics(cm.model, d, q, v, a)
        assert np.allclose(tau - tau0, d.tau_fric, rtol=0, atol=1e-12 * np.max(np.abs(tau)))
        seen = max(seen, np.max(np.abs(d.tau_fric)))
    assert seen > 0.04                     # friction is not trivially zero


@pytest.mark.parametrize("friction", ["coulomb_viscous", "stribeck"])
def test_forward_dynamics_with_friction_reproduces_the_prescribed_motion(friction):
    """Feeding the inverse-dynamics torques (friction included) to the forward pipeline —
    which must solve the friction ↔ reaction loop — gives back q̈ = 0.2 rad/s² and the
    same friction torques."""
    cm, d = compiled(friction)
    for t in TIMES[1:]:
        q, v, a = scenario.prescribed_motion(t)
        tau = alg.inverse_dynamics(cm.model, d, q, v, a)
        tau_f = d.tau_fric.copy()
        xdot = alg.forward_dynamics(cm.model, d, alg.state_vector(cm.model, q, v), tau)
        assert np.max(np.abs(xdot[5:10] - a)) <= 1e-9
        assert np.max(np.abs(d.tau_fric - tau_f)) <= 1e-10
        assert d.fric_fail[0] == 0


def test_scenario_writes_plots_and_data(tmp_path):
    summary = scenario.run(tmp_path, T=1.0, dt=0.1)
    for name in ("fig13_constraint_torques.png", "fig14_constraint_forces.png", "fig15_driving_torques.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    rows = list(csv.reader(open(tmp_path / "five_axis.csv")))
    assert len(rows) == 12 and "stribeck.joint4.tau_drive" in rows[0]
    assert "joint1" in summary


def test_tool_frames_equal_pinocchios_frames():
    """The FMU outputs of the tip points (tool frames): position, orientation of their link, velocity and
    angular velocity, world axes — Pinocchio's frame placement and LOCAL_WORLD_ALIGNED frame velocity of
    frames added at the same points, at a random state."""
    from fmu_mb.simulator import Simulator
    mech = registry.build("five_axis")
    cm = compile_mechanism(mech)
    pmodel, ids = to_pinocchio(mech)
    body_joint = {j.child: ids[j.name] for j in mech.joints}
    frames = {}
    for p in mech.points:
        frames[p.name] = pmodel.addFrame(pin.Frame(p.name, body_joint[p.link], 0,
                                                   pin.SE3(np.eye(3), np.asarray(p.position, float)), pin.OP_FRAME))
    pdata = pmodel.createData()
    rng = np.random.default_rng(8)
    q, v = rng.uniform(-1, 1, cm.nv), rng.normal(0, 1, cm.nv)
    sim = Simulator(cm)
    sim.set_state(q=q, qd=v)
    sim.evaluate()
    pin.forwardKinematics(pmodel, pdata, q, v)
    pin.updateFramePlacements(pmodel, pdata)
    for name, fid in frames.items():
        got = sim.read([(key, name, k) for key, n in (("point", 3), ("point_R", 9), ("point_v", 3), ("point_w", 3))
                        for k in range(n)])
        M = pdata.oMf[fid]
        vel = pin.getFrameVelocity(pmodel, pdata, fid, pin.LOCAL_WORLD_ALIGNED)
        ref = np.r_[M.translation, M.rotation.ravel(), vel.linear, vel.angular]
        assert np.max(np.abs(got - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref))), name
