"""Spatial-algebra helpers on split 3-vectors (angular, linear) and 6×6 blocks.

Conventions (Featherstone): a body's spatial inertia about its frame origin is

    I = [[Ic − m·[c]×[c]×,  m·[c]×],
         [−m·[c]×,          m·1   ]]

in (angular, linear) order, so for an acceleration (α, a) the force is
f = m·(a + α × c), n = Ic·α + c × f. A body frame is placed in its parent by
(R, p) = (lR[i], lp[i]): R maps body coordinates to parent coordinates, p is
the body origin in parent coordinates. Motions go parent → body, forces
body → parent.

Helpers take arrays plus an index and scalars, and return scalar tuples (see
the kernel conventions in :mod:`.kinematics`).
"""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", inline="always")
def inertia_times(mass, com, Ic, i, ax, ay, az, lx, ly, lz):
    """I_i · (α, a) for body i: returns (n_x, n_y, n_z, f_x, f_y, f_z), body frame."""
    m = mass[i]
    cx, cy, cz = com[i, 0], com[i, 1], com[i, 2]
    fx = m * (lx + ay * cz - az * cy)
    fy = m * (ly + az * cx - ax * cz)
    fz = m * (lz + ax * cy - ay * cx)
    nx = Ic[i, 0, 0] * ax + Ic[i, 0, 1] * ay + Ic[i, 0, 2] * az + cy * fz - cz * fy
    ny = Ic[i, 1, 0] * ax + Ic[i, 1, 1] * ay + Ic[i, 1, 2] * az + cz * fx - cx * fz
    nz = Ic[i, 2, 0] * ax + Ic[i, 2, 1] * ay + Ic[i, 2, 2] * az + cx * fy - cy * fx
    return nx, ny, nz, fx, fy, fz


@njit(cache=True, error_model="numpy", inline="always")
def velocity_product(mass, com, Ic, i, wx, wy, wz, vx, vy, vz):
    """v ×* (I_i v): gyroscopic and centripetal wrench of body i (n, f), body frame."""
    hAx, hAy, hAz, hx, hy, hz = inertia_times(mass, com, Ic, i, wx, wy, wz, vx, vy, vz)
    # n = ω × h_ang + v × h_lin ; f = ω × h_lin
    nx = wy * hAz - wz * hAy + vy * hz - vz * hy
    ny = wz * hAx - wx * hAz + vz * hx - vx * hz
    nz = wx * hAy - wy * hAx + vx * hy - vy * hx
    return nx, ny, nz, wy * hz - wz * hy, wz * hx - wx * hz, wx * hy - wy * hx


@njit(cache=True, error_model="numpy", inline="always")
def kinetic_energy(mass, com, Ic, i, wx, wy, wz, vx, vy, vz):
    """½ vᵀ I v of body i."""
    hAx, hAy, hAz, hx, hy, hz = inertia_times(mass, com, Ic, i, wx, wy, wz, vx, vy, vz)
    return 0.5 * (wx * hAx + wy * hAy + wz * hAz + vx * hx + vy * hy + vz * hz)


@njit(cache=True, error_model="numpy", inline="always")
def force_to_parent(lR, lp, i, nx, ny, nz, fx, fy, fz):
    """Wrench (n, f) of body i's frame expressed in its parent's frame, about the parent origin."""
    Fx = lR[i, 0, 0] * fx + lR[i, 0, 1] * fy + lR[i, 0, 2] * fz
    Fy = lR[i, 1, 0] * fx + lR[i, 1, 1] * fy + lR[i, 1, 2] * fz
    Fz = lR[i, 2, 0] * fx + lR[i, 2, 1] * fy + lR[i, 2, 2] * fz
    px, py, pz = lp[i, 0], lp[i, 1], lp[i, 2]
    Nx = lR[i, 0, 0] * nx + lR[i, 0, 1] * ny + lR[i, 0, 2] * nz + py * Fz - pz * Fy
    Ny = lR[i, 1, 0] * nx + lR[i, 1, 1] * ny + lR[i, 1, 2] * nz + pz * Fx - px * Fz
    Nz = lR[i, 2, 0] * nx + lR[i, 2, 1] * ny + lR[i, 2, 2] * nz + px * Fy - py * Fx
    return Nx, Ny, Nz, Fx, Fy, Fz


@njit(cache=True, error_model="numpy", inline="always")
def motion_to_child(lR, lp, i, wx, wy, wz, vx, vy, vz):
    """Parent-frame spatial motion (ω, v) expressed in body i's frame."""
    tx = vx + wy * lp[i, 2] - wz * lp[i, 1]
    ty = vy + wz * lp[i, 0] - wx * lp[i, 2]
    tz = vz + wx * lp[i, 1] - wy * lp[i, 0]
    return (lR[i, 0, 0] * wx + lR[i, 1, 0] * wy + lR[i, 2, 0] * wz,
            lR[i, 0, 1] * wx + lR[i, 1, 1] * wy + lR[i, 2, 1] * wz,
            lR[i, 0, 2] * wx + lR[i, 1, 2] * wy + lR[i, 2, 2] * wz,
            lR[i, 0, 0] * tx + lR[i, 1, 0] * ty + lR[i, 2, 0] * tz,
            lR[i, 0, 1] * tx + lR[i, 1, 1] * ty + lR[i, 2, 1] * tz,
            lR[i, 0, 2] * tx + lR[i, 1, 2] * ty + lR[i, 2, 2] * tz)


@njit(cache=True, error_model="numpy")
def spatial_inertia(mass, com, Ic, i, out):
    """out[i] = 6×6 spatial inertia of body i about its origin, (angular, linear) order."""
    m = mass[i]
    cx, cy, cz = com[i, 0], com[i, 1], com[i, 2]
    cc = cx * cx + cy * cy + cz * cz
    for r in range(3):
        for k in range(3):
            out[i, r, k] = Ic[i, r, k] - m * com[i, r] * com[i, k]
            out[i, r, k + 3] = 0.0
            out[i, r + 3, k + 3] = 0.0
        out[i, r, r] += m * cc
        out[i, r + 3, r + 3] = m
    # m [c]x in the upper right, its transpose in the lower left
    out[i, 0, 4] = -m * cz
    out[i, 0, 5] = m * cy
    out[i, 1, 3] = m * cz
    out[i, 1, 5] = -m * cx
    out[i, 2, 3] = -m * cy
    out[i, 2, 4] = m * cx
    for r in range(3):
        for k in range(3):
            out[i, r + 3, k] = out[i, k, r + 3]


@njit(cache=True, error_model="numpy")
def add_inertia_to_parent(lR, lp, i, Ia, p, IA, S, Y):
    """IA[p] += Xᵀ·Ia[i]·X: the 6×6 (articulated) inertia of body i, placed at
    (lR[i], lp[i]) in its parent p, expressed about the parent origin.

    Scratch: S (6, 6), Y (3, 3). With Ia = [[A, B], [Bᵀ, C]] rotated blockwise
    (A' = R A Rᵀ, ...; the lower-left block follows by symmetry), the shift of
    the reference point by t = lp[i] gives
    A'' = A' + X + Xᵀ − Y·[t]  with X = [t]B'ᵀ and Y = [t]C',
    B'' = B' + Y,  C'' = C'.
    """
    # T = blockdiag(R) Ia, only the blocks A, B, C are needed: S[., .] = R · blk · Rᵀ
    for bi, bj in ((0, 0), (0, 1), (1, 1)):
        for a in range(3):
            for k in range(3):
                # Y used as scratch for blk·Rᵀ
                Y[a, k] = (Ia[i, 3 * bi + a, 3 * bj] * lR[i, k, 0] + Ia[i, 3 * bi + a, 3 * bj + 1] * lR[i, k, 1]
                           + Ia[i, 3 * bi + a, 3 * bj + 2] * lR[i, k, 2])
        for r in range(3):
            for k in range(3):
                S[3 * bi + r, 3 * bj + k] = lR[i, r, 0] * Y[0, k] + lR[i, r, 1] * Y[1, k] + lR[i, r, 2] * Y[2, k]
    t0, t1, t2 = lp[i, 0], lp[i, 1], lp[i, 2]
    for k in range(3):
        cx, cy, cz = S[3, 3 + k], S[4, 3 + k], S[5, 3 + k]
        Y[0, k] = t1 * cz - t2 * cy
        Y[1, k] = t2 * cx - t0 * cz
        Y[2, k] = t0 * cy - t1 * cx
    for r in range(3):
        for k in range(3):
            IA[p, r, 3 + k] += S[r, 3 + k] + Y[r, k]
            IA[p, 3 + r, 3 + k] += S[3 + r, 3 + k]
    for k in range(3):
        bx, by, bz = S[k, 3], S[k, 4], S[k, 5]
        X0 = t1 * bz - t2 * by
        X1 = t2 * bx - t0 * bz
        X2 = t0 * by - t1 * bx
        IA[p, 0, k] += X0
        IA[p, 1, k] += X1
        IA[p, 2, k] += X2
        IA[p, k, 0] += X0
        IA[p, k, 1] += X1
        IA[p, k, 2] += X2
    for r in range(3):
        y0, y1, y2 = Y[r, 0], Y[r, 1], Y[r, 2]
        IA[p, r, 0] += S[r, 0] - (y1 * t2 - y2 * t1)
        IA[p, r, 1] += S[r, 1] - (y2 * t0 - y0 * t2)
        IA[p, r, 2] += S[r, 2] - (y0 * t1 - y1 * t0)
    for r in range(3):
        for k in range(3):
            IA[p, 3 + r, k] = IA[p, k, 3 + r]
