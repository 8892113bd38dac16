"""The RK4 stability limit kernel (kernels.stability) against numpy's LAPACK eigenvalues, and the
least-squares kernel of the statics (kernels.linalg.lstsq) against numpy.linalg.lstsq.

Both FMU kinds call these kernels at fmi2ExitInitializationMode, so their answers must be right
in themselves: the reference here is numpy (LAPACK dgeev / dgelsd), independent code."""
from __future__ import annotations

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.kernels.linalg import lstsq
from fmu_mb.kernels.stability import balance, hessenberg, hessenberg_eigenvalues
from fmu_mb.model.compile import compile_mechanism
from fmu_mb.simulator import Simulator
from fmu_mb.stability import jacobian, rk4_step_limit


def _matched_error(ref, got):
    """Largest distance of each reference eigenvalue to its nearest unused computed one, relative
    to the spectral radius (eigenvalues are determined to rounding times the matrix's norm)."""
    used = np.zeros(got.size, bool)
    worst = 0.0
    for lam in ref:
        d = np.abs(got - lam)
        d[used] = np.inf
        j = int(np.argmin(d))
        used[j] = True
        worst = max(worst, d[j])
    return worst / max(1.0, float(np.abs(ref).max()))


def _kernel_eigenvalues(A):
    n = A.shape[0]
    W, wr, wi = A.copy(), np.zeros(n), np.zeros(n)
    balance(W, n)
    hessenberg(W, n)
    assert hessenberg_eigenvalues(W, n, wr, wi)
    return wr + 1j * wi


def _random_matrices(rng):
    for trial in range(150):
        n = int(rng.integers(1, 30))
        if trial % 3 == 0:
            yield rng.standard_normal((n, n))
        elif trial % 3 == 1:                 # a mechanism's shape: [[0, I], [−K, −D]], K spanning 1 … 1e8
            h = max(1, n // 2)
            K = rng.standard_normal((h, h))
            K = K @ K.T * 10.0 ** rng.integers(0, 9)
            yield np.block([[np.zeros((h, h)), np.eye(h)], [-K, -0.01 * np.sqrt(np.abs(K))]])
        else:                                # zero rows and columns (states nothing depends on)
            A = rng.standard_normal((n, n))
            A[:, 0] = 0.0
            A[-1, :] = 0.0
            yield A


def test_hessenberg_qr_eigenvalues_equal_lapacks():
    """Random, mechanism-shaped (stiffness over 8 decades) and rank-deficient matrices: every
    eigenvalue within 1e-12 of the spectral radius of numpy's (measured worst: 4e-14)."""
    rng = np.random.default_rng(7)
    worst = max(_matched_error(np.linalg.eigvals(A), _kernel_eigenvalues(A)) for A in _random_matrices(rng))
    assert worst <= 1e-12, worst


def _reference_limit(sim):
    """fmu_mb.stability's criterion evaluated with numpy: LAPACK eigenvalues of the same Jacobian,
    the largest stable h of each mode by bisection on |R(hλ)| ≤ max(1, e^{h Re λ})."""
    def stable(h, lam):
        z = h * lam
        return abs(1 + z + z * z / 2 + z ** 3 / 6 + z ** 4 / 24) <= max(1.0, np.exp(min(h * lam.real, 700.0))) \
            * (1 + 1e-9)

    def limit(lam, h0):
        lo, hi = (h0, 2 * h0) if stable(h0, lam) else (0.0, h0)
        while lo > 0 and stable(hi, lam):
            lo, hi = hi, 2 * hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if stable(mid, lam) else (lo, mid)
        return lo
    lams = np.linalg.eigvals(jacobian(sim))
    return min((limit(lam, sim.h), lam) for lam in lams if abs(lam) * sim.h >= 1e-6)


CASES = {"crane": [dict(link="flexible", n_div=5), dict(link="flexible", friction="lugre", base="flexible")],
         "rpsup": [dict(coupler="flexible", n_div=3)],
         "manipulator": [dict(link="flexible", base="flexible")],
         "five_axis": [dict(friction="stribeck")]}


@pytest.mark.parametrize("model,options", [(m, o) for m, os in CASES.items() for o in os])
def test_step_limit_is_numpys_eigenvalue_criterion(model, options):
    """At each mechanism's static start, the kernel's RK4 limit and limiting eigenvalue equal the
    criterion evaluated with LAPACK's eigenvalues of the same Jacobian (1e-9 relative: the eigenvalues
    agree to rounding, the bisection to 2⁻⁶⁰); the simulator's state, partition and counters are
    untouched."""
    cm = compile_mechanism(registry.load(model).build(**options))
    sim = Simulator(cm, h=1e-4, assemble=False)
    sim.initialize(static=True)
    before = (*sim.state_record(), sim.friction_iterations)
    lim = rk4_step_limit(sim)
    after = (*sim.state_record(), sim.friction_iterations)
    assert np.array_equal(before[0], after[0]) and before[1:] == after[1:]
    h_ref, lam_ref = _reference_limit(sim)
    assert lim.h_max == pytest.approx(h_ref, rel=1e-9)
    assert abs(lim.eigenvalue - lam_ref) <= 1e-9 * abs(lam_ref)


@pytest.mark.parametrize("model,options", [("crane", dict(link="flexible", n_div=5)),
                                           ("rpsup", dict(coupler="flexible", n_div=3))])
def test_step_limit_separates_stable_from_diverging_runs(model, options):
    """The limit means what it says: RK4 at 0.9·h_max runs 0.1 s from the static start, at
    1.1·h_max it diverges within 0.1 s (measured: crane h_max = 8.59e-5 s, diverging at 7.7 ms;
    rpsup 7.57e-4 s, at 37 ms)."""
    cm = compile_mechanism(registry.load(model).build(**options))
    sim = Simulator(cm, h=1e-4, assemble=False)
    sim.initialize(static=True)
    h_max = rk4_step_limit(sim).h_max
    for factor, diverges in ((0.9, False), (1.1, True)):
        run = Simulator(cm, h=factor * h_max, method="rk4", assemble=False)
        run.initialize(static=True)
        try:
            run.advance_to(0.1)
            failed = not np.all(np.isfinite(run.x))
        except Exception:
            failed = True
        assert failed == diverges, (factor, h_max)


def test_lstsq_is_numpys_minimum_norm_solution():
    """Over- and under-determined, rank-deficient and zero matrices over 8 decades of scale: the
    minimum-norm least-squares solution and the rank equal numpy.linalg.lstsq's (1e-12 relative;
    measured 8e-14)."""
    rng = np.random.default_rng(3)
    N = 14
    worst = 0.0
    for _ in range(300):
        m, n = (int(v) for v in rng.integers(1, 12, 2))
        r = int(rng.integers(0, min(m, n) + 1))
        A = rng.standard_normal((m, r)) @ rng.standard_normal((r, n)) * 10.0 ** rng.integers(-3, 5)
        b = rng.standard_normal(m)
        ref, _, rank, _ = np.linalg.lstsq(A, b, rcond=None)
        Aw, bw = np.zeros((N, N)), np.zeros(N)
        Aw[:m, :n], bw[:m] = A, b
        x, W, perm, t1, t2 = np.zeros(N), np.zeros((N, N)), np.zeros(N, np.int64), np.zeros(N), np.zeros(N)
        assert lstsq(Aw, m, n, bw, x, perm, t1, t2, W) == rank
        worst = max(worst, float(np.max(np.abs(x[:n] - ref))) / max(1.0, float(np.max(np.abs(ref)))))
    assert worst <= 1e-12, worst
