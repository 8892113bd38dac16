"""The largest stable step of explicit RK4 at a state, in place on a Data (fmu_mb.stability
explains the criterion and how it was measured against runs).

RK4 multiplies a mode e^{λt} of the linearized equations by R(hλ) = 1 + z + z²/2 + z³/6 + z⁴/24
per step; h is stable for λ when |R(hλ)| ≤ max(1, e^{h Re λ}). The eigenvalues λ are those of the
Jacobian ∂ẋ/∂x of the whole pipeline (q, q̇, friction states; not the energy integrals) by central
differences, found by balancing (Parlett & Reinsch 1969), reduction to Hessenberg form by
Gaussian elimination with pivoting and the Francis double-shift QR iteration (EISPACK balanc,
elmhes, hqr; Golub & Van Loan, Matrix Computations, 4th ed., sec. 7.5). Both FMU kinds call this
kernel: the limit an FMU refuses a step size with is the same number in Python and native code.
"""
from __future__ import annotations

import math

from numba import njit

from ..codes import SolverStat
from .system import derivative


@njit(cache=True, error_model="numpy")
def jacobian(m, d, x, t, tau_drive, rel_step):
    """d.ev_J[:n, :n] = ∂ẋ/∂x (n = 2nv + nz) by central differences, state k stepped by
    rel_step·max(1, |x_k|); the coordinate partition and the solver counters are as before
    (Simulator.checkpoint / rollback). Returns n, −1 if an entry is not finite."""
    n = 2 * m.nv + m.nz
    J, xp, fp, fm = d.ev_J, d.ev_x, d.ev_fp, d.ev_fm
    rows, cols = d.ev_rows, d.ev_cols
    for i in range(rows.shape[0]):
        rows[i] = d.cp_rows[i]
    for i in range(cols.shape[0]):
        cols[i] = d.cp_cols[i]
    rank, valid, count = d.cp_rank[0], d.cp_valid[0], d.cp_count[0]
    ratio = d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN]
    fails, iters = d.fric_fail[0], d.fric_iters[0]
    finite = True
    for k in range(n):
        h = rel_step * max(1.0, abs(x[k]))
        for i in range(x.shape[0]):
            xp[i] = x[i]
        xp[k] = x[k] + h
        derivative(m, d, xp, t, tau_drive, fp)
        xp[k] = x[k] - h
        derivative(m, d, xp, t, tau_drive, fm)
        for i in range(n):
            J[i, k] = (fp[i] - fm[i]) / (2.0 * h)
            finite &= math.isfinite(J[i, k])
    for i in range(rows.shape[0]):
        d.cp_rows[i] = rows[i]
    for i in range(cols.shape[0]):
        d.cp_cols[i] = cols[i]
    d.cp_rank[0], d.cp_valid[0], d.cp_count[0] = rank, valid, count
    d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN] = ratio
    d.fric_fail[0], d.fric_iters[0] = fails, iters
    return n if finite else -1


@njit(cache=True, error_model="numpy")
def balance(A, n):
    """Diagonal similarity A ← D⁻¹ A D with powers of 2 making each row and column of about equal
    norm (EISPACK balanc without permutations): the eigenvalues stay, their rounding shrinks."""
    done = False
    while not done:
        done = True
        for i in range(n):
            c = 0.0
            r = 0.0
            for j in range(n):
                if j != i:
                    c += abs(A[j, i])
                    r += abs(A[i, j])
            if c == 0.0 or r == 0.0:
                continue
            s = c + r
            f = 1.0
            g = r / 2.0
            while c < g:
                f *= 2.0
                c *= 4.0
            g = r * 2.0
            while c > g:
                f /= 2.0
                c /= 4.0
            if (c + r) / f < 0.95 * s:
                done = False
                for j in range(n):
                    A[i, j] /= f
                    A[j, i] *= f


@njit(cache=True, error_model="numpy")
def hessenberg(A, n):
    """A ← an upper Hessenberg matrix similar to it, by Gaussian elimination with row pivoting
    (EISPACK elmhes); the entries below the subdiagonal are set to zero."""
    for c in range(1, n - 1):
        x = 0.0
        p = c
        for j in range(c, n):
            if abs(A[j, c - 1]) > abs(x):
                x = A[j, c - 1]
                p = j
        if p != c:
            for j in range(c - 1, n):
                A[p, j], A[c, j] = A[c, j], A[p, j]
            for j in range(n):
                A[j, p], A[j, c] = A[j, c], A[j, p]
        if x != 0.0:
            for i in range(c + 1, n):
                y = A[i, c - 1]
                if y != 0.0:
                    y /= x
                    A[i, c - 1] = y
                    for j in range(c, n):
                        A[i, j] -= y * A[c, j]
                    for j in range(n):
                        A[j, c] += y * A[j, i]
    for i in range(2, n):
        for j in range(i - 1):
            A[i, j] = 0.0


@njit(cache=True, error_model="numpy")
def hessenberg_eigenvalues(A, n, wr, wi):
    """Eigenvalues (wr + i·wi) of the upper Hessenberg A[:n, :n] by the Francis double-shift QR
    iteration with deflation (EISPACK hqr), A destroyed. Returns False if an eigenvalue took more
    than 30 iterations."""
    anorm = 0.0
    for i in range(n):
        for j in range(max(i - 1, 0), n):
            anorm += abs(A[i, j])
    nn = n - 1
    t = 0.0
    p = q = r = 0.0
    while nn >= 0:
        its = 0
        while True:
            low = 0                                   # a negligible subdiagonal entry splits A
            for ll in range(nn, 0, -1):
                s = abs(A[ll - 1, ll - 1]) + abs(A[ll, ll])
                if s == 0.0:
                    s = anorm
                if abs(A[ll, ll - 1]) + s == s:
                    A[ll, ll - 1] = 0.0
                    low = ll
                    break
            x = A[nn, nn]
            if low == nn:                             # one root
                wr[nn] = x + t
                wi[nn] = 0.0
                nn -= 1
                break
            y = A[nn - 1, nn - 1]
            w = A[nn, nn - 1] * A[nn - 1, nn]
            if low == nn - 1:                         # two roots
                p = 0.5 * (y - x)
                q = p * p + w
                z = math.sqrt(abs(q))
                x += t
                if q >= 0.0:
                    z = p + math.copysign(z, p)
                    wr[nn - 1] = wr[nn] = x + z
                    if z != 0.0:
                        wr[nn] = x - w / z
                    wi[nn - 1] = wi[nn] = 0.0
                else:
                    wr[nn - 1] = wr[nn] = x + p
                    wi[nn - 1] = -z
                    wi[nn] = z
                nn -= 2
                break
            if its == 30:
                return False
            if its == 10 or its == 20:                # exceptional shift
                t += x
                for i in range(nn + 1):
                    A[i, i] -= x
                s = abs(A[nn, nn - 1]) + abs(A[nn - 1, nn - 2])
                x = y = 0.75 * s
                w = -0.4375 * s * s
            its += 1
            mm = nn - 2                               # two consecutive small subdiagonals
            while mm >= low:
                z = A[mm, mm]
                r = x - z
                s = y - z
                p = (r * s - w) / A[mm + 1, mm] + A[mm, mm + 1]
                q = A[mm + 1, mm + 1] - z - r - s
                r = A[mm + 2, mm + 1]
                s = abs(p) + abs(q) + abs(r)
                p /= s
                q /= s
                r /= s
                if mm == low:
                    break
                u = abs(A[mm, mm - 1]) * (abs(q) + abs(r))
                v = abs(p) * (abs(A[mm - 1, mm - 1]) + abs(z) + abs(A[mm + 1, mm + 1]))
                if u + v == v:
                    break
                mm -= 1
            for i in range(mm + 2, nn + 1):
                A[i, i - 2] = 0.0
                if i != mm + 2:
                    A[i, i - 3] = 0.0
            for k in range(mm, nn):                   # double QR step on rows low..nn, columns mm..nn
                if k != mm:
                    p = A[k, k - 1]
                    q = A[k + 1, k - 1]
                    r = A[k + 2, k - 1] if k != nn - 1 else 0.0
                    x = abs(p) + abs(q) + abs(r)
                    if x != 0.0:
                        p /= x
                        q /= x
                        r /= x
                s = math.copysign(math.sqrt(p * p + q * q + r * r), p)
                if s != 0.0:
                    if k == mm:
                        if low != mm:
                            A[k, k - 1] = -A[k, k - 1]
                    else:
                        A[k, k - 1] = -s * x
                    p += s
                    x = p / s
                    y = q / s
                    z = r / s
                    q /= p
                    r /= p
                    for j in range(k, nn + 1):
                        p = A[k, j] + q * A[k + 1, j]
                        if k != nn - 1:
                            p += r * A[k + 2, j]
                            A[k + 2, j] -= p * z
                        A[k + 1, j] -= p * y
                        A[k, j] -= p * x
                    top = nn if nn < k + 3 else k + 3
                    for i in range(low, top + 1):
                        p = x * A[i, k] + y * A[i, k + 1]
                        if k != nn - 1:
                            p += z * A[i, k + 2]
                            A[i, k + 2] -= p * r
                        A[i, k + 1] -= p * q
                        A[i, k] -= p
    return True


@njit(cache=True, error_model="numpy")
def _stable(h, re, im):
    """|R(hλ)| ≤ max(1, e^{h Re λ}) (1 + 1e-9)."""
    z = complex(h * re, h * im)
    amp = abs(1.0 + z + z * z / 2.0 + z * z * z / 6.0 + z * z * z * z / 24.0)
    return amp <= max(1.0, math.exp(min(h * re, 700.0))) * (1.0 + 1e-9)


@njit(cache=True, error_model="numpy")
def _limit(re, im, h0):
    """Largest h with _stable(h, λ), by bisection (inf if beyond 1e6·h0)."""
    if _stable(h0, re, im):
        lo, hi = h0, 2.0 * h0
        while _stable(hi, re, im):
            if hi > 1e6 * h0:
                return math.inf
            lo, hi = hi, 2.0 * hi
    else:
        lo, hi = 0.0, h0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _stable(mid, re, im):
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, error_model="numpy")
def rk4_step_limit(m, d, x, t, tau_drive, h0, out):
    """out = (h_max, Re λ, Im λ): the largest stable RK4 step at state x (time t, driving forces
    tau_drive held) and the eigenvalue that limits it; modes with |λ|·h0 < 1e-6 limit nothing
    near h0 (h_max = inf, λ = NaN when none does). h_max = 0, λ = NaN if the Jacobian is not
    finite; h_max = NaN if the QR iteration failed. Returns the size of the linearized system."""
    n = jacobian(m, d, x, t, tau_drive, 1e-7)
    out[0] = math.inf
    out[1] = out[2] = math.nan
    if n < 0:
        out[0] = 0.0
        return 2 * m.nv + m.nz
    A, wr, wi = d.ev_J, d.ev_re, d.ev_im
    balance(A, n)
    hessenberg(A, n)
    if not hessenberg_eigenvalues(A, n, wr, wi):
        out[0] = math.nan
        return n
    for i in range(n):
        if math.hypot(wr[i], wi[i]) * h0 < 1e-6:
            continue
        h = _limit(wr[i], wi[i], h0)
        if h < out[0]:
            out[0], out[1], out[2] = h, wr[i], wi[i]
    return n
