"""Forward kinematics: placements, spatial velocities and velocity-product accelerations.

Homogeneous transforms of paper 000 eqs. (5)–(6) / paper 001 eq. (12),
computed recursively: T_i = T_parent(i) · T̃_i with T̃_i = placement · joint
motion. Velocities are spatial (angular ω, linear velocity of the frame origin)
in body coordinates, as in Featherstone's recursive algorithms.

Kernel conventions (numba performance, measured on this code):
* kernels take the StructRef handles ``m`` (Model) and ``d`` (Data) and read
  every field they need once, at the top; helpers take arrays and scalars;
* arrays are indexed directly (``a[i, r]``), no views (``a[i]``) in loops.
Each violation costs atomic reference counting that numba cannot prune when the
function also makes calls: up to 20× slower kernels.
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType
from .scalar import cos, sin


@njit(cache=True, error_model="numpy", inline="always")
def axis_rotation(a0, a1, a2, angle):
    """Rodrigues' rotation about the unit axis (a0, a1, a2) by ``angle`` (rad), row-major 9-tuple."""
    c = cos(angle)
    s = sin(angle)
    t = 1.0 - c
    return (c + a0 * a0 * t, a0 * a1 * t - a2 * s, a0 * a2 * t + a1 * s,
            a1 * a0 * t + a2 * s, c + a1 * a1 * t, a1 * a2 * t - a0 * s,
            a2 * a0 * t - a1 * s, a2 * a1 * t + a0 * s, c + a2 * a2 * t)


@njit(cache=True, error_model="numpy")
def forward_kinematics(m, d, q, v):
    """Fill placements (lR, lp, oR, op), velocities (w, vl) and the
    velocity-product accelerations c = v_i × S_i q̇_i (cw, cl) of all bodies."""
    nbody, parent, jtype, ax, R0, p0, dof = (m.nbody, m.body_parent, m.body_jtype, m.body_axis,
                                             m.body_R0, m.body_p0, m.body_dof)
    lR, lp, oR, op, w, vl, cw, cl = d.lR, d.lp, d.oR, d.op, d.w, d.vl, d.cw, d.cl
    for i in range(nbody):
        jt = jtype[i]
        # local placement: joint frame placement times the joint motion
        if jt == JointType.REVOLUTE:
            Rj = axis_rotation(ax[i, 0], ax[i, 1], ax[i, 2], q[dof[i]])
            for r in range(3):
                for c in range(3):
                    lR[i, r, c] = R0[i, r, 0] * Rj[c] + R0[i, r, 1] * Rj[3 + c] + R0[i, r, 2] * Rj[6 + c]
                lp[i, r] = p0[i, r]
        elif jt == JointType.PRISMATIC:
            s = q[dof[i]]
            for r in range(3):
                for c in range(3):
                    lR[i, r, c] = R0[i, r, c]
                lp[i, r] = p0[i, r] + s * (R0[i, r, 0] * ax[i, 0] + R0[i, r, 1] * ax[i, 1] + R0[i, r, 2] * ax[i, 2])
        else:
            for r in range(3):
                for c in range(3):
                    lR[i, r, c] = R0[i, r, c]
                lp[i, r] = p0[i, r]
        p = parent[i]
        if p < 0:
            for r in range(3):
                for c in range(3):
                    oR[i, r, c] = lR[i, r, c]
                op[i, r] = lp[i, r]
                w[i, r] = 0.0
                vl[i, r] = 0.0
        else:
            for r in range(3):
                for c in range(3):
                    oR[i, r, c] = oR[p, r, 0] * lR[i, 0, c] + oR[p, r, 1] * lR[i, 1, c] + oR[p, r, 2] * lR[i, 2, c]
                op[i, r] = op[p, r] + oR[p, r, 0] * lp[i, 0] + oR[p, r, 1] * lp[i, 1] + oR[p, r, 2] * lp[i, 2]
            # linear velocity at the child origin in parent coordinates: v_p + ω_p × p
            tx = vl[p, 0] + w[p, 1] * lp[i, 2] - w[p, 2] * lp[i, 1]
            ty = vl[p, 1] + w[p, 2] * lp[i, 0] - w[p, 0] * lp[i, 2]
            tz = vl[p, 2] + w[p, 0] * lp[i, 1] - w[p, 1] * lp[i, 0]
            for r in range(3):
                w[i, r] = lR[i, 0, r] * w[p, 0] + lR[i, 1, r] * w[p, 1] + lR[i, 2, r] * w[p, 2]
                vl[i, r] = lR[i, 0, r] * tx + lR[i, 1, r] * ty + lR[i, 2, r] * tz
        for r in range(3):
            cw[i, r] = 0.0
            cl[i, r] = 0.0
        if jt == JointType.REVOLUTE:
            qd = v[dof[i]]
            a0, a1, a2 = ax[i, 0] * qd, ax[i, 1] * qd, ax[i, 2] * qd
            # c = v_i × (a q̇, 0): (ω × a q̇, v × a q̇)
            cw[i, 0] = w[i, 1] * a2 - w[i, 2] * a1
            cw[i, 1] = w[i, 2] * a0 - w[i, 0] * a2
            cw[i, 2] = w[i, 0] * a1 - w[i, 1] * a0
            cl[i, 0] = vl[i, 1] * a2 - vl[i, 2] * a1
            cl[i, 1] = vl[i, 2] * a0 - vl[i, 0] * a2
            cl[i, 2] = vl[i, 0] * a1 - vl[i, 1] * a0
            w[i, 0] += a0
            w[i, 1] += a1
            w[i, 2] += a2
        elif jt == JointType.PRISMATIC:
            qd = v[dof[i]]
            a0, a1, a2 = ax[i, 0] * qd, ax[i, 1] * qd, ax[i, 2] * qd
            # c = v_i × (0, a q̇) = (0, ω × a q̇)
            cl[i, 0] = w[i, 1] * a2 - w[i, 2] * a1
            cl[i, 1] = w[i, 2] * a0 - w[i, 0] * a2
            cl[i, 2] = w[i, 0] * a1 - w[i, 1] * a0
            vl[i, 0] += a0
            vl[i, 1] += a1
            vl[i, 2] += a2


@njit(cache=True, error_model="numpy", inline="always")
def point_position(oR, op, b, px, py, pz):
    """World position of the point (px, py, pz) of body b's frame."""
    return (op[b, 0] + oR[b, 0, 0] * px + oR[b, 0, 1] * py + oR[b, 0, 2] * pz,
            op[b, 1] + oR[b, 1, 0] * px + oR[b, 1, 1] * py + oR[b, 1, 2] * pz,
            op[b, 2] + oR[b, 2, 0] * px + oR[b, 2, 1] * py + oR[b, 2, 2] * pz)


@njit(cache=True, error_model="numpy", inline="always")
def point_velocity(oR, w, vl, b, px, py, pz):
    """World velocity of the point (px, py, pz) of body b's frame."""
    lx = vl[b, 0] + w[b, 1] * pz - w[b, 2] * py
    ly = vl[b, 1] + w[b, 2] * px - w[b, 0] * pz
    lz = vl[b, 2] + w[b, 0] * py - w[b, 1] * px
    return (oR[b, 0, 0] * lx + oR[b, 0, 1] * ly + oR[b, 0, 2] * lz,
            oR[b, 1, 0] * lx + oR[b, 1, 1] * ly + oR[b, 1, 2] * lz,
            oR[b, 2, 0] * lx + oR[b, 2, 1] * ly + oR[b, 2, 2] * lz)


@njit(cache=True, error_model="numpy")
def world_point(m, d, b, px, py, pz):
    """World position of a body point after forward_kinematics (3-tuple)."""
    return point_position(d.oR, d.op, b, px, py, pz)
