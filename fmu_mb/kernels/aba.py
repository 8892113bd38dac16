"""Articulated-body algorithm (Featherstone), split into a τ-independent and a τ-dependent part.

``aba_inertias`` computes articulated inertias and the joint-space projections
U = I^A S, D = Sᵀ U (they depend on q only); ``aba_accelerations`` then solves
for q̈ for a given generalized force τ in O(n) vector passes. The friction ↔
reaction fixed point (kernels.dynamics) calls the second part once per
iteration and the first once per state.

``aba_accelerations`` also returns the joint reaction wrench of every body from
the articulated-body relation f_i = I^A_i a_i + p^A_i (``d.fM``, ``d.fF``):
the same wrench a recursive Newton–Euler pass gives for the resulting q̈.
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType
from .rnea import acceleration_from_parent, acceleration_from_parent_z, plus_joint_motion
from .spatial import (add_force_to_parent, add_inertia_to_parent, add_inertia_to_parent_z, force_to_parent,
                      force_to_parent_z, motion_to_child, spatial_inertia, velocity_product)


@njit(cache=True, error_model="numpy", inline="always")
def _row_times(A, i, r, x0, x1, x2, x3, x4, x5):
    """Row r of the 6×6 A[i] times the spatial vector (x0, …, x5)."""
    return (A[i, r, 0] * x0 + A[i, r, 1] * x1 + A[i, r, 2] * x2
            + A[i, r, 3] * x3 + A[i, r, 4] * x4 + A[i, r, 5] * x5)


@njit(cache=True, error_model="numpy")
def aba_inertias(m, d):
    """Articulated inertias: d.IA (before the joint projection), d.Ia (after), U, D (D = Sᵀ I^A S
    plus the drive's armature, Featherstone's treatment of a rotor on the joint). Both inertias are exactly
    symmetric: their lower triangles are formed and mirrored (spatial.add_inertia_to_parent).

    Needs forward_kinematics (lR, lp)."""
    nb, parent, jtype, ax, axk, dof = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_axis_k, m.body_dof
    mass, com, Ic = m.body_mass, m.body_com, m.body_Ic
    IA, Ia, U, D, lR, lp, rotz = d.IA, d.Ia, d.U, d.D, d.lR, d.lp, m.body_rot_z
    for i in range(nb):
        spatial_inertia(mass, com, Ic, i, IA)
    for i in range(nb - 1, -1, -1):
        jt = jtype[i]
        if jt != JointType.FIXED:
            off = 0 if jt == JointType.REVOLUTE else 3
            # U = I^A S and D = Sᵀ U, then I^a = I^A − U Uᵀ / D, U in scalars (stores into U or Ia would reload it)
            if axk[i] >= 0:                     # S = e_(off + k): U is a column of I^A (the same bits)
                c = off + axk[i]
                u0, u1, u2, u3, u4, u5 = IA[i, 0, c], IA[i, 1, c], IA[i, 2, c], IA[i, 3, c], IA[i, 4, c], IA[i, 5, c]
                ur = (u0, u1, u2, u3, u4, u5)
                Di = ur[c] + m.dof_armature[dof[i]]
            else:
                a0, a1, a2 = ax[i, 0], ax[i, 1], ax[i, 2]
                u0 = IA[i, 0, off] * a0 + IA[i, 0, off + 1] * a1 + IA[i, 0, off + 2] * a2
                u1 = IA[i, 1, off] * a0 + IA[i, 1, off + 1] * a1 + IA[i, 1, off + 2] * a2
                u2 = IA[i, 2, off] * a0 + IA[i, 2, off + 1] * a1 + IA[i, 2, off + 2] * a2
                u3 = IA[i, 3, off] * a0 + IA[i, 3, off + 1] * a1 + IA[i, 3, off + 2] * a2
                u4 = IA[i, 4, off] * a0 + IA[i, 4, off + 1] * a1 + IA[i, 4, off + 2] * a2
                u5 = IA[i, 5, off] * a0 + IA[i, 5, off + 1] * a1 + IA[i, 5, off + 2] * a2
                ur = (u0, u1, u2, u3, u4, u5)
                Di = ur[off] * a0 + ur[off + 1] * a1 + ur[off + 2] * a2 + m.dof_armature[dof[i]]
            U[i, 0], U[i, 1], U[i, 2], U[i, 3], U[i, 4], U[i, 5] = u0, u1, u2, u3, u4, u5
            D[i] = Di
            inv = 1.0 / Di
            for r in range(6):                  # symmetric: the lower triangle, mirrored
                for k in range(r + 1):
                    v = IA[i, r, k] - ur[r] * ur[k] * inv
                    Ia[i, r, k] = v
                    Ia[i, k, r] = v
        else:
            D[i] = 1.0
            for r in range(6):
                U[i, r] = 0.0
                for k in range(6):
                    Ia[i, r, k] = IA[i, r, k]
        p = parent[i]
        if p >= 0:
            if rotz[i] != 0:
                add_inertia_to_parent_z(lR, lp, i, Ia, p, IA)
            else:
                add_inertia_to_parent(lR, lp, i, Ia, p, IA)


@njit(cache=True, error_model="numpy")
def aba_accelerations(m, d, tau, with_external, reactions):
    """d.qdd for generalized forces ``tau`` (after aba_inertias), body accelerations
    d.aw/al (ground at −g) and, with ``reactions``, joint reaction wrenches d.fM/fF.

    with_external: include the external wrenches d.extM/extF (supports)."""
    nb, parent, jtype, ax, axk, dof, g = (m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_axis_k,
                                          m.body_dof, m.gravity)
    mass, com, Ic = m.body_mass, m.body_com, m.body_Ic
    pA, Ia, IA, U, D, u = d.pA, d.Ia, d.IA, d.U, d.D, d.u
    w, vl, cw, cl, aw, al, lR, lp, rotz = d.w, d.vl, d.cw, d.cl, d.aw, d.al, d.lR, d.lp, m.body_rot_z
    extM, extF, fM, fF, qdd = d.extM, d.extF, d.fM, d.fF, d.qdd
    for i in range(nb):
        n0, n1, n2, f0, f1, f2 = velocity_product(mass, com, Ic, i, w[i, 0], w[i, 1], w[i, 2],
                                                  vl[i, 0], vl[i, 1], vl[i, 2])
        pA[i, 0], pA[i, 1], pA[i, 2], pA[i, 3], pA[i, 4], pA[i, 5] = n0, n1, n2, f0, f1, f2
        if with_external:
            for r in range(3):
                pA[i, r] -= extM[i, r]
                pA[i, 3 + r] -= extF[i, r]
    for i in range(nb - 1, -1, -1):
        jt = jtype[i]
        # pa = pA + Ia c (+ U u / D), in scalars (a scratch array is reloaded after every store into pA)
        c0, c1, c2, c3, c4, c5 = cw[i, 0], cw[i, 1], cw[i, 2], cl[i, 0], cl[i, 1], cl[i, 2]
        pa0 = pA[i, 0] + _row_times(Ia, i, 0, c0, c1, c2, c3, c4, c5)
        pa1 = pA[i, 1] + _row_times(Ia, i, 1, c0, c1, c2, c3, c4, c5)
        pa2 = pA[i, 2] + _row_times(Ia, i, 2, c0, c1, c2, c3, c4, c5)
        pa3 = pA[i, 3] + _row_times(Ia, i, 3, c0, c1, c2, c3, c4, c5)
        pa4 = pA[i, 4] + _row_times(Ia, i, 4, c0, c1, c2, c3, c4, c5)
        pa5 = pA[i, 5] + _row_times(Ia, i, 5, c0, c1, c2, c3, c4, c5)
        if jt != JointType.FIXED:
            off = 0 if jt == JointType.REVOLUTE else 3
            if axk[i] >= 0:
                ui = tau[dof[i]] - pA[i, off + axk[i]]
            else:
                ui = tau[dof[i]] - (ax[i, 0] * pA[i, off] + ax[i, 1] * pA[i, off + 1] + ax[i, 2] * pA[i, off + 2])
            u[i] = ui
            s = ui / D[i]
            pa0 += U[i, 0] * s
            pa1 += U[i, 1] * s
            pa2 += U[i, 2] * s
            pa3 += U[i, 3] * s
            pa4 += U[i, 4] * s
            pa5 += U[i, 5] * s
        p = parent[i]
        if p >= 0:
            if rotz[i] != 0:
                n0, n1, n2, f0, f1, f2 = force_to_parent_z(lR, lp, i, pa0, pa1, pa2, pa3, pa4, pa5)
            else:
                n0, n1, n2, f0, f1, f2 = force_to_parent(lR, lp, i, pa0, pa1, pa2, pa3, pa4, pa5)
            pA[p, 0] += n0
            pA[p, 1] += n1
            pA[p, 2] += n2
            pA[p, 3] += f0
            pA[p, 4] += f1
            pA[p, 5] += f2
    for i in range(nb):
        # a_i = X a_parent + c_i (+ S q̈_i), in scalars, stored once (stores into aw/al would reload them)
        if rotz[i] != 0:
            a0, a1, a2, l0, l1, l2 = acceleration_from_parent_z(parent, g, lR, lp, aw, al, i)
        else:
            a0, a1, a2, l0, l1, l2 = acceleration_from_parent(parent, g, lR, lp, aw, al, i)
        b0, b1, b2 = a0 + cw[i, 0], a1 + cw[i, 1], a2 + cw[i, 2]
        b3, b4, b5 = l0 + cl[i, 0], l1 + cl[i, 1], l2 + cl[i, 2]
        jt = jtype[i]
        if jt != JointType.FIXED:
            ua = U[i, 0] * b0 + U[i, 1] * b1 + U[i, 2] * b2 + U[i, 3] * b3 + U[i, 4] * b4 + U[i, 5] * b5
            s = (u[i] - ua) / D[i]
            qdd[dof[i]] = s
            k = axk[i]
            if k >= 0:                                  # S = e_(off + k)
                if jt == JointType.REVOLUTE:
                    if k == 0:
                        b0 += s
                    elif k == 1:
                        b1 += s
                    else:
                        b2 += s
                elif k == 0:
                    b3 += s
                elif k == 1:
                    b4 += s
                else:
                    b5 += s
            elif jt == JointType.REVOLUTE:
                b0 += ax[i, 0] * s
                b1 += ax[i, 1] * s
                b2 += ax[i, 2] * s
            else:
                b3 += ax[i, 0] * s
                b4 += ax[i, 1] * s
                b5 += ax[i, 2] * s
        aw[i, 0], aw[i, 1], aw[i, 2], al[i, 0], al[i, 1], al[i, 2] = b0, b1, b2, b3, b4, b5
        if not reactions:
            continue
        # reaction f_i = I^A_i a_i + p^A_i
        for r in range(3):
            fM[i, r] = pA[i, r] + _row_times(IA, i, r, b0, b1, b2, b3, b4, b5)
            fF[i, r] = pA[i, 3 + r] + _row_times(IA, i, 3 + r, b0, b1, b2, b3, b4, b5)


@njit(cache=True, error_model="numpy", inline="always")
def _joint_force(jt, ax, axk, i, P, j):
    """Sᵀ of the wrench P[j, i] (joint i's axis on its moment or force)."""
    off = 0 if jt == JointType.REVOLUTE else 3
    if axk[i] >= 0:
        return P[j, i, off + axk[i]]
    return ax[i, 0] * P[j, i, off] + ax[i, 1] * P[j, i, off + 1] + ax[i, 2] * P[j, i, off + 2]


@njit(cache=True, error_model="numpy")
def aba_unit_responses(m, d):
    """The friction loop's sensitivities of a tree (kernels.dynamics): for each friction joint j, the motion and the
    friction joints' reactions that a unit friction torque at j alone causes — generalized force −e_j, no velocity,
    gravity or external force: the part of :func:`aba_accelerations` linear in τ, with the same articulated
    inertias (after :func:`aba_inertias`). q̈ into d.fric_dqdd[j], the reaction wrench (moment, force) of friction
    joint k into d.fric_S[k, :, j]; d.inc_f[j] holds the articulated forces, d.inc_a[j] the body accelerations.

    Only joint j and its ancestors carry an articulated force, so the backward pass of lane j walks from j to the
    root; the forward pass covers every body (the motion reaches all of them). The same q̈ and reactions as the
    difference of two full passes (the way the loop formed them before), without that difference's cancellation
    (agreement to round-off: tests/kernels/test_friction.py)."""
    nb, parent, jtype, ax, axk, dof = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_axis_k, m.body_dof
    fdofs, dof_body = m.fric_dofs, m.dof_body
    IA, U, D, lR, lp = d.IA, d.U, d.D, d.lR, d.lp
    P, A, sq, S = d.inc_f, d.inc_a, d.fric_dqdd, d.fric_S
    nf = fdofs.shape[0]
    for j in range(nf):
        for i in range(nb):
            for r in range(6):
                P[j, i, r] = 0.0
        bj = dof_body[fdofs[j]]
        i = bj
        while i >= 0:                                 # backward: joint j and its ancestors
            jt = jtype[i]
            pa0, pa1, pa2, pa3, pa4, pa5 = P[j, i, 0], P[j, i, 1], P[j, i, 2], P[j, i, 3], P[j, i, 4], P[j, i, 5]
            if jt != JointType.FIXED:
                s = ((-1.0 if i == bj else 0.0) - _joint_force(jt, ax, axk, i, P, j)) / D[i]
                pa0, pa1, pa2 = pa0 + U[i, 0] * s, pa1 + U[i, 1] * s, pa2 + U[i, 2] * s
                pa3, pa4, pa5 = pa3 + U[i, 3] * s, pa4 + U[i, 4] * s, pa5 + U[i, 5] * s
            p = parent[i]
            if p >= 0:
                add_force_to_parent(lR, lp, i, P, j, p, pa0, pa1, pa2, pa3, pa4, pa5)
            i = p
        for i in range(nb):                           # forward: every body
            p = parent[i]
            if p < 0:
                a0, a1, a2, l0, l1, l2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            else:
                a0, a1, a2, l0, l1, l2 = motion_to_child(lR, lp, i, A[j, p, 0], A[j, p, 1], A[j, p, 2],
                                                         A[j, p, 3], A[j, p, 4], A[j, p, 5])
            jt = jtype[i]
            if jt != JointType.FIXED:
                ua = U[i, 0] * a0 + U[i, 1] * a1 + U[i, 2] * a2 + U[i, 3] * l0 + U[i, 4] * l1 + U[i, 5] * l2
                s = ((-1.0 if i == bj else 0.0) - _joint_force(jt, ax, axk, i, P, j) - ua) / D[i]
                sq[j, dof[i]] = s
                a0, a1, a2, l0, l1, l2 = plus_joint_motion(jt, ax, i, s, a0, a1, a2, l0, l1, l2)
            A[j, i, 0], A[j, i, 1], A[j, i, 2], A[j, i, 3], A[j, i, 4], A[j, i, 5] = a0, a1, a2, l0, l1, l2
        for k in range(nf):                           # reaction f = I^A a + p^A at each friction joint
            b = dof_body[fdofs[k]]
            a0, a1, a2, l0, l1, l2 = A[j, b, 0], A[j, b, 1], A[j, b, 2], A[j, b, 3], A[j, b, 4], A[j, b, 5]
            for r in range(6):
                S[k, r, j] = P[j, b, r] + _row_times(IA, b, r, a0, a1, a2, l0, l1, l2)
