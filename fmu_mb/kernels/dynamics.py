"""The staged forward pipeline and inverse dynamics with joint friction.

Forward dynamics of the tree (papers 000/001: M q̈ − h = Q with Q from
gravity, supports, flexible links, driving and friction torques):

    M(q) q̈ + b(q, q̇) = τ_drive + τ_pas(q, q̇) − τ_f,
    τ_f,k = coef_k(q̇, z) · L_k(W_k) + visc_k(q̇),

with W_k the reaction wrench of friction joint k and L_k its equivalent normal
load (paper 000 eq. 21, 001 eq. 13, 002 eq. 47). The friction torque depends on
the reaction, the reaction on q̈, q̈ on the friction torque: an algebraic loop.

How it is resolved. For a given state, q̈ and every reaction are *affine* in
the generalized forces, so W(τ_f) = W₀ + S·τ_f exactly, with W₀ the reactions of
the friction-free solve and S (6 × n_f per friction joint) obtained from the
part of the articulated-body pass linear in τ, once per friction joint (unit
friction torque: aba.aba_unit_responses, a backward walk from the joint to the
root and a forward pass). The loop then reduces to n_f scalar equations

    r(τ_f) = τ_f − coef ∘ L(W₀ + S τ_f) − visc = 0,

solved by Newton's method (Jacobian I − diag(coef)·∂L/∂W·S, gradients of the
norms in L analytic; step halving when the residual does not decrease), from
the fixed-point seed τ_f⁰ = coef∘L(W₀) + visc. q̈ consistent with the converged
τ_f is q̈₀ + Σ τ_f,j·q̈_j (the same unit responses); where every joint's reaction is
wanted (the outputs), a final articulated-body pass with τ_f gives both.

Why Newton rather than plain fixed-point iteration τ_fᵏ⁺¹ = coef∘L(W(τ_fᵏ)) +
visc: the fixed point converges linearly at the loop gain coef·∂L/∂τ_f (measured
on a 6-joint tree with pin-bearing Stribeck friction: ratio 0.05–0.3 per
iteration, ~12 iterations to 1e-8), Newton quadratically (4 iterations to
1e-14 on the same case), and its cost per iteration is a small dense solve, not
an articulated-body pass.

When friction couples too strongly (k_s = 0.2 with a 2 cm torsion arm on a
prismatic joint, say) the joint self-locks: no τ_f satisfies r = 0 (a
multi-start least-squares search on that case found min ½|r|² ≈ 90 N²); the
rigid model has no sliding solution there. The solver then keeps the iterate
of least residual and counts the failure.

Convergence is observable: d.fric_iters (Newton iterations of the last solve),
d.fric_resid (max |r|, N·m or N), d.fric_fail (count of solves that hit the cap
the iteration cap, stalled, or met a singular Jacobian). Tolerance:
max|r| ≤ tol_abs + tol_rel·max|τ_f| (Model.fric_tol).

Bounded cost (fixed at initialization: a step's worst case, fmu_mb.step_cost): at most
N = d.solver_opt[SolverOption.FRICTION_ITERATIONS] Newton iterations (FMU parameter
solver.friction_iteration_limit, default 30), each one n_f × n_f solve and at most 11 residual
evaluations (step halving down to λ = 2⁻¹⁰), plus the round-off polish (one solve, at most two
residuals) and the two residuals of the seed. d.work counts them (codes.Work).
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType, SolverOption, Work
from .aba import aba_accelerations, aba_inertias, aba_unit_responses
from .forces import passive_forces
from .friction import friction_laws, load_and_gradient, normal_loads
from .kinematics import forward_kinematics
from .rnea import rnea
from .scalar import carries_derivative


@njit(cache=True, error_model="numpy")
def _residual(m, d, t):
    """r = t − coef∘L(W₀ + S t) − visc into d.fric_r; loads into d.fric_load and their
    gradients ∂L/∂W into d.fric_dL. Returns max |r|."""
    fdofs, dof_body, jtype, ax, kind, geom = (m.fric_dofs, m.dof_body, m.body_jtype, m.body_axis,
                                              m.dof_fric_load, m.dof_fric_geom)
    W0, S, dL, coef, visc, load, r, W = d.fric_W0, d.fric_S, d.fric_dL, d.fric_coef, d.fric_visc, d.fric_load, \
        d.fric_r, d.m66
    nf = fdofs.shape[0]
    err = 0.0
    for k in range(nf):
        dk = fdofs[k]
        b = dof_body[dk]
        for c in range(6):
            s = W0[k, c]
            for j in range(nf):
                s += S[k, c, j] * t[j]
            W[0, c] = s
        L = load_and_gradient(kind[dk], geom, dk, jtype[b] == JointType.REVOLUTE, ax[b, 0], ax[b, 1], ax[b, 2], W, 0, dL, k)
        load[dk] = L
        r[k] = t[k] - coef[dk] * L - visc[dk]
        if abs(r[k]) > err:
            err = abs(r[k])
    return err


@njit(cache=True, error_model="numpy")
def _solve_small(A, b, n):
    """Solve A x = b in place (x into b) by Gaussian elimination with partial pivoting;
    False if A is singular."""
    for c in range(n):
        p = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if abs(A[p, c]) < 1e-300:
            return False
        if p != c:
            for k in range(n):
                A[c, k], A[p, k] = A[p, k], A[c, k]
            b[c], b[p] = b[p], b[c]
        for r in range(c + 1, n):
            f = A[r, c] / A[c, c]
            for k in range(c, n):
                A[r, k] -= f * A[c, k]
            b[r] -= f * b[c]
    for c in range(n - 1, -1, -1):
        s = b[c]
        for k in range(c + 1, n):
            s -= A[c, k] * b[k]
        b[c] = s / A[c, c]
    return True


@njit(cache=True, error_model="numpy")
def loop_jacobian(m, d):
    """d.fric_J = I − diag(coef)·∂L/∂W·S, the Jacobian of the friction-loop residual at the last
    evaluated iterate (d.fric_dL, d.fric_S); also the inverse factor of the torques' slopes
    (kernels.linearly_implicit)."""
    fdofs, coef, S, J, dL = m.fric_dofs, d.fric_coef, d.fric_S, d.fric_J, d.fric_dL
    nf = fdofs.shape[0]
    for k in range(nf):
        c = coef[fdofs[k]]
        for j in range(nf):
            s = 0.0
            for q in range(6):
                s += dL[k, q] * S[k, q, j]
            J[k, j] = (1.0 if k == j else 0.0) - c * s


@njit(cache=True, error_model="numpy")
def _direction(m, d):
    """Newton direction d.fric_dt = −J⁻¹ r with J = :func:`loop_jacobian` (False: singular J)."""
    r, dt = d.fric_r, d.fric_dt
    loop_jacobian(m, d)
    for k in range(m.fric_dofs.shape[0]):
        dt[k] = -r[k]
    return _solve_small(d.fric_J, dt, m.fric_dofs.shape[0])


@njit(cache=True, error_model="numpy")
def _newton(m, d):
    """Solve r(τ_f) = 0 for the friction torques d.fric_tf (after W₀ and S are known).

    Once the tolerance is met, one more full Newton step is taken if it lowers the
    residual: Newton converges quadratically, so this brings τ_f to round-off and makes the
    result independent of how the iterates approached it (e.g. GPME vs Lagrange solves)."""
    fdofs, tol_abs, tol_rel = m.fric_dofs, m.fric_tol[0], m.fric_tol[1]
    maxit = int(d.solver_opt[SolverOption.FRICTION_ITERATIONS].real)
    coef, visc, load, iters, resid, fail = d.fric_coef, d.fric_visc, d.fric_load, d.fric_iters, d.fric_resid, \
        d.fric_fail
    t, dt, work = d.fric_tf, d.fric_dt, d.work
    nf = fdofs.shape[0]
    for k in range(nf):
        t[k] = 0.0
    _residual(m, d, t)
    for k in range(nf):                              # fixed-point seed coef·L(W₀) + visc
        t[k] = coef[fdofs[k]] * load[fdofs[k]] + visc[fdofs[k]]
    err = _residual(m, d, t)
    nres = 2
    it = 0
    while True:
        scale = 0.0
        for k in range(nf):
            scale = max(scale, abs(t[k]))
        if err <= tol_abs + tol_rel * scale:
            if err > 0.0 and _direction(m, d):      # polish to round-off
                for k in range(nf):
                    t[k] += dt[k]
                e2 = _residual(m, d, t)
                nres += 1
                if e2 < err or carries_derivative(t):   # (a complex step keeps the step: module scalar)
                    err = e2
                    it += 1
                else:
                    for k in range(nf):
                        t[k] -= dt[k]
                    err = _residual(m, d, t)
                    nres += 1
            break
        if it >= maxit:
            fail[0] += 1
            break
        if not _direction(m, d):
            fail[0] += 1                             # singular: the joint self-locks
            break
        base = err
        lam = 1.0
        while True:                                  # step halving: at most 11 residuals
            for k in range(nf):
                t[k] += lam * dt[k]
            err = _residual(m, d, t)
            nres += 1
            if err < base or lam < 1e-3:
                break
            for k in range(nf):
                t[k] -= lam * dt[k]
            lam *= 0.5
        it += 1
        if not err < base:
            fail[0] += 1
            break
    iters[0] = it
    resid[0] = err
    work[Work.FRICTION_SOLVES] += 1
    work[Work.FRICTION_ITERATIONS] += it
    work[Work.FRICTION_RESIDUALS] += nres
    if it > work[Work.FRICTION_MOST]:
        work[Work.FRICTION_MOST] = it


@njit(cache=True, error_model="numpy", inline="always")
def applied_forces(m, d, q, v, z, tau_drive):
    """Pipeline stage 2 (after the kinematics, before the acceleration solve), shared by the tree and
    the constrained derivative: passive forces (springs, dampers, supports, body forces; returns
    their dissipated power), friction-law terms and bristle rates, and the driving forces, held in
    d.tau_drive."""
    p_damp = passive_forces(m, d, q, v)
    if m.fric_dofs.shape[0] > 0:               # (a call costs ~40 ns even when it has nothing to do)
        friction_laws(m, d, v, z)
    td = d.tau_drive
    for k in range(m.nv):
        td[k] = tau_drive[k]
    return p_damp


@njit(cache=True, error_model="numpy")
def record_friction_wrenches(m, d):
    """W₀ of the friction ↔ reaction loop, shared by the tree and the constrained solve: the reaction wrenches
    (fM, fF) of the friction joints after the solve without friction go into d.fric_W0."""
    fdofs, dof_body, fM, fF, W0 = m.fric_dofs, m.dof_body, d.fM, d.fF, d.fric_W0
    for k in range(fdofs.shape[0]):
        b = dof_body[fdofs[k]]
        for c in range(3):
            W0[k, c] = fM[b, c]
            W0[k, 3 + c] = fF[b, c]


@njit(cache=True, error_model="numpy")
def solve_with_friction(m, d, reactions):
    """q̈, reactions and τ_f for the current d.tau_drive/tau_pas (after aba_inertias and friction_laws); see the
    module docstring. One articulated-body pass with τ_f = 0 gives q̈₀ and W₀; :func:`aba.aba_unit_responses` the
    motion and the friction joints' reactions per unit friction torque (the columns of S, and d.fric_dqdd), which
    depend on q only (with d.q_held set, kernels.jacobian, they are kept); Newton gives τ_f. q̈ is affine in τ_f,
    so q̈ = q̈₀ + Σ τ_f,j·q̈_j (as the constrained solve superposes its increments); ``reactions`` asks for every
    joint's reaction at the converged τ_f, one more full pass (the outputs' evaluation; an integrator's stage
    reads only q̈). Without friction the reactions are left out unless ``reactions`` asks for them."""
    nv, fdofs = m.nv, m.fric_dofs
    tau, tau_drive, tau_pas, tau_fric, qdd, sq = d.tau, d.tau_drive, d.tau_pas, d.tau_fric, d.qdd, d.fric_dqdd
    t, iters, resid = d.fric_tf, d.fric_iters, d.fric_resid
    nf = fdofs.shape[0]
    for k in range(nv):
        tau_fric[k] = 0.0
        tau[k] = tau_drive[k] + tau_pas[k]
    iters[0] = 0
    resid[0] = 0.0
    aba_accelerations(m, d, tau, True, reactions or nf > 0)
    if nf == 0:
        return
    record_friction_wrenches(m, d)
    if d.q_held[0] == 0:
        aba_unit_responses(m, d)
    _newton(m, d)
    for k in range(nf):
        tau_fric[fdofs[k]] = t[k]
        tau[fdofs[k]] -= t[k]
    if reactions:
        aba_accelerations(m, d, tau, True, True)
        return
    for j in range(nf):
        for k in range(nv):
            qdd[k] += t[j] * sq[j, k]


@njit(cache=True, error_model="numpy", inline="always")
def _tree_derivative(m, d, x, tau_drive, xdot, reactions):
    nv, nz = m.nv, m.nz
    q = x[0:nv]
    v = x[nv:2 * nv]
    z = x[2 * nv:2 * nv + nz]
    d.work[Work.EVALUATIONS] += 1
    forward_kinematics(m, d, q, v)
    p_damp = applied_forces(m, d, q, v, z, tau_drive)
    if d.q_held[0] == 0:                       # (the articulated inertias depend on q only: kernels.jacobian)
        aba_inertias(m, d)
    solve_with_friction(m, d, reactions)
    write_state_derivative(m, d, v, tau_drive, p_damp, 0.0, xdot)


@njit(cache=True, error_model="numpy")
def state_derivative(m, d, x, tau_drive, xdot):
    """xdot = f(x) for state x (layout in fmu_mb.model.compiled) and the full-length
    driving generalized force ``tau_drive`` (nv,), held constant.

    Leaves the whole pipeline's results in ``d``: placements, velocities,
    q̈, joint reaction wrenches (fM, fF), friction loads and torques. Stages: kinematics,
    :func:`applied_forces`, articulated-body solve with the friction loop, :func:`write_state_derivative`
    (kernels.constrained.constrained_derivative composes the same stages around its solve)."""
    _tree_derivative(m, d, x, tau_drive, xdot, True)


@njit(cache=True, error_model="numpy")
def stage_derivative(m, d, x, tau_drive, xdot):
    """:func:`state_derivative` for an integrator's stage: the same xdot, bit for bit, but of a mechanism
    without friction the joint reactions are not computed (nothing in the step reads them; the outputs
    evaluate :func:`state_derivative` after the step). Saves 6 row products per body."""
    _tree_derivative(m, d, x, tau_drive, xdot, False)


@njit(cache=True, error_model="numpy", inline="always")
def write_state_derivative(m, d, v, tau_drive, p_damp, p_con, xdot):
    """ẋ = [q̇, q̈, ż, P_diss, P_in, P_con] from d.qdd, d.zdot, d.tau_fric and the powers
    (state layout of fmu_mb.model.compiled); d.power = (dissipated, input). Shared by the tree
    and the constrained derivative."""
    nv, nz = m.nv, m.nz
    qdd, zdot, tau_fric, power = d.qdd, d.zdot, d.tau_fric, d.power
    p_fric = 0.0
    p_in = 0.0
    for k in range(nv):
        xdot[k] = v[k]
        xdot[nv + k] = qdd[k]
        p_fric += tau_fric[k] * v[k]
        p_in += tau_drive[k] * v[k]
    for k in range(nz):
        xdot[2 * nv + k] = zdot[k]
    p_in += d.bf_power[0]
    power[0] = p_damp + p_fric
    power[1] = p_in
    xdot[2 * nv + nz] = p_damp + p_fric
    xdot[2 * nv + nz + 1] = p_in
    xdot[2 * nv + nz + 2] = p_con


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
