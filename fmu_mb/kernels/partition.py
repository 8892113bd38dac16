"""Coordinate partitioning of a constrained mechanism (paper 000 eq. 25, paper 001 eq. 11).

Gaussian elimination with complete pivoting on C = [Φ_q; Ψ], rows scaled to unit max-norm, picks
the independent rows (row pivots), the rank r and the dependent coordinates (column pivots); a
user choice of dependent coordinates is tried first and kept if it reaches the full rank. The
result lives in d.cp_rows, d.cp_cols, d.cp_rank (kernels.constrained decides when to redo it).
"""
from __future__ import annotations

from numba import njit

from ..codes import SolverOption, SolverStat, Work


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
    d.work[Work.PARTITIONS] += 1
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
