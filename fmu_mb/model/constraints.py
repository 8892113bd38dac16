"""Constraints a mechanism file adds to its tree of joints.

Papers 000 (eqs. 23–26, 29, 32, 36–37), 001 (eqs. 11, 16–22), 003 (eqs. 58–63)
and 004 (eqs. 1–11, 30). Every constraint contributes scalar **rows** to

    holonomic (position level):  Φ(q, t) = 0      → Φ_q q̈ = −Φ̇_q q̇ − Φ_tt
    first order (Pfaffian):      Ψ(q) q̇ + ψ(t) = 0 → Ψ q̈ = −Ψ̇ q̇ − ψ̇

stacked as C = [Φ_q; Ψ] (paper 004 eq. 33). Every row is realised by a constraint
force λ_k acting as a wrench on the links it joins (a force along the row's
direction at its point, or a moment), so the tree-joint reactions of the
recursive Newton–Euler pass include the loop-closure and programmed forces
(DESIGN §4).

Groups: ``"kinematic"`` (loop closures, material constraints, paper 000
Φ_k), ``"programmed"`` (Φ_p + g_p(t), the task), ``"base"`` (the fixed-base
constraint Φ_b = q^(b) = 0, paper 000 eq. 32), ``"nonholonomic"`` (knife edges,
paper 004 eq. 30).

Every constraint names its rows ``<name>.<label>`` (single-row constraints just
``<name>``); row labels are what :class:`ConstraintSolver` ``eliminate`` takes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np

from ..codes import GROUP_NAMES, ITERATION_LIMIT, PROJECTION_ITERATIONS_DEFAULT, RowKind, RowSide
from ..trajectories import Hold, Trajectory
from ..trajectories.paths import Param

#: constraint groups (codes.Group, by name)
GROUPS = GROUP_NAMES
#: the link name of the world frame
GROUND = "ground"


def _vec3(owner, name, v) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: {name} must be a finite 3-vector (got {v!r})")
    return a


def _unit(owner, name, v) -> np.ndarray:
    a = _vec3(owner, name, v)
    n = np.linalg.norm(a)
    if n < 1e-12:
        raise ValueError(f"{owner}: {name} must be non-zero")
    return a / n


def _frame(owner, rotation) -> np.ndarray:
    if rotation is None:
        return np.eye(3)
    R = np.asarray(rotation, dtype=float)
    if R.shape != (3, 3) or not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ValueError(f"{owner}: rotation must be a proper orthonormal 3x3 matrix")
    return R


@dataclass
class Row:
    """One scalar constraint row before compilation (link names, local vectors)."""
    label: str
    kind: int
    link_a: str = GROUND
    pa: np.ndarray = field(default_factory=lambda: np.zeros(3))
    link_b: str = GROUND
    pb: np.ndarray = field(default_factory=lambda: np.zeros(3))
    side: int = RowSide.WORLD                 # frame the direction e is fixed in
    e: np.ndarray = field(default_factory=lambda: np.zeros(3))
    u: np.ndarray = field(default_factory=lambda: np.zeros(3))   # RowKind.ORI: fixed in a; RowKind.ELLIPSE: frame y axis
    v: np.ndarray = field(default_factory=lambda: np.zeros(3))   # RowKind.ORI: fixed in b
    dof: str | None = None            # RowKind.COORD: coordinate name
    trajectory: Trajectory | None = None
    tdir: np.ndarray = field(default_factory=lambda: np.zeros(3))  # g(t) = tdir·p̂(t)
    relative: bool = False            # g(t) offset so that Φ = 0 at the start


class Constraint:
    name: str
    group: str

    def rows(self) -> list:
        raise NotImplementedError

    def trajectories(self) -> list:
        return [t for t in {id(r.trajectory): r.trajectory for r in self.rows() if r.trajectory}.values()]

    def links(self) -> list:
        return []

    def validate(self) -> None:
        owner = f"{type(self).__name__} '{self.name}'"
        if not self.name or not self.name.replace("_", "").isalnum():
            raise ValueError(f"{owner}: name must be an identifier (letters, digits, _)")
        if self.group not in GROUPS:
            raise ValueError(f"{owner}: group must be one of {GROUPS} (got {self.group!r})")
        for t in self.trajectories():
            t.validate()

    @property
    def unit(self) -> str:
        """Unit of the constraint's position-level violation."""
        return "m"


@dataclass
class CoordinateConstraint(Constraint):
    """q_j − g(t) = 0 for one coordinate of a joint (a coordinate function; paper 002's
    active joint 1″ at constant rate). ``trajectory`` None holds the start value."""
    name: str
    joint: str
    coordinate: int = 0
    trajectory: Trajectory | None = None
    group: str = "programmed"
    relative: bool = False

    def rows(self):
        traj = self.trajectory if self.trajectory is not None else Hold(name=f"{self.name}_hold")
        rel = self.relative or self.trajectory is None
        return [Row(self.name, RowKind.COORD, dof=(self.joint, self.coordinate), trajectory=traj,
                    tdir=np.array([1.0, 0.0, 0.0]), relative=rel)]


@dataclass
class FixedBase(Constraint):
    """The fixed-base constraint Φ_b = q^(b) = 0 on the six coordinates of a free joint
    (paper 000 eq. 32)."""
    name: str
    joint: str
    group: str = "base"

    def rows(self):
        z = Hold(0.0, name=f"{self.name}_zero")
        return [Row(f"{self.name}.{c}", RowKind.COORD, dof=(self.joint, k), trajectory=z, tdir=np.array([1.0, 0.0, 0.0]))
                for k, c in enumerate(("x", "y", "z", "psi", "theta", "phi"))]


@dataclass
class PointTrajectory(Constraint):
    """A point of a link follows a trajectory: Φ_p = J (r_E − B^(P) r̃_E^(P)(t)) = 0
    (paper 000 eq. 29). ``frame`` = (R^(P), r_org^(P)) (eq. 35), ``axes`` the frame axes
    constrained (J's rows; (0, 1, 2) = all three). The trajectory gives the point's
    coordinates in frame P — or, with a single axis, is a scalar trajectory for that
    coordinate (e.g. paper 001's lift z_E(t), eq. 22). ``relative``: the trajectory is
    relative to the point's position at the start (its value at t = 0 is subtracted)."""
    name: str
    link: str
    point: tuple
    trajectory: Trajectory
    axes: tuple = (0, 1, 2)
    frame: tuple | None = None
    relative: bool = False
    group: str = "programmed"

    def _frame(self):
        if self.frame is None:
            return np.eye(3), np.zeros(3)
        R, o = self.frame
        return _frame(f"PointTrajectory '{self.name}'", R), _vec3(f"PointTrajectory '{self.name}'", "frame origin", o)

    def rows(self):
        R, o = self._frame()
        out = []
        for k in self.axes:
            out.append(Row(f"{self.name}.{'xyz'[k]}" if len(self.axes) > 1 else self.name, RowKind.POS,
                           link_a=self.link, pa=np.asarray(self.point, float), link_b=GROUND, pb=o,
                           side=RowSide.WORLD, e=R[:, k].copy(), trajectory=self.trajectory,
                           tdir=np.eye(3)[k if len(self.axes) > 1 else 0], relative=self.relative))
        return out

    def links(self):
        return [self.link]

    def validate(self):
        super().validate()
        owner = f"PointTrajectory '{self.name}'"
        _vec3(owner, "point", self.point)
        self._frame()
        if not self.axes or any(k not in (0, 1, 2) for k in self.axes) or len(set(self.axes)) != len(self.axes):
            raise ValueError(f"{owner}: axes must be distinct frame axes among 0, 1, 2 (got {self.axes!r})")


@dataclass
class EllipseShape(Trajectory):
    """Semi-axes (a, b) of a :class:`PointOnEllipse` path, changeable as parameters."""
    a: float = 1.0
    b: float = 1.0
    name: str = "ellipse"
    PARAMS = {"a": Param("m", "semi-axis of the ellipse along its frame's x", 1e-6, 1e3),
              "b": Param("m", "semi-axis of the ellipse along its frame's y", 1e-6, 1e3)}

    def segments(self):
        p = np.array([self.a, self.b, 0.0])
        return [(0, 0.0, 1.0, np.concatenate([p, p]))]


@dataclass
class PointOnEllipse(Constraint):
    """A point of a link stays on the ellipse-based cylinder (x/a)² + (y/b)² = 1 of a frame
    (x, y the point's coordinates in the frame, any height): the crane's path of paper 001
    (E on the ellipse a = 3 m, b = 2 m). Row: Φ = ½ab·((x/a)² + (y/b)² − 1), in m near the
    curve (exactly the radial distance for a circle); the reported violation is the
    first-order distance |Φ|/|∇Φ|."""
    name: str
    link: str
    point: tuple
    shape: EllipseShape
    frame: tuple | None = None
    group: str = "programmed"

    def rows(self):
        R, o = (np.eye(3), np.zeros(3)) if self.frame is None else (np.asarray(self.frame[0], float),
                                                                    np.asarray(self.frame[1], float))
        return [Row(self.name, RowKind.ELLIPSE, link_a=self.link, pa=np.asarray(self.point, float), link_b=GROUND, pb=o,
                    e=R[:, 0].copy(), u=R[:, 1].copy(), trajectory=self.shape)]

    def links(self):
        return [self.link]

    def validate(self):
        super().validate()
        _vec3(f"PointOnEllipse '{self.name}'", "point", self.point)
        if self.frame is not None:
            _frame(f"PointOnEllipse '{self.name}'", self.frame[0])


_CUT_KINDS = ("revolute", "spherical", "prismatic", "fixed")


@dataclass
class CutJoint(Constraint):
    """Loop closure by a cut joint (papers 000 §3.2, 002 §4, 003 eqs. 58–63): the joint
    frame J_a on ``link_a`` (``origin_a``, ``rotation_a`` in the link frame) and J_b on
    ``link_b`` coincide up to the joint's own motion, whose axis is the frames' z axis
    (rotation axis of a revolute, sliding direction of a prismatic joint).

    Rows (spatial): spherical 3 position rows (world x, y, z); revolute 3 position +
    2 orientation (z_a·x_b = z_a·y_b = 0); prismatic 2 position rows ⟂ the axis (fixed
    in b) + 3 orientation (z_a·x_b, z_a·y_b, x_a·y_b); fixed 3 + 3.
    ``planar=True`` (mechanisms moving in the xy plane of their link frames, every
    rotation about z): revolute 2 position rows (world x, y); prismatic 1 position row
    ⟂ the sliding direction + 1 orientation row; fixed 2 + 1.

    The reaction output is the force and moment the constraint exerts on ``link_a``,
    about J_a's origin, in J_a's axes (as the tree joints report theirs)."""
    name: str
    kind: str
    link_a: str
    link_b: str
    origin_a: tuple = (0.0, 0.0, 0.0)
    origin_b: tuple = (0.0, 0.0, 0.0)
    rotation_a: object = None
    rotation_b: object = None
    planar: bool = False
    group: str = "kinematic"

    def rows(self):
        Ra, Rb = _frame(self.name, self.rotation_a), _frame(self.name, self.rotation_b)
        pa, pb = np.asarray(self.origin_a, float), np.asarray(self.origin_b, float)
        n = self.name
        out = []
        world_pos = {"revolute": "xy" if self.planar else "xyz", "spherical": "xyz",
                     "fixed": "xy" if self.planar else "xyz", "prismatic": ""}[self.kind]
        for k, c in enumerate("xyz"):
            if c in world_pos:
                out.append(Row(f"{n}.{c}", RowKind.POS, self.link_a, pa, self.link_b, pb, RowSide.WORLD, np.eye(3)[k]))
        if self.kind == "prismatic":
            if self.planar:
                # in-plane normal to the sliding axis z_b: the one of x_b, y_b that lies in the xy plane
                dirs = [Rb[:, 0] if abs(Rb[2, 0]) < abs(Rb[2, 1]) else Rb[:, 1]]
                lab = ["n"]
            else:
                dirs, lab = [Rb[:, 0], Rb[:, 1]], ["x", "y"]
            for d, lb in zip(dirs, lab):
                out.append(Row(f"{n}.{lb}", RowKind.POS, self.link_a, pa, self.link_b, pb, RowSide.B, d.copy()))
        ori = []
        if self.kind in ("revolute", "prismatic", "fixed") and not self.planar:
            ori += [("zx", Ra[:, 2], Rb[:, 0]), ("zy", Ra[:, 2], Rb[:, 1])]
        if self.kind in ("prismatic", "fixed"):
            if self.planar and self.kind == "prismatic":
                # two in-plane vectors: the sliding axis on a, the in-plane normal on b
                ori.append(("rot", Ra[:, 2], out[-1].e))
            else:
                ori.append(("rot", Ra[:, 0], Rb[:, 1]))
        for lb, u, v in ori:
            out.append(Row(f"{n}.{lb}", RowKind.ORI, self.link_a, pa, self.link_b, pb, u=u.copy(), v=v.copy()))
        return out

    def links(self):
        return [self.link_a, self.link_b]

    def validate(self):
        owner = f"CutJoint '{self.name}'"
        if self.kind not in _CUT_KINDS:
            raise ValueError(f"{owner}: kind must be one of {_CUT_KINDS} (got {self.kind!r})")
        if self.planar and self.kind == "spherical":
            raise ValueError(f"{owner}: a spherical cut joint cannot be planar")
        super().validate()
        _vec3(owner, "origin_a", self.origin_a)
        _vec3(owner, "origin_b", self.origin_b)
        _frame(owner, self.rotation_a)
        _frame(owner, self.rotation_b)
        if self.link_a == self.link_b:
            raise ValueError(f"{owner}: link_a and link_b must differ")


@dataclass
class RelativeDisplacement(Constraint):
    """Driving constraint of a translational pair: the displacement of ``point_a`` of
    ``link_a`` from ``point_b`` of ``link_b`` along ``axis_b`` (fixed in link_b) equals
    g(t) (paper 004's d(t) in joint H): Φ = e_b·(r_a − r_b) − g(t)."""
    name: str
    link_a: str
    point_a: tuple
    link_b: str
    point_b: tuple
    axis_b: tuple
    trajectory: Trajectory
    relative: bool = False
    group: str = "programmed"

    def rows(self):
        return [Row(self.name, RowKind.POS, self.link_a, np.asarray(self.point_a, float), self.link_b,
                    np.asarray(self.point_b, float), RowSide.B, _unit(self.name, "axis_b", self.axis_b),
                    trajectory=self.trajectory, tdir=np.array([1.0, 0.0, 0.0]), relative=self.relative)]

    def links(self):
        return [self.link_a, self.link_b]


@dataclass
class KnifeEdge(Constraint):
    """Knife-edge (non-slipping wheel) Pfaffian constraint of paper 004 eq. (30): the
    velocity of contact point K has no component along n_K, the unit normal to the
    allowed direction of motion, both fixed in the link: n_K·v_K = 0."""
    name: str
    link: str
    point: tuple
    normal: tuple
    group: str = "nonholonomic"

    def rows(self):
        return [Row(self.name, RowKind.VEL, self.link, np.asarray(self.point, float), GROUND, np.zeros(3), RowSide.A,
                    _unit(self.name, "normal", self.normal))]

    def links(self):
        return [self.link]

    @property
    def unit(self):
        return "m/s"


@dataclass
class PointVelocity(Constraint):
    """First-order programmed constraint: the velocity of a link point along a direction
    (fixed in the link, ``in_link=True``, or in the world) equals g(t): e·v_P − g(t) = 0."""
    name: str
    link: str
    point: tuple
    direction: tuple
    trajectory: Trajectory
    in_link: bool = True
    group: str = "programmed"

    def rows(self):
        return [Row(self.name, RowKind.VEL, self.link, np.asarray(self.point, float), GROUND, np.zeros(3),
                    RowSide.A if self.in_link else RowSide.WORLD, _unit(self.name, "direction", self.direction),
                    trajectory=self.trajectory, tdir=np.array([1.0, 0.0, 0.0]))]

    def links(self):
        return [self.link]

    @property
    def unit(self):
        return "m/s"


@dataclass
class ConstraintSolver:
    """How constrained motion is computed (defaults per model; FMU parameters override).

    formulation: ``"gpme"`` — the reduced generalized programmed motion equations of
    paper 000 eq. (26): [Dᵀ M; C] q̈ = [Dᵀ(Q − b); γ] with D = ∂q̇/∂q̇_i from coordinate
    partitioning (eq. 25); ``"lagrange"`` — M q̈ = Q − b + Cᵀλ, C q̈ = γ solved with the
    Cholesky factors of M and C M⁻¹ Cᵀ (paper 003 eq. 61, paper 004 eq. 11).
    alpha, beta: Baumgarte stabilisation Φ̈ + 2αΦ̇ + β²Φ = 0 (paper 000 eqs. 33, 37;
    first-order rows Ψ̇ + 2αΨ = 0).
    projection: after every step, solve the holonomic constraints for the positions
    (Newton, mass-weighted) and project the velocities onto C q̇ = −Φ_t, so loop
    constraints hold to ``projection_tol`` instead of only being stabilised;
    projection_iterations: the cap on its position-Newton iterations per step (a bound fixed at
    initialization: kernels.projection; FMU parameter solver.projection_iteration_limit).
    dependent: coordinate names to use as dependent ones (paper 001 eq. 11) instead of
    the automatic choice; re-partitioning still happens if they become singular.
    eliminate: row labels of redundant constraints to drop (their λ = 0, paper 004 §3.1);
    empty: the canonical choice — the minimum-norm λ of all solutions.
    rank_tol: relative pivot size below which a row counts as dependent.
    repartition_ratio: re-partition when the dependent block's pivot ratio falls below it.
    assemble: constraint groups a new simulation makes consistent at its start (positions
    solved, velocities projected): loops must close; programmed constraints are included only
    where the paper starts on them (paper 000's manipulator starts off its path on purpose).
    static_groups: constraint groups whose position rows hold in the statics a simulation
    starts from (``init.static``; fmu_mb.statics.constrained_static_equilibrium), with their
    multipliers: loop closures and the fixed base by default; add "programmed" to start at
    rest on the programmed path.
    static_hold: coordinate names held at their start values in those statics (the drives
    that place the mechanism). None: hold every coordinate that is not elastic (base on
    supports, RFEM sdes, springs); () holds nothing.
    """
    formulation: str = "gpme"
    alpha: float = 0.0
    beta: float = 0.0
    projection: bool = False
    projection_tol: float = 1e-12
    projection_iterations: int = PROJECTION_ITERATIONS_DEFAULT
    dependent: tuple = ()
    eliminate: tuple = ()
    rank_tol: float = 1e-9
    repartition_ratio: float = 1e-3
    assemble: tuple = ("kinematic", "base", "nonholonomic")
    static_groups: tuple = ("kinematic", "base")
    static_hold: tuple | None = None

    def validate(self) -> None:
        if self.formulation not in ("gpme", "lagrange"):
            raise ValueError(f"ConstraintSolver: formulation must be 'gpme' or 'lagrange' (got {self.formulation!r})")
        for f in ("alpha", "beta"):
            v = getattr(self, f)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and 0.0 <= v <= 1e6):
                raise ValueError(f"ConstraintSolver: {f} must be a finite number in [0, 1e6] 1/s (got {v!r})")
        for f, lo, hi in (("projection_tol", 1e-15, 1e-3), ("rank_tol", 1e-15, 1e-2), ("repartition_ratio", 1e-12, 0.5)):
            v = getattr(self, f)
            if not (isinstance(v, (int, float)) and lo <= v <= hi):
                raise ValueError(f"ConstraintSolver: {f} must lie in [{lo:g}, {hi:g}] (got {v!r})")
        n = self.projection_iterations
        if not (isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= ITERATION_LIMIT):
            raise ValueError(f"ConstraintSolver: projection_iterations must be an integer in "
                             f"[1, {ITERATION_LIMIT}] (got {n!r})")
        bad = [g for g in self.static_groups if g not in GROUPS or g == "nonholonomic"]
        if bad:
            raise ValueError(f"ConstraintSolver: static_groups names {bad}; statics can hold the position-level "
                             f"groups kinematic, programmed, base")
        if self.static_hold is not None and not all(isinstance(h, str) for h in self.static_hold):
            raise ValueError(f"ConstraintSolver: static_hold must be None or a tuple of coordinate names such as "
                             f"'joint.q' (got {self.static_hold!r})")
        bad = [g for g in self.assemble if g not in GROUPS]
        if bad:
            raise ValueError(f"ConstraintSolver: assemble names unknown groups {bad} (groups: {', '.join(GROUPS)})")
