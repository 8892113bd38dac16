"""The exact Jacobians of a Simulator's pipeline and step map (kernels.jacobian, complex step).

:class:`ComplexStep` holds what one mechanism's complex-step evaluations need — a complex Data of
its Model and the work vectors — made once, then reused for every operating point. The kernels are
numba's (the complex specialisations are JIT-compiled on first use and cached on disk), whichever
backend the Simulator steps with: they run on the Simulator's own Model and read its Data (the
coordinate partition, run settings), writing only their own.
"""
from __future__ import annotations

import numpy as np

from ..codes import Scheme
from ..kernels.handles import data_struct, model_struct
from ..model.compiled import make_data
from ..outputs import spec_table


class ComplexStep:
    """Jacobians of ``sim``'s mechanism at states the caller gives (see the methods)."""

    def __init__(self, sim):
        from ..kernels import jacobian
        self._k = jacobian
        self.sim = sim
        m = sim.model
        self._m = model_struct(m)
        self._d = data_struct(sim.data)
        self.cdata = make_data(m, complex_step=True)
        self._dc = data_struct(self.cdata)
        self._xc = np.zeros(m.nx, complex)
        self._tc = np.zeros(m.nv, complex)
        self._fc = np.zeros(m.nx, complex)
        self._qc = np.zeros(m.nv, complex)
        self._vc = np.zeros(m.nv, complex)

    def continuous(self, x, t: float, tau, sources=(), inputs=None) -> tuple:
        """(A, B, C, D): ∂ẋ/∂x (nx, nx), ∂ẋ/∂τ (nx, ni), ∂y/∂x (ny, nx), ∂y/∂τ (ny, ni) at state x, time t
        and driving forces τ (nv,); ``inputs`` the coordinates whose drive is an input (default every
        coordinate), y the catalogue outputs ``sources`` (fmu_mb.outputs). Energy columns are zero."""
        m = self.sim.model
        ins = _inputs(inputs, m.nv)
        kind, a, b, f = spec_table(self.sim.cm, list(sources))
        ny = len(kind)
        vr = np.arange(ny, dtype=np.int64)
        A, B = np.zeros((m.nx, m.nx)), np.zeros((m.nx, ins.size))
        C, D = np.zeros((ny, m.nx)), np.zeros((ny, ins.size))
        self._k.derivative_jacobian(self._m, self._d, self._dc, _vec(x, m.nx), float(t), _vec(tau, m.nv), ins,
                                    vr, kind, a, b, f, self._xc, self._tc, self._fc, np.zeros(ny, complex),
                                    A, B, C, D)
        return A, B, C, D

    def step(self, x, t: float, tau, h: float, dt: float, scheme: Scheme, inputs=None) -> tuple:
        """(Ad, Bd): ∂x⁺/∂x, ∂x⁺/∂τ (inputs as for :meth:`continuous`) of one communication step of
        length dt at the internal step h with ``scheme`` — what the co-simulation FMU does.
        RuntimeError if a step is refused."""
        m = self.sim.model
        ins = _inputs(inputs, m.nv)
        Ad, Bd = np.zeros((m.nx, m.nx)), np.zeros((m.nx, ins.size))
        ok = self._k.step_jacobian(self._m, self._d, self._dc, _vec(x, m.nx), float(t), _vec(tau, m.nv), ins,
                                   float(h), float(dt), int(scheme), self._xc, self._tc, np.zeros(m.nx, complex),
                                   Ad, Bd)
        if not ok:
            raise RuntimeError(f"the step of {dt:g} s from t = {t:g} s produced a non-finite state: no step map")
        return Ad, Bd

    def constraint_rates(self, x, t: float, directions) -> np.ndarray:
        """∂Φ̇/∂q · directions (nc, k) at state x, the rates held (kernels.jacobian)."""
        m = self.sim.model
        dirs = np.ascontiguousarray(directions, dtype=float)
        out = np.zeros((m.nc, dirs.shape[1]))
        self._k.constraint_rate_jacobian(self._m, self._d, self._dc, _vec(x, m.nx), float(t), dirs, self._qc,
                                         self._vc, out)
        return out


def _inputs(inputs, nv: int) -> np.ndarray:
    ins = np.arange(nv, dtype=np.int64) if inputs is None else np.ascontiguousarray(inputs, dtype=np.int64)
    if ins.ndim != 1 or (ins.size and (ins.min() < 0 or ins.max() >= nv)):
        raise ValueError(f"inputs must be coordinate indices in [0, {nv})")
    return ins


def _vec(x, n: int) -> np.ndarray:
    a = np.ascontiguousarray(x, dtype=float)
    if a.shape != (n,):
        raise ValueError(f"expected a vector of {n} values, got shape {a.shape}")
    return a
