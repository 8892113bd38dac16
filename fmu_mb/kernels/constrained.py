"""Constrained dynamics: the state derivative of a mechanism with constraint rows.

Stages (the tree derivative's, kernels.dynamics, around a constrained solve): kinematics, M, the
constraint terms and the partition (:func:`prepare`); applied forces (dynamics.applied_forces); the
solve with the friction ↔ reaction loop; reactions; ẋ (dynamics.write_state_derivative). The
algorithms live one per module: kernels.partition, kernels.saddle (GPME / Lagrange factor and
solve), kernels.projection, kernels.uniqueness.

Equations (rows of C = [Φ_q; Ψ] and γ from kernels.constraints):

    M q̈ = Q − b + Cᵀλ,     C q̈ = γ,

Q the applied generalized forces (drives, springs, dampers, −friction), b the
velocity products and gravity (supports included). Two ways to solve them
(ConstraintSolver.formulation, identical in exact arithmetic):

* **GPME** (paper 000 eqs. 25–26, 33, 37; paper 001 eqs. 16, 20): partition q into
  dependent q_d (one per independent row) and independent q_i, so that
  q̇_d = −C_d⁻¹ C_i q̇_i (eq. 25) and D = ∂q̇/∂q̇_i = [1; −C_d⁻¹C_i]; the dynamic
  equations projected on the independent coordinates plus the constraints,
  [Dᵀ M; C] q̈ = [Dᵀ(Q − b); γ] (the (M_ic + M_dc), h_ic + h_dc, Q_ic + Q_dc rows of
  eq. 26), form one square system, factored by LU with partial pivoting. The
  multipliers follow from the dependent rows of M q̈ − Q + b = Cᵀλ: C_dᵀλ = (…)_d.
* **Lagrange** (paper 003 eq. 61, paper 004 eq. 11): Cholesky factors of M and of
  C M⁻¹ Cᵀ; λ = (C M⁻¹Cᵀ)⁻¹(γ − C M⁻¹(Q − b)), q̈ = M⁻¹(Q − b + Cᵀλ).

**Partitioning** (both forms need the independent rows): Gaussian elimination with
complete pivoting on C, rows scaled to unit max-norm, picks the independent rows
(row pivots), the rank r and the dependent coordinates (column pivots). A user
choice of dependent coordinates (paper 001 eq. 11) is tried first and kept if it
reaches the full rank. The partition is kept from step to step and redone when
the dependent block's pivot ratio min|u_ii|/max|u_ii| drops below
``repartition_ratio`` (an ill-conditioned C_d, e.g. near a singular position).

**Redundancy** (paper 004): rows not among the independent ones are dependent
(p = rows − r). Their multipliers are not determined by the rigid model. The
canonical report is the **minimum-norm λ** of all solutions (invariant to the order
of the equations): λ_elim − N Nᵀ λ_elim with N an orthonormal basis of null(Cᵀ),
built from the dependent rows' expansion in the independent ones. Alternatively the
user eliminates rows (paper 004 §3.1: their λ = 0). A reaction is unique iff it
does not change along null(Cᵀ) (paper 004 eqs. 21–27: B_X = C_Xᵀ Q_X^col, Q^col
spanning null(Cᵀ)); kernels.uniqueness applies this to constraint rows and, through
the reaction pass, to every tree joint.

**Reactions**: the constraint forces λ act as wrenches on the bodies
(kernels.constraints), so the recursive Newton–Euler pass with them
(rnea.rnea_constrained) gives every tree joint's reaction in a closed loop.
**Friction**: q̈, λ and the reactions are affine in the friction torques, so the
friction ↔ reaction loop is solved exactly as in the tree case (kernels.dynamics):
one extra solve per friction joint gives the sensitivity (all joints at once:
saddle.solve_friction_increments), then Newton.
"""
from __future__ import annotations

import math

from numba import njit

from ..codes import Group, SolverOption, SolverStat, Work
from .constraints import constraint_terms, constraint_wrenches, constraint_wrenches_into
from .crba import crba
from .dynamics import _newton, applied_forces, record_friction_wrenches, write_state_derivative
from .kinematics import forward_kinematics
from .partition import partition
from .rnea import reaction_increments, rnea, rnea_constrained
from .saddle import factor, solve, solve_friction_increments
from .scalar import identical
from .trajectory import copy_segments


@njit(cache=True, error_model="numpy")
def prepare(m, d, q, v, t):
    """Kinematics, M, constraint terms and (re)partition + factor at (q, q̇, t). Returns False
    if the constrained system is singular even after re-partitioning. With d.q_held set (kernels.jacobian:
    q as in the evaluation before) M, the partition and the factors, which depend on q only, are kept; they are
    kept too where the outputs' evaluation left them for the same q, C and partition (:func:`_position_work_kept`)."""
    forward_kinematics(m, d, q, v)
    if d.q_held[0] != 0:
        constraint_terms(m, d, q, v, t)
        return d.con_stats[SolverStat.PIVOT_RATIO] > 0.0
    constraint_terms(m, d, q, v, t)
    if _position_work_kept(m, d, q):
        d.con_stats[SolverStat.PIVOT_RATIO] = d.pk_stats[2]
        d.pk_hits[0] += 1
        return d.pk_stats[2] > 0.0
    crba(m, d)                                    # (clears d.pk_held: what it keeps is overwritten from here)
    fresh = d.cp_valid[0] == 0
    if fresh:
        partition(m, d)
    ratio = factor(m, d)
    if not fresh and ratio < d.solver_opt[SolverOption.REPARTITION_RATIO] * d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN]:
        # the dependent block became ill-conditioned (relative to its state when chosen, e.g.
        # near a singular position): choose again at this configuration
        partition(m, d)
        fresh = True
        ratio = factor(m, d)
    if fresh:
        d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN] = ratio
    d.con_stats[SolverStat.PIVOT_RATIO] = ratio
    return ratio > 0.0


@njit(cache=True, error_model="numpy")
def keep_outputs_work(m, d, x, t, tau_drive, xdot):
    """After the outputs' evaluation (ẋ in xdot): keep its key — x, the partition, C and the rows' unit wrenches,
    the time and every input — so that the next step's first stage, which evaluates at the same state, reuses its
    position-only work (M, the factors, the friction increments: :func:`_position_work_kept`) and, for RK4, its ẋ
    (:func:`derivative_kept`)."""
    nv, nc = m.nv, m.nc
    kC, kw, kr, kc, ks = d.pk_C, d.pk_w, d.pk_rows, d.pk_cols, d.pk_stats
    C, wM, wF, wa, wb = d.con_C, d.con_wM, d.con_wF, d.con_wpa, d.con_wpb
    for i in range(x.shape[0]):
        d.fs_x[i] = x[i]
        d.fs_xdot[i] = xdot[i]
    for j in range(nv):
        kc[j] = d.cp_cols[j]
        d.fs_tau[j] = tau_drive[j]
    for k in range(nc):
        kr[k] = d.cp_rows[k]
        d.fs_off[k] = d.con_off[k]
        for j in range(nv):
            kC[k, j] = C[k, j]
        for c in range(3):
            kw[k, c], kw[k, 3 + c], kw[k, 6 + c], kw[k, 9 + c] = wM[k, c], wF[k, c], wa[k, c], wb[k, c]
    ks[0] = d.cp_rank[0]
    ks[1] = d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN]
    ks[2] = d.con_stats[SolverStat.PIVOT_RATIO]
    for i in range(d.bf_val.shape[0]):
        d.fs_bf[i] = d.bf_val[i]
    for i in range(d.solver_opt.shape[0]):
        d.fs_opt[i] = d.solver_opt[i]
    copy_segments(d.traj_kind, d.traj_time, d.traj_par, d.fs_tkind, d.fs_ttime, d.fs_tpar)
    d.fs_t[0] = t
    d.pk_held[0] = 1
    d.fs_held[0] = 1
    d.fs_last[0] = 1


@njit(cache=True, error_model="numpy")
def _partition_kept(m, d):
    """Whether the coordinate partition is the one the outputs' evaluation ran with (rows, columns, rank, pivot ratio
    when chosen; a partition asked for again, cp_valid = 0, never is)."""
    ks, kr, kc, rows, cols = d.pk_stats, d.pk_rows, d.pk_cols, d.cp_rows, d.cp_cols
    if d.cp_valid[0] == 0 or d.cp_rank[0] != int(ks[0]) or d.con_stats[SolverStat.PIVOT_RATIO_CHOSEN] != ks[1]:
        return False
    for j in range(m.nv):
        if cols[j] != kc[j]:
            return False
    for k in range(m.nc):
        if rows[k] != kr[k]:
            return False
    return True


@njit(cache=True, error_model="numpy")
def _position_work_kept(m, d, q):
    """Whether Data holds the position-only work of an evaluation at exactly this state of the things it depends
    on: q, C (an ellipse row's C follows its trajectory's inputs), the rows' unit wrenches (the friction
    increments' constraint wrenches) and the partition. Kept by :func:`keep_outputs_work` after the outputs'
    evaluation; every pass that overwrites M clears it (crba), so the next step's first stage, at the step's start,
    reuses M, the factors and the friction increments instead of forming them again: the same numbers from the same
    operands. Evaluated after constraint_terms."""
    if d.pk_held[0] == 0 or not _partition_kept(m, d):
        return False
    nv, nc = m.nv, m.nc
    kx, kC, kw = d.fs_x, d.pk_C, d.pk_w
    C, wM, wF, wa, wb = d.con_C, d.con_wM, d.con_wF, d.con_wpa, d.con_wpb
    for j in range(nv):
        if not identical(q[j], kx[j]):
            return False
    for k in range(nc):
        for j in range(nv):
            if not identical(C[k, j], kC[k, j]):
                return False
        for c in range(3):
            if not (identical(wM[k, c], kw[k, c]) and identical(wF[k, c], kw[k, 3 + c])
                    and identical(wa[k, c], kw[k, 6 + c]) and identical(wb[k, c], kw[k, 9 + c])):
                return False
    return True


@njit(cache=True, error_model="numpy")
def derivative_kept(m, d, x, t, tau_drive, xdot):
    """ẋ into xdot from the outputs' evaluation if it was at exactly this state, time, driving forces, body
    forces, trajectories, row offsets, solver options and coordinate partition (the evaluation's inputs besides
    the Model; the partition decides the round-off of the solve); else False. An RK4 step's first stage reads
    nothing else of the evaluation (issue 40: at 1 ms communication steps with inputs held, one evaluation of
    the five a step + outputs took); a linearly implicit one asks :func:`evaluation_kept`."""
    if d.fs_held[0] == 0 or d.q_held[0] != 0 or not identical(t, d.fs_t[0]) or not _partition_kept(m, d):
        return False
    for i in range(x.shape[0]):
        if not identical(x[i], d.fs_x[i]):
            return False
    for i in range(m.nv):
        if not identical(tau_drive[i], d.fs_tau[i]):
            return False
    for i in range(d.bf_val.shape[0]):
        if not identical(d.bf_val[i], d.fs_bf[i]):
            return False
    for i in range(m.nc):
        if not identical(d.con_off[i], d.fs_off[i]):
            return False
    for i in range(d.solver_opt.shape[0]):
        if not identical(d.solver_opt[i], d.fs_opt[i]):
            return False
    for i in range(d.traj_kind.shape[0]):
        if d.traj_kind[i] != d.fs_tkind[i]:
            return False
        for c in range(d.traj_time.shape[1]):
            if not identical(d.traj_time[i, c], d.fs_ttime[i, c]):
                return False
        for c in range(d.traj_par.shape[1]):
            if not identical(d.traj_par[i, c], d.fs_tpar[i, c]):
                return False
    for i in range(x.shape[0]):
        xdot[i] = d.fs_xdot[i]
    d.fs_hits[0] += 1
    return True


@njit(cache=True, error_model="numpy")
def evaluation_kept(m, d, x, t, tau_drive, xdot):
    """:func:`derivative_kept`, where Data still holds that evaluation: no pass has run since (forward_kinematics
    clears d.fs_last). A linearly implicit step's first stage reads more than ẋ: its stage matrix is built from
    the evaluation's kinematics, M, C and partition, q̈ and friction loop (loads, slopes, sensitivities), all
    the outputs' evaluation's at the same key (a stage derivative leaves the same bits: it only omits the last
    reaction pass). With inputs held that is one evaluation of the two (ROS2) or four (ROS34PW2) of a step."""
    return d.fs_last[0] != 0 and derivative_kept(m, d, x, t, tau_drive, xdot)


@njit(cache=True, error_model="numpy")
def constrained_derivative(m, d, x, t, tau_drive, xdot):
    """xdot = f(x, t) of a constrained mechanism (state layout of fmu_mb.model.compiled).

    Leaves in d: q̈, λ (d.lam), reactions (fM, fF, constraint wrenches included),
    friction loads and torques, the generalized forces of the programmed rows (d.lam_req),
    C, Φ, Φ̇."""
    _derivative(m, d, x, t, tau_drive, xdot, True)


@njit(cache=True, error_model="numpy")
def constrained_stage_derivative(m, d, x, t, tau_drive, xdot):
    """:func:`constrained_derivative` for an integrator's stage: the same xdot, bit for bit, without the
    last reaction pass (every joint's reactions at the converged friction torques) and d.lam_req, which only
    the outputs read (they evaluate :func:`constrained_derivative` after the step; the stage matrix reads the
    friction loads, slopes and sensitivities, which the friction loop leaves). Saves one constraint-wrench
    and Newton–Euler pass per evaluation (as dynamics.stage_derivative does for trees)."""
    _derivative(m, d, x, t, tau_drive, xdot, False)


@njit(cache=True, error_model="numpy")
def _derivative(m, d, x, t, tau_drive, xdot, reactions):
    nv, nz, nc = m.nv, m.nz, m.nc
    fdofs, group = m.fric_dofs, m.con_group
    qdd, tau_fric, tau_pas, tau = d.qdd, d.tau_fric, d.tau_pas, d.tau
    bias, f, lam, C, lreq = d.bias, d.fvec, d.lam, d.con_C, d.lam_req
    tf, iters, resid, sq, sl = d.fric_tf, d.fric_iters, d.fric_resid, d.fric_dqdd, d.fric_dlam
    q = x[0:nv]
    v = x[nv:2 * nv]
    z = x[2 * nv:2 * nv + nz]
    d.work[Work.EVALUATIONS] += 1
    hits = d.pk_hits[0]
    ok = prepare(m, d, q, v, t)
    reused = d.pk_hits[0] != hits                 # (M, the factors and the increments of the outputs' evaluation)
    p_damp = applied_forces(m, d, q, v, z, tau_drive)
    for k in range(nv):
        qdd[k] = 0.0
    rnea(m, d, qdd, True)                         # b(q, q̇) with supports: d.tau
    for k in range(nv):
        bias[k] = tau[k]
        f[k] = tau_drive[k] + tau_pas[k] - bias[k]
        tau_fric[k] = 0.0
    nf = fdofs.shape[0]
    iters[0] = 0
    resid[0] = 0.0
    if not ok:
        for k in range(xdot.shape[0]):
            xdot[k] = math.nan
        return
    solve(m, d, f, True, qdd, lam)
    if nf > 0:
        constraint_wrenches(m, d, lam)
        rnea_constrained(m, d, qdd, True)
        record_friction_wrenches(m, d)
        held = d.q_held[0] != 0 or reused         # (the increments depend on q only: kept with d.q_held)
        if not held:                              # reaction increments per unit friction torque
            solve_friction_increments(m, d)
            for j in range(nf):
                constraint_wrenches_into(m, d, sl[j], d.inc_cM[j], d.inc_cF[j])
            reaction_increments(m, d, sq, d.inc_cM, d.inc_cF, nf)
            W, S, dof_body = d.inc_f, d.fric_S, m.dof_body
            for k in range(nf):
                b = dof_body[fdofs[k]]
                for c in range(6):
                    for j in range(nf):
                        S[k, c, j] = W[j, b, c]
        _newton(m, d)
        for j in range(nf):                       # q̈ and λ are affine in τ_f: superpose the increments
            tau_fric[fdofs[j]] = tf[j]
            f[fdofs[j]] -= tf[j]
            for k in range(nv):
                qdd[k] += tf[j] * sq[j, k]
            for k in range(nc):
                lam[k] += tf[j] * sl[j, k]
    if reactions:
        constraint_wrenches(m, d, lam)
        rnea_constrained(m, d, qdd, True)
        for j in range(nv):
            lreq[j] = 0.0
    p_con = 0.0
    for k in range(nc):
        rate = 0.0
        for j in range(nv):
            rate += C[k, j] * v[j]
        p_con += lam[k] * rate
        if reactions and group[k] == Group.PROGRAMMED:
            for j in range(nv):
                lreq[j] += C[k, j] * lam[k]
    write_state_derivative(m, d, v, tau_drive, p_damp, p_con, xdot)
    if reactions and d.q_held[0] == 0:            # the outputs' evaluation: the next step starts here
        keep_outputs_work(m, d, x, t, tau_drive, xdot)
