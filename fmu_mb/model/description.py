"""What a mechanism file writes: links, joints, supports, points.

A :class:`Mechanism` is a tree of links connected by joints, rooted at
``"ground"``. Conventions (the papers' and Pinocchio's):

* every link has a body frame; a joint places its **joint frame** in the parent
  link frame (``origin``, ``rotation``), moves the child relative to that frame
  (the joint motion), and the child's body frame is the moved joint frame;
* a free (6-DOF) joint has coordinates x, y, z, ψ, θ, φ and the motion
  T̃ = Trans(x, y, z)·Rz(ψ)·Ry(θ)·Rx(φ) (paper 001 eq. (12.1)); a planar joint
  x, y, φ: Trans(x, y, 0)·Rz(φ) (the absolute coordinates of paper 004 eq. (28));
  a spherical joint the rotation Rz(ψ)·Ry(θ)·Rx(φ) (the rfe-to-rfe motion of
  paper 001 eq. (12.3)); a universal joint two successive revolutes;
* a :class:`Beam` is a link along its local +x axis from 0 to ``length``;
  with ``n_div > 0`` it is discretised by the rigid finite element method
  (paper 001 eq. (7)), otherwise it is one rigid body with the same mass
  properties;
* SI units throughout; angles in rad.

Validation raises ``ValueError`` with a message naming the offending object,
field and valid range.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np

from ..codes import RowKind
from .constraints import GROUND, Constraint, ConstraintSolver, FixedBase
from .friction import Friction
from .inertia import check_inertia, prism_segment

#: number of coordinates of each joint kind and the default coordinate names
JOINT_KINDS = {
    "fixed": (),
    "revolute": ("q",),
    "prismatic": ("q",),
    "universal": ("q1", "q2"),
    "spherical": ("psi", "theta", "phi"),
    "free": ("x", "y", "z", "psi", "theta", "phi"),
    "planar": ("x", "y", "phi"),
}


def _vec3(owner: str, name: str, value) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.shape != (3,):
        raise ValueError(f"{owner}: {name} must be a 3-vector, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: {name} contains NaN or inf ({a})")
    return a


def _unit(owner: str, name: str, value) -> np.ndarray:
    a = _vec3(owner, name, value)
    n = np.linalg.norm(a)
    if n < 1e-12:
        raise ValueError(f"{owner}: {name} must be a non-zero 3-vector")
    return a / n


def _finite_positive(owner: str, name: str, value: float, allow_zero: bool = False) -> None:
    ok = isinstance(value, (int, float, np.floating)) and math.isfinite(value) and (
        value >= 0.0 if allow_zero else value > 0.0)
    if not ok:
        raise ValueError(f"{owner}: {name} must be a finite number {'>= 0' if allow_zero else '> 0'} "
                         f"(got {value!r})")


def _rotation(owner: str, R) -> np.ndarray:
    R = np.asarray(R, dtype=float)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError(f"{owner}: rotation must be a finite 3x3 matrix")
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0.0:
        raise ValueError(f"{owner}: rotation must be a proper orthonormal matrix (RᵀR = 1, det R = +1)")
    return R


# --------------------------------------------------------------------- links
@dataclass
class Body:
    """A rigid link: mass (kg), centre of mass (m, body frame), inertia about the
    centre of mass (kg·m², body axes)."""
    name: str
    mass: float
    com: tuple = (0.0, 0.0, 0.0)
    inertia: object = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))

    def validate(self) -> None:
        owner = f"Body '{self.name}'"
        _finite_positive(owner, "mass", self.mass, allow_zero=True)
        _vec3(owner, "com", self.com)
        check_inertia(owner, self.mass, self.inertia)

    def mass_properties(self):
        return float(self.mass), np.asarray(self.com, float), np.asarray(self.inertia, float)


@dataclass
class Beam:
    """A straight link along local +x, rigid or flexible (RFEM).

    density kg/m³, area m², Iy, Iz second moments of area (bending about local
    y and z), m⁴, J torsion constant, m⁴, E Young's and G shear modulus, Pa.

    ``n_div`` sections of length d = length/n_div give n_div + 1 rigid finite
    elements (half-length end elements) and n_div spring-damping elements at the
    section centres, each a spherical joint Rz(ψ)·Ry(θ)·Rx(φ) with stiffness
    s_ψ = E·Iz/d, s_θ = E·Iy/d, s_φ = G·J/d (paper 001 eq. (7), paper 000
    eqs. (17)–(18)). ``damping`` is a stiffness-proportional coefficient β in s:
    each sde damper is β·s. ``n_div = 0`` makes the beam one rigid body.
    """
    name: str
    length: float
    density: float
    area: float
    Iy: float
    Iz: float
    J: float
    E: float
    G: float
    n_div: int = 0
    damping: float = 0.0

    def validate(self) -> None:
        owner = f"Beam '{self.name}'"
        for f in ("length", "density", "area", "E", "G"):
            _finite_positive(owner, f, getattr(self, f))
        for f in ("Iy", "Iz", "J"):
            _finite_positive(owner, f, getattr(self, f))
        _finite_positive(owner, "damping", self.damping, allow_zero=True)
        if not isinstance(self.n_div, (int, np.integer)) or not (0 <= self.n_div <= 1000):
            raise ValueError(f"{owner}: n_div must be an integer in [0, 1000] (got {self.n_div!r})")

    @property
    def flexible(self) -> bool:
        return self.n_div > 0

    def mass_properties(self):
        return prism_segment(self.density, self.area, self.Iy, self.Iz, self.length)

    def rfe_lengths(self) -> np.ndarray:
        """Lengths of the rigid finite elements, paper 001 eq. (7)."""
        if self.n_div == 0:
            return np.array([self.length])
        d = self.length / self.n_div
        return np.array([0.5 * d] + [d] * (self.n_div - 1) + [0.5 * d])

    def sde_stiffness(self) -> np.ndarray:
        """(s_ψ, s_θ, s_φ) of every sde: bending about z, bending about y, torsion (N·m/rad)."""
        d = self.length / self.n_div
        return np.array([self.E * self.Iz / d, self.E * self.Iy / d, self.G * self.J / d])


# --------------------------------------------------------------------- joints
@dataclass
class Joint:
    """A joint between ``parent`` (a link name or ``"ground"``) and ``child``.

    kind: one of ``fixed, revolute, prismatic, universal, spherical, free``.
    origin, rotation: placement of the joint frame in the parent link frame
    (for a parent :class:`Beam`, in its undeformed frame).
    axis: revolute/prismatic axis in the joint frame; ``axes`` the two axes of a
    universal joint (the second in the frame after the first rotation).
    q0, qd0: initial coordinates and rates (length = number of coordinates).
    actuated: the joint receives a driving torque/force input.
    friction: optional :class:`~fmu_mb.model.friction.Friction` (revolute and
    prismatic joints only).
    spring: optional (stiffness, damping, rest) per coordinate: a joint-space
    spring-damper, N·m/rad or N/m.
    stops: optional (lower, upper, stiffness, damping) per coordinate: joint limits
    (rad or m; ±inf for none) enforced by a penalty spring-damper that acts only
    beyond them, τ = −k·(q − limit) − c·q̇ (N·m/rad or N/m, N·m·s/rad or N·s/m).
    armature: reflected rotor inertia of the joint's drive per coordinate (kg·m² or kg;
    a motor rotor J_m behind a gear of ratio N reflects J_m·N²), added to the diagonal
    of M (MuJoCo's ``armature``, Pinocchio's ``model.armature``). It is a rotor turning
    with the coordinate's rate; its reaction on the stator (the parent link) and its
    gyroscopic terms are neglected, as in both engines.
    """
    name: str
    kind: str
    parent: str
    child: str
    origin: tuple = (0.0, 0.0, 0.0)
    rotation: object = None
    axis: tuple = (0.0, 0.0, 1.0)
    axes: tuple = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    q0: object = None
    qd0: object = None
    actuated: bool = False
    friction: Friction | None = None
    spring: tuple | None = None
    stops: tuple | None = None
    armature: object = 0.0

    @property
    def ndof(self) -> int:
        return len(JOINT_KINDS[self.kind])

    @property
    def coordinate_names(self) -> tuple:
        return JOINT_KINDS[self.kind]

    def validate(self) -> None:
        owner = f"Joint '{self.name}'"
        if self.kind not in JOINT_KINDS:
            raise ValueError(f"{owner}: kind must be one of {sorted(JOINT_KINDS)} (got {self.kind!r})")
        _vec3(owner, "origin", self.origin)
        if self.rotation is not None:
            _rotation(owner, self.rotation)
        if self.kind in ("revolute", "prismatic"):
            _unit(owner, "axis", self.axis)
        if self.kind == "universal":
            a1 = _unit(owner, "axes[0]", self.axes[0])
            a2 = _unit(owner, "axes[1]", self.axes[1])
            if abs(a1 @ a2) > 1.0 - 1e-9:
                raise ValueError(f"{owner}: universal joint axes must not be parallel")
        n = self.ndof
        for name in ("q0", "qd0"):
            v = getattr(self, name)
            if v is not None:
                a = np.atleast_1d(np.asarray(v, dtype=float))
                if a.shape != (n,) or not np.all(np.isfinite(a)):
                    raise ValueError(f"{owner}: {name} must hold {n} finite value(s) for a {self.kind} joint "
                                     f"(got {v!r})")
        if self.actuated and n == 0:
            raise ValueError(f"{owner}: a fixed joint cannot be actuated")
        if self.friction is not None:
            if self.kind not in ("revolute", "prismatic"):
                raise ValueError(f"{owner}: friction is modelled for revolute and prismatic joints only "
                                 f"(papers 000-002); got kind {self.kind!r}")
            self.friction.validate(owner)
        if self.spring is not None:
            if len(self.spring) != 3:
                raise ValueError(f"{owner}: spring must be (stiffness, damping, rest)")
            k, c, r = (np.broadcast_to(np.asarray(x, float), (n,)) for x in self.spring)
            if np.any(~np.isfinite(k)) or np.any(k < 0) or np.any(~np.isfinite(c)) or np.any(c < 0):
                raise ValueError(f"{owner}: spring stiffness and damping must be finite and >= 0")
            if np.any(~np.isfinite(r)):
                raise ValueError(f"{owner}: spring rest position must be finite")
        arm = np.asarray(self.armature, dtype=float)
        if arm.ndim > 1 or (arm.ndim == 1 and arm.shape != (n,)) or np.any(~np.isfinite(arm)) or np.any(arm < 0):
            raise ValueError(f"{owner}: armature must be one finite value >= 0 or {n} of them, kg·m² or kg "
                             f"(got {self.armature!r})")
        if np.any(arm > 0) and n == 0:
            raise ValueError(f"{owner}: a fixed joint has no coordinate to carry an armature")
        if self.stops is not None:
            if len(self.stops) != 4 or n == 0:
                raise ValueError(f"{owner}: stops must be (lower, upper, stiffness, damping) on a joint with "
                                 "coordinates")
            lo, hi, k, c = (np.broadcast_to(np.asarray(x, float), (n,)) for x in self.stops)
            if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo >= hi):
                raise ValueError(f"{owner}: stops need lower < upper (got {lo}, {hi})")
            if np.any(~np.isfinite(k)) or np.any(k <= 0) or np.any(~np.isfinite(c)) or np.any(c < 0):
                raise ValueError(f"{owner}: stop stiffness must be finite and > 0, damping finite and >= 0 "
                                 f"(got {k}, {c})")

    def placement_rotation(self) -> np.ndarray:
        return np.eye(3) if self.rotation is None else np.asarray(self.rotation, float)


# --------------------------------------------------------------------- supports, points
@dataclass
class Support:
    """A spring-damping element between a link and the ground (flexible base).

    point: attachment point in the link frame, m; stiffness (s_x, s_y, s_z), N/m,
    and damping (d_x, d_y, d_z), N·s/m, along the world axes (paper 000
    eqs. (15)–(16); paper 001's eight crane supports).
    """
    link: str
    point: tuple
    stiffness: tuple
    damping: tuple = (0.0, 0.0, 0.0)

    def validate(self, i: int) -> None:
        owner = f"Support #{i} on '{self.link}'"
        _vec3(owner, "point", self.point)
        s = _vec3(owner, "stiffness", self.stiffness)
        d = _vec3(owner, "damping", self.damping)
        if np.any(s < 0) or np.any(d < 0):
            raise ValueError(f"{owner}: stiffness and damping must be >= 0 (got {s}, {d})")


@dataclass
class Point:
    """A named point on a link (end effector, marker), position in the link frame, m."""
    name: str
    link: str
    position: tuple

    def validate(self) -> None:
        _vec3(f"Point '{self.name}'", "position", self.position)


@dataclass
class BodyForce:
    """A driving force input fixed in a link: magnitude (the input, N) times the unit
    ``direction`` (link frame) acting at ``point`` (link frame) — a follower force such as a
    propulsion force (paper 004's robot) or a thruster. With ``reaction_link`` the opposite
    force acts there at ``reaction_point`` (an actuator between two links, e.g. a linear
    motor in a translational pair). Its input ``<name>.force`` is held over each step like
    the joint drives."""
    name: str
    link: str
    point: tuple
    direction: tuple
    reaction_link: str | None = None
    reaction_point: tuple = (0.0, 0.0, 0.0)

    def validate(self) -> None:
        _vec3(f"BodyForce '{self.name}'", "point", self.point)
        _unit(f"BodyForce '{self.name}'", "direction", self.direction)
        _vec3(f"BodyForce '{self.name}'", "reaction_point", self.reaction_point)


# --------------------------------------------------------------------- mechanism
@dataclass
class Mechanism:
    """A complete mechanism description.

    support_model: ``"exact"`` — support deformation d = T^(b)·r̃_E − r_E0 with the
    full transform (paper 000 eq. (15)); ``"linearized"`` — d = U·q^(b) on the
    six base coordinates (paper 001, U^(sup,s)); only valid for supports on a
    link carried by a free joint to the ground.
    """
    name: str
    links: list = field(default_factory=list)
    joints: list = field(default_factory=list)
    supports: list = field(default_factory=list)
    points: list = field(default_factory=list)
    gravity: tuple = (0.0, 0.0, -9.81)
    support_model: str = "exact"
    description: str = ""
    constraints: list = field(default_factory=list)
    solver: ConstraintSolver = field(default_factory=ConstraintSolver)
    forces: list = field(default_factory=list)

    # ------------------------------------------------------------- building
    def add(self, link, joint: Joint):
        """Append a link and the joint that carries it; returns the link."""
        self.links.append(link)
        self.joints.append(joint)
        return link

    def link(self, name: str):
        for ln in self.links:
            if ln.name == name:
                return ln
        raise KeyError(f"mechanism '{self.name}' has no link named {name!r}")

    def joint(self, name: str) -> Joint:
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(f"mechanism '{self.name}' has no joint named {name!r}")

    def constraint(self, name: str) -> Constraint:
        for c in self.constraints:
            if c.name == name:
                return c
        raise KeyError(f"mechanism '{self.name}' has no constraint named {name!r}")

    # ------------------------------------------------------------- validation
    def validate(self) -> None:
        owner = f"Mechanism '{self.name}'"
        if not self.name or not self.name.replace("_", "").isalnum():
            raise ValueError(f"{owner}: name must be a non-empty identifier (letters, digits, _)")
        _vec3(owner, "gravity", self.gravity)
        if self.support_model not in ("exact", "linearized"):
            raise ValueError(f"{owner}: support_model must be 'exact' or 'linearized' "
                             f"(got {self.support_model!r})")
        names = [ln.name for ln in self.links]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"{owner}: duplicate link names {sorted(dup)}")
        if GROUND in names:
            raise ValueError(f"{owner}: '{GROUND}' is reserved for the fixed world frame")
        for ln in self.links:
            if not isinstance(ln, (Body, Beam)):
                raise TypeError(f"{owner}: links must be Body or Beam, got {type(ln).__name__}")
            ln.validate()
        jnames = [j.name for j in self.joints]
        dup = {n for n in jnames if jnames.count(n) > 1}
        if dup:
            raise ValueError(f"{owner}: duplicate joint names {sorted(dup)}")
        children = {}
        for j in self.joints:
            j.validate()
            if j.child not in names:
                raise ValueError(f"Joint '{j.name}': child {j.child!r} is not a link of {owner}")
            if j.parent != GROUND and j.parent not in names:
                raise ValueError(f"Joint '{j.name}': parent {j.parent!r} is not a link of {owner} "
                                 f"nor '{GROUND}'")
            if j.child in children:
                raise ValueError(f"{owner}: link {j.child!r} is the child of two joints "
                                 f"('{children[j.child]}' and '{j.name}'); close loops with constraints")
            children[j.child] = j.name
        orphans = [n for n in names if n not in children]
        if orphans:
            raise ValueError(f"{owner}: links {orphans} are not attached by any joint")
        # every link must reach the ground without cycles
        parent_of = {j.child: j.parent for j in self.joints}
        for n in names:
            seen, cur = set(), n
            while cur != GROUND:
                if cur in seen:
                    raise ValueError(f"{owner}: joints form a cycle through link {cur!r}")
                seen.add(cur)
                cur = parent_of[cur]
        for j in self.joints:
            if j.parent != GROUND:
                parent = self.link(j.parent)
                if isinstance(parent, Beam):
                    x = float(np.asarray(j.origin, float)[0])
                    if not (-1e-12 <= x <= parent.length + 1e-12):
                        raise ValueError(f"Joint '{j.name}': origin x = {x} lies outside beam "
                                         f"'{parent.name}' (0 ... {parent.length} m)")
        for i, s in enumerate(self.supports):
            s.validate(i)
            if s.link not in names:
                raise ValueError(f"Support #{i}: link {s.link!r} is not a link of {owner}")
        if self.support_model == "linearized" and self.supports:
            for i, s in enumerate(self.supports):
                j = self.joint(children[s.link])
                if j.kind != "free" or j.parent != GROUND:
                    raise ValueError(f"Support #{i}: the linearized support model needs link {s.link!r} "
                                     f"carried by a free joint to the ground (got {j.kind} joint "
                                     f"'{j.name}' from {j.parent!r})")
                if isinstance(self.link(s.link), Beam) and self.link(s.link).flexible:
                    raise ValueError(f"Support #{i}: supports on a flexible beam need support_model='exact'")
        self._validate_constraints(names)
        fnames = [f.name for f in self.forces]
        if len(set(fnames)) != len(fnames):
            raise ValueError(f"{owner}: duplicate body-force names")
        for f in self.forces:
            if not isinstance(f, BodyForce):
                raise TypeError(f"{owner}: forces must be BodyForce objects, got {type(f).__name__}")
            f.validate()
            if f.link not in names:
                raise ValueError(f"BodyForce '{f.name}': link {f.link!r} is not a link of {owner}")
            if f.reaction_link is not None and f.reaction_link not in names:
                raise ValueError(f"BodyForce '{f.name}': reaction_link {f.reaction_link!r} is not a link of {owner}")
        pnames = [p.name for p in self.points]
        if len(set(pnames)) != len(pnames):
            raise ValueError(f"{owner}: duplicate point names")
        for p in self.points:
            p.validate()
            if p.link not in names:
                raise ValueError(f"Point '{p.name}': link {p.link!r} is not a link of {owner}")

    def _validate_constraints(self, link_names) -> None:
        owner = f"Mechanism '{self.name}'"
        if not isinstance(self.solver, ConstraintSolver):
            raise TypeError(f"{owner}: solver must be a ConstraintSolver")
        self.solver.validate()
        cnames = [c.name for c in self.constraints]
        dup = {n for n in cnames if cnames.count(n) > 1}
        if dup:
            raise ValueError(f"{owner}: duplicate constraint names {sorted(dup)}")
        jnames = {j.name for j in self.joints}
        if set(cnames) & jnames:
            raise ValueError(f"{owner}: constraints and joints share names {sorted(set(cnames) & jnames)}")
        labels = []
        for c in self.constraints:
            if not isinstance(c, Constraint):
                raise TypeError(f"{owner}: constraints must be fmu_mb.model.constraints objects, "
                                f"got {type(c).__name__}")
            c.validate()
            for ln in c.links():
                if ln != GROUND and ln not in link_names:
                    raise ValueError(f"{type(c).__name__} '{c.name}': link {ln!r} is not a link of {owner}")
            for r in c.rows():
                labels.append(r.label)
                if r.kind == RowKind.COORD:
                    jn, k = r.dof
                    if jn not in jnames:
                        raise ValueError(f"{type(c).__name__} '{c.name}': joint {jn!r} is not a joint of {owner}")
                    j = self.joint(jn)
                    if not (0 <= k < j.ndof):
                        raise ValueError(f"{type(c).__name__} '{c.name}': coordinate {k} out of range for "
                                         f"{j.kind} joint '{jn}' (0 … {j.ndof - 1})")
            if isinstance(c, FixedBase) and self.joint(c.joint).kind != "free":
                raise ValueError(f"FixedBase '{c.name}': joint '{c.joint}' must be a free joint")
        dup = {n for n in labels if labels.count(n) > 1}
        if dup:
            raise ValueError(f"{owner}: duplicate constraint row labels {sorted(dup)}")
        bad = [e for e in self.solver.eliminate if e not in labels]
        if bad:
            raise ValueError(f"{owner}: solver.eliminate names unknown constraint rows {bad} "
                             f"(rows: {', '.join(labels)})")
