"""Compiled trajectories: a table of time segments and its jitted evaluation.

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
"""
from __future__ import annotations

import math

from numba import njit

from .kinds import ELLIPSE, LINEAR, NPAR, QUINTIC
from .profiles import quintic


@njit(cache=True, error_model="numpy")
def eval_trajectory(seg_kind, seg_time, seg_par, first, count, t, out):
    """out[0] = p̂(t), out[1] = dp̂/dt, out[2] = d²p̂/dt² (out: (3, 3)) of the trajectory
    owning segments first … first + count − 1."""
    k = first
    for s in range(first + 1, first + count):
        if seg_time[s, 0] <= t:
            k = s
    kind = seg_kind[k]
    t0, t1 = seg_time[k, 0], seg_time[k, 1]
    if kind == LINEAR:
        on = t >= t0
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
    if kind == QUINTIC:
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
        cs, sn = math.cos(ph), math.sin(ph)
        out[0, 0] = seg_par[k, 0] + a * cs
        out[0, 1] = seg_par[k, 1] + b * sn
        out[0, 2] = seg_par[k, 2]
        out[1, 0] = -a * sn * w
        out[1, 1] = b * cs * w
        out[1, 2] = 0.0
        out[2, 0] = -a * (cs * w * w + sn * al)
        out[2, 1] = b * (cs * al - sn * w * w)
        out[2, 2] = 0.0
