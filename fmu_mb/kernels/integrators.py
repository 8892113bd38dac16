"""Fixed-step integrators over the staged pipeline (kernels.dynamics.state_derivative).

The papers integrate with the classical 4th-order Runge–Kutta scheme at a
constant step (000: h = 1e-5 s, 001: h = 2.5e-4 s); so do we. The driving
input is held constant over a step (zero-order hold). The stage vectors live in
``d`` (xs, k1…k4): nothing is allocated per step.
"""
from __future__ import annotations

from numba import njit

from .dynamics import state_derivative


@njit(cache=True, error_model="numpy")
def rk4_step(m, d, x, tau_drive, h):
    """Advance state x (in place) by one RK4 step of size h (s)."""
    n = x.shape[0]
    xs, k1, k2, k3, k4 = d.xs, d.k1, d.k2, d.k3, d.k4
    state_derivative(m, d, x, tau_drive, k1)
    for i in range(n):
        xs[i] = x[i] + 0.5 * h * k1[i]
    state_derivative(m, d, xs, tau_drive, k2)
    for i in range(n):
        xs[i] = x[i] + 0.5 * h * k2[i]
    state_derivative(m, d, xs, tau_drive, k3)
    for i in range(n):
        xs[i] = x[i] + h * k3[i]
    state_derivative(m, d, xs, tau_drive, k4)
    c = h / 6.0
    for i in range(n):
        x[i] += c * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@njit(cache=True, error_model="numpy")
def rk4_steps(m, d, x, tau_drive, h, nsteps):
    """``nsteps`` RK4 steps of size h. Returns False and stops at the first step
    that produces a non-finite state (x then holds it: callers that must keep
    the last good state copy x beforehand)."""
    n = x.shape[0]
    for _ in range(nsteps):
        rk4_step(m, d, x, tau_drive, h)
        for i in range(n):
            if not (x[i] - x[i] == 0.0):
                return False
    return True
