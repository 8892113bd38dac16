"""Exact Jacobians of the pipeline by the complex step (kernels.scalar).

``derivative_jacobian`` fills A = ∂ẋ/∂x and B = ∂ẋ/∂τ_drive of the state derivative of any
mechanism (tree or constrained; flexible links, supports, every friction law with its
reaction-dependent normal load and its friction ↔ reaction loop, stops), and C = ∂y/∂x, D = ∂y/∂τ
of any FMU outputs (the spec table of kernels.outputs), at (x, t, τ): one complex evaluation of the
pipeline per state and per input, column j = Im f(x + i·h·e_j) / h with h = 1e-30. No difference
is formed, so every entry is exact to round-off (relative error of the step O(h²) ≈ 1e-60); an
iterative stage (the friction loop's Newton solve) carries the derivative along and converges it
with the value. The constrained pipeline keeps the coordinate partition of ``d`` (the real Data):
``dc`` gets it before every column, so every column differentiates the same branch.

The columns along the velocities, the bristle states and the inputs leave q real and as it was: what
depends on q only — the articulated inertias, M, the partition and the constrained factors, the
friction sensitivities S (kernels.dynamics, kernels.constrained) — is formed by the first of them and
kept for the rest (Data.q_held), which then cost what the velocity-dependent stages cost.
"""
from __future__ import annotations

from numba import njit

from ..codes import OutputKind as O
from ..codes import SolverStat
from .constrained import constrained_derivative
from .constraints import constraint_terms
from .dynamics import state_derivative
from .kinematics import forward_kinematics
from .outputs import fill_outputs
from .stepping import advance_constrained, advance_tree
from .trajectory import copy_segments
from .uniqueness import uniqueness

#: the imaginary step (see the module docstring)
STEP = 1e-30


@njit(cache=True, error_model="numpy")
def share_run_state(d, dc):
    """Copy what a derivative evaluation or a step reads besides its arguments from the real Data ``d`` into
    the complex one ``dc``: run settings, body-force inputs, the coordinate partition, the damped steps still
    to take after a redone step (kernels.linearly_implicit._guarded_steps: the step map in that window is the
    damped ROS2's)."""
    for k in range(d.con_off.shape[0]):
        dc.con_off[k] = d.con_off[k]
    for k in range(d.solver_opt.shape[0]):
        dc.solver_opt[k] = d.solver_opt[k]
    copy_segments(d.traj_kind, d.traj_time, d.traj_par, dc.traj_kind, dc.traj_time, dc.traj_par)
    for k in range(d.bf_val.shape[0]):
        dc.bf_val[k] = d.bf_val[k]
    for k in range(d.cp_rows.shape[0]):
        dc.cp_rows[k] = d.cp_rows[k]
    for k in range(d.cp_cols.shape[0]):
        dc.cp_cols[k] = d.cp_cols[k]
    dc.traj_seed[0] = 0.0
    dc.cp_rank[0] = d.cp_rank[0]
    dc.cp_count[0] = d.cp_count[0]
    dc.cp_valid[0] = d.cp_valid[0]
    dc.lin_hold[0] = d.lin_hold[0]
    for k in range(d.con_stats.shape[0]):
        dc.con_stats[k] = d.con_stats[k]


@njit(cache=True, error_model="numpy")
def hold_positions(m, dc):
    """After a complex evaluation whose q carried no imaginary part: keep its position-only stages for the
    next evaluations at the same q (dc.q_held; not if the constrained system was singular there, so each
    column says so itself). A tree's S is the difference of two passes that include the velocities: its
    imaginary part is round-off of a zero derivative, set to zero."""
    if m.nc > 0 and not dc.con_stats[SolverStat.PIVOT_RATIO] > 0.0:
        return
    S = dc.fric_S
    for k in range(S.shape[0]):
        for c in range(6):
            for j in range(S.shape[2]):
                S[k, c, j] = S[k, c, j].real
    dc.q_held[0] = 1


@njit(cache=True, error_model="numpy")
def _evaluate(m, d, dc, xc, t, tc, fc, vr, kind, a, b, f, yc):
    share_run_state(d, dc)
    _pipeline(m, dc, xc, t, tc, fc, vr, kind, a, b, f, yc)


@njit(cache=True, error_model="numpy")
def _pipeline(m, dc, xc, t, tc, fc, vr, kind, a, b, f, yc):
    """ẋ (fc) and the outputs (yc) on the complex Data."""
    if m.nc > 0:
        constrained_derivative(m, dc, xc, t, tc, fc)
        for k in range(kind.shape[0]):
            if kind[k] == O.UNIQUE_JOINT or kind[k] == O.UNIQUE_CONSTRAINT:
                uniqueness(m, dc, dc.uq_obj, dc.uq_body)
                break
    else:
        state_derivative(m, dc, xc, tc, fc)
    fill_outputs(m, dc, xc, vr, kind, a, b, f, yc)


@njit(cache=True, error_model="numpy")
def derivative_jacobian(m, d, dc, x, t, tau, inputs, vr, kind, a, b, f, xc, tc, fc, yc, A, B, C, D):
    """A = ∂ẋ/∂x (nx, nx), B = ∂ẋ/∂τ_inputs (nx, ni), C = ∂y/∂x (ny, nx), D = ∂y/∂τ_inputs (ny, ni) at
    state x, time t and driving forces τ (nv,); ``inputs`` the coordinates whose drive is an input
    (int64, ni), y the outputs of the spec table (vr, kind, a, b, f; vr numbers 0..ny−1). The energy
    counters' columns are left zero (nothing depends on them). ``d`` the real Data of the run (its
    partition and settings), ``dc`` a complex-step Data of the same Model (compiled.make_data(model,
    complex_step=True)); xc, tc, fc, yc complex work vectors of lengths nx, nv, nx, ny."""
    nx, nv, ny, ni = x.shape[0], tau.shape[0], yc.shape[0], inputs.shape[0]
    ns = 2 * m.nv + m.nz
    for k in range(nx):
        xc[k] = x[k]
    for k in range(nv):
        tc[k] = tau[k]
    dc.q_held[0] = 0
    for j in range(ns + ni):
        if j < ns:
            xc[j] = x[j] + 1j * STEP
        else:
            tc[inputs[j - ns]] = tau[inputs[j - ns]] + 1j * STEP
        if dc.q_held[0] != 0:                 # (the run state is dc's since the last full evaluation)
            _pipeline(m, dc, xc, t, tc, fc, vr, kind, a, b, f, yc)
        else:
            _evaluate(m, d, dc, xc, t, tc, fc, vr, kind, a, b, f, yc)
            if j >= m.nv:
                hold_positions(m, dc)
        if j < ns:
            xc[j] = x[j]
            for i in range(nx):
                A[i, j] = fc[i].imag / STEP
            for i in range(ny):
                C[i, j] = yc[i].imag / STEP
        else:
            k = inputs[j - ns]
            tc[k] = tau[k]
            for i in range(nx):
                B[i, j - ns] = fc[i].imag / STEP
            for i in range(ny):
                D[i, j - ns] = yc[i].imag / STEP
    dc.q_held[0] = 0


@njit(cache=True, error_model="numpy")
def step_jacobian(m, d, dc, x, t, tau, inputs, h, dt, scheme, xc, tc, x1, Ad, Bd):
    """Ad = ∂x⁺/∂x (nx, nx), Bd = ∂x⁺/∂τ_inputs (nx, ni) of one communication step x⁺ = Φ(x, τ) of
    length dt from (x, t): the internal steps of size h with the scheme ``scheme`` (codes.Scheme)
    and the remainder rule of kernels.stepping — the map a co-simulation FMU applies, so its
    linearization is the discrete-time model at the sample time dt. The input is held over the
    step (zero-order hold). The energy counters only accumulate (E⁺ = E + ∫P dt, nothing depends on them):
    their columns are the identity's. Returns 0 if a perturbed step was refused (a non-finite state),
    else 1."""
    nx, nv, ni = x.shape[0], tau.shape[0], inputs.shape[0]
    ns = 2 * m.nv + m.nz
    for k in range(nv):
        tc[k] = tau[k]
    constrained = m.nc > 0
    for j in range(ns + ni):
        share_run_state(d, dc)
        for k in range(nx):
            x1[k] = x[k]
        if j < ns:
            x1[j] = x[j] + 1j * STEP
        else:
            tc[inputs[j - ns]] = tau[inputs[j - ns]] + 1j * STEP
        if constrained:
            ok = advance_constrained(m, dc, x1, t, tc, h, dt, scheme)
        else:
            ok = advance_tree(m, dc, x1, t, tc, h, dt, scheme)
        if ok == 0:
            return 0
        if j < ns:
            for i in range(nx):
                Ad[i, j] = x1[i].imag / STEP
        else:
            tc[inputs[j - ns]] = tau[inputs[j - ns]]
            for i in range(nx):
                Bd[i, j - ns] = x1[i].imag / STEP
    for j in range(ns, nx):
        for i in range(nx):
            Ad[i, j] = 1.0 if i == j else 0.0
    return 1


@njit(cache=True, error_model="numpy")
def constraint_rate_jacobian(m, d, dc, x, t, dirs, qc, vc, out):
    """out[:, k] = ∂Φ̇/∂q · dirs[:, k] at state x (Φ̇ = C q̇ + Φ_t of every row, d.con_phid): how
    the constraint rates change when the coordinates move along dirs[:, k] with the velocities held
    (the velocity completion of a reduced state, fmu_mb.linearization.coordinates)."""
    nv = m.nv
    for k in range(nv):
        vc[k] = x[nv + k]
    for c in range(dirs.shape[1]):
        share_run_state(d, dc)
        for k in range(nv):
            qc[k] = x[k] + 1j * STEP * dirs[k, c]
        forward_kinematics(m, dc, qc, vc)
        constraint_terms(m, dc, qc, vc, t)
        for r in range(out.shape[0]):
            out[r, c] = dc.con_phid[r].imag / STEP


@njit(cache=True, error_model="numpy")
def directional_derivative(m, d, dc, x, t, vt, tau, vx, vtau, vbf, vr, kind, a, b, f, xc, tc, fc, yc, dxdot, dy):
    """The directional derivatives of the pipeline (FMI's fmi2GetDirectionalDerivative): dxdot = ∂ẋ/∂x·vx +
    ∂ẋ/∂t·vt + ∂ẋ/∂τ·vtau + ∂ẋ/∂f_b·vbf and dy the same of the outputs of the spec table (vr numbers 0..ny−1),
    at state x, time t, driving forces τ (nv) and the run's body forces: one complex evaluation with the
    imaginary step along the direction (vx: nx, vt: along time — the programmed trajectories, the only explicit
    time dependence (kernels.trajectory.seeded_time) —, vtau: nv, vbf: the body-force inputs d.bf_val). With
    vx = ẋ and vt = 1 it is the outputs' time derivative along the motion (fmi3GetOutputDerivatives). ``d``,
    ``dc``, xc, tc, fc, yc as :func:`derivative_jacobian`'s."""
    for k in range(x.shape[0]):
        xc[k] = x[k] + 1j * STEP * vx[k]
    for k in range(tau.shape[0]):
        tc[k] = tau[k] + 1j * STEP * vtau[k]
    share_run_state(d, dc)
    dc.traj_seed[0] = 1j * STEP * vt
    for k in range(vbf.shape[0]):
        dc.bf_val[k] = d.bf_val[k] + 1j * STEP * vbf[k]
    _pipeline(m, dc, xc, t, tc, fc, vr, kind, a, b, f, yc)
    dc.traj_seed[0] = 0.0
    for k in range(dxdot.shape[0]):
        dxdot[k] = fc[k].imag / STEP
    for k in range(dy.shape[0]):
        dy[k] = yc[k].imag / STEP
