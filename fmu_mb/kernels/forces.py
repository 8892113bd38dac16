"""Passive forces: RFEM spring-damping elements, joint springs, flexible base supports.

* joint-space springs/dampers (RFEM sdes, paper 000 eqs. (17)–(18); user joint
  springs): τ = −k (q − q_rest) − c q̇ per coordinate;
* linearized base supports (paper 001): τ_b = −K q^(b) − D q̇^(b) on the six
  base coordinates, K = Σ Uᵀ S U;
* exact base supports (paper 000 eqs. (15)–(16)): d = T·r̃_E − r_E0 in world
  axes, force −S d − D ḋ applied at the attachment point as an external
  wrench on the body (d.extM/extF), so that reactions and the generalized
  forces follow from the recursive passes.
"""
from __future__ import annotations

from numba import njit

from .kinematics import point_position, point_velocity


@njit(cache=True, error_model="numpy")
def support_force(sup_body, sup_point, sup_anchor, sup_k, sup_d, oR, op, w, vl, s):
    """World-frame force (N) of exact support s, and the attachment point velocity."""
    b = sup_body[s]
    px, py, pz = sup_point[s, 0], sup_point[s, 1], sup_point[s, 2]
    x, y, z = point_position(oR, op, b, px, py, pz)
    vx, vy, vz = point_velocity(oR, w, vl, b, px, py, pz)
    fx = -sup_k[s, 0] * (x - sup_anchor[s, 0]) - sup_d[s, 0] * vx
    fy = -sup_k[s, 1] * (y - sup_anchor[s, 1]) - sup_d[s, 1] * vy
    fz = -sup_k[s, 2] * (z - sup_anchor[s, 2]) - sup_d[s, 2] * vz
    return fx, fy, fz, vx, vy, vz


@njit(cache=True, error_model="numpy")
def _add_point_force(extF, extM, b, px, py, pz, fx, fy, fz):
    """Add force f (body frame) acting at point p of body b to its wrench about the body origin."""
    extF[b, 0] += fx
    extF[b, 1] += fy
    extF[b, 2] += fz
    extM[b, 0] += py * fz - pz * fy
    extM[b, 1] += pz * fx - px * fz
    extM[b, 2] += px * fy - py * fx


@njit(cache=True, error_model="numpy")
def _point_power(vl, w, b, px, py, pz, fx, fy, fz):
    """Power f·v_p of force f at point p of body b (body frame)."""
    vx = vl[b, 0] + w[b, 1] * pz - w[b, 2] * py
    vy = vl[b, 1] + w[b, 2] * px - w[b, 0] * pz
    vz = vl[b, 2] + w[b, 0] * py - w[b, 1] * px
    return fx * vx + fy * vy + fz * vz


@njit(cache=True, error_model="numpy")
def stop_penetration(m, q, k):
    """How far coordinate k is beyond its joint stop (q − upper > 0 or q − lower < 0), else 0."""
    if q[k].real > m.dof_hi[k]:
        return q[k] - m.dof_hi[k]
    if q[k].real < m.dof_lo[k]:
        return q[k] - m.dof_lo[k]
    return 0.0


@njit(cache=True, error_model="numpy")
def passive_forces(m, d, q, v):
    """Fill d.tau_pas, d.extM/extF (supports and body-force inputs, d.bf_power their power);
    return the power dissipated by the dampers (W).

    Needs forward_kinematics."""
    nv, nb, dof_k, dof_c, dof_qrest = m.nv, m.nbody, m.dof_k, m.dof_c, m.dof_qrest
    base_dof, base_K, base_D = m.base_dof, m.base_K, m.base_D
    sup_body, sup_point, sup_anchor, sup_k, sup_d = m.sup_body, m.sup_point, m.sup_anchor, m.sup_k, m.sup_d
    tau_pas, extM, extF, oR, op, w, vl = d.tau_pas, d.extM, d.extF, d.oR, d.op, d.w, d.vl
    P = 0.0
    for k in range(nv):
        c = dof_c[k]
        tau_pas[k] = -dof_k[k] * (q[k] - dof_qrest[k]) - c * v[k]
        P += c * v[k] * v[k]
        e = stop_penetration(m, q, k)
        if e != 0.0:                               # beyond a joint stop: penalty spring-damper
            cs = m.dof_stop_c[k]
            tau_pas[k] -= m.dof_stop_k[k] * e + cs * v[k]
            P += cs * v[k] * v[k]
    b = base_dof[0]
    if b >= 0:
        for r in range(6):
            s = 0.0
            for k in range(6):
                s += base_K[r, k] * q[b + k] + base_D[r, k] * v[b + k]
                P += v[b + r] * base_D[r, k] * v[b + k]
            tau_pas[b + r] -= s
    for i in range(nb):
        for r in range(3):
            extM[i, r] = 0.0
            extF[i, r] = 0.0
    for s in range(sup_body.shape[0]):
        bi = sup_body[s]
        fw0, fw1, fw2, vx, vy, vz = support_force(sup_body, sup_point, sup_anchor, sup_k, sup_d, oR, op, w, vl, s)
        P += sup_d[s, 0] * vx * vx + sup_d[s, 1] * vy * vy + sup_d[s, 2] * vz * vz
        fx = oR[bi, 0, 0] * fw0 + oR[bi, 1, 0] * fw1 + oR[bi, 2, 0] * fw2
        fy = oR[bi, 0, 1] * fw0 + oR[bi, 1, 1] * fw1 + oR[bi, 2, 1] * fw2
        fz = oR[bi, 0, 2] * fw0 + oR[bi, 1, 2] * fw1 + oR[bi, 2, 2] * fw2
        _add_point_force(extF, extM, bi, sup_point[s, 0], sup_point[s, 1], sup_point[s, 2], fx, fy, fz)
    # body-force inputs (follower forces fixed in their body): wrench and input power
    bf_body, bf_point, bf_dir, bf_val = m.bf_body, m.bf_point, m.bf_dir, d.bf_val
    bf_rbody, bf_rpoint = m.bf_rbody, m.bf_rpoint
    Pin = 0.0
    for k in range(bf_body.shape[0]):
        bi = bf_body[k]
        px, py, pz = bf_point[k, 0], bf_point[k, 1], bf_point[k, 2]
        fx, fy, fz = bf_val[k] * bf_dir[k, 0], bf_val[k] * bf_dir[k, 1], bf_val[k] * bf_dir[k, 2]
        _add_point_force(extF, extM, bi, px, py, pz, fx, fy, fz)
        Pin += _point_power(vl, w, bi, px, py, pz, fx, fy, fz)
        rb = bf_rbody[k]
        if rb >= 0:
            # the opposite force on the reaction body, in its frame: R_rᵀ R_b f
            gx = oR[bi, 0, 0] * fx + oR[bi, 0, 1] * fy + oR[bi, 0, 2] * fz
            gy = oR[bi, 1, 0] * fx + oR[bi, 1, 1] * fy + oR[bi, 1, 2] * fz
            gz = oR[bi, 2, 0] * fx + oR[bi, 2, 1] * fy + oR[bi, 2, 2] * fz
            hx = -(oR[rb, 0, 0] * gx + oR[rb, 1, 0] * gy + oR[rb, 2, 0] * gz)
            hy = -(oR[rb, 0, 1] * gx + oR[rb, 1, 1] * gy + oR[rb, 2, 1] * gz)
            hz = -(oR[rb, 0, 2] * gx + oR[rb, 1, 2] * gy + oR[rb, 2, 2] * gz)
            rx, ry, rz = bf_rpoint[k, 0], bf_rpoint[k, 1], bf_rpoint[k, 2]
            _add_point_force(extF, extM, rb, rx, ry, rz, hx, hy, hz)
            Pin += _point_power(vl, w, rb, rx, ry, rz, hx, hy, hz)
    d.bf_power[0] = Pin
    return P


@njit(cache=True, error_model="numpy")
def support_forces(m, d, out):
    """World-frame force (N) of every exact support on its body into ``out`` (nsup, 3).

    Needs forward_kinematics."""
    sup_body, sup_point, sup_anchor, sup_k, sup_d = m.sup_body, m.sup_point, m.sup_anchor, m.sup_k, m.sup_d
    oR, op, w, vl = d.oR, d.op, d.w, d.vl
    for s in range(sup_body.shape[0]):
        fx, fy, fz, _, _, _ = support_force(sup_body, sup_point, sup_anchor, sup_k, sup_d, oR, op, w, vl, s)
        out[s, 0] = fx
        out[s, 1] = fy
        out[s, 2] = fz


@njit(cache=True, error_model="numpy")
def elastic_energy(m, d, q):
    """Potential energy of all springs (J). Needs forward_kinematics."""
    nv, dof_k, dof_qrest, base_dof, base_K = m.nv, m.dof_k, m.dof_qrest, m.base_dof, m.base_K
    sup_body, sup_point, sup_anchor, sup_k = m.sup_body, m.sup_point, m.sup_anchor, m.sup_k
    oR, op = d.oR, d.op
    E = 0.0
    for k in range(nv):
        e = q[k] - dof_qrest[k]
        E += 0.5 * dof_k[k] * e * e
        e = stop_penetration(m, q, k)
        E += 0.5 * m.dof_stop_k[k] * e * e
    b = base_dof[0]
    if b >= 0:
        for r in range(6):
            for k in range(6):
                E += 0.5 * q[b + r] * base_K[r, k] * q[b + k]
    for s in range(sup_body.shape[0]):
        x, y, z = point_position(oR, op, sup_body[s], sup_point[s, 0], sup_point[s, 1], sup_point[s, 2])
        dx, dy, dz = x - sup_anchor[s, 0], y - sup_anchor[s, 1], z - sup_anchor[s, 2]
        E += 0.5 * (sup_k[s, 0] * dx * dx + sup_k[s, 1] * dy * dy + sup_k[s, 2] * dz * dz)
    return E
