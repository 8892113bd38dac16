"""Recursive Newton–Euler: inverse dynamics and joint reaction wrenches.

After :func:`~fmu_mb.kernels.kinematics.forward_kinematics`, :func:`rnea`
computes body accelerations forward (gravity folded in as a ground
acceleration −g) and body forces backward. ``d.fM[i], d.fF[i]`` is then the
wrench the parent exerts on body i across its joint — the joint reaction
including the driving/friction torque along the axis — expressed in body i's
frame (the joint frame after the motion) about its origin; ``d.tau`` the
generalized forces M q̈ + b(q, q̇) (Pinocchio's ``rnea`` and ``data.f``).
This is the recursive Newton–Euler pass papers 000 (eq. 21) and 001 (eq. 13)
use for the joint forces of their friction models.
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType
from .spatial import (add_force_to_parent, force_to_parent, inertia_times, motion_to_child, motion_to_child_z,
                      velocity_product)


@njit(cache=True, error_model="numpy", inline="always")
def acceleration_from_parent(parent, g, lR, lp, aw, al, i):
    """The parent's acceleration (ground: −g, gravity as a base acceleration) in body i's frame, X_i a_p."""
    p = parent[i]
    if p < 0:
        return motion_to_child(lR, lp, i, 0.0, 0.0, 0.0, -g[0], -g[1], -g[2])
    return motion_to_child(lR, lp, i, aw[p, 0], aw[p, 1], aw[p, 2], al[p, 0], al[p, 1], al[p, 2])


@njit(cache=True, error_model="numpy", inline="always")
def acceleration_from_parent_z(parent, g, lR, lp, aw, al, i):
    """:func:`acceleration_from_parent` where lR[i] is a rotation about z (Model.body_rot_z): the same bits.
    (Kept apart: one function with an about-z flag, the branch inside, made aba_accelerations 15 % slower,
    280 → 325 ns on five_axis, measured.)"""
    p = parent[i]
    if p < 0:
        return motion_to_child_z(lR, lp, i, 0.0, 0.0, 0.0, -g[0], -g[1], -g[2])
    return motion_to_child_z(lR, lp, i, aw[p, 0], aw[p, 1], aw[p, 2], al[p, 0], al[p, 1], al[p, 2])


@njit(cache=True, error_model="numpy", inline="always")
def plus_joint_motion(jt, ax, i, s, a0, a1, a2, l0, l1, l2):
    """(ω, v) + S_i s: joint i's motion subspace times s (revolute: angular along its axis, prismatic: linear;
    a fixed joint adds nothing)."""
    if jt == JointType.REVOLUTE:
        return a0 + ax[i, 0] * s, a1 + ax[i, 1] * s, a2 + ax[i, 2] * s, l0, l1, l2
    if jt == JointType.PRISMATIC:
        return a0, a1, a2, l0 + ax[i, 0] * s, l1 + ax[i, 1] * s, l2 + ax[i, 2] * s
    return a0, a1, a2, l0, l1, l2


@njit(cache=True, error_model="numpy", inline="always")
def body_acceleration(parent, jtype, ax, g, lR, lp, cw, cl, aw, al, i, s):
    """aw[i], al[i] from the parent's acceleration (ground: −g), c_i and the joint acceleration s."""
    a0, a1, a2, l0, l1, l2 = acceleration_from_parent(parent, g, lR, lp, aw, al, i)
    aw[i, 0], aw[i, 1], aw[i, 2], al[i, 0], al[i, 1], al[i, 2] = plus_joint_motion(
        jtype[i], ax, i, s, a0 + cw[i, 0], a1 + cw[i, 1], a2 + cw[i, 2], l0 + cl[i, 0], l1 + cl[i, 1], l2 + cl[i, 2])


@njit(cache=True, error_model="numpy")
def backward_pass(nb, parent, jtype, ax, dof, lR, lp, fM, fF, tau):
    """Leaves to root: each body's wrench (fM, fF: the body's own balance on entry) becomes the
    joint reaction by adding its children's, and tau gets its projection on the joint axis."""
    for i in range(nb - 1, -1, -1):
        jt = jtype[i]
        if jt == JointType.REVOLUTE:
            tau[dof[i]] = ax[i, 0] * fM[i, 0] + ax[i, 1] * fM[i, 1] + ax[i, 2] * fM[i, 2]
        elif jt == JointType.PRISMATIC:
            tau[dof[i]] = ax[i, 0] * fF[i, 0] + ax[i, 1] * fF[i, 1] + ax[i, 2] * fF[i, 2]
        p = parent[i]
        if p >= 0:
            n0, n1, n2, f0, f1, f2 = force_to_parent(lR, lp, i, fM[i, 0], fM[i, 1], fM[i, 2],
                                                     fF[i, 0], fF[i, 1], fF[i, 2])
            fM[p, 0] += n0
            fM[p, 1] += n1
            fM[p, 2] += n2
            fF[p, 0] += f0
            fF[p, 1] += f1
            fF[p, 2] += f2


@njit(cache=True, error_model="numpy")
def add_armature(armature, qdd, tau):
    """tau += armature·q̈ per coordinate: the drives' reflected rotor inertia (M's diagonal, kernels.crba).
    It turns with the coordinate and loads no body, so the joint reactions do not see it."""
    for k in range(tau.shape[0]):
        tau[k] += armature[k] * qdd[k]


@njit(cache=True, error_model="numpy")
def rnea(m, d, qdd, with_external):
    """Inverse dynamics after forward_kinematics: d.tau = M(q) q̈ + b(q, q̇)
    (b: velocity products, gravity, minus the external support wrenches d.extM/extF
    if ``with_external``), with joint reaction wrenches in d.fM/fF."""
    nb, parent, jtype, ax, dof, g = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_dof, m.gravity
    mass, com, Ic = m.body_mass, m.body_com, m.body_Ic
    lR, lp, cw, cl, aw, al, w, vl = d.lR, d.lp, d.cw, d.cl, d.aw, d.al, d.w, d.vl
    fM, fF, extM, extF, tau = d.fM, d.fF, d.extM, d.extF, d.tau
    for i in range(nb):
        k = dof[i]
        body_acceleration(parent, jtype, ax, g, lR, lp, cw, cl, aw, al, i, qdd[k] if k >= 0 else 0.0)
        n0, n1, n2, f0, f1, f2 = inertia_times(mass, com, Ic, i, aw[i, 0], aw[i, 1], aw[i, 2],
                                               al[i, 0], al[i, 1], al[i, 2])
        g0, g1, g2, h0, h1, h2 = velocity_product(mass, com, Ic, i, w[i, 0], w[i, 1], w[i, 2],
                                                  vl[i, 0], vl[i, 1], vl[i, 2])
        fM[i, 0], fM[i, 1], fM[i, 2] = n0 + g0, n1 + g1, n2 + g2
        fF[i, 0], fF[i, 1], fF[i, 2] = f0 + h0, f1 + h1, f2 + h2
        if with_external:
            for r in range(3):
                fM[i, r] -= extM[i, r]
                fF[i, r] -= extF[i, r]
    backward_pass(nb, parent, jtype, ax, dof, lR, lp, fM, fF, tau)
    add_armature(m.dof_armature, qdd, tau)


@njit(cache=True, error_model="numpy")
def bias_forces(m, d, with_velocity, out):
    """out = b(q, q̇) = C(q, q̇) q̇ + g(q) (``with_velocity``) or g(q) alone, after forward_kinematics: inverse
    dynamics at q̈ = 0 of the open tree (Pinocchio's nonLinearEffects and computeGeneralizedGravity; the
    computed-torque law τ = M q̈_d + b). Springs, dampers, supports, body forces, friction and the constraints are
    not in it (they are the applied forces Q of papers 000/001, not part of M q̈ − h); the armature multiplies q̈
    and drops out. Works on its own arrays (d.dyn_*): the evaluation's reactions and accelerations stay."""
    nb, parent, jtype, ax, dof, g = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_dof, m.gravity
    mass, com, Ic = m.body_mass, m.body_com, m.body_Ic
    lR, lp, cw, cl, w, vl = d.lR, d.lp, d.cw, d.cl, d.w, d.vl
    aw, al, fM, fF = d.dyn_aw, d.dyn_al, d.dyn_fM, d.dyn_fF
    for i in range(nb):
        a0, a1, a2, l0, l1, l2 = acceleration_from_parent(parent, g, lR, lp, aw, al, i)   # (gravity folded in)
        if with_velocity:
            a0, a1, a2 = a0 + cw[i, 0], a1 + cw[i, 1], a2 + cw[i, 2]
            l0, l1, l2 = l0 + cl[i, 0], l1 + cl[i, 1], l2 + cl[i, 2]
        aw[i, 0], aw[i, 1], aw[i, 2], al[i, 0], al[i, 1], al[i, 2] = a0, a1, a2, l0, l1, l2
        n0, n1, n2, f0, f1, f2 = inertia_times(mass, com, Ic, i, a0, a1, a2, l0, l1, l2)
        if with_velocity:
            g0, g1, g2, h0, h1, h2 = velocity_product(mass, com, Ic, i, w[i, 0], w[i, 1], w[i, 2],
                                                      vl[i, 0], vl[i, 1], vl[i, 2])
            n0, n1, n2, f0, f1, f2 = n0 + g0, n1 + g1, n2 + g2, f0 + h0, f1 + h1, f2 + h2
        fM[i, 0], fM[i, 1], fM[i, 2] = n0, n1, n2
        fF[i, 0], fF[i, 1], fF[i, 2] = f0, f1, f2
    for k in range(out.shape[0]):
        out[k] = 0.0
    backward_pass(nb, parent, jtype, ax, dof, lR, lp, fM, fF, out)


@njit(cache=True, error_model="numpy")
def rnea_constrained(m, d, qdd, full):
    """Recursive Newton–Euler pass with the constraint wrenches d.cextM/cextF applied
    (kernels.constraints.constraint_wrenches): joint reactions of a constrained
    mechanism, loop-closure and programmed forces included (DESIGN §4).

    full=True: the complete pass — gravity, velocity products, support wrenches;
    d.tau = M q̈ + b − J_supᵀf_sup − Cᵀλ, which equals the applied generalized forces.
    full=False: only the part linear in (q̈, λ) — the increments of the reactions for an
    increment of q̈ and λ (kernels.uniqueness; the friction loop runs its increments in lanes,
    :func:`reaction_increments`, the same bits)."""
    nb, parent, jtype, ax, dof, g = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_dof, m.gravity
    mass, com, Ic = m.body_mass, m.body_com, m.body_Ic
    lR, lp, cw, cl, aw, al, w, vl = d.lR, d.lp, d.cw, d.cl, d.aw, d.al, d.w, d.vl
    fM, fF, extM, extF, cM, cF, tau = d.fM, d.fF, d.extM, d.extF, d.cextM, d.cextF, d.tau
    for i in range(nb):
        k = dof[i]
        s = qdd[k] if k >= 0 else 0.0
        if full:
            body_acceleration(parent, jtype, ax, g, lR, lp, cw, cl, aw, al, i, s)
        else:
            p = parent[i]
            if p < 0:
                a0, a1, a2, l0, l1, l2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            else:
                a0, a1, a2, l0, l1, l2 = motion_to_child(lR, lp, i, aw[p, 0], aw[p, 1], aw[p, 2],
                                                         al[p, 0], al[p, 1], al[p, 2])
            aw[i, 0], aw[i, 1], aw[i, 2], al[i, 0], al[i, 1], al[i, 2] = plus_joint_motion(jtype[i], ax, i, s, a0, a1,
                                                                                        a2, l0, l1, l2)
        n0, n1, n2, f0, f1, f2 = inertia_times(mass, com, Ic, i, aw[i, 0], aw[i, 1], aw[i, 2],
                                               al[i, 0], al[i, 1], al[i, 2])
        if full:
            g0, g1, g2, h0, h1, h2 = velocity_product(mass, com, Ic, i, w[i, 0], w[i, 1], w[i, 2],
                                                      vl[i, 0], vl[i, 1], vl[i, 2])
            n0, n1, n2, f0, f1, f2 = n0 + g0 - extM[i, 0], n1 + g1 - extM[i, 1], n2 + g2 - extM[i, 2], \
                f0 + h0 - extF[i, 0], f1 + h1 - extF[i, 1], f2 + h2 - extF[i, 2]
        fM[i, 0], fM[i, 1], fM[i, 2] = n0 - cM[i, 0], n1 - cM[i, 1], n2 - cM[i, 2]
        fF[i, 0], fF[i, 1], fF[i, 2] = f0 - cF[i, 0], f1 - cF[i, 1], f2 - cF[i, 2]
    backward_pass(nb, parent, jtype, ax, dof, lR, lp, fM, fF, tau)
    add_armature(m.dof_armature, qdd, tau)


@njit(cache=True, error_model="numpy")
def reaction_increments(m, d, DQ, CM, CF, nl):
    """:func:`rnea_constrained` with full=False for nl increments at once (the friction loop's: one per
    friction joint): lane j's q̈ increment DQ[j], constraint wrenches CM[j], CF[j] (nbody × 3); the joint
    reaction increments into d.inc_f[j] (moment, force), complete at the bodies from the lowest friction
    joint's body on (the ones the loop reads; tau is not formed). Each lane takes rnea_constrained's operations
    in its order, so the same bits; the lanes are independent chains of sums the processor overlaps, which
    one pass after the other are not."""
    nb, parent, jtype, ax, dof = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_dof
    mass, com, Ic, fdofs, dof_body = m.body_mass, m.body_com, m.body_Ic, m.fric_dofs, m.dof_body
    lR, lp, A, W = d.lR, d.lp, d.inc_a, d.inc_f
    for i in range(nb):
        p, k, jt = parent[i], dof[i], jtype[i]
        for j in range(nl):
            s = DQ[j, k] if k >= 0 else 0.0
            if p < 0:
                a0, a1, a2, l0, l1, l2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            else:
                a0, a1, a2, l0, l1, l2 = motion_to_child(lR, lp, i, A[j, p, 0], A[j, p, 1], A[j, p, 2],
                                                         A[j, p, 3], A[j, p, 4], A[j, p, 5])
            a0, a1, a2, l0, l1, l2 = plus_joint_motion(jt, ax, i, s, a0, a1, a2, l0, l1, l2)
            A[j, i, 0], A[j, i, 1], A[j, i, 2], A[j, i, 3], A[j, i, 4], A[j, i, 5] = a0, a1, a2, l0, l1, l2
            n0, n1, n2, f0, f1, f2 = inertia_times(mass, com, Ic, i, a0, a1, a2, l0, l1, l2)
            W[j, i, 0], W[j, i, 1], W[j, i, 2] = n0 - CM[j, i, 0], n1 - CM[j, i, 1], n2 - CM[j, i, 2]
            W[j, i, 3], W[j, i, 4], W[j, i, 5] = f0 - CF[j, i, 0], f1 - CF[j, i, 1], f2 - CF[j, i, 2]
    low = nb
    for t in range(fdofs.shape[0]):
        low = min(low, dof_body[fdofs[t]])
    for i in range(nb - 1, low, -1):              # (backward_pass's order; body `low` needs no parent)
        p = parent[i]
        if p < 0:
            continue
        for j in range(nl):
            add_force_to_parent(lR, lp, i, W, j, p, W[j, i, 0], W[j, i, 1], W[j, i, 2], W[j, i, 3], W[j, i, 4],
                                W[j, i, 5])
