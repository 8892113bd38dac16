"""A mechanism from plain robot data: the form a URDF file is read into (fmu_mb.interop.urdf).

A model file generated from a URDF holds its links and joints as Python literals and calls
:func:`build_robot`; it is packaged into the FMU like any model file, so the FMU needs neither
the URDF nor a URDF parser. The data follow URDF's conventions, which are fmu_mb's
(fmu_mb.model.description): a joint places its frame in the parent link frame (``origin``,
``rotation``: URDF's ``<origin xyz rpy>``), its axis is in that frame, the child link frame
is the moved joint frame; a link's centre of mass and its inertia about the centre of mass
are in the link frame (URDF's ``<inertial>`` rotated into it).

Mapping (the choices, with their reasons):

* ``revolute`` and ``continuous`` → revolute (the angle is a plain coordinate); ``prismatic`` →
  prismatic; ``fixed`` → fixed; ``floating`` and ``planar`` joints between links are refused.
* ``<limit lower upper>`` → joint stops (``limits="stops"``): a penalty spring-damper acting only
  beyond a limit (fmu_mb.model.description.Joint.stops), stiff enough that the joint's ``effort``
  limit pushes it STOP_TRAVEL past it (k = effort/δ, δ = 0.01 rad or 1 mm; 100 N·m or N where the
  file gives no effort), but no stiffer than a natural frequency of STOP_OMEGA on the inertia the
  joint moves at the start pose (k ≤ I·ω², so files with placeholder efforts stay integrable),
  critically damped on that inertia (c = 2·√(k·I)). ``limits="none"`` leaves the range free. ``effort`` and ``velocity`` are kept in
  the data, not enforced (a drive input is the user's torque; saturating it silently would hide it).
* The root link is welded to the ground (``base="fixed"``) or carried by the papers' 6-DOF
  base joint, coordinates x y z ψ θ φ, T = Trans·Rz(ψ)·Ry(θ)·Rx(φ) (paper 001 eq. 12.1;
  ``base="free"``), optionally on four spring-damping supports (``base="sprung"``, paper 000
  eqs. 15-16 / paper 001 eqs. 3-4).
* ``<dynamics damping="c" friction="F">`` → friction law CoulombViscous(k_c = 1, k_v = c) on a
  FixedLoad(F): t_f = F·sgn_ε(q̇) + c·q̇ (option ``friction="urdf"``), or the papers' LuGre law on
  a journal load from the joint reaction (paper 000 eqs. 21-22; ``friction="lugre"``), or none.
* Every moving joint is actuated (a tau_drive input) except those named ``passive``.
* ``<mimic>`` joints are independent coordinates (as Pinocchio reads them by default).
* A link named in ``flexible`` (:class:`FlexibleLink`) becomes a straight RFEM beam (paper 001
  eq. 7, paper 000 eqs. 17-18) from its frame's origin to the origin of its child joint (the
  one named ``end`` if it has several), with the given section and material. The beam's frame
  has x along that segment and y along the link-frame axis most perpendicular to it (projected);
  the joint carrying the link and the joints it carries are re-expressed in that frame, so the
  kinematics of the rigid robot is unchanged. The beam's mass is ``density·area·length``, by
  default the link's URDF mass spread uniformly (``density=None``); the URDF's centre of mass
  and inertia of that link are replaced by the uniform beam's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .constraints import GROUND, CutJoint
from .description import Beam, Body, Joint, Mechanism, Point, Support
from .friction import CoulombViscous, FixedLoad, Friction, Journal, LuGre

#: URDF joint types (and MJCF's ball and free) and the fmu_mb joint kind each becomes
JOINT_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "fixed",
               "ball": "spherical", "free": "free"}
#: joint types of one coordinate (friction, stops and the start from the limits apply to these)
SCALAR_TYPES = ("revolute", "continuous", "prismatic")
BASES = ("fixed", "free", "sprung")
#: base="sprung" without support points: the corners of a 0.4 m square at z = 0 of the root frame, m
SUPPORT_POINTS = [(sx, sy, 0.0) for sx in (-0.2, 0.2) for sy in (-0.2, 0.2)]
#: ... and their stiffness, N/m, and damping, N·s/m, along the world axes, per support
SUPPORT_STIFFNESS, SUPPORT_DAMPING = (1e6, 1e6, 1e6), (1e3, 1e3, 1e3)
LIMITS = ("stops", "none")
#: travel beyond a joint limit at which the stop pushes back with the joint's effort limit: rad, m
STOP_TRAVEL = {"revolute": 1e-2, "prismatic": 1e-3}
#: highest natural frequency of a joint stop on the inertia its joint moves, rad/s (ω·h = 0.3 at 1 ms)
STOP_OMEGA = 300.0
#: effort assumed for a stop where the URDF gives none, N·m or N
STOP_EFFORT = 100.0
FRICTIONS = ("urdf", "lugre", "none")
#: the same laws for a model from an MJCF file: "mjcf" is the file's frictionloss (Coulomb of fixed size)
MJCF_FRICTIONS = ("mjcf", "lugre", "none")
#: regularisation velocity of sgn(q̇) for URDF Coulomb friction, rad/s or m/s
V_EPS = 1e-3
#: LuGre (friction="lugre") per unit normal load: Canudas de Wit et al.'s set over a 10 N load, as
#: the manipulator (models/manipulator.py); journal diameter of revolute joints, m
LUGRE = dict(sigma0=1e4, sigma1=31.6, sigma2=0.04, mu_s=0.15, mu_k=0.1, v_s=1e-3)
LUGRE_JOURNAL_D = 0.02


#: materials a FlexibleLink may name: Young's modulus Pa, shear modulus Pa, density kg/m³
MATERIALS = {"aluminium": (7.0e10, 2.6e10, 2700.0), "steel": (2.1e11, 8.1e10, 7850.0)}


@dataclass(frozen=True)
class FlexibleLink:
    """A link made flexible: section area m², second moments Iy, Iz m⁴ (bending about the beam's
    y and z), torsion constant J m⁴, moduli E, G Pa, ``n_div`` RFEM sections, stiffness-
    proportional sde damping β s (each sde damper = β·stiffness), density kg/m³ (None: the
    link's URDF mass over area·length) and the child joint at the beam's end (None: the only one)."""
    link: str
    area: float
    Iy: float
    Iz: float
    J: float
    E: float
    G: float
    n_div: int = 6
    damping: float = 2e-5
    density: float | None = None
    end: str | None = None


def section(shape: str, *dims: float) -> tuple:
    """(area, Iy, Iz, J) of a cross-section, m² and m⁴: ``tube`` (outer diameter, wall
    thickness), ``rod`` (diameter), ``rect`` (width along the beam's y, height along its z;
    torsion constant of Roark's formula for a solid rectangle)."""
    import math
    if any(not (math.isfinite(d) and d > 0.0) for d in dims):
        raise ValueError(f"section {shape}: dimensions must be finite and > 0 (got {dims})")
    if shape == "rod" and len(dims) == 1:
        dims = (dims[0], 0.5 * dims[0])
        shape = "tube"
    if shape == "tube" and len(dims) == 2:
        D, t = dims
        if t > 0.5 * D:
            raise ValueError(f"section tube: the wall thickness {t} m exceeds the radius {0.5 * D} m")
        d = D - 2.0 * t
        second = math.pi / 64.0 * (D ** 4 - d ** 4)
        return math.pi / 4.0 * (D ** 2 - d ** 2), second, second, 2.0 * second
    if shape == "rect" and len(dims) == 2:
        b, h = dims
        a, c = max(b, h), min(b, h)
        J = a * c ** 3 * (1.0 / 3.0 - 0.21 * c / a * (1.0 - c ** 4 / (12.0 * a ** 4)))
        return b * h, b * h ** 3 / 12.0, h * b ** 3 / 12.0, J
    raise ValueError(f"section {shape!r} with {len(dims)} dimension(s): use tube(D, t), rod(D) or rect(b, h)")


@dataclass(frozen=True)
class RobotLink:
    """A URDF link: mass (kg), centre of mass (m) and inertia about it (kg·m²), in the link frame."""
    name: str
    mass: float = 0.0
    com: tuple = (0.0, 0.0, 0.0)
    inertia: tuple = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


@dataclass(frozen=True)
class RobotJoint:
    """A URDF joint: type, parent and child links, placement (m, rotation matrix), axis, limits
    (lower, upper in rad or m; effort N·m or N; velocity rad/s or m/s; None where absent),
    damping (N·m·s/rad or N·s/m) and Coulomb friction (N·m or N), under the friction option.
    MJCF adds the types ``ball`` (spherical, ZYX Euler coordinates) and ``free``, the armature
    (kg·m² or kg), a passive spring-damper (stiffness, damping, rest: Joint.spring, always on) and
    explicit start coordinates (``start``; default from the limits, :func:`_start`)."""
    name: str
    type: str
    parent: str
    child: str
    origin: tuple = (0.0, 0.0, 0.0)
    rotation: tuple = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    axis: tuple = (1.0, 0.0, 0.0)
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0
    spring: tuple | None = None
    start: tuple | None = None


def _start(j: RobotJoint) -> float:
    """Start coordinate: the given one (``start``), else 0, or the middle of the limits where 0 lies outside
    them."""
    if j.start is not None:
        return float(j.start[0])
    lo = -math.inf if j.lower is None else j.lower
    hi = math.inf if j.upper is None else j.upper
    if lo <= 0.0 <= hi or not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0
    return 0.5 * (lo + hi)


def _axis_rotation(axis, angle) -> np.ndarray:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


def _moved_inertia(j: RobotJoint, kind: str, by_name: dict, children: dict) -> float:
    """Inertia (kg·m²) or mass (kg) that joint j moves: its subtree at the start pose, about its
    axis through its origin (revolute) or in total (prismatic)."""
    if kind == "prismatic":
        return _subtree_mass(j.child, by_name, children)
    a = np.asarray(j.axis, float) / np.linalg.norm(j.axis)
    total = 0.0

    def visit(link, R, p):                            # (R, p): the link frame in j's frame
        nonlocal total
        lk = by_name[link]
        c = R @ np.asarray(lk.com, float) + p
        Ic = R @ np.asarray(lk.inertia, float) @ R.T
        total += a @ Ic @ a + lk.mass * float(np.cross(a, c) @ np.cross(a, c))
        for cj in children.get(link, []):
            Rj = R @ np.asarray(cj.rotation, float)
            pj = R @ np.asarray(cj.origin, float) + p
            q = _start(cj)
            if cj.type in ("revolute", "continuous"):
                Rj = Rj @ _axis_rotation(cj.axis, q)
            elif cj.type == "prismatic":
                pj = pj + q * (Rj @ (np.asarray(cj.axis, float) / np.linalg.norm(cj.axis)))
            visit(cj.child, Rj, pj)
    visit(j.child, np.eye(3), np.zeros(3))
    return total


def _stops(j: RobotJoint, kind: str, by_name: dict, children: dict):
    """(lower, upper, stiffness, damping) of a joint with limits, or None (module doc)."""
    if j.lower is None and j.upper is None:
        return None
    lo = -math.inf if j.lower is None else j.lower
    hi = math.inf if j.upper is None else j.upper
    if not lo < hi:
        return None                                   # (a zero range, as some files give for unused joints)
    inertia = _moved_inertia(j, kind, by_name, children)
    if not inertia > 0.0:
        return None                                   # (nothing to stop: the joint moves no inertia)
    k = min((j.effort if j.effort else STOP_EFFORT) / STOP_TRAVEL[kind], inertia * STOP_OMEGA ** 2)
    return (lo, hi, k, 2.0 * math.sqrt(k * inertia))


def _friction(j: RobotJoint, law: str):
    if law == "none":
        return None
    if law in ("urdf", "mjcf"):
        if j.damping == 0.0 and j.friction == 0.0:
            return None
        return Friction(CoulombViscous(k_c=1.0, k_v=j.damping, v_eps=V_EPS), FixedLoad(j.friction))
    p = LUGRE
    if j.type == "prismatic":
        return Friction(LuGre(p["sigma0"], p["sigma1"], p["sigma2"], p["mu_s"], p["mu_k"], p["v_s"]), Journal(0.0))
    r = 0.5 * LUGRE_JOURNAL_D                       # the surface law in the joint angle (as the manipulator)
    return Friction(LuGre(p["sigma0"] * r, p["sigma1"] * r, p["sigma2"] * r, p["mu_s"], p["mu_k"], p["v_s"] / r),
                    Journal(LUGRE_JOURNAL_D))


def _subtree_mass(link: str, by_name: dict, children: dict) -> float:
    """Mass (kg) of ``link`` and every link below it."""
    return by_name[link].mass + sum(_subtree_mass(j.child, by_name, children) for j in children.get(link, []))


def _check_masses(name: str, by_name: dict, joints: list[RobotJoint], children: dict) -> None:
    """Refuse a moving joint that carries no mass at all (its row of M would be zero)."""
    for j in joints:
        if j.type != "fixed" and _subtree_mass(j.child, by_name, children) <= 0.0:
            raise ValueError(f"robot '{name}': joint '{j.name}' moves link '{j.child}' and everything below it, "
                             "which have no mass: its equation of motion is singular (give a link an <inertial> "
                             "or make the joint fixed)")


def _beam_frame(d: np.ndarray) -> np.ndarray:
    """Rotation whose x column is the unit vector of ``d`` and whose y column is the link-frame
    axis most perpendicular to it, projected (the beam frame in the link frame)."""
    e = d / np.linalg.norm(d)
    a = np.eye(3)[int(np.argmin(np.abs(e)))]
    y = a - (a @ e) * e
    y /= np.linalg.norm(y)
    return np.column_stack([e, y, np.cross(e, y)])


def _flexible_beams(name: str, by_name: dict, joints: list, children: dict, flexible) -> tuple[dict, dict]:
    """({link: (Beam, R_a)}, {joint: (origin, rotation, axis)} re-expressed in the beam frames)."""
    beams, placed = {}, {}
    for f in flexible:
        f = f if isinstance(f, FlexibleLink) else FlexibleLink(**f)
        owner = f"robot '{name}': flexible link '{f.link}'"
        if f.link not in by_name:
            raise ValueError(f"{owner}: no such link (links: {', '.join(by_name)})")
        carrier = [j for j in joints if j.child == f.link]
        if not carrier:
            raise ValueError(f"{owner}: the root link cannot be flexible (it has no joint to hang a beam from)")
        below = children.get(f.link, [])
        if f.end is not None:
            below_end = [j for j in below if j.name == f.end]
            if not below_end:
                raise ValueError(f"{owner}: end joint {f.end!r} is not a joint of that link "
                                 f"(its child joints: {', '.join(j.name for j in below) or 'none'})")
            end = below_end[0]
        elif len(below) == 1:
            end = below[0]
        else:
            raise ValueError(f"{owner}: it carries {len(below)} joints ({', '.join(j.name for j in below) or 'none'}); "
                             "name the one at the beam's end (end=JOINT)" if below else
                             f"{owner}: it carries no joint, so the beam has no end point (a flexible link runs "
                             "from its frame to its child joint)")
        d = np.asarray(end.origin, float)
        L = float(np.linalg.norm(d))
        if not L > 1e-6:
            raise ValueError(f"{owner}: its end joint '{end.name}' sits at its frame's origin (length {L} m): "
                             "nothing to bend")
        lk = by_name[f.link]
        density = f.density
        if density is None:
            if not lk.mass > 0.0:
                raise ValueError(f"{owner}: it has no URDF mass to spread along the beam: give density=")
            density = lk.mass / (f.area * L)
        beams[f.link] = (Beam(f.link, L, density, f.area, f.Iy, f.Iz, f.J, f.E, f.G, n_div=int(f.n_div),
                              damping=f.damping), _beam_frame(d))
    for j in joints:
        R, p, ax = np.asarray(j.rotation, float), np.asarray(j.origin, float), np.asarray(j.axis, float)
        if j.child in beams:                         # the joint frame becomes the beam frame
            Ra = beams[j.child][1]
            R, ax = R @ Ra, Ra.T @ ax
        if j.parent in beams:                        # placed in the beam frame of its parent
            Ra = beams[j.parent][1]
            R, p = Ra.T @ R, Ra.T @ p
        placed[j.name] = (p, R, ax)
    return {k: b for k, (b, _) in beams.items()}, placed


def build_robot(name: str, links, joints, root: str, base: str = "fixed", friction: str = "urdf",
                gravity=(0.0, 0.0, -9.81), support_stiffness=SUPPORT_STIFFNESS, support_damping=SUPPORT_DAMPING,
                support_points=None, passive=(), flexible=(), limits: str = "stops",
                description: str = "", cuts=()) -> Mechanism:
    """The Mechanism of a robot (links: RobotLink, joints: RobotJoint, root: the root link's name).

    base: "fixed" (root welded to the ground), "free" (6-DOF base joint ``floating_base``) or
    "sprung" (the same on four supports at ``support_points``, root-link frame, m, default the
    corners of a 0.4 m square at z = 0, with world-axis stiffness N/m and damping N·s/m per
    support). friction: "urdf", "lugre" or "none", limits: "stops" or "none" (module doc). passive: names of moving joints
    without a drive input. flexible: FlexibleLink (or its fields as a dict) per flexible link.
    cuts: a CutJoint (or its fields as a dict) per loop closure (MJCF's connect and weld equalities).
    Every leaf link (no child joint) gets a Point of its name at its frame's origin (a flexible leaf: at
    its tip): the tool frames whose position, velocity, angular velocity and orientation its FMUs output.
    """
    links = [lk if isinstance(lk, RobotLink) else RobotLink(*lk) for lk in links]
    joints = [j if isinstance(j, RobotJoint) else RobotJoint(**j) for j in joints]
    if base not in BASES:
        raise ValueError(f"robot '{name}': base must be one of {', '.join(BASES)} (got {base!r})")
    if limits not in LIMITS:
        raise ValueError(f"robot '{name}': limits must be one of {', '.join(LIMITS)} (got {limits!r})")
    if friction not in FRICTIONS + MJCF_FRICTIONS:
        raise ValueError(f"robot '{name}': friction must be one of "
                         f"{', '.join(dict.fromkeys(FRICTIONS + MJCF_FRICTIONS))} (got {friction!r})")
    by_name = {lk.name: lk for lk in links}
    if root not in by_name:
        raise ValueError(f"robot '{name}': root link {root!r} is not among its links")
    for j in joints:
        if j.type not in JOINT_TYPES:
            raise ValueError(f"robot '{name}': joint '{j.name}' has type {j.type!r}; supported: "
                             f"{', '.join(JOINT_TYPES)} (a floating or planar joint between links is not)")
        for end in ("parent", "child"):
            if getattr(j, end) not in by_name:
                raise ValueError(f"robot '{name}': joint '{j.name}' names {end} link {getattr(j, end)!r}, "
                                 "which is not among the links")
        for key in ("lower", "upper"):
            v = getattr(j, key)
            if v is not None and not math.isfinite(v):
                raise ValueError(f"robot '{name}': joint '{j.name}': limit {key} = {v} is not finite (None: no limit)")
        if j.lower is not None and j.upper is not None and j.lower > j.upper:
            raise ValueError(f"robot '{name}': joint '{j.name}': limit lower = {j.lower:g} exceeds upper = "
                             f"{j.upper:g} (swap them)")
    if base == "fixed" and all(j.type == "fixed" for j in joints):
        raise ValueError(f"robot '{name}': no moving joint (revolute, continuous or prismatic) on a fixed base: "
                         "nothing to simulate (a single rigid body moves on base='free' or 'sprung')")
    children: dict[str, list[RobotJoint]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    _check_masses(name, by_name, joints, children)
    unknown = sorted(set(passive) - {j.name for j in joints if j.type != "fixed"})
    if unknown:
        raise ValueError(f"robot '{name}': passive joints {unknown} are not moving joints of the robot")
    beams, placed = _flexible_beams(name, by_name, joints, children, flexible)
    mech = Mechanism(name, gravity=tuple(gravity), description=description or f"robot {name}")
    rl = by_name[root]
    if base == "fixed":
        mech.add(Body(rl.name, rl.mass, rl.com, rl.inertia), Joint(f"{root}_fixed", "fixed", GROUND, root))
    else:
        mech.add(Body(rl.name, rl.mass, rl.com, rl.inertia), Joint("floating_base", "free", GROUND, root,
                                                                   actuated=False))
    if base == "sprung":
        for p in SUPPORT_POINTS if support_points is None else support_points:
            mech.supports.append(Support(root, tuple(p), tuple(support_stiffness), tuple(support_damping)))

    def add_below(link: str) -> None:               # depth first, in the file's order
        for j in children.get(link, []):
            lk = by_name[j.child]
            kind = JOINT_TYPES[j.type]
            moving = kind != "fixed"
            origin, rotation, axis = placed[j.name]
            scalar = j.type in SCALAR_TYPES
            start = list(j.start) if j.start is not None else [_start(j)] if scalar else None
            mech.add(beams[lk.name] if lk.name in beams else Body(lk.name, lk.mass, lk.com, lk.inertia),
                     Joint(j.name, kind, j.parent, j.child, origin=tuple(map(float, origin)), rotation=rotation,
                           axis=tuple(axis / np.linalg.norm(axis)) if moving else (0.0, 0.0, 1.0),
                           q0=start if moving else None, actuated=moving and j.name not in passive,
                           friction=_friction(j, friction) if scalar else None,
                           stops=_stops(j, kind, by_name, children) if scalar and limits == "stops" else None,
                           armature=j.armature if moving else 0.0, spring=j.spring if moving else None))
            add_below(j.child)
    add_below(root)
    for lk in links:                        # tool frames: each leaf link's frame (a flexible one's tip) is a point,
        if lk.name != root and not children.get(lk.name):       # whose pose and velocity the FMU outputs
            tip = (float(beams[lk.name].length), 0.0, 0.0) if lk.name in beams else (0.0, 0.0, 0.0)
            mech.points.append(Point(lk.name, lk.name, tip))
    mech.constraints += [c if isinstance(c, CutJoint) else CutJoint(**c) for c in cuts]
    return mech
