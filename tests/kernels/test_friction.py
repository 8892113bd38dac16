"""Joint friction laws on hand-checkable cases, and the friction ↔ reaction loop.

Test rig: a block of mass m on a horizontal prismatic joint (axis x) under gravity
−z, pushed by a drive force F. The joint reaction perpendicular to the axis is the
weight, so the journal-type normal load (paper 000 eq. 21.2) is exactly L = m·g.
"""
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from fmu_mb.codes import SolverOption
from fmu_mb import algorithms as alg
from fmu_mb.model import (
    Body,
    CoulombViscous,
    Dahl,
    Friction,
    Joint,
    Journal,
    LuGre,
    Mechanism,
    PinBearing,
    Stribeck,
    compile_mechanism,
    make_data,
)
from fmu_mb.simulator import Simulator

M_BLOCK, G = 2.0, 9.81
L_BLOCK = M_BLOCK * G


def block(law, load=None):
    mech = Mechanism("block", gravity=(0.0, 0.0, -G))
    mech.add(Body("block", M_BLOCK, (0, 0, 0.05), np.diag([0.01, 0.01, 0.01])),
             Joint("slide", "prismatic", "ground", "block", axis=(1, 0, 0), actuated=True,
                   friction=Friction(law, load or Journal())))
    return compile_mechanism(mech)


def test_normal_load_is_the_weight():
    cm = block(CoulombViscous(k_c=0.3))
    sim = Simulator(cm)
    sim.set_drive([1.0])
    sim.evaluate()
    assert sim.friction("slide")[0] == pytest.approx(L_BLOCK, rel=1e-12)


def test_coulomb_stick_below_breakaway_and_slide_above():
    """Regularised Coulomb (sgn_ε(v) = v/√(v²+ε²)): below breakaway the block creeps at the
    velocity where k_c·L·sgn_ε(v) = F, i.e. v = ε·r/√(1 − r²) with r = F/(k_c L);
    above it, it accelerates at (F − k_c L)/m once v ≫ ε."""
    k_c, eps = 0.3, 1e-4
    cm = block(CoulombViscous(k_c=k_c, v_eps=eps))
    r = 0.5
    sim = Simulator(cm, h=1e-5)
    sim.set_drive([r * k_c * L_BLOCK])
    sim.step(0.2)
    assert sim.qd[0] == pytest.approx(eps * r / math.sqrt(1 - r * r), rel=1e-6)
    sim = Simulator(cm, h=1e-5)
    F = 1.5 * k_c * L_BLOCK
    sim.set_drive([F])
    sim.step(0.5)
    assert sim.evaluate()[1] == pytest.approx((F - k_c * L_BLOCK) / M_BLOCK, rel=1e-6)


def test_stribeck_curve():
    """Steady sliding (q̈ = 0): the required drive equals eq. (52) at every velocity — exactly
    with the regularised sign, and within its error ε²/(2v²) of the discontinuous one."""
    k_c, k_s, v_s, k_v, eps = 0.2, 0.35, 0.03, 0.8, 1e-6
    cm = block(Stribeck(k_c=k_c, k_s=k_s, v_s=v_s, k_v=k_v, v_eps=eps))
    data = make_data(cm.model)
    for v in (-0.2, -0.03, -0.005, 0.001, 0.01, 0.03, 0.06, 0.5):
        tau = alg.inverse_dynamics(cm.model, data, [0.0], [v], [0.0])
        mag = k_c * L_BLOCK + (k_s - k_c) * L_BLOCK * math.exp(-(v / v_s) ** 2)
        assert tau[0] == pytest.approx(mag * v / math.sqrt(v * v + eps * eps) + k_v * v, rel=1e-12)
        assert abs(tau[0] - (mag * math.copysign(1, v) + k_v * v)) <= mag * eps**2 / (2 * v * v) * 1.0001
    # the Stribeck dip: friction falls from k_s·L to k_c·L as |v| grows past v_s
    lo = alg.inverse_dynamics(cm.model, data, [0.0], [0.001], [0.0])[0]
    hi = alg.inverse_dynamics(cm.model, data, [0.0], [0.1], [0.0])[0]
    assert lo > hi - k_v * 0.1 > 0


def test_lugre_presliding_displacement():
    """A force below breakaway, ramped slowly, deflects the bristles: with
    dz/dx = 1 − σ0 z/μ_s for x increasing at negligible speed and μ = σ0 z = F/L,
    x = −(μ_s/σ0)·ln(1 − F/(μ_s L)) ≈ F/(σ0 L) for F ≪ μ_s L."""
    s0, mu_s = 2e3, 0.4
    cm = block(LuGre(sigma0=s0, sigma1=math.sqrt(s0) * 2, sigma2=0.0, mu_s=mu_s, mu_k=0.3, v_s=0.01))
    sim = Simulator(cm, h=1e-4)
    F = 0.1 * mu_s * L_BLOCK
    n = 2000
    for k in range(1, n + 1):                  # ramp over 2 s, then hold 1 s
        sim.set_drive([F * k / n])
        sim.step(1e-3)
    sim.step(1.0)
    x = sim.q[0]
    assert x == pytest.approx(-(mu_s / s0) * math.log(1 - F / (mu_s * L_BLOCK)), rel=2e-3)
    assert x == pytest.approx(F / (s0 * L_BLOCK), rel=0.06)
    assert abs(sim.qd[0]) < 1e-7                # stuck
    assert sim.z[0] * s0 * L_BLOCK == pytest.approx(F, rel=1e-6)


def test_lugre_steady_sliding():
    """Constant sliding velocity: ż = 0 ⇒ μ = g(v)·sgn(v) + σ2 v (000 eq. 22)."""
    law = LuGre(sigma0=1e3, sigma1=20.0, sigma2=0.02, mu_s=0.4, mu_k=0.25, v_s=0.05)
    cm = block(law)
    data = make_data(cm.model)
    for v in (0.01, 0.05, 0.2):
        g = law.mu_k + (law.mu_s - law.mu_k) * math.exp(-(v / law.v_s) ** 2)
        z_ss = g / law.sigma0
        tau = alg.inverse_dynamics(cm.model, data, [0.0], [v], [0.0], z=[z_ss])
        assert data.zdot[0] == pytest.approx(0.0, abs=1e-12)
        assert tau[0] == pytest.approx((g + law.sigma2 * v) * L_BLOCK, rel=1e-12)


@pytest.mark.parametrize("gamma", [1.0, 2.0])
def test_dahl_transition_and_steady_state(gamma):
    """Sliding from rest (q̇ > 0 throughout), dz/dx = (1 − σ0 z/μ_s)^γ has closed forms:
    γ = 1: z = (μ_s/σ0)(1 − e^(−σ0 x/μ_s));  γ = 2: z = x/(1 + σ0 x/μ_s).
    The friction force is σ0·z·L and tends to μ_s·L."""
    s0, mu_s = 500.0, 0.3
    cm = block(Dahl(sigma0=s0, mu_s=mu_s, gamma=gamma))
    sim = Simulator(cm, h=1e-5)
    sim.set_drive([1.2 * mu_s * L_BLOCK])
    for _ in range(4):
        sim.step(0.01)
        x, z = sim.q[0], sim.z[0]
        a = s0 / mu_s
        exact = (1 - math.exp(-a * x)) / a if gamma == 1.0 else x / (1 + a * x)
        assert z == pytest.approx(exact, rel=1e-6)
        sim.evaluate()
        assert sim.friction("slide")[1] == pytest.approx(s0 * z * L_BLOCK, rel=1e-12)
    sim.step(2.0)
    sim.evaluate()
    assert sim.friction("slide")[1] == pytest.approx(mu_s * L_BLOCK, rel=1e-3 if gamma == 2.0 else 1e-9)


# ----------------------------------------------------------------------------- the algebraic loop
def spinning_arm(k_c=0.2, d=0.05):
    """A point-like mass m at radius r on a vertical-axis revolute joint with journal friction:
    the radial reaction m·r·√(ω⁴ + α²) depends on the angular acceleration α, so
    the friction torque and α must be solved together."""
    mech = Mechanism("arm", gravity=(0.0, 0.0, -9.81))
    mech.add(Body("arm", 3.0, (0.5, 0.0, 0.0), np.diag([1e-4, 1e-4, 1e-4])),
             Joint("hinge", "revolute", "ground", "arm", axis=(0, 0, 1), actuated=True,
                   friction=Friction(CoulombViscous(k_c=k_c, v_eps=1e-6), Journal(d))))
    return compile_mechanism(mech)


def test_friction_reaction_loop_converges_to_the_exact_solution():
    k_c, d, m, r = 0.2, 0.05, 3.0, 0.5
    cm = spinning_arm(k_c, d)
    sim = Simulator(cm)
    omega, tau = 2.0, 40.0
    sim.set_state(qd=[omega])
    sim.set_drive([tau])
    alpha = sim.evaluate()[1]
    I = 1e-4 + m * r * r

    def residual(a):
        return I * a - (tau - k_c * d / 2 * m * r * math.sqrt(omega**4 + a * a) * math.copysign(1, omega))
    exact = brentq(residual, 0.0, tau / I)
    assert alpha == pytest.approx(exact, rel=1e-10)
    assert sim.friction_iterations >= 1                     # Newton refined the fixed-point seed
    assert sim.data.fric_resid[0] <= 1e-10 * abs(sim.friction("hinge")[1]) + 1e-12
    # the reported normal load is the radial reaction of the converged motion
    F, _ = sim.reaction("hinge")
    assert sim.friction("hinge")[0] == pytest.approx(d / 2 * math.hypot(F[0], F[1]), rel=1e-12)


def friction_tree(R_n, k_s):
    from fmu_mb.samples import random_tree
    mech = random_tree(42, n_links=6, base=None)
    for j in mech.joints:
        j.actuated = True
        j.friction = Friction(Stribeck(k_c=k_s / 2, k_s=k_s, v_s=0.1, k_v=0.05, v_eps=1e-3),
                              PinBearing(R_n, 0.015, 0.05))
    cm = compile_mechanism(mech)
    rng = np.random.default_rng(0)
    return cm, rng.uniform(-1, 1, cm.nv), rng.normal(0, 1, cm.nv), rng.normal(0, 20, cm.nv)


def test_friction_loop_is_consistent_on_a_tree():
    """On a branched 3D tree (revolute and prismatic joints) with pin-bearing friction in
    every joint: the q̈ of the forward solve, fed to inverse dynamics, reproduces the drive
    (friction included), and Newton converges in a handful of iterations."""
    cm, q, v, tau = friction_tree(0.1, 0.1)
    data = make_data(cm.model)
    xdot = alg.forward_dynamics(cm.model, data, alg.state_vector(cm.model, q, v), tau)
    assert data.fric_fail[0] == 0 and 1 <= data.fric_iters[0] <= 6
    tau_f = data.tau_fric.copy()
    assert np.max(np.abs(tau_f)) > 10.0                   # friction matters in this case
    tau_back = alg.inverse_dynamics(cm.model, data, q, v, xdot[cm.nv:2 * cm.nv])
    assert np.max(np.abs(tau_back - tau)) <= 1e-9 * np.max(np.abs(tau))
    assert np.max(np.abs(data.tau_fric - tau_f)) <= 1e-9 * np.max(np.abs(tau_f))


def test_unit_responses_are_the_linear_part_of_the_articulated_body_solve():
    """The friction loop's sensitivities on the branched tree (aba.aba_unit_responses): the motion per unit friction
    torque is −M⁻¹e_j (M by CRBA, an independent algorithm), and the friction joints' reactions per unit torque are the
    difference of two complete articulated-body solves, with and without it (how the loop formed them before)."""
    from fmu_mb.kernels.aba import aba_accelerations, aba_inertias, aba_unit_responses
    from fmu_mb.kernels.handles import data_struct, model_struct
    from fmu_mb.kernels.kinematics import forward_kinematics
    cm, q, v, tau = friction_tree(0.1, 0.1)
    m, data = cm.model, make_data(cm.model)
    mh, dh = model_struct(m), data_struct(data)
    forward_kinematics(mh, dh, q, v)
    aba_inertias(mh, dh)
    aba_unit_responses(mh, dh)
    fdofs, bodies = m.fric_dofs, m.dof_body[m.fric_dofs]
    M = alg.crba(m, make_data(m), q)
    for j, dof in enumerate(fdofs):
        assert np.allclose(data.fric_dqdd[j], np.linalg.solve(M, -np.eye(cm.nv)[dof]), rtol=0, atol=1e-12 * np.abs(
            data.fric_dqdd[j]).max()), j
    S = data.fric_S.copy()
    aba_accelerations(mh, dh, tau.copy(), True, True)
    W0 = np.hstack([data.fM[bodies], data.fF[bodies]])
    for j, dof in enumerate(fdofs):
        t = tau.copy()
        t[dof] -= 1.0
        aba_accelerations(mh, dh, t, True, True)
        Wj = np.hstack([data.fM[bodies], data.fF[bodies]])
        assert np.abs(S[:, :, j] - (Wj - W0)).max() <= 1e-9 * max(1.0, np.abs(W0).max()), j
    assert np.abs(S).max() > 1e-3                        # the columns are not trivially zero


def test_self_locking_is_flagged_not_hidden():
    """k_s = 0.2 with a 2 cm torsion arm on the prismatic joints: no friction torques satisfy
    the loop (a multi-start least-squares search on this case found min ½|r|² ≈ 126 N²;
    plain fixed-point iteration diverges). The solve must say so."""
    cm, q, v, tau = friction_tree(0.02, 0.2)
    data = make_data(cm.model)
    xdot = alg.forward_dynamics(cm.model, data, alg.state_vector(cm.model, q, v), tau)
    assert data.fric_fail[0] == 1
    assert data.fric_resid[0] > 1.0
    assert np.all(np.isfinite(xdot))


def test_iteration_cap_is_observable():
    """With no Newton iteration allowed the unconverged solve is counted, and its residual
    reported; the default cap converges the same case."""
    cm = spinning_arm()
    model = cm.model
    data = make_data(model)
    data.solver_opt[SolverOption.FRICTION_ITERATIONS] = 0
    x = alg.state_vector(model, [0.0], [2.0])
    alg.forward_dynamics(model, data, x, np.array([40.0]))
    assert data.fric_fail[0] == 1 and data.fric_iters[0] == 0 and data.fric_resid[0] > 1e-6
    data = make_data(cm.model)
    alg.forward_dynamics(cm.model, data, x, np.array([40.0]))
    assert data.fric_fail[0] == 0 and data.fric_resid[0] < 1e-10
