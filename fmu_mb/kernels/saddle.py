"""The constrained equations M q̈ = Q − b + Cᵀλ, C q̈ = γ at a partition: factor and solve.

* **GPME** (paper 000 eqs. 25–26, 33, 37; paper 001 eqs. 16, 20): [Dᵀ M; C_I] q̈ = [Dᵀ(Q − b); γ],
  D = ∂q̇/∂q̇_i = [1; −C_d⁻¹C_i]. The constraint rows give q̈ = D q̈_i + g (g_d = C_d⁻¹γ, g_i = 0,
  eq. 25 differentiated), so the system is solved as Dᵀ M D q̈_i = Dᵀ(Q − b − M g): symmetric
  positive definite of order nv − r, factored by Cholesky (half the work of an LU of the square
  order-nv form, same solution); the multipliers from the dependent rows, C_dᵀλ = (M q̈ − Q + b)_d.
* **Lagrange** (paper 003 eq. 61, paper 004 eq. 11): Cholesky factors of M and of C M⁻¹ Cᵀ.

Redundant rows (paper 004): the canonical multipliers are the minimum-norm λ (λ − N Nᵀ λ, N an
orthonormal basis of null(Cᵀ), built in :func:`factor`) unless the user eliminated rows.
"""
from __future__ import annotations

from numba import njit

from ..codes import Formulation, SolverOption
from .linalg import (back_solve_columns, chol_solve, cholesky, forward_solve_columns, lu_factor, lu_solve,
                     lu_solve_rows, lu_solve_transposed, lu_solve_transposed_columns)
from .scalar import sqrt


#: from this many independent coordinates on, GPME's D is solved for all its columns at once (factor)
_MANY_COLUMNS = 4


@njit(cache=True, error_model="numpy")
def factor(m, d):
    """Factor the constrained system at the current M, C (after crba, constraint_terms and a
    partition). Returns the dependent block's pivot ratio (0: singular)."""
    nc, nv = m.nc, m.nv
    C, M, rows, cols, r = d.con_C, d.M, d.cp_rows, d.cp_cols, d.cp_rank[0]
    Cd, cpiv, L, Z, A, K, Dm, x, N = d.Cd, d.cpiv, d.L, d.Z, d.A, d.gpme_lu, d.Dm, d.l1, d.cp_null
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
        # Dm's column j is e_c + Σ_i x_i e_cols[i], x = −C_d⁻¹ C[:, c]: only the x_i are stored (rows cols[:r]),
        # the rest is implied. Many columns are solved at once (rpsup's 18: 2.2 → 0.5 µs), a few one by one
        # (the mobile robot's one column of order 20: 0.7 µs slower at once, the loops' overhead); the same bits.
        if ni >= _MANY_COLUMNS:
            for i in range(r):
                for j in range(ni):
                    Dm[cols[i], j] = -C[rows[i], cols[r + j]]
            lu_solve_rows(Cd, r, cpiv, Dm, cols, ni)
        else:
            for j in range(ni):
                c = cols[r + j]
                for i in range(r):
                    x[i] = -C[rows[i], c]
                lu_solve(Cd, r, cpiv, x)
                for i in range(r):
                    Dm[cols[i], j] = x[i]
        for j in range(ni):                     # row j of Dmᵀ M = M[c] + Σ_i x_i M[cols[i]]
            c = cols[r + j]
            for k in range(nv):
                K[j, k] = M[c, k]
            for i in range(r):
                a = Dm[cols[i], j]
                if a != 0.0:
                    ci = cols[i]
                    for k in range(nv):
                        K[j, k] += a * M[ci, k]
        for j in range(ni):                     # Dmᵀ M Dm (lower triangle), column l of Dm likewise; the
            for l in range(j + 1):              # sum over i runs along rows of Dm (independent l), in order
                L[j, l] = K[j, cols[r + l]]
            for i in range(r):
                a, ci = K[j, cols[i]], cols[i]
                for l in range(j + 1):
                    L[j, l] += Dm[ci, l] * a
        if not cholesky(L, ni):
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
        nrm = sqrt(nrm)
        for i in range(nc):
            N[i, t] /= nrm
    return ratio


@njit(cache=True, error_model="numpy")
def solve(m, d, f, with_gamma, qdd, lam):
    """q̈ and λ for applied-minus-bias forces f (nv) after :func:`factor`; with_gamma=False
    solves the homogeneous constraint rows (increments)."""
    nc, nv = m.nc, m.nv
    C, M, rows, cols, r, gam = d.con_C, d.M, d.cp_rows, d.cp_cols, d.cp_rank[0], d.con_gam
    L, Z, A, K, Dm, Cd, cpiv, x, y, N = d.L, d.Z, d.A, d.gpme_lu, d.Dm, d.Cd, d.cpiv, d.v1, d.l1, d.cp_null
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
        for i in range(r):                      # particular part g: q̈_d = C_d⁻¹γ, q̈_i = 0
            y[i] = gam[rows[i]] if with_gamma else 0.0
        lu_solve(Cd, r, cpiv, y)
        # (each sum below runs in the order of its index; the loops are nested so that the innermost one
        # updates independent sums, not one long dependent chain)
        for j in range(ni):                     # Dmᵀ(f − M g), with Dm's sparsity (see factor)
            x[j] = f[cols[r + j]]
        for i in range(r):
            ci = cols[i]
            fi, yi = f[ci], y[i]
            for j in range(ni):
                x[j] += Dm[ci, j] * fi - K[j, ci] * yi
        chol_solve(L, ni, x)                    # Dmᵀ M Dm q̈_i = Dmᵀ(f − M g)
        for j in range(ni):
            qdd[cols[r + j]] = x[j]
        for i in range(r):
            qdd[cols[i]] = y[i]
        for j in range(ni):
            xj = x[j]
            for i in range(r):
                qdd[cols[i]] += Dm[cols[i], j] * xj
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
    _minimum_norm(m, d, lam)


@njit(cache=True, error_model="numpy")
def _minimum_norm(m, d, lam):
    """λ − N Nᵀλ: the canonical minimum-norm multipliers (paper 004) unless the user eliminated rows."""
    nc, r, N = m.nc, d.cp_rank[0], d.cp_null
    p = nc - r
    if p > 0 and d.solver_opt[SolverOption.ELIMINATED] == 0.0:
        for t in range(p):
            dot = 0.0
            for i in range(nc):
                dot += N[i, t] * lam[i]
            for i in range(nc):
                lam[i] -= dot * N[i, t]


@njit(cache=True, error_model="numpy")
def solve_friction_increments(m, d):
    """q̈ and λ per unit friction torque of every friction joint k (d.fric_dqdd[j], d.fric_dlam[j]): what
    :func:`solve` gives for f = −e_k without γ, all joints at once after :func:`factor` (the sensitivities of the
    friction ↔ reaction loop, kernels.constrained: q̈ and λ are affine in the friction torques).

    GPME: the particular part is zero, Dmᵀf is row k of Dm negated (k dependent) or −e_j (k the independent
    coordinate j); the Cholesky and LU solves take every column at once in :func:`solve`'s order of operations,
    so every value has :func:`solve`'s bits (a zero may differ in sign); rpsup's 4 joints 4.4 → 2.8 µs,
    the manipulator's 5 4.5 → 2.7 µs. Lagrange, or a single joint (three_loop: 0.06 µs faster so):
    :func:`solve` per joint."""
    nc, nv, fdofs = m.nc, m.nv, m.fric_dofs
    nf = fdofs.shape[0]
    sq, sl = d.fric_dqdd, d.fric_dlam
    if nf < 2 or int(d.solver_opt[SolverOption.FORMULATION]) == Formulation.LAGRANGE:
        fj = d.finc                             # (not v1: solve uses it as scratch)
        for j in range(nf):
            for k in range(nv):
                fj[k] = 0.0
            fj[fdofs[j]] = -1.0
            solve(m, d, fj, False, sq[j], sl[j])
        return
    M, rows, cols, r, K, Dm, Cd, cpiv = d.M, d.cp_rows, d.cp_cols, d.cp_rank[0], d.gpme_lu, d.Dm, d.Cd, d.cpiv
    X, Q, Y = d.inc_x, d.inc_q, d.inc_y
    ni = nv - r
    for j in range(ni):
        for c in range(nf):
            X[j, c] = 0.0
    for c in range(nf):                         # Dmᵀ(−e_k)
        k = fdofs[c]
        for i in range(r):
            if cols[i] == k:
                for j in range(ni):
                    X[j, c] = -Dm[k, j]
        for j in range(ni):
            if cols[r + j] == k:
                X[j, c] = -1.0
    forward_solve_columns(d.L, ni, X, nf)       # Dmᵀ M Dm q̈_i = Dmᵀ f
    back_solve_columns(d.L, ni, X, nf)
    for j in range(ni):
        cj = cols[r + j]
        for c in range(nf):
            Q[cj, c] = X[j, c]
    for i in range(r):                          # q̈_d = Dm_d q̈_i, the sum in j's order
        ci = cols[i]
        for c in range(nf):
            Q[ci, c] = 0.0
        for j in range(ni):
            a = Dm[ci, j]
            for c in range(nf):
                Q[ci, c] += a * X[j, c]
    for i in range(r):                          # C_dᵀλ = (M q̈ − f)_d, the sum in k's order
        ci = cols[i]
        for c in range(nf):
            Y[i, c] = 1.0 if fdofs[c] == ci else 0.0
        for k in range(nv):
            a = M[ci, k]
            for c in range(nf):
                Y[i, c] += a * Q[k, c]
    lu_solve_transposed_columns(Cd, r, cpiv, Y, nf)
    for c in range(nf):
        q, lam = sq[c], sl[c]
        for k in range(nv):
            q[k] = Q[k, c]
        for k in range(nc):
            lam[k] = 0.0
        for i in range(r):
            lam[rows[i]] = Y[i, c]
        _minimum_norm(m, d, lam)
