"""The run's state record: everything the next steps depend on besides time and inputs, as float64.

Layout (fmu_mb.model.compiled.record_size values): x (nx: q, q̇, bristle states, energy counters), the coordinate
partition (cp_rows (nc), cp_cols (nv), rank, valid flag, pivot ratio when chosen), the offsets of the
constraint rows (con_off, nc: anchored relative rows), the number of partitions chosen so far and the number of
steps the damped ROS2 still takes after a redone step (kernels.linearly_implicit._guarded_steps). FMU
states carry it (fmu_mb/fmi/c/state.c frames it with the FMU's values and a checksum); so does
Simulator.state_record. :func:`read_record` checks everything before it writes anything.
"""
from __future__ import annotations

import math

from numba import njit

from ..codes import RecordCheck, SolverStat
from ..model.compiled import RECORD_EXTRA, RECORD_MAX_COUNT


@njit(cache=True, error_model="numpy")
def write_record(m, d, x, out):
    """The record of state x and Data d into out (record_size values)."""
    nx, nc, nv = x.shape[0], d.cp_rows.shape[0], d.cp_cols.shape[0]
    for i in range(nx):
        out[i] = x[i]
    o = nx
    for i in range(nc):
        out[o + i] = d.cp_rows[i]
    o += nc
    for i in range(nv):
        out[o + i] = d.cp_cols[i]
    o += nv
    out[o], out[o + 1], out[o + 2] = d.cp_rank[0], d.cp_valid[0], d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN]
    o += 3
    for i in range(nc):
        out[o + i] = d.con_off[i]
    out[o + nc] = d.cp_count[0]
    out[o + nc + 1] = d.lin_hold[0]


@njit(cache=True, error_model="numpy")
def _permutation(rec, off, n):
    """Whether rec[off:off + n] holds each of 0..n-1 once, as whole numbers."""
    for i in range(n):
        v = rec[off + i]
        if not (v >= 0.0 and v < n and math.floor(v) == v):
            return False
        for j in range(i):
            if rec[off + j] == v:
                return False
    return True


@njit(cache=True, error_model="numpy")
def read_record(m, d, rec, x, coordinate_limit, rate_limit, info):
    """Check record ``rec`` (record_size values: the caller checks the length) and, if it passes, write it
    into x and Data. Returns a codes.RecordCheck with info[0] the index and info[1] the value it names
    (nothing is written unless the code is OK)."""
    nx, nc, nv = x.shape[0], d.cp_rows.shape[0], d.cp_cols.shape[0]
    n = nx + 2 * nc + nv + RECORD_EXTRA
    for i in range(n):
        if not (rec[i] - rec[i] == 0.0):
            info[0], info[1] = i, rec[i]
            return RecordCheck.NOT_FINITE
    for i in range(2 * nv):
        lim = coordinate_limit if i < nv else rate_limit
        if abs(rec[i]) > lim:
            info[0], info[1] = i % nv, rec[i]
            return RecordCheck.COORDINATE if i < nv else RecordCheck.RATE
    count = rec[n - 2]
    if not (count >= 0.0 and count <= RECORD_MAX_COUNT and math.floor(count) == count):
        info[0], info[1] = n - 2, count
        return RecordCheck.COUNT
    hold = rec[n - 1]
    if not (hold >= 0.0 and hold <= RECORD_MAX_COUNT and math.floor(hold) == hold):
        info[0], info[1] = n - 1, hold
        return RecordCheck.FALLBACK
    if not (_permutation(rec, nx, nc) and _permutation(rec, nx + nc, nv)):
        info[0], info[1] = nx, 0.0
        return RecordCheck.PARTITION
    o = nx + nc + nv
    rank, valid = rec[o], rec[o + 1]
    if not (math.floor(rank) == rank and rank >= 0.0 and rank <= min(nc, nv)) or not (valid == 0.0 or valid == 1.0):
        info[0], info[1] = o, rank
        return RecordCheck.RANK
    for i in range(nx):
        x[i] = rec[i]
    for i in range(nc):
        d.cp_rows[i] = int(rec[nx + i])
    for i in range(nv):
        d.cp_cols[i] = int(rec[nx + nc + i])
    d.cp_rank[0], d.cp_valid[0] = int(rank), int(valid)
    d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN] = rec[o + 2]
    for i in range(nc):
        d.con_off[i] = rec[o + 3 + i]
    d.cp_count[0] = int(count)
    d.lin_hold[0] = int(hold)
    return RecordCheck.OK
