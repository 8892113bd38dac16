"""Linearly implicit, fixed-cost integrators: the Rosenbrock-W methods ROS2 and ROS34PW2.

Why. The papers' detail is stiff: RFEM spring-damping elements (paper 000 eqs. 17-18, 001
eq. 7), sprung bases (000 eqs. 15-16, 001 eqs. 3-4), the regularised Coulomb slope of every
friction law, LuGre/Dahl bristles (000 eq. 22, 001 eqs. 14-15) and Baumgarte terms (000 eqs.
33, 37). Explicit RK4 needs steps of 10-50 µs for them. Real-time multibody codes answer with
noniterative linearly implicit methods of fixed cost (Arnold et al., Multibody Syst Dyn 2007;
Rill's modified implicit Euler, 2006) or implicit schemes with a fixed iteration count
(Cuadrado et al.; MuJoCo's ``implicitfast`` linearises the velocity-dependent forces). ROS2 is
of the first kind and of order 2:

    (I − γhJ) k1 = f(t, x)
    (I − γhJ) k2 = f(t + h, x + h k1) − 2 k1                       γ = 1 + 1/√2
    x⁺ = x + 3/2 h k1 + 1/2 h k2

(Verwer, Spee, Blom, Hundsdorfer, SIAM J Sci Comput 20, 1999). γ is the run's
Data.solver_opt[SolverOption.ROS2_GAMMA]: 1 + 1/√2 (Verwer's) or 1 − 1/√2 (method "ros2_lowdamp"),
the two roots that make R(∞) = 0; on an oscillation |R(iy)|² = 1 − γ⁴y⁴ + …, so the small root
damps structural vibration about 1150 times less, while its intermediate stage overshoots the
stiffest components by up to 1 − 1/γ = −2.4 times their distance to equilibrium. It is L-stable, and as a
W-method it keeps order 2 for *any* matrix J: J need only hold the stiff part of ∂f/∂x for
stability, so it is built from analytic Jacobians of the stiff forces and nothing else. Cost
per step: two evaluations of the full pipeline (friction ↔ reaction loop and constrained
solve included), one mass matrix, one LU factorisation of an (nv + r)-square matrix and two
solves: fixed, no iteration (twice that on a low-damping step redone with the damped γ, see
:func:`_guarded_steps`). The time is treated as a state with a zero column in J (which the
W property allows), hence f at t + h in the second stage.

ROS34PW2 (Rang & Angermann, BIT 45, 2005) is a four-stage Rosenbrock-W method of order 3, again
for any J, L-stable (R(∞) = 0) and stiffly accurate, with γ = 0.4358665215. In the transformed
variables of Hairer & Wanner (Solving ODEs II, IV.7 eq. 7.25), with u_i = h k_i:

    (I − γhJ) k_i = γ [f(t + c_i h, x + h Σ_{j<i} a_ij k_j) + Σ_{j<i} c_ij k_j]
    x⁺ = x + h Σ m_i k_i

where (a_ij) = α Γ⁻¹, (c_ij) = diag(1/γ) − Γ⁻¹, m = bᵀ Γ⁻¹ from the published α, Γ, b
(:data:`ROS3_ALPHA`, :data:`ROS3_GAMMAS`, :data:`ROS3_B`) and c_i = Σ_j α_ij. Cost per step: four
pipeline evaluations, one mass matrix, one factorisation, four solves. Why a third-order method:
on the manipulator at full detail (paper 000, S_fl L_fl J_f, 4 s programmed run) the error against
RK4 at 2e-5 s is 5.0e-4 at h = 1.25 ms (the FMU's default; 2.7e-4 at 1 ms), where ROS2 needs
h = 0.48 ms for 9.6e-4: per simulated second 23 % fewer pipeline evaluations and 62 % fewer
factorisations for half the error. Its intermediate stages overshoot like the low-damping ROS2's
(γ < 1), so it runs under the same guard.

The matrix J and the stage solve are kernels.linear_stage's.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..codes import (BRISTLE_STEP_TOLERANCE, BRISTLE_SUBSTEP_DEPTH, ROS2_FALLBACK_TIME, ROS2_GAMMA_DAMPED,
                     SolverOption, Work)
from .constrained import constrained_stage_derivative, evaluation_kept
from .crba import crba
from .dynamics import stage_derivative
from .integrators import ALL_GROUPS, finite
from .linear_stage import stage_matrix, stage_solve
from .projection import project_after_step

#: ROS34PW2 as published (Rang & Angermann 2005, table of ROS34PW2): γ, α (strictly lower), the
#: off-diagonal Γ and the weights b
ROS3_GAMMA = 0.43586652150845900
ROS3_ALPHA = np.array([[0.0, 0.0, 0.0, 0.0],
                       [0.87173304301691801, 0.0, 0.0, 0.0],
                       [0.84457060015369423, -0.11299064236484185, 0.0, 0.0],
                       [0.0, 0.0, 1.0, 0.0]])
ROS3_GAMMAS = np.array([[ROS3_GAMMA, 0.0, 0.0, 0.0],
                        [-0.87173304301691801, ROS3_GAMMA, 0.0, 0.0],
                        [-0.90338057013044082, 0.054180672388095326, ROS3_GAMMA, 0.0],
                        [0.24212380706095346, -1.2232505839045147, 0.54526025533510214, ROS3_GAMMA]])
ROS3_B = np.array([0.24212380706095346, -1.2232505839045147, 1.5452602553351020, 0.43586652150845900])
#: the published embedded weights b̂ (order 2), for the local-error estimate x⁺ − x̂⁺ of :func:`bristle_error`
ROS3_BHAT = np.array([0.37810903145819369, -0.096042292212423178, 0.5, 0.2179332607542295])
_GI = np.linalg.inv(ROS3_GAMMAS)
#: the transformed coefficients (Hairer & Wanner IV.7.25), frozen into the kernels as constants
ROS3_A = ROS3_ALPHA @ _GI
ROS3_C = np.diag(1.0 / np.diag(ROS3_GAMMAS)) - _GI
ROS3_M = ROS3_B @ _GI
ROS3_E = (ROS3_B - ROS3_BHAT) @ _GI
ROS3_T = ROS3_ALPHA.sum(axis=1)


@njit(cache=True, error_model="numpy")
def _fail(x):
    for i in range(x.shape[0]):
        x[i] = math.nan


@njit(cache=True, error_model="numpy")
def _advance(m, d, x, h):
    """Second stage's right-hand side is in d.k3; finish the step: x += 3/2 h k1 + 1/2 h k2."""
    k1, k2, f = d.k1, d.k2, d.k3
    for i in range(x.shape[0]):
        f[i] -= 2.0 * k1[i]
    stage_solve(m, d, f, k2, d.solver_opt[SolverOption.ROS2_GAMMA] * h)
    for i in range(x.shape[0]):
        x[i] += h * (1.5 * k1[i] + 0.5 * k2[i])


@njit(cache=True, error_model="numpy")
def _first_stage(m, d, x, h):
    """After f(x) is in d.k3: factor, k1 into d.k1, the second stage's state into d.xs.
    False if the stage matrix is singular."""
    gh = d.solver_opt[SolverOption.ROS2_GAMMA] * h
    if not stage_matrix(m, d, x, h, gh):
        return False
    stage_solve(m, d, d.k3, d.k1, gh)
    xs, k1 = d.xs, d.k1
    for i in range(x.shape[0]):
        xs[i] = x[i] + h * k1[i]
    return True


@njit(cache=True, error_model="numpy")
def ros2_step_tree(m, d, x, t, tau_drive, h):
    """One ROS2 step of size h (s) of a mechanism without constraint rows, x in place (NaN if
    the stage matrix is singular)."""
    d.work[Work.STEPS] += 1
    stage_derivative(m, d, x, tau_drive, d.k3)
    crba(m, d)                                   # M(q); the kinematics are x's
    if not _first_stage(m, d, x, h):
        _fail(x)
        return
    stage_derivative(m, d, d.xs, tau_drive, d.k3)
    _advance(m, d, x, h)


@njit(cache=True, error_model="numpy")
def ros2_step_constrained(m, d, x, t, tau_drive, h):
    """One ROS2 step of size h (s) from time t of a constrained mechanism, x in place, then the
    projection if the solver asks for it."""
    d.work[Work.STEPS] += 1
    if not evaluation_kept(m, d, x, t, tau_drive, d.k3):         # (the outputs' evaluation at this key)
        constrained_stage_derivative(m, d, x, t, tau_drive, d.k3)  # leaves M, C and the partition of x
    if not _first_stage(m, d, x, h):
        _fail(x)
        return
    constrained_stage_derivative(m, d, d.xs, t + h, tau_drive, d.k3)
    _advance(m, d, x, h)
    if d.solver_opt[SolverOption.PROJECTION] != 0.0:
        project_after_step(m, d, x, t + h, ALL_GROUPS)


@njit(cache=True, error_model="numpy")
def _combine(out, x, s, c0, v0, c1, v1, c2, v2):
    """out = x + s (c0 v0 + c1 v1 + c2 v2)."""
    for i in range(x.shape[0]):
        out[i] = x[i] + s * (c0 * v0[i] + c1 * v1[i] + c2 * v2[i])


@njit(cache=True, error_model="numpy")
def _evaluate(m, d, xs, t, tau_drive, f, constrained):
    if constrained:
        constrained_stage_derivative(m, d, xs, t, tau_drive, f)
    else:
        stage_derivative(m, d, xs, tau_drive, f)


@njit(cache=True, error_model="numpy")
def _ros3_stage(m, d, k, gh):
    """k = γ (I − γhJ)⁻¹ d.lin_f (the stage's right-hand side)."""
    stage_solve(m, d, d.lin_f, k, gh)
    for i in range(k.shape[0]):
        k[i] *= ROS3_GAMMA


@njit(cache=True, error_model="numpy")
def ros3_step(m, d, x, t, tau_drive, h, constrained):
    """One ROS34PW2 step of size h (s) from time t, x in place (NaN if the stage matrix is
    singular); then the projection of a constrained mechanism if the solver asks for it. Stages
    in d.k1..d.k4, stage states in d.xs, right-hand sides in d.lin_f."""
    A, C, W, T = ROS3_A, ROS3_C, ROS3_M, ROS3_T
    k1, k2, k3, k4, xs, f = d.k1, d.k2, d.k3, d.k4, d.xs, d.lin_f
    gh = ROS3_GAMMA * h
    d.work[Work.STEPS] += 1
    if not (constrained and evaluation_kept(m, d, x, t, tau_drive, f)):
        _evaluate(m, d, x, t, tau_drive, f, constrained)
    if not constrained:
        crba(m, d)                               # M(q); the kinematics are x's
    if not stage_matrix(m, d, x, h, gh):
        _fail(x)
        return
    _ros3_stage(m, d, k1, gh)
    _combine(xs, x, h, A[1, 0], k1, 0.0, k1, 0.0, k1)
    _evaluate(m, d, xs, t + T[1] * h, tau_drive, f, constrained)
    _combine(f, f, 1.0, C[1, 0], k1, 0.0, k1, 0.0, k1)
    _ros3_stage(m, d, k2, gh)
    _combine(xs, x, h, A[2, 0], k1, A[2, 1], k2, 0.0, k1)
    _evaluate(m, d, xs, t + T[2] * h, tau_drive, f, constrained)
    _combine(f, f, 1.0, C[2, 0], k1, C[2, 1], k2, 0.0, k1)
    _ros3_stage(m, d, k3, gh)
    _combine(xs, x, h, A[3, 0], k1, A[3, 1], k2, A[3, 2], k3)
    _evaluate(m, d, xs, t + T[3] * h, tau_drive, f, constrained)
    _combine(f, f, 1.0, C[3, 0], k1, C[3, 1], k2, C[3, 2], k3)
    _ros3_stage(m, d, k4, gh)
    for i in range(x.shape[0]):
        x[i] += h * (W[0] * k1[i] + W[1] * k2[i] + W[2] * k3[i] + W[3] * k4[i])
    if constrained and d.solver_opt[SolverOption.PROJECTION] != 0.0:
        project_after_step(m, d, x, t + h, ALL_GROUPS)


@njit(cache=True, error_model="numpy")
def ros3_step_tree(m, d, x, t, tau_drive, h):
    """One ROS34PW2 step of a mechanism without constraint rows."""
    ros3_step(m, d, x, t, tau_drive, h, False)


@njit(cache=True, error_model="numpy")
def ros3_step_constrained(m, d, x, t, tau_drive, h):
    """One ROS34PW2 step of a constrained mechanism."""
    ros3_step(m, d, x, t, tau_drive, h, True)


@njit(cache=True, error_model="numpy")
def bristles_bounded(m, x):
    """Every LuGre/Dahl bristle state of x within 1.5 times the bound of its law's invariant set
    |z| ≤ μ_s/σ0 (Canudas de Wit et al. 1995, property 1; Dahl's |z| ≤ μ/σ0): an exact solution
    that starts inside stays inside, so a state beyond it is an integration artefact."""
    nv, fd, zidx, par = m.nv, m.fric_dofs, m.dof_fric_z, m.dof_fric_par
    for t in range(fd.shape[0]):
        k = fd[t]
        zi = zidx[k]
        if zi >= 0 and not abs(x[2 * nv + zi]) <= 1.5 * par[k, 2] / par[k, 4]:
            return False
    return True


@njit(cache=True, error_model="numpy")
def _one_step(m, d, x, t, tau_drive, h, constrained, third_order):
    if third_order:
        ros3_step(m, d, x, t, tau_drive, h, constrained)
    elif constrained:
        ros2_step_constrained(m, d, x, t, tau_drive, h)
    else:
        ros2_step_tree(m, d, x, t, tau_drive, h)


@njit(cache=True, error_model="numpy")
def _damped_step(m, d, x, t, tau_drive, h, constrained):
    """One ROS2 step with Verwer's γ = 1 + 1/√2, whatever γ the run uses (its γ stays in force after)."""
    opt = d.solver_opt
    g = opt[SolverOption.ROS2_GAMMA]
    opt[SolverOption.ROS2_GAMMA] = ROS2_GAMMA_DAMPED
    _one_step(m, d, x, t, tau_drive, h, constrained, False)
    opt[SolverOption.ROS2_GAMMA] = g


@njit(cache=True, error_model="numpy")
def fallback_steps(h):
    """Steps of size h the damped ROS2 takes after a redone step: those of the next ROS2_FALLBACK_TIME."""
    return max(1, int(math.ceil(ROS2_FALLBACK_TIME / h - 1e-9)))


@njit(cache=True, error_model="numpy")
def _embedded_error(d, j, h, third_order):
    """Component j of x⁺ − x̂⁺, the last step's embedded local-error estimate: ROS34PW2 (stages in d.k1..d.k4)
    against Rang & Angermann's order-2 b̂, h Σ (m_i − m̂_i) k_i; ROS2 (d.k1, d.k2) against x̂⁺ = x + h k1, of
    order 1, h (k1 + k2) / 2."""
    if third_order:
        E = ROS3_E
        return h * (E[0] * d.k1[j] + E[1] * d.k2[j] + E[2] * d.k3[j] + E[3] * d.k4[j])
    return 0.5 * h * (d.k1[j] + d.k2[j])


@njit(cache=True, error_model="numpy")
def bristle_error(m, d, h, third_order):
    """The last step's local-error estimate (:func:`_embedded_error`) of the bristle states in units of their
    tolerance, BRISTLE_STEP_TOLERANCE of the bound μ_s/σ0 of the law's invariant set (≤ 1: kept)."""
    nv, fd, zidx, par = m.nv, m.fric_dofs, m.dof_fric_z, m.dof_fric_par
    worst = 0.0
    for t in range(fd.shape[0]):
        k = fd[t]
        zi = zidx[k]
        if zi >= 0:
            e = abs(_embedded_error(d, 2 * nv + zi, h, third_order)) * par[k, 4] / (BRISTLE_STEP_TOLERANCE * par[k, 2])
            if not e <= worst:
                worst = e
    return worst


@njit(cache=True, error_model="numpy")
def _save(d, x):
    """Keep x in d.lin_x0 and return the friction-failure count, for :func:`_restore`."""
    x0 = d.lin_x0
    for i in range(x.shape[0]):
        x0[i] = x[i]
    return d.fric_fail[0]


@njit(cache=True, error_model="numpy")
def _restore(d, x, fails):
    """Back to the x :func:`_save` kept; the discarded step's friction solves do not count."""
    x0 = d.lin_x0
    for i in range(x.shape[0]):
        x[i] = x0[i]
    d.fric_fail[0] = fails


@njit(cache=True, error_model="numpy")
def _guarded_step(m, d, x, t, tau_drive, h, constrained, third_order):
    """One guarded step of size h from t (see :func:`_guarded_steps`), x in place."""
    hold = d.lin_hold
    if hold[0] > 0:                                 # within ROS2_FALLBACK_TIME of a redone step
        _damped_step(m, d, x, t, tau_drive, h, constrained)
        hold[0] -= 1
        return
    fails = _save(d, x)
    _one_step(m, d, x, t, tau_drive, h, constrained, third_order)
    if third_order and m.nz > 0 and not bristle_error(m, d, h, True) <= 1.0:
        _restore(d, x, fails)
        _split_damped(m, d, x, t, tau_drive, h, constrained)
        return
    if not (finite(x) and bristles_bounded(m, x)):
        _restore(d, x, fails)
        _damped_step(m, d, x, t, tau_drive, h, constrained)
        d.lin_redo[0] += 1
        hold[0] = fallback_steps(h)


@njit(cache=True, error_model="numpy")
def _split_damped(m, d, x, t, tau_drive, h, constrained):
    """The step of size h from t as damped ROS2 substeps: halves, each halved again while its bristle-error
    estimate exceeds BRISTLE_STEP_TOLERANCE, down to h / 2**BRISTLE_SUBSTEP_DEPTH. A binary tree walked in
    order: a node is tried once and kept or replaced by its two halves, at most 2**(D+1) − 2 tries."""
    depth = BRISTLE_SUBSTEP_DEPTH
    leaves = 1 << depth
    pos, level = 0, 1
    while pos < leaves:
        size = 1 << (depth - level)
        ts, hs = t + h * pos / leaves, h * size / leaves
        fails = _save(d, x)
        _damped_step(m, d, x, ts, tau_drive, hs, constrained)
        d.lin_split[0] += 1
        if level < depth and not bristle_error(m, d, hs, False) <= 1.0:
            _restore(d, x, fails)
            level += 1
            continue
        pos += size
        while level > 1 and (pos >> (depth - level)) % 2 == 0:      # a right half done: up to its parent
            level -= 1


@njit(cache=True, error_model="numpy")
def _guarded_steps(m, d, x, t, tau_drive, h, nsteps, constrained, third_order):
    """``nsteps`` steps of ROS34PW2 (third_order) or ROS2; False at the first non-finite state.

    With a γ < 1 (ROS34PW2's 0.436, the low-damping ROS2's 1 − 1/√2) a step whose result leaves a
    bristle outside its invariant set (:func:`bristles_bounded`) or is not finite is redone once
    from its start by ROS2 with Verwer's γ = 1 + 1/√2, whose intermediate stage does not overshoot
    (module docstring), and counted in d.lin_redo. Why: released from a held start with zero
    drives, the manipulator's flexible link (L_fl, LuGre) hits its hubs of ~2e-5 kg·m² with their
    whole spring preload; the small γ's stage put the journal bristles at 8 times their bound on
    the first 0.5 ms step and the run diverged within 3 ms, while the damped γ runs it.

    After a redone step the damped ROS2 also takes the steps of the next ROS2_FALLBACK_TIME (d.lin_hold
    counts those still to take; it is run state: the checkpoint and the state record carry it, so the
    run does not depend on how the host cuts it into communication steps). Why: with one redo only,
    ROS34PW2 at 1.25 ms failed within 20 ms on that manipulator at n_div 10, 11 and 14 (and the
    low-damping ROS2 at 1 ms at n_div 9): the small γ's next step after the impact left the invariant
    set again, and the damped redo of a step from the state it left behind was no longer finite. The
    price is the damped γ's numerical damping of what vibrates in that window (the energy balance of that
    impact: 11 % of the dissipated energy at 0.5 ms, 5 % with the redo alone).

    ROS34PW2 with bristle states also estimates each step's local error of the bristles from its embedded
    order-2 solution (:func:`bristle_error`, Rang & Angermann's b̂); a step whose estimate exceeds
    BRISTLE_STEP_TOLERANCE of the invariant-set bound is redone from its start by damped ROS2 substeps
    (:func:`_split_damped`; counted in d.lin_split). Why: the RPSUP with flexible base and coupler and LuGre,
    released in torque mode at n_div 5, has journals coming to rest under light loads at 1.397 and 1.439 s: the
    1 ms step's bristle went to 0.87 of its bound where the converged solution is at 0.38 (estimate 0.24; below
    0.03 on the steps before), the next steps drifted to 1.16 bounds off, and from there no ROS2 step down to
    0.125 ms stayed finite. ROS34PW2 halved down to 0.125 ms failed at the second stick; damped ROS2 at 0.5 ms
    runs through both. The cost of a step is bounded and declared (fmu_mb.step_cost): four evaluations and
    one factorisation, plus at most 2**(D+1) − 2 damped substeps of two and one, or the redo above."""
    guard = third_order or d.solver_opt[SolverOption.ROS2_GAMMA] < 1.0
    for s in range(nsteps):
        if guard:
            _guarded_step(m, d, x, t + s * h, tau_drive, h, constrained, third_order)
        else:
            _one_step(m, d, x, t + s * h, tau_drive, h, constrained, third_order)
        if not finite(x):
            return False
    return True


@njit(cache=True, error_model="numpy")
def remainder_step(m, d, x, t, tau_drive, r, constrained, third_order):
    """The last, shorter step of a communication step (kernels.stepping), unguarded: with the damped γ while
    the fallback window of a redone step lasts (:func:`_guarded_steps`), else with the run's method."""
    if d.lin_hold[0] > 0 and (third_order or d.solver_opt[SolverOption.ROS2_GAMMA] < 1.0):
        _damped_step(m, d, x, t, tau_drive, r, constrained)
    else:
        _one_step(m, d, x, t, tau_drive, r, constrained, third_order)


@njit(cache=True, error_model="numpy")
def ros2_steps_tree(m, d, x, t, tau_drive, h, nsteps):
    """``nsteps`` ROS2 steps of size h from time t; False at the first non-finite state (as
    integrators.rk4_steps_tree)."""
    return _guarded_steps(m, d, x, t, tau_drive, h, nsteps, False, False)


@njit(cache=True, error_model="numpy")
def ros2_steps_constrained(m, d, x, t, tau_drive, h, nsteps):
    """The same for a constrained mechanism."""
    return _guarded_steps(m, d, x, t, tau_drive, h, nsteps, True, False)


@njit(cache=True, error_model="numpy")
def ros3_steps_tree(m, d, x, t, tau_drive, h, nsteps):
    """``nsteps`` ROS34PW2 steps of size h from time t; False at the first non-finite state."""
    return _guarded_steps(m, d, x, t, tau_drive, h, nsteps, False, True)


@njit(cache=True, error_model="numpy")
def ros3_steps_constrained(m, d, x, t, tau_drive, h, nsteps):
    """The same for a constrained mechanism."""
    return _guarded_steps(m, d, x, t, tau_drive, h, nsteps, True, True)
