"""Articulated-body algorithm (Featherstone), split into a τ-independent and a τ-dependent part.

``aba_inertias`` computes articulated inertias and the joint-space projections
U = I^A S, D = Sᵀ U (they depend on q only); ``aba_accelerations`` then solves
for q̈ for a given generalized force τ in O(n) vector passes. The friction ↔
reaction fixed point (kernels.dynamics) calls the second part once per
iteration and the first once per state.

``aba_accelerations`` also returns the joint reaction wrench of every body from
the articulated-body relation f_i = I^A_i a_i + p^A_i (``data.fM``, ``data.fF``):
the same wrench a recursive Newton–Euler pass gives for the resulting q̈.
"""
from __future__ import annotations

from numba import njit

from ..model.compiled import REVOLUTE
from .spatial import add_inertia_to_parent, add_velocity_product, spatial_inertia


@njit(cache=True)
def aba_inertias(model, data):
    """Articulated inertias: data.IA (before the joint projection), data.Ia (after), U, D.

    Needs forward_kinematics (lR, lp)."""
    nb = model.nbody
    for i in range(nb):
        spatial_inertia(model, i, data.IA[i])
    for i in range(nb - 1, -1, -1):
        IA = data.IA[i]
        Ia = data.Ia[i]
        U = data.U[i]
        jt = model.body_jtype[i]
        if jt != 0:
            a = model.body_axis[i]
            off = 0 if jt == REVOLUTE else 3
            for r in range(6):
                U[r] = IA[r, off] * a[0] + IA[r, off + 1] * a[1] + IA[r, off + 2] * a[2]
            D = U[off] * a[0] + U[off + 1] * a[1] + U[off + 2] * a[2]
            data.D[i] = D
            inv = 1.0 / D
            for r in range(6):
                for k in range(6):
                    Ia[r, k] = IA[r, k] - U[r] * U[k] * inv
        else:
            data.D[i] = 1.0
            for r in range(6):
                U[r] = 0.0
                for k in range(6):
                    Ia[r, k] = IA[r, k]
        p = model.body_parent[i]
        if p >= 0:
            add_inertia_to_parent(data.lR[i], data.lp[i], Ia, data.m66, data.r33, data.IA[p])


@njit(cache=True)
def aba_accelerations(model, data, tau, with_external):
    """data.qdd for generalized forces ``tau`` (after aba_inertias), body accelerations
    data.aw/al (ground at −g) and joint reaction wrenches data.fM/fF.

    with_external: include the external wrenches data.extM/extF (supports)."""
    nb = model.nbody
    pA = data.pA
    for i in range(nb):
        for r in range(6):
            pA[i, r] = 0.0
        add_velocity_product(model, i, data.w[i], data.vl[i], pA[i, 0:3], pA[i, 3:6])
        if with_external:
            for r in range(3):
                pA[i, r] -= data.extM[i, r]
                pA[i, 3 + r] -= data.extF[i, r]
    pa = data.t6
    for i in range(nb - 1, -1, -1):
        jt = model.body_jtype[i]
        Ia = data.Ia[i]
        U = data.U[i]
        cw = data.cw[i]
        cl = data.cl[i]
        # pa = pA + Ia c (+ U u / D)
        for r in range(6):
            pa[r] = pA[i, r] + (Ia[r, 0] * cw[0] + Ia[r, 1] * cw[1] + Ia[r, 2] * cw[2]
                                + Ia[r, 3] * cl[0] + Ia[r, 4] * cl[1] + Ia[r, 5] * cl[2])
        if jt != 0:
            a = model.body_axis[i]
            off = 0 if jt == REVOLUTE else 3
            u = tau[model.body_dof[i]] - (a[0] * pA[i, off] + a[1] * pA[i, off + 1] + a[2] * pA[i, off + 2])
            data.u[i] = u
            s = u / data.D[i]
            for r in range(6):
                pa[r] += U[r] * s
        p = model.body_parent[i]
        if p >= 0:
            R = data.lR[i]
            t = data.lp[i]
            f0 = R[0, 0] * pa[3] + R[0, 1] * pa[4] + R[0, 2] * pa[5]
            f1 = R[1, 0] * pa[3] + R[1, 1] * pa[4] + R[1, 2] * pa[5]
            f2 = R[2, 0] * pa[3] + R[2, 1] * pa[4] + R[2, 2] * pa[5]
            pA[p, 0] += R[0, 0] * pa[0] + R[0, 1] * pa[1] + R[0, 2] * pa[2] + t[1] * f2 - t[2] * f1
            pA[p, 1] += R[1, 0] * pa[0] + R[1, 1] * pa[1] + R[1, 2] * pa[2] + t[2] * f0 - t[0] * f2
            pA[p, 2] += R[2, 0] * pa[0] + R[2, 1] * pa[1] + R[2, 2] * pa[2] + t[0] * f1 - t[1] * f0
            pA[p, 3] += f0
            pA[p, 4] += f1
            pA[p, 5] += f2
    g = model.gravity
    for i in range(nb):
        p = model.body_parent[i]
        R = data.lR[i]
        lp = data.lp[i]
        aw = data.aw[i]
        al = data.al[i]
        if p < 0:
            pw0, pw1, pw2 = 0.0, 0.0, 0.0
            pl0, pl1, pl2 = -g[0], -g[1], -g[2]
        else:
            pw0, pw1, pw2 = data.aw[p, 0], data.aw[p, 1], data.aw[p, 2]
            pl0, pl1, pl2 = data.al[p, 0], data.al[p, 1], data.al[p, 2]
        tx = pl0 + pw1 * lp[2] - pw2 * lp[1]
        ty = pl1 + pw2 * lp[0] - pw0 * lp[2]
        tz = pl2 + pw0 * lp[1] - pw1 * lp[0]
        for r in range(3):
            aw[r] = R[0, r] * pw0 + R[1, r] * pw1 + R[2, r] * pw2 + data.cw[i, r]
            al[r] = R[0, r] * tx + R[1, r] * ty + R[2, r] * tz + data.cl[i, r]
        jt = model.body_jtype[i]
        if jt != 0:
            U = data.U[i]
            ua = (U[0] * aw[0] + U[1] * aw[1] + U[2] * aw[2] + U[3] * al[0] + U[4] * al[1] + U[5] * al[2])
            s = (data.u[i] - ua) / data.D[i]
            d = model.body_dof[i]
            data.qdd[d] = s
            a = model.body_axis[i]
            if jt == REVOLUTE:
                for r in range(3):
                    aw[r] += a[r] * s
            else:
                for r in range(3):
                    al[r] += a[r] * s
        # reaction f_i = I^A_i a_i + p^A_i
        IA = data.IA[i]
        for r in range(3):
            data.fM[i, r] = pA[i, r] + (IA[r, 0] * aw[0] + IA[r, 1] * aw[1] + IA[r, 2] * aw[2]
                                        + IA[r, 3] * al[0] + IA[r, 4] * al[1] + IA[r, 5] * al[2])
            data.fF[i, r] = pA[i, 3 + r] + (IA[3 + r, 0] * aw[0] + IA[3 + r, 1] * aw[1] + IA[3 + r, 2] * aw[2]
                                            + IA[3 + r, 3] * al[0] + IA[3 + r, 4] * al[1] + IA[3 + r, 5] * al[2])
