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
description). A step that makes the state or an output non-finite, or leaves a
constraint violated by more than ``solver.max_violation``, is undone (fmi2Error naming
the output or the constraint; the state and outputs at t are kept). A communication
step needing more than ``solver.max_steps_per_call`` internal steps is refused rather
than blocking the host.

Every variable names what it reads or writes (joint, point, force, constraint, beam);
:meth:`MechanismSlave._build` resolves those names in the mechanism the parameters build,
whose coordinate and body indices differ between option values (a flexible link inserts
RFEM coordinates), so every option combination starts.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .. import registry
from ..backend import backend_override, process_kernel_set
from ..model import options as opt
from ..model.compile import compile_mechanism
from ..outputs import spec_table
from ..simulator import METHODS, SimulationError, Simulator
from ..stability import rk4_step_limit
from .interface import (
    COORDINATE_LIMIT,
    INTERFACE_FILE,
    RATE_LIMIT,
    Interface,
    build_interface,
)
from .table_slave import TableSlave


class MechanismSlave(TableSlave):
    """Generic mechanism FMU. Subclasses set MODEL_NAME (and MODEL_FILE inside FMUs)."""

    MODEL_NAME: str = ""
    MODEL_FILE: str | None = None          # model file path; None: fmu_mb.registry's models/
    NATIVE_DIR: str | None = None          # the FMU's native kernels (fmu_mb.native), tried after the core's own

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
        self._sim = None
        table = Path(self.resources or "") / INTERFACE_FILE        # written by the builder (fmi.builder)
        if self.resources and table.is_file():
            itf = Interface.from_json(table.read_text(encoding="utf-8"))
        else:                                                      # a slave outside an FMU (tests)
            itf = build_interface(self.MODEL_NAME, self._module, compile_mechanism(self._module.build()),
                                  self._meta.get("step_size", 1e-3), self._meta.get("static_start", False),
                                  self._meta.get("method", "rk4"))
        inputs = [(i, v) for i, v in enumerate(itf.vars) if v.causality == "input"]
        self._drive_vr = np.array([i for i, v in inputs if v.source[0] == "tau_drive"], dtype=np.int64)
        self._traj_inputs = [(i, v.source[1], v.source[2], v.name) for i, v in inputs if v.source[0] == "traj"]
        self._force_vr = np.array([i for i, v in inputs if v.source[0] == "body_force"], dtype=np.int64)
        self._violation_vr = np.array([i for i, v in enumerate(itf.vars)
                                       if v.source[0] in ("con_violation", "con_violation_angle")], dtype=np.int64)
        self._n_supports = len({v.source[1] for v in itf.vars if v.source[0] == "support"})
        return itf

    def _resolve(self, cm) -> str | None:
        """Indices of the named inputs and start values in the compiled mechanism ``cm`` (the
        variant the parameters build); the reason if the interface does not fit it."""
        vars_ = self._itf.vars
        try:
            self._input_dofs = np.array([self._dof(cm, *vars_[i].source[1:]) for i in self._drive_vr], np.int64)
            names = [f.name for f in cm.mechanism.forces]
            self._force_idx = np.array([names.index(vars_[i].source[1]) for i in self._force_vr], np.int64)
            self._start_dofs = [(i, vars_[i].source[0], self._dof(cm, *vars_[i].source[1:])) for i in self._params
                                if vars_[i].source[0] in ("q_start", "qd_start")]
        except (KeyError, ValueError) as exc:
            return str(exc)
        if len(cm.mechanism.supports) != self._n_supports:
            return f"the mechanism has {len(cm.mechanism.supports)} supports, the interface {self._n_supports}"
        return None

    @staticmethod
    def _dof(cm, joint: str, k: int = 0) -> int:
        j = cm.joint(joint)
        if k >= j.ndof:
            raise KeyError(f"joint '{joint}' has {j.ndof} coordinate(s)")
        return j.dofadr + k

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
                elif why := self._out_of_range(v, val):
                    raise ValueError(f"parameter {why}")
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
        known = {v.source[1] for v in self._itf.vars if v.source[0] in ("con_violation",)}
        extra = [c.name for c in cm.constraints if c.name not in known]
        why = self._resolve(cm)
        if extra or why:
            self._error("these model options build a mechanism the FMU interface does not describe ("
                        f"{why or f'constraints {extra} are not in it'}); this is a defect of the model file")
            return False
        q0, qd0 = np.array(cm.q0), np.array(cm.qd0)
        for i, kind, dof in self._start_dofs:
            (q0 if kind == "q_start" else qd0)[dof] = self._values[i]
        solver = {}
        if ("solver", "alpha") in s:
            solver = dict(alpha=float(s[("solver", "alpha")]), beta=float(s[("solver", "beta")]),
                          projection=bool(s[("solver", "projection")]))
        try:
            kernels, note = process_kernel_set(backend_override("auto"),
                                               (self.NATIVE_DIR,) if self.NATIVE_DIR else ())
        except (ValueError, RuntimeError) as exc:     # bad FMU_MB_BACKEND; native asked for, none loads
            self._error(str(exc))
            return False
        method = list(METHODS)[int(s[("solver", "integrator")])]
        sim = Simulator(cm, step_size=s[("solver", "step_size")], assemble=False, kernels=kernels, method=method,
                        **solver)
        note = f" ({note})" if note else ""
        self._debug(f"kernels: {kernels.description}{note}")
        self._traj_applied = {}
        if not self._apply_trajectories(sim, "fmi2ExitInitializationMode"):
            return False
        try:
            sim.initialize(q0, qd0, t=self._t, static=bool(s[("init", "static")]),
                           assemble=bool(s.get(("init", "assemble"), True)))
        except RuntimeError as exc:
            self._error(f"initialization (init.static / init.assemble): {exc}")
            return False
        sim.hold_inputs(self._input_dofs, self._values[self._drive_vr],    # initial outputs see the inputs set
                        self._force_idx, self._values[self._force_vr])
        limit = rk4_step_limit(sim) if method == "rk4" else None     # ros2: L-stable in the stiff forces
        if limit is not None and sim.h > limit.h_max * (1.0 + 1e-9):
            lam = limit.eigenvalue
            advice = float(f"{0.9 * limit.h_max:.2g}")
            self._error(f"solver.step_size = {sim.h:g} s is above the stability limit of explicit RK4 for these "
                        f"options at the start: the stiffest mode (eigenvalue {lam.real:.4g} {lam.imag:+.4g}i 1/s) "
                        f"allows h <= {limit.h_max:.3g} s; set solver.step_size <= {advice:g} s")
            return False
        self._sim = sim
        self._max_steps = int(s[("solver", "max_steps_per_call")])
        self._max_violation = float(s.get(("solver", "max_violation"), np.inf))
        self._prepare_outputs()
        return True

    def _apply_trajectories(self, sim, where: str, force: bool = False) -> bool:
        """Write changed trajectory-parameter inputs into the simulator's trajectories."""
        names = {t.name for t in sim.trajectories}
        changes = {}
        for i, tname, pname, vname in self._traj_inputs:
            val = float(self._values[i])
            if tname in names and (force or self._traj_applied.get((tname, pname)) != val):
                changes.setdefault(tname, {})[pname] = (val, vname)
        for tname, params in changes.items():
            try:
                sim.set_trajectory(tname, **{p: v for p, (v, _) in params.items()})
            except (ValueError, KeyError) as exc:
                self._error(f"{where}: invalid trajectory input ({', '.join(n for _, n in params.values())}): {exc}; "
                            "the previous values are kept")
                for i, tn, pn, _ in self._traj_inputs:       # show the values in force again
                    if tn == tname and (tn, pn) in self._traj_applied:
                        self._values[i] = self._traj_applied[(tn, pn)]
                return False
            for p, (v, _) in params.items():
                self._traj_applied[(tname, p)] = v
        return True

    def _prepare_outputs(self) -> None:
        """The output spec table of kernels.outputs.gather_outputs_* (one row per output), from the
        output catalogue (fmu_mb.outputs.spec_row) in the mechanism the parameters built."""
        outputs = self._itf.of("output")
        self._spec_vr = np.array(outputs, dtype=np.int64)
        self._spec_kind, self._spec_a, self._spec_b, self._spec_f = spec_table(
            self._sim.cm, [self._itf.vars[i].source for i in outputs])
        self._xdot = np.zeros(self._sim.model.nx)

    # ------------------------------------------------------------------ runtime
    def _advance(self, t, h) -> bool:
        sim = self._sim
        nsteps = math.ceil(h / sim.h - 1e-9)
        if nsteps > self._max_steps:
            self._error(f"fmi2DoStep: a step of {h:g} s needs {nsteps} internal steps of {sim.h:g} s, more than "
                        f"solver.max_steps_per_call = {self._max_steps}")
            return False
        if not self._apply_trajectories(sim, f"fmi2DoStep at t = {t:g} s"):
            return False
        sim.hold_inputs(self._input_dofs, self._values[self._drive_vr], self._force_idx, self._values[self._force_vr])
        fails = sim.friction_failures
        try:
            sim.step(h, t)
        except SimulationError as exc:
            cause = self._violation_at_start(t)
            hint = (f"the likely cause: {cause}" if cause else
                    f"explicit RK4 at solver.step_size = {sim.h:g} s may be unstable here: LuGre bristles, RFEM "
                    "links and stiff supports need small steps; a smaller step, solver.integrator = 1 (ROS2) or "
                    "other inputs may pass" if sim.method == "rk4" else
                    f"{sim.method} at solver.step_size = {sim.h:g} s linearises only the stiff forces and may "
                    "lose stability where friction couples them strongly (LuGre with flexible links); a smaller "
                    "step, " + ("solver.integrator = 1 (ros2, the damped and more robust γ), "
                                if sim.method in ("ros2_lowdamp", "ros34pw2") else "") +
                    "or solver.integrator = 0 (RK4) at a step small enough for the stiffest detail may pass")
            self._error(f"fmi2DoStep at t = {t:g} s: {exc}; outputs and state of t = {t:g} s are kept ({hint})")
            return False
        if sim.friction_failures > fails:
            self._warn(f"fmi2DoStep at t = {t:g} s: the friction/reaction loop did not converge in "
                       f"{sim.friction_failures - fails} evaluation(s) (a self-locking joint?); the least-residual "
                       "friction torques were applied")
        return True

    def _refresh(self) -> None:
        """Evaluate the pipeline at the current state and copy every output into self._values
        (one kernel call, kernels.outputs.gather_outputs_*)."""
        sim = self._sim
        sim.gather(self._xdot, self._spec_vr, self._spec_kind, self._spec_a, self._spec_b, self._spec_f,
                   self._values)

    def _revert(self, snap) -> None:
        self._sim.undo_step()
        super()._revert(snap)

    def _result_problem(self, where: str) -> str | None:
        """Non-finite outputs (TableSlave), then the constraint violation bound."""
        problem = super()._result_problem(where)
        if problem or not self._violation_vr.size:
            return problem
        v = self._values[self._violation_vr]
        k = int(np.argmax(v))
        if v[k] <= self._max_violation:
            return None
        var = self._itf.vars[self._violation_vr[k]]
        name, unit = var.source[1], var.unit or ""
        info = self._sim.cm.constraint(name)
        amount = f"{v[k]:.4g} {unit}".strip()
        if info.type == "PointOnEllipse":
            amount += " (first-order distance |Φ|/|∇Φ|, exact only near the ellipse)"
        bound = f"solver.max_violation = {self._max_violation:g}"
        if info.group == "programmed":
            point = self._point_name(info)
            who = f"point {point} is {amount} away from it" if point else f"it is violated by {amount}"
            return (f"{where}: the programmed motion '{name}' cannot be followed: {who} at t = {self._t:g} s, more "
                    f"than {bound} (is the path out of reach, or traversed too fast?)")
        return (f"{where}: constraint '{name}' ({info.group}) is violated by {amount} at t = {self._t:g} s, more "
                f"than {bound}")

    def _violation_at_start(self, t: float) -> str | None:
        """After a failed step: the constraint violation bound broken already at its start, with the
        trajectory inputs it applied (a target moved out of reach), or None. Outputs are untouched."""
        if not self._violation_vr.size:
            return None
        kept, t_kept = self._values[self._outputs].copy(), self._t
        try:
            self._t = t
            self._refresh()
            return self._result_problem(f"at t = {t:g} s")
        finally:
            self._values[self._outputs], self._t = kept, t_kept

    def _point_name(self, info) -> str | None:
        """The named point a point constraint acts on (for messages), if there is one."""
        c, cm = info.constraint, self._sim.cm
        point, link = getattr(c, "point", None), getattr(c, "link", None)
        if point is None or link not in cm.link_body:
            return None
        for pname, (body, pos) in cm.points.items():
            if body == cm.link_body[link] and np.allclose(pos, point, rtol=0, atol=1e-12):
                return pname
        return None

    def _state(self):
        """The Simulator's state record (x, coordinate partition, relative-constraint offsets,
        partition count) and its friction-failure count."""
        return self._sim.state_record()

    def _restore(self, x, counter) -> None:
        """Simulator.restore_record (checks everything before it writes anything: sizes, finite values,
        coordinates and rates within the start values' ranges, a valid partition); then the trajectory
        inputs of the restored values."""
        self._sim.restore_record(x, counter, self._t, COORDINATE_LIMIT, RATE_LIMIT)
        self._traj_applied = {}
        if not self._apply_trajectories(self._sim, "fmi2SetFMUstate", force=True):
            raise ValueError("its trajectory inputs are invalid")
