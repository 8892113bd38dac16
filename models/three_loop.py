"""Planar three-loop closed-chain mechanism of paper 002 (section 5.2, Fig. 16, Table 3).

Seven links (1, 2, 3, 4, 1', 2', 1''), ten revolute joints about z, gravity −y
(in the plane of motion), one degree of freedom. Spanning tree (paper 002 eq. 61):
1 ← ground, 2 ← 1, 3 ← 2, 4 ← 1, 1' ← ground, 2' ← 1', 1'' ← ground; three cut
joints close the loops: cut 1 between 2' and 1'' (points 2'IS ≡ 1''S), cut 2 between
2' and 4 (2'IIS ≡ 4S), cut 3 between 3 and 4 (3S ≡ 4S) — links 2', 3 and 4 meet in
one compound hinge. The active joint 1'' turns at 0.1 rad/s (Table 3) — a
programmed coordinate function φ_1''(t) = 0.1·t whose multiplier is the driving
torque (paper 002 eq. 65); the six passive angles and the cut forces follow.

Every number is paper 002's Table 3 except where a comment says "derived" or
"chosen". Lengths in m (Table 3 gives none; m is the only reading consistent with
kg, kg·m² and m/s²). In the natural reference systems of the paper every joint
frame is parallel to the inertial frame at zero angle, so Table 3's vectors are
the configuration with every joint at 0, and every joint placement is a pure
translation.

Reaction sign convention: each cut joint reports the force on the link the paper
applies l_c'S^cS to (eq. 26): cut 1 on link 1'', cut 2 on link 4, cut 3 on link 3
(``link_a`` of the CutJoint), in the cut's frame (parallel to the link frame).
"""
from __future__ import annotations

import numpy as np

from fmu_mb.model import Body, CoulombViscous, Joint, Mechanism, PinBearing, Stribeck
from fmu_mb.model.choices import check_choices, friction_choice
from fmu_mb.model.constraints import ConstraintSolver, CoordinateConstraint, CutJoint
from fmu_mb.model.options import Choice
from fmu_mb.trajectories import Linear

# joint-to-joint and cut-point vectors in the parent / own link frame (Table 3), m
R2_1 = (0.0737, -0.0676, 0.0)       # O_1 → O_2 on link 1
R3_2 = (-0.0451, -0.0217, 0.0)      # O_2 → O_3 on link 2
R3S_3 = (-0.0375, 0.0249, 0.0)      # O_3 → 3S on link 3
R4_1 = (0.0368, -0.0338, 0.0)       # O_1 → O_4 on link 1
R4S_4 = (-0.0457, -0.0306, 0.0)     # O_4 → 4S on link 4
R2P_1P = (-0.0079, -0.0544, 0.0)    # O_1' → O_2' on link 1'
R2PIIS_2P = (0.049, -0.01, 0.0)     # O_2' → 2'IIS on link 2'
R2PIS_2P = (-0.049, 0.01, 0.0)      # O_2' → 2'IS on link 2'
R1PPS_1PP = (-0.0069, -0.0445, 0.0)  # O_1'' → 1''S on link 1''
# Ground pivots: not in Table 3. Derived by closing the loops at the tabulated
# configuration: loop 2 gives O_1' = O_1 + (−0.05, 0) exactly, loop 1 then gives
# O_1'' = O_1 + (−0.1, 0.0001) (the 0.1 mm is the 4-decimal rounding of the table).
O1, O1P, O1PP = (0.0, 0.0, 0.0), (-0.05, 0.0, 0.0), (-0.1, 0.0001, 0.0)

#: centre of mass in the own link frame, m (Table 3). Link 2's COM equals r_3^{02}
#: (the COM on joint 3, where the other links have it at the midpoint); kept as printed.
COM = {"1": (0.0369, -0.0338, 0.0), "2": (-0.0451, -0.0217, 0.0), "3": (-0.0187, 0.0124, 0.0),
       "4": (-0.0229, -0.0153, 0.0), "1p": (-0.0039, -0.0272, 0.0), "2p": (0.0, 0.0, 0.0),
       "1pp": (-0.0034, -0.0222, 0.0)}
MASS = {"1": 2.0, "2": 2.0, "2p": 2.0, "3": 1.0, "1pp": 1.0, "4": 1.2, "1p": 1.2}     # kg
INERTIA = {"1": (0.005, 0.04, 0.04), "2": (0.005, 0.04, 0.04), "2p": (0.005, 0.04, 0.04),
           "3": (0.002, 0.01, 0.01), "1pp": (0.002, 0.01, 0.01),
           "4": (0.003, 0.02, 0.02), "1p": (0.003, 0.02, 0.02)}                      # kg·m², central
GRAVITY = (0.0, -9.8, 0.0)
RATE = 0.1                      # driving angular velocity of joint 1'', rad/s
# friction of the active joint 1'' (Table 3); the passive joints are frictionless
K_C, K_V, K_S, V_S = 0.05, 0.01, 0.2, 0.1
# Pin geometry of eq. (47) is not given. In this planar model only the radial pin
# force acts (no bending moment, no axial force), so only R_p matters: chosen 5 mm
# (a Ø10 mm pin for links 45-100 mm long); R_b, R_n chosen for completeness.
R_P, R_B, R_N = 0.005, 0.02, 0.008
V_EPS = 1e-3                    # regularisation velocity of sgn(φ̇), rad/s (chosen)
#: the friction option's laws (joint 1'')
LAWS = {"coulomb_viscous": CoulombViscous(k_c=K_C, k_v=K_V, v_eps=V_EPS),
        "stribeck": Stribeck(k_c=K_C, k_s=K_S, v_s=V_S, k_v=K_V, v_eps=V_EPS)}
BEARING = PinBearing(R_n=R_N, R_p=R_P, R_b=R_B)

OPTIONS = {
    "friction": Choice(("none", "coulomb_viscous", "stribeck"), "none",
                       "friction of the active joint 1'': Coulomb-viscous (paper 002 eq. 42) or Stribeck (eq. 52), "
                       "normal load by eq. 47 from its reaction"),
    "mode": Choice(("programmed", "torque"), "programmed",
                   "programmed: joint 1'' follows 0.1 rad/s (the paper's run; the driving torque is its "
                   "tau_required); torque: the programmed constraint is off and joint1pp.tau_drive drives"),
    "formulation": Choice(("gpme", "lagrange"), "gpme",
                          "constrained equations: reduced GPME (paper 000 eq. 26) or Lagrange multipliers"),
}
# The FMU's internal step: RK4 at 2.5 ms (issue 40: the fewest steps that keep the motion within 1e-3 with a wide
# margin). The loop is slow (0.1 rad/s) and has no stiff element at its RK4 stability limit (≥ 17 ms in torque mode,
# ≥ 33 s programmed); measured against RK4 at ≤ 2.5e-4 s, most detailed options (Stribeck), largest |Δq|: the
# programmed run 5e-13 at 1, 2, 2.5 and 5 ms; torque mode under the PD loop of tests/test_controlled_accuracy.py
# 1.2e-8 at 1 ms, 2.4e-7 at 2 ms, 2.4e-6 at 2.5 ms, 2.0e-4 at 5 ms, 1.3e-3 at 10 ms; released in torque mode with no
# drive (the linkage falls, the Stribeck joint sticking and slipping) 3.2e-5 at 1 ms, 1.2e-4 at 2.5 ms over 5 s.
# A master's 1 ms communication steps make 1 ms steps (the remainder rule: one step per communication step).
FMU = {"step_size": 2.5e-3, "stop_time": 10.0}

#: the most detailed options (every physical effect the model has on): what the benchmarks, the accuracy
#: tests and the docs call "full detail" (fmu_mb.registry.most_detailed)
MOST_DETAILED = dict(friction="stribeck")



def build(friction: str = "none", mode: str = "programmed", formulation: str = "gpme") -> Mechanism:
    """The three-loop mechanism of paper 002 at its tabulated configuration (all angles 0)."""
    check_choices("three_loop", OPTIONS, friction=friction, mode=mode, formulation=formulation)
    mech = Mechanism("three_loop", gravity=GRAVITY,
                     description="Planar three-loop closed chain, paper 002 section 5.2 (Table 3)")
    z = (0.0, 0.0, 1.0)

    def link(name, parent, origin, **kw):
        mech.add(Body(f"link{name}", MASS[name], COM[name], np.diag(INERTIA[name])),
                 Joint(f"joint{name}", "revolute", "ground" if parent is None else f"link{parent}", f"link{name}",
                       origin=origin, axis=z, **kw))

    link("1", None, O1)
    link("2", "1", R2_1)
    link("3", "2", R3_2)
    link("4", "1", R4_1)
    link("1p", None, O1P)
    link("2p", "1p", R2P_1P)
    link("1pp", None, O1PP, actuated=True, friction=friction_choice("three_loop", friction, LAWS, BEARING), qd0=[RATE])
    mech.constraints += [
        CutJoint("cut1", "revolute", "link1pp", "link2p", origin_a=R1PPS_1PP, origin_b=R2PIS_2P, planar=True),
        CutJoint("cut2", "revolute", "link4", "link2p", origin_a=R4S_4, origin_b=R2PIIS_2P, planar=True),
        CutJoint("cut3", "revolute", "link3", "link4", origin_a=R3S_3, origin_b=R4S_4, planar=True),
    ]
    if mode == "programmed":
        mech.constraints.append(CoordinateConstraint("drive", "joint1pp",
                                                     trajectory=Linear(rate=RATE, unit="rad", name="drive")))
    # positions solved after every step (loop closure to 1e-12), not only stabilised; the
    # start is made consistent with the loops and the drive (passive rates from eq. 61)
    mech.solver = ConstraintSolver(formulation=formulation, projection=True, projection_tol=1e-12,
                                   assemble=("kinematic", "programmed"))
    return mech
