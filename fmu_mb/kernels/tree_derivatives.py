"""Analytical derivatives of a rigid tree's inverse dynamics and forward dynamics.

For the trees without exact supports, body forces or constraint rows (:func:`plain_tree`) the state derivative's
Jacobian follows from the derivatives of the recursive Newton–Euler pass at the motion's own q̈ (Carpentier &
Mansard, RSS 2018, "Analytical derivatives of rigid body dynamics algorithms", eqs. 8–11 and Algorithm 1;
Pinocchio's ``computeABADerivatives`` does the same); without friction:

    ∂q̈/∂q = M⁻¹ (∂τ_pas/∂q − ∂τ_ID/∂q),   ∂q̈/∂q̇ = M⁻¹ (∂τ_pas/∂q̇ − ∂τ_ID/∂q̇),   ∂q̈/∂τ = M⁻¹,

τ_ID(q, q̇, q̈) = M q̈ + b the inverse dynamics (kernels.rnea) and τ_pas the joint springs, dampers, stops and
linearized base supports (kernels.forces). All in one pass over the pairs (j, k ⪰ j), no evaluation per column.

The derivatives are taken in world coordinates, where a joint j moving rotates its whole subtree about its
motion axis S_j (a spatial motion vector at the world origin, (ω, v_O) order): for bodies k ⪰ j

    ∂S_k/∂q_j = S_j × S_k,   ∂V_k/∂q_j = S_j × (V_k − V_λ(j)),
    ∂A_k/∂q_j = S_j × (A_k − A_λ(j)) − (S_j × V_λ(j)) × (V_k − V_λ(j)),
    ∂Y_k/∂q_j = S_j ×* Y_k − Y_k S_j ×,
    ∂V_k/∂q̇_j = S_j,   ∂A_k/∂q̇_j = S_j × V_k − 2 S_j × V_λ(j),

(V, A spatial velocity and acceleration, gravity folded in as the ground's acceleration −g; Y the spatial
inertia), and τ_i = S_iᵀ Σ_{k ⪰ i} f_k with f_k = Y_k A_k + V_k ×* Y_k V_k, so ∂τ_i/∂q_j = (S_j × S_i)ᵀ F_i +
S_iᵀ Σ_{k ⪰ i} ∂f_k/∂q_j for i ⪰ j and S_iᵀ Σ_{k ⪰ j} ∂f_k/∂q_j for i ≺ j (0 for unrelated i, j). The cost is
O(n · subtree size): n²/2 pairs on a chain, which for the trees of the papers and of URDF robots is a few
evaluations' worth; Carpentier's composite form is O(n · depth).

Joint friction (papers 000 eq. 21–22, 001 eq. 13–15, 002 eqs. 42, 47, 52) makes the friction torques depend on
the friction joints' reaction wrenches W_k(q, q̇, q̈) — the same subtree sums F_k, seen in body k's frame — so the
same pass also gives ∂W_k along q, q̇ and q̈, and the Jacobian is that of the implicit function of the friction ↔
reaction loop (:func:`tree_jacobian`).
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType
from .constraints import to_world
from .crba import crba
from .dynamics import state_derivative
from .forces import stop_penetration
from .friction import law, load_and_gradient
from .jacobian import share_run_state
from .linalg import chol_solve, cholesky, lu_factor, lu_solve


@njit(cache=True, error_model="numpy", inline="always")
def _mcross(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """Motion × motion: (ω_a × ω_b, ω_a × v_b + v_a × ω_b)."""
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0,
            a1 * b5 - a2 * b4 + a4 * b2 - a5 * b1,
            a2 * b3 - a0 * b5 + a5 * b0 - a3 * b2,
            a0 * b4 - a1 * b3 + a3 * b1 - a4 * b0)


@njit(cache=True, error_model="numpy", inline="always")
def _fcross(a0, a1, a2, a3, a4, a5, n0, n1, n2, f0, f1, f2):
    """Motion ×* force: (ω × n + v × f, ω × f)."""
    return (a1 * n2 - a2 * n1 + a4 * f2 - a5 * f1,
            a2 * n0 - a0 * n2 + a5 * f0 - a3 * f2,
            a0 * n1 - a1 * n0 + a3 * f1 - a4 * f0,
            a1 * f2 - a2 * f1, a2 * f0 - a0 * f2, a0 * f1 - a1 * f0)


@njit(cache=True, error_model="numpy", inline="always")
def _inertia(Y, k, w0, w1, w2, v0, v1, v2):
    """Y_k · (ω, v_O) with Y_k = (mass, world centre of mass, world inertia about it) in Y[k, 0:13]:
    h = m (v_O + ω × c), n = I ω + c × h."""
    m, c0, c1, c2 = Y[k, 0], Y[k, 1], Y[k, 2], Y[k, 3]
    h0 = m * (v0 + w1 * c2 - w2 * c1)
    h1 = m * (v1 + w2 * c0 - w0 * c2)
    h2 = m * (v2 + w0 * c1 - w1 * c0)
    n0 = Y[k, 4] * w0 + Y[k, 5] * w1 + Y[k, 6] * w2 + c1 * h2 - c2 * h1
    n1 = Y[k, 7] * w0 + Y[k, 8] * w1 + Y[k, 9] * w2 + c2 * h0 - c0 * h2
    n2 = Y[k, 10] * w0 + Y[k, 11] * w1 + Y[k, 12] * w2 + c0 * h1 - c1 * h0
    return n0, n1, n2, h0, h1, h2


@njit(cache=True, error_model="numpy", inline="always")
def _row_dot(a, i, b, k):
    """a[i, :6] · b[k, :6]: a motion axis on a force (the joint's share of it)."""
    return (a[i, 0] * b[k, 0] + a[i, 1] * b[k, 1] + a[i, 2] * b[k, 2] + a[i, 3] * b[k, 3] + a[i, 4] * b[k, 4]
            + a[i, 5] * b[k, 5])


@njit(cache=True, error_model="numpy")
def plain_tree(m):
    """True if the analytical path covers the mechanism: a tree (no constraint rows) without exact supports or
    body-force inputs (their forces depend on the placements: the complex step takes them, kernels.jacobian);
    joint friction of every law and load form, bristle states included, it covers (:func:`tree_jacobian`)."""
    return m.nc == 0 and m.sup_body.shape[0] == 0 and m.bf_body.shape[0] == 0


@njit(cache=True, error_model="numpy")
def _world_terms(m, d, v, qdd, S, V, A, Y, YA, YV, F):
    """World motion axes S, velocities V, accelerations A (gravity folded in), inertias Y (and Y A, Y V) and
    the subtree sums F of the bodies' forces f = Y A + V ×* Y V, after forward_kinematics at (q, q̇)."""
    nb, parent, jtype, ax, dof, g = m.nbody, m.body_parent, m.body_jtype, m.body_axis, m.body_dof, m.gravity
    mass, com, Ic, oR, op = m.body_mass, m.body_com, m.body_Ic, d.oR, d.op
    for k in range(nb):
        jt = jtype[k]
        a0, a1, a2 = to_world(oR, k, ax[k, 0], ax[k, 1], ax[k, 2])
        if jt == JointType.REVOLUTE:
            p0, p1, p2 = op[k, 0], op[k, 1], op[k, 2]
            S[k, 0], S[k, 1], S[k, 2] = a0, a1, a2
            S[k, 3], S[k, 4], S[k, 5] = p1 * a2 - p2 * a1, p2 * a0 - p0 * a2, p0 * a1 - p1 * a0
        elif jt == JointType.PRISMATIC:
            S[k, 0], S[k, 1], S[k, 2], S[k, 3], S[k, 4], S[k, 5] = 0.0, 0.0, 0.0, a0, a1, a2
        else:
            for r in range(6):
                S[k, r] = 0.0
        qd, qa = 0.0, 0.0
        if jt != JointType.FIXED:
            qd, qa = v[dof[k]], qdd[dof[k]]
        p = parent[k]
        for r in range(6):
            V[k, r] = (V[p, r] if p >= 0 else 0.0) + S[k, r] * qd
        if p >= 0:
            c = _mcross(V[k, 0], V[k, 1], V[k, 2], V[k, 3], V[k, 4], V[k, 5],
                        S[k, 0], S[k, 1], S[k, 2], S[k, 3], S[k, 4], S[k, 5])
            for r in range(6):
                A[k, r] = A[p, r] + S[k, r] * qa + c[r] * qd
        else:
            for r in range(6):
                A[k, r] = S[k, r] * qa
            for r in range(3):
                A[k, 3 + r] -= g[r]
        # world inertia: mass, centre of mass, R Ic Rᵀ
        Y[k, 0] = mass[k]
        for r in range(3):
            Y[k, 1 + r] = op[k, r] + oR[k, r, 0] * com[k, 0] + oR[k, r, 1] * com[k, 1] + oR[k, r, 2] * com[k, 2]
        for r in range(3):
            for c2 in range(3):
                s = 0.0
                for i in range(3):
                    for j in range(3):
                        s += oR[k, r, i] * Ic[k, i, j] * oR[k, c2, j]
                Y[k, 4 + 3 * r + c2] = s
        ya = _inertia(Y, k, A[k, 0], A[k, 1], A[k, 2], A[k, 3], A[k, 4], A[k, 5])
        yv = _inertia(Y, k, V[k, 0], V[k, 1], V[k, 2], V[k, 3], V[k, 4], V[k, 5])
        for r in range(6):
            YA[k, r] = ya[r]
            YV[k, r] = yv[r]
        gy = _fcross(V[k, 0], V[k, 1], V[k, 2], V[k, 3], V[k, 4], V[k, 5], yv[0], yv[1], yv[2], yv[3], yv[4], yv[5])
        for r in range(6):
            F[k, r] = ya[r] + gy[r]
    for k in range(nb - 1, -1, -1):
        p = parent[k]
        if p >= 0:
            for r in range(6):
                F[p, r] += F[k, r]


@njit(cache=True, error_model="numpy")
def rnea_derivatives(m, d, v, qdd, dtau_dq, dtau_dv, tau, w6, Y, inside, rho, T):
    """dtau_dq = ∂τ_ID/∂q, dtau_dv = ∂τ_ID/∂q̇ (nv, nv) of the inverse dynamics τ_ID = M(q) q̈ + b(q, q̇) (gravity
    included, no external wrenches) at (q, q̇, q̈) (module docstring), and τ_ID itself into ``tau`` (it equals
    kernels.rnea's d.tau: the check of the world terms). Reads forward_kinematics's placements at q (d.oR, d.op).

    With friction joints (m.fric_dofs, n_f of them) also the derivatives of their reaction wrenches W_k (body frame,
    kernels.rnea's d.fM/fF) seen through the rows ``rho`` (n_f, 6; :func:`_load_rows`): T[0, k, c] = ρ_k·∂W_k/∂q_c,
    T[1] along q̇_c, T[2] along q̈_c (a third pass, ∂f_i/∂q̈_j = Y_i S_j). W_k is F_k, the world-frame subtree sum at
    body k, in k's frame, which turns with every joint j ⪯ k: ∂(X*_k F_k)/∂q_j = X*_k (∂F_k/∂q_j − S_j ×* F_k).
    Work arrays: w6 (8, nbody, 6), Y (nbody, 13), inside (nbody,) int64."""
    nb, nv, parent, jtype, dof = m.nbody, m.nv, m.body_parent, m.body_jtype, m.body_dof
    fdofs, dof_body = m.fric_dofs, m.dof_body
    nf = fdofs.shape[0]
    S, V, A, YA, YV, F, df, dF = w6[0], w6[1], w6[2], w6[3], w6[4], w6[5], w6[6], w6[7]
    _world_terms(m, d, v, qdd, S, V, A, Y, YA, YV, F)
    g = m.gravity
    for i in range(nb):
        if jtype[i] != JointType.FIXED:
            di = dof[i]
            tau[di] = _row_dot(S, i, F, i) + m.dof_armature[di] * qdd[di]
    for r in range(nv):
        for c in range(nv):
            dtau_dq[r, c] = 0.0
            dtau_dv[r, c] = 0.0
    for j in range(nb):
        if jtype[j] == JointType.FIXED:
            continue
        dj = dof[j]
        s0, s1, s2, s3, s4, s5 = S[j, 0], S[j, 1], S[j, 2], S[j, 3], S[j, 4], S[j, 5]
        p = parent[j]
        if p >= 0:
            vp0, vp1, vp2, vp3, vp4, vp5 = V[p, 0], V[p, 1], V[p, 2], V[p, 3], V[p, 4], V[p, 5]
            ap0, ap1, ap2, ap3, ap4, ap5 = A[p, 0], A[p, 1], A[p, 2], A[p, 3], A[p, 4], A[p, 5]
        else:
            vp0, vp1, vp2, vp3, vp4, vp5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            ap0, ap1, ap2, ap3, ap4, ap5 = 0.0, 0.0, 0.0, -g[0], -g[1], -g[2]
        sv = _mcross(s0, s1, s2, s3, s4, s5, vp0, vp1, vp2, vp3, vp4, vp5)      # S_j × V_λ(j)
        sa = _mcross(s0, s1, s2, s3, s4, s5, ap0, ap1, ap2, ap3, ap4, ap5)      # S_j × A_λ(j)
        for k in range(nb):                        # j's subtree (a parent precedes its children)
            inside[k] = 1 if k == j or (k > j and parent[k] >= 0 and inside[parent[k]] == 1) else 0
        i = parent[j]
        while i >= 0:                              # j's ancestors: 2
            inside[i] = 2
            i = parent[i]
        for pass_ in range(3 if nf > 0 else 2):   # 0: along q_j, 1: along q̇_j, 2: along q̈_j (friction rows only)
            for k in range(j, nb):
                if inside[k] == 0:
                    continue
                w0, w1, w2, w3, w4, w5 = V[k, 0], V[k, 1], V[k, 2], V[k, 3], V[k, 4], V[k, 5]
                if pass_ == 0:
                    # ∂V_k = S_j × (V_k − V_p); ∂A_k − S_j × A_k = −S_j × A_p − (S_j × V_p) × (V_k − V_p);
                    # ∂V_k − S_j × V_k = −S_j × V_p
                    dv = _mcross(s0, s1, s2, s3, s4, s5, w0 - vp0, w1 - vp1, w2 - vp2, w3 - vp3, w4 - vp4, w5 - vp5)
                    c = _mcross(sv[0], sv[1], sv[2], sv[3], sv[4], sv[5],
                                w0 - vp0, w1 - vp1, w2 - vp2, w3 - vp3, w4 - vp4, w5 - vp5)
                    yz = _inertia(Y, k, -sa[0] - c[0], -sa[1] - c[1], -sa[2] - c[2], -sa[3] - c[3],
                                  -sa[4] - c[4], -sa[5] - c[5])
                    yu = _inertia(Y, k, -sv[0], -sv[1], -sv[2], -sv[3], -sv[4], -sv[5])
                    t1 = _fcross(s0, s1, s2, s3, s4, s5, YA[k, 0], YA[k, 1], YA[k, 2], YA[k, 3], YA[k, 4], YA[k, 5])
                    t2 = _fcross(dv[0], dv[1], dv[2], dv[3], dv[4], dv[5],
                                 YV[k, 0], YV[k, 1], YV[k, 2], YV[k, 3], YV[k, 4], YV[k, 5])
                    sy = _fcross(s0, s1, s2, s3, s4, s5, YV[k, 0], YV[k, 1], YV[k, 2], YV[k, 3], YV[k, 4], YV[k, 5])
                    t3 = _fcross(w0, w1, w2, w3, w4, w5, sy[0] + yu[0], sy[1] + yu[1], sy[2] + yu[2],
                                 sy[3] + yu[3], sy[4] + yu[4], sy[5] + yu[5])
                    for r in range(6):
                        df[k, r] = t1[r] + yz[r] + t2[r] + t3[r]
                elif pass_ == 2:                   # ∂A_k/∂q̈_j = S_j
                    ys = _inertia(Y, k, s0, s1, s2, s3, s4, s5)
                    for r in range(6):
                        df[k, r] = ys[r]
                else:
                    # ∂V_k = S_j, ∂A_k = S_j × V_k − 2 S_j × V_p; ∂f_k = Y ∂A + S_j ×* Y V + V ×* Y S_j
                    c = _mcross(s0, s1, s2, s3, s4, s5, w0, w1, w2, w3, w4, w5)
                    ya = _inertia(Y, k, c[0] - 2.0 * sv[0], c[1] - 2.0 * sv[1], c[2] - 2.0 * sv[2],
                                  c[3] - 2.0 * sv[3], c[4] - 2.0 * sv[4], c[5] - 2.0 * sv[5])
                    ys = _inertia(Y, k, s0, s1, s2, s3, s4, s5)
                    t1 = _fcross(s0, s1, s2, s3, s4, s5, YV[k, 0], YV[k, 1], YV[k, 2], YV[k, 3], YV[k, 4], YV[k, 5])
                    t2 = _fcross(w0, w1, w2, w3, w4, w5, ys[0], ys[1], ys[2], ys[3], ys[4], ys[5])
                    for r in range(6):
                        df[k, r] = ya[r] + t1[r] + t2[r]
                for r in range(6):
                    dF[k, r] = df[k, r]
            for k in range(nb - 1, j, -1):         # subtree sums inside j's subtree
                if inside[k] == 1:
                    pk = parent[k]
                    for r in range(6):
                        dF[pk, r] += dF[k, r]
            for kf in range(nf):                   # the friction joints' reactions
                b = dof_body[fdofs[kf]]
                val = 0.0
                if inside[b] == 1:
                    val = _row_dot(rho, kf, dF, b)
                    if pass_ == 0:                 # the frame of b turns with q_j
                        x = _fcross(s0, s1, s2, s3, s4, s5, F[b, 0], F[b, 1], F[b, 2], F[b, 3], F[b, 4], F[b, 5])
                        val -= (rho[kf, 0] * x[0] + rho[kf, 1] * x[1] + rho[kf, 2] * x[2] + rho[kf, 3] * x[3]
                                + rho[kf, 4] * x[4] + rho[kf, 5] * x[5])
                elif inside[b] == 2:               # b ≺ j: the sum over j's subtree
                    val = _row_dot(rho, kf, dF, j)
                T[pass_, kf, dj] = val
            if pass_ == 2:
                continue
            out = dtau_dq if pass_ == 0 else dtau_dv
            for i in range(j, nb):                 # i ⪰ j
                if inside[i] != 1 or jtype[i] == JointType.FIXED:
                    continue
                val = _row_dot(S, i, dF, i)
                if pass_ == 0 and i != j:          # the axis S_i turns with q_j
                    x = _mcross(s0, s1, s2, s3, s4, s5, S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5])
                    val += (x[0] * F[i, 0] + x[1] * F[i, 1] + x[2] * F[i, 2] + x[3] * F[i, 3] + x[4] * F[i, 4]
                            + x[5] * F[i, 5])
                out[dof[i], dj] = val
            i = parent[j]
            while i >= 0:                          # i ≺ j: the sum over j's subtree
                if jtype[i] != JointType.FIXED:
                    out[dof[i], dj] = _row_dot(S, i, dF, j)
                i = parent[i]


@njit(cache=True, error_model="numpy")
def _passive_rows(m, q, Kq, Kv):
    """Kq = ∂τ_pas/∂q, Kv = ∂τ_pas/∂q̇ of the joint-space passive forces (kernels.forces.passive_forces: springs,
    dampers, the stop a coordinate is beyond, the linearized base supports)."""
    nv = m.nv
    for r in range(nv):
        for c in range(nv):
            Kq[r, c] = 0.0
            Kv[r, c] = 0.0
    for k in range(nv):
        Kq[k, k] = -m.dof_k[k]
        Kv[k, k] = -m.dof_c[k]
        if stop_penetration(m, q, k) != 0.0:
            Kq[k, k] -= m.dof_stop_k[k]
            Kv[k, k] -= m.dof_stop_c[k]
    b = m.base_dof[0]
    if b >= 0:
        for r in range(6):
            for c in range(6):
                Kq[b + r, b + c] -= m.base_K[r, c]
                Kv[b + r, b + c] -= m.base_D[r, c]


@njit(cache=True, error_model="numpy")
def _load_rows(m, d, v, z, fw):
    """Per friction joint k (dof c, body b), at the evaluation's reactions W_k = (d.fM[b], d.fF[b]): the row
    fw[1, k] = coef_c (R ∂L/∂n, R ∂L/∂f + p × R ∂L/∂n), so that ∂τ_f,c = fw[1, k]·∂F for a world-frame change ∂F
    of the wrench (kernels.friction.load_and_gradient's ∂L/∂W, R, p body b's placement); and in fw[2, k] the
    law's terms: (L, ∂τ_f/∂q̇_c at the load held, ∂τ_f/∂z, ∂ż/∂q̇_c, ∂ż/∂z) — the law's partials by a complex step
    of kernels.friction.law (one scalar function: its kinks are taken on the side the pipeline's complex step
    takes them)."""
    fdofs, dof_body, jtype, ax, kind, geom = (m.fric_dofs, m.dof_body, m.body_jtype, m.body_axis,
                                              m.dof_fric_load, m.dof_fric_geom)
    code, zidx, par = m.dof_fric_law, m.dof_fric_z, m.dof_fric_par
    W, rho, terms, oR, op = fw[0], fw[1], fw[2], d.oR, d.op
    h = 1e-30
    for k in range(fdofs.shape[0]):
        c = fdofs[k]
        b = dof_body[c]
        for r in range(3):
            W[k, r] = d.fM[b, r]
            W[k, 3 + r] = d.fF[b, r]
        L = load_and_gradient(kind[c], geom, c, jtype[b] == JointType.REVOLUTE, ax[b, 0], ax[b, 1], ax[b, 2], W, k,
                              rho, k)
        cf = d.fric_coef[c]
        a0, a1, a2 = to_world(oR, b, rho[k, 0], rho[k, 1], rho[k, 2])
        f0, f1, f2 = to_world(oR, b, rho[k, 3], rho[k, 4], rho[k, 5])
        p0, p1, p2 = op[b, 0], op[b, 1], op[b, 2]
        rho[k, 0], rho[k, 1], rho[k, 2] = cf * a0, cf * a1, cf * a2
        rho[k, 3] = cf * (f0 + p1 * a2 - p2 * a1)
        rho[k, 4] = cf * (f1 + p2 * a0 - p0 * a2)
        rho[k, 5] = cf * (f2 + p0 * a1 - p1 * a0)
        zi = zidx[c]
        vk = v[c]
        zk = z[zi] if zi >= 0 else 0.0
        cv, sv, zv = law(code[c], par, c, vk + 1j * h, zk + 0j)
        cz, _, zz = law(code[c], par, c, vk + 0j, zk + 1j * h)
        terms[k, 0] = L
        terms[k, 1] = cv.imag / h * L + sv.imag / h
        terms[k, 2] = cz.imag / h * L
        terms[k, 3] = zv.imag / h
        terms[k, 4] = zz.imag / h


@njit(cache=True, error_model="numpy")
def tree_jacobian(m, d_run, d, x, tau, inputs, xdot, A, B, w6, Y, inside, mats, col, fw, T, piv):
    """A = ∂ẋ/∂x, B = ∂ẋ/∂τ_inputs of a :func:`plain_tree` at state x and drive τ (the shapes and the energy
    counters' rows and columns as kernels.jacobian.derivative_jacobian's). One real evaluation of ẋ on ``d`` (a
    work Data given the run's settings from ``d_run``; its q̈ is the motion's), the RNEA derivatives at it, M by
    CRBA, and the solves of 2 nv + nz + ni columns.

    Without friction the columns are M⁻¹ of the force derivatives (Cholesky). With joint friction the motion
    solves G(q, q̇, z, τ, q̈) = τ_ID(q, q̇, q̈) − τ_pas(q, q̇) + τ_f(q̇, z, W(q, q̇, q̈)) − τ = 0 (kernels.dynamics: the
    friction ↔ reaction loop, converged to round-off), so by the implicit function theorem
    ∂q̈ = −(M + ∂τ_f/∂W ∂W/∂q̈)⁻¹ (∂G/∂q ∂q + ∂G/∂q̇ ∂q̇ + ∂G/∂z ∂z − ∂τ) (LU: the friction rows make it
    unsymmetric), the reactions' derivatives from :func:`rnea_derivatives`, the loads' and laws' from
    :func:`_load_rows`. Work arrays: w6, Y, inside as :func:`rnea_derivatives`'s, mats (6, nv, nv), col (nv,),
    fw (3, n_f, 6), T (3, n_f, nv), piv (nv,) int64. Returns 0 if the friction loop found no solution (the joint
    self-locks, kernels.dynamics) or the solve's matrix is singular (M not positive definite)."""
    nv, nz, nx, ni = m.nv, m.nz, x.shape[0], inputs.shape[0]
    fdofs, zidx = m.fric_dofs, m.dof_fric_z
    nf = fdofs.shape[0]
    q, v = x[0:nv], x[nv:2 * nv]
    share_run_state(d_run, d)
    failed = d.fric_fail[0]
    state_derivative(m, d, x, tau, xdot)
    if d.fric_fail[0] != failed:                 # the loop met no solution (it self-locks): not an implicit function
        return 0
    Dq, Dv, Kq, Kv, L, tau_id = mats[0], mats[1], mats[2], mats[3], mats[4], mats[5, 0]
    if nf > 0:
        _load_rows(m, d, v, x[2 * nv:2 * nv + nz], fw)
    rnea_derivatives(m, d, v, d.qdd, Dq, Dv, tau_id, w6, Y, inside, fw[1], T)
    _passive_rows(m, q, Kq, Kv)
    crba(m, d)
    for r in range(nv):
        for c in range(nv):
            L[r, c] = d.M[r, c]
    for k in range(nf):                          # + ∂τ_f/∂q̈ in the friction rows
        for c in range(nv):
            L[fdofs[k], c] += T[2, k, c]
    if nf == 0:
        if not cholesky(L, nv):
            return 0
    elif lu_factor(L, nv, piv) == 0.0:
        return 0
    for r in range(nx):
        for c in range(nx):
            A[r, c] = 0.0
        for c in range(ni):
            B[r, c] = 0.0
    for k in range(nv):
        A[k, nv + k] = 1.0
    terms = fw[2]
    for c in range(2 * nv + nz + ni):            # columns: q, q̇, z, the inputs
        for r in range(nv):
            if c < nv:
                col[r] = Kq[r, c] - Dq[r, c]
            elif c < 2 * nv:
                col[r] = Kv[r, c - nv] - Dv[r, c - nv]
            elif c < 2 * nv + nz:
                col[r] = 0.0
            else:
                col[r] = 1.0 if r == inputs[c - 2 * nv - nz] else 0.0
        for k in range(nf):                      # − the friction torques' explicit derivatives
            fd = fdofs[k]
            if c < 2 * nv:
                col[fd] -= T[0 if c < nv else 1, k, c % nv]
            if c == nv + fd:
                col[fd] -= terms[k, 1]
            if zidx[fd] >= 0 and c == 2 * nv + zidx[fd]:
                col[fd] -= terms[k, 2]
        if nf == 0:
            chol_solve(L, nv, col)
        else:
            lu_solve(L, nv, piv, col)
        for r in range(nv):
            if c < 2 * nv + nz:
                A[nv + r, c] = col[r]
            else:
                B[nv + r, c - 2 * nv - nz] = col[r]
    for k in range(nf):                          # the bristle rates ż(q̇, z)
        zi = zidx[fdofs[k]]
        if zi >= 0:
            A[2 * nv + zi, nv + fdofs[k]] = terms[k, 3]
            A[2 * nv + zi, 2 * nv + zi] = terms[k, 4]
    # energy rates (state layout of fmu_mb.model.compiled): P_diss = Σ c q̇² (+ stops, + q̇ᵀ D q̇ of the base)
    # + Σ τ_f q̇, P_in = τ·q̇: ∂P_diss/∂q̇ = −(Kv + Kvᵀ) q̇ (Kv = −the damping) + the friction power's
    # derivative, ∂P_in/∂q̇ = τ, ∂P_in/∂τ = q̇
    e = 2 * nv + nz
    for c in range(nv):
        s = 0.0
        for r in range(nv):
            s -= (Kv[r, c] + Kv[c, r]) * v[r]
        A[e, nv + c] = s
        A[e + 1, nv + c] = tau[c]
    for k in range(nf):                          # ∂(τ_f q̇)= q̇ ∂τ_f + τ_f ∂q̇, ∂τ_f = explicit + ∂τ_f/∂q̈ ∂q̈
        fd = fdofs[k]
        vf, tf = v[fd], d.tau_fric[fd]
        for c in range(2 * nv + nz + ni):
            s = 0.0
            if c < 2 * nv:
                s = T[0 if c < nv else 1, k, c % nv]
            if c == nv + fd:
                s += terms[k, 1]
            if zidx[fd] >= 0 and c == 2 * nv + zidx[fd]:
                s += terms[k, 2]
            for r in range(nv):
                s += T[2, k, r] * (A[nv + r, c] if c < 2 * nv + nz else B[nv + r, c - 2 * nv - nz])
            if c < 2 * nv + nz:
                A[e, c] += vf * s
            else:
                B[e, c - 2 * nv - nz] += vf * s
        A[e, nv + fd] += tf
    for c in range(ni):
        B[e + 1, c] = v[inputs[c]]
    return 1
