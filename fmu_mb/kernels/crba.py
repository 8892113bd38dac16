"""Composite-rigid-body algorithm: the joint-space mass matrix M(q).

M equals the papers' trace form m_ij = Σ_l tr(T_i^(l) H^(l) T_j^(l)ᵀ)
(paper 000 eq. (26), paper 001 eq. (20)), computed recursively in O(n·depth)
instead of O(n⁴); the slow trace form is kept as a test oracle
(tests/oracles/trace_dynamics.py).

The composite inertias are formed in each subtree's root frame (all local quantities); the wrench
F_i = I^c_i S_i is then turned into world axes once, and m_ij = S_jᵀ F_i for each ancestor j is the
moment of F_i about j's joint point along its world axis: a_j · (n_i + (o_i − o_j) × f_i), 20 operations
instead of carrying the wrench joint by joint to the root (45 per step; rpsup: 266 ancestor steps).
Only differences of nearby points enter, never a position's square: M's rounding stays independent of
where the mechanism is in the world (a world-origin form, as Featherstone 2008 sec. 6.2 and Pinocchio,
was tried: its m·L² terms broke a mobile robot 1.8e8 m away and the crane's exact Jacobian test).
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType


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
    """d.M = M(q) after forward_kinematics (uses lR, lp, oR, op), the drives' armature on its diagonal; d.jaxis the
    joints' world axes (as constraints.joint_axes); clears d.pk_held."""
    nb, nv, parent, jtype, ax, dof = m.nbody, m.nv, m.body_parent, m.body_jtype, m.body_axis, m.body_dof
    M, cm, ch, cJ, lR, lp, oR, op, A = d.M, d.cm, d.ch, d.cJ, d.lR, d.lp, d.oR, d.op, d.jaxis
    d.pk_held[0] = 0                # M is overwritten: the kept position work is no longer there (kernels.constrained)
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    composite_inertias(nb, parent, m.body_mass, m.body_com, m.body_Ic, lR, lp, cm, ch, cJ)
    for i in range(nb):
        if jtype[i] != JointType.FIXED:
            A[i, 0] = oR[i, 0, 0] * ax[i, 0] + oR[i, 0, 1] * ax[i, 1] + oR[i, 0, 2] * ax[i, 2]
            A[i, 1] = oR[i, 1, 0] * ax[i, 0] + oR[i, 1, 1] * ax[i, 1] + oR[i, 1, 2] * ax[i, 2]
            A[i, 2] = oR[i, 2, 0] * ax[i, 0] + oR[i, 2, 1] * ax[i, 1] + oR[i, 2, 2] * ax[i, 2]
    for i in range(nb):
        jt = jtype[i]
        if jt == JointType.FIXED:
            continue
        di = dof[i]
        a0, a1, a2 = ax[i, 0], ax[i, 1], ax[i, 2]
        h0, h1, h2 = ch[i, 0], ch[i, 1], ch[i, 2]
        # F = I^c S  (n, f), body frame about its origin
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
        # the same wrench in world axes
        N0 = oR[i, 0, 0] * n0 + oR[i, 0, 1] * n1 + oR[i, 0, 2] * n2
        N1 = oR[i, 1, 0] * n0 + oR[i, 1, 1] * n1 + oR[i, 1, 2] * n2
        N2 = oR[i, 2, 0] * n0 + oR[i, 2, 1] * n1 + oR[i, 2, 2] * n2
        F0 = oR[i, 0, 0] * f0 + oR[i, 0, 1] * f1 + oR[i, 0, 2] * f2
        F1 = oR[i, 1, 0] * f0 + oR[i, 1, 1] * f1 + oR[i, 1, 2] * f2
        F2 = oR[i, 2, 0] * f0 + oR[i, 2, 1] * f1 + oR[i, 2, 2] * f2
        o0, o1, o2 = op[i, 0], op[i, 1], op[i, 2]
        j = parent[i]
        while j >= 0:
            jt2 = jtype[j]
            if jt2 == JointType.REVOLUTE:       # a_j · (n + (o_i − o_j) × f): the moment about j's joint point
                e0, e1, e2 = o0 - op[j, 0], o1 - op[j, 1], o2 - op[j, 2]
                val = A[j, 0] * (N0 + e1 * F2 - e2 * F1) + A[j, 1] * (N1 + e2 * F0 - e0 * F2) \
                    + A[j, 2] * (N2 + e0 * F1 - e1 * F0)
            elif jt2 == JointType.PRISMATIC:
                val = A[j, 0] * F0 + A[j, 1] * F1 + A[j, 2] * F2
            else:
                j = parent[j]
                continue
            dj = dof[j]
            M[di, dj] = val
            M[dj, di] = val
            j = parent[j]
    for k in range(nv):
        M[k, k] += m.dof_armature[k]
