"""One communication step: the remainder rule, the integration scheme chosen by its code, and the
checkpoint that undoes it (what the Simulator and both FMU kinds run: one home).

``advance_*(m, d, x, t, tau_drive, h, dt, scheme)`` integrates [t, t + dt] at the internal step h with
the scheme ``codes.Scheme`` (MuJoCo's ``mj_step`` shape: one entry, switching on the integrator):
n = round(dt/h) full steps when dt/h lies within 1e-9 of that integer, else n = ⌊dt/h⌋, and, if a
remainder r = dt − n·h > 1e-9·h is left, one last step of size r, exactly to the step's end (a Rosenbrock
remainder with the damped γ while the fallback window of a redone step lasts, kernels.linearly_implicit). So any
communication step ends where it should, and a dt that is a multiple of h reproduces the plain
fixed-step result bit for bit. The full steps run guarded (kernels.linearly_implicit._guarded_steps),
the remainder as one plain step. Before it starts, x and everything besides x that a step changes (the
coordinate partition, its counters, the friction counters, the damped steps still to take) are kept in Data's ``chk_*``; a step that
produces a non-finite state is rolled back there and 0 returned. :func:`rollback` goes back to that
checkpoint later too (an FMU refusing a finite result: a constraint violated beyond its bound).

Trees and constrained mechanisms keep separate entries: numba compiles everything a function can
reach, and one entry for both made every tree compile the constrained solver (2.5× the cold start of a
tree, kernels.integrators). The input is held constant over the step (zero-order hold).
"""
from __future__ import annotations

import math

from numba import njit

from ..codes import Scheme, SolverStat
from .integrators import finite, rk4_step_constrained, rk4_step_tree, rk4_steps_constrained, rk4_steps_tree
from .linearly_implicit import (remainder_step, ros2_steps_constrained, ros2_steps_tree, ros3_steps_constrained,
                                ros3_steps_tree)


@njit(cache=True, error_model="numpy")
def full_steps(dt, h):
    """Number of full internal steps of the remainder rule."""
    ratio = dt / h
    n = math.floor(ratio + 0.5)
    if abs(ratio - n) > 1e-9 * max(1.0, ratio):
        n = math.floor(ratio)
    return int(n)


@njit(cache=True, error_model="numpy")
def _checkpoint(d, x):
    for i in range(x.shape[0]):
        d.chk_x[i] = x[i]
    for i in range(d.cp_rows.shape[0]):
        d.chk_rows[i] = d.cp_rows[i]
    for i in range(d.cp_cols.shape[0]):
        d.chk_cols[i] = d.cp_cols[i]
    c = d.chk_count
    c[0], c[1], c[2], c[3], c[4] = d.cp_rank[0], d.cp_valid[0], d.cp_count[0], d.fric_fail[0], d.fric_iters[0]
    c[5] = d.lin_hold[0]
    d.chk_pivot[0] = d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN]


@njit(cache=True, error_model="numpy")
def rollback(m, d, x):
    """Back to the start of the last communication step (x, partition, counters)."""
    for i in range(x.shape[0]):
        x[i] = d.chk_x[i]
    for i in range(d.cp_rows.shape[0]):
        d.cp_rows[i] = d.chk_rows[i]
    for i in range(d.cp_cols.shape[0]):
        d.cp_cols[i] = d.chk_cols[i]
    c = d.chk_count
    d.cp_rank[0], d.cp_valid[0], d.cp_count[0], d.fric_fail[0], d.fric_iters[0] = c[0], c[1], c[2], c[3], c[4]
    d.lin_hold[0] = c[5]
    d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN] = d.chk_pivot[0]


@njit(cache=True, error_model="numpy")
def advance_tree(m, d, x, t, tau_drive, h, dt, scheme):
    """[t, t + dt] of a mechanism without constraint rows (module docstring); 1, or 0 rolled back."""
    n = full_steps(dt, h)
    rem = dt - n * h
    _checkpoint(d, x)
    if scheme == Scheme.RK4:
        ok = rk4_steps_tree(m, d, x, t, tau_drive, h, n)
    elif scheme == Scheme.ROS2:
        ok = ros2_steps_tree(m, d, x, t, tau_drive, h, n)
    else:
        ok = ros3_steps_tree(m, d, x, t, tau_drive, h, n)
    if ok and rem > 1e-9 * h:
        if scheme == Scheme.RK4:
            rk4_step_tree(m, d, x, t + n * h, tau_drive, rem)
        else:
            remainder_step(m, d, x, t + n * h, tau_drive, rem, False, scheme == Scheme.ROS34PW2)
        ok = finite(x)
    if not ok:
        rollback(m, d, x)
    return 1 if ok else 0


@njit(cache=True, error_model="numpy")
def advance_constrained(m, d, x, t, tau_drive, h, dt, scheme):
    """The same for a constrained mechanism."""
    n = full_steps(dt, h)
    rem = dt - n * h
    _checkpoint(d, x)
    if scheme == Scheme.RK4:
        ok = rk4_steps_constrained(m, d, x, t, tau_drive, h, n)
    elif scheme == Scheme.ROS2:
        ok = ros2_steps_constrained(m, d, x, t, tau_drive, h, n)
    else:
        ok = ros3_steps_constrained(m, d, x, t, tau_drive, h, n)
    if ok and rem > 1e-9 * h:
        if scheme == Scheme.RK4:
            rk4_step_constrained(m, d, x, t + n * h, tau_drive, rem)
        else:
            remainder_step(m, d, x, t + n * h, tau_drive, rem, True, scheme == Scheme.ROS34PW2)
        ok = finite(x)
    if not ok:
        rollback(m, d, x)
    return 1 if ok else 0
