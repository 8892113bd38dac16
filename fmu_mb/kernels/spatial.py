"""Spatial-algebra helpers on split 3-vectors (angular, linear) and 6×6 blocks.

Conventions (Featherstone): a body's spatial inertia about its frame origin is

    I = [[Ic − m·[c]×[c]×,  m·[c]×],
         [−m·[c]×,          m·1   ]]

in (angular, linear) order, so for an acceleration (α, a) the force is
f = m·(a + α × c), n = Ic·α + c × f. A body frame is placed in its parent by
(R, p): R maps body coordinates to parent coordinates, p is the body origin in
parent coordinates. Motions go parent → body, forces body → parent.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def inertia_times(model, i, aw, al, outM, outF):
    """(outM, outF) = I_i · (aw, al) for body i (body frame)."""
    m = model.body_mass[i]
    c = model.body_com[i]
    Ic = model.body_Ic[i]
    fx = m * (al[0] + aw[1] * c[2] - aw[2] * c[1])
    fy = m * (al[1] + aw[2] * c[0] - aw[0] * c[2])
    fz = m * (al[2] + aw[0] * c[1] - aw[1] * c[0])
    outF[0] = fx
    outF[1] = fy
    outF[2] = fz
    for r in range(3):
        outM[r] = Ic[r, 0] * aw[0] + Ic[r, 1] * aw[1] + Ic[r, 2] * aw[2]
    outM[0] += c[1] * fz - c[2] * fy
    outM[1] += c[2] * fx - c[0] * fz
    outM[2] += c[0] * fy - c[1] * fx


@njit(cache=True)
def add_velocity_product(model, i, w, vl, outM, outF):
    """(outM, outF) += v ×* (I_i v): gyroscopic and centripetal force of body i."""
    m = model.body_mass[i]
    c = model.body_com[i]
    Ic = model.body_Ic[i]
    hx = m * (vl[0] + w[1] * c[2] - w[2] * c[1])
    hy = m * (vl[1] + w[2] * c[0] - w[0] * c[2])
    hz = m * (vl[2] + w[0] * c[1] - w[1] * c[0])
    ax = Ic[0, 0] * w[0] + Ic[0, 1] * w[1] + Ic[0, 2] * w[2] + c[1] * hz - c[2] * hy
    ay = Ic[1, 0] * w[0] + Ic[1, 1] * w[1] + Ic[1, 2] * w[2] + c[2] * hx - c[0] * hz
    az = Ic[2, 0] * w[0] + Ic[2, 1] * w[1] + Ic[2, 2] * w[2] + c[0] * hy - c[1] * hx
    # n = ω × h_ang + v × h_lin ; f = ω × h_lin
    outM[0] += w[1] * az - w[2] * ay + vl[1] * hz - vl[2] * hy
    outM[1] += w[2] * ax - w[0] * az + vl[2] * hx - vl[0] * hz
    outM[2] += w[0] * ay - w[1] * ax + vl[0] * hy - vl[1] * hx
    outF[0] += w[1] * hz - w[2] * hy
    outF[1] += w[2] * hx - w[0] * hz
    outF[2] += w[0] * hy - w[1] * hx


@njit(cache=True)
def kinetic_energy(model, i, w, vl):
    """½ vᵀ I v of body i."""
    m = model.body_mass[i]
    c = model.body_com[i]
    Ic = model.body_Ic[i]
    hx = m * (vl[0] + w[1] * c[2] - w[2] * c[1])
    hy = m * (vl[1] + w[2] * c[0] - w[0] * c[2])
    hz = m * (vl[2] + w[0] * c[1] - w[1] * c[0])
    ax = Ic[0, 0] * w[0] + Ic[0, 1] * w[1] + Ic[0, 2] * w[2] + c[1] * hz - c[2] * hy
    ay = Ic[1, 0] * w[0] + Ic[1, 1] * w[1] + Ic[1, 2] * w[2] + c[2] * hx - c[0] * hz
    az = Ic[2, 0] * w[0] + Ic[2, 1] * w[1] + Ic[2, 2] * w[2] + c[0] * hy - c[1] * hx
    return 0.5 * (w[0] * ax + w[1] * ay + w[2] * az + vl[0] * hx + vl[1] * hy + vl[2] * hz)


@njit(cache=True)
def motion_to_child(R, p, pw, pl, outw, outl):
    """Transform a parent-frame spatial motion (pw, pl) into the child frame placed at (R, p)."""
    tx = pl[0] + pw[1] * p[2] - pw[2] * p[1]
    ty = pl[1] + pw[2] * p[0] - pw[0] * p[2]
    tz = pl[2] + pw[0] * p[1] - pw[1] * p[0]
    for r in range(3):
        outw[r] = R[0, r] * pw[0] + R[1, r] * pw[1] + R[2, r] * pw[2]
        outl[r] = R[0, r] * tx + R[1, r] * ty + R[2, r] * tz


@njit(cache=True)
def add_force_to_parent(R, p, M, F, outM, outF):
    """(outM, outF) += child-frame wrench (M, F) expressed in the parent frame (about its origin)."""
    fx = R[0, 0] * F[0] + R[0, 1] * F[1] + R[0, 2] * F[2]
    fy = R[1, 0] * F[0] + R[1, 1] * F[1] + R[1, 2] * F[2]
    fz = R[2, 0] * F[0] + R[2, 1] * F[1] + R[2, 2] * F[2]
    outF[0] += fx
    outF[1] += fy
    outF[2] += fz
    for r in range(3):
        outM[r] += R[r, 0] * M[0] + R[r, 1] * M[1] + R[r, 2] * M[2]
    outM[0] += p[1] * fz - p[2] * fy
    outM[1] += p[2] * fx - p[0] * fz
    outM[2] += p[0] * fy - p[1] * fx


@njit(cache=True)
def spatial_inertia(model, i, out):
    """6×6 spatial inertia of body i about its origin, (angular, linear) order."""
    m = model.body_mass[i]
    c = model.body_com[i]
    Ic = model.body_Ic[i]
    cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    for r in range(3):
        for k in range(3):
            out[r, k] = Ic[r, k] - m * c[r] * c[k]
            out[r, k + 3] = 0.0
            out[r + 3, k] = 0.0
            out[r + 3, k + 3] = 0.0
        out[r, r] += m * cc
        out[r + 3, r + 3] = m
    # m [c]x in the upper right, its transpose in the lower left
    out[0, 4] = -m * c[2]
    out[0, 5] = m * c[1]
    out[1, 3] = m * c[2]
    out[1, 5] = -m * c[0]
    out[2, 3] = -m * c[1]
    out[2, 4] = m * c[0]
    for r in range(3):
        for k in range(3):
            out[r + 3, k] = out[k, r + 3]


@njit(cache=True)
def add_inertia_to_parent(R, p, Ia, S, Y, out):
    """out += Xᵀ·Ia·X: a 6×6 articulated (or spatial) inertia of a child placed at
    (R, p), expressed about the parent origin in parent axes.

    Scratch: S (6, 6), Y (3, 3). With Ia = [[A, B], [Bᵀ, C]] rotated blockwise
    (A' = R A Rᵀ, ...), the shift by p gives
    A'' = A' + X + Xᵀ − Y·[p] with X = [p]B'ᵀ and Y = [p]C',
    B'' = B' + [p]C',  C'' = C'.
    """
    for bi in range(2):
        for bj in range(2):
            for r in range(3):
                for k in range(3):
                    s = 0.0
                    for a in range(3):
                        t = 0.0
                        for b in range(3):
                            t += Ia[3 * bi + a, 3 * bj + b] * R[k, b]
                        s += R[r, a] * t
                    S[3 * bi + r, 3 * bj + k] = s
    p0, p1, p2 = p[0], p[1], p[2]
    # Y = [p] C'  (column k is p × C'[:, k])
    for k in range(3):
        cx, cy, cz = S[3, 3 + k], S[4, 3 + k], S[5, 3 + k]
        Y[0, k] = p1 * cz - p2 * cy
        Y[1, k] = p2 * cx - p0 * cz
        Y[2, k] = p0 * cy - p1 * cx
    for r in range(3):
        for k in range(3):
            out[r, 3 + k] += S[r, 3 + k] + Y[r, k]
            out[3 + r, 3 + k] += S[3 + r, 3 + k]
    # X = [p] B'ᵀ: column k is p × B'[k, :];  (Y[p])[r, :] = Y[r, :] × p
    for k in range(3):
        bx, by, bz = S[k, 3], S[k, 4], S[k, 5]
        X0 = p1 * bz - p2 * by
        X1 = p2 * bx - p0 * bz
        X2 = p0 * by - p1 * bx
        # add X[:, k] to column k and X[:, k]ᵀ to row k
        out[0, k] += X0
        out[1, k] += X1
        out[2, k] += X2
        out[k, 0] += X0
        out[k, 1] += X1
        out[k, 2] += X2
    for r in range(3):
        y0, y1, y2 = Y[r, 0], Y[r, 1], Y[r, 2]
        out[r, 0] += S[r, 0] - (y1 * p2 - y2 * p1)
        out[r, 1] += S[r, 1] - (y2 * p0 - y0 * p2)
        out[r, 2] += S[r, 2] - (y0 * p1 - y1 * p0)
    for r in range(3):
        for k in range(3):
            out[3 + r, k] = out[k, 3 + r]
