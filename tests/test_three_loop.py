"""Three-loop closed chain of paper 002 (section 5.2): acceptance of the constraints issue.

* the loops hold to ≤ 1e-9 m over the 10 s run (positions solved every step, not only
  stabilised);
* passive angles, cut-joint forces and the driving torque agree with the paper's own
  subsystem method (eqs. 61-65, tests/oracles/three_loop_subsystems.py: planar, from Table 3,
  no fmu_mb code), and between the GPME and the Lagrange form;
* the virtual power of all forces vanishes (Pinocchio's M and b, our q̈ and λ);
* friction at the active joint changes only the driving torque (paper 002 section 5.2).
"""
import numpy as np
import pinocchio as pin
import pytest
from scipy.linalg import null_space

from fmu_mb import registry
from fmu_mb.interop.pinocchio import to_pinocchio
from fmu_mb.model import compile_mechanism
from fmu_mb.simulator import Simulator
from tests.oracles import three_loop_subsystems as paper

TIMES = (0.0, 2.5, 5.0, 7.5, 10.0)
H = 1e-3           # s: RK4 with projection; the motion is slow (0.1 rad/s) and smooth


def run(formulation="gpme", friction="none"):
    """Samples at TIMES: q, q̇, q̈, λ, cut forces in world axes (on link_a), τ_d, max violation."""
    cm = compile_mechanism(registry.build("three_loop", formulation=formulation, friction=friction))
    sim = Simulator(cm, H)
    out, viol = [], 0.0
    for t in TIMES:
        sim.advance_to(t)
        sim.evaluate()
        forces = []
        for cut, link in (("cut1", "1pp"), ("cut2", "4"), ("cut3", "3")):
            F, _ = sim.constraint_reaction(cut)
            th = sum(sim.q[j] for j in paper.CHAIN[link])
            forces.append(paper._rot(th) @ F[:2])
        j1pp = cm.joint("joint1pp").dofadr
        out.append(dict(q=sim.q.copy(), qd=sim.qd.copy(), qdd=sim.qdd.copy(), lam=sim.lam.copy(),
                        C=sim.data.con_C.copy(), forces=forces, tau=sim.tau_required[j1pp],
                        tau_f=sim.data.tau_fric[j1pp]))
        viol = max(viol, max(sim.violation(c) for c in ("cut1", "cut2", "cut3")))
    return cm, out, viol


@pytest.fixture(scope="module")
def runs():
    return {f: run(f) for f in ("gpme", "lagrange")}


@pytest.mark.parametrize("formulation", ["gpme", "lagrange"])
def test_loops_held_to_1e_9(runs, formulation):
    _, _, viol = runs[formulation]
    assert viol <= 1e-9


@pytest.mark.parametrize("formulation", ["gpme", "lagrange"])
def test_matches_paper_subsystem_method(runs, formulation):
    """Angles to 1e-9 rad (projection tolerance 1e-12 m on 50 mm links); forces and torque to
    1e-8 relative: the oracle's Newton/finite-difference-free linear solves are exact to round-off."""
    _, samples, _ = runs[formulation]
    q = np.zeros(7)
    for t, s in zip(TIMES, samples):
        q, qd, qdd = paper.motion(0.1 * t, 0.1, q)
        l1, l2, l3, tau = paper.subsystems(q, qd, qdd)
        assert np.abs(s["q"] - q).max() <= 1e-9
        assert np.abs(s["qd"] - qd).max() <= 1e-9
        assert np.abs(s["qdd"] - qdd).max() <= 1e-8
        for ours, ref in zip(s["forces"], (l1, l2, l3)):
            assert np.abs(ours - ref).max() <= 1e-8 * np.abs(ref).max()
        assert abs(s["tau"] - tau) <= 1e-8 * abs(tau)


def test_gpme_and_lagrange_agree(runs):
    for a, b in zip(runs["gpme"][1], runs["lagrange"][1]):
        assert np.abs(a["q"] - b["q"]).max() <= 1e-10
        for fa, fb in zip(a["forces"], b["forces"]):
            assert np.abs(fa - fb).max() <= 1e-9 * np.abs(fb).max()
        assert abs(a["tau"] - b["tau"]) <= 1e-9 * abs(b["tau"])


def test_virtual_power_vanishes(runs):
    """With Pinocchio's M and b: M q̈ + b = τ_d + Cᵀλ (every generalized force balanced), and
    on every virtual velocity δq̇ of the loops (null space of the cut rows) the applied,
    gravity and inertia forces do no work: δq̇ᵀ(τ_d e_1'' − b − M q̈) = 0."""
    cm, samples, _ = runs["gpme"]
    pmodel, _ = to_pinocchio(cm.mechanism)
    pdata = pmodel.createData()
    loops = [r for c in cm.constraints if c.type == "CutJoint" for r in c.rows]
    j1pp = cm.joint("joint1pp").dofadr
    for s in samples:
        M = pin.crba(pmodel, pdata, s["q"])
        M = np.triu(M) + np.triu(M, 1).T
        b = pin.nonLinearEffects(pmodel, pdata, s["q"], s["qd"])
        scale = np.abs(M @ s["qdd"]).max() + np.abs(b).max()
        assert np.abs(M @ s["qdd"] + b - s["C"].T @ s["lam"]).max() <= 1e-10 * scale
        Vn = null_space(s["C"][loops])
        assert Vn.shape[1] == 1                       # one degree of freedom
        tau = np.zeros(cm.nv)
        tau[j1pp] = s["tau"]
        assert abs(Vn[:, 0] @ (tau - b - M @ s["qdd"])) <= 1e-10 * scale


def test_friction_changes_only_the_driving_torque():
    _, plain, _ = run("gpme", "none")
    _, fric, _ = run("gpme", "stribeck")
    for a, b in zip(plain, fric):
        assert np.abs(a["q"] - b["q"]).max() <= 1e-12
        assert b["tau_f"] > 0.0                     # opposes the positive rotation of 1''
        assert abs((b["tau"] - a["tau"]) - b["tau_f"]) <= 1e-9 * abs(b["tau"])


def test_loop_closure_start_and_velocities():
    """The tabulated pose closes the loops (ground pivots derived in the model file) and the
    assembled start has the passive rates of eq. (61)."""
    cm = compile_mechanism(registry.build("three_loop"))
    sim = Simulator(cm, H)
    sim.evaluate()
    assert max(sim.violation(c) for c in ("cut1", "cut2", "cut3")) <= 1e-12
    _, qd, _ = paper.motion(0.0, 0.1, np.zeros(7))
    assert np.abs(sim.qd - qd).max() <= 1e-12
    assert sim.rank == 7 and cm.nc == 7
