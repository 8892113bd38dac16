"""The state of a linear model: a mechanism's coordinates, rates and bristle states, reduced to
independent ones when constraints tie them.

Trees: x = [q, q̇, z] (the energy counters of the simulation state are left out: nothing depends on
them). Constrained mechanisms (paper 000 eqs. 25–26, coordinate partitioning): the run's partition
(kernels.partition, d.cp_*) names r independent rows and their r dependent coordinates; the reduced
state is [q_i, q̇_i, z] with

* q_i the coordinates not tied by a position-level row: the dependent positions q_d,H are the
  subset of the partition's dependent coordinates that makes the holonomic rows' block C_H,d regular
  (all of them without first-order rows; a knife edge ties a velocity, not a position);
* q̇_i the rates not tied by any row (the partition's independent coordinates).

Its tangent map T (δx = T δx_r on the constraint manifold, the implicit-function theorem) is

    δq = T_q δq_i,               T_q = [I; −C_H,d⁻¹ C_H,i]
    δq̇ = T_vq δq_i + T_v δq̇_i,  T_v = [I; −C_d⁻¹ C_i],  T_vq = [0; −C_d⁻¹ ∂Φ̇/∂q · T_q]

(Φ̇ = C q̇ + Φ_t; ∂Φ̇/∂q by the complex step, kernels.jacobian.constraint_rate_jacobian), so a linear
model in reduced coordinates is A_r = A[rows] T, C_r = C T with ``rows`` the reduced state's
components of the full state.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..codes import RowKind
from ..outputs import coordinate_kind
from ..units import coordinate_units


@dataclass
class StateCoordinates:
    T: np.ndarray          # (2nv + nz, n): δx = T δx_r
    rows: np.ndarray       # (n,): x_r = x[rows]
    names: list            # state names: coordinate, coordinate + "_dot", joint + ".z"
    units: list
    note: str              # which coordinates are independent, and why


def _names_units(cm, rows: np.ndarray) -> tuple[list, list]:
    m = cm.model
    nv, nz = m.nv, m.nz
    bristle = {int(m.dof_fric_z[k]): k for k in range(nv) if m.dof_fric_z[k] >= 0}
    names, units = [], []
    for r in rows:
        r = int(r)
        k = r % nv if r < 2 * nv else bristle[r - 2 * nv]
        pos, vel, _ = coordinate_units(coordinate_kind(cm, k))
        if r < nv:
            names.append(cm.dof_names[k])
            units.append(pos)
        elif r < 2 * nv:
            names.append(cm.dof_names[k] + "_dot")
            units.append(vel)
        else:
            names.append(cm.dof_names[k].rsplit(".", 1)[0] + ".z")
            units.append(pos)
    return names, units


def state_coordinates(sim, complex_step, x, t: float) -> StateCoordinates:
    """The reduced state of ``sim``'s mechanism at state x, time t (module docstring); ``sim`` evaluated
    at x first (its partition is the one used)."""
    cm, m = sim.cm, sim.model
    nv, nz = m.nv, m.nz
    n = 2 * nv + nz
    if m.nc == 0:
        rows = np.arange(n)
        names, units = _names_units(cm, rows)
        return StateCoordinates(np.eye(n), rows, names, units, "every coordinate is independent (a tree)")
    d = sim.data
    r = int(d.cp_rank[0])
    irows = np.array(d.cp_rows[:r], dtype=np.int64)
    dep_v = np.array(d.cp_cols[:r], dtype=np.int64)
    C = np.array(d.con_C[irows])
    hol = m.con_kind[irows] != RowKind.VEL
    CH = C[hol]
    if CH.shape[0]:
        _, _, piv = scipy.linalg.qr(CH[:, dep_v], pivoting=True, mode="economic")
        dep_q = np.sort(dep_v[piv[:CH.shape[0]]])
    else:
        dep_q = np.zeros(0, np.int64)
    ind_q = np.setdiff1d(np.arange(nv), dep_q)
    ind_v = np.setdiff1d(np.arange(nv), dep_v)
    Tq = np.zeros((nv, ind_q.size))
    Tq[ind_q, np.arange(ind_q.size)] = 1.0
    if dep_q.size:
        Tq[dep_q] = -np.linalg.solve(CH[:, dep_q], CH[:, ind_q])
    Cd = C[:, dep_v]
    Tv = np.zeros((nv, ind_v.size))
    Tv[ind_v, np.arange(ind_v.size)] = 1.0
    Tv[dep_v] = -np.linalg.solve(Cd, C[:, ind_v])
    Tvq = np.zeros((nv, ind_q.size))
    if ind_q.size:
        G = complex_step.constraint_rates(x, t, Tq)[irows]
        Tvq[dep_v] = -np.linalg.solve(Cd, G)
    nq, nw = ind_q.size, ind_v.size
    T = np.zeros((n, nq + nw + nz))
    T[:nv, :nq] = Tq
    T[nv:2 * nv, :nq] = Tvq
    T[nv:2 * nv, nq:nq + nw] = Tv
    T[2 * nv:, nq + nw:] = np.eye(nz)
    rows = np.concatenate([ind_q, nv + ind_v, 2 * nv + np.arange(nz)]).astype(np.int64)
    names, units = _names_units(cm, rows)
    dq = ", ".join(cm.dof_names[k] for k in dep_q) or "none"
    dv = ", ".join(cm.dof_names[k] for k in dep_v)
    note = (f"{r} independent constraint rows of {m.nc}; dependent coordinates (the run's partition, paper 000 "
            f"eq. 25): positions {dq}; rates {dv}")
    return StateCoordinates(T, rows, names, units, note)
