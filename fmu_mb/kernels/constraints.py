"""Constraint rows: values Φ, rates Φ̇, the constraint matrix C and the right-hand side γ.

For every row (kinds in :mod:`fmu_mb.model.constraints`) after
:func:`~fmu_mb.kernels.kinematics.forward_kinematics`:

    Φ_k     position-level value (0 for first-order rows)
    Φ̇_k     = C_k q̇ + ∂Φ_k/∂t (for first-order rows: the value Ψ_k q̇ − g_k itself)
    C_k     row of C = [Φ_q; Ψ] (paper 004 eq. 33; paper 000 eqs. 24, 31.1)
    γ_k     C_k q̈ = γ_k: −(Φ̈_k at q̈ = 0) − 2α Φ̇_k − β² Φ_k (Baumgarte, paper 000 eqs. 33, 37;
            first-order rows: −(Ψ̇_k at q̈ = 0) − 2α Ψ_k)

Each row is realised by a **unit wrench**: a world moment M_k and force F_k acting on
body a at point P_a and their negatives on body b at P_b (``con_wM, con_wF, con_wpa,
con_wpb``). C_k is that wrench's generalized force, C_kj = M_k·s_j + F_k·(s_j × (P − o_j))
for a revolute coordinate j on the path from the body to the ground (axis s_j through
o_j), F_k·s_j for a prismatic one — so C q̇ is the row's rate and Cᵀλ the generalized
force of the constraint forces, and the same wrenches go into the reaction pass. The
q̈-free accelerations Φ̈(q̈ = 0) use the body accelerations at q̈ = 0 without gravity
(``aw0, al0``), i.e. the Φ̇_q q̇ (paper 000 eq. 31.2) and Γ (paper 004 eqs. 9, 31) terms.
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType, RowKind, RowSide, SolverOption
from .kinematics import forward_kinematics
from .spatial import cross, motion_to_child
from .trajectory import eval_trajectory, seeded_time


@njit(cache=True, error_model="numpy", inline="always")
def to_world(oR, b, x, y, z):
    """oR[b]·(x, y, z); identity for the ground (b < 0)."""
    if b < 0:
        return x, y, z
    return (oR[b, 0, 0] * x + oR[b, 0, 1] * y + oR[b, 0, 2] * z,
            oR[b, 1, 0] * x + oR[b, 1, 1] * y + oR[b, 1, 2] * z,
            oR[b, 2, 0] * x + oR[b, 2, 1] * y + oR[b, 2, 2] * z)


@njit(cache=True, error_model="numpy")
def _point_kinematics(oR, op, w, vl, aw0, al0, b, px, py, pz, out):
    """World position, velocity and q̈-free acceleration of body b's point p (body frame),
    and b's world angular velocity and q̈-free angular acceleration: out (5, 3)."""
    if b < 0:
        out[0, 0], out[0, 1], out[0, 2] = px, py, pz
        for r in range(1, 5):
            out[r, 0] = 0.0
            out[r, 1] = 0.0
            out[r, 2] = 0.0
        return
    w0, w1, w2 = w[b, 0], w[b, 1], w[b, 2]
    c0, c1, c2 = cross(w0, w1, w2, px, py, pz)
    v0, v1, v2 = vl[b, 0] + c0, vl[b, 1] + c1, vl[b, 2] + c2          # body-frame point velocity
    # classical point acceleration a_O + α×p + ω×(ω×p) with a_O = a_spatial + ω×v_O,
    # i.e. a_spatial + α×p + ω×v_p
    a0, a1, a2 = cross(aw0[b, 0], aw0[b, 1], aw0[b, 2], px, py, pz)
    e0, e1, e2 = cross(w0, w1, w2, v0, v1, v2)
    a0 += al0[b, 0] + e0
    a1 += al0[b, 1] + e1
    a2 += al0[b, 2] + e2
    out[0, 0] = op[b, 0] + oR[b, 0, 0] * px + oR[b, 0, 1] * py + oR[b, 0, 2] * pz
    out[0, 1] = op[b, 1] + oR[b, 1, 0] * px + oR[b, 1, 1] * py + oR[b, 1, 2] * pz
    out[0, 2] = op[b, 2] + oR[b, 2, 0] * px + oR[b, 2, 1] * py + oR[b, 2, 2] * pz
    out[1, 0], out[1, 1], out[1, 2] = to_world(oR, b, v0, v1, v2)
    out[2, 0], out[2, 1], out[2, 2] = to_world(oR, b, a0, a1, a2)
    out[3, 0], out[3, 1], out[3, 2] = to_world(oR, b, w0, w1, w2)
    out[4, 0], out[4, 1], out[4, 2] = to_world(oR, b, aw0[b, 0], aw0[b, 1], aw0[b, 2])


@njit(cache=True, error_model="numpy")
def _same_point(body, point, held, k):
    """Whether row ``held``'s point (body, point in its frame) is row k's (held −1: no row)."""
    return held >= 0 and body[held] == body[k] and point[held, 0] == point[k, 0] \
        and point[held, 1] == point[k, 1] and point[held, 2] == point[k, 2]


@njit(cache=True, error_model="numpy")
def joint_axes(m, d):
    """d.jaxis: the world axis of every body's joint. Needs forward_kinematics."""
    jtype, ax, oR, jaxis = m.body_jtype, m.body_axis, d.oR, d.jaxis
    for i in range(m.nbody):
        if jtype[i] != JointType.FIXED:
            jaxis[i, 0], jaxis[i, 1], jaxis[i, 2] = to_world(oR, i, ax[i, 0], ax[i, 1], ax[i, 2])


@njit(cache=True, error_model="numpy")
def bias_accelerations(m, d):
    """d.aw0/al0: spatial body accelerations (body frame) for q̈ = 0 and no gravity, and
    d.jaxis (:func:`joint_axes`). Needs forward_kinematics."""
    nb, parent = m.nbody, m.body_parent
    lR, lp, cw, cl, aw0, al0 = d.lR, d.lp, d.cw, d.cl, d.aw0, d.al0
    joint_axes(m, d)
    for i in range(nb):
        p = parent[i]
        if p < 0:
            a0, a1, a2, l0, l1, l2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        else:
            a0, a1, a2, l0, l1, l2 = motion_to_child(lR, lp, i, aw0[p, 0], aw0[p, 1], aw0[p, 2],
                                                     al0[p, 0], al0[p, 1], al0[p, 2])
        aw0[i, 0], aw0[i, 1], aw0[i, 2] = a0 + cw[i, 0], a1 + cw[i, 1], a2 + cw[i, 2]
        al0[i, 0], al0[i, 1], al0[i, 2] = l0 + cl[i, 0], l1 + cl[i, 1], l2 + cl[i, 2]


@njit(cache=True, error_model="numpy")
def add_wrench_row(parent, jtype, dof, jaxis, op, C, k, b, M0, M1, M2, F0, F1, F2, P0, P1, P2, sign):
    """C[k, :] += sign × generalized force of the world wrench (M, F at P) on body b."""
    i = b
    while i >= 0:
        jt = jtype[i]
        if jt == JointType.REVOLUTE:
            s0, s1, s2 = jaxis[i, 0], jaxis[i, 1], jaxis[i, 2]
            c0, c1, c2 = cross(s0, s1, s2, P0 - op[i, 0], P1 - op[i, 1], P2 - op[i, 2])
            C[k, dof[i]] += sign * (M0 * s0 + M1 * s1 + M2 * s2 + F0 * c0 + F1 * c1 + F2 * c2)
        elif jt == JointType.PRISMATIC:
            C[k, dof[i]] += sign * (F0 * jaxis[i, 0] + F1 * jaxis[i, 1] + F2 * jaxis[i, 2])
        i = parent[i]


@njit(cache=True, error_model="numpy")
def constraint_terms(m, d, q, v, t):
    """Fill d.con_phi, con_phid, con_C, con_gam, con_g and the row wrenches at (q, q̇, t).

    Needs forward_kinematics(q, q̇). Baumgarte α, β from d.solver_opt."""
    nc, nv = m.nc, m.nv
    kind, ca, cpa, cb, cpb, side = m.con_kind, m.con_a, m.con_pa, m.con_b, m.con_pb, m.con_side
    ce, cu, cv, cdof, ctraj, tdir, off = m.con_e, m.con_u, m.con_v, m.con_dof, m.con_traj, m.con_tdir, d.con_off
    tfirst, tcount, skind, stime, spar = m.traj_first, m.traj_count, d.traj_kind, d.traj_time, d.traj_par
    parent, jtype, bdof = m.body_parent, m.body_jtype, m.body_dof
    alpha, beta = d.solver_opt[SolverOption.ALPHA], d.solver_opt[SolverOption.BETA]
    oR, op, w, vl, aw0, al0, jaxis = d.oR, d.op, d.w, d.vl, d.aw0, d.al0, d.jaxis
    phi, phid, C, gam, g, tout = d.con_phi, d.con_phid, d.con_C, d.con_gam, d.con_g, d.traj_out
    wM, wF, wpa, wpb, KA, KB = d.con_wM, d.con_wF, d.con_wpa, d.con_wpb, d.m66, d.IA[0]
    if nc == 0:
        return
    ts = seeded_time(t, d.traj_seed)             # (t; complex along a time seed: kernels.trajectory)
    bias_accelerations(m, d)
    ka, kb = -1, -1                              # the rows whose points KA / KB hold the kinematics of (-1: none)
    for k in range(nc):
        for j in range(nv):
            C[k, j] = 0.0
        tr = ctraj[k]
        if tr >= 0:
            eval_trajectory(skind, stime, spar, tfirst[tr], tcount[tr], ts, tout)
            for r in range(3):
                g[k, r] = tdir[k, 0] * tout[r, 0] + tdir[k, 1] * tout[r, 1] + tdir[k, 2] * tout[r, 2]
        else:
            g[k, 0], g[k, 1], g[k, 2] = 0.0, 0.0, 0.0
        g[k, 0] += off[k]
        kd = kind[k]
        a = ca[k]
        b = cb[k]
        wM[k, 0], wM[k, 1], wM[k, 2] = 0.0, 0.0, 0.0
        wF[k, 0], wF[k, 1], wF[k, 2] = 0.0, 0.0, 0.0
        if kd == RowKind.COORD:
            j = cdof[k]
            C[k, j] = 1.0
            phi[k] = q[j] - g[k, 0]
            phid[k] = v[j] - g[k, 1]
            gam[k] = g[k, 2] - 2.0 * alpha * phid[k] - beta * beta * phi[k]
            continue
        # the rows of one joint share its points: their kinematics once (the same values)
        if not _same_point(ca, cpa, ka, k):
            _point_kinematics(oR, op, w, vl, aw0, al0, a, cpa[k, 0], cpa[k, 1], cpa[k, 2], KA)
            ka = k
        if kd == RowKind.ELLIPSE:
            for r in range(3):
                KB[0, r] = cpb[k, r]          # ellipse centre (world)
            kb = -1
        elif not _same_point(cb, cpb, kb, k):
            _point_kinematics(oR, op, w, vl, aw0, al0, b, cpb[k, 0], cpb[k, 1], cpb[k, 2], KB)
            kb = k
        ra0, ra1, ra2 = KA[0, 0], KA[0, 1], KA[0, 2]
        va0, va1, va2 = KA[1, 0], KA[1, 1], KA[1, 2]
        aa0, aa1, aa2 = KA[2, 0], KA[2, 1], KA[2, 2]
        if kd == RowKind.POS or kd == RowKind.VEL:
            sd = side[k]
            sb = a if sd == RowSide.A else (b if sd == RowSide.B else -1)
            e0, e1, e2 = to_world(oR, sb, ce[k, 0], ce[k, 1], ce[k, 2])
            if kd == RowKind.POS and sd == RowSide.B:
                # e fixed in b: b's force acts at the coincident point r_a
                w0, w1, w2 = KB[3, 0], KB[3, 1], KB[3, 2]
                rb0, rb1, rb2 = KB[0, 0], KB[0, 1], KB[0, 2]
                dx0, dx1, dx2 = ra0 - rb0, ra1 - rb1, ra2 - rb2
                c0, c1, c2 = cross(w0, w1, w2, dx0, dx1, dx2)
                vb0, vb1, vb2 = KB[1, 0] + c0, KB[1, 1] + c1, KB[1, 2] + c2
                al0_, al1_, al2_ = KB[4, 0], KB[4, 1], KB[4, 2]
                h0, h1, h2 = cross(al0_, al1_, al2_, dx0, dx1, dx2)
                i0, i1, i2 = cross(w0, w1, w2, c0, c1, c2)
                ab0, ab1, ab2 = KB[2, 0] + h0 + i0, KB[2, 1] + h1 + i1, KB[2, 2] + h2 + i2
                pb0, pb1, pb2 = ra0, ra1, ra2
                dv0, dv1, dv2 = va0 - vb0, va1 - vb1, va2 - vb2
                we0, we1, we2 = cross(w0, w1, w2, e0, e1, e2)
                phi[k] = e0 * dx0 + e1 * dx1 + e2 * dx2 - g[k, 0]
                ddphi0 = 2.0 * (we0 * dv0 + we1 * dv1 + we2 * dv2) + e0 * (aa0 - ab0) + e1 * (aa1 - ab1) \
                    + e2 * (aa2 - ab2) - g[k, 2]
            else:
                pb0, pb1, pb2 = KB[0, 0], KB[0, 1], KB[0, 2]
                dv0, dv1, dv2 = va0 - KB[1, 0], va1 - KB[1, 1], va2 - KB[1, 2]
                da0, da1, da2 = aa0 - KB[2, 0], aa1 - KB[2, 1], aa2 - KB[2, 2]
                if kd == RowKind.POS:
                    phi[k] = e0 * (ra0 - pb0) + e1 * (ra1 - pb1) + e2 * (ra2 - pb2) - g[k, 0]
                    ddphi0 = e0 * da0 + e1 * da1 + e2 * da2 - g[k, 2]
                else:
                    phi[k] = 0.0
                    if sd == RowSide.A:
                        we0, we1, we2 = cross(KA[3, 0], KA[3, 1], KA[3, 2], e0, e1, e2)
                    elif sd == RowSide.B:
                        we0, we1, we2 = cross(KB[3, 0], KB[3, 1], KB[3, 2], e0, e1, e2)
                    else:
                        we0, we1, we2 = 0.0, 0.0, 0.0
                    ddphi0 = we0 * dv0 + we1 * dv1 + we2 * dv2 + e0 * da0 + e1 * da1 + e2 * da2 - g[k, 1]
            wF[k, 0], wF[k, 1], wF[k, 2] = e0, e1, e2
            wpa[k, 0], wpa[k, 1], wpa[k, 2] = ra0, ra1, ra2
            wpb[k, 0], wpb[k, 1], wpb[k, 2] = pb0, pb1, pb2
        elif kd == RowKind.ORI:
            u0, u1, u2 = to_world(oR, a, cu[k, 0], cu[k, 1], cu[k, 2])
            v0, v1, v2 = to_world(oR, b, cv[k, 0], cv[k, 1], cv[k, 2])
            n0, n1, n2 = cross(u0, u1, u2, v0, v1, v2)
            wa0, wa1, wa2 = KA[3, 0], KA[3, 1], KA[3, 2]
            wb0, wb1, wb2 = KB[3, 0], KB[3, 1], KB[3, 2]
            x0, x1, x2 = cross(wa0, wa1, wa2, u0, u1, u2)
            y0, y1, y2 = cross(x0, x1, x2, v0, v1, v2)              # (ω_a × u) × v
            z0, z1, z2 = cross(wb0, wb1, wb2, v0, v1, v2)
            h0, h1, h2 = cross(u0, u1, u2, z0, z1, z2)              # u × (ω_b × v)
            phi[k] = u0 * v0 + u1 * v1 + u2 * v2 - g[k, 0]
            ddphi0 = (KA[4, 0] - KB[4, 0]) * n0 + (KA[4, 1] - KB[4, 1]) * n1 + (KA[4, 2] - KB[4, 2]) * n2 \
                + (wa0 - wb0) * (y0 + h0) + (wa1 - wb1) * (y1 + h1) + (wa2 - wb2) * (y2 + h2) - g[k, 2]
            wM[k, 0], wM[k, 1], wM[k, 2] = n0, n1, n2
            wpa[k, 0], wpa[k, 1], wpa[k, 2] = ra0, ra1, ra2
            wpb[k, 0], wpb[k, 1], wpb[k, 2] = KB[0, 0], KB[0, 1], KB[0, 2]
        else:  # RowKind.ELLIPSE: Φ = ½ab((x/a)² + (y/b)² − 1) in the frame (X = e, Y = u, centre)
            tr = ctraj[k]
            eval_trajectory(skind, stime, spar, tfirst[tr], tcount[tr], ts, tout)
            ea, eb = tout[0, 0], tout[0, 1]
            s = 0.5 * ea * eb
            X0, X1, X2 = ce[k, 0], ce[k, 1], ce[k, 2]
            Y0, Y1, Y2 = cu[k, 0], cu[k, 1], cu[k, 2]
            dx0, dx1, dx2 = ra0 - KB[0, 0], ra1 - KB[0, 1], ra2 - KB[0, 2]
            x = X0 * dx0 + X1 * dx1 + X2 * dx2
            y = Y0 * dx0 + Y1 * dx1 + Y2 * dx2
            phi[k] = s * (x * x / (ea * ea) + y * y / (eb * eb) - 1.0)
            gx, gy = 2.0 * s * x / (ea * ea), 2.0 * s * y / (eb * eb)
            n0, n1, n2 = gx * X0 + gy * Y0, gx * X1 + gy * Y1, gx * X2 + gy * Y2
            xv = X0 * va0 + X1 * va1 + X2 * va2
            yv = Y0 * va0 + Y1 * va1 + Y2 * va2
            ddphi0 = n0 * aa0 + n1 * aa1 + n2 * aa2 + 2.0 * s * (xv * xv / (ea * ea) + yv * yv / (eb * eb))
            wF[k, 0], wF[k, 1], wF[k, 2] = n0, n1, n2
            wpa[k, 0], wpa[k, 1], wpa[k, 2] = ra0, ra1, ra2
            wpb[k, 0], wpb[k, 1], wpb[k, 2] = KB[0, 0], KB[0, 1], KB[0, 2]
        add_wrench_row(parent, jtype, bdof, jaxis, op, C, k, a, wM[k, 0], wM[k, 1], wM[k, 2],
                        wF[k, 0], wF[k, 1], wF[k, 2], wpa[k, 0], wpa[k, 1], wpa[k, 2], 1.0)
        add_wrench_row(parent, jtype, bdof, jaxis, op, C, k, b, wM[k, 0], wM[k, 1], wM[k, 2],
                        wF[k, 0], wF[k, 1], wF[k, 2], wpb[k, 0], wpb[k, 1], wpb[k, 2], -1.0)
        rate = 0.0
        for j in range(nv):
            rate += C[k, j] * v[j]
        if kd == RowKind.VEL:
            phid[k] = rate - g[k, 0]
            gam[k] = -ddphi0 - 2.0 * alpha * phid[k]
        else:
            phid[k] = rate - g[k, 1]
            gam[k] = -ddphi0 - 2.0 * alpha * phid[k] - beta * beta * phi[k]


@njit(cache=True, error_model="numpy")
def constraint_wrenches(m, d, lam):
    """d.cextM/cextF: the constraint forces λ as external wrenches on the bodies, body
    frame about the body origin (for the reaction pass). After constraint_terms."""
    constraint_wrenches_into(m, d, lam, d.cextM, d.cextF)


@njit(cache=True, error_model="numpy")
def constraint_wrenches_into(m, d, lam, cM, cF):
    """:func:`constraint_wrenches` into the arrays cM, cF (nbody × 3)."""
    nc, nb, kind, ca, cb = m.nc, m.nbody, m.con_kind, m.con_a, m.con_b
    oR, op, wM, wF, wpa, wpb = d.oR, d.op, d.con_wM, d.con_wF, d.con_wpa, d.con_wpb
    for i in range(nb):
        for r in range(3):
            cM[i, r] = 0.0
            cF[i, r] = 0.0
    for k in range(nc):
        if kind[k] == RowKind.COORD:
            continue
        L = lam[k]
        for side in range(2):
            b = ca[k] if side == 0 else cb[k]
            if b < 0:
                continue
            s = L if side == 0 else -L
            F0, F1, F2 = s * wF[k, 0], s * wF[k, 1], s * wF[k, 2]
            if side == 0:
                r0, r1, r2 = wpa[k, 0] - op[b, 0], wpa[k, 1] - op[b, 1], wpa[k, 2] - op[b, 2]
            else:
                r0, r1, r2 = wpb[k, 0] - op[b, 0], wpb[k, 1] - op[b, 1], wpb[k, 2] - op[b, 2]
            t0, t1, t2 = cross(r0, r1, r2, F0, F1, F2)
            M0, M1, M2 = s * wM[k, 0] + t0, s * wM[k, 1] + t1, s * wM[k, 2] + t2
            for c in range(3):
                cF[b, c] += oR[b, 0, c] * F0 + oR[b, 1, c] * F1 + oR[b, 2, c] * F2
                cM[b, c] += oR[b, 0, c] * M0 + oR[b, 1, c] * M1 + oR[b, 2, c] * M2


@njit(cache=True, error_model="numpy")
def anchor_offsets(m, d, q, v, t):
    """Set d.con_off of the rows marked relative so that Φ(q, t) = 0 there (other rows keep
    their offset). Needs nothing beforehand (runs forward_kinematics itself)."""
    nc, rel, off = m.nc, m.con_rel, d.con_off
    for k in range(nc):
        if rel[k] != 0:
            off[k] = 0.0
    forward_kinematics(m, d, q, v)
    constraint_terms(m, d, q, v, t)
    phi = d.con_phi
    for k in range(nc):
        if rel[k] != 0:
            off[k] = phi[k]
