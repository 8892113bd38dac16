"""Static equilibrium for initial conditions (papers 000 and 001 start from statics).

At rest the equations of motion reduce to

    r(q) = b(q, 0) − τ_pas(q, 0) − τ_drive = 0,

gravity and support/flexible-link springs balanced by the driving forces.
Coordinates split into **free** ones (solved for: by default the base on
springs, the RFEM sde angles and every joint with a spring) and **held** ones
(kept at their given value, e.g. a crane's joint angles in paper 001 eq. (23));
the held ones report the generalized force needed to hold them. Newton's method
with a central-difference Jacobian of r over the free coordinates, with step
halving when a full step does not reduce the residual.

With constraints (:func:`constrained_static_equilibrium`) the position-level rows Φ(q, t)
of chosen groups (loop closures, fixed base, programmed path) hold as well, with their
multipliers λ as unknowns: r(q) − Cᵀλ = 0 on the free coordinates, Φ = 0 (the static form
of paper 000 eq. 26 / paper 003 eq. 61).
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


def _jacobian(fun, q, free, rel: float) -> np.ndarray:
    """Central-difference Jacobian of fun(q)[free] with respect to q[free]; the step of
    coordinate k is rel·max(1, |q_k|)."""
    J = np.empty((free.size, free.size))
    for k, d in enumerate(free):
        dq = rel * max(1.0, abs(q[d]))
        qp, qm = q.copy(), q.copy()
        qp[d] += dq
        qm[d] -= dq
        J[:, k] = (fun(qp)[free] - fun(qm)[free]) / (2 * dq)
    return J


def holding_force(k, mh, dh, data, q) -> np.ndarray:
    """b(q, 0) − τ_pas(q, 0): the generalized force that holds configuration q at rest, through
    kernel set k (fmu_mb.backend) on handles mh, dh of (model, data)."""
    zero = np.zeros(q.size)
    k.forward_kinematics(mh, dh, q, zero)
    k.passive_forces(mh, dh, q, zero)
    k.rnea(mh, dh, zero, True)
    return data.tau - data.tau_pas


def _kernels(kernels, m, data):
    k = kernel_set("jit")[0] if kernels is None else kernels
    return (k, *k.handles(m, data))


def static_equilibrium(cm: CompiledMechanism, q=None, free=None, tau_drive=None,
                       tol: float = 1e-9, maxit: int = 50, kernels=None) -> StaticSolution:
    """Solve r(q) = 0 for the ``free`` coordinates (default :func:`elastic_coordinates`).

    q: starting configuration (default the description's q0); tau_drive: driving
    generalized forces (nv,), default zero; tol: required max |r_free|, N or N·m; kernels: a
    kernel set of fmu_mb.backend (default jit). Raises RuntimeError if Newton does not converge in ``maxit`` iterations.
    """
    m = cm.model
    data = make_data(m)
    k, mh, dh = _kernels(kernels, m, data)
    q = np.array(cm.q0 if q is None else q, dtype=float)
    free = elastic_coordinates(cm) if free is None else np.asarray(free, dtype=np.int64)
    tau_drive = np.zeros(m.nv) if tau_drive is None else np.asarray(tau_drive, float)

    def residual(qq):
        return holding_force(k, mh, dh, data, qq) - tau_drive

    r = residual(q)
    if free.size == 0:
        return StaticSolution(q, r, free, 0, 0.0)
    it = 0
    err = np.max(np.abs(r[free]))
    while err > tol:
        if it >= maxit:
            raise RuntimeError(f"static equilibrium of '{cm.name}' did not converge in {maxit} Newton "
                               f"iterations (residual {err:.3e})")
        J = _jacobian(residual, q, free, 1e-6)
        step = np.linalg.solve(J, -r[free])
        lam = 1.0
        while True:
            qn = q.copy()
            qn[free] += lam * step
            rn = residual(qn)
            en = np.max(np.abs(rn[free]))
            if en < err or lam < 1e-4:
                break
            lam *= 0.5
        q, r, err = qn, rn, en
        it += 1
    return StaticSolution(q, r, free, it, float(err))


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
    enforced rows; a fixed base (Φ_b = q^(b) = 0) is held at zero instead of adding rows; equations

        b(q, 0) − τ_pas(q, 0) − C_fᵀ λ = 0   (free coordinates),   Φ(q, t) = 0,

    C = Φ_q from the constraint kernels (exact), the stiffness ∂(b − τ_pas − Cᵀλ)/∂q by
    central differences. Newton with a least-squares step (the system is singular when held
    coordinates and rows over-determine a loop consistently, e.g. a redundant closure).
    ``holding`` reports b − τ_pas − Cᵀλ at every coordinate: the drive forces that hold
    the held ones. Converged when |Φ| ≤ tol (m, rad) and the force residual ≤ tol·max(1, largest
    generalized gravity/spring force at the start) (N, N·m): relative, since a 20 t crane's
    forces of 1e4 N do not balance to 1e-9 N in double precision. ``run``: a Data whose run
    settings (RUN_FIELDS: trajectory inputs, offsets, solver options) to use instead of the description's
    (a Simulator passes its own); ``kernels``
    as for :func:`static_equilibrium`. Raises RuntimeError without convergence in ``maxit`` iterations."""
    from .model.constraints import FixedBase
    bad = [g for g in groups if g not in GROUP_NAMES]
    if bad:
        raise ValueError(f"constrained statics: unknown constraint groups {bad} (groups: {', '.join(GROUP_NAMES)})")
    m = cm.model
    data = make_data(m)
    if run is not None:
        copy_run_settings(run, data)
    k, ms, ds = _kernels(kernels, m, data)
    zero = np.zeros(m.nv)
    q = np.array(cm.q0 if q is None else q, dtype=float)
    if hold is None:
        held = sorted(set(range(m.nv)) - set(elastic_coordinates(cm).tolist()))
    else:
        held = sorted(cm.dof(h) if isinstance(h, str) else int(h) for h in hold)
    # the fixed base Φ_b = q^(b) = 0 (paper 000 eq. 32) is held directly: as six multiplier rows
    # against a base without supports it left Newton stalled at 5e-9 relative (crane, rigid base)
    fixed = [c for c in cm.constraints if c.group in groups and isinstance(c.constraint, FixedBase)]
    for c in fixed:
        a = cm.joint(c.constraint.joint).dofadr
        q[a:a + 6] = 0.0
        held = sorted(set(held) | set(range(a, a + 6)))
    skip = {r for c in fixed for r in c.rows}
    free = np.array([k for k in range(m.nv) if k not in set(held)], dtype=np.int64)
    rows = np.array([r for c in cm.constraints if c.group in groups for r in c.rows
                     if m.con_kind[r] != RowKind.VEL and r not in skip], dtype=np.int64)

    def terms(qq):
        k.forward_kinematics(ms, ds, qq, zero)
        k.constraint_terms(ms, ds, qq, zero, t)
        return data.con_phi[rows].copy(), data.con_C[rows].copy()

    def force(qq, lam, C):
        return holding_force(k, ms, ds, data, qq) - C.T @ lam

    nf, nr = free.size, rows.size
    phi, C = terms(q)
    g = holding_force(k, ms, ds, data, q)
    lam = np.linalg.lstsq(C[:, free].T, g[free], rcond=None)[0] if nr and nf else np.zeros(nr)
    fscale = max(1.0, float(np.abs(g).max()))
    for it in range(maxit + 1):
        phi, C = terms(q)
        f = force(q, lam, C)
        res = np.concatenate([f[free] / fscale, phi])
        err = float(np.max(np.abs(res))) if res.size else 0.0
        if err <= tol:
            return ConstrainedStaticSolution(q, f, free, it, err, lam, rows)
        if it == maxit:
            break
        K = _jacobian(lambda qq: force(qq, lam, terms(qq)[1]), q, free, 1e-7)
        A = np.block([[K, -C[:, free].T], [C[:, free], np.zeros((nr, nr))]])
        step = np.linalg.lstsq(A, -np.concatenate([f[free], phi]), rcond=None)[0]
        q[free] += step[:nf]
        lam += step[nf:]
    raise RuntimeError(f"constrained static equilibrium of '{cm.name}' did not converge in {maxit} Newton "
                       f"iterations (relative residual {err:.3e})")
