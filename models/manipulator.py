"""OLKC manipulator of paper 000 (section 3.1, eqs. 27-34, Figs. 4-11) tracking a rectangle.

Coordinates (paper 000 eq. 27): q = [q^(b) | φ^(1,1) ψ^(1,2) q_f^(1,2) ψ^(1,3) x^(1,4) x^(1,5)]:
a base with six coordinates (free joint, T^(b) = Trans·Rz(ψ)·Ry(θ)·Rx(φ), paper 001 eq. 12.1)
either on four spring-damping supports (S_fl, eqs. 15-16) or held by the base constraint
Φ_b = q^(b) = 0 (S_r, eq. 32); the column φ(1,1) turning about the vertical (its local x),
the shoulder ψ(1,2) and the elbow ψ(1,3) about their local z, link (1,2) rigid (L_r) or by the
rigid finite element method (L_fl, eqs. 17-18, RFEM sdes ψ θ φ), and two prismatic joints
x(1,4) (along link (1,3)) and x(1,5) (perpendicular to it, in the arm plane). E is a point on
(1,5). Joint friction (J_f): LuGre (eq. 22) in all five joints with the journal normal load
from the joint reaction (eqs. 20-21); J_nf: ideal joints.

Task (eqs. 28-29): E tracks the rectangle ABCD of the plane y^(P) z^(P) = the vertical plane
x = 0.65 m, corner to corner by rest-to-rest quintics of Δt^(E) = 1 s (eq. 28), stopping at the
corners: A→B horizontal (0.4 m along z), B→C up 0.3 m, C→D, D→A; all three coordinates of E are
constrained (J = I, n_p = 3), Baumgarte α = 1e3, β = 1e2 (eq. 33). Five joints minus three
programmed constraints leave two free joint coordinates (the reference dynamics has no drives):
the arm is a double pendulum around E. The geometry is chosen so that they hang in a stable
equilibrium: the upper arm (1,2) hangs from the top of the column, link (1,3) points forward-down
and slider (1,5) forward-up to E. The start values are that equilibrium for E at A (the
programmed constraint force alone holds the arm at rest), then E is moved 1 cm off A along
slider (1,5) (the "*" of Fig. 7, removed by Baumgarte; the slow pole −5.01 1/s leaves 1.6e-7 m
after 2.2 s). The two prismatic axes are perpendicular and E stays 0.58-0.79 m from the column
axis, so ∂r_E/∂q_joint has rank 3 in every configuration of the run (no singularity).

Figs. 4-5 and Tables 1-2 of paper 000 are lost: every number below is chosen, with its reason.
Dimensions in m, masses in kg, world y up (gravity −y, paper 000 eq. 13 uses j₂).
"""
from __future__ import annotations

import math

import numpy as np

from fmu_mb.model import Beam, Body, Joint, Journal, LuGre, Mechanism, Point, Support
from fmu_mb.model.choices import check_choices, friction_choice
from fmu_mb.model.constraints import ConstraintSolver, FixedBase, PointTrajectory
from fmu_mb.model.options import Choice, Count, Value
from fmu_mb.trajectories import Rectangle

GRAVITY = (0.0, -9.81, 0.0)     # paper 000 eq. (13): potential m·g·y_C, so gravity acts along −y

# ----------------------------------------------------------------- base {b} (origin: top-face centre)
BASE_MASS = 200.0               # steel pedestal 1.0 × 0.2 × 1.0 m (x, y, z), ≈ 1/8 solid: carries a 1 m arm
BASE_SIZE = (1.0, 0.2, 1.0)
SUPPORT_POINTS = [(sx, -0.2, sz) for sx in (-0.4, 0.4) for sz in (-0.4, 0.4)]   # 4 feet under the corners
#: N/m per foot (x, y vertical, z): rubber mounts, as for the RPSUP. Paper 001's crane values
#: (1e5, 1e7, 1e5 with y up) make this 216 kg machine sink 53 µm and tilt 2e-5 rad under the arm:
#: every S_fl run equalled its S_r twin to 4 digits, while paper 000 (Fig. 9) finds base
#: flexibility the strongest influence on the joint motion. These sink 5.3 mm, tilt ~2 mrad.
SUPPORT_K = (5e4, 1e5, 5e4)
SUPPORT_ZETA = 0.05             # damping ratio of the base translation modes: d_i = ζ·sqrt(s_i·M) per foot
MODEL_MASS = 216.0              # base + arm (for the damping above), kg

# ----------------------------------------------------------------- arm (lengths along each link's x)
COLUMN = (1.0, 10.0)            # column (1,1): height, mass (steel tube Ø100×4, 9.5 kg/m)
SHOULDER = (1.0, 0.0, 0.0)      # ψ(1,2) at the column top, in {1,1}
L2 = 0.6                        # upper arm (1,2), the flexible one
#: link (1,2) section: aluminium tube Ø20×1.5 (Iy = Iz = π/64·(D⁴ − d⁴), torsion constant 2·Iy),
#: 0.24 kg/m. With ψ(1,2) and ψ(1,3) undriven the link is pinned at both ends and carries the
#: arm below it mostly as an axial force: it bends by < 1 mm in the run (the scenario reports
#: it); its flexibility shows in the joint forces, not the motion, as paper 000 §3.1 says
TUBE_D, TUBE_T = 0.020, 0.0015
RHO, E_MOD, G_MOD = 2700.0, 7.0e10, 2.6e10
N_DIV = 4                       # RFEM sections (5 rfes, 4 sdes; paper 001 eq. 7); option n_div
#: sde damping, option model.damping: stiffness-proportional β (s), the modal damping ratio of a mode
#: ω being β·ω/2. The link's modes with the joints locked (tests/test_manipulator.py computes them from
#: M and the sde stiffness): 17 rad/s (the arm below swinging on the bent tube), 50, 91, 281, then the
#: short rfes' own modes 2.3e3 … 3.8e4 rad/s (torsion of the ~2e-5 kg·m² hubs).
#: DAMPING_LITERATURE = 1.2e-3 s puts 1 % of critical on the first mode, the low end of the 1–5 % that
#: structural dynamics assumes for jointed metal structures (the crane's option gives its base 2 %);
#: above ~1.7e3 rad/s the rfe modes are overdamped (fastest pole −β·ω² ≈ −1.8e6 1/s), which RK4 follows
#: only below h ≈ 1.6e-6 s (h·|λ| ≤ 2.785) and the linearly implicit methods take in their stride.
#: The default, SDE_DAMPING = 1e-6 s (1.5 % at the 2.9e4 rad/s torsion mode, 8.5e-6 at 17 rad/s: the
#: link's own vibration is practically undamped), because paper 000 gives no value (Table 2 lost) and
#: its RK4 at h = 1e-5 s — the reference runs at RK4_STEP = 2e-5 s — must run the default model (RK4 at
#: 2e-5 s holds up to β ≈ 9e-5 s). The literature value with the default ROS34PW2 step: see FMU below.
SDE_DAMPING = 1e-6
DAMPING_LITERATURE = 1.2e-3
L3 = 0.25                       # link (1,3): guide of slider (1,4), 2.0 kg
M3 = 2.0
A4 = 0.1                        # x(1,5) guide on the head of slider (1,4), 0.1 m ahead of its frame
M4, C4, LEN4 = 1.2, -0.1, 0.4   # slider (1,4): rod of 0.4 m from −0.3 to +0.1 in its frame
A5 = 0.1                        # E on slider (1,5), 0.1 m ahead of its frame (tool tip)
M5, C5, LEN5 = 0.8, -0.075, 0.35  # slider (1,5) with the effector: rod from −0.25 to +0.1
ROD_R = 0.02                    # radius for the rods' axial inertia

# ----------------------------------------------------------------- task (paper 000 eqs. 28-29)
PLANE_ORIGIN = (0.65, 0.3, -0.2)  # r_org^(P) = corner A; R^(P) = I: x^(P) is the normal of the vertical plane
RECT_W, RECT_H = 0.4, 0.3       # A→B along z^(P) (horizontal), B→C along y^(P) (up), m
MOVE_TIME = 1.0                 # Δt^(E) (paper 000)
ALPHA, BETA = 1e3, 1e2          # Baumgarte parameters (paper 000 §3.1)
#: start: the equilibrium of the arm held at A by E alone (rigid link, fixed base, no friction;
#: tests/test_manipulator.py checks it), then x(1,5) + 1 cm: E starts 1.0 cm from A
Q_START = {"phi11": 0.2985, "psi12": -0.2229, "psi13": -0.5847, "x14": 0.2948, "x15": 0.4080}
START_OFFSET = 0.01             # m, along slider (1,5)

# ----------------------------------------------------------------- friction (J_f), paper 000 eqs. 21-22
#: LuGre per unit normal load, at the sliding surface: Canudas de Wit et al.'s set (σ0 = 1e5 N/m,
#: σ1 = √1e5 N·s/m, σ2 = 0.4 N·s/m, F_c = 1 N, F_s = 1.5 N, v_s = 1 mm/s) divided by the 10 N load
#: that makes μ_k = 0.1: presliding displacement μ_k/σ0 = 10 µm
SIGMA0, SIGMA1, SIGMA2 = 1e4, 31.6, 0.04     # 1/m, s/m, s/m
MU_K, MU_S, V_STRIBECK = 0.1, 0.15, 1e-3     # -, -, m/s
#: journal diameters d of eq. (21.1), m: column bearing Ø60, shoulder and elbow pins Ø20; the
#: prismatic joints' normal load is the perpendicular reaction itself (eq. 21.2, no diameter)
JOURNAL_D = {"phi11": 0.06, "psi12": 0.02, "psi13": 0.02, "x14": 0.0, "x15": 0.0}


def lugre(joint: str) -> LuGre:
    """LuGre law of a joint. Revolute joints: the surface law in the joint angle, with the
    journal surface sliding at r·q̇ and deflecting by r·z (r = d/2): σ0, σ1, σ2 times r, the
    Stribeck velocity over r (so the angular σ0 is 1e4·r 1/rad, not 1e4)."""
    r = 0.5 * JOURNAL_D[joint]
    if r == 0.0:
        return LuGre(SIGMA0, SIGMA1, SIGMA2, MU_S, MU_K, V_STRIBECK)
    return LuGre(SIGMA0 * r, SIGMA1 * r, SIGMA2 * r, MU_S, MU_K, V_STRIBECK / r)


OPTIONS = {
    "base": Choice(("rigid", "flexible"), "rigid",
                   "base support: rigid (S_r, base constraint q_b = 0, paper 000 eq. 32) or four spring-damping "
                   "supports (S_fl, eqs. 15-16)"),
    "link": Choice(("rigid", "flexible"), "rigid",
                   "link (1,2): rigid (L_r) or rigid finite elements (L_fl, eqs. 17-18)"),
    "friction": Choice(("none", "lugre"), "none",
                       "joint friction: ideal joints (J_nf) or LuGre in all five joints with the journal normal "
                       "load from the joint reaction (J_f, eqs. 20-22)"),
    "mode": Choice(("programmed", "torque"), "programmed",
                   "programmed: E tracks the rectangle (eq. 29, Baumgarte eq. 33); torque: no programmed "
                   "constraint, the five joints are driven by their tau_drive inputs"),
    "formulation": Choice(("gpme", "lagrange"), "gpme",
                          "constrained equations: reduced GPME (paper 000 eq. 26/33) or Lagrange multipliers"),
    "n_div": Count(N_DIV, 1, 20, "RFEM sections of link (1,2) when flexible (n_div + 1 rfes, n_div sdes)"),
    "armature": Value(0.0, 0.0, 10.0, "kg.m2",
                      "reflected rotor inertia of each revolute drive (phi11, psi12, psi13): motor rotor times "
                      "gear ratio squared, on the joint coordinate; 0 = paper 000's ideal drives. Set it for "
                      "torque-mode control with the flexible link (see the model file)"),
    "damping": Value(SDE_DAMPING, 0.0, 1e-2, "s",
                     "stiffness-proportional damping beta of link (1,2)'s sdes (modal ratio beta*omega/2). Default "
                     "1e-6: the link practically undamped, as paper 000's RK4 at 1e-5 s needs; 1.2e-3 (the "
                     "literature's 1 % at the link's first mode, 17 rad/s) for the linearly implicit integrators: "
                     "RK4 then needs a step below 1.6e-6 s"),
}
RK4_STEP = 2e-5     # s: the reference runs (scenarios, tests) integrate with RK4 at this step
# The FMU's default is the third-order Rosenbrock-W method ROS34PW2 (solver.integrator = 3) at 1.25 ms: at full
# detail (S_fl L_fl J_f, LuGre) it stays within 5.0e-4 rad/m of RK4 at RK4_STEP over the 4 s scenario (2.7e-4 at
# 1 ms, 7.1e-4 at 1.5 ms; 1.2e-4 at 0.1 ms, where what is left is the link's 2.9e4 rad/s sde vibration, which no
# step above ~1e-5 s follows), its joint-force RMS (eq. 34) within 1.8e-3 relative, the violation bounds of
# Fig. 8 hold, and through FMPy it runs at 13.7× real time (11.4× at 1 ms: 1.25 ms keeps margin on both
# targets, 1e-3 and 10×; bench/realtime.py, tests/kernels/test_linearly_implicit.py). ROS2 needs
# 0.48 ms for 9.6e-4 (γ = 1 − 1/√2; the error is the psi13 swing's phase after x15 and x14 break away), which
# is about 10× real time: no margin. RK4 at RK4_STEP (solver.integrator = 0) stays for reference runs.
# (In torque mode with the flexible link and LuGre the small-γ methods' first step used to diverge; a step
# that leaves LuGre's invariant set is now redone by the damped ROS2, and the next 2.5 ms are stepped by it too,
# kernels.linearly_implicit._guarded_steps: every option combination at every n_div runs at the default.)
# Torque mode with the flexible link L_fl: the first rfe of link (1,2) is a hub of ~2e-5 kg·m² between ψ(1,2)
# and the first sde, and paper 000's drives are ideal (the torque acts on the hub alone). A drive law feeding
# back ψ(1,2)'s rate every 10 ms (a PD law tuned on the arm's 3 kg·m²) then acts on the hub alone within a
# communication step, and the loop is unstable with every method, RK4 at RK4_STEP and no friction included
# (runs fail within 10-90 ms). A real arm has its motor's rotor behind a gear at ψ(1,2): option armature
# (J_m·N², kg·m², on the three revolute drives; default 0 = the paper). With 0.5 kg·m² (load-to-rotor
# inertia 5.6 at ψ(1,2), inside the servo sizing rule of ≤ 10) S_fl L_fl J_f runs 20 s at rated drives at the
# default step, as RK4 at RK4_STEP does (tests/kernels/test_linearly_implicit.py); 0.2 kg·m² still fails (k_d·dt/J_a
# = 2.1 > 2). With the rigid link, S_fl L_r J_f in torque mode runs 20 s at rated drives with every method.
# With model.damping = DAMPING_LITERATURE the default step runs S_fl L_fl J_f 5.4e-4 from RK4 at 1.25e-6 s, and
# its tenth step 9.7e-7 (the damping removes the sde vibration that stops the default damping's convergence at
# 1.4e-4 above); joint-force RMS within 1.9e-3 (tests/test_manipulator.py).
FMU = {"step_size": 1.25e-3, "method": "ros34pw2", "stop_time": 4.0, "static_start": True}

#: the most detailed options (every physical effect the model has on): what the benchmarks, the accuracy
#: tests and the docs call "full detail" (fmu_mb.registry.most_detailed)
MOST_DETAILED = dict(base="flexible", link="flexible", friction="lugre")



def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rod(name: str, mass: float, length: float, com_x: float) -> Body:
    """A slender rod along local x (length, centre of mass at com_x), radius ROD_R."""
    ia = 0.5 * mass * ROD_R ** 2
    it = mass * (length ** 2 / 12.0 + ROD_R ** 2 / 4.0)
    return Body(name, mass, (com_x, 0.0, 0.0), np.diag([ia, it, it]))


def tube_section():
    """(area, Iy = Iz, torsion constant) of link (1,2)'s tube."""
    D, d = TUBE_D, TUBE_D - 2.0 * TUBE_T
    area = math.pi / 4.0 * (D ** 2 - d ** 2)
    I = math.pi / 64.0 * (D ** 4 - d ** 4)
    return area, I, 2.0 * I


def rectangle() -> Rectangle:
    """ABCD in the y^(P) z^(P) plane: u = z^(P), v = y^(P); A = origin of {P}, closed, no dwell."""
    return Rectangle(centre_u=0.5 * RECT_W, centre_v=0.5 * RECT_H, width=RECT_W, height=RECT_H, axes=(2, 1),
                     move_time=MOVE_TIME, stop_time=0.0, closed=True, name="rectangle")


def build(base: str = "rigid", link: str = "rigid", friction: str = "none", mode: str = "programmed",
          formulation: str = "gpme", n_div: int = N_DIV, armature: float = 0.0,
          damping: float = SDE_DAMPING) -> Mechanism:
    """The manipulator of paper 000 §3.1 in variant S_{base}_L_{link}_J_{friction}; armature (kg·m²) on the
    revolute drives (0: the paper's ideal drives); damping β (s) of link (1,2)'s sdes (paper 000 eq. 18)."""
    check_choices("manipulator", OPTIONS, base=base, link=link, friction=friction, mode=mode,
                  formulation=formulation)
    armature = OPTIONS["armature"].check("armature", armature)
    damping = OPTIONS["damping"].check("damping", damping)
    mech = Mechanism("manipulator", gravity=GRAVITY,
                     description="OLKC manipulator of paper 000 §3.1 tracking a rectangle (programmed motion)")
    bx, by, bz = BASE_SIZE
    mech.add(Body("base", BASE_MASS, (0.0, -0.5 * by, 0.0),
                  np.diag([BASE_MASS * (by ** 2 + bz ** 2) / 12.0, BASE_MASS * (bx ** 2 + bz ** 2) / 12.0,
                           BASE_MASS * (bx ** 2 + by ** 2) / 12.0])),
             Joint("base", "free", "ground", "base"))
    q = dict(Q_START)
    q["x15"] += START_OFFSET

    def arm_joint(name, kind, parent, child, origin=(0.0, 0.0, 0.0), rotation=None, axis=(0.0, 0.0, 1.0)):
        return Joint(name, kind, parent, child, origin=origin, rotation=rotation, axis=axis, q0=[q[name]],
                     actuated=True, armature=armature if kind == "revolute" else 0.0,
                     friction=friction_choice("manipulator", friction, {"lugre": lambda: lugre(name)},
                                              Journal(JOURNAL_D[name])))

    h_col, m_col = COLUMN
    # {1,1}: x vertical (Rz(π/2)), φ(1,1) about it
    mech.add(_rod("link11", m_col, h_col, 0.5 * h_col),
             arm_joint("phi11", "revolute", "base", "link11", rotation=_rz(0.5 * math.pi), axis=(1.0, 0.0, 0.0)))
    area, I, J = tube_section()
    mech.add(Beam("link12", L2, RHO, area, I, I, J, E_MOD, G_MOD,
                  n_div=n_div if link == "flexible" else 0, damping=damping),
             arm_joint("psi12", "revolute", "link11", "link12", origin=SHOULDER, rotation=_rz(math.pi)))
    mech.add(_rod("link13", M3, L3, 0.5 * L3),
             arm_joint("psi13", "revolute", "link12", "link13", origin=(L2, 0.0, 0.0), rotation=_rz(0.5 * math.pi)))
    mech.add(_rod("link14", M4, LEN4, C4),
             arm_joint("x14", "prismatic", "link13", "link14", origin=(L3, 0.0, 0.0), axis=(1.0, 0.0, 0.0)))
    mech.add(_rod("link15", M5, LEN5, C5),
             arm_joint("x15", "prismatic", "link14", "link15", origin=(A4, 0.0, 0.0), rotation=_rz(0.5 * math.pi),
                       axis=(1.0, 0.0, 0.0)))
    mech.points.append(Point("E", "link15", (A5, 0.0, 0.0)))
    mech.points.append(Point("elbow", "link12", (L2, 0.0, 0.0)))
    for p in SUPPORT_POINTS:
        if base == "flexible":
            k = SUPPORT_K
            d = tuple(SUPPORT_ZETA * math.sqrt(s * MODEL_MASS) for s in SUPPORT_K)
        else:           # S_r: the feet stay in the description (same FMU interface) but carry nothing
            k = d = (0.0, 0.0, 0.0)
        mech.supports.append(Support("base", p, k, d))
    if base == "rigid":
        mech.constraints.append(FixedBase("base_fixed", "base"))
    if mode == "programmed":
        mech.constraints.append(PointTrajectory("path", "link15", (A5, 0.0, 0.0), rectangle(), axes=(0, 1, 2),
                                                frame=(np.eye(3), np.array(PLANE_ORIGIN))))
    # the paper starts off the path on purpose (Baumgarte removes it); the base constraint holds at q_b = 0
    # FMU start (init.static, default true): programmed mode at rest in the equilibrium with E at A
    # (fmu_mb.scenarios.manipulator.static_start with zero offset; the paper's 1 cm offset "*" is the
    # scenario's start); torque
    # mode with the joints held by their drives at their start values
    mech.solver = ConstraintSolver(formulation=formulation, alpha=ALPHA, beta=BETA, assemble=(),
                                   static_groups=("base", "programmed"),
                                   static_hold=() if mode == "programmed" else None)
    return mech

