"""One simulated mechanism instance: state, inputs, fixed-step integration, outputs.

Pure Python API over the jitted core, usable without FMI (tests, notebooks,
scenarios); the FMI adapter wraps exactly this object.

Stepping: ``step(dt)`` advances by any dt > 0 with the integration method (``method``: "rk4",
classical Runge–Kutta as in the papers, or one of the linearly implicit Rosenbrock-W methods of
kernels.linearly_implicit for stiff detail: "ros2", "ros2_lowdamp", "ros34pw2") at the fixed internal step h,
by the kernel both FMU kinds run (kernels.stepping.advance_*: ⌊dt/h⌋ full steps, dt/h within 1e-9 of an
integer counting as that integer, and a last step of the remainder, so any communication step ends exactly
where it should and a multiple of h reproduces the plain fixed-step result bit for bit). Driving inputs are
held constant over the call (zero-order hold).
"""
from __future__ import annotations

import copy
import math
from typing import NamedTuple

import numpy as np

from .backend import default_kernels, kernel_set
from .codes import (
    GROUP_NAMES,
    ITERATION_LIMIT,
    ROS2_GAMMA_DAMPED,
    ROS2_GAMMA_LOW_DAMPING,
    Formulation,
    RecordCheck,
    RowKind,
    Scheme,
    SolverOption,
    SolverStat,
)
from .model.compile import CompiledMechanism
from .messages import text
from .model.compiled import RECORD_MAX_COUNT, make_data, record_size, state_vector, vector
from .outputs import spec_table


class Method(NamedTuple):
    """An integration method: its order, a description for the FMU's enumeration, the scheme that steps
    it (codes.Scheme) and, for ROS2, its γ (codes.ROS2_GAMMA_*)."""
    order: int
    description: str
    scheme: Scheme
    gamma: float = 0.0


#: integration methods by name (their order is the FMU's solver.integrator enumeration)
METHODS = {
    "rk4": Method(4, "classical 4th-order Runge-Kutta, explicit, as in the papers", Scheme.RK4),
    "ros2": Method(2, "linearly implicit Rosenbrock-W method ROS2, gamma = 1 + 1/sqrt(2): L-stable, strongest "
                      "numerical damping, most robust at large steps; two pipeline evaluations and one "
                      "factorisation per step", Scheme.ROS2, ROS2_GAMMA_DAMPED),
    "ros2_lowdamp": Method(2, "ROS2 with gamma = 1 - 1/sqrt(2): L-stable, same cost, about 1000 times less "
                              "numerical damping of structural vibration; its intermediate stage overshoots "
                              "the stiffest components, so it is less robust at large steps", Scheme.ROS2,
                           ROS2_GAMMA_LOW_DAMPING),
    "ros34pw2": Method(3, "linearly implicit Rosenbrock-W method ROS34PW2 (Rang & Angermann 2005): order 3, "
                          "L-stable, stiffly accurate, gamma = 0.436: numerical damping between ros2 and ros2_lowdamp; "
                          "four pipeline evaluations and one factorisation per step", Scheme.ROS34PW2),
}


class SimulationError(RuntimeError):
    """The integration produced a non-finite state; the last good state was kept."""


class Simulator:
    """State, inputs and outputs of one compiled mechanism.

    h: the internal fixed step, s (an FMU's solver.step_size; the communication step a :meth:`step` takes is
    its dt). method: "rk4" (explicit, order 4), "ros2"/"ros2_lowdamp"
    (linearly implicit Rosenbrock-W, order 2, L-stable) or "ros34pw2" (order 3): :data:`METHODS`. assemble: make the start state consistent with
    the constraint groups of the mechanism's ConstraintSolver.assemble (see :meth:`assemble`).
    solver: overrides of ConstraintSolver settings (formulation, alpha, beta, projection).
    kernels: who runs the kernels — "jit" (numba, default), "native" (ahead-of-time
    compiled, fmu_mb.native) or "auto" (native when available); or a kernel set of
    fmu_mb.backend. None: the environment's ``FMU_MB_KERNELS`` (one of those three names), else "jit" — for
    a process that has the kernel library and should not JIT-compile the same kernels again (the test
    suite). ``kernel_note`` says why auto fell back to jit.
    """

    def __init__(self, cm: CompiledMechanism, h: float = 1e-3, assemble: bool = True,
                 kernels=None, kernel_dirs=(), method: str = "rk4", **solver):
        if not (isinstance(h, (int, float)) and math.isfinite(h) and h > 0):
            raise ValueError(f"the internal step h must be a finite number > 0 s (got {h!r})")
        if method not in METHODS:
            raise ValueError(f"method must be one of {list(METHODS)} (got {method!r})")
        self.method = method
        self.cm = cm
        self.model = cm.model                   # constant (read-only arrays); a run writes only self.data
        self.trajectories = copy.deepcopy(cm.trajectories)
        self.data = make_data(self.model)
        self.set_solver(**solver)
        if METHODS[method].gamma:
            self.data.solver_opt[SolverOption.ROS2_GAMMA] = METHODS[method].gamma
        if kernels is None:
            kernels = default_kernels()
        self.k, self.kernel_note = kernel_set(kernels, kernel_dirs) if isinstance(kernels, str) else (kernels, "")
        self._m, self._d = self.k.handles(self.model, self.data)
        # one kernel family per instance: numba compiles (and loads) only what is called. The
        # pipeline is evaluated through the FMU's output kernel with an empty output table, so
        # the direct simulator and the FMU run the same code (the native and JIT backends give
        # bitwise equal results, tests/native/test_native.py)
        constrained = bool(self.model.nc)
        self._gather = self.k.gather_outputs_constrained if constrained else self.k.gather_outputs_tree
        self._advance = self.k.advance_constrained if constrained else self.k.advance_tree
        self._scheme = int(METHODS[method].scheme)
        self._no_vr = np.zeros(0, np.int64)
        self._no_f = np.zeros((0, 3))
        self._no_vals = np.zeros(0)
        self.h = float(h)
        m = self.model
        self.x = state_vector(m, cm.q0, cm.qd0)
        self.t = 0.0
        self.tau_drive = np.zeros(m.nv)
        self._xdot = np.zeros(m.nx)
        self._obj_unique = np.ones(len(cm.constraints), np.int64)
        self._body_unique = np.ones(m.nbody, np.int64)
        self._check_eliminations()
        self.anchor()
        if assemble and cm.mechanism.solver.assemble:
            self.assemble(cm.mechanism.solver.assemble)
            self.anchor()

    # ------------------------------------------------------------------ constraints setup
    def set_solver(self, formulation=None, alpha=None, beta=None, projection=None, friction_iterations=None,
                   projection_iterations=None) -> None:
        """Override the mechanism's ConstraintSolver settings for this instance (None keeps); friction_iterations
        and projection_iterations: the caps on the Newton iterations of the friction ↔ reaction loop (0 to
        ITERATION_LIMIT) and of the projection after a step (1 to ITERATION_LIMIT), fmu_mb.step_cost."""
        o, O = self.data.solver_opt, SolverOption
        for i, (name, val, lo) in ((O.FRICTION_ITERATIONS, ("friction_iterations", friction_iterations, 0)),
                                   (O.PROJECTION_ITERATIONS, ("projection_iterations", projection_iterations, 1))):
            if val is not None:
                if not (isinstance(val, (int, np.integer)) and not isinstance(val, bool)
                        and lo <= val <= ITERATION_LIMIT):
                    raise ValueError(f"{name} must be an integer in [{lo}, {ITERATION_LIMIT}] (got {val!r})")
                o[i] = float(val)
        if formulation is not None:
            names = [f.name.lower() for f in Formulation]
            if formulation not in names:
                raise ValueError(f"formulation must be one of {names} (got {formulation!r})")
            o[O.FORMULATION] = Formulation[formulation.upper()]
        for i, (name, val) in ((O.ALPHA, ("alpha", alpha)), (O.BETA, ("beta", beta))):
            if val is not None:
                if not (isinstance(val, (int, float)) and math.isfinite(val) and 0 <= val <= 1e6):
                    raise ValueError(f"{name} must be a finite number in [0, 1e6] 1/s (got {val!r})")
                o[i] = float(val)
        if projection is not None:
            o[O.PROJECTION] = float(bool(projection))

    def _check_eliminations(self) -> None:
        """User-eliminated rows (ConstraintSolver.eliminate) must be redundant: dropping them may
        not lower the rank of C at the start configuration (paper 004 section 3.1)."""
        m = self.model
        if not m.nc or not np.any(m.con_elim):
            return
        self.k.forward_kinematics(self._m, self._d, self.q, self.qd)
        self.k.constraint_terms(self._m, self._d, self.q, self.qd, self.t)
        C = self.data.con_C
        keep = np.asarray(m.con_elim) == 0
        r_all, r_keep = np.linalg.matrix_rank(C), np.linalg.matrix_rank(C[keep])
        if r_keep < r_all:
            rows = [lab for lab, e in zip(self.cm.row_labels, m.con_elim) if e]
            raise ValueError(f"'{self.cm.name}': the eliminated rows {rows} are not redundant: without them the "
                             f"constraint matrix has rank {r_keep} instead of {r_all} (a constraint would be lost)")

    def anchor(self) -> None:
        """Offsets of the 'relative' constraint rows so that they hold at the current state
        and time (e.g. paper 001's lift starts from the static height z_s)."""
        if self.model.nc:
            if np.any(self.model.con_rel):      # (skipping the kernel saves its cache load at FMU start)
                self.k.anchor_offsets(self._m, self._d, self.q, self.qd, self.t)
            self.data.cp_valid[0] = 0

    def assemble(self, groups=("kinematic", "base", "nonholonomic"), velocities_only: bool = False) -> int:
        """Make the current state consistent with the constraints of ``groups``: solve the
        holonomic rows for the positions (unless velocities_only) and project the velocities
        (kinetic-energy metric, kernels.projection.project). Loop closures need this when
        the given start values only approximately close the loops. Returns Newton iterations.
        Raises RuntimeError if the positions do not converge."""
        if not self.model.nc:
            return 0
        bad = [g for g in groups if g not in GROUP_NAMES]
        if bad:
            raise ValueError(f"unknown constraint groups {bad} (groups: {', '.join(GROUP_NAMES)})")
        mask = np.array([int(g in groups) for g in GROUP_NAMES], dtype=np.int64)
        x = self.x.copy()
        opt, tol_slot = self.data.solver_opt, SolverOption.PROJECTION_TOL
        tol = opt[tol_slot]
        if velocities_only:
            opt[tol_slot] = np.inf
        try:
            it = self.k.project(self._m, self._d, x, self.t, mask)
        finally:
            opt[tol_slot] = tol
        if it < 0 or not np.all(np.isfinite(x)):
            phi = np.abs(self.data.con_phi)
            worst = [c for c in self.cm.constraints if c.group in groups and c.rows and
                     np.nanmax(phi[c.rows]) >= 0.5 * np.nanmax(phi)]
            names = ", ".join(f"'{c.name}' ({c.type}, |Φ| = {np.nanmax(phi[c.rows]):.3e})" for c in worst)
            raise RuntimeError(f"'{self.cm.name}': the constraints {list(groups)} could not be solved from the "
                               f"given start configuration (max |Φ| = {self.data.con_stats[SolverStat.PROJECTION_RESIDUAL]:.3e} after "
                               f"25 Newton iterations{'; largest: ' + names if names else ''}); start closer to a "
                               "closed configuration, or check the lengths: a loop that cannot close never will")
        self.x[:] = x
        self.data.cp_valid[0] = 0
        return it

    def set_trajectory(self, name: str, **params) -> None:
        """Change parameters of the trajectory ``name`` (see fmu_mb.trajectories); they act
        from the current time on."""
        for k, traj in enumerate(self.trajectories):
            if traj.name == name:
                traj.set(**params)
                kind, time, par = traj.table()
                f, n = int(self.model.traj_first[k]), int(self.model.traj_count[k])
                if kind.size != n:
                    raise ValueError(f"trajectory '{name}' would change its number of segments ({n} -> {kind.size})")
                self.data.traj_kind[f:f + n] = kind
                self.data.traj_time[f:f + n] = time
                self.data.traj_par[f:f + n] = par
                return
        raise KeyError(f"no trajectory named {name!r} (trajectories: "
                       f"{', '.join(t.name for t in self.trajectories) or 'none'})")

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

    def set_state(self, q=None, qd=None, z=None, t: float | None = None, anchor: bool = True) -> None:
        """Set coordinates, rates and bristle states (None keeps the current value);
        resets the energy counters; re-anchors relative constraints (``anchor``) and
        chooses a new coordinate partition at the next evaluation."""
        m = self.model
        x = self.x.copy()
        if q is not None:
            x[:m.nv] = vector("q", q, m.nv)
        if qd is not None:
            x[m.nv:2 * m.nv] = vector("qd", qd, m.nv)
        if z is not None:
            x[2 * m.nv:2 * m.nv + m.nz] = vector("z", z, m.nz)
        if not np.all(np.isfinite(x)):
            raise ValueError("state contains NaN or inf")
        x[-3:] = 0.0
        self.x[:] = x
        if t is not None:
            self.t = float(t)
        self.data.cp_valid[0] = 0
        if anchor:
            self.anchor()

    def initialize(self, q=None, qd=None, t: float = 0.0, static: bool = False, assemble: bool = True) -> None:
        """The start the FMUs use: coordinates q (default the description's q0), with
        ``static`` the elastic coordinates replaced by the static equilibrium (statics module:
        base on springs, RFEM sdes, joint springs; joints held, or with constraints of the
        solver's ``static_groups`` those of its ``static_hold``), rates qd, time t; relative
        constraints anchored; with ``assemble`` the constraint groups of the mechanism's
        ConstraintSolver.assemble made consistent. Raises RuntimeError if statics or the
        assembly do not converge."""
        from .statics import solve, start_problem
        q = np.array(self.cm.q0 if q is None else q, dtype=float)
        if static:
            problem = self.__dict__.get("_start_problem")
            if problem is None:
                problem = self._start_problem = start_problem(self.cm)
            bf = self.data.bf_val.copy()           # statics without the body-force inputs
            self.data.bf_val[:] = 0.0
            try:
                solve(problem, self.k, self._m, self._d, self.data, q, t,      # (a native FMU says the same)
                      what=f"{'constrained ' if problem.relative else ''}static equilibrium")
            finally:
                self.data.bf_val[:] = bf
        self.set_state(q=q, qd=self.cm.qd0 if qd is None else qd, t=t)
        groups = self.cm.mechanism.solver.assemble
        if assemble and groups and self.model.nc:
            self.assemble(groups)
            self.anchor()
        self.data.fric_fail[0] = 0
        self.data.lin_redo[0] = 0
        self.data.lin_split[0] = 0
        self.data.lin_hold[0] = 0

    def reset(self) -> None:
        """Back to the initial state of the description, t = 0, inputs zero."""
        self.x[:] = state_vector(self.model, self.cm.q0, self.cm.qd0)
        self.t = 0.0
        self.tau_drive[:] = 0.0
        self.data.bf_val[:] = 0.0
        self.anchor()

    # ------------------------------------------------------------------ inputs
    @property
    def body_force(self) -> np.ndarray:
        """Magnitudes (N) of the mechanism's BodyForce inputs, in description order (write to set)."""
        return self.data.bf_val

    def hold_inputs(self, drive_dofs, drive, force_index=(), forces=()) -> None:
        """The inputs held over the next steps (zero-order hold): driving forces ``drive`` on the
        coordinates ``drive_dofs`` (every other coordinate undriven) and the magnitudes ``forces``
        of the BodyForce inputs ``force_index``. Values must be finite (the FMU checks them first)."""
        self.tau_drive[:] = 0.0
        self.tau_drive[drive_dofs] = drive
        self.data.bf_val[force_index] = forces

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
    def step(self, dt: float, t: float | None = None) -> None:
        """Advance by dt seconds (see module docstring for the remainder rule); from time ``t`` if
        given (an FMU's communication point), else from the current time. SimulationError (the state
        before the step kept) if the integration produced a non-finite state."""
        if not (isinstance(dt, (int, float, np.floating)) and math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"step size must be a finite number > 0 s (got {dt!r})")
        if t is not None:
            self.t = float(t)
        self._t_before = self.t
        if not self._advance(self._m, self._d, self.x, self.t, self.tau_drive, self.h, float(dt), self._scheme):
            why = ""
            if self.model.nc and self.data.con_stats[SolverStat.PIVOT_RATIO] == 0.0:
                why = (f" (the constraint matrix is singular: rank {int(self.data.con_stats[SolverStat.RANK])} at the "
                       "failing configuration)")
            raise SimulationError(f"integration from t = {self.t:.6g} s over {dt:.6g} s produced a non-finite "
                                  f"state{why}; the state before the step is kept")
        self._stepped = True
        self.t += dt

    def undo_step(self) -> None:
        """Back to the state before the last successful :meth:`step` (its result was refused: non-finite
        outputs, a violation beyond a bound): the checkpoint the step kernel keeps (kernels.stepping)."""
        if not self.__dict__.get("_stepped"):
            raise RuntimeError("no step to undo")
        self.k.rollback(self._m, self._d, self.x)
        self.t = self._t_before
        self._stepped = False

    def advance_to(self, t_end: float) -> None:
        if t_end > self.t:
            self.step(t_end - self.t)

    # ------------------------------------------------------------------ outputs
    def evaluate(self) -> np.ndarray:
        """Run the pipeline at the current state: fills q̈, reactions, friction, λ in ``data``;
        returns ẋ."""
        e, f = self._no_vr, self._no_f
        self._gather(self._m, self._d, self.x, self.t, self.tau_drive, self._xdot, e, e, e, e, f, self._no_vals)
        return self._xdot

    def gather(self, xdot, vr, kind, a, b, f, vals) -> None:
        """Evaluate the pipeline and write the outputs of the spec table (vr, kind, a, b, f; codes in
        kernels.outputs) into ``vals``; ẋ into ``xdot``. One kernel call (the FMU's outputs).
        The arrays are checked once (the native kernels would not): C-contiguous int64 vr, kind, a,
        b of one length, float64 f (n, 3), float64 xdot (nx,) and vals long enough for vr."""
        arrays = (xdot, vr, kind, a, b, f, vals)
        checked = self.__dict__.get("_gather_checked", ())
        if len(checked) != len(arrays) or not all(x is y for x, y in zip(checked, arrays)):
            n = len(vr)
            ok = all(isinstance(v, np.ndarray) and v.flags.c_contiguous for v in arrays) \
                and all(v.dtype == np.int64 and v.shape == (n,) for v in (vr, kind, a, b)) \
                and f.dtype == np.float64 and f.shape == (n, 3) and xdot.dtype == np.float64 \
                and xdot.shape == (self.model.nx,) and vals.dtype == np.float64 and vals.ndim == 1 \
                and (n == 0 or 0 <= vr.min() and vr.max() < vals.size)
            if not ok:
                raise ValueError("gather: the output table must be C-contiguous int64 vr, kind, a, b of one length "
                                 "n, float64 f (n, 3), float64 xdot (nx,) and float64 vals indexed by vr")
            self._gather_checked = arrays          # (held, so that the identity test stays valid)
        self._gather(self._m, self._d, self.x, self.t, self.tau_drive, xdot, vr, kind, a, b, f, vals)

    # ------------------------------------------------------------------ state record
    def state_record(self) -> tuple[np.ndarray, int]:
        """(record, friction failures): everything the next steps depend on besides time and inputs, in the
        layout FMU states carry (kernels.record: x, the coordinate partition, the constraint offsets, the
        partition count)."""
        out = np.empty(record_size(self.model))
        self.k.write_record(self._m, self._d, self.x, out)
        return out, self.friction_failures

    def restore_record(self, record, failures: int, t: float, coordinate_limit: float = np.inf,
                       rate_limit: float = np.inf) -> None:
        """Back to a :meth:`state_record` at time t. Checks everything before it writes anything (sizes,
        finite values, coordinates and rates within ±limits, a valid coordinate partition, counts; the
        kernel an FMU state restores by): ValueError says why, in the FMU's words, the simulator unchanged."""
        record = np.ascontiguousarray(record, dtype=float)
        n = record_size(self.model)
        if record.shape != (n,):
            raise ValueError(text("RECORD_SIZE", record.size, n))
        if not (isinstance(failures, (int, np.integer)) and 0 <= failures <= RECORD_MAX_COUNT):
            raise ValueError(f"the friction-failure count {failures!r} is not a count below 2^31")
        info = np.zeros(2)
        code = self.k.read_record(self._m, self._d, record, self.x, float(coordinate_limit), float(rate_limit), info)
        if code != RecordCheck.OK:
            raise ValueError(self._record_problem(RecordCheck(code), info, coordinate_limit, rate_limit))
        self.data.fric_fail[0] = int(failures)
        self.t = float(t)

    def _record_problem(self, code: RecordCheck, info, coordinate_limit, rate_limit) -> str:
        i, v = int(info[0]), float(info[1])
        if code == RecordCheck.NOT_FINITE:
            return text("RECORD_NOT_FINITE", i, repr(v))
        if code in (RecordCheck.COORDINATE, RecordCheck.RATE):
            what = f"{'rate of coordinate' if code == RecordCheck.RATE else 'coordinate'} {self.cm.dof_names[i]}"
            return text("RECORD_BEYOND_LIMIT", what, repr(v), rate_limit if code == RecordCheck.RATE else coordinate_limit)
        if code == RecordCheck.COUNT:
            return text("RECORD_COUNT", repr(v))
        if code == RecordCheck.FALLBACK:
            return text("RECORD_FALLBACK", repr(v))
        return text("RECORD_PARTITION") if code == RecordCheck.PARTITION else text("RECORD_RANK", repr(v))

    # ------------------------------------------------------------------ constraint outputs
    @property
    def lam(self) -> np.ndarray:
        """Constraint multipliers λ (last evaluate): the constraint forces, M q̈ = Q − b + Cᵀλ."""
        return self.data.lam

    @property
    def tau_required(self) -> np.ndarray:
        """Generalized forces of the programmed constraints, Φ_p,qᵀ λ_p (nv,), last evaluate."""
        return self.data.lam_req

    def read(self, sources) -> np.ndarray:
        """Values of catalogue outputs (fmu_mb.outputs; sources (key, subject, component)) as of the
        last :meth:`evaluate`: the kernel that fills the FMU's outputs, without evaluating again."""
        sources = list(sources)
        kind, a, b, f = spec_table(self.cm, sources)
        vals = np.zeros(len(sources))
        self.k.fill_outputs(self._m, self._d, self.x, np.arange(len(sources), dtype=np.int64), kind, a, b, f, vals)
        return vals

    def constraint_reaction(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(force, moment) constraint ``name`` exerts on its link (link_a), last evaluate: cut
        joints about their frame J_a's origin in J_a's axes; other constraints about their
        point in world axes. Coordinate constraints: (λ, 0) as generalized force."""
        ci = self.cm.constraint(name)
        if all(self.model.con_kind[k] == RowKind.COORD for k in ci.rows):
            return np.array([self.read([("con_lambda", name, 0)])[0], 0.0, 0.0]), np.zeros(3)
        v = self.read([(key, name, k) for key in ("con_force", "con_moment") for k in range(3)])
        return v[:3], v[3:]

    def violation(self, name: str | None = None) -> float:
        """Position-level violation (last evaluate): Euclidean norm of the constraint's
        position rows, m (ellipse rows as first-order distance |Φ|/|∇Φ|; coordinate rows in
        their unit; first-order rows: the velocity residual, m/s). None: the largest over all
        constraints."""
        names = [c.name for c in self.cm.constraints] if name is None else [self.cm.constraint(name).name]
        v = self.read([("con_violation", n, 0) for n in names])
        return float(v.max()) if v.size else 0.0

    def violation_angle(self, name: str) -> float:
        """Orientation violation of a cut joint (rad), last evaluate."""
        return float(self.read([("con_violation_angle", self.cm.constraint(name).name, 0)])[0])

    def deflection(self, beam: str) -> np.ndarray:
        """Tip deflection (3,) of flexible link ``beam`` from its undeformed shape, in the frame of its
        first rigid finite element, m, at the current state (zeros for a rigid link)."""
        if beam not in {ln.name for ln in self.cm.mechanism.links}:
            raise KeyError(f"no link named {beam!r} in '{self.cm.name}'")
        self.k.forward_kinematics(self._m, self._d, self.q, self.qd)
        return self.read([("deflection", beam, k) for k in range(3)])

    def uniqueness(self) -> dict:
        """Reaction solvability at the last evaluate (paper 004 eqs. 21–27): {name: bool} for
        every constraint and every tree joint (True: uniquely determined by the rigid model)."""
        self.k.uniqueness(self._m, self._d, self._obj_unique, self._body_unique)
        out = {c.name: bool(self._obj_unique[i]) for i, c in enumerate(self.cm.constraints)}
        for j in self.cm.joints:
            out[j.name] = bool(self._body_unique[j.body])
        return out

    @property
    def rank(self) -> int:
        """Rank of C at the last partition."""
        return int(self.data.cp_rank[0])

    @property
    def repartitions(self) -> int:
        """Coordinate partitions chosen so far (the first one included)."""
        return int(self.data.cp_count[0])

    @property
    def dependent_coordinates(self) -> list:
        """Names of the current dependent coordinates (GPME partition, paper 000 eq. 25)."""
        return [self.cm.dof_names[i] for i in self.data.cp_cols[:self.rank]]

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
        self.k.forward_kinematics(self._m, self._d, self.q, self.qd)
        return np.array(self.k.world_point(self._m, self._d, body, pos[0], pos[1], pos[2]))

    def support_forces(self) -> np.ndarray:
        """World forces (nsup, 3) of the base supports on the base at the current state, in the
        description's order: exact supports (paper 000 eq. 15) or linearized ones (paper 001 eqs. 3-4)."""
        n = len(self.cm.mechanism.supports)
        self.k.forward_kinematics(self._m, self._d, self.q, self.qd)
        return self.read([("support", s, k) for s in range(n) for k in range(3)]).reshape(n, 3)

    def energies(self) -> dict:
        """Kinetic, gravity, elastic, dissipated energy, input work, work of the constraint
        forces, and the balance E_k + E_g + E_e + E_diss − W_in − W_c (J), constant in exact
        arithmetic (W_c: programmed constraints and Baumgarte terms; 0 for ideal scleronomic
        constraints held exactly)."""
        out = np.zeros(3)
        self.k.energies(self._m, self._d, self.q, self.qd, out)
        e = {"kinetic": out[0], "gravity": out[1], "elastic": out[2],
             "dissipated": self.x[-3], "work_in": self.x[-2], "work_constraints": self.x[-1]}
        e["balance"] = e["kinetic"] + e["gravity"] + e["elastic"] + e["dissipated"] - e["work_in"] \
            - e["work_constraints"]
        return e

    # ------------------------------------------------------------------ bookkeeping
    @property
    def friction_iterations(self) -> int:
        """Fixed-point iterations of the last friction ↔ reaction solve."""
        return int(self.data.fric_iters[0])

    @property
    def friction_failures(self) -> int:
        """Solves that hit the iteration cap since :meth:`initialize` (or the instance's creation)."""
        return int(self.data.fric_fail[0])

    @property
    def redone_steps(self) -> int:
        """Low-damping ROS2 or ROS34PW2 steps redone by ROS2 with the damped γ since :meth:`initialize`
        (kernels.linearly_implicit._guarded_steps): each cost a second, two-stage step."""
        return int(self.data.lin_redo[0])

    @property
    def split_steps(self) -> int:
        """Damped ROS2 substeps tried in place of ROS34PW2 steps whose bristle-error estimate was too large, since
        :meth:`initialize` (kernels.linearly_implicit._guarded_steps)."""
        return int(self.data.lin_split[0])
