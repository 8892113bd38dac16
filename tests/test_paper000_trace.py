"""Mass matrix and velocity/gravity terms against a slow transcription of paper 000
eqs. (10)–(14), (26) (trace formulas with pseudo-inertia matrices, tests/oracles)."""
import numpy as np
import pytest

from fmu_mb import algorithms as alg
from fmu_mb.model import Beam, Body, Joint, Mechanism, compile_mechanism, make_data
from fmu_mb.model.inertia import from_pseudo_inertia, pseudo_inertia
from fmu_mb.samples import random_inertia, random_tree
from tests.oracles.trace_dynamics import TraceModel

TOL = 1e-10


def _cases():
    yield random_tree(101, n_links=4, base=None)
    yield random_tree(102, n_links=4, base=None, with_spherical=True)
    base = random_tree(103, n_links=3, base="springs")
    base.supports = []          # supports are not part of eqs. (10)-(14)
    yield base
    # a short chain with an RFEM link (paper 000 eq. (17), 001 eq. (7))
    m = Mechanism("flexchain", gravity=(0.0, -9.81, 0.0))
    m.add(Body("l1", 3.0, (0.1, 0.05, 0.0), np.diag([0.02, 0.05, 0.06])),
          Joint("j1", "revolute", "ground", "l1", axis=(0, 0, 1)))
    m.add(Beam("arm", length=0.8, density=7800, area=4e-4, Iy=1.3e-8, Iz=5.3e-8, J=3.6e-8, E=2.1e11,
               G=8e10, n_div=2),
          Joint("j2", "revolute", "l1", "arm", origin=(0.2, 0.0, 0.1), axis=(0, 1, 0)))
    m.add(Body("tip", 0.5, (0.05, 0.0, 0.0), np.diag([1e-3, 2e-3, 2e-3])),
          Joint("j3", "prismatic", "arm", "tip", origin=(0.8, 0.0, 0.0), axis=(1, 0, 0)))
    yield m


@pytest.mark.parametrize("mech", list(_cases()), ids=lambda m: m.name)
def test_mass_matrix_and_bias_match_trace_formulas(mech):
    cm = compile_mechanism(mech)
    data = make_data(cm.model)
    tm = TraceModel(mech)
    assert tm.n == cm.nv
    rng = np.random.default_rng(5)
    q = rng.uniform(-1.0, 1.0, tm.n)
    v = rng.normal(0.0, 1.0, tm.n)
    M_ref = tm.mass_matrix(q)
    assert np.max(np.abs(alg.crba(cm.model, data, q) - M_ref)) <= TOL * np.max(np.abs(M_ref))
    c_ref = tm.velocity_terms(q, v)
    g_ref = tm.gravity_terms(q)
    b = alg.nonlinear_effects(cm.model, data, q, v)
    g = alg.nonlinear_effects(cm.model, data, q, np.zeros(tm.n))
    assert np.max(np.abs(g - g_ref)) <= TOL * np.max(np.abs(g_ref))
    assert np.max(np.abs((b - g) - c_ref)) <= TOL * np.max(np.abs(c_ref))
    # kinetic energy (eq. 10) equals ½ q̇ᵀ M q̇
    assert tm.kinetic_energy(q, v) == pytest.approx(0.5 * v @ M_ref @ v, rel=1e-12)


def test_printed_gpme_velocity_term():
    """What eq. (26)'s printed h_i is: with its first trace's free index restored (T_i for
    T_m) the first sum is Lagrange's c_i, and the second sum is ∂E_k/∂q_i, the term that
    the −2 ∂E_k/∂q_i of R₁ (eq. (9.1)) cancels. As literally printed the first sum is not
    c_i: the index is a typo."""
    mech = random_tree(104, n_links=4, base=None, with_spherical=True)
    tm = TraceModel(mech)
    rng = np.random.default_rng(6)
    q = rng.uniform(-1, 1, tm.n)
    v = rng.normal(0, 1, tm.n)
    c = tm.velocity_terms(q, v)
    first, second = tm.gpme_terms(q, v)
    dEdq = np.array([(tm.kinetic_energy(q + e, v) - tm.kinetic_energy(q - e, v)) / 2e-6
                     for e in 1e-6 * np.eye(tm.n)])
    assert np.max(np.abs(first - c)) <= 1e-12 * np.max(np.abs(c))
    assert np.max(np.abs(second - dEdq)) <= 1e-7 * np.max(np.abs(dEdq))
    first_printed, _ = tm.gpme_terms(q, v, printed_index=True)
    assert np.max(np.abs(first_printed - c)) > 1e-2 * np.max(np.abs(c))


def test_pseudo_inertia_round_trip():
    rng = np.random.default_rng(7)
    for _ in range(10):
        m, I = random_inertia(rng)
        c = rng.normal(0, 0.3, 3)
        H = pseudo_inertia(m, c, I)
        # H = ∫ r̃ r̃ᵀ dm: the upper-left block is ∫ r rᵀ dm = Π, trace relation to J_O
        J_O = I + m * (c @ c * np.eye(3) - np.outer(c, c))
        assert np.allclose(np.trace(H[:3, :3]) * np.eye(3) - H[:3, :3], J_O, atol=1e-14)
        m2, c2, I2 = from_pseudo_inertia(H)
        assert m2 == pytest.approx(m) and np.allclose(c2, c, atol=1e-14) and np.allclose(I2, I, atol=1e-12)
