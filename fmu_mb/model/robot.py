"""A mechanism from plain robot data: the form a URDF file is read into (fmu_mb.interop.urdf).

A model file generated from a URDF holds its links and joints as Python literals and calls
:func:`build_robot`; it is packaged into the FMU like any model file, so the FMU needs neither
the URDF nor a URDF parser. The data follow URDF's conventions, which are fmu_mb's
(fmu_mb.model.description): a joint places its frame in the parent link frame (``origin``,
``rotation``: URDF's ``<origin xyz rpy>``), its axis is in that frame, the child link frame
is the moved joint frame; a link's centre of mass and its inertia about the centre of mass
are in the link frame (URDF's ``<inertial>`` rotated into it).

Mapping (the choices, with their reasons):

* ``revolute`` and ``continuous`` → revolute (the angle is a plain coordinate; limits are kept
  in the data but not enforced: fmu_mb has no joint stops); ``prismatic`` → prismatic;
  ``fixed`` → fixed; ``floating`` and ``planar`` joints between links are refused.
* The root link is welded to the ground (``base="fixed"``) or carried by the papers' 6-DOF
  base joint, coordinates x y z ψ θ φ, T = Trans·Rz(ψ)·Ry(θ)·Rx(φ) (paper 001 eq. 12.1;
  ``base="free"``), optionally on four spring-damping supports (``base="sprung"``, paper 000
  eqs. 15-16 / paper 001 eqs. 3-4).
* ``<dynamics damping="c" friction="F">`` → friction law CoulombViscous(k_c = 1, k_v = c) on a
  FixedLoad(F): t_f = F·sgn_ε(q̇) + c·q̇ (option ``friction="urdf"``), or the papers' LuGre law on
  a journal load from the joint reaction (paper 000 eqs. 21-22; ``friction="lugre"``), or none.
* Every moving joint is actuated (a tau_drive input).
* ``<mimic>`` joints are independent coordinates (as Pinocchio reads them by default).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .constraints import GROUND
from .description import Body, Joint, Mechanism, Support
from .friction import CoulombViscous, FixedLoad, Friction, Journal, LuGre

#: URDF joint types and the fmu_mb joint kind each becomes
JOINT_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "fixed"}
BASES = ("fixed", "free", "sprung")
FRICTIONS = ("urdf", "lugre", "none")
#: regularisation velocity of sgn(q̇) for URDF Coulomb friction, rad/s or m/s
V_EPS = 1e-3
#: LuGre (friction="lugre") per unit normal load: Canudas de Wit et al.'s set over a 10 N load, as
#: the manipulator (models/manipulator.py); journal diameter of revolute joints, m
LUGRE = dict(sigma0=1e4, sigma1=31.6, sigma2=0.04, mu_s=0.15, mu_k=0.1, v_s=1e-3)
LUGRE_JOURNAL_D = 0.02


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
    damping (N·m·s/rad or N·s/m) and Coulomb friction (N·m or N)."""
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


def _start(j: RobotJoint) -> float:
    """Start coordinate: 0, or the middle of the limits where 0 lies outside them."""
    lo = -math.inf if j.lower is None else j.lower
    hi = math.inf if j.upper is None else j.upper
    if lo <= 0.0 <= hi or not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0
    return 0.5 * (lo + hi)


def _friction(j: RobotJoint, law: str):
    if law == "none":
        return None
    if law == "urdf":
        if j.damping == 0.0 and j.friction == 0.0:
            return None
        return Friction(CoulombViscous(k_c=1.0, k_v=j.damping, v_eps=V_EPS), FixedLoad(j.friction))
    p = LUGRE
    if j.type == "prismatic":
        return Friction(LuGre(p["sigma0"], p["sigma1"], p["sigma2"], p["mu_s"], p["mu_k"], p["v_s"]), Journal(0.0))
    r = 0.5 * LUGRE_JOURNAL_D                       # the surface law in the joint angle (as the manipulator)
    return Friction(LuGre(p["sigma0"] * r, p["sigma1"] * r, p["sigma2"] * r, p["mu_s"], p["mu_k"], p["v_s"] / r),
                    Journal(LUGRE_JOURNAL_D))


def _check_masses(name: str, links: dict, joints: list[RobotJoint], root: str) -> None:
    """Refuse a moving joint that carries no mass at all (its row of M would be zero)."""
    children: dict[str, list[RobotJoint]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)

    def subtree_mass(link: str) -> float:
        return links[link].mass + sum(subtree_mass(j.child) for j in children.get(link, []))
    for j in joints:
        if j.type != "fixed" and subtree_mass(j.child) <= 0.0:
            raise ValueError(f"robot '{name}': joint '{j.name}' moves link '{j.child}' and everything below it, "
                             "which have no mass: its equation of motion is singular (give a link an <inertial> "
                             "or make the joint fixed)")


def build_robot(name: str, links, joints, root: str, base: str = "fixed", friction: str = "urdf",
                gravity=(0.0, 0.0, -9.81), support_stiffness=(1e6, 1e6, 1e6), support_damping=(1e3, 1e3, 1e3),
                support_points=None, description: str = "") -> Mechanism:
    """The Mechanism of a robot (links: RobotLink, joints: RobotJoint, root: the root link's name).

    base: "fixed" (root welded to the ground), "free" (6-DOF base joint ``floating_base``) or
    "sprung" (the same on four supports at ``support_points``, root-link frame, m, with world-axis
    stiffness N/m and damping N·s/m per support). friction: "urdf", "lugre" or "none" (module doc).
    """
    links = [lk if isinstance(lk, RobotLink) else RobotLink(*lk) for lk in links]
    joints = [j if isinstance(j, RobotJoint) else RobotJoint(**j) for j in joints]
    if base not in BASES:
        raise ValueError(f"robot '{name}': base must be one of {', '.join(BASES)} (got {base!r})")
    if friction not in FRICTIONS:
        raise ValueError(f"robot '{name}': friction must be one of {', '.join(FRICTIONS)} (got {friction!r})")
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
    _check_masses(name, by_name, joints, root)
    mech = Mechanism(name, gravity=tuple(gravity), description=description or f"robot {name}")
    rl = by_name[root]
    if base == "fixed":
        mech.add(Body(rl.name, rl.mass, rl.com, rl.inertia), Joint(f"{root}_fixed", "fixed", GROUND, root))
    else:
        mech.add(Body(rl.name, rl.mass, rl.com, rl.inertia), Joint("floating_base", "free", GROUND, root,
                                                                   actuated=False))
    if base == "sprung":
        pts = support_points if support_points is not None else \
            [(sx, sy, 0.0) for sx in (-0.2, 0.2) for sy in (-0.2, 0.2)]
        for p in pts:
            mech.supports.append(Support(root, tuple(p), tuple(support_stiffness), tuple(support_damping)))
    children: dict[str, list[RobotJoint]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)

    def add_below(link: str) -> None:               # depth first, in the file's order
        for j in children.get(link, []):
            lk = by_name[j.child]
            kind = JOINT_TYPES[j.type]
            moving = kind != "fixed"
            axis = np.asarray(j.axis, float)
            mech.add(Body(lk.name, lk.mass, lk.com, lk.inertia),
                     Joint(j.name, kind, j.parent, j.child, origin=tuple(j.origin),
                           rotation=np.asarray(j.rotation, float),
                           axis=tuple(axis / np.linalg.norm(axis)) if moving else (0.0, 0.0, 1.0),
                           q0=[_start(j)] if moving else None, actuated=moving,
                           friction=_friction(j, friction) if moving else None))
            add_below(j.child)
    add_below(root)
    return mech
