"""Recursive Newton–Euler: inverse dynamics and joint reaction wrenches.

After :func:`~fmu_mb.kernels.kinematics.forward_kinematics`, :func:`rnea`
computes body accelerations forward (gravity folded in as a ground
acceleration −g) and body forces backward. ``data.fM[i], data.fF[i]`` is then
the wrench the parent exerts on body i across its joint — the joint reaction
including the driving/friction torque along the axis — expressed in body i's
frame (the joint frame after the motion) about its origin; ``data.tau`` the
generalized forces M q̈ + b(q, q̇) (Pinocchio's ``rnea`` and ``data.f``).
This is the recursive Newton–Euler pass papers 000 (eq. 21) and 001 (eq. 13)
use for the joint forces of their friction models.
"""
from __future__ import annotations

from numba import njit

from ..model.compiled import PRISMATIC, REVOLUTE
from .spatial import add_force_to_parent, add_velocity_product, inertia_times


@njit(cache=True)
def accelerations(model, data, qdd):
    """data.aw, data.al = spatial accelerations for joint accelerations ``qdd`` (ground at −g)."""
    g = model.gravity
    for i in range(model.nbody):
        p = model.body_parent[i]
        R = data.lR[i]
        lp = data.lp[i]
        aw = data.aw[i]
        al = data.al[i]
        if p < 0:
            pw0, pw1, pw2 = 0.0, 0.0, 0.0
            pl0, pl1, pl2 = -g[0], -g[1], -g[2]
        else:
            pw0, pw1, pw2 = data.aw[p, 0], data.aw[p, 1], data.aw[p, 2]
            pl0, pl1, pl2 = data.al[p, 0], data.al[p, 1], data.al[p, 2]
        tx = pl0 + pw1 * lp[2] - pw2 * lp[1]
        ty = pl1 + pw2 * lp[0] - pw0 * lp[2]
        tz = pl2 + pw0 * lp[1] - pw1 * lp[0]
        for r in range(3):
            aw[r] = R[0, r] * pw0 + R[1, r] * pw1 + R[2, r] * pw2 + data.cw[i, r]
            al[r] = R[0, r] * tx + R[1, r] * ty + R[2, r] * tz + data.cl[i, r]
        jt = model.body_jtype[i]
        if jt == REVOLUTE:
            s = qdd[model.body_dof[i]]
            a = model.body_axis[i]
            for r in range(3):
                aw[r] += a[r] * s
        elif jt == PRISMATIC:
            s = qdd[model.body_dof[i]]
            a = model.body_axis[i]
            for r in range(3):
                al[r] += a[r] * s


@njit(cache=True)
def body_forces(model, data, with_external):
    """Backward pass: data.fM/fF (joint wrenches) and data.tau from data.aw/al.

    with_external: subtract the external wrenches data.extM/extF (supports)."""
    nb = model.nbody
    for i in range(nb):
        inertia_times(model, i, data.aw[i], data.al[i], data.fM[i], data.fF[i])
        add_velocity_product(model, i, data.w[i], data.vl[i], data.fM[i], data.fF[i])
        if with_external:
            for r in range(3):
                data.fM[i, r] -= data.extM[i, r]
                data.fF[i, r] -= data.extF[i, r]
    for i in range(nb - 1, -1, -1):
        jt = model.body_jtype[i]
        if jt != 0:
            a = model.body_axis[i]
            f = data.fM[i] if jt == REVOLUTE else data.fF[i]
            data.tau[model.body_dof[i]] = a[0] * f[0] + a[1] * f[1] + a[2] * f[2]
        p = model.body_parent[i]
        if p >= 0:
            add_force_to_parent(data.lR[i], data.lp[i], data.fM[i], data.fF[i], data.fM[p], data.fF[p])


@njit(cache=True)
def rnea(model, data, qdd, with_external):
    """Inverse dynamics after forward_kinematics: data.tau = M(q) q̈ + b(q, q̇)
    (b: velocity products, gravity, minus external support forces if
    ``with_external``), with joint reaction wrenches in data.fM/fF."""
    accelerations(model, data, qdd)
    body_forces(model, data, with_external)
