"""The staged forward pipeline and inverse dynamics with joint friction.

Forward dynamics of the tree (papers 000/001: M q̈ − h = Q with Q from
gravity, supports, flexible links, driving and friction torques):

    M(q) q̈ + b(q, q̇) = τ_drive + τ_pas(q, q̇) − τ_f,
    τ_f,d = coef_d(q̇, z) · L_d(reaction_d(q, q̇, q̈)) + visc_d(q̇).

The friction torque depends on the joint reaction, which depends on q̈, which
depends on the friction torque: an algebraic loop. We resolve it by fixed-point
iteration on τ_f:

    τ_f⁰ = visc + coef·L(reactions of the friction-free q̈),
    q̈ᵏ, reactionsᵏ = ABA(τ_drive + τ_pas − τ_fᵏ),   τ_fᵏ⁺¹ = coef·L(reactionsᵏ) + visc,

until max|τ_fᵏ⁺¹ − τ_fᵏ| ≤ tol_abs + tol_rel·max|τ_f| (Model.fric_tol) or
Model.fric_maxit iterations. The applied τ_f is the last one used by ABA, so
q̈, reactions and τ_f are mutually consistent; the final normal load differs
from the one that produced τ_f by at most the tolerance. data.fric_iters and
data.fric_resid report the last solve, data.fric_fail counts solves that hit
the cap (the iteration is a contraction when coef·∂L/∂τ_f < 1, true for
friction coefficients and journal radii of real joints; the cap makes a
violation observable rather than silent).
"""
from __future__ import annotations

from numba import njit

from .aba import aba_accelerations, aba_inertias
from .forces import passive_forces
from .friction import friction_laws, normal_loads
from .kinematics import forward_kinematics
from .rnea import rnea


@njit(cache=True)
def _solve_with_friction(model, data, v):
    """q̈, reactions and τ_f for the current data.tau_drive/tau_pas (after aba_inertias)."""
    nv = model.nv
    has_fric = False
    for d in range(nv):
        data.tau_fric[d] = 0.0
        if model.dof_fric_law[d] != 0:
            has_fric = True
    for d in range(nv):
        data.tau[d] = data.tau_drive[d] + data.tau_pas[d]
    aba_accelerations(model, data, data.tau, True)
    data.fric_iters[0] = 0
    data.fric_resid[0] = 0.0
    if not has_fric:
        return
    tol_abs = model.fric_tol[0]
    tol_rel = model.fric_tol[1]
    normal_loads(model, data)
    for d in range(nv):
        data.tau_fric[d] = data.fric_coef[d] * data.fric_load[d] + data.fric_visc[d]
    it = 0
    maxit = model.fric_maxit[0]
    while True:
        for d in range(nv):
            data.tau[d] = data.tau_drive[d] + data.tau_pas[d] - data.tau_fric[d]
        aba_accelerations(model, data, data.tau, True)
        it += 1
        normal_loads(model, data)
        err = 0.0
        scale = 0.0
        for d in range(nv):
            if model.dof_fric_law[d] == 0:
                continue
            new = data.fric_coef[d] * data.fric_load[d] + data.fric_visc[d]
            e = abs(new - data.tau_fric[d])
            if e > err:
                err = e
            if abs(new) > scale:
                scale = abs(new)
        data.fric_resid[0] = err
        if err <= tol_abs + tol_rel * scale:
            break
        if it >= maxit:
            data.fric_fail[0] += 1
            break
        for d in range(nv):
            if model.dof_fric_law[d] != 0:
                data.tau_fric[d] = data.fric_coef[d] * data.fric_load[d] + data.fric_visc[d]
    data.fric_iters[0] = it


@njit(cache=True)
def state_derivative(model, data, x, tau_drive, xdot):
    """xdot = f(x) for state x (layout in fmu_mb.model.compiled) and the full-length
    driving generalized force ``tau_drive`` (nv,), held constant.

    Leaves the whole pipeline's results in ``data``: placements, velocities,
    q̈, joint reaction wrenches (fM, fF), friction loads and torques."""
    nv = model.nv
    nz = model.nz
    q = x[0:nv]
    v = x[nv:2 * nv]
    z = x[2 * nv:2 * nv + nz]
    forward_kinematics(model, data, q, v)
    p_damp = passive_forces(model, data, q, v)
    friction_laws(model, data, v, z)
    for d in range(nv):
        data.tau_drive[d] = tau_drive[d]
    aba_inertias(model, data)
    _solve_with_friction(model, data, v)
    p_fric = 0.0
    p_in = 0.0
    for d in range(nv):
        xdot[d] = v[d]
        xdot[nv + d] = data.qdd[d]
        p_fric += data.tau_fric[d] * v[d]
        p_in += tau_drive[d] * v[d]
    for k in range(nz):
        xdot[2 * nv + k] = data.zdot[k]
    data.power[0] = p_damp + p_fric
    data.power[1] = p_in
    xdot[2 * nv + nz] = p_damp + p_fric
    xdot[2 * nv + nz + 1] = p_in


@njit(cache=True)
def inverse_dynamics(model, data, q, v, qdd, z, tau_drive):
    """Driving generalized forces for a prescribed motion (q, q̇, q̈), with friction.

    tau_drive (nv,) is filled with τ_drive = M q̈ + b − τ_pas + τ_f, where τ_f uses
    the normal loads of the reactions of this motion (no loop: the reactions of
    a prescribed motion do not depend on the friction torques, papers 002
    Algorithm 1, lines 4–9). data holds reactions, loads and τ_f; the Dahl/LuGre
    rates for the given z are in data.zdot."""
    forward_kinematics(model, data, q, v)
    passive_forces(model, data, q, v)
    friction_laws(model, data, v, z)
    rnea(model, data, qdd, True)
    normal_loads(model, data)
    for d in range(model.nv):
        data.tau_fric[d] = data.fric_coef[d] * data.fric_load[d] + data.fric_visc[d]
        data.tau_drive[d] = data.tau[d] - data.tau_pas[d] + data.tau_fric[d]
        tau_drive[d] = data.tau_drive[d]
        data.qdd[d] = qdd[d]
