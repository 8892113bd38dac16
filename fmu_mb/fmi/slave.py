"""The generic mechanism slave: one class for every model file, driven by its interface table.

A generated FMU script subclasses :class:`MechanismSlave` setting ``MODEL_NAME``,
``MODEL_FILE`` and ``INTERFACE_DIGEST``; everything else comes from the model
file and :mod:`fmu_mb.fmi.interface`. The FMI behaviour (call order, checks,
errors, FMU state) is :class:`~fmu_mb.fmi.table_slave.TableSlave`'s.

Stepping: fmi2DoStep(t, h) integrates [t, t+h] with RK4 at the fixed internal
step ``solver.step_size``; a remainder shorter than that step is integrated by
one final shorter RK4 step, exactly to the step's end (``Simulator.step``).
Inputs are held constant over the communication step (zero-order hold).
Outputs are evaluated at the end of the step with those inputs, so no output
depends directly on an input set afterwards (``dependencies=""`` in the model
description). A step that makes the state non-finite is undone (fmi2Error; the
state and outputs at t are kept). A communication step needing more than
``solver.max_steps_per_call`` internal steps is refused rather than blocking
the host.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .. import registry
from ..kernels import energy as _energy
from ..kernels import forces as _forces
from ..model import options as opt
from ..model.compile import compile_mechanism
from ..simulator import SimulationError, Simulator
from ..statics import static_equilibrium
from .interface import build_interface
from .table_slave import TableSlave


class MechanismSlave(TableSlave):
    """Generic mechanism FMU. Subclasses set MODEL_NAME (and MODEL_FILE inside FMUs)."""

    MODEL_NAME: str = ""
    MODEL_FILE: str | None = None          # model file path; None: fmu_mb.registry's models/

    def _load_model(self):
        """The model file of this instance: the one in its own resources, else MODEL_FILE,
        else fmu_mb.registry's models/ directory."""
        if self.resources:
            own = Path(self.resources) / "models" / f"{self.MODEL_NAME}.py"
            if own.is_file():
                return registry.load_file(own, self.MODEL_NAME)
        if self.MODEL_FILE and Path(self.MODEL_FILE).is_file():
            return registry.load_file(self.MODEL_FILE, self.MODEL_NAME)
        return registry.load(self.MODEL_NAME)

    def _make_interface(self):
        self._module = self._load_model()
        self._meta = getattr(self._module, "FMU", {})
        self.description = (self._module.__doc__ or self.MODEL_NAME).strip().splitlines()[0]
        self._reference = compile_mechanism(self._module.build())
        self._sim = None
        itf = build_interface(self.MODEL_NAME, self._module, self._reference, self._meta.get("step_size", 1e-3),
                              self._meta.get("static_start", False))
        self._input_dofs = np.array([v.source[1] for v in itf.vars if v.causality == "input"], dtype=np.int64)
        return itf

    # ------------------------------------------------------------------ building
    def _settings(self) -> tuple[dict, dict, list]:
        """(model options, solver/initial settings) from the parameter values, and error messages."""
        errors, kwargs, settings = [], {}, {}
        options = getattr(self._module, "OPTIONS", {})
        for i in self._params:
            v = self._itf.vars[i]
            val = self._values[i]
            try:
                if v.source[0] == "option":
                    o = options[v.source[1]]
                    if isinstance(o, opt.Choice) and not float(val).is_integer():
                        raise ValueError(f"parameter '{v.name}' must be an integer code (got {val})")
                    kwargs[v.source[1]] = o.check(v.name, int(val) if isinstance(o, (opt.Choice, opt.Flag)) else val)
                elif v.min is not None and not (v.min <= val <= v.max):
                    raise ValueError(f"parameter '{v.name}' must lie in [{v.min:g}, {v.max:g}]"
                                     f"{' ' + v.unit if v.unit else ''} (got {val:g})")
                else:
                    settings[tuple(v.source)] = val
            except ValueError as exc:
                errors.append(str(exc))
        return kwargs, settings, errors

    def _build(self) -> bool:
        kwargs, s, errors = self._settings()
        for e in errors:
            self._error("invalid parameter: " + e)
        if errors:
            return False
        mech = self._module.build(**kwargs)
        mech.gravity = tuple(s[("gravity", k)] for k in range(3))
        try:
            cm = compile_mechanism(mech)
        except ValueError as exc:
            self._error(f"the parameters give an invalid mechanism: {exc}")
            return False
        ref = self._reference
        if [(j.name, j.kind, j.actuated, j.dofadr) for j in cm.joints] != \
                [(j.name, j.kind, j.actuated, j.dofadr) for j in ref.joints] or list(cm.points) != list(ref.points) \
                or cm.model.sup_body.shape != ref.model.sup_body.shape:
            self._error("the model options change the joints, points or supports of the mechanism, which the "
                        "FMU interface cannot follow; this is a defect of the model file")
            return False
        q0, qd0 = np.array(cm.q0), np.array(cm.qd0)
        for i in self._params:
            kind, *args = self._itf.vars[i].source
            if kind == "q_start":
                q0[args[0]] = self._values[i]
            elif kind == "qd_start":
                qd0[args[0]] = self._values[i]
        if s[("init", "static")]:
            try:
                q0 = static_equilibrium(cm, q=q0).q
            except RuntimeError as exc:
                self._error(f"init.static: {exc}")
                return False
        sim = Simulator(cm, step_size=s[("solver", "step_size")])
        sim.set_state(q=q0, qd=qd0, t=self._t)
        self._sim = sim
        self._max_steps = int(s[("solver", "max_steps_per_call")])
        self._prepare_outputs()
        return True

    def _prepare_outputs(self) -> None:
        sim, vars_ = self._sim, self._itf.vars
        groups = {}
        for i in self._itf.of("output"):
            kind, *args = vars_[i].source
            groups.setdefault(kind, []).append((i, *args))
        self._out = {k: [np.array(c) if np.asarray(c).dtype.kind in "iu" else list(c) for c in zip(*v)]
                     for k, v in groups.items()}
        self._sup = np.zeros((sim.model.sup_body.shape[0], 3))
        self._energy = np.zeros(3)
        self._beams = {b.name: b for b in sim.cm.beams}
        self._fails0 = sim.friction_failures

    # ------------------------------------------------------------------ runtime
    def _advance(self, t, h) -> bool:
        sim = self._sim
        nsteps = math.ceil(h / sim.h - 1e-9)
        if nsteps > self._max_steps:
            self._error(f"fmi2DoStep: a step of {h:g} s needs {nsteps} internal steps of {sim.h:g} s, more than "
                        f"solver.max_steps_per_call = {self._max_steps}")
            return False
        sim.tau_drive[:] = 0.0
        sim.tau_drive[self._input_dofs] = self._values[self._inputs]
        fails = sim.friction_failures
        try:
            sim.step(h)
        except SimulationError as exc:
            self._error(f"fmi2DoStep at t = {t:g} s: {exc}; outputs and state of t = {t:g} s are kept")
            return False
        sim.t = t + h
        if sim.friction_failures > fails:
            self._warn(f"fmi2DoStep at t = {t:g} s: the friction/reaction loop did not converge in "
                       f"{sim.friction_failures - fails} evaluation(s) (a self-locking joint?); the least-residual "
                       "friction torques were applied")
        return True

    def _refresh(self) -> None:
        """Evaluate the pipeline at the current state and copy every output into self._values."""
        sim, vals, out = self._sim, self._values, self._out
        sim.evaluate()
        d, m, x, nv = sim.data, sim.model, sim.x, sim.nv
        if "q" in out:
            idx, dof = out["q"]
            vals[idx] = x[dof]
        if "qd" in out:
            idx, dof = out["qd"]
            vals[idx] = x[nv + dof]
        for key, arr in (("F", d.fF), ("M", d.fM)):
            if key in out:
                idx, body, comp = out[key]
                vals[idx] = arr[body, comp]
        if "F_normal" in out:
            idx, body = out["F_normal"]
            F, a = d.fF[body], m.body_axis[body]
            vals[idx] = np.linalg.norm(F - np.sum(F * a, axis=1)[:, None] * a, axis=1)
        for key, arr in (("friction_load", d.fric_load), ("tau_friction", d.tau_fric)):
            if key in out:
                idx, dof = out[key]
                vals[idx] = arr[dof]
        if "support" in out:
            _forces.support_forces(sim._m, sim._d, self._sup)
            idx, s, k = out["support"]
            vals[idx] = self._sup[s, k]
        if "point" in out:
            for i, name, k in zip(*out["point"]):
                b, pos = sim.cm.points[name]
                vals[i] = d.op[b, k] + d.oR[b, k] @ pos
        if "deflection" in out:
            for i, name, k in zip(*out["deflection"]):
                info = self._beams.get(name)
                if info is None:                        # the link is rigid with these options
                    vals[i] = 0.0
                    continue
                b0, bl = info.rfe_bodies[0], info.rfe_bodies[-1]
                tip = d.op[bl] + d.oR[bl] @ np.array([info.length - info.rfe_start[-1], 0.0, 0.0])
                vals[i] = (d.oR[b0].T @ (tip - d.op[b0]))[k] - (info.length if k == 0 else 0.0)
        if "energy" in out:
            _energy.energies(sim._m, sim._d, sim.q, sim.qd, self._energy)
            e = {"kinetic": self._energy[0], "potential": self._energy[1] + self._energy[2],
                 "dissipated": x[-2], "work_in": x[-1]}
            for i, key in zip(*out["energy"]):
                vals[i] = e[key]
        if "solver" in out:
            s = {"friction_iterations": d.fric_iters[0], "friction_failures": sim.friction_failures - self._fails0}
            for i, key in zip(*out["solver"]):
                vals[i] = s[key]

    def _state(self):
        return self._sim.x.copy(), self._sim.friction_failures - self._fails0

    def _restore(self, x, counter) -> bool:
        if x.size != self._sim.x.size:
            self._error(f"FMU state has a state vector of {x.size} values, the model has {self._sim.x.size}")
            return False
        self._sim.x[:] = x
        self._sim.t = self._t
        self._fails0 = self._sim.friction_failures - counter
        return True
