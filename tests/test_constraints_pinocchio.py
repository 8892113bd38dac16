"""Closed-loop dynamics against an independent assembly from Pinocchio's kinematics.

Random spatial trees (revolute, prismatic, spherical, universal joints) get loop
closures by cut joints between non-adjacent links (spherical: 3 rows, revolute:
3 + 2 rows, some duplicated to make the set redundant). The reference builds the
constrained equations of paper 004 eq. (11) from Pinocchio's M (crba), b (nle),
frame Jacobians and classical frame accelerations (q̈ = 0) — the same constraint
definitions (fmu_mb.model.constraints docstrings), none of our kernels — solves
them with numpy (λ of minimum norm by the pseudo-inverse), and runs Pinocchio's
rnea with the constraint forces as external forces for the joint reactions.

Compared: C, γ, q̈ (both GPME and Lagrange forms), λ, every tree-joint reaction.
"""
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from fmu_mb.interop.pinocchio import to_pinocchio
from fmu_mb.model import compile_mechanism
from fmu_mb.model.constraints import ConstraintSolver, CutJoint
from fmu_mb.samples import random_tree
from fmu_mb.simulator import Simulator

TOL = 1e-9


def _placements(pmodel, ids, mech, q):
    pdata = pmodel.createData()
    pin.forwardKinematics(pmodel, pdata, q)
    child_joint = {j.child: j.name for j in mech.joints}
    return {ln.name: pdata.oMi[ids[child_joint[ln.name]]] for ln in mech.links}


def closed_mechanism(seed: int, n_cuts: int = 2, redundant: bool = False):
    """A random tree with cut joints that close at a random configuration q."""
    mech = random_tree(seed, n_links=7, with_spherical=True)
    mech.gravity = (0.0, 0.0, -9.81)
    pmodel, ids = to_pinocchio(mech)
    rng = np.random.default_rng(500 + seed)
    q = rng.uniform(-1.0, 1.0, pmodel.nv)
    place = _placements(pmodel, ids, mech, q)
    parent_of = {j.child: j.parent for j in mech.joints}
    names = [ln.name for ln in mech.links]
    cuts = []
    while len(cuts) < n_cuts:
        a, b = rng.choice(names, 2, replace=False)
        if parent_of[a] == b or parent_of[b] == a:
            continue
        kind = ("spherical", "revolute")[len(cuts) % 2]
        pa = rng.normal(0, 0.3, 3)
        Ra = Rotation.random(random_state=rng).as_matrix()
        Pa, Pb = place[a], place[b]
        world = Pa.act(pa)
        pb = Pb.actInv(world)
        Rb = Pb.rotation.T @ Pa.rotation @ Ra
        cuts.append(CutJoint(f"cut{len(cuts)}", kind, a, b, origin_a=tuple(pa), origin_b=tuple(pb),
                             rotation_a=Ra, rotation_b=Rb))
    if redundant:           # the first cut twice: 3 dependent rows
        c = cuts[0]
        cuts.append(CutJoint("cut_dup", c.kind, c.link_a, c.link_b, c.origin_a, c.origin_b, c.rotation_a,
                             c.rotation_b))
    mech.constraints = cuts
    return mech, q


def reference(mech, q, v, tau):
    """C, γ, q̈, λ (minimum norm), joint wrenches from Pinocchio + numpy."""
    pmodel, ids = to_pinocchio(mech)
    child_joint = {j.child: j.name for j in mech.joints}
    frames = {}
    for c in mech.constraints:
        for side, link, origin in (("a", c.link_a, c.origin_a), ("b", c.link_b, c.origin_b)):
            jid = ids[child_joint[link]]
            fid = pmodel.addFrame(pin.Frame(f"{c.name}.{side}", jid, pin.SE3(np.eye(3), np.asarray(origin, float)),
                                            pin.FrameType.OP_FRAME))
            frames[(c.name, side)] = (fid, jid)
    pdata = pmodel.createData()
    M = pin.crba(pmodel, pdata, q)
    M = np.triu(M) + np.triu(M, 1).T
    b = pin.nonLinearEffects(pmodel, pdata, q, v)
    pin.forwardKinematics(pmodel, pdata, q, v, np.zeros(pmodel.nv))
    pin.computeJointJacobians(pmodel, pdata, q)
    pin.updateFramePlacements(pmodel, pdata)
    rows, gam, wrench = [], [], []
    LWA = pin.LOCAL_WORLD_ALIGNED
    for c in mech.constraints:
        (fa, ja), (fb, jb) = frames[(c.name, "a")], frames[(c.name, "b")]
        Ja, Jb = pin.getFrameJacobian(pmodel, pdata, fa, LWA), pin.getFrameJacobian(pmodel, pdata, fb, LWA)
        aa = pin.getFrameClassicalAcceleration(pmodel, pdata, fa, LWA)
        ab = pin.getFrameClassicalAcceleration(pmodel, pdata, fb, LWA)
        va, vb = pin.getFrameVelocity(pmodel, pdata, fa, LWA), pin.getFrameVelocity(pmodel, pdata, fb, LWA)
        ra, rb = pdata.oMf[fa].translation, pdata.oMf[fb].translation
        for k in range(3):
            e = np.eye(3)[k]
            rows.append(e @ (Ja[:3] - Jb[:3]))
            gam.append(-e @ (aa.linear - ab.linear))
            wrench.append((ja, jb, np.zeros(3), e, ra, rb))
        if c.kind == "revolute":
            Ra = pdata.oMi[ja].rotation @ np.asarray(c.rotation_a)
            Rb = pdata.oMi[jb].rotation @ np.asarray(c.rotation_b)
            u = Ra[:, 2]
            for vv in (Rb[:, 0], Rb[:, 1]):
                n = np.cross(u, vv)
                wa, wb = va.angular, vb.angular
                rows.append(n @ (Ja[3:] - Jb[3:]))
                ndot = np.cross(np.cross(wa, u), vv) + np.cross(u, np.cross(wb, vv))
                gam.append(-((aa.angular - ab.angular) @ n + (wa - wb) @ ndot))
                wrench.append((ja, jb, n, np.zeros(3), ra, rb))
    C, gam = np.array(rows), np.array(gam)
    K = np.block([[M, -C.T], [C, np.zeros((len(gam), len(gam)))]])
    sol = np.linalg.lstsq(K, np.concatenate([tau - b, gam]), rcond=1e-12)[0]
    qdd = sol[:pmodel.nv]
    lam = np.linalg.pinv(C.T, rcond=1e-10) @ (M @ qdd - tau + b)
    fext = [pin.Force.Zero() for _ in range(pmodel.njoints)]
    for L, (ja, jb, Mw, Fw, ra, rb) in zip(lam, wrench):
        for jid, sgn, r in ((ja, 1.0, ra), (jb, -1.0, rb)):
            P = pdata.oMi[jid]
            F = P.rotation.T @ (sgn * L * Fw)
            Mo = P.rotation.T @ (sgn * L * Mw) + np.cross(P.actInv(r), F)
            fext[jid] += pin.Force(F, Mo)
    pin.rnea(pmodel, pdata, q, v, qdd, fext)
    f = {name: (pdata.f[jid].linear.copy(), pdata.f[jid].angular.copy()) for name, jid in ids.items()}
    return C, gam, qdd, lam, f


CASES = [(s, False) for s in range(8)] + [(s, True) for s in range(8, 12)]


@pytest.mark.parametrize("seed,redundant", CASES)
@pytest.mark.parametrize("formulation", ["gpme", "lagrange"])
def test_closed_loops_match_pinocchio(seed, redundant, formulation):
    mech, q = closed_mechanism(seed, redundant=redundant)
    mech.solver = ConstraintSolver(formulation=formulation)
    cm = compile_mechanism(mech)
    rng = np.random.default_rng(900 + seed)
    v = rng.normal(0.0, 1.0, cm.nv)
    tau = rng.normal(0.0, 5.0, cm.nv)
    C, gam, qdd, lam, f = reference(mech, q, v, tau)
    # consistent velocities: the γ of a rotating-frame row and of ours agree only there
    v = v - np.linalg.pinv(C) @ (C @ v)
    C, gam, qdd, lam, f = reference(mech, q, v, tau)
    sim = Simulator(cm, 1e-3, assemble=False)       # (a random state: the loops need not close)
    sim.set_state(q=q, qd=v)
    sim.tau_drive[:] = tau
    sim.evaluate()
    d = sim.data
    scale = lambda x: max(1.0, np.abs(x).max())
    assert np.abs(d.con_C - C).max() <= TOL * scale(C)
    assert np.abs(d.con_gam - gam).max() <= TOL * scale(gam)
    assert np.abs(sim.qdd - qdd).max() <= TOL * scale(qdd)
    assert np.abs(sim.lam - lam).max() <= 1e-8 * scale(lam)
    assert sim.rank == np.linalg.matrix_rank(C)
    for j in cm.joints:
        F, Mo = sim.reaction(j.name)
        assert np.abs(F - f[j.name][0]).max() <= 1e-8 * scale(f[j.name][0]), j.name
        assert np.abs(Mo - f[j.name][1]).max() <= 1e-8 * scale(f[j.name][1]), j.name
    # the reaction pass reproduces the applied forces: M q̈ + b − Cᵀλ = τ
    assert np.abs(d.tau - tau).max() <= 1e-9 * scale(tau)
