"""The many-right-hand-side forms (issue 40's speed work) take the one-at-a-time forms' operations in their
order: bit for bit the same results, checked against the one-at-a-time routine on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from fmu_mb import registry
from fmu_mb.kernels.constraints import constraint_wrenches_into
from fmu_mb.kernels.linalg import (back_solve, back_solve_columns, chol_solve, cholesky, forward_solve_columns,
                                   lu_factor, lu_solve, lu_solve_rows, lu_solve_transposed,
                                   lu_solve_transposed_columns)
from fmu_mb.kernels.rnea import reaction_increments, rnea_constrained
from fmu_mb.kernels.saddle import solve, solve_friction_increments
from fmu_mb.kernels.scalar import sqrt as scalar_sqrt
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import Simulator


def test_lu_solve_rows_equals_lu_solve_column_by_column():
    rng = np.random.default_rng(7)
    n, ncol, nrow = 7, 5, 12
    A = np.zeros((9, 9))
    A[:n, :n] = rng.standard_normal((n, n))
    piv = np.zeros(9, np.int64)
    assert lu_factor(A, n, piv) > 0.0
    at = rng.permutation(nrow)[:n].astype(np.int64)        # the system's rows scattered in B, as GPME's D is
    B = rng.standard_normal((nrow, ncol))
    expect = B.copy()
    for j in range(ncol):
        x = np.zeros(9)
        x[:n] = B[at, j]
        lu_solve(A, n, piv, x)
        expect[at, j] = x[:n]
    lu_solve_rows(A, n, piv, B, at, ncol)
    assert np.array_equal(B, expect)


def test_column_solves_equal_the_one_vector_solves():
    """Cholesky (forward and back) and transposed-LU solves of many columns: each column bit for bit the
    one-vector routine's."""
    rng = np.random.default_rng(11)
    n, ncol = 9, 4
    G = rng.standard_normal((n, n))
    L = np.zeros((12, 12))
    L[:n, :n] = G @ G.T + n * np.eye(n)
    assert cholesky(L, n)
    B = np.zeros((12, ncol))
    B[:n] = rng.standard_normal((n, ncol))
    expect = B.copy()
    for c in range(ncol):
        x = B[:, c].copy()
        chol_solve(L, n, x)
        expect[:, c] = x
    forward_solve_columns(L, n, B, ncol)
    back_solve_columns(L, n, B, ncol)
    assert np.array_equal(B, expect)
    x = expect[:, 0].copy()                    # (back_solve alone: the second half)
    y = expect[:, :1].copy()
    back_solve(L, n, x)
    back_solve_columns(L, n, y, 1)
    assert np.array_equal(y[:, 0], x)
    A = np.zeros((12, 12))
    A[:n, :n] = rng.standard_normal((n, n))
    piv = np.zeros(12, np.int64)
    assert lu_factor(A, n, piv) > 0.0
    B = np.zeros((12, ncol))
    B[:n] = rng.standard_normal((n, ncol))
    expect = B.copy()
    for c in range(ncol):
        x = B[:, c].copy()
        lu_solve_transposed(A, n, piv, x)
        expect[:, c] = x
    assert not np.array_equal(expect, B)
    lu_solve_transposed_columns(A, n, piv, B, ncol)
    assert np.array_equal(B, expect)


def _stepped(name):
    options = registry.most_detailed(name)
    mod = registry.load(name)
    cm = compile_mechanism(mod.build(**options))
    sim = Simulator(cm, 1e-3, kernels="jit", method=auto_method(mod, options))
    sim.initialize(static=getattr(mod, "FMU", {}).get("static_start", False))
    sim.step(0.02)
    return cm, sim


@pytest.mark.parametrize("name", ["rpsup", "manipulator", "crane"])
def test_friction_increments_equal_one_solve_per_joint(name):
    """All joints at once equal saddle.solve per joint (f = −e_k, no γ) at the factors of a running state:
    rpsup's friction coordinates are all dependent in the partition, the manipulator's all independent, the
    crane's both."""
    cm, sim = _stepped(name)
    m, d, data = sim._m, sim._d, sim.data
    fdofs, nv = cm.model.fric_dofs, cm.model.nv
    r = data.cp_rank[0]
    dependent = np.isin(fdofs, data.cp_cols[:r])
    assert {"rpsup": dependent.all(), "manipulator": not dependent.any(),
            "crane": dependent.any() and not dependent.all()}[name]
    data.fric_dqdd[:] = np.nan
    data.fric_dlam[:] = np.nan
    solve_friction_increments(m, d)
    got_q, got_l = data.fric_dqdd.copy(), data.fric_dlam.copy()
    for j, k in enumerate(fdofs):
        f = np.zeros(nv)
        f[k] = -1.0
        q, lam = np.full(nv, np.nan), np.full(cm.model.nc, np.nan)
        solve(m, d, f, False, q, lam)
        assert np.array_equal(got_q[j], q) and np.array_equal(got_l[j], lam), (j, k)
    assert np.abs(got_q).max() > 0.0 and np.abs(got_l).max() > 0.0


@pytest.mark.parametrize("name", ["rpsup", "manipulator"])
def test_reaction_increments_equal_one_linear_pass_per_lane(name):
    """Every lane's reaction increments at the friction joints' bodies equal rnea_constrained(full=False)'s."""
    cm, sim = _stepped(name)
    m, d, data = sim._m, sim._d, sim.data
    nf, nv, nc = cm.model.fric_dofs.shape[0], cm.model.nv, cm.model.nc
    rng = np.random.default_rng(3)
    data.fric_dqdd[:] = rng.standard_normal((nf, nv))
    data.fric_dlam[:] = rng.standard_normal((nf, nc))
    for j in range(nf):
        constraint_wrenches_into(m, d, data.fric_dlam[j], data.inc_cM[j], data.inc_cF[j])
    reaction_increments(m, d, data.fric_dqdd, data.inc_cM, data.inc_cF, nf)
    bodies = cm.model.dof_body[cm.model.fric_dofs]
    for j in range(nf):
        data.cextM[:] = data.inc_cM[j]
        data.cextF[:] = data.inc_cF[j]
        rnea_constrained(m, d, data.fric_dqdd[j].copy(), False)
        assert np.array_equal(data.inc_f[j, bodies, :3], data.fM[bodies])
        assert np.array_equal(data.inc_f[j, bodies, 3:], data.fF[bodies])


def _cholesky_one_row(A, n):
    """The textbook Cholesky–Crout, one row at a time (the form before the four-row lanes); scalar_sqrt is
    math.sqrt in Python and numba's for real or complex numbers in compiled code."""
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        A[j, j] = scalar_sqrt(s)
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / A[j, j]


#: the same, compiled by numba (complex numbers: numba's own arithmetic)
_cholesky_one_row_jit = njit(_cholesky_one_row)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 13, 31])
def test_cholesky_four_rows_at_once_equals_one_row_at_a_time(n):
    """linalg.cholesky's four-row lanes give the one-row form's bits, every remainder of n mod 4, on the leading
    block of a larger array whose upper triangle and border they leave alone: in real numbers against plain
    Python, in complex numbers (the complex step's Jacobians) against the one-row form compiled by numba."""
    rng = np.random.default_rng(n)
    G = rng.standard_normal((n, n))
    A = rng.standard_normal((n + 3, n + 3))
    A[:n, :n] = np.tril(G @ G.T + n * np.eye(n)) + np.triu(A[:n, :n], 1)
    expect = A.copy()
    _cholesky_one_row(expect, n)
    got = A.copy()
    assert cholesky(got, n)
    assert np.array_equal(got, expect)
    Ac = A + 1j * 1e-20 * rng.standard_normal(A.shape)
    expect = Ac.copy()
    _cholesky_one_row_jit(expect, n)
    got = Ac.copy()
    assert cholesky(got, n)
    assert np.array_equal(got, expect) and np.abs(got[:n, :n].imag).max() > 0.0
    assert not cholesky(-np.eye(n + 3), n)


def _chol_solve_one_row(L, n, b):
    """L Lᵀ x = b by substitution one row at a time (the form before the lanes)."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


_chol_solve_one_row_jit = njit(_chol_solve_one_row)


@pytest.mark.parametrize("n", [1, 3, 4, 6, 9, 31])
def test_chol_solve_four_rows_at_once_equals_one_row_at_a_time(n):
    """linalg.chol_solve's four-row forward substitution gives the one-row form's bits (real against plain Python,
    complex against the one-row form compiled by numba), leaving b beyond n alone."""
    rng = np.random.default_rng(100 + n)
    G = rng.standard_normal((n, n))
    L = np.zeros((n + 2, n + 2))
    L[:n, :n] = G @ G.T + n * np.eye(n)
    assert cholesky(L, n)
    b = rng.standard_normal(n + 2)
    expect, got = b.copy(), b.copy()
    _chol_solve_one_row(L, n, expect)
    chol_solve(L, n, got)
    assert np.array_equal(got, expect)
    Lc = L + 1j * 1e-20 * np.tril(rng.standard_normal(L.shape))
    bc = b + 1j * 1e-20 * rng.standard_normal(b.shape)
    expect, got = bc.copy(), bc.copy()
    _chol_solve_one_row_jit(Lc, n, expect)
    chol_solve(Lc, n, got)
    assert np.array_equal(got, expect) and np.abs(got[:n].imag).max() > 0.0
