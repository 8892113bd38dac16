"""The test oracle of the exact Jacobians (fmu_mb.kernels.jacobian): adaptive central differences
with Richardson extrapolation (numdifftools: a sequence of steps, the one of least estimated error per
element, and that error estimate), one column per state or input, the steps scaled to each component
(coordinates, rates: max(1, |x|); a bristle state: its law's bound μ_s/σ0; a friction joint's
rate: below its law's velocity scale v_ε, v_s; an input: 10·max(1, |u|), it enters smoothly and a larger
step keeps round-off down)."""
from __future__ import annotations

import numdifftools as nd
import numpy as np


def column(f, x: np.ndarray, j: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(∂f/∂x_j at x, its error estimate), steps from 1e-3·scale down by factors of 2.5 (to 2.6e-7·scale)."""
    e = np.zeros_like(x)
    e[j] = 1.0
    jac = nd.Jacobian(lambda s: f(x + s[0] * e), step=nd.MaxStepGenerator(base_step=1e-3 * scale, num_steps=10,
                                                                          step_ratio=2.5), method="central",
                      full_output=True)
    result = jac(np.zeros(1))
    return np.asarray(result.estimate).reshape(-1), np.asarray(result.error_estimate).reshape(-1)


def scales(model, x: np.ndarray) -> np.ndarray:
    """A step scale per state component (module docstring); the energy counters 1 (nothing should depend on
    them: their columns must come out zero)."""
    nv, nz = model.nv, model.nz
    s = np.maximum(1.0, np.abs(x))
    for k in range(nv):
        if model.dof_fric_law[k] == 0:
            continue
        par = model.dof_fric_par[k]
        v = abs(x[nv + k])
        s[nv + k] = min(s[nv + k], min(p for p in (par[7], par[3], 1.0) if p > 0), 10 * v if v > 0 else np.inf)
        zi = model.dof_fric_z[k]
        if zi >= 0:
            s[2 * nv + zi] = par[2] / par[4]
    s[2 * nv + nz:] = 1.0
    return s


def jacobian(f, x: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(J, error estimate), columns for every j with scale[j] > 0 (the others zero)."""
    cols, errs = [], []
    n = f(x).size
    for j in range(x.size):
        c, e = column(f, x, j, scale[j]) if scale[j] > 0 else (np.zeros(n), np.zeros(n))
        cols.append(c)
        errs.append(e)
    return np.column_stack(cols), np.column_stack(errs)


def block_error(exact: np.ndarray, oracle: np.ndarray, estimate: np.ndarray, floor: float = 1e-6) -> tuple:
    """(error, oracle's own error) of one block, both relative to max(max |oracle|, floor): floor for a
    block that is numerically zero (coordinates a programmed path fixes respond to nothing)."""
    if exact.size == 0:
        return 0.0, 0.0
    scale = max(float(np.max(np.abs(oracle))), floor)
    return float(np.max(np.abs(exact - oracle))) / scale, float(np.max(estimate)) / scale
