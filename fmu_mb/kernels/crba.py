"""Composite-rigid-body algorithm: the joint-space mass matrix M(q).

M equals the papers' trace form m_ij = Σ_l tr(T_i^(l) H^(l) T_j^(l)ᵀ)
(paper 000 eq. (26), paper 001 eq. (20)), computed recursively in O(n·depth)
instead of O(n⁴); the slow trace form is kept as a test oracle
(tests/oracles/trace_dynamics.py).
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType
from .spatial import force_to_parent


@njit(cache=True, error_model="numpy")
def composite_inertias(nb, parent, mass, c, Ic, R, t, cm, ch, cJ):
    """cm, ch, cJ: mass, first moment m·c and inertia about the origin of every
    subtree, in its root body's frame (R, t = lR, lp from forward_kinematics)."""
    for i in range(nb):
        m = mass[i]
        cc = c[i, 0] * c[i, 0] + c[i, 1] * c[i, 1] + c[i, 2] * c[i, 2]
        cm[i] = m
        for r in range(3):
            ch[i, r] = m * c[i, r]
            for k in range(3):
                cJ[i, r, k] = Ic[i, r, k] - m * c[i, r] * c[i, k]
            cJ[i, r, r] += m * cc
    for i in range(nb - 1, -1, -1):
        p = parent[i]
        if p < 0:
            continue
        m = cm[i]
        # first moment about the child origin, parent axes: h' = R h
        hx = R[i, 0, 0] * ch[i, 0] + R[i, 0, 1] * ch[i, 1] + R[i, 0, 2] * ch[i, 2]
        hy = R[i, 1, 0] * ch[i, 0] + R[i, 1, 1] * ch[i, 1] + R[i, 1, 2] * ch[i, 2]
        hz = R[i, 2, 0] * ch[i, 0] + R[i, 2, 1] * ch[i, 1] + R[i, 2, 2] * ch[i, 2]
        t0, t1, t2 = t[i, 0], t[i, 1], t[i, 2]
        cm[p] += m
        ch[p, 0] += hx + m * t0
        ch[p, 1] += hy + m * t1
        ch[p, 2] += hz + m * t2
        tt = t0 * t0 + t1 * t1 + t2 * t2
        th = t0 * hx + t1 * hy + t2 * hz
        for r in range(3):
            tr = t0 if r == 0 else (t1 if r == 1 else t2)
            hr = hx if r == 0 else (hy if r == 1 else hz)
            for k in range(3):
                tk = t0 if k == 0 else (t1 if k == 1 else t2)
                hk = hx if k == 0 else (hy if k == 1 else hz)
                s = 0.0
                for a in range(3):
                    s += R[i, r, a] * (cJ[i, a, 0] * R[i, k, 0] + cJ[i, a, 1] * R[i, k, 1] + cJ[i, a, 2] * R[i, k, 2])
                # parallel-axis shift of the origin by t for a body with first moment h'
                s += -m * tr * tk - tr * hk - hr * tk
                if r == k:
                    s += m * tt + 2.0 * th
                cJ[p, r, k] += s


@njit(cache=True, error_model="numpy")
def crba(m, d):
    """d.M = M(q) after forward_kinematics (uses lR, lp), the drives' armature on its diagonal; clears d.pk_held."""
    nb, nv, parent, jtype, ax, dof = m.nbody, m.nv, m.body_parent, m.body_jtype, m.body_axis, m.body_dof
    M, cm, ch, cJ, lR, lp = d.M, d.cm, d.ch, d.cJ, d.lR, d.lp
    d.pk_held[0] = 0                # M is overwritten: the kept position work is no longer there (kernels.constrained)
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    composite_inertias(nb, parent, m.body_mass, m.body_com, m.body_Ic, lR, lp, cm, ch, cJ)
    for i in range(nb):
        jt = jtype[i]
        if jt == JointType.FIXED:
            continue
        di = dof[i]
        a0, a1, a2 = ax[i, 0], ax[i, 1], ax[i, 2]
        h0, h1, h2 = ch[i, 0], ch[i, 1], ch[i, 2]
        # F = I^c S  (n, f)
        if jt == JointType.REVOLUTE:
            n0 = cJ[i, 0, 0] * a0 + cJ[i, 0, 1] * a1 + cJ[i, 0, 2] * a2
            n1 = cJ[i, 1, 0] * a0 + cJ[i, 1, 1] * a1 + cJ[i, 1, 2] * a2
            n2 = cJ[i, 2, 0] * a0 + cJ[i, 2, 1] * a1 + cJ[i, 2, 2] * a2
            f0, f1, f2 = a1 * h2 - a2 * h1, a2 * h0 - a0 * h2, a0 * h1 - a1 * h0
            M[di, di] = a0 * n0 + a1 * n1 + a2 * n2
        else:
            n0, n1, n2 = h1 * a2 - h2 * a1, h2 * a0 - h0 * a2, h0 * a1 - h1 * a0
            f0, f1, f2 = cm[i] * a0, cm[i] * a1, cm[i] * a2
            M[di, di] = a0 * f0 + a1 * f1 + a2 * f2
        j = i
        while parent[j] >= 0:
            n0, n1, n2, f0, f1, f2 = force_to_parent(lR, lp, j, n0, n1, n2, f0, f1, f2)
            j = parent[j]
            jt2 = jtype[j]
            if jt2 == JointType.REVOLUTE:
                val = ax[j, 0] * n0 + ax[j, 1] * n1 + ax[j, 2] * n2
            elif jt2 == JointType.PRISMATIC:
                val = ax[j, 0] * f0 + ax[j, 1] * f1 + ax[j, 2] * f2
            else:
                continue
            dj = dof[j]
            M[di, dj] = val
            M[dj, di] = val
    for k in range(nv):
        M[k, k] += m.dof_armature[k]
