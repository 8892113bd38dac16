"""A two-link arm with a flexible forearm on a sprung base: the worked example of docs/mechanisms.md.

    fmu-mb build examples/two_link_arm.py        # -> dist/two_link_arm.fmu and dist/two_link_arm.md

A steel pedestal (a free 6-DOF base joint, paper 001 eq. 12.1) stands on four rubber mounts
(spring-damping supports, paper 000 eqs. 15-16). On it a shoulder and an elbow turn about the
horizontal y axis: a rigid upper arm, then an aluminium-tube forearm discretised by the rigid
finite element method (paper 001 eq. 7; paper 000 eqs. 17-18) when ``forearm="flexible"``.
Both joints are driven (tau_drive inputs) and may have LuGre friction on a journal load from
the joint reaction (paper 000 eqs. 20-22). Every number is chosen for a bench-top arm.
Units SI: m, kg, s, N, rad. World z up.
"""
from __future__ import annotations

import math

import numpy as np

from fmu_mb.model import (
    Beam,
    Body,
    Friction,
    Joint,
    Journal,
    LuGre,
    Mechanism,
    Point,
    Support,
)
from fmu_mb.model.constraints import ConstraintSolver
from fmu_mb.model.options import Choice, Count

GRAVITY = (0.0, 0.0, -9.81)

# base: a 40 kg steel block 0.4 x 0.4 x 0.1 m, origin at the centre of its top face
BASE_MASS, BASE_SIZE = 40.0, (0.4, 0.4, 0.1)
#: rubber mounts under the corners, N/m along world x, y, z, and their dampers, N·s/m
MOUNT_K = (2e5, 2e5, 5e5)
MOUNT_D = (400.0, 400.0, 600.0)
MOUNTS = [(sx, sy, -0.1) for sx in (-0.15, 0.15) for sy in (-0.15, 0.15)]

SHOULDER_HEIGHT = 0.3                     # m above the base's top face
UPPER = dict(length=0.4, mass=2.0)        # rigid upper arm along its x
#: forearm: aluminium tube Ø25 x 2 mm, 0.5 m (paper 001's section properties: area, Iy = Iz, J = 2·Iy)
TUBE_D, TUBE_T, FOREARM_LENGTH = 0.025, 0.002, 0.5
ALUMINIUM = dict(density=2700.0, E=7.0e10, G=2.6e10)
SDE_DAMPING = 2e-5                        # s, stiffness-proportional (each sde damper = β·stiffness)

#: LuGre per unit normal load (Canudas de Wit et al.'s set over 10 N, as models/manipulator.py),
#: written for the journal surface of a Ø20 mm pin: σ0, σ1, σ2 times r, the Stribeck velocity over r
PIN_D = 0.02


def lugre() -> Friction:
    r = 0.5 * PIN_D
    return Friction(LuGre(1e4 * r, 31.6 * r, 0.04 * r, 0.15, 0.1, 1e-3 / r), Journal(PIN_D))


def tube():
    """(area, second moment of area, torsion constant) of the forearm tube, m², m⁴, m⁴."""
    d = TUBE_D - 2.0 * TUBE_T
    area = math.pi / 4.0 * (TUBE_D ** 2 - d ** 2)
    second = math.pi / 64.0 * (TUBE_D ** 4 - d ** 4)
    return area, second, 2.0 * second


OPTIONS = {
    "forearm": Choice(("rigid", "flexible"), "flexible", "forearm: one rigid body or rigid finite elements (RFEM)"),
    "n_div": Count(6, 1, 20, "RFEM sections of the forearm when flexible (n_div + 1 rfes, n_div sdes)"),
    "friction": Choice(("none", "lugre"), "none", "joint friction: none, or LuGre on the journal load (paper 000)"),
}
#: the FMU's defaults: ROS2 at 1 ms (the sdes and mounts are stiff for RK4); start in static
#: equilibrium with the joints held by their drives at their start angles
FMU = {"step_size": 1e-3, "method": "ros2", "stop_time": 2.0, "static_start": True}


def build(forearm: str = "flexible", n_div: int = 6, friction: str = "none") -> Mechanism:
    """The arm with the forearm rigid or flexible, n_div RFEM sections, friction none or lugre."""
    mech = Mechanism("two_link_arm", gravity=GRAVITY, description="two-link arm, flexible forearm, sprung base")
    bx, by, bz = BASE_SIZE
    mech.add(Body("base", BASE_MASS, (0.0, 0.0, -0.5 * bz),
                  np.diag([BASE_MASS / 12 * (by ** 2 + bz ** 2), BASE_MASS / 12 * (bx ** 2 + bz ** 2),
                           BASE_MASS / 12 * (bx ** 2 + by ** 2)])),
             Joint("base", "free", "ground", "base"))
    for p in MOUNTS:
        mech.supports.append(Support("base", p, MOUNT_K, MOUNT_D))
    law = lugre() if friction == "lugre" else None
    L, m = UPPER["length"], UPPER["mass"]
    mech.add(Body("upper", m, (0.5 * L, 0.0, 0.0), np.diag([1e-4, m * L ** 2 / 12, m * L ** 2 / 12])),
             Joint("shoulder", "revolute", "base", "upper", origin=(0.0, 0.0, SHOULDER_HEIGHT), axis=(0, 1, 0),
                   q0=[-0.3], actuated=True, friction=law))
    area, second, torsion = tube()
    mech.add(Beam("forearm", FOREARM_LENGTH, ALUMINIUM["density"], area, second, second, torsion, ALUMINIUM["E"],
                  ALUMINIUM["G"], n_div=n_div if forearm == "flexible" else 0, damping=SDE_DAMPING),
             Joint("elbow", "revolute", "upper", "forearm", origin=(L, 0.0, 0.0), axis=(0, 1, 0), q0=[0.3],
                   actuated=True, friction=law))
    mech.points.append(Point("tip", "forearm", (FOREARM_LENGTH, 0.0, 0.0)))
    mech.solver = ConstraintSolver()
    return mech
