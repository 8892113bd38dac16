"""Energy: conservation without dissipation, balance with dampers, friction and drives.

The balance E_k + E_g + E_e + E_diss − W_in is constant in exact arithmetic
(E_diss and W_in are integrated with the state by the same RK4 steps). Drift is
measured relative to the peak kinetic energy of the run — a gauge-independent
energy scale (potential energy has an arbitrary zero).

Step sizes: for a linear mode of frequency ω, RK4 loses a fraction ≈ (ω h)⁶/72
of the mode's energy per step. We take h from the highest linearized frequency
ω_max of each model so that ω_max·h ≤ 0.05 (≤ 2e-10 per step of the stiffest,
least-excited mode; the energy-carrying pendulum modes sit at ω·h ~ 1e-4).
"""
import numpy as np
import pytest
import scipy.linalg

from fmu_mb import algorithms as alg
from fmu_mb.model import (
    Body,
    CoulombViscous,
    Friction,
    Joint,
    Journal,
    LuGre,
    Mechanism,
    Support,
    compile_mechanism,
    make_data,
)
from fmu_mb.samples import random_tree
from fmu_mb.simulator import Simulator
from tests.test_rfem import flexible_pendulum


def omega_max(cm, q):
    """Highest frequency of the model linearized about q (stiffness from finite differences)."""
    data = make_data(cm.model)
    M = alg.crba(cm.model, data, q)
    n = cm.nv
    K = np.zeros((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1e-7
        K[:, k] = (alg.generalized_gravity_and_springs(cm.model, data, q + e)
                   - alg.generalized_gravity_and_springs(cm.model, data, q - e)) / 2e-7
    K = 0.5 * (K + K.T)
    return np.sqrt(np.max(np.abs(scipy.linalg.eigvals(K, M).real)))


def run(sim, T, record=200):
    n = int(round(T / sim.h))
    out = []
    stride = max(1, n // record)
    e = sim.energies()
    out.append(e)
    for k in range(0, n, stride):
        sim.step(min(stride, n - k) * sim.h)
        out.append(sim.energies())
    return out


def drift(hist):
    bal = np.array([e["balance"] for e in hist])
    ek = max(e["kinetic"] for e in hist)
    return np.max(np.abs(bal - bal[0])) / ek


def test_rigid_tree_conserves_energy():
    """A chaotic 5-link tree; its fastest rates come from the motion (|q̇| up to ~4 rad/s),
    not from gravity. RK4's error scales with h⁴: at h = 1 ms the drift was 1.3e-5,
    at 0.25 ms it is ~256× smaller."""
    mech = random_tree(3, n_links=5, base=None, with_spherical=True)
    cm = compile_mechanism(mech)
    h = 2.5e-4
    assert omega_max(cm, cm.q0) * h < 0.05
    sim = Simulator(cm, h=h)
    sim.set_state(qd=np.random.default_rng(0).normal(0, 1.0, cm.nv))
    hist = run(sim, 10.0)
    assert drift(hist) <= 1e-7
    assert max(e["kinetic"] for e in hist) > 1.0      # it really moved


def test_drive_armature_is_in_the_kinetic_energy():
    """The same tree with a rotor on every joint coordinate (armature 0.05-0.5): conserved only if
    the kinetic energy counts ½·J_a·q̇² of each rotor exactly as M's diagonal does. Without that
    term the balance would move by the rotors' share of E_k (asserted to be > 1 % of it)."""
    mech = random_tree(3, n_links=5, base=None, with_spherical=True)
    rng = np.random.default_rng(5)
    for j in mech.joints:
        j.armature = rng.uniform(0.05, 0.5, j.ndof)
    cm = compile_mechanism(mech)
    sim = Simulator(cm, h=2.5e-4)
    sim.set_state(qd=np.random.default_rng(0).normal(0, 1.0, cm.nv))
    hist = run(sim, 10.0)
    assert drift(hist) <= 1e-7
    rotor = 0.5 * cm.model.dof_armature @ sim.qd ** 2
    assert rotor > 0.01 * sim.energies()["kinetic"]


def test_flexible_pendulum_conserves_energy():
    cm = compile_mechanism(flexible_pendulum())
    w = omega_max(cm, cm.q0)
    h = 0.05 / w
    sim = Simulator(cm, h=h)
    hist = run(sim, 10.0)
    assert drift(hist) <= 1e-7
    assert min(e["elastic"] for e in hist) >= 0 and max(e["elastic"] for e in hist) > 1e-4  # it bends


def base_on_springs(damping):
    m = Mechanism("springbase", gravity=(0, 0, -9.81))
    m.add(Body("base", 50.0, (0.05, 0.0, 0.1), np.diag([2.0, 3.0, 4.0])), Joint("b", "free", "ground", "base",
                                                                               qd0=(0.1, 0, 0.2, 0.3, -0.2, 0.1)))
    m.add(Body("arm", 5.0, (0.3, 0, 0), np.diag([0.01, 0.2, 0.2])),
          Joint("j", "revolute", "base", "arm", origin=(0, 0, 0.3), axis=(0, 1, 0), qd0=2.0))
    for c in ((0.4, 0.3, 0), (-0.4, 0.3, 0), (-0.4, -0.3, 0), (0.4, -0.3, 0)):
        m.supports.append(Support("base", c, (2e4, 2e4, 5e4), (damping,) * 3))
    return m


def test_base_on_springs_conserves_energy():
    cm = compile_mechanism(base_on_springs(0.0))
    w = omega_max(cm, cm.q0)
    sim = Simulator(cm, h=0.05 / w)
    hist = run(sim, 10.0)
    assert drift(hist) <= 1e-7


@pytest.mark.parametrize("case", ["damped_link", "damped_supports", "friction_lugre", "friction_coulomb"])
def test_dissipation_balances(case):
    if case == "damped_link":
        cm = compile_mechanism(flexible_pendulum(damping=1e-3))
    elif case == "damped_supports":
        cm = compile_mechanism(base_on_springs(200.0))
    else:
        law = LuGre(sigma0=1e3, sigma1=5.0, sigma2=0.05, mu_s=0.15, mu_k=0.1, v_s=0.05) \
            if case == "friction_lugre" else CoulombViscous(k_c=0.1, k_v=0.02, v_eps=1e-2)
        mech = base_on_springs(0.0)
        mech.joints[1].friction = Friction(law, Journal(0.05))
        cm = compile_mechanism(mech)
    w = omega_max(cm, cm.q0)
    h = min(1e-3, 0.05 / w)
    if case == "friction_lugre":
        # while sliding the bristle state relaxes at rate σ0·|q̇|/g(q̇) ≈ 1e3·3/0.1 = 3e4 1/s:
        # explicit RK4 needs h < 2.8/3e4 ≈ 9e-5 s
        h = min(h, 2e-5)
    sim = Simulator(cm, h=h)
    hist = run(sim, 2.0)
    mech_energy = np.array([e["kinetic"] + e["gravity"] + e["elastic"] for e in hist])
    diss = np.array([e["dissipated"] for e in hist])
    assert diss[-1] > 0.05 * (mech_energy[0] - mech_energy.min() + 1e-9)
    assert mech_energy[-1] < mech_energy[0]
    assert drift(hist) <= 1e-6


def test_input_work_is_accounted():
    cm = compile_mechanism(base_on_springs(100.0))
    mech = cm.mechanism
    mech.joints[1].actuated = True
    cm = compile_mechanism(mech)
    sim = Simulator(cm, h=0.05 / omega_max(cm, cm.q0))
    sim.set_drive([3.0])
    hist = run(sim, 2.0)
    assert hist[-1]["work_in"] != 0.0
    assert drift(hist) <= 1e-6
