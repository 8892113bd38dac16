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
from .linalg import chol_solve, cholesky, lu_factor, lu_solve, lu_solve_rows, lu_solve_transposed
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
    p = nc - r
    if p > 0 and d.solver_opt[SolverOption.ELIMINATED] == 0.0:           # canonical minimum-norm multipliers
        for t in range(p):
            dot = 0.0
            for i in range(nc):
                dot += N[i, t] * lam[i]
            for i in range(nc):
                lam[i] -= dot * N[i, t]
