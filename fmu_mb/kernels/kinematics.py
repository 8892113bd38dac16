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
from .spatial import cross, motion_to_child, motion_to_child_z


@njit(cache=True, error_model="numpy", inline="always")
def axis_rotation(a0, a1, a2, angle):
    """Rodrigues' rotation about the unit axis (a0, a1, a2) by ``angle`` (rad), row-major 9-tuple."""
    c = cos(angle)
    s = sin(angle)
    t = 1.0 - c
    return (c + a0 * a0 * t, a0 * a1 * t - a2 * s, a0 * a2 * t + a1 * s,
            a1 * a0 * t + a2 * s, c + a1 * a1 * t, a1 * a2 * t - a0 * s,
            a2 * a0 * t - a1 * s, a2 * a1 * t + a0 * s, c + a2 * a2 * t)


@njit(cache=True, error_model="numpy", inline="always")
def _placed_row(R0, i, r, j0, j1, j2, j3, j4, j5, j6, j7, j8):
    """Row r of R0[i] times the 3×3 (j0 … j8, row-major)."""
    return (R0[i, r, 0] * j0 + R0[i, r, 1] * j3 + R0[i, r, 2] * j6,
            R0[i, r, 0] * j1 + R0[i, r, 1] * j4 + R0[i, r, 2] * j7,
            R0[i, r, 0] * j2 + R0[i, r, 1] * j5 + R0[i, r, 2] * j8)


@njit(cache=True, error_model="numpy", inline="always")
def _placed_about_unit_axis(R0, i, k, angle):
    """R0[i]·J (row-major 9-tuple), J the rotation by ``angle`` about the unit axis e_k: what
    :func:`axis_rotation` and :func:`_placed_row` give for that axis (the same bits), without the products
    with the axis' zeros. J[k, k] = c + (1 − c) as Rodrigues' formula rounds it."""
    c = cos(angle)
    s = sin(angle)
    ckk = c + (1.0 - c)
    k1 = (k + 1) % 3
    k2 = (k + 2) % 3
    # per row: the columns k, k1, k2 of R0[i]·J (J[k1, k1] = J[k2, k2] = c, J[k2, k1] = s = −J[k1, k2])
    x0, y0, z0 = R0[i, 0, k] * ckk, R0[i, 0, k1] * c + R0[i, 0, k2] * s, R0[i, 0, k2] * c - R0[i, 0, k1] * s
    x1, y1, z1 = R0[i, 1, k] * ckk, R0[i, 1, k1] * c + R0[i, 1, k2] * s, R0[i, 1, k2] * c - R0[i, 1, k1] * s
    x2, y2, z2 = R0[i, 2, k] * ckk, R0[i, 2, k1] * c + R0[i, 2, k2] * s, R0[i, 2, k2] * c - R0[i, 2, k1] * s
    if k == 0:
        return x0, y0, z0, x1, y1, z1, x2, y2, z2
    if k == 1:
        return z0, x0, y0, z1, x1, y1, z2, x2, y2
    return y0, z0, x0, y1, z1, x1, y2, z2, x2


@njit(cache=True, error_model="numpy")
def forward_kinematics(m, d, q, v):
    """Fill placements (lR, lp, oR, op), velocities (w, vl) and the
    velocity-product accelerations c = v_i × S_i q̇_i (cw, cl) of all bodies.

    Each body's local placement, velocity and c are held in scalars and stored once (numba cannot tell the
    arrays apart, so a value read after a store into another array is reloaded)."""
    nbody, parent, jtype, ax, axk, R0, p0, dof = (m.nbody, m.body_parent, m.body_jtype, m.body_axis,
                                                  m.body_axis_k, m.body_R0, m.body_p0, m.body_dof)
    rotz = m.body_rot_z
    lR, lp, oR, op, w, vl, cw, cl = d.lR, d.lp, d.oR, d.op, d.w, d.vl, d.cw, d.cl
    d.fs_last[0] = 0                # a new pass: Data no longer holds the outputs' evaluation (kernels.constrained)
    for i in range(nbody):
        jt = jtype[i]
        # local placement: joint frame placement times the joint motion
        px, py, pz = p0[i, 0], p0[i, 1], p0[i, 2]
        if jt == JointType.REVOLUTE and axk[i] >= 0:
            l00, l01, l02, l10, l11, l12, l20, l21, l22 = _placed_about_unit_axis(R0, i, axk[i], q[dof[i]])
        elif jt == JointType.REVOLUTE:
            j0, j1, j2, j3, j4, j5, j6, j7, j8 = axis_rotation(ax[i, 0], ax[i, 1], ax[i, 2], q[dof[i]])
            l00, l01, l02 = _placed_row(R0, i, 0, j0, j1, j2, j3, j4, j5, j6, j7, j8)
            l10, l11, l12 = _placed_row(R0, i, 1, j0, j1, j2, j3, j4, j5, j6, j7, j8)
            l20, l21, l22 = _placed_row(R0, i, 2, j0, j1, j2, j3, j4, j5, j6, j7, j8)
        else:
            l00, l01, l02 = R0[i, 0, 0], R0[i, 0, 1], R0[i, 0, 2]
            l10, l11, l12 = R0[i, 1, 0], R0[i, 1, 1], R0[i, 1, 2]
            l20, l21, l22 = R0[i, 2, 0], R0[i, 2, 1], R0[i, 2, 2]
            if jt == JointType.PRISMATIC:
                sq = q[dof[i]]
                px = px + sq * (R0[i, 0, 0] * ax[i, 0] + R0[i, 0, 1] * ax[i, 1] + R0[i, 0, 2] * ax[i, 2])
                py = py + sq * (R0[i, 1, 0] * ax[i, 0] + R0[i, 1, 1] * ax[i, 1] + R0[i, 1, 2] * ax[i, 2])
                pz = pz + sq * (R0[i, 2, 0] * ax[i, 0] + R0[i, 2, 1] * ax[i, 1] + R0[i, 2, 2] * ax[i, 2])
        lR[i, 0, 0], lR[i, 0, 1], lR[i, 0, 2] = l00, l01, l02
        lR[i, 1, 0], lR[i, 1, 1], lR[i, 1, 2] = l10, l11, l12
        lR[i, 2, 0], lR[i, 2, 1], lR[i, 2, 2] = l20, l21, l22
        lp[i, 0], lp[i, 1], lp[i, 2] = px, py, pz
        p = parent[i]
        if p < 0:
            oR[i, 0, 0], oR[i, 0, 1], oR[i, 0, 2] = l00, l01, l02
            oR[i, 1, 0], oR[i, 1, 1], oR[i, 1, 2] = l10, l11, l12
            oR[i, 2, 0], oR[i, 2, 1], oR[i, 2, 2] = l20, l21, l22
            op[i, 0], op[i, 1], op[i, 2] = px, py, pz
            w0, w1, w2 = 0.0, 0.0, 0.0
            v0, v1, v2 = 0.0, 0.0, 0.0
        else:
            for r in range(3):
                o0, o1, o2 = oR[p, r, 0], oR[p, r, 1], oR[p, r, 2]
                oR[i, r, 0] = o0 * l00 + o1 * l10 + o2 * l20
                oR[i, r, 1] = o0 * l01 + o1 * l11 + o2 * l21
                oR[i, r, 2] = o0 * l02 + o1 * l12 + o2 * l22
                op[i, r] = op[p, r] + o0 * px + o1 * py + o2 * pz
            if rotz[i] != 0:
                w0, w1, w2, v0, v1, v2 = motion_to_child_z(lR, lp, i, w[p, 0], w[p, 1], w[p, 2],
                                                           vl[p, 0], vl[p, 1], vl[p, 2])
            else:
                w0, w1, w2, v0, v1, v2 = motion_to_child(lR, lp, i, w[p, 0], w[p, 1], w[p, 2],
                                                         vl[p, 0], vl[p, 1], vl[p, 2])
        c0, c1, c2, c3, c4, c5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        if jt == JointType.REVOLUTE and axk[i] >= 0:
            # the same with a = e_k q̇ (the products with its zeros left out)
            qd = v[dof[i]]
            k = axk[i]
            if k == 0:
                c1, c2 = w2 * qd, -(w1 * qd)
                c4, c5 = v2 * qd, -(v1 * qd)
                w0 += qd
            elif k == 1:
                c0, c2 = -(w2 * qd), w0 * qd
                c3, c5 = -(v2 * qd), v0 * qd
                w1 += qd
            else:
                c0, c1 = w1 * qd, -(w0 * qd)
                c3, c4 = v1 * qd, -(v0 * qd)
                w2 += qd
        elif jt == JointType.REVOLUTE:
            qd = v[dof[i]]
            a0, a1, a2 = ax[i, 0] * qd, ax[i, 1] * qd, ax[i, 2] * qd
            # c = v_i × (a q̇, 0): (ω × a q̇, v × a q̇)
            c0, c1, c2 = cross(w0, w1, w2, a0, a1, a2)
            c3, c4, c5 = cross(v0, v1, v2, a0, a1, a2)
            w0 += a0
            w1 += a1
            w2 += a2
        elif jt == JointType.PRISMATIC:
            qd = v[dof[i]]
            a0, a1, a2 = ax[i, 0] * qd, ax[i, 1] * qd, ax[i, 2] * qd
            # c = v_i × (0, a q̇) = (0, ω × a q̇)
            c3, c4, c5 = cross(w0, w1, w2, a0, a1, a2)
            v0 += a0
            v1 += a1
            v2 += a2
        w[i, 0], w[i, 1], w[i, 2] = w0, w1, w2
        vl[i, 0], vl[i, 1], vl[i, 2] = v0, v1, v2
        cw[i, 0], cw[i, 1], cw[i, 2] = c0, c1, c2
        cl[i, 0], cl[i, 1], cl[i, 2] = c3, c4, c5


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
