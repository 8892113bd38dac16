"""Closed-loop RPSUP mechanism of paper 000 (section 3.2, Figs. 12–20, eqs. 35–37).

Two open chains on a common base (6-DOF free joint, on spring-damping supports,
eqs. 15–16, or held by the fixed-base constraint Φ_b = q^(b) = 0, eq. 32):

* chain 1: R ψ(1,1) — link (1,1) — P x(1,2) — link (1,2) — S (ψ, θ, φ of (1,3,0)) —
  coupler (1,3), rigid or RFEM-flexible (eqs. 17–18, paper 001 eq. 7);
* chain 2: P z(2,1) — slider (2,1) — R ψ(2,2) — cross (2,2).

The loop is closed by a revolute **cut joint** R between the coupler's end and the
cross (2,2) (paper 000: "the cut-joint is located at the revolute joint R connecting
the flexible link (1,3) with the slider"): 3 position + 2 axis rows, Φ_k. ψ(2,2) and the
cut R have perpendicular axes and meet at one point: together they are the U of RPSUP.
Mobility 1 + 1 + 3 + 1 + 1 + 1 − 6 = 2.

Programmed motion (eqs. 28, 29, 35): E follows the rectangle A→B→C→D→A in the
y^(P) z^(P) plane of the frame {P} rotated 45° about z^(0) with origin
(0.0384, 0.2335, 0) m (eq. 35), quintic moves of Δt = 1 s, no dwell. Two programmed
rows (y^(P), z^(P) of E) + 5 loop rows + 6 base rows = 13 = the coordinates of the
fully rigid mechanism: square eq. (37), as printed. Baumgarte α = 500, β = 50 (eq. 37).

**Everything the lost Fig. 12/13 and Tables 2/3 held is chosen here** (one place, one
line of reasoning each). Geometry (checked numerically: reach, rank and conditioning
along the whole rectangle, see tests/test_rpsup.py):

* E is the centre of the spherical joint S, on link (1,2); the ψ(1,1) axis is the
  normal x^(P) of the plane and the S centre moves in the plane of the arm, which *is*
  plane P. So E stays on P identically (the third row of eq. 29 would be redundant, hence
  only y^(P), z^(P) are programmed) and the RP arm positions E in polar coordinates
  (ψ(1,1), ρ = const + x(1,2)); the S-P-U chain is the passive closing loop.
* The slider guide z(2,1) is horizontal along x^(0) below the plane; ψ(2,2) turns the
  cross about z^(0) and the cut R axis is ⊥ to both z^(0) and the coupler: neither the
  U (coupler ∥ z^(0)) nor the slider (coupler ⊥ guide) comes near its singular position.
* At the rectangle centre every joint angle is 0, x(1,2) = 0, z(2,1) = 0.3 m.

Coordinates (order of the compiled model: chain 2 is attached before chain 1 so that
the coordinate addresses of the joints do not depend on the number of coupler sdes):
base x, y, z, ψ, θ, φ | P21 z(2,1), R22 ψ(2,2) | R11 ψ(1,1), P12 x(1,2),
S13 ψ, θ, φ of (1,3,0) | coupler.sde<k>.ψ, θ, φ (flexible coupler).

Drives: R11, P12 and P21 are actuated in every mode (torque mode: the programmed rows are
off and any two of the three inputs drive the 2 DOF; R11 + P12 place E directly).

Initial conditions. The description's start is the rigid configuration with E at A
and every elastic coordinate 0 (the loop closes exactly there, for every option).
Paper 000 starts "from solving the statics case": :func:`fmu_mb.scenarios.rpsup.static_start`
(loop and fixed-base rows enforced, ψ(1,1) and x(1,2) held, everything else in equilibrium)
gives that start; the scenario, the tests and the FMU (``init.static`` = true by default, from
the solver's ``static_hold``) use it. With a
flexible base E then starts 1.2 mm off A (the support sag), with a flexible coupler the
strip starts in its static deflection.

Outputs besides the core's: points E (S centre) and U (U centre, on the cross),
:func:`fmu_mb.scenarios.rpsup.coupler_shape` / :func:`~fmu_mb.scenarios.rpsup.chord_sag` for the
coupler deformation (Fig. 19).
"""
from __future__ import annotations

import math
import numpy as np

from fmu_mb.model import Beam, Body, Joint, Journal, LuGre, Mechanism, Point, Support
from fmu_mb.model.choices import check_choices, friction_choice
from fmu_mb.model.constraints import ConstraintSolver, CutJoint, FixedBase, PointTrajectory
from fmu_mb.model.options import Choice, ChoiceAccuracy, Count
from fmu_mb.trajectories import Rectangle, plane_frame

# --------------------------------------------------------------------------- printed in paper 000
PLANE_ANGLE = math.radians(45.0)            # eq. (35): {P} rotated 45° about z^(0)
PLANE_ORIGIN = (0.0384, 0.2335, 0.0)        # eq. (35): r_org^(P), m
ALPHA, BETA = 500.0, 50.0                   # Baumgarte coefficients (section 3.2)
MOVE_TIME = 1.0                             # Δt^(E) per rectangle side, s (section 3.1, eq. 28)
GRAVITY = (0.0, -9.81, 0.0)                 # paper 000's potential m·g·y_C (j₂ in eq. 13): y up

# --------------------------------------------------------------------------- chosen: trajectory
WIDTH = 0.15        # side A→B along y^(P) (up the 45° slope), m: the mechanism is a few tenths of a metre
HEIGHT = 0.10       # side B→C along z^(P) (horizontal), m: a rectangle, not a square, so AB and BC differ
# A = origin of {P} (z_org^(P) = 0 suggests P was put at the start corner), corners in (y^(P), z^(P)):
CORNERS = {"A": (0.0, 0.0), "B": (WIDTH, 0.0), "C": (WIDTH, HEIGHT), "D": (0.0, HEIGHT)}
STOP_TIME = 4.5     # four 1 s moves and 0.5 s at rest at A, s

# --------------------------------------------------------------------------- chosen: geometry
PIVOT_P = (0.0, -0.325, 0.05)   # ψ(1,1) axis piercing point in {P} (x^P, y^P, z^P): 0.40 m below the
                                # rectangle centre along y^(P), so the arm points up the slope
L11 = 0.15          # ψ(1,1) axis → x(1,2) slide origin along link (1,1), m
L12 = 0.25          # link (1,2) origin → S centre (= E), m; ρ = L11 + x(1,2) + L12 = 0.40 m at the centre
COUPLER_LENGTH = 0.80   # S centre → U centre, m (spec: 0.6–0.8 m)
COUPLER_DIP = math.radians(35.0)    # coupler below the horizontal at the rectangle centre: (U−S)·guide = 0.82 L
Z21_HOME = 0.30     # slider coordinate at the rectangle centre (guide origin 0.3 m behind the U), m

# --------------------------------------------------------------------------- chosen: masses
# Links: steel parts of a bench-top mechanism. Inertias about the centre of mass, link axes.
LINK11 = (2.0, (0.10, 0.0, 0.0), np.diag([0.002, 0.015, 0.015]))   # rotating sleeve, 0.3 m tube, kg, m, kg·m²
LINK12 = (1.0, (0.10, 0.0, 0.0), np.diag([0.0005, 0.010, 0.010]))  # telescoping bar 0.35 m, S at its end
SLIDER21 = (1.0, (0.0, 0.0, 0.0), np.diag([1e-3, 1e-3, 1e-3]))     # carriage, centre on the guide axis
CROSS22 = (0.1, (0.0, 0.0, 0.0), np.diag([2e-5, 2e-5, 2e-5]))      # U spider, centre at the U centre
BASE = (60.0, (-0.35, -0.25, 0.05), np.diag([1.85, 11.6, 9.85]))   # welded frame 1.4 × 0.1 × 0.6 m under the mechanism
# Coupler (1,3): a spring-steel strip, thin side ⊥ the plane in which gravity bends it. Calibrated to
# paper 000's "deformation of the coupler around 4 cm at t = 2 s" (rigid support), read as the tip
# deflection in the coupler's own (rfe 0) frame, the RFEM frame of Fig. 19: (ρ g cos 35° L⁴)/(2 E t²)
# ≈ 4 cm gives t ≈ 1.25 mm (first bending mode ≈ 4 Hz). A round steel rod would have to be Ø1.4 mm.
STRIP_B, STRIP_T = 0.025, 0.00125   # width (local y) and thickness (local z), m
E_STEEL, G_STEEL, RHO_STEEL = 2.1e11, 8.1e10, 7850.0    # Pa, Pa, kg/m³
COUPLER_DAMPING = 5e-4  # stiffness-proportional sde damping β, s: ζ ≈ 0.7 % on the first bending mode
N_DIV = 4           # default number of sdes (spec: 4; paper 001 used a few rfes)

# --------------------------------------------------------------------------- chosen: base supports
# Four rubber mounts under the corners of the frame (paper 001's 1e5/1e7 N/m would make the base
# flexibility invisible for a 65 kg machine: 0.02 mm sag; paper 000 says it moves E visibly off A):
# 1.6 mm static sag, base modes 9–22 Hz, ≈ 5 % damping (d = 2·0.05·sqrt(s·m/4), m/4 = 16 kg per mount).
SUPPORT_POINTS = [(-1.0, -0.30, -0.25), (0.30, -0.30, -0.25), (-1.0, -0.30, 0.35), (0.30, -0.30, 0.35)]
SUPPORT_STIFFNESS = (5e4, 1e5, 5e4)     # s_x, s_y (vertical), s_z per mount, N/m
SUPPORT_DAMPING = (90.0, 130.0, 90.0)   # d_x, d_y, d_z per mount, N·s/m

# --------------------------------------------------------------------------- chosen: friction
# LuGre (eq. 22) per unit normal load in the four R/P joints (eq. 20; S and the cut R are frictionless).
# σ0: presliding deflection μ_k/σ0 = 20 µrad / 20 µm; RK4 needs h·σ0·|q̇|/μ_k < 2.8 (|q̇| ≤ 0.7 here).
LUGRE = LuGre(sigma0=5e3, sigma1=30.0, sigma2=0.01, mu_s=0.15, mu_k=0.10, v_s=0.01)
JOURNAL = {"R11": 0.040, "P12": 0.0, "P21": 0.0, "R22": 0.012}   # journal diameters d (eq. 21.1), m

OPTIONS = {
    "base": Choice(("rigid", "flexible"), "rigid",
                   "base support: rigid (fixed-base constraint, paper 000 eq. 32) or four spring-damping "
                   "supports (eqs. 15-16)"),
    "coupler": Choice(("rigid", "flexible"), "rigid",
                      "coupler (1,3): rigid, or flexible by the rigid finite element method (eqs. 17-18)"),
    "friction": Choice(("none", "lugre"), "none",
                       "joint friction: none, or LuGre (eq. 22) in R11, P12, P21, R22 with the normal load "
                       "from the joint reactions (eq. 21)"),
    "mode": Choice(("programmed", "torque"), "programmed",
                   "programmed: E follows the rectangle (eqs. 29, 35); torque: no programmed constraints, "
                   "the actuated joints R11, P12, P21 are driven by their tau_drive inputs"),
    "formulation": Choice(("gpme", "lagrange"), "gpme",
                          "constrained equations: reduced GPME (paper 000 eq. 37) or Lagrange multipliers"),
    "n_div": Count(N_DIV, 1, 5, "number of spring-damping elements of the flexible coupler (the default step "
                                "is stable up to 5)"),
}
# RK4 step: stable iff |λ|·h < 2.785 for every eigenvalue λ of the state equations. At h = 5e-5 s:
# Baumgarte's fast pole −997.5 1/s → 0.05; the coupler's fastest pole, the overdamped in-plane sde
# mode −1.83e4 1/s (n_div = 4; ∝ n_div⁴ through the stiffness-proportional damping, −4.8e4 at
# n_div = 5) → 0.92 (2.39); base supports ≤ 140 1/s; LuGre's bristle pole −σ0|q̇|/μ_k with the
# largest joint rate of the programmed motion, 0.63 rad/s (R22) → 1.57 (torque mode: stable while
# the friction joints stay below 1.1 rad/s or m/s). Accuracy: q(t) at h and h/2 differ by
# 7.5e-10 over 4.5 s for S_fl_L_fl_J_f (tests/test_rpsup.py checks 0.5 s). Paper 000: h = 1e-5 s.
RK4_STEP = 5e-5     # s: the reference runs (scenarios, tests) integrate with RK4 at this step
# The FMU's default: ROS2 with γ = 1 − 1/√2 (solver.integrator = 2; kernels.linearly_implicit) at
# 1 ms. At the most detailed options (S_fl L_fl J_f) over the 4.5 s scenario it stays within 3.1e-5
# of RK4 at RK4_STEP (the damped γ = 1 + 1/√2: 4.1e-4) and runs at 14× real time through FMPy at a
# 10 ms communication step (bench/realtime.py); RK4 at RK4_STEP, solver.integrator = 0, runs at 0.5×.
# At 2 ms it diverges where R22 breaks away (its stage overshoots the bristle); the damped γ runs there.
FMU = {"step_size": 1e-3, "method": "ros2_lowdamp", "stop_time": STOP_TIME, "static_start": True}

#: the most detailed options (every physical effect the model has on): what the benchmarks, the accuracy
#: tests and the docs call "full detail" (fmu_mb.registry.most_detailed)
MOST_DETAILED = dict(base="flexible", coupler="flexible", friction="lugre")

# In torque mode under a controller, LuGre's stick-slip is where ROS2 loses its accuracy: S_fl L_fl J_f driven by
# a PD law (10 ms, ω = 10 rad/s, ζ = 0.7) about the programmed run, 5 s (tests/test_controlled_accuracy.py),
# against ROS34PW2 at 1e-5 s (RK4 at 5e-6 s within 2.4e-10 of it): ros2_lowdamp 5.8e-3 rad (m) off at 1 ms,
# 1.5e-3 at 0.5 ms, 2.5e-4 at 0.25 ms; the damped ros2 7.9e-3 at 1 ms and 7.2e-3 at 0.5 ms; ros34pw2 1.6e-5 at
# 1 ms (6.3e-6 at 0.5 ms). Without LuGre ros2_lowdamp at 1 ms stays within 1.0e-5. So with LuGre the FMU's
# solver.integrator = auto runs ros34pw2 (at 1 ms: 1.3x the cost of a ros2_lowdamp step at these options).
_LOOP = "torque mode, PD law at 10 ms about the programmed run, 5 s (tests/test_controlled_accuracy.py)"
ACCURACY = (
    ChoiceAccuracy("friction", "lugre", dict(ros34pw2=1e-3, ros2_lowdamp=2.5e-4, rk4=5e-6),
                   "LuGre's stick-slip: ros2_lowdamp at 1 ms ends 5.8e-3 off, the damped ros2 7.9e-3", run=_LOOP),
)
#: held in the statics that give the initial conditions (paper 000 §3.2): the arm joints that place E
STATIC_HOLD = ("R11.q", "P12.q")


# --------------------------------------------------------------------------- derived geometry
def _Rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _Ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _Rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


R_P, O_P = plane_frame(PLANE_ANGLE, PLANE_ORIGIN)
X_P, Y_P, Z_P = R_P[:, 0], R_P[:, 1], R_P[:, 2]
PIVOT = O_P + R_P @ np.asarray(PIVOT_P)                  # ψ(1,1) axis point, world (= base frame at q_b = 0)
R11_FRAME = np.column_stack([Y_P, Z_P, X_P])            # joint frame of ψ(1,1): z = plane normal, x up the slope
CENTRE_P = (0.5 * WIDTH, 0.5 * HEIGHT)
S_HOME = O_P + CENTRE_P[0] * Y_P + CENTRE_P[1] * Z_P     # S centre at the rectangle centre
D_HOME = np.array([-math.cos(COUPLER_DIP), -math.sin(COUPLER_DIP), 0.0])   # S → U, unit
U_HOME = S_HOME + COUPLER_LENGTH * D_HOME
GUIDE = np.array([1.0, 0.0, 0.0])                       # z(2,1) direction, world
GUIDE_ORIGIN = U_HOME - Z21_HOME * GUIDE
R21_FRAME = _Ry(math.pi / 2)                            # slider joint frame: local z = guide (+x^(0))
R22_FRAME = _Ry(-math.pi / 2)                           # cross joint frame in the slider: local z = z^(0)
CUT_AXIS_HOME = np.cross(np.array([0.0, 0.0, 1.0]), D_HOME)    # cut R axis ⊥ z^(0) and ⊥ coupler
CUT_AXIS_HOME /= np.linalg.norm(CUT_AXIS_HOME)
R_COUPLER_HOME = np.column_stack([D_HOME, np.cross(CUT_AXIS_HOME, D_HOME), CUT_AXIS_HOME])
R_S_FRAME = R11_FRAME.T @ R_COUPLER_HOME                # S joint frame on link (1,2): angles 0 at the centre
# the arm reaches the rectangle centre with ψ(1,1) = 0 and x(1,2) = 0
assert abs(L11 + L12 - (CENTRE_P[0] - PIVOT_P[1])) < 1e-12 and abs(CENTRE_P[1] - PIVOT_P[2]) < 1e-12


def _zyx(R):
    """(ψ, θ, φ) with R = Rz(ψ)·Ry(θ)·Rx(φ)."""
    return (math.atan2(R[1, 0], R[0, 0]), -math.asin(max(-1.0, min(1.0, R[2, 0]))),
            math.atan2(R[2, 1], R[2, 2]))


def configuration(y_p: float, z_p: float) -> dict:
    """Joint coordinates of the rigid mechanism on the rigid base with E at (y^(P), z^(P))
    (closed-form inverse kinematics; the branch with the U on the −x side and the cross
    near ψ(2,2) = 0)."""
    dy, dz = y_p - PIVOT_P[1], z_p - PIVOT_P[2]
    psi11 = math.atan2(dz, dy)
    x12 = math.hypot(dy, dz) - L11 - L12
    S = O_P + y_p * Y_P + z_p * Z_P
    h2 = COUPLER_LENGTH**2 - (U_HOME[1] - S[1]) ** 2 - (U_HOME[2] - S[2]) ** 2
    if h2 <= 0.0:
        raise ValueError(f"rpsup: E at ({y_p}, {z_p}) is out of the coupler's reach")
    U = np.array([S[0] - math.sqrt(h2), U_HOME[1], U_HOME[2]])
    z21 = (U - GUIDE_ORIGIN) @ GUIDE
    d = (U - S) / COUPLER_LENGTH
    c0 = CUT_AXIS_HOME
    psi22 = math.atan(-(d[0] * c0[0] + d[1] * c0[1]) / (d[1] * c0[0] - d[0] * c0[1]))   # branch |ψ(2,2)| < 90°
    c = _Rz(psi22) @ c0
    Rc = np.column_stack([d, np.cross(c, d), c])
    R12 = R11_FRAME @ _Rz(psi11)
    s13 = _zyx((R12 @ R_S_FRAME).T @ Rc)
    return {"R11": psi11, "P12": x12, "S13": s13, "P21": z21, "R22": psi22}


def coupler_beam(flexible: bool, n_div: int = N_DIV) -> Beam:
    b, t = STRIP_B, STRIP_T
    return Beam("coupler", COUPLER_LENGTH, RHO_STEEL, b * t, Iy=b * t**3 / 12, Iz=t * b**3 / 12,
                J=b * t**3 / 3 * (1 - 0.63 * t / b), E=E_STEEL, G=G_STEEL,
                n_div=n_div if flexible else 0, damping=COUPLER_DAMPING)


def build(base: str = "rigid", coupler: str = "rigid", friction: str = "none", mode: str = "programmed",
          formulation: str = "gpme", n_div: int = N_DIV) -> Mechanism:
    """The RPSUP mechanism of paper 000 section 3.2 with E at corner A (rigid configuration)."""
    check_choices("rpsup", OPTIONS, base=base, coupler=coupler, friction=friction, mode=mode,
                  formulation=formulation)

    def friction_of(joint):
        return friction_choice("rpsup", friction, {"lugre": LUGRE}, Journal(JOURNAL[joint]))

    mech = Mechanism("rpsup", gravity=GRAVITY,
                     description="Closed-loop RPSUP mechanism, paper 000 section 3.2 (eqs. 35-37)")
    q = configuration(*CORNERS["A"])
    mech.add(Body("base", *BASE), Joint("base", "free", "ground", "base"))
    # chain 2 first (see the module docstring)
    mech.add(Body("slider21", *SLIDER21),
             Joint("P21", "prismatic", "base", "slider21", origin=tuple(GUIDE_ORIGIN), rotation=R21_FRAME,
                   axis=(0.0, 0.0, 1.0), q0=[q["P21"]], actuated=True, friction=friction_of("P21")))
    mech.add(Body("cross22", *CROSS22),
             Joint("R22", "revolute", "slider21", "cross22", rotation=R22_FRAME, axis=(0.0, 0.0, 1.0),
                   q0=[q["R22"]], friction=friction_of("R22")))
    # chain 1
    mech.add(Body("link11", *LINK11),
             Joint("R11", "revolute", "base", "link11", origin=tuple(PIVOT), rotation=R11_FRAME,
                   axis=(0.0, 0.0, 1.0), q0=[q["R11"]], actuated=True, friction=friction_of("R11")))
    mech.add(Body("link12", *LINK12),
             Joint("P12", "prismatic", "link11", "link12", origin=(L11, 0.0, 0.0), axis=(1.0, 0.0, 0.0),
                   q0=[q["P12"]], actuated=True, friction=friction_of("P12")))
    mech.add(coupler_beam(coupler == "flexible", n_div),
             Joint("S13", "spherical", "link12", "coupler", origin=(L12, 0.0, 0.0), rotation=R_S_FRAME,
                   q0=list(q["S13"])))
    for p in SUPPORT_POINTS:
        mech.supports.append(Support("base", p, SUPPORT_STIFFNESS, SUPPORT_DAMPING))
    mech.points += [Point("E", "link12", (L12, 0.0, 0.0)),
                    Point("U", "cross22", (0.0, 0.0, 0.0))]
    mech.constraints.append(CutJoint("cut_R", "revolute", "coupler", "cross22",
                                     origin_a=(COUPLER_LENGTH, 0.0, 0.0), origin_b=(0.0, 0.0, 0.0),
                                     rotation_b=R_COUPLER_HOME))
    if base == "rigid":
        mech.constraints.append(FixedBase("fixed_base", "base"))
    if mode == "programmed":
        rect = Rectangle(centre_u=CENTRE_P[0], centre_v=CENTRE_P[1], width=WIDTH, height=HEIGHT, axes=(1, 2),
                         move_time=MOVE_TIME, stop_time=0.0, first=0, closed=True, name="rectangle")
        mech.constraints.append(PointTrajectory("path", "link12", (L12, 0.0, 0.0), rect, axes=(1, 2),
                                                frame=(R_P, O_P)))
    mech.solver = ConstraintSolver(formulation=formulation, alpha=ALPHA, beta=BETA, projection=False,
                                   assemble=("kinematic", "base"), static_hold=STATIC_HOLD)
    return mech

