"""Planar mobile robot with a one-wheel trolley, paper 004 section 4 (redundant constraints).

Seven bodies in absolute coordinates q_i = (x_i, y_i, φ_i) (paper 004 eq. 28: every body
on a planar joint to the ground, n = 21): platform 1, steering linkage 2–6 (wheel carriers
2 and 3, tie rods 4 and 5, slider 6), trolley 7. Holonomic constraints (eq. 29, m = 17):
revolutes A–G (global x, y rows each), translational pair H between slider 6 and the
platform (offset and relative angle rows) and the driving constraint d(t) = displacement
of 6 relative to 1 along H. Nonholonomic knife edges W1–W5 (eq. 30, h = 5): W1 at B on
carrier 2, W2 at C on carrier 3, W3 and W4 on the platform's axle, W5 on the trolley.
Rows in the paper's order (1–2 A, …, 13–14 G, 15–16 H, 17 driving, 18–22 W1–W5; row 6 is
C.y and row 21 W4, as in section 4.4).

Reported (paper 004 eqs. 35–36, section 4.2): rank Φ_q = 17, rank Ψ = 4, rank C = 20,
p = 2 at every nonsingular configuration; the reactions at A, D, E, F, G, H, the driving
constraint and W5 are unique, those at B, C and W1–W4 are not; every elimination of the two
redundant rows gives the same motion. No forces act (F = 0): the robot coasts from its
initial velocity and is steered by d(t) only — a right turn, straight travel, a left turn.

Paper 004's figures, Table 1 (knife-edge data), Table 2 (masses) and the Appendix
(dimensions, joint equations) are lost; every number below is chosen, and the layout is
the one the reported ranks force (see LAYOUT). A propulsion-force input (default 0, the
paper's coasting run) and a steering-force input (an actuator in H) are added for
co-simulation.
"""
from __future__ import annotations

import math

import numpy as np

from fmu_mb.model import Body, BodyForce, Joint, Mechanism, Point
from fmu_mb.model.choices import check_choices
from fmu_mb.model.constraints import ConstraintSolver, CutJoint, KnifeEdge, RelativeDisplacement
from fmu_mb.model.options import Choice
from fmu_mb.codes import SegmentKind
from fmu_mb.trajectories import Param, TableTrajectory

#: LAYOUT — rank Ψ = 4 means the W3 and W4 rows are equal: a common axle; rank C = 20 at every
#: configuration and the same motion whichever redundant rows are dropped mean the normals of W1,
#: W2 and the axle meet in one point for every steering angle. A parallelogram or Ackermann
#: linkage does not do that exactly (the robot would lock in turns); a steering linkage mirrored
#: about the axle (W1 steered at the front, W2 counter-steered at the rear, θ_W2 = −θ_W1 exactly)
#: does, and reaches the ±90° inclination the paper mentions. Lengths in m (chosen):
L = 0.30          # half wheelbase: W1 (front) and W2 (rear) pivots B, C on the platform axis
W = 0.20          # half track of the axle W3/W4
B_ARM = 0.08      # steering arm of the wheel carriers 2 and 3
ROD = 0.15        # tie rods 4 and 5
X_A = -0.45       # hitch A on the platform
A7 = 0.25         # hitch to trolley centre
X_N = -0.10       # W5 behind the trolley centre

#: (mass kg, central moment of inertia kg·m²); centres of mass at the body frame origins (paper 004)
BODIES = {"platform": (20.0, 0.8), "carrier_front": (1.0, 2e-3), "carrier_rear": (1.0, 2e-3),
          "rod_front": (0.2, 4e-4), "rod_rear": (0.2, 4e-4), "slider": (0.5, 4e-3), "trolley": (5.0, 0.15)}
#: initial positions (x, y, φ) of the body frames: straight configuration, platform at the origin
Q0 = {"platform": (0.0, 0.0, 0.0), "carrier_front": (L, 0.0, 0.0), "carrier_rear": (-L, 0.0, 0.0),
      "rod_front": (L - B_ARM, -0.5 * ROD, 0.0), "rod_rear": (-(L - B_ARM), -0.5 * ROD, 0.0),
      "slider": (0.0, -ROD, 0.0), "trolley": (X_A - A7, 0.0, 0.0)}
V0 = 1.0          # m/s along x0: "the robot initially is moving along x0" (every body translates)
#: revolutes: (name, body i, s^(i), body j, s^(j)) — global x, y rows each
REVOLUTES = [("A", "platform", (X_A, 0.0), "trolley", (A7, 0.0)),
             ("B", "platform", (L, 0.0), "carrier_front", (0.0, 0.0)),
             ("C", "platform", (-L, 0.0), "carrier_rear", (0.0, 0.0)),
             ("D", "carrier_front", (-B_ARM, 0.0), "rod_front", (0.0, 0.5 * ROD)),
             ("E", "rod_front", (0.0, -0.5 * ROD), "slider", (L - B_ARM, 0.0)),
             ("F", "slider", (-(L - B_ARM), 0.0), "rod_rear", (0.0, -0.5 * ROD)),
             ("G", "rod_rear", (0.0, 0.5 * ROD), "carrier_rear", (B_ARM, 0.0))]
#: knife edges: (name, body, contact point, normal to the allowed direction), body frames (eq. 30)
KNIVES = [("W1", "carrier_front", (0.0, 0.0), (0.0, 1.0)), ("W2", "carrier_rear", (0.0, 0.0), (0.0, 1.0)),
          ("W3", "platform", (0.0, W), (0.0, 1.0)), ("W4", "platform", (0.0, -W), (0.0, 1.0)),
          ("W5", "trolley", (X_N, 0.0), (0.0, 1.0))]
#: redundant-row eliminations of paper 004 section 4.4 (rows 6 & 21, 18 & 21, 19 & 21)
ELIMINATIONS = {"min_norm": (), "C.y+W4": ("C.y", "W4"), "W1+W4": ("W1", "W4"), "W2+W4": ("W2", "W4")}


def slide_for_angle(theta: float) -> float:
    """Slide d of H that inclines W1 by θ (rad; θ < 0 right): d = ℓ − b sin θ − √(ℓ² − b²(1 − cos θ)²)."""
    return ROD - B_ARM * math.sin(theta) - math.sqrt(ROD ** 2 - (B_ARM * (1.0 - math.cos(theta))) ** 2)


def steering_table(v, time, par) -> int:
    """Segment table of :class:`Steering` from its parameters v = (right, left, t_right, t_left, ramp,
    hold): per turn a quintic ramp of the slide from 0 to d(θ), a hold, a ramp back (rows 0–3, p̂ in
    component 0); 1 where the left turn would start before the right one ends."""
    right, left, t_right, t_left, ramp, hold = v[0], v[1], v[2], v[3], v[4], v[5]
    if t_left < t_right + 2.0 * ramp + hold:
        return 1
    for k in range(2):
        t0 = t_right if k == 0 else t_left
        d = slide_for_angle(right if k == 0 else left)
        time[2 * k, 0], time[2 * k, 1], par[2 * k, 3] = t0, t0 + ramp, d
        t1 = t0 + ramp + hold
        time[2 * k + 1, 0], time[2 * k + 1, 1], par[2 * k + 1, 0] = t1, t1 + ramp, d
    return 0


class Steering(TableTrajectory):
    """d(t) of the driving constraint (paper 004 Fig. 2, lost): straight, a right turn (quintic ramp
    to the steering angle ``right``, hold, ramp back), straight, a left turn, straight. The slide is
    d(θ) of :func:`slide_for_angle` (not affine in θ): the table is :func:`steering_table`'s, so the
    angles are inputs of the native FMU too."""
    PARAMS = {"right": Param("rad", "W1 inclination of the right turn (negative: right)", -1.2, 1.2),
              "left": Param("rad", "W1 inclination of the left turn", -1.2, 1.2),
              "t_right": Param("s", "start of the right turn", 0.0, 1e6),
              "t_left": Param("s", "start of the left turn", 0.0, 1e6),
              "ramp": Param("s", "duration of each steering ramp", 1e-3, 1e3),
              "hold": Param("s", "time at full steering", 0.0, 1e3)}
    KINDS = (SegmentKind.QUINTIC,) * 4
    CHECKS = ("the left turn must start after the right turn ends (t_left ≥ t_right + 2·ramp + hold)",)
    table_function = staticmethod(steering_table)

    def __init__(self, right=-math.radians(8.0), left=math.radians(8.0), t_right=1.0, t_left=6.0, ramp=1.0,
                 hold=1.0, name="steering"):
        self.right, self.left, self.t_right, self.t_left, self.ramp, self.hold = right, left, t_right, t_left, \
            ramp, hold
        self.name = name


OPTIONS = {
    "eliminate": Choice(tuple(ELIMINATIONS), "min_norm",
                        "how redundant constraints are handled: the minimum-norm multipliers (canonical) or "
                        "eliminating two rows as paper 004 section 4.4 (rows 6 & 21, 18 & 21, 19 & 21)"),
    "mode": Choice(("programmed", "torque"), "programmed",
                   "programmed: the slide d(t) steers (the paper's run); torque: no driving constraint, the "
                   "steering.force input drives the slider"),
    "formulation": Choice(("gpme", "lagrange"), "gpme",
                          "constrained equations: null-space form (paper 004 eq. 13, the GPME) or index-1 Lagrange "
                          "multipliers (eq. 11)"),
}
# The FMU's internal step: RK4 at 5 ms (issue 40). The robot coasts (one degree of freedom) with the steering slide
# d(t) driven; nothing in it is stiff (RK4's stability limit ≥ 0.22 s), and the positions and rates are solved after
# every step. Measured against RK4 at 1.25e-4 s over the 10 s run, largest |Δq| (m, rad) by the steering ramp's
# duration (Steering.ramp, an input: 1 s in the paper's run):
#   ramp      1 ms      2.5 ms    5 ms      10 ms
#   1 s       1.1e-11   1.5e-10   1.6e-10   2.1e-09
#   0.2 s     1.4e-10   4.5e-10   7.6e-09   1.4e-07
#   0.05 s    1.0e-09   9.9e-08   3.4e-06   1.4e-04
#   0.03 s    1.2e-08   1.3e-06   5.0e-05   2.5e-03
#   0.02 s    9.4e-08   1.1e-05   4.7e-04   2.6e-02
#   0.01 s    3.4e-06   4.7e-04   2.7e-02   1.2e-01
# so ramps shorter than 0.02 s want solver.step_size = 2.5 ms or less (as any ramp shorter than a few steps);
# in torque mode under the PD loop of tests/test_controlled_accuracy.py every step up to 10 ms is within 1.1e-12.
# A master's 1 ms communication steps make 1 ms steps (the remainder rule).
FMU = {"step_size": 5e-3, "stop_time": 10.0}

#: the most detailed options (every physical effect the model has on): what the benchmarks, the accuracy
#: tests and the docs call "full detail" (fmu_mb.registry.most_detailed)
MOST_DETAILED = dict()  # (no physics options)



def build(eliminate: str = "min_norm", mode: str = "programmed", formulation: str = "gpme") -> Mechanism:
    """The robot of paper 004 in absolute coordinates at the straight start configuration."""
    check_choices("mobile_robot", OPTIONS, eliminate=eliminate, mode=mode, formulation=formulation)
    mech = Mechanism("mobile_robot", gravity=(0.0, 0.0, -9.81),
                     description="Planar mobile robot with trolley, knife-edge wheels, paper 004 section 4")
    for name, (m, J) in BODIES.items():
        x, y, phi = Q0[name]
        # planar bodies: only J_zz acts; J_xx = J_yy = J/2 (a thin plate) keeps the tensor valid
        mech.add(Body(name, m, (0.0, 0.0, 0.0), np.diag([0.5 * J, 0.5 * J, J])),
                 Joint(name, "planar", "ground", name, q0=[x, y, phi], qd0=[V0, 0.0, 0.0]))
    for name, i, si, j, sj in REVOLUTES:
        mech.constraints.append(CutJoint(name, "revolute", i, j, origin_a=(*si, 0.0), origin_b=(*sj, 0.0),
                                         planar=True))
    # H: slider 6 slides along the platform's y axis (frame z axis = sliding direction)
    Rh = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    mech.constraints.append(CutJoint("H", "prismatic", "slider", "platform", origin_a=(0.0, 0.0, 0.0),
                                     origin_b=(0.0, -ROD, 0.0), rotation_a=Rh, rotation_b=Rh, planar=True))
    if mode == "programmed":
        mech.constraints.append(RelativeDisplacement("drive", "slider", (0.0, 0.0, 0.0), "platform", (0.0, -ROD, 0.0),
                                                     (0.0, 1.0, 0.0), Steering(), relative=False))
    for name, body, s, n in KNIVES:
        mech.constraints.append(KnifeEdge(name, body, (*s, 0.0), (*n, 0.0)))
    mech.forces += [BodyForce("propulsion", "platform", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
                    BodyForce("steering", "slider", (0.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                              reaction_link="platform", reaction_point=(0.0, -ROD, 0.0))]
    for name, body, s, _ in KNIVES:
        mech.points.append(Point(f"{name}_contact", body, (*s, 0.0)))
    # positions and velocities solved after every step (paper 004 integrates eq. 11 without
    # stabilisation; projection keeps the 10 s run on the constraint manifold to 1e-12)
    mech.solver = ConstraintSolver(formulation=formulation, projection=True, projection_tol=1e-12,
                                   eliminate=ELIMINATIONS[eliminate],
                                   assemble=("kinematic", "programmed", "nonholonomic"))
    return mech
