"""Composite-rigid-body algorithm: the joint-space mass matrix M(q).

M equals the papers' trace form m_ij = Σ_l tr(T_i^(l) H^(l) T_j^(l)ᵀ)
(paper 000 eq. (26), paper 001 eq. (20)), computed recursively in O(n·depth)
instead of O(n⁴); the slow trace form is kept as a test oracle
(tests/oracles/trace_dynamics.py).

The composite inertias are formed in world axes about the world origin (Featherstone, Rigid Body
Dynamics Algorithms, 2008, sec. 6.2; Pinocchio's CRBA does the same): a subtree's inertia is then the
plain sum of its bodies', and m_ij = S_jᵀ I^c_i S_i is one dot product of two world 6-vectors per
ancestor j instead of a wrench carried joint by joint to the root (on rpsup's 25 bodies, 266 ancestor
steps of 45 operations each; native A/B at 10 ms communication steps: rpsup, the manipulator and the
crane 6-8 % faster per step). The price is the world origin as reference point: a body at distance L
carries terms of size m·L², so M's rounding grows with (L / body size)². At the papers' sizes the motion
moved by rounding only: every mechanism's FMU over 2 s, defaults and most detailed options, against the
body-frame form: max |Δq| 1e-13.
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType


@njit(cache=True, error_model="numpy")
def composite_inertias(nb, parent, mass, c, Ic, oR, op, cm, ch, cJ):
    """cm, ch, cJ: mass, first moment m·g and inertia about the world origin of every subtree, world axes
    (oR, op from forward_kinematics; g the centre of mass in the world). Each body's own, then added to its
    parent's."""
    for i in range(nb):
        m = mass[i]
        g0 = op[i, 0] + oR[i, 0, 0] * c[i, 0] + oR[i, 0, 1] * c[i, 1] + oR[i, 0, 2] * c[i, 2]
        g1 = op[i, 1] + oR[i, 1, 0] * c[i, 0] + oR[i, 1, 1] * c[i, 1] + oR[i, 1, 2] * c[i, 2]
        g2 = op[i, 2] + oR[i, 2, 0] * c[i, 0] + oR[i, 2, 1] * c[i, 1] + oR[i, 2, 2] * c[i, 2]
        gg = g0 * g0 + g1 * g1 + g2 * g2
        cm[i] = m
        ch[i, 0], ch[i, 1], ch[i, 2] = m * g0, m * g1, m * g2
        for r in range(3):
            gr = g0 if r == 0 else (g1 if r == 1 else g2)
            for k in range(r, 3):
                gk = g0 if k == 0 else (g1 if k == 1 else g2)
                s = 0.0                       # (R Ic Rᵀ)[r, k]: the central inertia in world axes
                for a in range(3):
                    s += oR[i, r, a] * (Ic[i, a, 0] * oR[i, k, 0] + Ic[i, a, 1] * oR[i, k, 1]
                                        + Ic[i, a, 2] * oR[i, k, 2])
                s -= m * gr * gk              # parallel-axis shift to the origin
                if r == k:
                    s += m * gg
                cJ[i, r, k] = s
                cJ[i, k, r] = s
    for i in range(nb - 1, -1, -1):
        p = parent[i]
        if p < 0:
            continue
        cm[p] += cm[i]
        for r in range(3):
            ch[p, r] += ch[i, r]
            for k in range(3):
                cJ[p, r, k] += cJ[i, r, k]


@njit(cache=True, error_model="numpy")
def crba(m, d):
    """d.M = M(q) after forward_kinematics (uses oR, op), the drives' armature on its diagonal; d.jaxis the
    joints' world axes (as constraints.joint_axes), d.jmom their moments p × a about the world origin; clears
    d.pk_held."""
    nb, nv, parent, jtype, ax, dof = m.nbody, m.nv, m.body_parent, m.body_jtype, m.body_axis, m.body_dof
    M, cm, ch, cJ, oR, op, A, B = d.M, d.cm, d.ch, d.cJ, d.oR, d.op, d.jaxis, d.jmom
    d.pk_held[0] = 0                # M is overwritten: the kept position work is no longer there (kernels.constrained)
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    composite_inertias(nb, parent, m.body_mass, m.body_com, m.body_Ic, oR, op, cm, ch, cJ)
    for i in range(nb):             # S_i in world Plücker coordinates about the origin: (a, p × a) or (0, a)
        if jtype[i] == JointType.FIXED:
            continue
        a0 = oR[i, 0, 0] * ax[i, 0] + oR[i, 0, 1] * ax[i, 1] + oR[i, 0, 2] * ax[i, 2]
        a1 = oR[i, 1, 0] * ax[i, 0] + oR[i, 1, 1] * ax[i, 1] + oR[i, 1, 2] * ax[i, 2]
        a2 = oR[i, 2, 0] * ax[i, 0] + oR[i, 2, 1] * ax[i, 1] + oR[i, 2, 2] * ax[i, 2]
        A[i, 0], A[i, 1], A[i, 2] = a0, a1, a2
        p0, p1, p2 = op[i, 0], op[i, 1], op[i, 2]
        B[i, 0], B[i, 1], B[i, 2] = p1 * a2 - p2 * a1, p2 * a0 - p0 * a2, p0 * a1 - p1 * a0
    for i in range(nb):
        jt = jtype[i]
        if jt == JointType.FIXED:
            continue
        di = dof[i]
        a0, a1, a2 = A[i, 0], A[i, 1], A[i, 2]
        h0, h1, h2 = ch[i, 0], ch[i, 1], ch[i, 2]
        mi = cm[i]
        # F = I^c S about the origin: n = J ω + h × v, f = m v − h × ω
        if jt == JointType.REVOLUTE:
            b0, b1, b2 = B[i, 0], B[i, 1], B[i, 2]
            n0 = cJ[i, 0, 0] * a0 + cJ[i, 0, 1] * a1 + cJ[i, 0, 2] * a2 + h1 * b2 - h2 * b1
            n1 = cJ[i, 1, 0] * a0 + cJ[i, 1, 1] * a1 + cJ[i, 1, 2] * a2 + h2 * b0 - h0 * b2
            n2 = cJ[i, 2, 0] * a0 + cJ[i, 2, 1] * a1 + cJ[i, 2, 2] * a2 + h0 * b1 - h1 * b0
            f0 = mi * b0 - (h1 * a2 - h2 * a1)
            f1 = mi * b1 - (h2 * a0 - h0 * a2)
            f2 = mi * b2 - (h0 * a1 - h1 * a0)
            M[di, di] = a0 * n0 + a1 * n1 + a2 * n2 + b0 * f0 + b1 * f1 + b2 * f2
        else:
            n0, n1, n2 = h1 * a2 - h2 * a1, h2 * a0 - h0 * a2, h0 * a1 - h1 * a0
            f0, f1, f2 = mi * a0, mi * a1, mi * a2
            M[di, di] = a0 * f0 + a1 * f1 + a2 * f2
        j = parent[i]
        while j >= 0:
            jt2 = jtype[j]
            if jt2 == JointType.REVOLUTE:
                val = A[j, 0] * n0 + A[j, 1] * n1 + A[j, 2] * n2 + B[j, 0] * f0 + B[j, 1] * f1 + B[j, 2] * f2
            elif jt2 == JointType.PRISMATIC:
                val = A[j, 0] * f0 + A[j, 1] * f1 + A[j, 2] * f2
            else:
                j = parent[j]
                continue
            dj = dof[j]
            M[di, dj] = val
            M[dj, di] = val
            j = parent[j]
    for k in range(nv):
        M[k, k] += m.dof_armature[k]
