"""Rigid-tree dynamics against Pinocchio (crba, nonLinearEffects, aba, rnea with data.f).

Acceptance (issue #2): mass matrix, bias forces, forward dynamics and joint
reaction wrenches agree to ≤ 1e-9 relative on ≥ 20 random trees — mixed
revolute/prismatic (plus spherical/universal), random inertias and placements,
with and without a 6-DOF base on springs; and with drive armature (reflected rotor
inertia) on every joint coordinate, against Pinocchio's ``model.armature``.
"""
import numpy as np
import pinocchio as pin
import pytest

from fmu_mb import algorithms as alg
from fmu_mb.interop.pinocchio import support_fext, to_pinocchio
from fmu_mb.model import compile_mechanism, make_data
from fmu_mb.samples import random_tree

REL = 1e-9

CASES = (
    [(s, None, False, False) for s in range(10)]
    + [(s, None, True, False) for s in range(10, 14)]
    + [(s, "springs", False, False) for s in range(20, 25)]
    + [(s, "springs", True, False) for s in range(25, 27)]
    + [(s, "linearized", False, False) for s in range(30, 34)]
    + [(s, None, True, True) for s in range(40, 43)]
    + [(s, "springs", True, True) for s in range(43, 45)]
)


def with_armature(mech, seed):
    """Random armature (0.01-1 kg·m² or kg) on every coordinate of the arm's joints (not the base)."""
    rng = np.random.default_rng(seed)
    for j in mech.joints:
        if j.name != "base_joint" and j.ndof:
            j.armature = rng.uniform(0.01, 1.0, j.ndof)
    return mech


def rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b))


def linearized_support_force(mech, q, v, dofadr):
    """τ = −Σ Uᵀ S U q_b − Σ Uᵀ D U q̇_b with U of paper 001 (transcribed here)."""
    qb, vb = q[dofadr:dofadr + 6], v[dofadr:dofadr + 6]
    tau = np.zeros_like(q)
    for s in mech.supports:
        x, y, z = s.point
        U = np.array([[1, 0, 0, -y, z, 0], [0, 1, 0, x, 0, -z], [0, 0, 1, 0, -x, y]], float)
        tau[dofadr:dofadr + 6] -= U.T @ (np.asarray(s.stiffness) * (U @ qb) + np.asarray(s.damping) * (U @ vb))
    return tau


@pytest.mark.parametrize("seed,base,spherical,armature", CASES)
def test_tree_matches_pinocchio(seed, base, spherical, armature):
    mech = random_tree(seed, n_links=7, base=base, with_spherical=spherical)
    if armature:
        with_armature(mech, seed)
    cm = compile_mechanism(mech)
    model, data = cm.model, make_data(cm.model)
    pmodel, ids = to_pinocchio(mech)
    pdata = pmodel.createData()
    assert pmodel.nv == model.nv
    assert (np.count_nonzero(pmodel.armature) == np.count_nonzero(model.dof_armature)) and \
        (np.count_nonzero(model.dof_armature) > 0) == armature
    rng = np.random.default_rng(1000 + seed)
    q = rng.uniform(-1.0, 1.0, model.nv)
    if base is not None:
        q[:6] *= 0.02  # small base deflection, as on real supports
    v = rng.normal(0.0, 1.0, model.nv)
    a = rng.normal(0.0, 1.0, model.nv)
    tau = rng.normal(0.0, 5.0, model.nv)
    fext = support_fext(mech, pmodel, pdata, ids, q, v) if base == "springs" else \
        [pin.Force.Zero() for _ in range(pmodel.njoints)]

    # mass matrix
    M_ref = pin.crba(pmodel, pdata, q)
    M_ref = np.triu(M_ref) + np.triu(M_ref, 1).T
    assert rel(alg.crba(model, data, q), M_ref) <= REL

    # bias forces (velocity products, gravity, exact supports)
    b_ref = pin.rnea(pmodel, pdata, q, v, np.zeros(model.nv), fext)
    assert rel(alg.nonlinear_effects(model, data, q, v), b_ref) <= REL

    # forward dynamics
    tau_total = tau.copy()
    if base == "linearized":
        tau_s = linearized_support_force(mech, q, v, cm.joint("base_joint").dofadr)
        alg.rnea(model, data, q, v, a)
        assert rel(data.tau_pas, tau_s) <= REL
        tau_total = tau + tau_s
    qdd_ref = pin.aba(pmodel, pdata, q, v, tau_total, fext)
    assert rel(alg.aba(model, data, q, v, tau_total), qdd_ref) <= REL
    xdot = alg.forward_dynamics(model, data, alg.state_vector(model, q, v), tau)
    assert rel(xdot[model.nv:2 * model.nv], qdd_ref) <= REL

    # inverse dynamics and joint reaction wrenches, every joint, joint frame
    tau_ref = pin.rnea(pmodel, pdata, q, v, a, fext)
    assert rel(alg.rnea(model, data, q, v, a), tau_ref) <= REL
    mine = np.array([np.r_[data.fF[j.body], data.fM[j.body]] for j in cm.joints])
    ref = np.array([pdata.f[ids[j.name]].vector for j in cm.joints])
    assert rel(mine, ref) <= REL


def test_reactions_from_forward_dynamics_match_rnea():
    """The articulated-body reaction f = Iᴬa + pᴬ equals the Newton–Euler wrench of the
    resulting motion (Pinocchio rnea at Pinocchio's own q̈)."""
    mech = random_tree(7, n_links=8, base="springs", with_spherical=True)
    cm = compile_mechanism(mech)
    model, data = cm.model, make_data(cm.model)
    pmodel, ids = to_pinocchio(mech)
    pdata = pmodel.createData()
    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, model.nv)
    q[:6] *= 0.02
    v = rng.normal(0, 1, model.nv)
    tau = rng.normal(0, 5, model.nv)
    fext = support_fext(mech, pmodel, pdata, ids, q, v)
    qdd = pin.aba(pmodel, pdata, q, v, tau, fext)
    pin.rnea(pmodel, pdata, q, v, qdd, fext)
    alg.forward_dynamics(model, data, alg.state_vector(model, q, v), tau)
    mine = np.array([np.r_[data.fF[j.body], data.fM[j.body]] for j in cm.joints])
    ref = np.array([pdata.f[ids[j.name]].vector for j in cm.joints])
    assert rel(mine, ref) <= REL
