"""The exact Jacobians of a Simulator's pipeline and step map (kernels.jacobian, complex step).

:class:`ComplexStep` holds what one mechanism's complex-step evaluations need — a complex Data of
its Model and the work vectors — made once, then reused for every operating point. The kernels are
numba's (the complex specialisations are JIT-compiled on first use and cached on disk), whichever
backend the Simulator steps with: they run on the Simulator's own Model and read its Data (the
coordinate partition, run settings), writing only their own.

A rigid tree (kernels.tree_derivatives.plain_tree: no constraint rows, no exact supports, no body forces; joint
friction of any law and load, bristle states, springs, stops and a linearized base allowed) with only coordinates
and rates as outputs gets A and B from the analytical derivatives of its inverse dynamics and of the friction
joints' reactions instead (kernels.tree_derivatives: one pass, not one evaluation per column; equal to the complex
step to round-off, tests/linearization/test_jacobians.py). Where the friction loop finds no solution at the state
(a self-locking joint) the complex step answers; ``path`` tells which one did.
"""
from __future__ import annotations

import numpy as np

from ..codes import OutputKind, Scheme
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
        from ..kernels import tree_derivatives
        self._tree = tree_derivatives if tree_derivatives.plain_tree(self._m) else None
        if self._tree is not None:                  # the analytical path's work: a real Data and arrays
            self._dr = data_struct(make_data(m))
            nf = m.fric_dofs.shape[0]
            self._work = (np.zeros((8, m.nbody, 6)), np.zeros((m.nbody, 13)), np.zeros(m.nbody, np.int64),
                          np.zeros((6, m.nv, m.nv)), np.zeros(m.nv), np.zeros((3, nf, 6)), np.zeros((3, nf, m.nv)),
                          np.zeros(m.nv, np.int64))
            self._xdot = np.zeros(m.nx)
        self._specs = {}                            # sources -> (spec table, only coordinates and rates)
        self._every, self._checked = np.arange(m.nv, dtype=np.int64), set()
        self.path = None                            # the path the last continuous() took: "tree" or "complex"

    def _inputs(self, inputs) -> np.ndarray:
        """:func:`_inputs`, the checks of an index set seen before not done again (a linearization along a run
        asks with the same inputs at every point)."""
        if inputs is None:
            return self._every
        ins = np.ascontiguousarray(inputs, dtype=np.int64)
        key = ins.tobytes() if ins.ndim == 1 else None
        if key not in self._checked:
            ins = _inputs(ins, self.sim.model.nv)
            self._checked.add(key)
        return ins

    def _spec(self, sources) -> tuple:
        """((kind, a, b, f) of fmu_mb.outputs.spec_table, whether every output is a coordinate or a rate)."""
        key = tuple(sources)
        try:
            return self._specs[key]
        except KeyError:
            pass
        except TypeError:                            # (an unhashable source: not kept)
            key = None
        kind, a, b, f = spec_table(self.sim.cm, list(sources))
        spec = (kind, a, b, f), bool(np.all((kind == OutputKind.Q) | (kind == OutputKind.QD)))
        if key is not None:
            self._specs[key] = spec
        return spec

    def continuous(self, x, t: float, tau, sources=(), inputs=None) -> tuple:
        """(A, B, C, D): ∂ẋ/∂x (nx, nx), ∂ẋ/∂τ (nx, ni), ∂y/∂x (ny, nx), ∂y/∂τ (ny, ni) at state x, time t
        and driving forces τ (nv,); ``inputs`` the coordinates whose drive is an input (default every
        coordinate), y the catalogue outputs ``sources`` (fmu_mb.outputs). Energy columns are zero."""
        m = self.sim.model
        ins = self._inputs(inputs)
        (kind, a, b, f), states_only = self._spec(sources)
        ny = len(kind)
        A, B = np.zeros((m.nx, m.nx)), np.zeros((m.nx, ins.size))
        C, D = np.zeros((ny, m.nx)), np.zeros((ny, ins.size))
        self.path = "complex"
        if self._tree is not None and states_only:
            if self._tree.tree_jacobian(self._m, self._d, self._dr, _vec(x, m.nx), _vec(tau, m.nv), ins, self._xdot,
                                        A, B, *self._work):
                if ny:
                    C[np.arange(ny), a + m.nv * (kind == OutputKind.QD)] = 1.0     # y = x[a] or x[nv + a]
                self.path = "tree"
                return A, B, C, D
        vr = np.arange(ny, dtype=np.int64)
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
