"""Constrained dynamics: coordinate partitioning, the GPME and Lagrange forms, reactions.

Equations (rows of C = [Φ_q; Ψ] and γ from kernels.constraints):

    M q̈ = Q − b + Cᵀλ,     C q̈ = γ,

Q the applied generalized forces (drives, springs, dampers, −friction), b the
velocity products and gravity (supports included). Two ways to solve them
(ConstraintSolver.formulation, identical in exact arithmetic):

* **GPME** (paper 000 eqs. 25–26, 33, 37; paper 001 eqs. 16, 20): partition q into
  dependent q_d (one per independent row) and independent q_i, so that
  q̇_d = −C_d⁻¹ C_i q̇_i (eq. 25) and D = ∂q̇/∂q̇_i = [1; −C_d⁻¹C_i]; the dynamic
  equations projected on the independent coordinates plus the constraints,
  [Dᵀ M; C] q̈ = [Dᵀ(Q − b); γ] (the (M_ic + M_dc), h_ic + h_dc, Q_ic + Q_dc rows of
  eq. 26), form one square system, factored by LU with partial pivoting. The
  multipliers follow from the dependent rows of M q̈ − Q + b = Cᵀλ: C_dᵀλ = (…)_d.
* **Lagrange** (paper 003 eq. 61, paper 004 eq. 11): Cholesky factors of M and of
  C M⁻¹ Cᵀ; λ = (C M⁻¹Cᵀ)⁻¹(γ − C M⁻¹(Q − b)), q̈ = M⁻¹(Q − b + Cᵀλ).

**Partitioning** (both forms need the independent rows): Gaussian elimination with
complete pivoting on C, rows scaled to unit max-norm, picks the independent rows
(row pivots), the rank r and the dependent coordinates (column pivots). A user
choice of dependent coordinates (paper 001 eq. 11) is tried first and kept if it
reaches the full rank. The partition is kept from step to step and redone when
the dependent block's pivot ratio min|u_ii|/max|u_ii| drops below
``repartition_ratio`` (an ill-conditioned C_d, e.g. near a singular position).

**Redundancy** (paper 004): rows not among the independent ones are dependent
(p = rows − r). Their multipliers are not determined by the rigid model. The
canonical report is the **minimum-norm λ** of all solutions (invariant to the order
of the equations): λ_elim − N Nᵀ λ_elim with N an orthonormal basis of null(Cᵀ),
built from the dependent rows' expansion in the independent ones. Alternatively the
user eliminates rows (paper 004 §3.1: their λ = 0). A reaction is unique iff it
does not change along null(Cᵀ) (paper 004 eqs. 21–27: B_X = C_Xᵀ Q_X^col, Q^col
spanning null(Cᵀ)); :func:`uniqueness` applies this to constraint rows and, through
the reaction pass, to every tree joint.

**Reactions**: the constraint forces λ act as wrenches on the bodies
(kernels.constraints), so the recursive Newton–Euler pass with them
(rnea.rnea_constrained) gives every tree joint's reaction in a closed loop.
**Friction**: q̈, λ and the reactions are affine in the friction torques, so the
friction ↔ reaction loop is solved exactly as in the tree case (kernels.dynamics):
one extra solve per friction joint gives the sensitivity, then Newton.
"""
from __future__ import annotations

import math

from numba import njit

from ..codes import Formulation, RowKind, SolverOption, SolverStat
from .constraints import constraint_terms, constraint_wrenches
from .crba import crba
from .dynamics import _newton, write_state_derivative
from .forces import passive_forces
from .friction import friction_laws
from .kinematics import forward_kinematics
from .linalg import chol_solve, cholesky, lu_factor, lu_solve, lu_solve_transposed, pivoted_cholesky
from .rnea import rnea, rnea_constrained

# ----------------------------------------------------------------------------- partitioning
@njit(cache=True, error_model="numpy")
def _eliminate(W, rows, cols, na, nsearch, ncols, tol):
    """Complete-pivoting elimination on W[rows[:na], cols[:ncols]], pivot columns searched
    among cols[:nsearch]. Permutes rows/cols; returns the rank."""
    r = 0
    while r < na and r < nsearch:
        best, bi, bj = 0.0, -1, -1
        for i in range(r, na):
            ri = rows[i]
            for j in range(r, nsearch):
                a = abs(W[ri, cols[j]])
                if a > best:
                    best, bi, bj = a, i, j
        if best <= tol:
            break
        rows[r], rows[bi] = rows[bi], rows[r]
        cols[r], cols[bj] = cols[bj], cols[r]
        pr, pc = rows[r], cols[r]
        inv = 1.0 / W[pr, pc]
        for i in range(r + 1, na):
            ri = rows[i]
            f = W[ri, pc] * inv
            if f != 0.0:
                for j in range(r, ncols):
                    W[ri, cols[j]] -= f * W[pr, cols[j]]
        r += 1
    return r


@njit(cache=True, error_model="numpy")
def _load_scaled(m, d, rows):
    """W = C with rows scaled to unit max-norm; rows: non-eliminated first. Returns their count."""
    nc, nv, C, W, elim = m.nc, m.nv, d.con_C, d.cs1, m.con_elim
    na = 0
    for k in range(nc):
        if elim[k] == 0:
            rows[na] = k
            na += 1
    e = na
    for k in range(nc):
        if elim[k] != 0:
            rows[e] = k
            e += 1
    for k in range(nc):
        s = 0.0
        for j in range(nv):
            s = max(s, abs(C[k, j]))
        inv = 1.0 / s if s > 0.0 else 0.0
        for j in range(nv):
            W[k, j] = C[k, j] * inv
    return na


@njit(cache=True, error_model="numpy")
def partition(m, d):
    """Choose independent rows and dependent coordinates at the current C (d.cp_*)."""
    nv, tol, dep = m.nv, d.solver_opt[SolverOption.RANK_TOL], m.dep_user
    rows, cols = d.cp_rows, d.cp_cols
    na = _load_scaled(m, d, rows)
    for j in range(nv):
        cols[j] = j
    r = _eliminate(d.cs1, rows, cols, na, nv, nv, tol)
    nd = dep.shape[0]
    if nd > 0:
        # try the user's dependent coordinates (paper 001 eq. 11): keep them if they reach rank r
        # d.cpiv (nc,) and d.gpme_piv (nv,) serve as scratch row/column orders here
        na = _load_scaled(m, d, d.cpiv)
        used = 0
        for j in range(nd):
            d.gpme_piv[j] = dep[j]
            used += 1
        for j in range(nv):
            isdep = False
            for k in range(nd):
                if dep[k] == j:
                    isdep = True
            if not isdep:
                d.gpme_piv[used] = j
                used += 1
        r2 = _eliminate(d.cs1, d.cpiv, d.gpme_piv, na, nd, nv, tol)
        if r2 == r:
            for k in range(rows.shape[0]):
                rows[k] = d.cpiv[k]
            for j in range(nv):
                cols[j] = d.gpme_piv[j]
    d.cp_rank[0] = r
    d.cp_valid[0] = 1
    d.cp_count[0] += 1
    d.con_stats[SolverStat.RANK] = r
    d.con_stats[SolverStat.REDUNDANCY] = m.nc - r


# ----------------------------------------------------------------------------- factorization
@njit(cache=True, error_model="numpy")
def factor(m, d):
    """Factor the constrained system at the current M, C (after crba, constraint_terms and a
    partition). Returns the dependent block's pivot ratio (0: singular)."""
    nc, nv = m.nc, m.nv
    C, M, rows, cols, r = d.con_C, d.M, d.cp_rows, d.cp_cols, d.cp_rank[0]
    Cd, cpiv, L, Z, A, K, kpiv, Dm, x, N = d.Cd, d.cpiv, d.L, d.Z, d.A, d.gpme_lu, d.gpme_piv, d.Dm, d.l1, d.cp_null
    for i in range(r):
        for j in range(r):
            Cd[i, j] = C[rows[i], cols[j]]
    ratio = lu_factor(Cd, r, cpiv)
    if ratio == 0.0:
        return 0.0
    if int(d.solver_opt[SolverOption.FORMULATION]) == Formulation.LAGRANGE:
        for i in range(nv):
            for j in range(nv):
                L[i, j] = M[i, j]
        if not cholesky(L, nv):
            return 0.0
        for i in range(r):
            for k in range(nv):
                Z[k, i] = C[rows[i], k]
            chol_solve(L, nv, Z[:, i])
        for i in range(r):
            for j in range(i + 1):
                s = 0.0
                for k in range(nv):
                    s += C[rows[i], k] * Z[k, j]
                A[i, j] = s
                A[j, i] = s
        if not cholesky(A, r):
            return 0.0
    else:
        ni = nv - r
        for j in range(ni):
            c = cols[r + j]
            for k in range(nv):
                Dm[k, j] = 0.0
            Dm[c, j] = 1.0
            for i in range(r):
                x[i] = -C[rows[i], c]
            lu_solve(Cd, r, cpiv, x)
            for i in range(r):
                Dm[cols[i], j] = x[i]
        for j in range(ni):                     # row j of Dmᵀ M: Dm's column j is e_c + Σ_i x_i e_cols[i]
            c = cols[r + j]
            for k in range(nv):
                s = M[c, k]
                for i in range(r):
                    s += Dm[cols[i], j] * M[cols[i], k]
                K[j, k] = s
        for i in range(r):
            for k in range(nv):
                K[ni + i, k] = C[rows[i], k]
        if lu_factor(K, nv, kpiv) == 0.0:
            return 0.0
    # orthonormal basis of null(Cᵀ): each dependent row minus its expansion in the independent ones
    p = nc - r
    for t in range(p):
        k = rows[r + t]
        for i in range(nc):
            N[i, t] = 0.0
        N[k, t] = 1.0
        for i in range(r):
            x[i] = C[k, cols[i]]
        lu_solve_transposed(Cd, r, cpiv, x)
        for i in range(r):
            N[rows[i], t] = -x[i]
        for s in range(t):                       # modified Gram–Schmidt
            dot = 0.0
            for i in range(nc):
                dot += N[i, s] * N[i, t]
            for i in range(nc):
                N[i, t] -= dot * N[i, s]
        nrm = 0.0
        for i in range(nc):
            nrm += N[i, t] * N[i, t]
        nrm = math.sqrt(nrm)
        for i in range(nc):
            N[i, t] /= nrm
    return ratio


@njit(cache=True, error_model="numpy")
def solve(m, d, f, with_gamma, qdd, lam):
    """q̈ and λ for applied-minus-bias forces f (nv) after :func:`factor`; with_gamma=False
    solves the homogeneous constraint rows (increments)."""
    nc, nv = m.nc, m.nv
    C, M, rows, cols, r, gam = d.con_C, d.M, d.cp_rows, d.cp_cols, d.cp_rank[0], d.con_gam
    L, Z, A, K, kpiv, Dm, Cd, cpiv, x, y, N = d.L, d.Z, d.A, d.gpme_lu, d.gpme_piv, d.Dm, d.Cd, d.cpiv, d.v1, d.l1, d.cp_null
    if int(d.solver_opt[SolverOption.FORMULATION]) == Formulation.LAGRANGE:
        for k in range(nv):
            x[k] = f[k]
        chol_solve(L, nv, x)
        for i in range(r):
            s = gam[rows[i]] if with_gamma else 0.0
            for k in range(nv):
                s -= C[rows[i], k] * x[k]
            y[i] = s
        chol_solve(A, r, y)
        for k in range(nv):
            s = x[k]
            for i in range(r):
                s += Z[k, i] * y[i]
            qdd[k] = s
    else:
        ni = nv - r
        for j in range(ni):                     # Dmᵀ f with Dm's sparsity (see factor)
            s = f[cols[r + j]]
            for i in range(r):
                s += Dm[cols[i], j] * f[cols[i]]
            x[j] = s
        for i in range(r):
            x[ni + i] = gam[rows[i]] if with_gamma else 0.0
        lu_solve(K, nv, kpiv, x)
        for k in range(nv):
            qdd[k] = x[k]
        for i in range(r):
            c = cols[i]
            s = -f[c]
            for k in range(nv):
                s += M[c, k] * qdd[k]
            y[i] = s
        lu_solve_transposed(Cd, r, cpiv, y)
    for k in range(nc):
        lam[k] = 0.0
    for i in range(r):
        lam[rows[i]] = y[i]
    p = nc - r
    if p > 0 and d.solver_opt[SolverOption.ELIMINATED] == 0.0:           # canonical minimum-norm multipliers
        for t in range(p):
            dot = 0.0
            for i in range(nc):
                dot += N[i, t] * lam[i]
            for i in range(nc):
                lam[i] -= dot * N[i, t]


# ----------------------------------------------------------------------------- derivative
@njit(cache=True, error_model="numpy")
def prepare(m, d, q, v, t):
    """Kinematics, M, constraint terms and (re)partition + factor at (q, q̇, t). Returns False
    if the constrained system is singular even after re-partitioning."""
    forward_kinematics(m, d, q, v)
    crba(m, d)
    constraint_terms(m, d, q, v, t)
    fresh = d.cp_valid[0] == 0
    if fresh:
        partition(m, d)
    ratio = factor(m, d)
    if not fresh and ratio < d.solver_opt[SolverOption.REPARTITION_RATIO] * d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN]:
        # the dependent block became ill-conditioned (relative to its state when chosen, e.g.
        # near a singular position): choose again at this configuration
        partition(m, d)
        fresh = True
        ratio = factor(m, d)
    if fresh:
        d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN] = ratio
    d.con_stats[SolverStat.PIVOT_RATIO] = ratio
    return ratio > 0.0


@njit(cache=True, error_model="numpy")
def constrained_derivative(m, d, x, t, tau_drive, xdot):
    """xdot = f(x, t) of a constrained mechanism (state layout of fmu_mb.model.compiled).

    Leaves in d: q̈, λ (d.lam), reactions (fM, fF, constraint wrenches included),
    friction loads and torques, the generalized forces of the programmed rows (d.lam_req),
    C, Φ, Φ̇."""
    nv, nz, nc = m.nv, m.nz, m.nc
    fdofs, dof_body, group = m.fric_dofs, m.dof_body, m.con_group
    qdd, tau_fric, td, tau_pas, tau = d.qdd, d.tau_fric, d.tau_drive, d.tau_pas, d.tau
    bias, f, lam, C, lreq = d.bias, d.fvec, d.lam, d.con_C, d.lam_req
    W0, S, tf, iters, resid, fM, fF, dq, dl = d.fric_W0, d.fric_S, d.fric_tf, d.fric_iters, d.fric_resid, \
        d.fM, d.fF, d.v2, d.l2
    q = x[0:nv]
    v = x[nv:2 * nv]
    z = x[2 * nv:2 * nv + nz]
    ok = prepare(m, d, q, v, t)
    p_damp = passive_forces(m, d, q, v)
    friction_laws(m, d, v, z)
    for k in range(nv):
        td[k] = tau_drive[k]
        qdd[k] = 0.0
    rnea(m, d, qdd, True)                         # b(q, q̇) with supports: d.tau
    for k in range(nv):
        bias[k] = tau[k]
        f[k] = tau_drive[k] + tau_pas[k] - bias[k]
        tau_fric[k] = 0.0
    nf = fdofs.shape[0]
    iters[0] = 0
    resid[0] = 0.0
    if not ok:
        for k in range(xdot.shape[0]):
            xdot[k] = math.nan
        return
    solve(m, d, f, True, qdd, lam)
    if nf > 0:
        constraint_wrenches(m, d, lam)
        rnea_constrained(m, d, qdd, True)
        for k in range(nf):
            b = dof_body[fdofs[k]]
            for c in range(3):
                W0[k, c] = fM[b, c]
                W0[k, 3 + c] = fF[b, c]
        fj = d.finc                               # (not v1: solve() uses v1 as scratch)
        for j in range(nf):                       # reaction increments per unit friction torque
            for k in range(nv):
                fj[k] = 0.0
            fj[fdofs[j]] = -1.0
            solve(m, d, fj, False, dq, dl)
            constraint_wrenches(m, d, dl)
            rnea_constrained(m, d, dq, False)
            for k in range(nf):
                b = dof_body[fdofs[k]]
                for c in range(3):
                    S[k, c, j] = fM[b, c]
                    S[k, 3 + c, j] = fF[b, c]
        _newton(m, d)
        for k in range(nf):
            tau_fric[fdofs[k]] = tf[k]
            f[fdofs[k]] -= tf[k]
        solve(m, d, f, True, qdd, lam)
    constraint_wrenches(m, d, lam)
    rnea_constrained(m, d, qdd, True)
    for j in range(nv):
        lreq[j] = 0.0
    p_con = 0.0
    for k in range(nc):
        rate = 0.0
        for j in range(nv):
            rate += C[k, j] * v[j]
        p_con += lam[k] * rate
        if group[k] == 1:
            for j in range(nv):
                lreq[j] += C[k, j] * lam[k]
    write_state_derivative(m, d, v, tau_drive, p_damp, p_con, xdot)


# ----------------------------------------------------------------------------- projection
@njit(cache=True, error_model="numpy")
def project(m, d, x, t, groups):
    """Solve the holonomic rows for the positions and all rows for the velocities, keeping
    the state as close as possible in the kinetic-energy metric (rows of the constraint
    groups with groups[g] != 0 only):
    Δq = −M⁻¹C_Hᵀ(C_H M⁻¹ C_Hᵀ)⁺Φ_H (Newton, to ``projection_tol``), then
    Δq̇ = −M⁻¹Cᵀ(C M⁻¹ Cᵀ)⁺Φ̇. Redundant rows are skipped by a pivoted Cholesky factor.
    Returns the Newton iterations (−1 if they did not converge)."""
    nv, nc, kind, tol, group = m.nv, m.nc, m.con_kind, d.solver_opt[SolverOption.PROJECTION_TOL], m.con_group
    phi, phid, C, M, L, Z, A, perm, y, dx = d.con_phi, d.con_phid, d.con_C, d.M, d.L, d.Z, d.A, d.cpiv, d.l1, \
        d.v1
    q = x[0:nv]
    v = x[nv:2 * nv]
    it = 0
    for sweep in range(2):                      # 0: positions, 1: velocities
        while True:
            forward_kinematics(m, d, q, v)
            crba(m, d)
            constraint_terms(m, d, q, v, t)
            err = 0.0
            for k in range(nc):
                if sweep == 0 and kind[k] != RowKind.VEL and groups[group[k]] != 0:
                    err = max(err, abs(phi[k]))
            if sweep == 0 and (err <= tol or it >= 25):
                break
            for i in range(nv):
                for j in range(nv):
                    L[i, j] = M[i, j]
            cholesky(L, nv)
            for k in range(nc):                 # Z = M⁻¹ Cᵀ (rows not used: zero columns)
                use = (sweep == 1 or kind[k] != RowKind.VEL) and groups[group[k]] != 0
                for j in range(nv):
                    Z[j, k] = C[k, j] if use else 0.0
                chol_solve(L, nv, Z[:, k])
            for i in range(nc):
                for j in range(nc):
                    s = 0.0
                    for k in range(nv):
                        s += C[i, k] * Z[k, j]
                    A[i, j] = s
            r = pivoted_cholesky(A, nc, perm, 1e-12)
            for i in range(r):
                y[i] = phid[perm[i]] if sweep == 1 else phi[perm[i]]
            chol_solve(A, r, y)
            for j in range(nv):
                s = 0.0
                for i in range(r):
                    s += Z[j, perm[i]] * y[i]
                dx[j] = s
            if sweep == 0:
                for j in range(nv):
                    q[j] -= dx[j]
                it += 1
            else:
                for j in range(nv):
                    v[j] -= dx[j]
                break
    d.con_stats[SolverStat.PROJECTION_ITERATIONS] = it
    d.con_stats[SolverStat.PROJECTION_RESIDUAL] = err
    return it if err <= tol else -1


# ----------------------------------------------------------------------------- uniqueness
@njit(cache=True, error_model="numpy")
def uniqueness(m, d, obj_unique, body_unique):
    """Reaction solvability (paper 004 eqs. 21–27) at the last factored state.

    With N an orthonormal basis of null(Cᵀ) (d.cp_null, p columns), λ is determined up to
    N·c. obj_unique[o] = 1 if the rows of constraint object o have zero components in N
    (B_X = C_Xᵀ Q_X^col = 0); body_unique[i] = 1 if the tree-joint reaction of body i does
    not change along any column of N (reaction pass with only those constraint wrenches).
    Tolerance: 1e-8 relative to the largest entry of C (null vectors have unit norm)."""
    nc, nb, obj, r = m.nc, m.nbody, m.con_obj, d.cp_rank[0]
    N, C, fM, fF, qz, lam = d.cp_null, d.con_C, d.fM, d.fF, d.v1, d.l2
    p = nc - r
    scale = 0.0
    for k in range(nc):
        for j in range(m.nv):
            scale = max(scale, abs(C[k, j]))
    tol = 1e-8 * max(scale, 1.0)
    for o in range(obj_unique.shape[0]):
        obj_unique[o] = 1
    for i in range(nb):
        body_unique[i] = 1
    for k in range(nc):
        for t in range(p):
            if abs(N[k, t]) > 1e-8:
                obj_unique[obj[k]] = 0
    for j in range(m.nv):
        qz[j] = 0.0
    for t in range(p):
        for k in range(nc):
            lam[k] = N[k, t]
        constraint_wrenches(m, d, lam)
        rnea_constrained(m, d, qz, False)
        for i in range(nb):
            for c in range(3):
                if abs(fM[i, c]) > tol or abs(fF[i, c]) > tol:
                    body_unique[i] = 0
