"""The physics of the linear models: modes against beam theory and a rigid body on springs, and the
response of the linear model against the nonlinear simulation.

The crane's jib as a cantilever: its joints locked (the column, jib and arm joints made fixed at their
start angles), the base rigid, gravity off (no geometric stiffness), no damping. The arm is then a rigid
body at the jib's tip, and the in-plane bending frequencies of an Euler–Bernoulli cantilever with a tip
body (mass M, centre of mass offset c along the beam and e across it, inertia J_c) solve

    det [w(0) = 0, w'(0) = 0, EI w''(L) = ω²(J_O w'(L) + M c w(L)), EI w'''(L) = −ω² M (w(L) + c w'(L))] = 0,

J_O = J_c + M (c² + e²) (the offset across the beam moves the tip body along the axially rigid beam:
rotary inertia only), w = a₁ cos βx + a₂ sin βx + a₃ cosh βx + a₄ sinh βx, β⁴ = ω² ρA/EI.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
from scipy.spatial.transform import Rotation

from fmu_mb import registry
from fmu_mb.linearization import linearize
from fmu_mb.model import compile_mechanism
from fmu_mb.simulator import Simulator

crane = registry.load("crane")


def locked_crane(**options):
    """The crane with its column, jib and arm joints welded at their start angles, gravity off."""
    mech = crane.build(mode="torque", damping=0.0, **options)
    for j in mech.joints:
        if j.name in ("column", "jib", "arm"):
            R = np.eye(3) if j.rotation is None else np.asarray(j.rotation, float)
            j.rotation = R @ Rotation.from_rotvec(np.asarray(j.axis, float) * float(np.ravel(j.q0)[0])).as_matrix()
            j.kind, j.q0, j.qd0, j.actuated, j.friction = "fixed", None, None, False, None
    mech.gravity = (0.0, 0.0, 0.0)
    mech.solver.dependent = ()
    return mech


def cantilever_with_tip_body(E, I, rho_A, L, M, c, e, J_c, n: int, w_max: float = 5e3) -> np.ndarray:
    """The first n bending frequencies (Hz) of the module docstring's beam."""
    J_O = J_c + M * (c * c + e * e)

    def det(w):
        b = (w * w * rho_A / (E * I)) ** 0.25
        cs, sn, ch, sh = np.cos(b * L), np.sin(b * L), np.cosh(b * L), np.sinh(b * L)
        W = np.array([cs, sn, ch, sh])
        W1 = b * np.array([-sn, cs, sh, ch])
        W2 = b ** 2 * np.array([-cs, -sn, ch, sh])
        W3 = b ** 3 * np.array([sn, -cs, sh, ch])
        return np.linalg.det(np.array([[1, 0, 1, 0], [0, 1, 0, 1], E * I * W2 - w * w * (J_O * W1 + M * c * W),
                                       E * I * W3 + w * w * M * (W + c * W1)]))

    grid = np.linspace(1.0, w_max, 40000)
    vals = np.array([det(w) for w in grid])
    roots = [scipy.optimize.brentq(det, grid[i], grid[i + 1]) for i in range(grid.size - 1)
             if np.sign(vals[i]) != np.sign(vals[i + 1])]
    return np.array(roots[:n]) / (2 * np.pi)


def test_crane_jib_bending_frequencies_equal_beam_theory():
    lm = linearize(locked_crane(link="flexible", base="rigid", n_div=10), at="state")
    rho, E = crane.STEEL["density"], crane.STEEL["E"]
    A, Iz, La = crane.BOX_A, crane.BOX_IZ, crane.ARM_LENGTH
    M = rho * A * La                                   # the arm: a rigid box beam hanging from the jib's tip
    J_c = M * La ** 2 / 12 + rho * Iz * La             # slender rod plus the section's rotary inertia
    # the arm points along the jib's −y (ψ_arm = 270°): its centre 1 m across the jib's axis, none along it
    expected = cantilever_with_tip_body(E, Iz, rho * A, crane.JIB_LENGTH, M, 0.0, -La / 2, J_c, 3)
    in_plane = [m.frequency for m in lm.modes() if m.dominant(1)[0][0].endswith(".psi")]
    assert np.allclose(in_plane[:3], expected, rtol=0.02), (in_plane[:3], expected)
    # measured: 18.09, 63.41, 365.4 Hz against 18.08, 63.20, 363.9 Hz (0.03 %, 0.3 %, 0.4 %; RFEM, 10 sdes)
    assert abs(in_plane[0] / expected[0] - 1) < 2e-3


def test_sprung_base_frequencies_equal_a_rigid_body_on_springs():
    """The whole crane rigid (links rigid, joints locked) on paper 001's eight linearized supports: six
    modes of M⁻¹K with M the rigid body's 6×6 mass matrix about the base frame (hand-assembled here from
    the model file's dimensions) and K = Σ Uᵀ S U (paper 001 eq. 16)."""
    lm = linearize(locked_crane(link="rigid", base="flexible"), at="state")
    rho = crane.STEEL["density"]
    H, Lj, La, A, Iy, Iz = (crane.COLUMN_HEIGHT, crane.JIB_LENGTH, crane.ARM_LENGTH, crane.BOX_A, crane.BOX_IY,
                            crane.BOX_IZ)
    bx, by, bz = crane.BASE_SIZE
    rz = lambda a: Rotation.from_rotvec([0, 0, a]).as_matrix()       # noqa: E731
    rx = lambda a: Rotation.from_rotvec([a, 0, 0]).as_matrix()       # noqa: E731
    r = 0.15
    bodies = [(crane.BASE_MASS, np.array([0, 0, -bz / 2]), np.eye(3),
               crane.BASE_MASS / 12 * np.diag([by ** 2 + bz ** 2, bx ** 2 + bz ** 2, bx ** 2 + by ** 2]))]
    Rc = rz(crane.PSI_COLUMN0)
    mc = crane.COLUMN_MASS
    bodies.append((mc, Rc @ [0, 0, H / 2], Rc, np.diag([mc * (3 * r * r + H * H) / 12] * 2 + [mc * r * r / 2])))
    Rj = Rc @ rx(np.pi / 2) @ rz(crane.PSI_JIB0)
    oj = Rc @ [0, 0, H]
    Ra = Rj @ rz(crane.PSI_ARM0)
    oa = oj + Rj @ [Lj, 0, 0]
    for R, o, L in ((Rj, oj, Lj), (Ra, oa, La)):
        m = rho * A * L
        Ic = np.diag([rho * (Iy + Iz) * L, rho * Iy * L + m * L * L / 12, rho * Iz * L + m * L * L / 12])
        bodies.append((m, o + R @ [L / 2, 0, 0], R, Ic))
    M6 = np.zeros((6, 6))                               # coordinates x, y, z, ψ (about z), θ (y), φ (x)
    for m, c, R, Ic in bodies:                          # T = ½ m |v + ω × c|² + ½ ωᵀ R I_c Rᵀ ω
        G = np.zeros((3, 6))                            # velocity of the centre: v + ω × c, ω = (φ̇, θ̇, ψ̇)
        G[:, :3] = np.eye(3)
        W = np.zeros((3, 6))
        W[0, 5], W[1, 4], W[2, 3] = 1, 1, 1
        G -= np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]]) @ W
        M6 += m * G.T @ G + W.T @ R @ Ic @ R.T @ W
    K6 = np.zeros((6, 6))
    for x, y in crane.SUPPORTS:
        z = -bz
        U = np.array([[1, 0, 0, -y, z, 0], [0, 1, 0, x, 0, -z], [0, 0, 1, 0, -x, y]], float)
        K6 += U.T @ np.diag([crane.S_XY, crane.S_XY, crane.S_Z]) @ U
    expected = np.sort(np.sqrt(scipy.linalg.eigh(K6, M6, eigvals_only=True))) / (2 * np.pi)
    got = np.sort([m.frequency for m in lm.modes()])
    assert got.size == 6
    assert np.allclose(got, expected, rtol=1e-8), (got, expected)
    assert all(abs(m.damping) < 1e-9 for m in lm.modes())        # damping 0: undamped modes


@pytest.mark.parametrize("link", ["rigid", "flexible"])
def test_small_input_linear_model_equals_the_nonlinear_run(link):
    """1 % of paper 001's drive (its column pulse, −40 N·m for 0.1 s) from the static equilibrium, over 1 s:
    the column's angle and rate from the linear model equal the nonlinear simulation's (RK4 at 0.1 ms,
    converged) to ≤ 1 % of their response. The jib and arm answer the pulse only in second order
    (centrifugal terms of the column's rate), which the raised jib — held by a constant torque, unstable,
    λ = +2.0 1/s — amplifies to about 1 % of the column's response by 1 s; that those differences are the
    nonlinear remainder and not a linearization error shows in their scaling: half the pulse leaves at
    most a quarter of the difference at every output (an error in the linear model would leave half)."""
    options = dict(mode="torque", link=link)
    lm = linearize("crane", options)
    cm = compile_mechanism(crane.build(**options))
    sources = _sources(cm, lm.outputs)
    k = lm.inputs.index("column.tau_drive")
    t = np.linspace(0.0, 1.0, 1001)
    errs = []
    for amplitude in (-40.0, -20.0):
        du = np.where(t < 0.1 - 1e-9, amplitude, 0.0)
        dy = _linear_response(lm, k, du, t)
        dy_nl = _nonlinear_response(cm, lm, sources, du) - lm.y_op
        size = np.max(np.abs(dy_nl), axis=0)
        err = np.max(np.abs(dy - dy_nl), axis=0)
        errs.append(err)
        if amplitude == -40.0:
            col = [lm.outputs.index("column.q"), lm.outputs.index("column.qd")]
            assert np.all(err[col] <= 0.01 * size[col]), dict(zip(lm.outputs, err / size))
    ratio = errs[1] / errs[0]       # measured: jib and arm 0.2500, column 0.1250 (odd in the pulse: third order)
    assert np.all(ratio <= 0.26), dict(zip(lm.outputs, ratio))


def _nonlinear_response(cm, lm, sources, du) -> np.ndarray:
    sim = Simulator(cm, h=1e-4, method="rk4")
    sim.initialize(static=True)
    column = cm.dof("column.q")
    y = []
    for u in du:
        sim.tau_drive[cm.actuated_dofs] = lm.u_op
        sim.tau_drive[column] += u
        sim.evaluate()
        y.append(sim.read(sources))
        sim.step(1e-3)
    return np.array(y)


def _linear_response(lm, k: int, du: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Δy(t) of the continuous model for input k held at du[i] over [t_i, t_i+1) (exact for that hold)."""
    n = lm.A.shape[0]
    Phi = scipy.linalg.expm(np.block([[lm.A, lm.B[:, [k]]], [np.zeros((1, n + 1))]]) * (t[1] - t[0]))
    x = np.zeros(n)
    out = []
    for u in du:
        out.append(lm.C @ x + lm.D[:, k] * u)
        x = Phi[:n, :n] @ x + Phi[:n, n] * u
    return np.array(out)


def _sources(cm, names):
    from fmu_mb.outputs import expand
    by = {v.name: v.source for v in expand(cm)}
    return [by[n] for n in names]
