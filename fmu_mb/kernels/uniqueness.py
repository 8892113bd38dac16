"""Reaction solvability of a redundantly constrained mechanism (paper 004 eqs. 21–27)."""
from __future__ import annotations

from numba import njit

from .constraints import constraint_wrenches
from .rnea import rnea_constrained


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
