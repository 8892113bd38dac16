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
from ..backend import backend_override, process_kernel_set
from ..kernels import codes as K
from ..model import options as opt
from ..model.compile import compile_mechanism
from ..simulator import SimulationError, Simulator
from .interface import build_interface
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
        self._reference = compile_mechanism(self._module.build())
        self._sim = None
        itf = build_interface(self.MODEL_NAME, self._module, self._reference, self._meta.get("step_size", 1e-3),
                              self._meta.get("static_start", False))
        inputs = [(i, v) for i, v in enumerate(itf.vars) if v.causality == "input"]
        self._drive_vr = np.array([i for i, v in inputs if v.source[0] == "tau_drive"], dtype=np.int64)
        self._input_dofs = np.array([v.source[1] for i, v in inputs if v.source[0] == "tau_drive"], dtype=np.int64)
        self._traj_inputs = [(i, v.source[1], v.source[2], v.name) for i, v in inputs if v.source[0] == "traj"]
        self._force_vr = np.array([i for i, v in inputs if v.source[0] == "body_force"], dtype=np.int64)
        self._force_idx = np.array([v.source[1] for i, v in inputs if v.source[0] == "body_force"], dtype=np.int64)
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
        known = {v.source[1] for v in self._itf.vars if v.source[0] in ("con_violation",)}
        extra = [c.name for c in cm.constraints if c.name not in known]
        if extra:
            self._error(f"the model options add constraints {extra} the FMU interface does not have; this is a "
                        "defect of the model file")
            return False
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
        sim = Simulator(cm, step_size=s[("solver", "step_size")], assemble=False, kernels=kernels, **solver)
        note = f" ({note})" if note else ""
        self.log(f"[{self.modelName}] kernels: {kernels.description}{note}", category="logAll")
        self._traj_applied = {}
        if not self._apply_trajectories(sim, "fmi2ExitInitializationMode"):
            return False
        try:
            sim.initialize(q0, qd0, t=self._t, static=bool(s[("init", "static")]),
                           assemble=bool(s.get(("init", "assemble"), True)))
        except RuntimeError as exc:
            self._error(f"initialization (init.static / init.assemble): {exc}")
            return False
        sim.tau_drive[self._input_dofs] = self._values[self._drive_vr]   # initial outputs see the inputs set so far
        sim.body_force[self._force_idx] = self._values[self._force_vr]
        self._sim = sim
        self._max_steps = int(s[("solver", "max_steps_per_call")])
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
        """The output spec table of kernels.outputs.gather_outputs_* (one row per output)."""
        sim, vars_ = self._sim, self._itf.vars
        cobj = {c.name: i for i, c in enumerate(sim.cm.constraints)}
        beams = {b.name: b for b in sim.cm.beams}
        codes = {"q": K.Q, "qd": K.QD, "F": K.F, "M": K.M, "F_normal": K.FN, "friction_load": K.FL,
                 "tau_friction": K.TF, "support": K.SUP, "point": K.PT, "deflection": K.DEF}
        energy = {"kinetic": K.EK, "potential": K.EP, "dissipated": K.ED, "work_in": K.EW,
                  "work_constraints": K.EC}
        rows = []
        for i in self._itf.of("output"):
            kind, *args = vars_[i].source
            f = (0.0, 0.0, 0.0)
            if kind in ("q", "qd", "friction_load", "tau_friction", "F_normal"):
                code, a, b = codes[kind], args[0], 0
            elif kind in ("F", "M", "support"):
                code, a, b = codes[kind], args[0], args[1]
            elif kind == "point":
                body, pos = sim.cm.points[args[0]]
                code, a, b, f = K.PT, body, args[1], tuple(pos)
            elif kind == "deflection":
                info = beams.get(args[0])
                if info is None:                                  # the link is rigid with these options
                    code, a, b = K.DEF, -1, args[1]
                else:
                    code, a, b = K.DEF, info.rfe_bodies[0], args[1]
                    f = (info.rfe_bodies[-1], info.length - info.rfe_start[-1], info.length)
            elif kind == "energy":
                code, a, b = energy[args[0]], 0, 0
            elif kind == "tau_required":
                code, a, b = K.TRQ, args[0], 0
            elif kind == "con_lambda":
                ci = cobj.get(args[0])
                code, a, b = K.LAM, (sim.cm.constraints[ci].rows[args[1]] if ci is not None else -1), 0
            elif kind in ("con_force", "con_moment"):
                code, a, b = (K.CF if kind == "con_force" else K.CMO), cobj.get(args[0], -1), args[1]
            elif kind in ("con_violation", "con_violation_angle"):
                code, a, b = (K.CV if kind == "con_violation" else K.CVA), cobj.get(args[0], -1), 0
            elif kind == "unique_joint":
                code, a, b = K.UQJ, args[0], 0
            elif kind == "unique_con":
                code, a, b = K.UQC, cobj.get(args[0], -1), 0
            elif kind == "constraint":
                code, a, b = (K.RANK if args[0] == "rank" else K.RED), 0, 0
            elif args[0] == "repartitions":
                code, a, b = K.REP, 0, 0
            else:
                code, a, b = (K.IT, 0, 0) if args[0] == "friction_iterations" else (K.FF, 0, 0)
            rows.append((i, code, a, b, f))
        self._spec_vr = np.array([r[0] for r in rows], dtype=np.int64)
        self._spec_kind = np.array([r[1] for r in rows], dtype=np.int64)
        self._spec_a = np.array([r[2] for r in rows], dtype=np.int64)
        self._spec_b = np.array([r[3] for r in rows], dtype=np.int64)
        self._spec_f = np.array([r[4] for r in rows], dtype=float).reshape(-1, 3)
        self._ff_rows = np.flatnonzero(self._spec_kind == K.FF)
        self._spec_b[self._ff_rows] = sim.friction_failures
        self._xdot = np.zeros(sim.model.nx)

    # ------------------------------------------------------------------ runtime
    def _advance(self, t, h) -> bool:
        sim = self._sim
        nsteps = math.ceil(h / sim.h - 1e-9)
        if nsteps > self._max_steps:
            self._error(f"fmi2DoStep: a step of {h:g} s needs {nsteps} internal steps of {sim.h:g} s, more than "
                        f"solver.max_steps_per_call = {self._max_steps}")
            return False
        sim.t = t
        if not self._apply_trajectories(sim, f"fmi2DoStep at t = {t:g} s"):
            return False
        sim.tau_drive[:] = 0.0
        sim.tau_drive[self._input_dofs] = self._values[self._drive_vr]
        sim.body_force[self._force_idx] = self._values[self._force_vr]
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
        """Evaluate the pipeline at the current state and copy every output into self._values
        (one kernel call, kernels.outputs.gather_outputs_*)."""
        sim = self._sim
        sim.t = self._t                       # the FMU's time is authoritative (e.g. after fmi2SetFMUstate)
        sim.gather(self._xdot, self._spec_vr, self._spec_kind, self._spec_a, self._spec_b, self._spec_f,
                   self._values)

    def _state(self):
        """(x followed by the solver state — coordinate partition, relative-constraint offsets —
        and the partition count, friction-failure counter)."""
        sim = self._sim
        fails = sim.friction_failures - (self._spec_b[self._ff_rows[0]] if self._ff_rows.size else 0)
        return np.concatenate([sim.x, sim.solver_state(), [sim.data.cp_count[0]]]), int(fails)

    def _restore(self, x, counter) -> bool:
        sim = self._sim
        n = sim.x.size + sim.solver_state().size + 1
        if x.size != n:
            self._error(f"FMU state holds {x.size} state values, the model has {n}")
            return False
        try:
            sim.set_solver_state(x[sim.x.size:n - 1])
        except ValueError as exc:
            self._error(f"FMU state: {exc}")
            return False
        sim.x[:] = x[:sim.x.size]
        sim.data.cp_count[0] = int(x[-1])
        sim.t = self._t
        self._spec_b[self._ff_rows] = sim.friction_failures - counter
        self._traj_applied = {}
        return self._apply_trajectories(sim, "fmi2SetFMUstate", force=True)
