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
def add_force_to_parent(lR, lp, i, W, j, p, nx, ny, nz, fx, fy, fz):
    """W[j, p] += body i's wrench (n, f) expressed in its parent p's frame (:func:`force_to_parent`): a backward
    pass over lanes j of wrenches (nl × nbody × 6)."""
    n0, n1, n2, f0, f1, f2 = force_to_parent(lR, lp, i, nx, ny, nz, fx, fy, fz)
    W[j, p, 0] += n0
    W[j, p, 1] += n1
    W[j, p, 2] += n2
    W[j, p, 3] += f0
    W[j, p, 4] += f1
    W[j, p, 5] += f2


@njit(cache=True, error_model="numpy", inline="always")
def force_to_parent_z(lR, lp, i, nx, ny, nz, fx, fy, fz):
    """:func:`force_to_parent` where lR[i] is a rotation about z (Model.body_rot_z): the same bits (a sum
    with an exact zero term is the sum without it), 10 products of the rotation instead of 18."""
    c, s, ckk = lR[i, 0, 0], lR[i, 1, 0], lR[i, 2, 2]
    Fx, Fy, Fz = c * fx - s * fy, s * fx + c * fy, ckk * fz
    px, py, pz = lp[i, 0], lp[i, 1], lp[i, 2]
    Nx = c * nx - s * ny + py * Fz - pz * Fy
    Ny = s * nx + c * ny + pz * Fx - px * Fz
    Nz = ckk * nz + px * Fy - py * Fx
    return Nx, Ny, Nz, Fx, Fy, Fz


@njit(cache=True, error_model="numpy", inline="always")
def motion_to_child_z(lR, lp, i, wx, wy, wz, vx, vy, vz):
    """:func:`motion_to_child` where lR[i] is a rotation about z (Model.body_rot_z): the same bits."""
    c, s, ckk = lR[i, 0, 0], lR[i, 1, 0], lR[i, 2, 2]
    tx = vx + wy * lp[i, 2] - wz * lp[i, 1]
    ty = vy + wz * lp[i, 0] - wx * lp[i, 2]
    tz = vz + wx * lp[i, 1] - wy * lp[i, 0]
    return c * wx + s * wy, c * wy - s * wx, ckk * wz, c * tx + s * ty, c * ty - s * tx, ckk * tz


@njit(cache=True, error_model="numpy", inline="always")
def cross(a0, a1, a2, b0, b1, b2):
    """a × b of two 3-vectors given by their components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


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


@njit(cache=True, error_model="numpy", inline="always")
def spatial_inertia(mass, com, Ic, i, out):
    """out[i] = 6×6 spatial inertia of body i about its origin, (angular, linear) order.

    Read into scalars first, then stored: the stores into ``out`` cannot alias the reads (numba cannot
    tell the arrays apart, so interleaved reads were reloaded after every store)."""
    m = mass[i]
    cx, cy, cz = com[i, 0], com[i, 1], com[i, 2]
    cc = cx * cx + cy * cy + cz * cz
    mx, my, mz = m * cx, m * cy, m * cz
    a00 = Ic[i, 0, 0] - mx * cx + m * cc          # the lower triangle, mirrored: exactly symmetric (aba_inertias
    a10 = Ic[i, 1, 0] - my * cx                   # and add_inertia_to_parent form and read the lower triangles)
    a11 = Ic[i, 1, 1] - my * cy + m * cc
    a20 = Ic[i, 2, 0] - mz * cx
    a21 = Ic[i, 2, 1] - mz * cy
    a22 = Ic[i, 2, 2] - mz * cz + m * cc
    a01, a02, a12 = a10, a20, a21
    out[i, 0, 0], out[i, 0, 1], out[i, 0, 2] = a00, a01, a02
    out[i, 1, 0], out[i, 1, 1], out[i, 1, 2] = a10, a11, a12
    out[i, 2, 0], out[i, 2, 1], out[i, 2, 2] = a20, a21, a22
    # m [c]x in the upper right, its transpose in the lower left
    out[i, 0, 3], out[i, 0, 4], out[i, 0, 5] = 0.0, -mz, my
    out[i, 1, 3], out[i, 1, 4], out[i, 1, 5] = mz, 0.0, -mx
    out[i, 2, 3], out[i, 2, 4], out[i, 2, 5] = -my, mx, 0.0
    out[i, 3, 0], out[i, 3, 1], out[i, 3, 2] = 0.0, mz, -my
    out[i, 4, 0], out[i, 4, 1], out[i, 4, 2] = -mz, 0.0, mx
    out[i, 5, 0], out[i, 5, 1], out[i, 5, 2] = my, -mx, 0.0
    for r in range(3):
        for k in range(3):
            out[i, r + 3, k + 3] = 0.0
        out[i, r + 3, r + 3] = m


@njit(cache=True, error_model="numpy", inline="always")
def _rotation_rows(lR, i):
    """R = lR[i] as a row-major 9-tuple."""
    return (lR[i, 0, 0], lR[i, 0, 1], lR[i, 0, 2], lR[i, 1, 0], lR[i, 1, 1], lR[i, 1, 2],
            lR[i, 2, 0], lR[i, 2, 1], lR[i, 2, 2])


@njit(cache=True, error_model="numpy", inline="always")
def _times_rotation_transposed(R, b00, b01, b02, b10, b11, b12, b20, b21, b22):
    """Y = blk·Rᵀ (row-major 9-tuple): Y[a, k] = Σ_j blk[a, j] R[k, j]."""
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = R
    return (b00 * R00 + b01 * R01 + b02 * R02, b00 * R10 + b01 * R11 + b02 * R12, b00 * R20 + b01 * R21 + b02 * R22,
            b10 * R00 + b11 * R01 + b12 * R02, b10 * R10 + b11 * R11 + b12 * R12, b10 * R20 + b11 * R21 + b12 * R22,
            b20 * R00 + b21 * R01 + b22 * R02, b20 * R10 + b21 * R11 + b22 * R12, b20 * R20 + b21 * R21 + b22 * R22)


@njit(cache=True, error_model="numpy", inline="always")
def _rotated_block(Ia, i, r0, c0, lR):
    """R·blk·Rᵀ (row-major 9-tuple) of the 3×3 block of Ia[i] at (r0, c0), R = lR[i]."""
    R = _rotation_rows(lR, i)
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = R
    y00, y01, y02, y10, y11, y12, y20, y21, y22 = _times_rotation_transposed(
        R, Ia[i, r0, c0], Ia[i, r0, c0 + 1], Ia[i, r0, c0 + 2], Ia[i, r0 + 1, c0], Ia[i, r0 + 1, c0 + 1],
        Ia[i, r0 + 1, c0 + 2], Ia[i, r0 + 2, c0], Ia[i, r0 + 2, c0 + 1], Ia[i, r0 + 2, c0 + 2])
    # R·Y: [r, k] = Σ_j R[r, j] Y[j, k]
    return (R00 * y00 + R01 * y10 + R02 * y20, R00 * y01 + R01 * y11 + R02 * y21, R00 * y02 + R01 * y12 + R02 * y22,
            R10 * y00 + R11 * y10 + R12 * y20, R10 * y01 + R11 * y11 + R12 * y21, R10 * y02 + R11 * y12 + R12 * y22,
            R20 * y00 + R21 * y10 + R22 * y20, R20 * y01 + R21 * y11 + R22 * y21, R20 * y02 + R21 * y12 + R22 * y22)


@njit(cache=True, error_model="numpy", inline="always")
def _rotated_symmetric_block(Ia, i, r0, lR):
    """The lower triangle (s00, s10, s11, s20, s21, s22) of R·S·Rᵀ for the symmetric 3×3 block S of Ia[i] at
    (r0, r0), R = lR[i]; S read from its lower triangle."""
    R = _rotation_rows(lR, i)
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = R
    b00, b10, b11 = Ia[i, r0, r0], Ia[i, r0 + 1, r0], Ia[i, r0 + 1, r0 + 1]
    b20, b21, b22 = Ia[i, r0 + 2, r0], Ia[i, r0 + 2, r0 + 1], Ia[i, r0 + 2, r0 + 2]
    y00, y01, y02, y10, y11, y12, y20, y21, y22 = _times_rotation_transposed(R, b00, b10, b20, b10, b11, b21,
                                                                             b20, b21, b22)
    # R·Y on and below the diagonal: [r, k] = Σ_j R[r, j] Y[j, k], k ≤ r
    return (R00 * y00 + R01 * y10 + R02 * y20,
            R10 * y00 + R11 * y10 + R12 * y20, R10 * y01 + R11 * y11 + R12 * y21,
            R20 * y00 + R21 * y10 + R22 * y20, R20 * y01 + R21 * y11 + R22 * y21, R20 * y02 + R21 * y12 + R22 * y22)


@njit(cache=True, error_model="numpy", inline="always")
def add_inertia_to_parent(lR, lp, i, Ia, p, IA):
    """IA[p] += Xᵀ·Ia[i]·X: the 6×6 (articulated) inertia of body i, placed at
    (lR[i], lp[i]) in its parent p, expressed about the parent origin.

    With Ia = [[A, B], [Bᵀ, C]] rotated blockwise (A' = R A Rᵀ, ...; the lower-left block follows
    by symmetry), the shift of the reference point by t = lp[i] gives
    A'' = A' + X + Xᵀ − Y·[t]  with X = [t]B'ᵀ and Y = [t]C',
    B'' = B' + Y,  C'' = C'.
    The rotated blocks are scalars (tuples), not scratch arrays: LLVM keeps them in registers, where a
    scratch array had to be reloaded after every store into IA (1.9× faster on the five-axis tree, the
    same bits). A, C and A'' are symmetric: only their lower triangles are formed, and mirrored, so IA stays
    exactly symmetric (the five-axis tree's articulated inertias 0.234 → 0.197 µs; results change at round-off,
    3.6e-16 relative in I^a)."""
    A = _rotated_symmetric_block(Ia, i, 0, lR)
    B = _rotated_block(Ia, i, 0, 3, lR)
    C = _rotated_symmetric_block(Ia, i, 3, lR)
    _add_shifted(lp, i, p, IA, A, B, C)


@njit(cache=True, error_model="numpy", inline="always")
def _z_rotated_block(Ia, i, r0, c0, c, s, ckk):
    """:func:`_rotated_block` for R = [[c, −s, 0], [s, c, 0], [0, 0, ckk]], a rotation about z: the same bits
    (each entry of R·blk·Rᵀ sums at most two non-zero products), 30 products instead of 54."""
    b00, b01, b02 = Ia[i, r0, c0], Ia[i, r0, c0 + 1], Ia[i, r0, c0 + 2]
    b10, b11, b12 = Ia[i, r0 + 1, c0], Ia[i, r0 + 1, c0 + 1], Ia[i, r0 + 1, c0 + 2]
    b20, b21, b22 = Ia[i, r0 + 2, c0], Ia[i, r0 + 2, c0 + 1], Ia[i, r0 + 2, c0 + 2]
    y00, y01, y02 = b00 * c - b01 * s, b00 * s + b01 * c, b02 * ckk      # Y = blk·Rᵀ
    y10, y11, y12 = b10 * c - b11 * s, b10 * s + b11 * c, b12 * ckk
    y20, y21, y22 = b20 * c - b21 * s, b20 * s + b21 * c, b22 * ckk
    return (c * y00 - s * y10, c * y01 - s * y11, c * y02 - s * y12,        # R·Y
            s * y00 + c * y10, s * y01 + c * y11, s * y02 + c * y12,
            ckk * y20, ckk * y21, ckk * y22)


@njit(cache=True, error_model="numpy", inline="always")
def _z_rotated_symmetric_block(Ia, i, r0, c, s, ckk):
    """:func:`_rotated_symmetric_block` for a rotation about z (as :func:`_z_rotated_block`): the same bits."""
    b00, b10, b11 = Ia[i, r0, r0], Ia[i, r0 + 1, r0], Ia[i, r0 + 1, r0 + 1]
    b20, b21, b22 = Ia[i, r0 + 2, r0], Ia[i, r0 + 2, r0 + 1], Ia[i, r0 + 2, r0 + 2]
    y00, y01 = b00 * c - b10 * s, b00 * s + b10 * c                       # Y = S·Rᵀ (the entries R·Y reads)
    y10, y11 = b10 * c - b11 * s, b10 * s + b11 * c
    y20, y21, y22 = b20 * c - b21 * s, b20 * s + b21 * c, b22 * ckk
    return (c * y00 - s * y10,
            s * y00 + c * y10, s * y01 + c * y11,
            ckk * y20, ckk * y21, ckk * y22)


@njit(cache=True, error_model="numpy", inline="always")
def add_inertia_to_parent_z(lR, lp, i, Ia, p, IA):
    """:func:`add_inertia_to_parent` where lR[i] is a rotation about z (Model.body_rot_z): the same bits."""
    c, s, ckk = lR[i, 0, 0], lR[i, 1, 0], lR[i, 2, 2]
    A = _z_rotated_symmetric_block(Ia, i, 0, c, s, ckk)
    B = _z_rotated_block(Ia, i, 0, 3, c, s, ckk)
    C = _z_rotated_symmetric_block(Ia, i, 3, c, s, ckk)
    _add_shifted(lp, i, p, IA, A, B, C)


@njit(cache=True, error_model="numpy", inline="always")
def _add_shifted(lp, i, p, IA, A, B, C):
    """IA[p] += the rotated blocks A, C (lower triangles) and B (:func:`add_inertia_to_parent`) shifted by
    t = lp[i]; every entry updated below the diagonal is mirrored above it."""
    t0, t1, t2 = lp[i, 0], lp[i, 1], lp[i, 2]
    c00, c10, c11, c20, c21, c22 = C
    # Y = [t]·C', column by column
    Y = (t1 * c20 - t2 * c10, t1 * c21 - t2 * c11, t1 * c22 - t2 * c21,
         t2 * c00 - t0 * c20, t2 * c10 - t0 * c21, t2 * c20 - t0 * c22,
         t0 * c10 - t1 * c00, t0 * c11 - t1 * c10, t0 * c21 - t1 * c20)
    for r in range(3):                          # B'' = B' + Y, and its transpose in the lower-left block
        for k in range(3):
            v = IA[p, r, 3 + k] + (B[3 * r + k] + Y[3 * r + k])
            IA[p, r, 3 + k] = v
            IA[p, 3 + k, r] = v
    IA[p, 3, 3] += c00                          # C'' = C'
    IA[p, 4, 4] += c11
    IA[p, 5, 5] += c22
    v = IA[p, 4, 3] + c10
    IA[p, 4, 3], IA[p, 3, 4] = v, v
    v = IA[p, 5, 3] + c20
    IA[p, 5, 3], IA[p, 3, 5] = v, v
    v = IA[p, 5, 4] + c21
    IA[p, 5, 4], IA[p, 4, 5] = v, v
    # X = [t]·B'ᵀ: X[r, k] = (t × row k of B')_r; A'' = A' + X + Xᵀ − Y·[t]
    X00, X01, X02 = t1 * B[2] - t2 * B[1], t1 * B[5] - t2 * B[4], t1 * B[8] - t2 * B[7]
    X10, X11, X12 = t2 * B[0] - t0 * B[2], t2 * B[3] - t0 * B[5], t2 * B[6] - t0 * B[8]
    X20, X21, X22 = t0 * B[1] - t1 * B[0], t0 * B[4] - t1 * B[3], t0 * B[7] - t1 * B[6]
    a00, a10, a11, a20, a21, a22 = A
    y1, y2 = Y[1], Y[2]
    IA[p, 0, 0] += (X00 + X00) + (a00 - (y1 * t2 - y2 * t1))
    y0, y1, y2 = Y[3], Y[4], Y[5]
    v = IA[p, 1, 0] + (X10 + X01) + (a10 - (y1 * t2 - y2 * t1))
    IA[p, 1, 0], IA[p, 0, 1] = v, v
    IA[p, 1, 1] += (X11 + X11) + (a11 - (y2 * t0 - y0 * t2))
    y0, y1, y2 = Y[6], Y[7], Y[8]
    v = IA[p, 2, 0] + (X20 + X02) + (a20 - (y1 * t2 - y2 * t1))
    IA[p, 2, 0], IA[p, 0, 2] = v, v
    v = IA[p, 2, 1] + (X21 + X12) + (a21 - (y2 * t0 - y0 * t2))
    IA[p, 2, 1], IA[p, 1, 2] = v, v
    IA[p, 2, 2] += (X22 + X22) + (a22 - (y0 * t1 - y1 * t0))
