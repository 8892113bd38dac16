"""Fixed-step integrators over the state derivative.

The papers integrate with the classical 4th-order Runge–Kutta scheme at a
constant step (000: h = 1e-5 s, 001: h = 2.5e-4 s); so do we. The driving
input is held constant over a step (zero-order hold); programmed constraints see
the stage times t, t + h/2, t + h. With ``ConstraintSolver.projection`` the
holonomic constraints are solved for the positions and the velocities projected
after every step (kernels.projection.project). The stage vectors live in ``d``
(xs, k1…k4): nothing is allocated per step.

Trees and constrained mechanisms have separate entry points (``*_tree``,
``*_constrained``; the simulator picks one by the number of constraint rows):
numba compiles everything a function can reach, so one dispatching integrator
made every FMU compile the constrained solver, 2.5× the cold start of a tree.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..codes import Group, SolverOption, Work
from .constrained import constrained_stage_derivative, derivative_kept
from .dynamics import stage_derivative
from .projection import project_after_step

ALL_GROUPS = np.ones(len(Group), dtype=np.int64)      # project every constraint group


@njit(cache=True, error_model="numpy")
def _stage(xs, x, c, k):
    """xs = x + c·k."""
    for i in range(x.shape[0]):
        xs[i] = x[i] + c * k[i]


@njit(cache=True, error_model="numpy")
def _combine(x, h, k1, k2, k3, k4):
    """x += h/6·(k1 + 2k2 + 2k3 + k4)."""
    c = h / 6.0
    for i in range(x.shape[0]):
        x[i] += c * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@njit(cache=True, error_model="numpy")
def finite(x) -> bool:
    for i in range(x.shape[0]):
        if not (x[i] - x[i] == 0.0):
            return False
    return True


@njit(cache=True, error_model="numpy")
def rk4_step_tree(m, d, x, t, tau_drive, h):
    """One RK4 step of size h (s) of a mechanism without constraint rows, x in place."""
    xs, k1, k2, k3, k4 = d.xs, d.k1, d.k2, d.k3, d.k4
    d.work[Work.STEPS] += 1
    stage_derivative(m, d, x, tau_drive, k1)
    _stage(xs, x, 0.5 * h, k1)
    stage_derivative(m, d, xs, tau_drive, k2)
    _stage(xs, x, 0.5 * h, k2)
    stage_derivative(m, d, xs, tau_drive, k3)
    _stage(xs, x, h, k3)
    stage_derivative(m, d, xs, tau_drive, k4)
    _combine(x, h, k1, k2, k3, k4)


@njit(cache=True, error_model="numpy")
def rk4_step_constrained(m, d, x, t, tau_drive, h):
    """One RK4 step of size h (s) from time t of a constrained mechanism, x in place, then
    the projection if the solver asks for it."""
    xs, k1, k2, k3, k4 = d.xs, d.k1, d.k2, d.k3, d.k4
    d.work[Work.STEPS] += 1
    if not derivative_kept(m, d, x, t, tau_drive, k1):        # (the outputs' ẋ at this state, time and inputs)
        constrained_stage_derivative(m, d, x, t, tau_drive, k1)
    _stage(xs, x, 0.5 * h, k1)
    constrained_stage_derivative(m, d, xs, t + 0.5 * h, tau_drive, k2)
    _stage(xs, x, 0.5 * h, k2)
    constrained_stage_derivative(m, d, xs, t + 0.5 * h, tau_drive, k3)
    _stage(xs, x, h, k3)
    constrained_stage_derivative(m, d, xs, t + h, tau_drive, k4)
    _combine(x, h, k1, k2, k3, k4)
    if d.solver_opt[SolverOption.PROJECTION] != 0.0:
        project_after_step(m, d, x, t + h, ALL_GROUPS)


@njit(cache=True, error_model="numpy")
def rk4_steps_tree(m, d, x, t, tau_drive, h, nsteps):
    """``nsteps`` RK4 steps of size h from time t (step k starts at t + k·h) of a mechanism without
    constraint rows. Returns False and stops at the first step that produces a non-finite state (x then
    holds it: callers that must keep the last good state copy x beforehand)."""
    for s in range(nsteps):
        rk4_step_tree(m, d, x, t + s * h, tau_drive, h)
        if not finite(x):
            return False
    return True


@njit(cache=True, error_model="numpy")
def rk4_steps_constrained(m, d, x, t, tau_drive, h, nsteps):
    """The same for a constrained mechanism."""
    for s in range(nsteps):
        rk4_step_constrained(m, d, x, t + s * h, tau_drive, h)
        if not finite(x):
            return False
    return True
