"""Projection of a state onto the constraints (positions by Newton, then velocities), in the
kinetic-energy metric; used after steps (ConstraintSolver.projection: :func:`project_after_step`, at most
d.solver_opt[SolverOption.PROJECTION_ITERATIONS] Newton iterations, FMU parameter
solver.projection_iteration_limit) and to assemble a start (:func:`project`, at most ASSEMBLY_ITERATIONS)."""
from __future__ import annotations

from numba import njit

from ..codes import RowKind, SolverOption, SolverStat, Work
from .constraints import constraint_terms
from .crba import crba
from .kinematics import forward_kinematics
from .linalg import back_solve, chol_solve, cholesky, forward_solve_columns, gram, pivoted_cholesky
from .scalar import carries_derivative

#: position-Newton iterations an assembly may take (a start far from the constraints; steps take the solver's cap)
ASSEMBLY_ITERATIONS = 25


@njit(cache=True, error_model="numpy")
def project(m, d, x, t, groups):
    """:func:`project_bounded` with at most ASSEMBLY_ITERATIONS Newton iterations (assembling a start)."""
    return project_bounded(m, d, x, t, groups, ASSEMBLY_ITERATIONS)


@njit(cache=True, error_model="numpy")
def project_after_step(m, d, x, t, groups):
    """:func:`project_bounded` with the solver's cap (d.solver_opt[SolverOption.PROJECTION_ITERATIONS]), counted
    in d.work (codes.Work)."""
    maxit = int(d.solver_opt[SolverOption.PROJECTION_ITERATIONS].real)
    it = project_bounded(m, d, x, t, groups, maxit)
    n = int(d.con_stats[SolverStat.PROJECTION_ITERATIONS].real)
    w = d.work
    w[Work.PROJECTIONS] += 1
    w[Work.PROJECTION_ITERATIONS] += n
    if n > w[Work.PROJECTION_MOST]:
        w[Work.PROJECTION_MOST] = n
    return it


@njit(cache=True, error_model="numpy")
def project_bounded(m, d, x, t, groups, maxit):
    """Solve the holonomic rows for the positions and all rows for the velocities, keeping
    the state as close as possible in the kinetic-energy metric (rows of the constraint
    groups with groups[g] != 0 only):
    Δq = −M⁻¹C_Hᵀ(C_H M⁻¹ C_Hᵀ)⁺Φ_H (Newton, to ``projection_tol``), then
    Δq̇ = −M⁻¹Cᵀ(C M⁻¹ Cᵀ)⁺Φ̇. Redundant rows are skipped by a pivoted Cholesky factor. With M = L Lᵀ and
    Z = L⁻¹Cᵀ (one forward substitution for all rows), C M⁻¹ Cᵀ = Zᵀ Z and M⁻¹Cᵀ y = L⁻ᵀ(Z y): one back
    substitution instead of one per row.
    At most ``maxit`` Newton iterations (maxit + 1 passes of kinematics and constraint terms, maxit + 1 of M and
    factorizations: the velocity sweep runs at the last position pass's kinematics and terms). Returns the Newton
    iterations (−1 if they did not converge)."""
    nv, nc, kind, tol, group = m.nv, m.nc, m.con_kind, d.solver_opt[SolverOption.PROJECTION_TOL], m.con_group
    phi, phid, C, M, L, Z, A, perm, y, dx = d.con_phi, d.con_phid, d.con_C, d.M, d.L, d.Z, d.A, d.cpiv, d.l1, \
        d.v1
    q = x[0:nv]
    v = x[nv:2 * nv]
    it = 0
    perr = 0.0
    for sweep in range(2):                      # 0: positions, 1: velocities
        while True:
            if sweep == 0:                      # (the velocity sweep runs at the last position pass's q, q̇)
                forward_kinematics(m, d, q, v)
                constraint_terms(m, d, q, v, t)
                err = 0.0
                for k in range(nc):
                    if kind[k] != RowKind.VEL and groups[group[k]] != 0:
                        err = max(err, abs(phi[k]))
                if (err <= tol and (it > 0 or not carries_derivative(q))) or it >= maxit:
                    perr = err
                    break
            crba(m, d)                          # M only where a solve needs it
            for i in range(nv):
                for j in range(nv):
                    L[i, j] = M[i, j]
            cholesky(L, nv)
            for j in range(nv):                 # Z = L⁻¹Cᵀ (rows not used: zero columns), all rows at once
                for k in range(nc):
                    use = (sweep == 1 or kind[k] != RowKind.VEL) and groups[group[k]] != 0
                    Z[j, k] = C[k, j] if use else 0.0
            forward_solve_columns(L, nv, Z, nc)
            gram(Z, nv, nc, A)                  # C M⁻¹ Cᵀ = Zᵀ Z
            r = pivoted_cholesky(A, nc, perm, 1e-12)
            for i in range(r):
                y[i] = phid[perm[i]] if sweep == 1 else phi[perm[i]]
            chol_solve(A, r, y)
            for j in range(nv):                 # M⁻¹Cᵀ y = L⁻ᵀ (Z y)
                s = 0.0
                for i in range(r):
                    s += Z[j, perm[i]] * y[i]
                dx[j] = s
            back_solve(L, nv, dx)
            if sweep == 0:
                for j in range(nv):
                    q[j] -= dx[j]
                it += 1
            else:
                for j in range(nv):
                    v[j] -= dx[j]
                break
    d.con_stats[SolverStat.PROJECTION_ITERATIONS] = it
    d.con_stats[SolverStat.PROJECTION_RESIDUAL] = perr
    return it if perr <= tol else -1
