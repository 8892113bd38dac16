"""Static equilibrium at rest, in place on a Data (papers 000 and 001 start from statics).

At rest (q̇ = q̈ = 0) the equations of motion (paper 000 eq. 26, paper 001 eq. 23) reduce to

    f(q, λ) = b(q, 0) − τ_pas(q, 0) − τ_held − C_rᵀ λ = 0   on the free coordinates,
    Φ_r(q, t) = 0                                           on the enforced rows r,

b: gravity (rnea at zero rates and accelerations), τ_pas: springs, supports, RFEM sdes, τ_held:
driving forces held (Data.st_tau), C_r = ∂Φ_r/∂q. The coordinates that are not free are held at
their given values; what holds them is f there (``Data.st_f`` after the solve). fmu_mb.statics
chooses the free coordinates and rows and reads the answer; both FMU kinds call this kernel, so
a start from statics is the same bits in Python and in a native FMU.
"""
from __future__ import annotations

import math

from numba import njit

from .constraints import constraint_terms
from .forces import passive_forces
from .kinematics import forward_kinematics
from .linalg import lstsq
from .rnea import rnea


@njit(cache=True, error_model="numpy")
def holding_force(m, d, q, f):
    """f = b(q, 0) − τ_pas(q, 0): the generalized force that holds configuration q at rest."""
    z = d.st_zero
    forward_kinematics(m, d, q, z)
    passive_forces(m, d, q, z)
    rnea(m, d, z, True)
    for k in range(m.nv):
        f[k] = d.tau[k] - d.tau_pas[k]


@njit(cache=True, error_model="numpy")
def _force(m, d, q, t, rows, f):
    """f = b − τ_pas − τ_held − C_rᵀ λ at q (λ = d.st_lam); leaves Φ and C of q in d."""
    holding_force(m, d, q, f)
    for k in range(m.nv):
        f[k] -= d.st_tau[k]
    if rows.shape[0]:
        constraint_terms(m, d, q, d.st_zero, t)
        C, lam = d.con_C, d.st_lam
        for i in range(rows.shape[0]):
            r = rows[i]
            for k in range(m.nv):
                f[k] -= C[r, k] * lam[i]


@njit(cache=True, error_model="numpy")
def _error(d, f, free, rows, fscale):
    """max(|f_free| / fscale, |Φ_r|), NaN if any is not finite."""
    e = 0.0
    for i in range(free.shape[0]):
        a = abs(f[free[i]]) / fscale
        if not math.isfinite(a):
            return math.nan
        e = max(e, a)
    for i in range(rows.shape[0]):
        a = abs(d.con_phi[rows[i]])
        if not math.isfinite(a):
            return math.nan
        e = max(e, a)
    return e


@njit(cache=True, error_model="numpy")
def static_equilibrium(m, d, q, t, free, rows, held_zero, tol, maxit, rel_step, relative):
    """Newton's method on the equations of the module doc for q[free] and λ (d.st_lam), q in place.

    held_zero: coordinates set to zero and held (a fixed base, Φ_b = q^(b) = 0, paper 000 eq. 32);
    the Jacobian ∂f/∂q_free by central differences, coordinate k stepped by rel_step·max(1, |q_k|),
    C_r exact (kernels.constraints); each step the minimum-norm least-squares solution of
    [K −C_fᵀ; C_f 0] Δ = −[f_free; Φ_r] (linalg.lstsq: a redundant closure makes it singular).
    ``relative``: converged when max(|f_free| / s, |Φ_r|) ≤ tol with s = max(1, largest |b − τ_pas|
    at the start) and λ started from the least-squares fit C_fᵀ λ = (b − τ_pas)_free (a 20 t crane's
    forces of 1e4 N do not balance to 1e-9 N); otherwise when max |f_free| ≤ tol (N, N·m), the step
    halved until the residual falls (at most 14 times). Returns the Newton steps taken, −1 without
    convergence in maxit steps or at a non-finite residual; d.st_info = (residual, s), d.st_f = f."""
    nv, nf, nr = m.nv, free.shape[0], rows.shape[0]
    n = nf + nr
    A, W, b, x, f, fp, fm, qq, lam = d.st_A, d.st_W, d.st_b, d.st_x, d.st_f, d.st_fp, d.st_fm, d.st_q, d.st_lam
    for i in range(held_zero.shape[0]):
        q[held_zero[i]] = 0.0
    for i in range(nr):
        lam[i] = 0.0
    fscale = 1.0
    if relative:
        holding_force(m, d, q, f)
        for k in range(nv):
            fscale = max(fscale, abs(f[k]))
        if nr and nf:                              # λ from C_fᵀ λ ≈ (b − τ_pas)_f
            constraint_terms(m, d, q, d.st_zero, t)
            for i in range(nf):
                b[i] = f[free[i]]
                for j in range(nr):
                    A[i, j] = d.con_C[rows[j], free[i]]
            lstsq(A, nf, nr, b, x, d.st_perm, d.st_t1, d.st_t2, W)
            for j in range(nr):
                lam[j] = x[j]
    d.st_info[1] = fscale
    _force(m, d, q, t, rows, f)
    err = _error(d, f, free, rows, fscale)
    it = 0
    while True:
        d.st_info[0] = err
        if not math.isfinite(err):
            return -1
        if err <= tol or n == 0:
            return it
        if it >= maxit:
            return -1
        for i in range(nf):                        # right-hand side and the constraint blocks at q
            b[i] = -f[free[i]]
        for j in range(nr):
            b[nf + j] = -d.con_phi[rows[j]]
            for i in range(nf):
                c = d.con_C[rows[j], free[i]]
                A[nf + j, i] = c
                A[i, nf + j] = -c
            for jj in range(nr):
                A[nf + j, nf + jj] = 0.0
        for k in range(nf):                        # stiffness K = ∂f/∂q_free
            dk = free[k]
            h = rel_step * max(1.0, abs(q[dk]))
            for i in range(nv):
                qq[i] = q[i]
            qq[dk] = q[dk] + h
            _force(m, d, qq, t, rows, fp)
            qq[dk] = q[dk] - h
            _force(m, d, qq, t, rows, fm)
            for i in range(nf):
                A[i, k] = (fp[free[i]] - fm[free[i]]) / (2.0 * h)
        lstsq(A, n, n, b, x, d.st_perm, d.st_t1, d.st_t2, W)
        it += 1
        if relative:
            for i in range(nf):
                q[free[i]] += x[i]
            for j in range(nr):
                lam[j] += x[nf + j]
            _force(m, d, q, t, rows, f)
            err = _error(d, f, free, rows, fscale)
            continue
        step = 1.0                                 # absolute: halve the step until the residual falls
        while True:
            for i in range(nv):
                qq[i] = q[i]
            for i in range(nf):
                qq[free[i]] += step * x[i]
            _force(m, d, qq, t, rows, fp)
            en = _error(d, fp, free, rows, fscale)
            if en < err or step < 1e-4:
                break
            step *= 0.5
        for i in range(nv):
            q[i] = qq[i]
            f[i] = fp[i]
        err = en
