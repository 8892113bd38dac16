"""Five-axis tree-chain mechanism of paper 002 (section 5.1, Fig. 12, Table 2).

Topology: 1 ← ground, 2 ← 1, 3 ← 2, 4 ← 1, 5 ← 4; every joint revolute about z
(axis invariants n = [0 0 1]ᵀ), gravity g = [0 0 −9.8]ᵀ m/s², i.e. along the
axes: the mechanism moves in the horizontal plane and the joints carry the
weight as axial forces and bending moments.

Every number below is paper 002's Table 2 except where a comment says
"chosen". Paper 002's natural reference frames (section 2.1) keep every joint
frame parallel to the inertial frame at zero angle, so joint placements are
pure translations r_l^(0,l̄) in the parent frame.
"""
from __future__ import annotations

import numpy as np

from fmu_mb.model import Body, CoulombViscous, Joint, Mechanism, PinBearing, Point, Stribeck
from fmu_mb.model.choices import check_choices, friction_choice
from fmu_mb.model.options import Choice

#: joint placements r_l^(0, l̄) in the parent frame, m (Table 2, "initial linear position");
#: r_1 is not listed: joint 1 sits at the inertial origin.
PLACEMENT = {1: (0.0, 0.0, 0.0), 2: (-0.4, 0.0, 0.0), 3: (0.6, 1.0392, 0.0),
             4: (-0.2, 0.0, 0.0), 5: (0.6, -1.0392, 0.0)}
PARENT = {1: 0, 2: 1, 3: 2, 4: 1, 5: 4}
#: centres of mass r_lI^l in the link frame, m
COM = {1: (-0.2, 0.0, 0.0), 2: (0.3, 0.5196, 0.0), 3: (0.3, -0.5196, 0.0),
       4: (0.3, -0.5196, 0.0), 5: (0.3, 0.5196, 0.0)}
MASS = {1: 1.0, 2: 3.0, 3: 3.0, 4: 2.0, 5: 2.0}                    # kg
#: central inertia J_lI, kg·m². Table 2 gives diagonal tensors without the axes
#: they are diagonal in; we take the link frames. With every axis along z and z
#: a principal axis (J_yy = J_zz), any rotation about z of these tensors gives the
#: same motion and the same reactions, so the choice is immaterial.
INERTIA = {1: (0.002, 0.01, 0.01), 2: (0.008, 0.06, 0.06), 3: (0.008, 0.06, 0.06),
           4: (0.005, 0.04, 0.04), 5: (0.005, 0.04, 0.04)}
GRAVITY = (0.0, 0.0, -9.8)
QDD = 0.2                       # driving angular acceleration of every joint, rad/s²

# friction coefficients, Table 2
K_C, K_V, K_S, V_S = 0.005, 0.01, 0.05, 0.03
# Equivalent normal load (eq. 47): R_n, R_p, R_b are not given. Chosen for a
# Ø20 mm pin in a pair of bearings 40 mm apart with a Ø30 mm thrust collar — a
# plausible joint for 1–3 kg links 1.2 m long:
R_P = 0.010     # pin radius, m (chosen)
R_B = 0.040     # bending reaction arm = bearing span, m (chosen)
R_N = 0.015     # friction arm of the axial (thrust) face, m (chosen)
V_EPS = 1e-3    # regularisation velocity of sgn(q̇), rad/s (chosen: reached 5 ms after the start)
#: the friction option's laws (the same law and pin in every joint)
LAWS = {"coulomb_viscous": CoulombViscous(k_c=K_C, k_v=K_V, v_eps=V_EPS),
        "stribeck": Stribeck(k_c=K_C, k_s=K_S, v_s=V_S, k_v=K_V, v_eps=V_EPS)}
BEARING = PinBearing(R_n=R_N, R_p=R_P, R_b=R_B)


#: FMU parameters (fmu_mb.model.options) and defaults of the generated FMU
OPTIONS = {"friction": Choice(("none", "coulomb_viscous", "stribeck"), "none",
                              "joint friction law of paper 002: Coulomb-viscous eq. 42 or Stribeck eq. 52, "
                              "normal load eq. 47")}
FMU = {"step_size": 1e-3, "stop_time": 10.0}

#: the most detailed options (every physical effect the model has on): what the benchmarks, the accuracy
#: tests and the docs call "full detail" (fmu_mb.registry.most_detailed)
MOST_DETAILED = dict(friction="stribeck")



def build(friction: str = "none", actuated: bool = True) -> Mechanism:
    """The five-axis tree of paper 002. friction: 'none', 'coulomb_viscous' (eq. 42) or
    'stribeck' (eq. 52), normal load by eq. (47)."""
    check_choices("five_axis", OPTIONS, friction=friction)
    mech = Mechanism("five_axis", gravity=GRAVITY,
                     description="Five-axis tree-chain mechanism, paper 002 section 5.1 (Table 2)")
    for k in range(1, 6):
        mech.add(Body(f"link{k}", MASS[k], COM[k], np.diag(INERTIA[k])),
                 Joint(f"joint{k}", "revolute", "ground" if PARENT[k] == 0 else f"link{PARENT[k]}", f"link{k}",
                       origin=PLACEMENT[k], axis=(0.0, 0.0, 1.0), actuated=actuated,
                       friction=friction_choice("five_axis", friction, LAWS, BEARING)))
    # tips of the two branches (end of links 3 and 5: twice the centre of mass)
    mech.points.append(Point("tip3", "link3", (0.6, -1.0392, 0.0)))
    mech.points.append(Point("tip5", "link5", (0.6, 1.0392, 0.0)))
    return mech
