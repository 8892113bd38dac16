"""Python entry points to the kernels, Pinocchio style: ``algo(model, data, q, v, ...)``.

Each function validates and converts its arguments, calls the jitted kernel,
and returns a copy of the result; the full intermediate results stay in
``data`` (placements, velocities, accelerations, joint wrenches).

Sign convention: M(q) q̈ + b(q, q̇) = τ, with b the velocity products and
gravity — and, where ``with_supports`` is true, minus the generalized force of
the exact base supports (which act as external wrenches on bodies).
Joint-space springs/dampers (RFEM sdes, linearized supports) and friction are
generalized forces on the right-hand side; see :func:`forward_dynamics`.
"""
from __future__ import annotations

import numpy as np

from .kernels import aba as _aba
from .kernels import crba as _crba
from .kernels import dynamics as _dyn
from .kernels import energy as _energy
from .kernels import forces as _forces
from .kernels import kinematics as _kin
from .kernels import rnea as _rnea
from .kernels import statics as _statics
from .kernels import system as _system
from .kernels import trajectory as _trajectory
from .kernels.handles import data_struct, model_struct
from .model.compiled import Data, Model, check_pair, state_vector
from .model.compiled import vector as _vec

__all__ = ["aba", "crba", "energies", "forward_dynamics", "forward_kinematics", "generalized_gravity_and_springs",
           "inverse_dynamics", "nonlinear_effects", "rnea", "state_vector", "trajectory"]


def forward_kinematics(model: Model, data: Data, q, v=None) -> None:
    """Placements (data.oR, data.op) and velocities (data.w, data.vl) of all bodies."""
    check_pair(model, data)
    q = _vec("q", q, model.nv)
    v = np.zeros(model.nv) if v is None else _vec("v", v, model.nv)
    _kin.forward_kinematics(model_struct(model), data_struct(data), q, v)


def crba(model: Model, data: Data, q) -> np.ndarray:
    """Joint-space mass matrix M(q) (nv, nv)."""
    forward_kinematics(model, data, q)
    _crba.crba(model_struct(model), data_struct(data))
    return data.M.copy()


def rnea(model: Model, data: Data, q, v, a, with_supports: bool = True) -> np.ndarray:
    """Inverse dynamics τ = M q̈ + b; joint reaction wrenches left in data.fM/fF."""
    check_pair(model, data)
    q, v, a = _vec("q", q, model.nv), _vec("v", v, model.nv), _vec("a", a, model.nv)
    m, d = model_struct(model), data_struct(data)
    _kin.forward_kinematics(m, d, q, v)
    _forces.passive_forces(m, d, q, v)
    _rnea.rnea(m, d, a, with_supports)
    return data.tau.copy()


def nonlinear_effects(model: Model, data: Data, q, v, with_supports: bool = True) -> np.ndarray:
    """b(q, q̇) = rnea(q, q̇, 0): velocity products and gravity (Pinocchio's ``nle``)."""
    return rnea(model, data, q, v, np.zeros(model.nv), with_supports)


def aba(model: Model, data: Data, q, v, tau, with_supports: bool = True) -> np.ndarray:
    """q̈ solving M q̈ + b = τ by the articulated-body algorithm (no friction, no joint springs)."""
    check_pair(model, data)
    q, v, tau = _vec("q", q, model.nv), _vec("v", v, model.nv), _vec("tau", tau, model.nv)
    m, d = model_struct(model), data_struct(data)
    _kin.forward_kinematics(m, d, q, v)
    _forces.passive_forces(m, d, q, v)
    _aba.aba_inertias(m, d)
    _aba.aba_accelerations(m, d, tau, with_supports, True)
    return data.qdd.copy()


def forward_dynamics(model: Model, data: Data, x, tau_drive, t: float = 0.0) -> np.ndarray:
    """ẋ for state x at time t under driving generalized forces ``tau_drive`` (nv,): the full
    pipeline with supports, flexible-link springs, joint friction and its reaction loop, and
    the constraints (GPME or Lagrange form) if the model has any."""
    check_pair(model, data)
    x = _vec("x", x, model.nx)
    tau_drive = _vec("tau_drive", tau_drive, model.nv)
    xdot = np.empty(model.nx)
    _system.derivative(model_struct(model), data_struct(data), x, float(t), tau_drive, xdot)
    return xdot


def inverse_dynamics(model: Model, data: Data, q, v, a, z=None) -> np.ndarray:
    """Driving generalized forces that produce the motion (q, q̇, q̈), friction included."""
    check_pair(model, data)
    q, v, a = _vec("q", q, model.nv), _vec("v", v, model.nv), _vec("a", a, model.nv)
    z = np.zeros(model.nz) if z is None else _vec("z", z, model.nz)
    out = np.empty(model.nv)
    _dyn.inverse_dynamics(model_struct(model), data_struct(data), q, v, a, z, out)
    return out


def energies(model: Model, data: Data, q, v) -> dict:
    """Kinetic, gravitational and elastic energy (J) of the configuration (q, q̇)."""
    check_pair(model, data)
    out = np.zeros(3)
    _energy.energies(model_struct(model), data_struct(data), _vec("q", q, model.nv), _vec("v", v, model.nv), out)
    return {"kinetic": out[0], "gravity": out[1], "elastic": out[2]}


def generalized_gravity_and_springs(model: Model, data: Data, q) -> np.ndarray:
    """Generalized force needed to hold configuration q at rest: b(q, 0) − τ_pas(q, 0)."""
    check_pair(model, data)
    out = np.zeros(model.nv)
    _statics.holding_force(model_struct(model), data_struct(data), _vec("q", q, model.nv), out)
    return out


def trajectory(traj, t: float) -> np.ndarray:
    """(3, 3) array p̂(t), dp̂/dt, d²p̂/dt² of a trajectory description (fmu_mb.trajectories) at time t:
    the jitted evaluation the constraint kernels use (kernels.trajectory.eval_trajectory)."""
    kind, time, par = traj.table()
    out = np.zeros((3, 3))
    _trajectory.eval_trajectory(kind, time, par, 0, kind.size, float(t), out)
    return out
