"""Small dense linear algebra for the constrained solves, in place, without allocation.

Every routine works on the leading n × n block of a (possibly larger) work array,
so one Data array serves every rank the constraint matrix may take.
"""
from __future__ import annotations

import math

from numba import njit

from .scalar import copysign, sqrt


@njit(cache=True, error_model="numpy")
def cholesky(A, n):
    """A[:n, :n] = L Lᵀ, L written into the lower triangle. False if A is not positive definite.

    Column by column (Cholesky–Crout), the rows below the diagonal four at a time: four independent sums, each
    with the one-row form's operations in its order (the same bits), so their additions overlap instead of
    waiting on each other (the order-127 factor of the crane's 40-element jib 182–222 → 90–105 µs, order 25
    1.24 → 1.05 µs; tests/kernels/test_lanes.py)."""
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not s.real > 0.0:
            return False
        ljj = sqrt(s)
        A[j, j] = ljj
        i = j + 1
        while i + 3 < n:
            s0, s1, s2, s3 = A[i, j], A[i + 1, j], A[i + 2, j], A[i + 3, j]
            for k in range(j):
                a = A[j, k]
                s0 -= A[i, k] * a
                s1 -= A[i + 1, k] * a
                s2 -= A[i + 2, k] * a
                s3 -= A[i + 3, k] * a
            A[i, j] = s0 / ljj
            A[i + 1, j] = s1 / ljj
            A[i + 2, j] = s2 / ljj
            A[i + 3, j] = s3 / ljj
            i += 4
        while i < n:
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / ljj
            i += 1
    return True


@njit(cache=True, error_model="numpy")
def chol_solve(L, n, b):
    """Solve L Lᵀ x = b[:n] in place (L from :func:`cholesky`). The forward substitution four rows at a time:
    their sums over the solved entries side by side, then the 4 × 4 triangle row after row — every sum in the
    one-row order, the same bits (the back substitution's sums begin with the entry solved last: one at a time)."""
    i = 0
    while i + 3 < n:
        s0, s1, s2, s3 = b[i], b[i + 1], b[i + 2], b[i + 3]
        for k in range(i):
            bk = b[k]
            s0 -= L[i, k] * bk
            s1 -= L[i + 1, k] * bk
            s2 -= L[i + 2, k] * bk
            s3 -= L[i + 3, k] * bk
        b0 = s0 / L[i, i]
        s1 -= L[i + 1, i] * b0
        b1 = s1 / L[i + 1, i + 1]
        s2 -= L[i + 2, i] * b0
        s2 -= L[i + 2, i + 1] * b1
        b2 = s2 / L[i + 2, i + 2]
        s3 -= L[i + 3, i] * b0
        s3 -= L[i + 3, i + 1] * b1
        s3 -= L[i + 3, i + 2] * b2
        b[i], b[i + 1], b[i + 2], b[i + 3] = b0, b1, b2, s3 / L[i + 3, i + 3]
        i += 4
    while i < n:
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
        i += 1
    back_solve(L, n, b)


@njit(cache=True, error_model="numpy")
def back_solve(L, n, b):
    """Solve Lᵀ x = b[:n] in place (the second half of :func:`chol_solve`)."""
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@njit(cache=True, error_model="numpy")
def forward_solve_columns(L, n, B, ncol):
    """B[:n, :ncol] ← L⁻¹ B in place (L lower triangular from :func:`cholesky`), all columns at once: the
    innermost loop runs along a row of B (contiguous, independent columns), not down the dependent
    chain of one column."""
    for i in range(n):
        for k in range(i):
            a = L[i, k]
            for c in range(ncol):
                B[i, c] -= a * B[k, c]
        p = L[i, i]
        for c in range(ncol):
            B[i, c] /= p


@njit(cache=True, error_model="numpy")
def back_solve_columns(L, n, B, ncol):
    """B[:n, :ncol] ← L⁻ᵀ B in place, all columns at once: :func:`back_solve`'s operations in its order for
    every column (the same bits), the innermost loop along a row of B."""
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            a = L[k, i]
            for c in range(ncol):
                B[i, c] -= a * B[k, c]
        p = L[i, i]
        for c in range(ncol):
            B[i, c] /= p


@njit(cache=True, error_model="numpy")
def gram(B, n, ncol, A):
    """A[:ncol, :ncol] = Bᵀ B for B[:n, :ncol] (both triangles; symmetric and positive semi-definite by
    construction)."""
    for i in range(ncol):
        for j in range(i + 1):
            A[i, j] = 0.0
    for k in range(n):
        for i in range(ncol):
            bi = B[k, i]
            if bi != 0.0:
                for j in range(i + 1):
                    A[i, j] += bi * B[k, j]
    for i in range(ncol):
        for j in range(i):
            A[j, i] = A[i, j]


@njit(cache=True, error_model="numpy")
def pivoted_cholesky(A, n, perm, tol):
    """Symmetric-pivoted Cholesky of the positive semi-definite A[:n, :n]: P A Pᵀ = L Lᵀ with
    the first r pivots; stops when the largest remaining diagonal is ≤ tol·(largest initial
    diagonal). perm[:n] receives the pivot order; returns the rank r. A is overwritten: its
    rows/columns are permuted in place and L occupies the lower triangle of A[:r, :r]."""
    dmax = 0.0
    for i in range(n):
        perm[i] = i
        if A[i, i].real > dmax:
            dmax = A[i, i].real
    if dmax <= 0.0:
        return 0
    for j in range(n):
        p = j
        best = A[j, j].real
        for i in range(j + 1, n):
            if A[i, i].real > best:
                best = A[i, i].real
                p = i
        if best <= tol * dmax:
            return j
        if p != j:
            perm[j], perm[p] = perm[p], perm[j]
            for k in range(n):
                A[j, k], A[p, k] = A[p, k], A[j, k]
            for k in range(n):
                A[k, j], A[k, p] = A[k, p], A[k, j]
        ljj = sqrt(A[j, j])
        A[j, j] = ljj
        for i in range(j + 1, n):
            A[i, j] /= ljj
        for i in range(j + 1, n):          # trailing update, kept symmetric for later swaps
            for k in range(j + 1, i + 1):
                A[i, k] -= A[i, j] * A[k, j]
                A[k, i] = A[i, k]
    return n


#: trailing rows at least this long are updated through row views (vectorized: 1.5x at n = 130, measured on
#: this machine; shorter rows pay more for the views than the vectors give back). Either way each element takes
#: the same operations: the factors are bit for bit the same.
_WIDE_ROW = 48


@njit(cache=True, error_model="numpy")
def lu_factor(A, n, piv):
    """LU with partial pivoting of A[:n, :n] in place (unit lower L below the diagonal, U on and
    above). Returns min|u_ii| / max|u_ii| (0.0 if singular): a cheap conditioning indicator."""
    umax = 0.0
    umin = math.inf
    for c in range(n):
        p = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        piv[c] = p
        if p != c:
            for k in range(n):
                A[c, k], A[p, k] = A[p, k], A[c, k]
        u = abs(A[c, c])
        umax = max(umax, u)
        umin = min(umin, u)
        if u == 0.0:
            return 0.0
        inv = 1.0 / A[c, c]
        wide = n - c - 1 >= _WIDE_ROW
        top = A[c, c + 1:n]
        for r in range(c + 1, n):
            f = A[r, c] * inv
            A[r, c] = f
            if f != 0.0:
                if wide:                  # (a row view of exact length: LLVM vectorizes the update, same bits)
                    row = A[r, c + 1:n]
                    for k in range(row.shape[0]):
                        row[k] -= f * top[k]
                else:
                    for k in range(c + 1, n):
                        A[r, k] -= f * A[c, k]
    if n == 0:
        return 1.0
    return umin / umax


@njit(cache=True, error_model="numpy")
def lu_solve(A, n, piv, b):
    """Solve A x = b[:n] in place with the factors of :func:`lu_factor`."""
    for c in range(n):
        p = piv[c]
        if p != c:
            b[c], b[p] = b[p], b[c]
    for r in range(n):
        s = b[r]
        for k in range(r):
            s -= A[r, k] * b[k]
        b[r] = s
    for r in range(n - 1, -1, -1):
        s = b[r]
        for k in range(r + 1, n):
            s -= A[r, k] * b[k]
        b[r] = s / A[r, r]


@njit(cache=True, error_model="numpy")
def lu_solve_rows(A, n, piv, B, at, ncol):
    """Solve A X = B for ncol right-hand sides at once with the factors of :func:`lu_factor`, row i of the
    system being B[at[i], :ncol] (B may hold other rows). Each column takes :func:`lu_solve`'s operations in
    its order, so the same bits; the innermost loop runs along a row of B (independent columns), not down
    the dependent chain of one column (GPME's D = −C_d⁻¹C_i: 18 columns of order 7 in 0.5 µs instead of 2.2)."""
    for c in range(n):
        p = piv[c]
        if p != c:
            rc, rp = at[c], at[p]
            for j in range(ncol):
                B[rc, j], B[rp, j] = B[rp, j], B[rc, j]
    for r in range(n):
        br = at[r]
        for k in range(r):
            a, bk = A[r, k], at[k]
            for j in range(ncol):
                B[br, j] -= a * B[bk, j]
    for r in range(n - 1, -1, -1):
        br = at[r]
        for k in range(r + 1, n):
            a, bk = A[r, k], at[k]
            for j in range(ncol):
                B[br, j] -= a * B[bk, j]
        u = A[r, r]
        for j in range(ncol):
            B[br, j] /= u


@njit(cache=True, error_model="numpy")
def lu_solve_transposed(A, n, piv, b):
    """Solve Aᵀ x = b[:n] in place with the factors of :func:`lu_factor` (P A = L U)."""
    for r in range(n):                    # Uᵀ y = b
        s = b[r]
        for k in range(r):
            s -= A[k, r] * b[k]
        b[r] = s / A[r, r]
    for r in range(n - 1, -1, -1):        # Lᵀ z = y
        s = b[r]
        for k in range(r + 1, n):
            s -= A[k, r] * b[k]
        b[r] = s
    for c in range(n - 1, -1, -1):        # x = Pᵀ z
        p = piv[c]
        if p != c:
            b[c], b[p] = b[p], b[c]


@njit(cache=True, error_model="numpy")
def lu_solve_transposed_columns(A, n, piv, B, ncol):
    """Solve Aᵀ X = B[:n, :ncol] in place for all columns at once: :func:`lu_solve_transposed`'s operations
    in its order for every column (the same bits), the innermost loop along a row of B."""
    for r in range(n):                    # Uᵀ y = b
        for k in range(r):
            a = A[k, r]
            for c in range(ncol):
                B[r, c] -= a * B[k, c]
        u = A[r, r]
        for c in range(ncol):
            B[r, c] /= u
    for r in range(n - 1, -1, -1):        # Lᵀ z = y
        for k in range(r + 1, n):
            a = A[k, r]
            for c in range(ncol):
                B[r, c] -= a * B[k, c]
    for i in range(n - 1, -1, -1):        # x = Pᵀ z
        p = piv[i]
        if p != i:
            for c in range(ncol):
                B[i, c], B[p, c] = B[p, c], B[i, c]


@njit(cache=True, error_model="numpy")
def _householder(A, k, c, m):
    """Reflector H = I − τ v vᵀ with H A[k:m, c] = (β, 0, …): v = (1, A[k+1:m, c]) stored below
    A[k, c], β on it; returns τ (0: nothing to annihilate)."""
    alpha = A[k, c]
    s = 0.0
    for i in range(k + 1, m):
        s += A[i, c] * A[i, c]
    if s == 0.0:
        return 0.0
    beta = -copysign(sqrt(alpha * alpha + s), alpha)
    scale = 1.0 / (alpha - beta)
    for i in range(k + 1, m):
        A[i, c] *= scale
    A[k, c] = beta
    return (beta - alpha) / beta


@njit(cache=True, error_model="numpy")
def _reflect(A, k, c, m, tau, B, j):
    """B[k:m, j] ← H B[k:m, j] with the reflector of :func:`_householder` stored in A[:, c]."""
    if tau == 0.0:
        return
    s = B[k, j]
    for i in range(k + 1, m):
        s += A[i, c] * B[i, j]
    s *= tau
    B[k, j] -= s
    for i in range(k + 1, m):
        B[i, j] -= s * A[i, c]


@njit(cache=True, error_model="numpy")
def _reflect_vector(A, k, c, m, tau, b):
    """b[k:m] ← H b[k:m] with the reflector of :func:`_householder` stored in A[:, c]."""
    if tau == 0.0:
        return
    s = b[k]
    for i in range(k + 1, m):
        s += A[i, c] * b[i]
    s *= tau
    b[k] -= s
    for i in range(k + 1, m):
        b[i] -= s * A[i, c]


@njit(cache=True, error_model="numpy")
def lstsq(A, m, n, b, x, perm, tau, tau2, W):
    """Minimum-norm least-squares solution x[:n] of A[:m, :n] x ≈ b[:m] (numpy.linalg.lstsq's
    answer, by a complete orthogonal decomposition instead of the SVD): QR with column pivoting
    A P = Q R (Golub & Van Loan, Matrix Computations, 4th ed., alg. 5.4.1), rank r = the pivots
    with |r_kk| > ε·max(m, n)·|r_00| (lstsq's default cut-off), then [R11 R12] = [Sᵀ 0] Q₂ᵀ by a
    QR of its transpose (sec. 5.5.2), x = P Q₂ [S⁻ᵀ (Qᵀb)[:r]; 0]. Overwrites A, b (length ≥ max(m, n)),
    W (≥ n × r), perm, tau, tau2 (≥ n). Returns r."""
    kmax = min(m, n)
    for j in range(n):
        perm[j] = j
    r = kmax
    top = 0.0
    for k in range(kmax):
        best, p = -1.0, k
        for j in range(k, n):                      # pivot: the largest remaining column
            s = 0.0
            for i in range(k, m):
                s += A[i, j] * A[i, j]
            if s > best:
                best, p = s, j
        if p != k:
            for i in range(m):
                A[i, k], A[i, p] = A[i, p], A[i, k]
            perm[k], perm[p] = perm[p], perm[k]
        tau[k] = _householder(A, k, k, m)
        for j in range(k + 1, n):
            _reflect(A, k, k, m, tau[k], A, j)
        _reflect_vector(A, k, k, m, tau[k], b)
        if k == 0:
            top = abs(A[0, 0])
        if not abs(A[k, k]) > 2.220446049250313e-16 * max(m, n) * top:
            r = k
            break
    if r == n:                                     # full column rank: R x = Qᵀb
        for i in range(n - 1, -1, -1):
            s = b[i]
            for j in range(i + 1, n):
                s -= A[i, j] * b[j]
            b[i] = s / A[i, i]
        for j in range(n):
            x[perm[j]] = b[j]
        return r
    for i in range(r):                             # W = [R11 R12]ᵀ, then W = Q₂ [S; 0]
        for j in range(n):
            W[j, i] = A[i, j] if j >= i else 0.0
    for i in range(r):
        tau2[i] = _householder(W, i, i, n)
        for j in range(i + 1, r):
            _reflect(W, i, i, n, tau2[i], W, j)
    for i in range(r):                             # Sᵀ w = c (forward substitution), w[r:] = 0
        s = b[i]
        for j in range(i):
            s -= W[j, i] * b[j]
        b[i] = s / W[i, i]
    for i in range(r, n):
        b[i] = 0.0
    for i in range(r - 1, -1, -1):                 # y = Q₂ w = H_0 … H_{r-1} w
        _reflect_vector(W, i, i, n, tau2[i], b)
    for j in range(n):
        x[perm[j]] = b[j]
    return r
