"""Static equilibrium for initial conditions (papers 000 and 001 start from statics).

At rest the equations of motion reduce to

    r(q) = b(q, 0) − τ_pas(q, 0) − τ_drive = 0,

gravity and support/flexible-link springs balanced by the driving forces.
Coordinates split into **free** ones (solved for: by default the base on
springs, the RFEM sde angles and every joint with a spring) and **held** ones
(kept at their given value, e.g. a crane's joint angles in paper 001 eq. (23));
the held ones report the generalized force needed to hold them.

With constraints (:func:`constrained_static_equilibrium`) the position-level rows Φ(q, t)
of chosen groups (loop closures, fixed base, programmed path) hold as well, with their
multipliers λ as unknowns: r(q) − Cᵀλ = 0 on the free coordinates, Φ = 0 (the static form
of paper 000 eq. 26 / paper 003 eq. 61).

This module chooses the problem (:func:`static_problem`: free coordinates, enforced rows);
Newton's method runs in the kernel fmu_mb.kernels.statics, the one a native FMU calls.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backend import kernel_set
from .model.compile import CompiledMechanism
from .codes import GROUP_NAMES, RowKind
from .model.compiled import copy_run_settings, make_data


@dataclass
class StaticSolution:
    q: np.ndarray                 # equilibrium coordinates
    holding: np.ndarray           # generalized force needed at every coordinate (≈ 0 at free ones)
    free: np.ndarray              # indices solved for
    iterations: int
    residual: float               # max |r| over the free coordinates, N or N·m


def elastic_coordinates(cm: CompiledMechanism) -> np.ndarray:
    """Coordinates with an elastic restoring force: RFEM sdes, joint springs, base on supports."""
    m = cm.model
    free = set(np.flatnonzero(m.dof_k > 0).tolist())
    b = int(m.base_dof[0])
    if b >= 0:
        free.update(range(b, b + 6))
    sup_bodies = set(m.sup_body.tolist())
    for j in cm.joints:
        if j.kind == "free" and j.body in sup_bodies:
            free.update(range(j.dofadr, j.dofadr + 6))
    return np.array(sorted(free), dtype=np.int64)


@dataclass(frozen=True)
class StaticProblem:
    """What kernels.statics.static_equilibrium solves (see there)."""
    free: np.ndarray              # coordinates solved for (int64)
    rows: np.ndarray              # enforced constraint rows (indices into the model's rows)
    held_zero: np.ndarray         # coordinates set to zero and held (a fixed base)
    relative: bool                # constrained form: force residual relative to the start's largest force
    rel_step: float               # central-difference step of the stiffness, relative


_NONE = np.zeros(0, dtype=np.int64)


def free_problem(cm: CompiledMechanism, free=None) -> StaticProblem:
    """Unconstrained statics: ``free`` coordinates (default :func:`elastic_coordinates`) solved for,
    every other one held; residual absolute (N, N·m)."""
    free = elastic_coordinates(cm) if free is None else np.asarray(free, dtype=np.int64)
    return StaticProblem(free, _NONE, _NONE, False, 1e-6)


def constrained_problem(cm: CompiledMechanism, hold=None, groups=("kinematic", "base")) -> StaticProblem:
    """Statics with the position rows of ``groups`` enforced, ``hold`` held (coordinate names or
    indices; default every coordinate that is not elastic); a fixed base (Φ_b = q^(b) = 0, paper
    000 eq. 32) is zeroed and held instead of adding rows: as six multiplier rows against a base
    without supports it left Newton stalled at 5e-9 relative (crane, rigid base)."""
    from .model.constraints import FixedBase
    bad = [g for g in groups if g not in GROUP_NAMES]
    if bad:
        raise ValueError(f"constrained statics: unknown constraint groups {bad} (groups: {', '.join(GROUP_NAMES)})")
    m = cm.model
    if hold is None:
        held = set(range(m.nv)) - set(elastic_coordinates(cm).tolist())
    else:
        held = {cm.dof(h) if isinstance(h, str) else int(h) for h in hold}
    fixed = [c for c in cm.constraints if c.group in groups and isinstance(c.constraint, FixedBase)]
    zero = set()
    for c in fixed:
        a = cm.joint(c.constraint.joint).dofadr
        zero |= set(range(a, a + 6))
    skip = {r for c in fixed for r in c.rows}
    free = [k for k in range(m.nv) if k not in held | zero]
    rows = [r for c in cm.constraints if c.group in groups for r in c.rows
            if m.con_kind[r] != RowKind.VEL and r not in skip]
    return StaticProblem(np.array(free, np.int64), np.array(rows, np.int64), np.array(sorted(zero), np.int64),
                         True, 1e-7)


def start_problem(cm: CompiledMechanism) -> StaticProblem:
    """The statics a simulation starts from (init.static; Simulator.initialize): with the rows of
    the solver's ``static_groups`` the mechanism has, :func:`constrained_problem` holding its
    ``static_hold``; otherwise :func:`free_problem`."""
    solver = cm.mechanism.solver
    groups = tuple(g for g in solver.static_groups if any(c.group == g for c in cm.constraints))
    return constrained_problem(cm, solver.static_hold, groups) if groups else free_problem(cm)


#: tolerance and Newton limit of the start statics (both FMU kinds)
START_TOL, START_MAXIT = 1e-9, 50


def solve(problem: StaticProblem, k, mh, dh, data, q, t: float = 0.0, tol: float = START_TOL,
          maxit: int = START_MAXIT, what: str = "static equilibrium") -> int:
    """Run kernels.statics.static_equilibrium through kernel set k on handles mh, dh of ``data``:
    q (float64, C-contiguous) in place; Newton steps taken. Raises RuntimeError without convergence."""
    p = problem
    it = k.static_equilibrium(mh, dh, q, float(t), p.free, p.rows, p.held_zero, float(tol), int(maxit),
                              p.rel_step, p.relative)
    if it < 0:
        err = data.st_info[0]
        scale = "relative residual" if p.relative else "residual"
        why = "a non-finite residual" if not np.isfinite(err) else f"{maxit} Newton iterations ({scale} {err:.3e})"
        raise RuntimeError(f"{what} did not converge in {why}")
    return it


def _kernels(kernels, m, data):
    k = kernel_set("jit")[0] if kernels is None else kernels
    return (k, *k.handles(m, data))


def static_equilibrium(cm: CompiledMechanism, q=None, free=None, tau_drive=None,
                       tol: float = 1e-9, maxit: int = 50, kernels=None) -> StaticSolution:
    """Solve r(q) = 0 for the ``free`` coordinates (default :func:`elastic_coordinates`).

    q: starting configuration (default the description's q0); tau_drive: driving
    generalized forces (nv,), default zero; tol: required max |r_free|, N or N·m; kernels: a
    kernel set of fmu_mb.backend (default jit). Newton with a central-difference stiffness and
    step halving (kernels.statics). Raises RuntimeError if Newton does not converge in ``maxit``
    iterations."""
    m = cm.model
    data = make_data(m)
    k, mh, dh = _kernels(kernels, m, data)
    q = np.array(cm.q0 if q is None else q, dtype=float)
    if tau_drive is not None:
        data.st_tau[:] = np.asarray(tau_drive, float)
    p = free_problem(cm, free)
    it = solve(p, k, mh, dh, data, q, 0.0, tol, maxit, f"static equilibrium of '{cm.name}'")
    return StaticSolution(q, data.st_f.copy(), p.free, it, float(data.st_info[0]))


@dataclass
class ConstrainedStaticSolution(StaticSolution):
    # residual: max(|r_free| / force scale, |Φ|) (see constrained_static_equilibrium)
    lam: np.ndarray               # multipliers of the enforced rows (order of ``rows``), N or N·m
    rows: np.ndarray              # enforced constraint rows (indices into the model's rows; a fixed
                                  # base is held instead, its reaction is in ``holding``)


def constrained_static_equilibrium(cm: CompiledMechanism, q=None, hold=None, groups=("kinematic", "base"),
                                   t: float = 0.0, tol: float = 1e-9, maxit: int = 50,
                                   run=None, kernels=None) -> ConstrainedStaticSolution:
    """Equilibrium at rest with the position-level constraint rows of ``groups`` enforced.

    Unknowns: every coordinate except ``hold`` (coordinate names such as ``"R11.q"`` or
    indices; default: every coordinate that is not elastic) and the multipliers λ of the
    enforced rows; a fixed base is held at zero (:func:`constrained_problem`); equations

        b(q, 0) − τ_pas(q, 0) − C_fᵀ λ = 0   (free coordinates),   Φ(q, t) = 0,

    C = Φ_q from the constraint kernels (exact), the stiffness by central differences, Newton
    with a minimum-norm least-squares step (the system is singular when held coordinates and
    rows over-determine a loop consistently, e.g. a redundant closure), kernels.statics.
    ``holding`` reports b − τ_pas − Cᵀλ at every coordinate: the drive forces that hold
    the held ones. Converged when |Φ| ≤ tol (m, rad) and the force residual ≤ tol·max(1, largest
    generalized gravity/spring force at the start) (N, N·m): relative, since a 20 t crane's
    forces of 1e4 N do not balance to 1e-9 N in double precision. ``run``: a Data whose run
    settings (RUN_FIELDS: trajectory inputs, offsets, solver options) to use instead of the
    description's; ``kernels`` as for :func:`static_equilibrium`. Raises RuntimeError without
    convergence in ``maxit`` iterations."""
    p = constrained_problem(cm, hold, groups)
    m = cm.model
    data = make_data(m)
    if run is not None:
        copy_run_settings(run, data)
    k, mh, dh = _kernels(kernels, m, data)
    q = np.array(cm.q0 if q is None else q, dtype=float)
    it = solve(p, k, mh, dh, data, q, t, tol, maxit, f"constrained static equilibrium of '{cm.name}'")
    return ConstrainedStaticSolution(q, data.st_f.copy(), p.free, it, float(data.st_info[0]),
                                     data.st_lam[:p.rows.size].copy(), p.rows)
