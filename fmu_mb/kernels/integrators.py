"""Fixed-step integrators over the state derivative (kernels.system.derivative).

The papers integrate with the classical 4th-order Runge–Kutta scheme at a
constant step (000: h = 1e-5 s, 001: h = 2.5e-4 s); so do we. The driving
input is held constant over a step (zero-order hold); programmed constraints see
the stage times t, t + h/2, t + h. With ``ConstraintSolver.projection`` the
holonomic constraints are solved for the positions and the velocities projected
after every step (kernels.constrained.project). The stage vectors live in ``d``
(xs, k1…k4): nothing is allocated per step.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .constrained import project
from .system import derivative

_ALL_GROUPS = np.ones(4, dtype=np.int64)     # project every constraint group


@njit(cache=True, error_model="numpy")
def rk4_step(m, d, x, t, tau_drive, h):
    """Advance state x (in place) from time t by one RK4 step of size h (s)."""
    n = x.shape[0]
    xs, k1, k2, k3, k4 = d.xs, d.k1, d.k2, d.k3, d.k4
    derivative(m, d, x, t, tau_drive, k1)
    for i in range(n):
        xs[i] = x[i] + 0.5 * h * k1[i]
    derivative(m, d, xs, t + 0.5 * h, tau_drive, k2)
    for i in range(n):
        xs[i] = x[i] + 0.5 * h * k2[i]
    derivative(m, d, xs, t + 0.5 * h, tau_drive, k3)
    for i in range(n):
        xs[i] = x[i] + h * k3[i]
    derivative(m, d, xs, t + h, tau_drive, k4)
    c = h / 6.0
    for i in range(n):
        x[i] += c * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    if m.nc > 0 and m.con_opt[3] != 0.0:
        project(m, d, x, t + h, _ALL_GROUPS)


@njit(cache=True, error_model="numpy")
def rk4_steps(m, d, x, t, tau_drive, h, nsteps):
    """``nsteps`` RK4 steps of size h from time t (step k starts at t + k·h). Returns False
    and stops at the first step that produces a non-finite state (x then holds it: callers
    that must keep the last good state copy x beforehand)."""
    n = x.shape[0]
    for s in range(nsteps):
        rk4_step(m, d, x, t + s * h, tau_drive, h)
        for i in range(n):
            if not (x[i] - x[i] == 0.0):
                return False
    return True
