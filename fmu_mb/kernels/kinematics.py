"""Forward kinematics: placements, spatial velocities and velocity-product accelerations.

Homogeneous transforms of paper 000 eqs. (5)–(6) / paper 001 eq. (12),
computed recursively: T_i = T_parent(i) · T̃_i with T̃_i = placement · joint
motion. Velocities are spatial (angular ω, linear velocity of the frame origin)
in body coordinates, as in Featherstone's recursive algorithms.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model.compiled import PRISMATIC, REVOLUTE


@njit(cache=True)
def axis_rotation(a, angle, out):
    """Rodrigues' rotation about unit axis ``a`` by ``angle`` (rad) into ``out`` (3, 3)."""
    c = math.cos(angle)
    s = math.sin(angle)
    t = 1.0 - c
    x, y, z = a[0], a[1], a[2]
    out[0, 0] = c + x * x * t
    out[0, 1] = x * y * t - z * s
    out[0, 2] = x * z * t + y * s
    out[1, 0] = y * x * t + z * s
    out[1, 1] = c + y * y * t
    out[1, 2] = y * z * t - x * s
    out[2, 0] = z * x * t - y * s
    out[2, 1] = z * y * t + x * s
    out[2, 2] = c + z * z * t


@njit(cache=True)
def local_placement(model, data, q, i):
    """data.lR[i], data.lp[i] = placement of body i's frame in its parent frame."""
    R0 = model.body_R0[i]
    p0 = model.body_p0[i]
    lR = data.lR[i]
    lp = data.lp[i]
    jt = model.body_jtype[i]
    a = model.body_axis[i]
    if jt == REVOLUTE:
        Rj = data.r33
        axis_rotation(a, q[model.body_dof[i]], Rj)
        for r in range(3):
            for c in range(3):
                lR[r, c] = R0[r, 0] * Rj[0, c] + R0[r, 1] * Rj[1, c] + R0[r, 2] * Rj[2, c]
            lp[r] = p0[r]
    elif jt == PRISMATIC:
        s = q[model.body_dof[i]]
        for r in range(3):
            for c in range(3):
                lR[r, c] = R0[r, c]
            lp[r] = p0[r] + s * (R0[r, 0] * a[0] + R0[r, 1] * a[1] + R0[r, 2] * a[2])
    else:
        for r in range(3):
            for c in range(3):
                lR[r, c] = R0[r, c]
            lp[r] = p0[r]


@njit(cache=True)
def forward_kinematics(model, data, q, v):
    """Fill placements (lR, lp, oR, op), velocities (w, vl) and the
    velocity-product accelerations c = v_i × S_i q̇_i (cw, cl) of all bodies."""
    for i in range(model.nbody):
        local_placement(model, data, q, i)
        p = model.body_parent[i]
        lR = data.lR[i]
        lp = data.lp[i]
        oR = data.oR[i]
        op = data.op[i]
        w = data.w[i]
        vl = data.vl[i]
        if p < 0:
            for r in range(3):
                for c in range(3):
                    oR[r, c] = lR[r, c]
                op[r] = lp[r]
                w[r] = 0.0
                vl[r] = 0.0
        else:
            pR = data.oR[p]
            pp = data.op[p]
            pw = data.w[p]
            pv = data.vl[p]
            for r in range(3):
                for c in range(3):
                    oR[r, c] = pR[r, 0] * lR[0, c] + pR[r, 1] * lR[1, c] + pR[r, 2] * lR[2, c]
                op[r] = pp[r] + pR[r, 0] * lp[0] + pR[r, 1] * lp[1] + pR[r, 2] * lp[2]
            # v_lin at the child origin, parent coordinates: v_p + ω_p × p
            tx = pv[0] + pw[1] * lp[2] - pw[2] * lp[1]
            ty = pv[1] + pw[2] * lp[0] - pw[0] * lp[2]
            tz = pv[2] + pw[0] * lp[1] - pw[1] * lp[0]
            for r in range(3):
                w[r] = lR[0, r] * pw[0] + lR[1, r] * pw[1] + lR[2, r] * pw[2]
                vl[r] = lR[0, r] * tx + lR[1, r] * ty + lR[2, r] * tz
        cw = data.cw[i]
        cl = data.cl[i]
        jt = model.body_jtype[i]
        a = model.body_axis[i]
        for r in range(3):
            cw[r] = 0.0
            cl[r] = 0.0
        if jt == REVOLUTE:
            qd = v[model.body_dof[i]]
            # parent motion expressed here, then add S q̇; c = v_i × (a q̇, 0)
            w0 = w[0] + a[0] * qd
            w1 = w[1] + a[1] * qd
            w2 = w[2] + a[2] * qd
            cw[0] = (w1 * a[2] - w2 * a[1]) * qd
            cw[1] = (w2 * a[0] - w0 * a[2]) * qd
            cw[2] = (w0 * a[1] - w1 * a[0]) * qd
            cl[0] = (vl[1] * a[2] - vl[2] * a[1]) * qd
            cl[1] = (vl[2] * a[0] - vl[0] * a[2]) * qd
            cl[2] = (vl[0] * a[1] - vl[1] * a[0]) * qd
            w[0] = w0
            w[1] = w1
            w[2] = w2
        elif jt == PRISMATIC:
            qd = v[model.body_dof[i]]
            # c = v_i × (0, a q̇) = (0, ω × a q̇)
            cl[0] = (w[1] * a[2] - w[2] * a[1]) * qd
            cl[1] = (w[2] * a[0] - w[0] * a[2]) * qd
            cl[2] = (w[0] * a[1] - w[1] * a[0]) * qd
            vl[0] += a[0] * qd
            vl[1] += a[1] * qd
            vl[2] += a[2] * qd


@njit(cache=True)
def point_position(data, body, pos, out):
    """World position of point ``pos`` (body frame) of ``body`` into ``out`` (3,)."""
    R = data.oR[body]
    p = data.op[body]
    for r in range(3):
        out[r] = p[r] + R[r, 0] * pos[0] + R[r, 1] * pos[1] + R[r, 2] * pos[2]


@njit(cache=True)
def point_velocity(data, body, pos, out):
    """World velocity of point ``pos`` (body frame) of ``body`` into ``out`` (3,)."""
    w = data.w[body]
    vl = data.vl[body]
    R = data.oR[body]
    lx = vl[0] + w[1] * pos[2] - w[2] * pos[1]
    ly = vl[1] + w[2] * pos[0] - w[0] * pos[2]
    lz = vl[2] + w[0] * pos[1] - w[1] * pos[0]
    for r in range(3):
        out[r] = R[r, 0] * lx + R[r, 1] * ly + R[r, 2] * lz
