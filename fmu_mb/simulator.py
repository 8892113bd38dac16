"""One simulated mechanism instance: state, inputs, fixed-step integration, outputs.

Pure Python API over the jitted core, usable without FMI (tests, notebooks,
scenarios); the FMI adapter wraps exactly this object.

Stepping: ``step(dt)`` advances by any dt > 0 with RK4 at the fixed internal
step h: ⌊dt/h⌋ full steps (dt/h within 1e-9 of an integer counts as that
integer) and, if a remainder r = dt − n·h is left, one final RK4 step of size
r. So any communication step is integrated exactly to its end, and a dt that
is a multiple of h reproduces the plain fixed-step result bit for bit. Driving
inputs are held constant over the call (zero-order hold).
"""
from __future__ import annotations

import math

import numpy as np

from . import algorithms as alg
from .kernels import energy as _energy
from .kernels import forces as _forces
from .kernels import integrators as _int
from .kernels import kinematics as _kin
from .kernels.dynamics import state_derivative
from .model.compile import CompiledMechanism
from .model.compiled import make_data


class SimulationError(RuntimeError):
    """The integration produced a non-finite state; the last good state was kept."""


class Simulator:
    """State, inputs and outputs of one compiled mechanism.

    step_size: internal fixed RK4 step h, s.
    """

    def __init__(self, cm: CompiledMechanism, step_size: float = 1e-3):
        if not (isinstance(step_size, (int, float)) and math.isfinite(step_size) and step_size > 0):
            raise ValueError(f"step_size must be a finite number > 0 s (got {step_size!r})")
        self.cm = cm
        self.model = cm.model
        self.data = make_data(cm.model)
        self._m, self._d = self.model.struct, self.data.struct
        self.h = float(step_size)
        m = self.model
        self.x = alg.state_vector(m, cm.q0, cm.qd0)
        self.t = 0.0
        self.tau_drive = np.zeros(m.nv)
        self._xdot = np.zeros(m.nx)
        self._backup = np.zeros(m.nx)
        self._sup = np.zeros((m.sup_body.shape[0], 3))

    # ------------------------------------------------------------------ state
    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def q(self) -> np.ndarray:
        return self.x[:self.nv]

    @property
    def qd(self) -> np.ndarray:
        return self.x[self.nv:2 * self.nv]

    @property
    def z(self) -> np.ndarray:
        return self.x[2 * self.nv:2 * self.nv + self.model.nz]

    def set_state(self, q=None, qd=None, z=None, t: float | None = None) -> None:
        """Set coordinates, rates and bristle states (None keeps the current value);
        resets the energy counters."""
        m = self.model
        x = self.x.copy()
        if q is not None:
            x[:m.nv] = alg._vec("q", q, m.nv)
        if qd is not None:
            x[m.nv:2 * m.nv] = alg._vec("qd", qd, m.nv)
        if z is not None:
            x[2 * m.nv:2 * m.nv + m.nz] = alg._vec("z", z, m.nz)
        if not np.all(np.isfinite(x)):
            raise ValueError("state contains NaN or inf")
        x[-2:] = 0.0
        self.x[:] = x
        if t is not None:
            self.t = float(t)

    def reset(self) -> None:
        """Back to the initial state of the description, t = 0, inputs zero."""
        self.x[:] = alg.state_vector(self.model, self.cm.q0, self.cm.qd0)
        self.t = 0.0
        self.tau_drive[:] = 0.0

    # ------------------------------------------------------------------ inputs
    def set_drive(self, values) -> None:
        """Driving torques/forces of the actuated coordinates (order of cm.actuated_dofs)."""
        a = np.asarray(values, dtype=float).reshape(-1)
        act = self.cm.actuated_dofs
        if a.shape != act.shape:
            raise ValueError(f"expected {act.size} drive value(s) for {[self.cm.dof_names[d] for d in act]}, "
                             f"got {a.size}")
        if not np.all(np.isfinite(a)):
            raise ValueError("drive values contain NaN or inf")
        self.tau_drive[act] = a

    # ------------------------------------------------------------------ stepping
    def step(self, dt: float) -> None:
        """Advance by dt seconds (see module docstring for the remainder rule)."""
        if not (isinstance(dt, (int, float, np.floating)) and math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"step size must be a finite number > 0 s (got {dt!r})")
        ratio = dt / self.h
        n = int(round(ratio))
        if abs(ratio - n) > 1e-9 * max(1.0, ratio):
            n = int(math.floor(ratio))
        rem = dt - n * self.h
        self._backup[:] = self.x
        ok = _int.rk4_steps(self._m, self._d, self.x, self.tau_drive, self.h, n)
        if ok and rem > 1e-9 * self.h:
            _int.rk4_step(self._m, self._d, self.x, self.tau_drive, rem)
            ok = bool(np.all(np.isfinite(self.x)))
        if not ok:
            self.x[:] = self._backup
            raise SimulationError(f"integration from t = {self.t:.6g} s over {dt:.6g} s produced a non-finite "
                                  "state; the state before the step is kept")
        self.t += dt

    def advance_to(self, t_end: float) -> None:
        if t_end > self.t:
            self.step(t_end - self.t)

    # ------------------------------------------------------------------ outputs
    def evaluate(self) -> np.ndarray:
        """Run the pipeline at the current state: fills q̈, reactions and friction in ``data``;
        returns ẋ."""
        state_derivative(self._m, self._d, self.x, self.tau_drive, self._xdot)
        return self._xdot

    @property
    def qdd(self) -> np.ndarray:
        return self.data.qdd

    def reaction(self, joint: str) -> tuple[np.ndarray, np.ndarray]:
        """(force, moment) the parent exerts on the child across ``joint``, in the joint
        frame (child frame at the joint origin), as of the last :meth:`evaluate`."""
        b = self.cm.joint(joint).body
        return self.data.fF[b].copy(), self.data.fM[b].copy()

    def friction(self, joint: str) -> tuple[float, float]:
        """(normal load L, friction torque/force t_f) of a revolute/prismatic joint, last evaluate."""
        d = self.cm.joint(joint).dofadr
        return float(self.data.fric_load[d]), float(self.data.tau_fric[d])

    def point(self, name: str) -> np.ndarray:
        """World position of a named point at the current state."""
        body, pos = self.cm.points[name]
        _kin.forward_kinematics(self._m, self._d, self.q, self.qd)
        return np.array(_kin.world_point(self._m, self._d, body, pos[0], pos[1], pos[2]))

    def support_forces(self) -> np.ndarray:
        """World forces (nsup, 3) of the exact supports on the base at the current state."""
        _kin.forward_kinematics(self._m, self._d, self.q, self.qd)
        _forces.support_forces(self._m, self._d, self._sup)
        return self._sup.copy()

    def energies(self) -> dict:
        """Kinetic, gravity, elastic, dissipated energy, input work, and the balance
        E_k + E_g + E_e + E_diss − W_in (J), constant in exact arithmetic."""
        out = np.zeros(3)
        _energy.energies(self._m, self._d, self.q, self.qd, out)
        e = {"kinetic": out[0], "gravity": out[1], "elastic": out[2],
             "dissipated": self.x[-2], "work_in": self.x[-1]}
        e["balance"] = e["kinetic"] + e["gravity"] + e["elastic"] + e["dissipated"] - e["work_in"]
        return e

    # ------------------------------------------------------------------ bookkeeping
    @property
    def friction_iterations(self) -> int:
        """Fixed-point iterations of the last friction ↔ reaction solve."""
        return int(self.data.fric_iters[0])

    @property
    def friction_failures(self) -> int:
        """Solves that hit the iteration cap since the instance was created."""
        return int(self.data.fric_fail[0])
