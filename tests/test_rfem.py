"""Flexible links by the rigid finite element method (paper 001 eq. (7), paper 000
eqs. (17)–(18)) against beam theory, and a flexible pendulum against Pinocchio.

Cantilever of length L, n_div sections of length d = L/n_div: the sdes sit at the
section centres x_k = (k − ½)d with bending stiffness E·I/d, so under a tip load F
the tip deflection is the midpoint rule of ∫ F (L − x)²/(E I) dx:

    δ_n = F·d/(E·I) · Σ_k (L − x_k)² = F L³/(3 E I) · (1 − 1/(4 n_div²)),

converging to Euler–Bernoulli's F L³/(3 E I) with a relative error 1/(4 n²)
(0.31 % at 10 rfes). Torsion springs G·J/d in series give exactly T·L/(G·J).
"""
import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg

from fmu_mb import algorithms as alg
from fmu_mb.interop.pinocchio import to_pinocchio
from fmu_mb.model import (
    Beam,
    Body,
    Joint,
    Mechanism,
    Point,
    compile_mechanism,
    make_data,
)
from fmu_mb.simulator import Simulator
from fmu_mb.statics import static_equilibrium

E, G, RHO = 2.1e11, 8.1e10, 7850.0
B_Y, H_Z = 0.02, 0.01                       # cross-section: width along y, height along z, m
AREA = B_Y * H_Z
IY = B_Y * H_Z**3 / 12                      # bending about y (deflection along z)
IZ = H_Z * B_Y**3 / 12                      # bending about z (deflection along y)
JT = 0.229 * B_Y * H_Z**3                   # torsion constant of a 2:1 rectangle (Roark, β = 0.229)
L = 1.0


def cantilever(n_div, density=RHO, tip_mass=0.0, gravity=(0.0, 0.0, 0.0)):
    m = Mechanism("cantilever", gravity=gravity)
    m.add(Beam("beam", L, density, AREA, IY, IZ, JT, E, G, n_div=n_div),
          Joint("clamp", "fixed", "ground", "beam"))
    if tip_mass:
        m.add(Body("tip", tip_mass, (0, 0, 0), np.zeros((3, 3))),
              Joint("weld", "fixed", "beam", "tip", origin=(L, 0, 0)))
    m.points.append(Point("tip", "beam", (L, 0, 0)))
    return m


@pytest.mark.parametrize("n_div", [9, 19, 49])
def test_cantilever_tip_deflection(n_div):
    F_tip = 1e-3 * 9.81                      # small load: rotations ~1e-5, geometry stays linear
    cm = compile_mechanism(cantilever(n_div, density=1e-6, tip_mass=1e-3, gravity=(0, 0, -9.81)))
    sol = static_equilibrium(cm, tol=1e-13)
    sim = Simulator(cm)
    sim.set_state(q=sol.q)
    delta = -sim.point("tip")[2]
    exact = F_tip * L**3 / (3 * E * IY)
    d = L / n_div
    x = (np.arange(1, n_div + 1) - 0.5) * d
    discrete = F_tip * d / (E * IY) * np.sum((L - x) ** 2)
    assert delta == pytest.approx(discrete, rel=1e-6)           # it is exactly RFEM
    err = abs(delta - exact) / exact
    assert err <= 1.0 / (4 * n_div**2) * 1.001                  # the midpoint-rule error
    assert err <= 0.01                                           # ≥ 10 rfes: within 1 %


def _modes(cm):
    data = make_data(cm.model)
    M = alg.crba(cm.model, data, np.zeros(cm.nv))
    K = np.diag(cm.model.dof_k)
    w2, V = scipy.linalg.eigh(K, M)
    names = np.array([n.rsplit(".", 1)[1] for n in cm.dof_names])
    kind = [names[np.argmax(np.abs(V[:, k]) * np.sqrt(np.diag(M)))] for k in range(len(w2))]
    return np.sqrt(w2), kind


@pytest.mark.parametrize("n_div", [10, 20])
def test_first_bending_and_torsion_frequencies(n_div):
    cm = compile_mechanism(cantilever(n_div))
    w, kind = _modes(cm)
    first = {k: w[kind.index(k)] for k in ("psi", "theta", "phi")}
    beta = 1.875104
    w_theta = beta**2 * np.sqrt(E * IY / (RHO * AREA * L**4))   # bending about y
    w_psi = beta**2 * np.sqrt(E * IZ / (RHO * AREA * L**4))     # bending about z
    w_phi = np.pi / 2 * np.sqrt(G * JT / (RHO * (IY + IZ) * L**2))
    assert first["theta"] == pytest.approx(w_theta, rel=0.02)
    assert first["psi"] == pytest.approx(w_psi, rel=0.02)
    assert first["phi"] == pytest.approx(w_phi, rel=0.02)


def test_torsion_stiffness_is_GJ_over_L():
    n_div = 7
    cm = compile_mechanism(cantilever(n_div))
    T = 5.0                                   # N·m about the beam axis at the tip
    tau = np.zeros(cm.nv)
    phi = [cm.dof(f"beam.sde{r}.phi") for r in range(1, n_div + 1)]
    tau[phi] = T                              # a torque about the common x axis loads every φ
    sol = static_equilibrium(cm, tau_drive=tau, tol=1e-12)
    assert np.sum(sol.q[phi]) == pytest.approx(T * L / (G * JT), rel=1e-10)
    assert np.max(np.abs(np.delete(sol.q, phi))) < 1e-12


def flexible_pendulum(n_div=3, damping=0.0):
    """A pendulum whose arm is an RFEM beam (a 30 × 4 mm polyamide strip, weak axis in
    the swing plane) with a tip mass: it visibly bends while swinging, and its stiffest
    mode (≈ 1.4e3 rad/s) keeps explicit RK4 affordable in tests."""
    b, t = 0.03, 0.004
    m = Mechanism("flexpend", gravity=(0.0, 0.0, -9.81))
    m.add(Body("hub", 0.5, (0, 0, 0), np.diag([1e-3, 1e-3, 1e-3])),
          Joint("pivot", "revolute", "ground", "hub", axis=(0, 1, 0), q0=-0.6))
    m.add(Beam("arm", 0.8, 1150.0, b * t, b * t**3 / 12, t * b**3 / 12, b * t**3 / 3, 2.0e9, 0.8e9,
               n_div=n_div, damping=damping),
          Joint("root", "fixed", "hub", "arm"))
    m.add(Body("tip", 0.3, (0.02, 0, 0), np.diag([1e-4, 2e-4, 2e-4])),
          Joint("tipweld", "fixed", "arm", "tip", origin=(0.8, 0, 0)))
    return m


def test_flexible_pendulum_matches_pinocchio():
    mech = flexible_pendulum()
    mech.joints[1].kind = "revolute"          # Pinocchio needs a joint under the beam: lock it softly
    mech.joints[1].axis = (0, 0, 1)
    cm = compile_mechanism(mech)
    model, data = cm.model, make_data(cm.model)
    pmodel, ids = to_pinocchio(mech)
    pdata = pmodel.createData()
    rng = np.random.default_rng(11)
    q = rng.normal(0, 0.05, cm.nv)
    v = rng.normal(0, 0.5, cm.nv)
    tau = rng.normal(0, 1, cm.nv)
    M_ref = pin.crba(pmodel, pdata, q)
    M_ref = np.triu(M_ref) + np.triu(M_ref, 1).T
    assert np.max(np.abs(alg.crba(model, data, q) - M_ref)) <= 1e-9 * np.max(np.abs(M_ref))
    # sde springs (paper 000 eq. 18.1): τ = −S q̃ with S = diag(E Iz/d, E Iy/d, G J/d)
    beam = mech.link("arm")
    d = beam.length / beam.n_div
    k = np.array([beam.E * beam.Iz / d, beam.E * beam.Iy / d, beam.G * beam.J / d])
    tau_spring = np.zeros(cm.nv)
    for r in range(1, beam.n_div + 1):
        i = cm.dof(f"arm.sde{r}.psi")
        tau_spring[i:i + 3] = -k * q[i:i + 3]
    xdot = alg.forward_dynamics(model, data, alg.state_vector(model, q, v), tau)
    qdd_ref = pin.aba(pmodel, pdata, q, v, tau + tau_spring)
    assert np.max(np.abs(xdot[cm.nv:2 * cm.nv] - qdd_ref)) <= 1e-9 * np.max(np.abs(qdd_ref))
    pin.rnea(pmodel, pdata, q, v, qdd_ref)
    for jn in ("pivot", "root"):
        F, M = data.fF[cm.joint(jn).body], data.fM[cm.joint(jn).body]
        ref = pdata.f[ids[jn]]
        assert np.allclose(np.r_[F, M], ref.vector, rtol=0, atol=1e-9 * np.abs(ref.vector).max())
