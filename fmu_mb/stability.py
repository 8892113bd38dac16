"""The largest stable step of explicit RK4 for a mechanism at its current state.

RK4 multiplies a mode e^{λt} of the linearized equations by R(hλ) per step, with
R(z) = 1 + z + z²/2 + z³/6 + z⁴/24. A step h is stable for λ when it amplifies no more
than the exact flow does: |R(hλ)| ≤ max(1, e^{h Re λ}) — so a mode that grows physically
(a mechanism tipping over under gravity) is not mistaken for numerical instability. On the
imaginary axis the limit is h|λ| ≤ 2√2, on the negative real axis h|λ| ≤ 2.785.

The eigenvalues come from the Jacobian ∂ẋ/∂x of the whole pipeline (constraints with their
Baumgarte terms, supports, RFEM sdes, friction states) by central differences at the
current state and inputs. Measured against runs (crane with a flexible jib, rpsup with a
flexible coupler, every option of the six models at their default steps): the runs that
diverge within 0.05 s are exactly those with h above this limit (crane n_div = 5:
h_max = 2.04e-4 s < 2.5e-4 s; rpsup n_div = 6: 2.77e-5 s < 5e-5 s). It is a property of
the start state: LuGre's bristle pole −σ0|q̇|/g(q̇) grows with speed and is not seen at rest.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StepLimit:
    h_max: float          # largest stable RK4 step, s (inf: no mode limits it)
    eigenvalue: complex   # the limiting eigenvalue, 1/s
    n: int                # size of the linearized system


def rk4_amplification(z):
    return 1.0 + z + z * z / 2.0 + z ** 3 / 6.0 + z ** 4 / 24.0


def _stable(h: float, lam: complex) -> bool:
    return abs(rk4_amplification(h * lam)) <= max(1.0, np.exp(min(h * lam.real, 700.0))) * (1.0 + 1e-9)


def _limit(lam: complex, h0: float) -> float:
    """Largest h with _stable(h, lam), by bisection (inf if beyond 1e6·h0)."""
    if _stable(h0, lam):
        lo, hi = h0, 2.0 * h0
        while _stable(hi, lam):
            if hi > 1e6 * h0:
                return np.inf
            lo, hi = hi, 2.0 * hi
    else:
        lo, hi = 0.0, h0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _stable(mid, lam) else (lo, mid)
    return lo


def jacobian(sim, rel_step: float = 1e-7) -> np.ndarray:
    """∂ẋ/∂x of q, q̇ and the friction states (not the energy integrals) at ``sim``'s state;
    the simulator is left as it was (state, partition, counters)."""
    n = 2 * sim.nv + sim.model.nz
    cp = sim.checkpoint()
    x0 = sim.x.copy()
    J = np.empty((n, n))
    try:
        for i in range(n):
            d = rel_step * max(1.0, abs(x0[i]))
            sim.x[:] = x0
            sim.x[i] = x0[i] + d
            fp = sim.evaluate()[:n].copy()
            sim.x[i] = x0[i] - d
            fm = sim.evaluate()[:n]
            J[:, i] = (fp - fm) / (2.0 * d)
    finally:
        sim.rollback(cp)
    return J


def rk4_step_limit(sim, h_ref: float | None = None) -> StepLimit:
    """The largest stable RK4 step at ``sim``'s current state and inputs (see module doc)."""
    J = jacobian(sim)
    if not np.all(np.isfinite(J)):
        return StepLimit(0.0, complex(np.nan), J.shape[0])
    lams = np.linalg.eigvals(J) if J.size else np.zeros(0, complex)
    h0 = h_ref or sim.h
    best, which = np.inf, 0j
    for lam in lams:
        if abs(lam) * h0 < 1e-6:          # slow modes: no limit near h0
            continue
        h = _limit(complex(lam), h0)
        if h < best:
            best, which = h, complex(lam)
    return StepLimit(best, which, J.shape[0])
