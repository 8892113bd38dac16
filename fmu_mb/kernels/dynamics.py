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
from the one that produced τ_f by at most the tolerance. d.fric_iters and
d.fric_resid report the last solve, d.fric_fail counts solves that hit
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


@njit(cache=True, error_model="numpy", inline="always")
def solve_with_friction(m, d):
    """q̈, reactions and τ_f for the current d.tau_drive/tau_pas (after aba_inertias
    and friction_laws). One ABA call site, so that it is inlined once."""
    nv, code, tol_abs, tol_rel, maxit = m.nv, m.dof_fric_law, m.fric_tol[0], m.fric_tol[1], m.fric_maxit[0]
    tau, tau_drive, tau_pas, tau_fric = d.tau, d.tau_drive, d.tau_pas, d.tau_fric
    coef, visc, load, iters, resid, fail = d.fric_coef, d.fric_visc, d.fric_load, d.fric_iters, d.fric_resid, d.fric_fail
    has_fric = False
    for k in range(nv):
        tau_fric[k] = 0.0
        if code[k] != 0:
            has_fric = True
    it = -1          # solve -1 is friction-free and seeds τ_f
    err = 0.0
    while True:
        for k in range(nv):
            tau[k] = tau_drive[k] + tau_pas[k] - tau_fric[k]
        aba_accelerations(m, d, tau, True)
        it += 1
        if not has_fric:
            break
        normal_loads(m, d)
        err = 0.0
        scale = 0.0
        for k in range(nv):
            if code[k] == 0:
                continue
            new = coef[k] * load[k] + visc[k]
            e = abs(new - tau_fric[k])
            if e > err:
                err = e
            if abs(new) > scale:
                scale = abs(new)
        if it > 0 and err <= tol_abs + tol_rel * scale:
            break
        if it >= maxit:
            fail[0] += 1
            break
        for k in range(nv):
            if code[k] != 0:
                tau_fric[k] = coef[k] * load[k] + visc[k]
    iters[0] = it
    resid[0] = err


@njit(cache=True, error_model="numpy")
def state_derivative(m, d, x, tau_drive, xdot):
    """xdot = f(x) for state x (layout in fmu_mb.model.compiled) and the full-length
    driving generalized force ``tau_drive`` (nv,), held constant.

    Leaves the whole pipeline's results in ``d``: placements, velocities,
    q̈, joint reaction wrenches (fM, fF), friction loads and torques."""
    nv, nz = m.nv, m.nz
    qdd, zdot, tau_fric, td, power = d.qdd, d.zdot, d.tau_fric, d.tau_drive, d.power
    q = x[0:nv]
    v = x[nv:2 * nv]
    z = x[2 * nv:2 * nv + nz]
    forward_kinematics(m, d, q, v)
    p_damp = passive_forces(m, d, q, v)
    friction_laws(m, d, v, z)
    for k in range(nv):
        td[k] = tau_drive[k]
    aba_inertias(m, d)
    solve_with_friction(m, d)
    p_fric = 0.0
    p_in = 0.0
    for k in range(nv):
        xdot[k] = v[k]
        xdot[nv + k] = qdd[k]
        p_fric += tau_fric[k] * v[k]
        p_in += tau_drive[k] * v[k]
    for k in range(nz):
        xdot[2 * nv + k] = zdot[k]
    power[0] = p_damp + p_fric
    power[1] = p_in
    xdot[2 * nv + nz] = p_damp + p_fric
    xdot[2 * nv + nz + 1] = p_in


@njit(cache=True, error_model="numpy")
def inverse_dynamics(m, d, q, v, qdd, z, tau_drive):
    """Driving generalized forces for a prescribed motion (q, q̇, q̈), with friction.

    tau_drive (nv,) is filled with τ_drive = M q̈ + b − τ_pas + τ_f, where τ_f uses
    the normal loads of the reactions of this motion (no loop: the reactions of
    a prescribed motion do not depend on the friction torques, paper 002
    Algorithm 1, lines 4–9). d holds reactions, loads and τ_f; the Dahl/LuGre
    rates for the given z are in d.zdot."""
    forward_kinematics(m, d, q, v)
    passive_forces(m, d, q, v)
    friction_laws(m, d, v, z)
    rnea(m, d, qdd, True)
    normal_loads(m, d)
    nv = m.nv
    tau, tau_pas, tau_fric, coef, visc, load, td, dqdd = (d.tau, d.tau_pas, d.tau_fric, d.fric_coef, d.fric_visc,
                                                          d.fric_load, d.tau_drive, d.qdd)
    for k in range(nv):
        tau_fric[k] = coef[k] * load[k] + visc[k]
        td[k] = tau[k] - tau_pas[k] + tau_fric[k]
        tau_drive[k] = td[k]
        dqdd[k] = qdd[k]
