"""Composite-rigid-body algorithm: the joint-space mass matrix M(q).

M equals the papers' trace form m_ij = Σ_l tr(T_i^(l) H^(l) T_j^(l)ᵀ)
(paper 000 eq. (26), paper 001 eq. (20)), computed recursively in O(n·depth)
instead of O(n⁴); the slow trace form is kept as a test oracle
(tests/oracles/trace_dynamics.py).
"""
from __future__ import annotations

from numba import njit

from ..model.compiled import REVOLUTE


@njit(cache=True)
def crba(model, data):
    """data.M = M(q) after forward_kinematics (uses lR, lp)."""
    nb = model.nbody
    M = data.M
    for r in range(model.nv):
        for c in range(model.nv):
            M[r, c] = 0.0
    # composite inertia (mass, first moment m·c, inertia about the origin) in body frame
    for i in range(nb):
        m = model.body_mass[i]
        c = model.body_com[i]
        Ic = model.body_Ic[i]
        cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
        data.cm[i] = m
        for r in range(3):
            data.ch[i, r] = m * c[r]
            for k in range(3):
                data.cJ[i, r, k] = Ic[r, k] - m * c[r] * c[k]
            data.cJ[i, r, r] += m * cc
    for i in range(nb - 1, -1, -1):
        p = model.body_parent[i]
        if p < 0:
            continue
        R = data.lR[i]
        t = data.lp[i]
        m = data.cm[i]
        h = data.ch[i]
        J = data.cJ[i]
        # h' = R h (first moment about the child origin, parent axes)
        hx = R[0, 0] * h[0] + R[0, 1] * h[1] + R[0, 2] * h[2]
        hy = R[1, 0] * h[0] + R[1, 1] * h[1] + R[1, 2] * h[2]
        hz = R[2, 0] * h[0] + R[2, 1] * h[1] + R[2, 2] * h[2]
        data.cm[p] += m
        data.ch[p, 0] += hx + m * t[0]
        data.ch[p, 1] += hy + m * t[1]
        data.ch[p, 2] += hz + m * t[2]
        tt = t[0] * t[0] + t[1] * t[1] + t[2] * t[2]
        th = t[0] * hx + t[1] * hy + t[2] * hz
        hv = (hx, hy, hz)
        for r in range(3):
            for k in range(3):
                s = 0.0
                for a in range(3):
                    for b in range(3):
                        s += R[r, a] * J[a, b] * R[k, b]
                # parallel-axis shift of the origin by t for a body with first moment h'
                s += -m * t[r] * t[k] - t[r] * hv[k] - hv[r] * t[k]
                if r == k:
                    s += m * tt + 2.0 * th
                data.cJ[p, r, k] += s
    F = data.f6
    for i in range(nb):
        jt = model.body_jtype[i]
        if jt == 0:
            continue
        di = model.body_dof[i]
        a = model.body_axis[i]
        m = data.cm[i]
        h = data.ch[i]
        J = data.cJ[i]
        # F = I^c S  (angular F[0:3], linear F[3:6])
        if jt == REVOLUTE:
            for r in range(3):
                F[r] = J[r, 0] * a[0] + J[r, 1] * a[1] + J[r, 2] * a[2]
            F[3] = a[1] * h[2] - a[2] * h[1]
            F[4] = a[2] * h[0] - a[0] * h[2]
            F[5] = a[0] * h[1] - a[1] * h[0]
            M[di, di] = a[0] * F[0] + a[1] * F[1] + a[2] * F[2]
        else:
            F[0] = h[1] * a[2] - h[2] * a[1]
            F[1] = h[2] * a[0] - h[0] * a[2]
            F[2] = h[0] * a[1] - h[1] * a[0]
            for r in range(3):
                F[3 + r] = m * a[r]
            M[di, di] = a[0] * F[3] + a[1] * F[4] + a[2] * F[5]
        j = i
        while model.body_parent[j] >= 0:
            R = data.lR[j]
            t = data.lp[j]
            # F ← Xᵀ F: n' = R n + t × (R f), f' = R f
            f0 = R[0, 0] * F[3] + R[0, 1] * F[4] + R[0, 2] * F[5]
            f1 = R[1, 0] * F[3] + R[1, 1] * F[4] + R[1, 2] * F[5]
            f2 = R[2, 0] * F[3] + R[2, 1] * F[4] + R[2, 2] * F[5]
            n0 = R[0, 0] * F[0] + R[0, 1] * F[1] + R[0, 2] * F[2] + t[1] * f2 - t[2] * f1
            n1 = R[1, 0] * F[0] + R[1, 1] * F[1] + R[1, 2] * F[2] + t[2] * f0 - t[0] * f2
            n2 = R[2, 0] * F[0] + R[2, 1] * F[1] + R[2, 2] * F[2] + t[0] * f1 - t[1] * f0
            F[0], F[1], F[2], F[3], F[4], F[5] = n0, n1, n2, f0, f1, f2
            j = model.body_parent[j]
            jt2 = model.body_jtype[j]
            if jt2 != 0:
                dj = model.body_dof[j]
                b = model.body_axis[j]
                if jt2 == REVOLUTE:
                    val = b[0] * F[0] + b[1] * F[1] + b[2] * F[2]
                else:
                    val = b[0] * F[3] + b[1] * F[4] + b[2] * F[5]
                M[di, dj] = val
                M[dj, di] = val
