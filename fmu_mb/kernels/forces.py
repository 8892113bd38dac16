"""Passive forces: RFEM spring-damping elements, joint springs, flexible base supports.

* joint-space springs/dampers (RFEM sdes, paper 000 eqs. (17)–(18); user joint
  springs): τ = −k (q − q_rest) − c q̇ per coordinate;
* linearized base supports (paper 001): τ_b = −K q^(b) − D q̇^(b) on the six
  base coordinates, K = Σ Uᵀ S U;
* exact base supports (paper 000 eqs. (15)–(16)): d = T·r̃_E − r_E0 in world
  axes, force −S d − D ḋ applied at the attachment point as an external
  wrench on the body (data.extM/extF), so that reactions and the generalized
  forces follow from the recursive passes.
"""
from __future__ import annotations

from numba import njit

from .kinematics import point_position, point_velocity


@njit(cache=True)
def passive_forces(model, data, q, v):
    """Fill data.tau_pas, data.extM/extF; return the power dissipated by the dampers (W).

    Needs forward_kinematics."""
    nv = model.nv
    P = 0.0
    for d in range(nv):
        k = model.dof_k[d]
        c = model.dof_c[d]
        data.tau_pas[d] = -k * (q[d] - model.dof_qrest[d]) - c * v[d]
        P += c * v[d] * v[d]
    b = model.base_dof[0]
    if b >= 0:
        for r in range(6):
            s = 0.0
            for k in range(6):
                s += model.base_K[r, k] * q[b + k] + model.base_D[r, k] * v[b + k]
            data.tau_pas[b + r] -= s
        for r in range(6):
            for k in range(6):
                P += v[b + r] * model.base_D[r, k] * v[b + k]
    for i in range(model.nbody):
        for r in range(3):
            data.extM[i, r] = 0.0
            data.extF[i, r] = 0.0
    pos = data.f6[0:3]
    vel = data.f6[3:6]
    for s in range(model.sup_body.shape[0]):
        bi = model.sup_body[s]
        pt = model.sup_point[s]
        point_position(data, bi, pt, pos)
        point_velocity(data, bi, pt, vel)
        R = data.oR[bi]
        fw0 = -model.sup_k[s, 0] * (pos[0] - model.sup_anchor[s, 0]) - model.sup_d[s, 0] * vel[0]
        fw1 = -model.sup_k[s, 1] * (pos[1] - model.sup_anchor[s, 1]) - model.sup_d[s, 1] * vel[1]
        fw2 = -model.sup_k[s, 2] * (pos[2] - model.sup_anchor[s, 2]) - model.sup_d[s, 2] * vel[2]
        P += model.sup_d[s, 0] * vel[0] * vel[0] + model.sup_d[s, 1] * vel[1] * vel[1] \
            + model.sup_d[s, 2] * vel[2] * vel[2]
        fx = R[0, 0] * fw0 + R[1, 0] * fw1 + R[2, 0] * fw2
        fy = R[0, 1] * fw0 + R[1, 1] * fw1 + R[2, 1] * fw2
        fz = R[0, 2] * fw0 + R[1, 2] * fw1 + R[2, 2] * fw2
        data.extF[bi, 0] += fx
        data.extF[bi, 1] += fy
        data.extF[bi, 2] += fz
        data.extM[bi, 0] += pt[1] * fz - pt[2] * fy
        data.extM[bi, 1] += pt[2] * fx - pt[0] * fz
        data.extM[bi, 2] += pt[0] * fy - pt[1] * fx
    return P


@njit(cache=True)
def support_forces(model, data, out):
    """World-frame force (N) of every exact support on its body into ``out`` (nsup, 3).

    Needs forward_kinematics."""
    pos = data.f6[0:3]
    vel = data.f6[3:6]
    for s in range(model.sup_body.shape[0]):
        bi = model.sup_body[s]
        point_position(data, bi, model.sup_point[s], pos)
        point_velocity(data, bi, model.sup_point[s], vel)
        for r in range(3):
            out[s, r] = -model.sup_k[s, r] * (pos[r] - model.sup_anchor[s, r]) - model.sup_d[s, r] * vel[r]


@njit(cache=True)
def elastic_energy(model, data, q):
    """Potential energy of all springs (J). Needs forward_kinematics."""
    E = 0.0
    for d in range(model.nv):
        e = q[d] - model.dof_qrest[d]
        E += 0.5 * model.dof_k[d] * e * e
    b = model.base_dof[0]
    if b >= 0:
        for r in range(6):
            for k in range(6):
                E += 0.5 * q[b + r] * model.base_K[r, k] * q[b + k]
    pos = data.f6[0:3]
    for s in range(model.sup_body.shape[0]):
        point_position(data, model.sup_body[s], model.sup_point[s], pos)
        for r in range(3):
            e = pos[r] - model.sup_anchor[s, r]
            E += 0.5 * model.sup_k[s, r] * e * e
    return E
