"""Compiled trajectories: a table of time segments and its jitted evaluation (the
description side is fmu_mb.trajectories).

A trajectory is a vector function p̂(t) ∈ R³ (scalar ones use component 0)
given as segments sorted by start time. At time t the last segment that has
started is evaluated; each segment holds its end values after it finishes
(so gaps between segments are stops) and the first segment holds its start
values before it begins.

Segment kinds (``par`` columns):

    QUINTIC  p0[0:3], p1[3:6]:       p = p0 + (p1 − p0)·s(τ), s the quintic of
                                      paper 000 eq. (28), τ = (t − t0)/(t1 − t0)
    ELLIPSE  c[0:3], a, b, φ0, φ1:    p = c + (a cos φ, b sin φ, 0),
                                      φ = φ0 + (φ1 − φ0)·s(τ)
    LINEAR   p0[0:3], rate[3:6]:      p = p0 + rate·(t − t0) for t ≥ t0 (the rate applies
                                      from t0 on, right-continuous; t1 is ignored)

Arrays: ``seg_kind`` (nseg,) int64, ``seg_time`` (nseg, 2) = (t0, t1),
``seg_par`` (nseg, 8); trajectory k owns segments traj_first[k] …
traj_first[k] + traj_count[k] − 1.

The quintic rest-to-rest profile of paper 000 eq. (28) and paper 001 eq. (22):

    s(τ) = 10 τ³ − 15 τ⁴ + 6 τ⁵,   τ = (t − t_s) / Δt ∈ [0, 1],

so that a coordinate moves from s_s to s_s + Δs with zero velocity and
acceleration at both ends: x(t) = s_s + Δs·s(τ), ẋ = Δs·s'(τ)/Δt,
ẍ = Δs·s''(τ)/Δt². Outside [0, 1] the profile is held at its end values.

Time may be complex (``t + i·h``, kernels.jacobian.directional_derivative's time seed, through
:func:`seeded_time`): the segment is chosen by Re t, and the imaginary parts of p̂, dp̂/dt, d²p̂/dt² are
h times their time derivatives (the complex step, kernels.scalar), so the outputs' time derivatives of a
programmed motion (fmi3GetOutputDerivatives) are exact. A real time runs the float code it always ran.
"""
from __future__ import annotations

from numba import njit
from numba.extending import overload

from ..codes import SegmentKind
from .scalar import cos, sin


@njit(cache=True, error_model="numpy", inline="always")
def quintic(tau):
    """(s, ds/dτ, d²s/dτ²) of the rest-to-rest quintic at τ, clamped outside [0, 1] (by Re τ)."""
    if tau.real <= 0.0:
        return 0.0, 0.0, 0.0
    if tau.real >= 1.0:
        return 1.0, 0.0, 0.0
    t2 = tau * tau
    t3 = t2 * tau
    return (t3 * (10.0 - 15.0 * tau + 6.0 * t2),
            t2 * (30.0 - 60.0 * tau + 30.0 * t2),
            tau * (60.0 - 180.0 * tau + 120.0 * t2))


@njit(cache=True, error_model="numpy")
def copy_segments(kind, time, par, to_kind, to_time, to_par):
    """The trajectory segments in force (Data.traj_kind, traj_time, traj_par) into another set of the same shape."""
    for k in range(kind.shape[0]):
        to_kind[k] = kind[k]
        for c in range(time.shape[1]):
            to_time[k, c] = time[k, c]
        for c in range(par.shape[1]):
            to_par[k, c] = par[k, c]


@njit(cache=True, error_model="numpy")
def eval_trajectory(seg_kind, seg_time, seg_par, first, count, t, out):
    """out[0] = p̂(t), out[1] = dp̂/dt, out[2] = d²p̂/dt² (out: (3, 3)) of the trajectory
    owning segments first … first + count − 1."""
    k = first
    for s in range(first + 1, first + count):
        if seg_time[s, 0] <= t.real:
            k = s
    kind = seg_kind[k]
    t0, t1 = seg_time[k, 0], seg_time[k, 1]
    if kind == SegmentKind.LINEAR:
        on = t.real >= t0
        dt = t - t0 if on else 0.0
        for c in range(3):
            out[0, c] = seg_par[k, c] + seg_par[k, 3 + c] * dt
            out[1, c] = seg_par[k, 3 + c] if on else 0.0
            out[2, c] = 0.0
        return
    T = t1 - t0
    s, ds, dds = quintic((t - t0) / T)
    ds /= T
    dds /= T * T
    if kind == SegmentKind.QUINTIC:
        for c in range(3):
            dp = seg_par[k, 3 + c] - seg_par[k, c]
            out[0, c] = seg_par[k, c] + dp * s
            out[1, c] = dp * ds
            out[2, c] = dp * dds
    else:
        a, b, ph0, ph1 = seg_par[k, 3], seg_par[k, 4], seg_par[k, 5], seg_par[k, 6]
        dph = ph1 - ph0
        ph = ph0 + dph * s
        w = dph * ds
        al = dph * dds
        cs, sn = cos(ph), sin(ph)
        out[0, 0] = seg_par[k, 0] + a * cs
        out[0, 1] = seg_par[k, 1] + b * sn
        out[0, 2] = seg_par[k, 2]
        out[1, 0] = -a * sn * w
        out[1, 1] = b * cs * w
        out[1, 2] = 0.0
        out[2, 0] = -a * (cs * w * w + sn * al)
        out[2, 1] = b * (cs * al - sn * w * w)
        out[2, 2] = 0.0


def seeded_time(t, seed):
    """The time at which a Data's trajectories are evaluated: ``t`` for a real Data; for a complex-step Data
    ``t + seed[0]`` (Data.traj_seed: i·h·v_t, zero but in a derivative along time)."""
    return t


@overload(seeded_time)
def _seeded_time(t, seed):
    from numba import types
    if isinstance(seed.dtype, types.Complex):
        return lambda t, seed: t + seed[0]
    return lambda t, seed: t
