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
from .rnea import body_acceleration
from .spatial import add_inertia_to_parent, force_to_parent, spatial_inertia, velocity_product


@njit(cache=True, error_model="numpy")
def aba_inertias(m, d):
    """Articulated inertias: d.IA (before the joint projection), d.Ia (after), U, D (D = Sᵀ I^A S
    plus the drive's armature, Featherstone's treatment of a rotor on the joint).

    Needs forward_kinematics (lR, lp)."""
    nb, parent, jtype, ax, dof = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_dof
    mass, com, Ic = m.body_mass, m.body_com, m.body_Ic
    IA, Ia, U, D, lR, lp, S, Y = d.IA, d.Ia, d.U, d.D, d.lR, d.lp, d.m66, d.r33
    for i in range(nb):
        spatial_inertia(mass, com, Ic, i, IA)
    for i in range(nb - 1, -1, -1):
        jt = jtype[i]
        if jt != JointType.FIXED:
            off = 0 if jt == JointType.REVOLUTE else 3
            for r in range(6):
                U[i, r] = IA[i, r, off] * ax[i, 0] + IA[i, r, off + 1] * ax[i, 1] + IA[i, r, off + 2] * ax[i, 2]
            Di = U[i, off] * ax[i, 0] + U[i, off + 1] * ax[i, 1] + U[i, off + 2] * ax[i, 2] + m.dof_armature[dof[i]]
            D[i] = Di
            inv = 1.0 / Di
            for r in range(6):
                for k in range(6):
                    Ia[i, r, k] = IA[i, r, k] - U[i, r] * U[i, k] * inv
        else:
            D[i] = 1.0
            for r in range(6):
                U[i, r] = 0.0
                for k in range(6):
                    Ia[i, r, k] = IA[i, r, k]
        p = parent[i]
        if p >= 0:
            add_inertia_to_parent(lR, lp, i, Ia, p, IA, S, Y)


@njit(cache=True, error_model="numpy")
def aba_accelerations(m, d, tau, with_external):
    """d.qdd for generalized forces ``tau`` (after aba_inertias), body accelerations
    d.aw/al (ground at −g) and joint reaction wrenches d.fM/fF.

    with_external: include the external wrenches d.extM/extF (supports)."""
    nb, parent, jtype, ax, dof, g = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_dof, m.gravity
    mass, com, Ic = m.body_mass, m.body_com, m.body_Ic
    pA, Ia, IA, U, D, u, pa = d.pA, d.Ia, d.IA, d.U, d.D, d.u, d.t6
    w, vl, cw, cl, aw, al, lR, lp = d.w, d.vl, d.cw, d.cl, d.aw, d.al, d.lR, d.lp
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
        # pa = pA + Ia c (+ U u / D)
        for r in range(6):
            pa[r] = pA[i, r] + (Ia[i, r, 0] * cw[i, 0] + Ia[i, r, 1] * cw[i, 1] + Ia[i, r, 2] * cw[i, 2]
                                + Ia[i, r, 3] * cl[i, 0] + Ia[i, r, 4] * cl[i, 1] + Ia[i, r, 5] * cl[i, 2])
        if jt != JointType.FIXED:
            off = 0 if jt == JointType.REVOLUTE else 3
            ui = tau[dof[i]] - (ax[i, 0] * pA[i, off] + ax[i, 1] * pA[i, off + 1] + ax[i, 2] * pA[i, off + 2])
            u[i] = ui
            s = ui / D[i]
            for r in range(6):
                pa[r] += U[i, r] * s
        p = parent[i]
        if p >= 0:
            n0, n1, n2, f0, f1, f2 = force_to_parent(lR, lp, i, pa[0], pa[1], pa[2], pa[3], pa[4], pa[5])
            pA[p, 0] += n0
            pA[p, 1] += n1
            pA[p, 2] += n2
            pA[p, 3] += f0
            pA[p, 4] += f1
            pA[p, 5] += f2
    for i in range(nb):
        body_acceleration(parent, jtype, ax, g, lR, lp, cw, cl, aw, al, i, 0.0)
        jt = jtype[i]
        if jt != JointType.FIXED:
            ua = (U[i, 0] * aw[i, 0] + U[i, 1] * aw[i, 1] + U[i, 2] * aw[i, 2]
                  + U[i, 3] * al[i, 0] + U[i, 4] * al[i, 1] + U[i, 5] * al[i, 2])
            s = (u[i] - ua) / D[i]
            qdd[dof[i]] = s
            if jt == JointType.REVOLUTE:
                for r in range(3):
                    aw[i, r] += ax[i, r] * s
            else:
                for r in range(3):
                    al[i, r] += ax[i, r] * s
        # reaction f_i = I^A_i a_i + p^A_i
        for r in range(3):
            fM[i, r] = pA[i, r] + (IA[i, r, 0] * aw[i, 0] + IA[i, r, 1] * aw[i, 1] + IA[i, r, 2] * aw[i, 2]
                                   + IA[i, r, 3] * al[i, 0] + IA[i, r, 4] * al[i, 1] + IA[i, r, 5] * al[i, 2])
            fF[i, r] = pA[i, 3 + r] + (IA[i, 3 + r, 0] * aw[i, 0] + IA[i, 3 + r, 1] * aw[i, 1]
                                       + IA[i, 3 + r, 2] * aw[i, 2] + IA[i, 3 + r, 3] * al[i, 0]
                                       + IA[i, 3 + r, 4] * al[i, 1] + IA[i, 3 + r, 5] * al[i, 2])
