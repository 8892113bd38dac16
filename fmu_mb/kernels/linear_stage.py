"""The stage matrix of the linearly implicit integrators (kernels.linearly_implicit): build,
factor and solve W = I − γhJ for one step.

J (state x = [q, q̇, z, energies], f = [q̇, q̈, ż, powers]). With M q̈ = Q(q, q̇, z) + Cᵀλ and
C q̈ = γ(q, q̇), the stiff part of Q and γ is linearised about the step's start:

    −∂Q/∂q  ≈ K = diag(k_sde) + base_K + Σ_s J_sᵀ S_s J_s         (springs, supports)
    −∂Q/∂q̇  ≈ D = diag(c_sde) + base_D + Σ_s J_sᵀ D_s J_s + diag(L ∂coef/∂q̇ + ∂visc/∂q̇)
    −∂Q/∂z  = diag(L ∂coef/∂z),   ∂ż/∂q̇, ∂ż/∂z per bristle (kernels.friction.law_slopes)
    ∂γ/∂q̇  ≈ −2α C,   ∂γ/∂q ≈ −β² C (holonomic rows)

(J_s the world point Jacobian of support s, L the friction normal load of the step's start; the
velocity products, gravity, geometric stiffness and the loads' dependence on the state are the
non-stiff remainder). Eliminating k_q = r_q + γh k_v and the bristle rows turns each stage into

    [M + γh D + (γh)² K   C_Iᵀ] [k_v]   [M r_v − γh K r_q − γh c_z (1 − γh ∂ż/∂z)⁻¹ r_z          ]
    [C_I                  0   ] [ μ ] = [(C_I r_v − β²γh C_I r_q) / (1 + 2αγh + β²(γh)²)    ]

over the independent rows C_I of the step's partition (kernels.partition). The matrix is
factored once per step with partial pivoting; GPME and Lagrange derivatives use the same stage
solve (the two formulations differ in f only).
"""
from __future__ import annotations

from numba import njit

from ..codes import RowKind, SolverOption, Work
from .constraints import add_wrench_row, joint_axes
from .dynamics import loop_jacobian
from .forces import stop_penetration
from .friction import law_slopes
from .kinematics import point_position
from .linalg import lu_factor, lu_solve


@njit(cache=True, error_model="numpy")
def _support_terms(m, d, gh):
    """Add Σ_s J_sᵀ S_s J_s to d.lin_K and γh·Σ_s J_sᵀ D_s J_s to the stage matrix (exact supports,
    paper 000 eq. 15: world-axis stiffness S and damping D at the attachment point)."""
    nv = m.nv
    sup_body, sup_point, sup_k, sup_d = m.sup_body, m.sup_point, m.sup_k, m.sup_d
    parent, jtype, bdof = m.body_parent, m.body_jtype, m.body_dof
    oR, op, jaxis, J, K, W = d.oR, d.op, d.jaxis, d.lin_J, d.lin_K, d.lin_W
    if sup_body.shape[0] == 0:
        return
    joint_axes(m, d)
    for s in range(sup_body.shape[0]):
        b = sup_body[s]
        px, py, pz = point_position(oR, op, b, sup_point[s, 0], sup_point[s, 1], sup_point[s, 2])
        for a in range(3):
            for j in range(nv):
                J[a, j] = 0.0
            add_wrench_row(parent, jtype, bdof, jaxis, op, J, a, b, 0.0, 0.0, 0.0,
                           1.0 if a == 0 else 0.0, 1.0 if a == 1 else 0.0, 1.0 if a == 2 else 0.0,
                           px, py, pz, 1.0)
        for a in range(3):
            ks, ds = sup_k[s, a], gh * sup_d[s, a]
            for i in range(nv):
                ji = J[a, i]
                if ji == 0.0:
                    continue
                for j in range(nv):
                    K[i, j] += ks * ji * J[a, j]
                    W[i, j] += ds * ji * J[a, j]


@njit(cache=True, error_model="numpy")
def _friction_terms(m, d, v, z, h, gh):
    """Friction rows of the stage matrix (d.qdd: the accelerations at the step's start, which pick
    the side of a law's kink, kernels.friction.law_slopes). The torques solve τ_f = coef(q̇, z)∘L(W₀ + S τ_f) + visc(q̇)
    (kernels.dynamics), so their slopes carry the loop's factor G = (I − diag(coef)·∂L/∂W·S)⁻¹:
    ∂τ_f/∂q̇_j = G[:, j]·(L_j ∂coef_j/∂q̇_j + ∂visc_j/∂q̇_j), ∂τ_f/∂z_j = G[:, j]·L_j ∂coef_j/∂z_j. Each
    bristle row is eliminated: k_z = (r_z + γh ∂ż/∂q̇ k_v)/(1 − γh ∂ż/∂z).

    Falling slopes stay out of the matrix. Where a joint's effective slope (its own and through
    its bristle) is negative — Stribeck's falling branch, or a LuGre bristle deflected beyond its
    sliding value while the joint breaks away (then σ1·∂ż/∂q̇ < 0) — the mode it drives grows
    physically: on the RPSUP (flexible base and coupler, LuGre σ1 = 30 s/rad) the full Jacobian has
    λ = +560 1/s at t = 0.639 s, from R22 (load 0.018 N·m) and the coupler's last sdes. A linearly
    implicit stage has a pole at γhλ = 1 (γh = 1.7 ms at h = 1 ms: γhλ = 0.95, the stage
    amplified k₁ 19-fold and the run diverged). Left out (∂τ_f/∂q̇, ∂τ_f/∂z, ∂ż/∂q̇ := 0 for that
    joint; the bristle keeps its own decay rate), the mode is integrated explicitly, where the
    method is Heun's, and W-methods keep their order for any such choice."""
    fdofs, code, zidx, par, load = m.fric_dofs, m.dof_fric_law, m.dof_fric_z, m.dof_fric_par, d.fric_load
    col, G, W, cz, zz, zv = d.fric_dt, d.lin_G, d.lin_W, d.lin_cz, d.lin_zz, d.lin_zv
    nf = fdofs.shape[0]
    loop_jacobian(m, d)                            # G column by column from one LU (its pivots in
    regular = lu_factor(d.fric_J, nf, d.lin_piv) > 0.0   # lin_piv, factored again below)
    for j in range(nf):
        for k in range(nf):
            col[k] = 1.0 if k == j else 0.0
        if regular:                                # (a self-locking loop: its factor left out)
            lu_solve(d.fric_J, nf, d.lin_piv, col)
        for k in range(nf):
            G[k, j] = col[k]
    for j in range(nf):
        dj = fdofs[j]
        zi = zidx[dj]
        dc_dv, dvis_dv, dc_dz, dzd_dv, dzd_dz = law_slopes(code[dj], par, dj, v[dj], z[zi] if zi >= 0 else 0.0,
                                                           v[dj] + h * d.qdd[dj])
        cv = load[dj] * dc_dv + dvis_dv
        cz[j] = 0.0
        if zi >= 0:
            den = 1.0 - gh * dzd_dz
            zz[zi] = 1.0 / den
            zv[zi] = gh * dzd_dv / den
            cz[j] = load[dj] * dc_dz
            cv += cz[j] * zv[zi]
        if cv.real < 0.0:                          # a falling slope: its mode grows, leave it explicit
            cv = 0.0
            cz[j] = 0.0
            if zi >= 0:
                zv[zi] = 0.0
        for k in range(nf):
            W[fdofs[k], dj] += gh * G[k, j] * cv


@njit(cache=True, error_model="numpy")
def stage_matrix(m, d, x, h, gh):
    """Build and factor the stage matrix of a step of size h (gh = γh, the method's γ) at the state x whose
    pipeline ran last (kinematics, M, friction loads, and for constrained mechanisms C and the
    partition are those of x). Returns False if it is singular."""
    nv, nz, r = m.nv, m.nz, d.cp_rank[0] if m.nc > 0 else 0
    M, W, K, Ms, Cs = d.M, d.lin_W, d.lin_K, d.lin_M, d.lin_C
    d.work[Work.STAGE_MATRICES] += 1
    v = x[nv:2 * nv]
    z = x[2 * nv:2 * nv + nz]
    n = nv + r
    for i in range(n):
        for j in range(n):
            W[i, j] = 0.0
    for i in range(nv):
        for j in range(nv):
            Ms[i, j] = M[i, j]
            K[i, j] = 0.0
            W[i, j] = M[i, j]
    for k in range(nv):                            # joint springs and dampers (RFEM sdes)
        K[k, k] += m.dof_k[k]
        W[k, k] += gh * m.dof_c[k]
        if m.dof_stop_k[k] > 0.0:                  # a joint stop engaged now or reached within the step
            reach = x[k] + 4.0 * gh * v[k]         # (4γh ≥ 1.17h: its stiffness and damping in the
            if stop_penetration(m, x, k) != 0.0 or reach.real > m.dof_hi[k] or reach.real < m.dof_lo[k]:
                K[k, k] += m.dof_stop_k[k]         # W-method Jacobian before the stage that enters it)
                W[k, k] += gh * m.dof_stop_c[k]
    b = m.base_dof[0]
    if b >= 0:                                     # linearized base supports (paper 001 eq. 4)
        for i in range(6):
            for j in range(6):
                K[b + i, b + j] += m.base_K[i, j]
                W[b + i, b + j] += gh * m.base_D[i, j]
    _support_terms(m, d, gh)
    for i in range(nv):
        for j in range(nv):
            W[i, j] += gh * gh * K[i, j]
    _friction_terms(m, d, v, z, h, gh)
    if r > 0:
        C, rows, kind = d.con_C, d.cp_rows, m.con_kind
        alpha, beta = d.solver_opt[SolverOption.ALPHA], d.solver_opt[SolverOption.BETA]
        for i in range(r):
            row = rows[i]
            bq = 0.0 if kind[row] == RowKind.VEL else beta * beta
            d.lin_rs[i] = 1.0 / (1.0 + 2.0 * alpha * gh + bq * gh * gh)
            d.lin_rb[i] = bq * gh
            for j in range(nv):
                Cs[i, j] = C[row, j]
                W[nv + i, j] = C[row, j]
                W[j, nv + i] = C[row, j]
    d.lin_n[0] = n
    return lu_factor(W, n, d.lin_piv) > 0.0


@njit(cache=True, error_model="numpy")
def stage_solve(m, d, res, k, gh):
    """k = (I − γhJ)⁻¹ res (after :func:`stage_matrix`); res and k of length nx, not aliased."""
    nv, nz, nx, n = m.nv, m.nz, m.nx, d.lin_n[0]
    Ms, K, Cs, rhs, zidx, fdof = d.lin_M, d.lin_K, d.lin_C, d.lin_b, m.dof_fric_z, m.fric_dofs
    i = 0
    while i + 3 < nv:                                 # four rows at a time: four independent sums, each in
        s0 = s1 = s2 = s3 = 0.0                       # the one-row order (the same bits)
        for j in range(nv):
            rv, rq = res[nv + j], res[j]
            s0 += Ms[i, j] * rv - gh * K[i, j] * rq
            s1 += Ms[i + 1, j] * rv - gh * K[i + 1, j] * rq
            s2 += Ms[i + 2, j] * rv - gh * K[i + 2, j] * rq
            s3 += Ms[i + 3, j] * rv - gh * K[i + 3, j] * rq
        rhs[i], rhs[i + 1], rhs[i + 2], rhs[i + 3] = s0, s1, s2, s3
        i += 4
    while i < nv:
        s = 0.0
        for j in range(nv):
            s += Ms[i, j] * res[nv + j] - gh * K[i, j] * res[j]
        rhs[i] = s
        i += 1
    nf = fdof.shape[0]
    for j in range(nf):                               # bristle residuals through the friction torques
        zi = zidx[fdof[j]]
        if zi >= 0:
            w = gh * d.lin_cz[j] * d.lin_zz[zi] * res[2 * nv + zi]
            for i in range(nf):
                rhs[fdof[i]] -= d.lin_G[i, j] * w
    for i in range(n - nv):
        s = 0.0
        for j in range(nv):
            s += Cs[i, j] * (res[nv + j] - d.lin_rb[i] * res[j])
        rhs[nv + i] = s * d.lin_rs[i]
    lu_solve(d.lin_W, n, d.lin_piv, rhs)
    for i in range(nv):
        k[nv + i] = rhs[i]
        k[i] = res[i] + gh * rhs[i]
    for t in range(fdof.shape[0]):
        kk = fdof[t]
        zi = zidx[kk]
        if zi >= 0:
            k[2 * nv + zi] = d.lin_zz[zi] * res[2 * nv + zi] + d.lin_zv[zi] * rhs[kk]
    for i in range(2 * nv + nz, nx):
        k[i] = res[i]
