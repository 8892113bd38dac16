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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import algorithms as alg
from .model.compile import CompiledMechanism
from .model.compiled import make_data


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


def static_equilibrium(cm: CompiledMechanism, q=None, free=None, tau_drive=None,
                       tol: float = 1e-9, maxit: int = 50) -> StaticSolution:
    """Solve r(q) = 0 for the ``free`` coordinates (default :func:`elastic_coordinates`).

    q: starting configuration (default the description's q0); tau_drive: driving
    generalized forces (nv,), default zero; tol: required max |r_free|, N or N·m.
    Raises RuntimeError if Newton does not converge in ``maxit`` iterations.
    """
    m = cm.model
    data = make_data(m)
    q = np.array(cm.q0 if q is None else q, dtype=float)
    free = elastic_coordinates(cm) if free is None else np.asarray(free, dtype=np.int64)
    tau_drive = np.zeros(m.nv) if tau_drive is None else np.asarray(tau_drive, float)

    def residual(qq):
        return alg.generalized_gravity_and_springs(m, data, qq) - tau_drive

    r = residual(q)
    if free.size == 0:
        return StaticSolution(q, r, free, 0, 0.0)
    it = 0
    err = np.max(np.abs(r[free]))
    while err > tol:
        if it >= maxit:
            raise RuntimeError(f"static equilibrium of '{cm.name}' did not converge in {maxit} Newton "
                               f"iterations (residual {err:.3e})")
        J = np.empty((free.size, free.size))
        for k, d in enumerate(free):
            dq = 1e-6 * max(1.0, abs(q[d]))
            qp, qm = q.copy(), q.copy()
            qp[d] += dq
            qm[d] -= dq
            J[:, k] = (residual(qp)[free] - residual(qm)[free]) / (2 * dq)
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
