"""The largest stable step of explicit RK4 for a mechanism at its current state.

RK4 multiplies a mode e^{λt} of the linearized equations by R(hλ) per step, with
R(z) = 1 + z + z²/2 + z³/6 + z⁴/24. A step h is stable for λ when it amplifies no more
than the exact flow does: |R(hλ)| ≤ max(1, e^{h Re λ}) — so a mode that grows physically
(a mechanism tipping over under gravity) is not mistaken for numerical instability. On the
imaginary axis the limit is h|λ| ≤ 2√2, on the negative real axis h|λ| ≤ 2.785.

The eigenvalues come from the Jacobian ∂ẋ/∂x of the whole pipeline (constraints with their
Baumgarte terms, supports, RFEM sdes, friction states) by central differences at the
current state and inputs, through the Hessenberg QR iteration of kernels.stability (numpy's
LAPACK eigenvalues agree to rounding, tests/kernels/test_stability.py). Measured against runs (crane with
a flexible jib, rpsup with a flexible coupler, every option of the six models at their default
steps): the runs that diverge within 0.05 s are exactly those with h above this limit; the limit
is sharp (crane n_div = 5 from statics: h_max = 8.59e-5 s, 0.9·h_max runs, 1.1·h_max diverges at
7.7 ms; rpsup n_div = 3: 7.57e-4 s). It is a property of
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


def jacobian(sim, rel_step: float = 1e-7) -> np.ndarray:
    """∂ẋ/∂x of q, q̇ and the friction states (not the energy integrals) at ``sim``'s state, by
    central differences (kernels.stability.jacobian); the simulator's state, partition and counters
    are left as they were."""
    n = sim.k.state_jacobian(sim._m, sim._d, sim.x, float(sim.t), sim.tau_drive, float(rel_step))
    if n < 0:
        n = 2 * sim.nv + sim.model.nz
        return np.full((n, n), np.nan)
    return sim.data.ev_J[:n, :n].copy()


def rk4_step_limit(sim, h_ref: float | None = None) -> StepLimit:
    """The largest stable RK4 step at ``sim``'s current state and inputs (see module doc), by the
    kernel both FMU kinds call (kernels.stability.rk4_step_limit); relative to h_ref (default the
    simulator's step) for the modes too slow to matter."""
    out = np.empty(3)
    n = sim.k.rk4_step_limit(sim._m, sim._d, sim.x, float(sim.t), sim.tau_drive, float(h_ref or sim.h), out)
    return StepLimit(float(out[0]), complex(out[1], out[2]), int(n))
