"""The exact Jacobians (complex step, fmu_mb.kernels.jacobian) against independent references.

* Rigid trees: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ equal Pinocchio's analytical ABA derivatives
  (computeABADerivatives) to ≤ 1e-9 relative, on 26 random trees of the kind the Pinocchio tests use,
  where Pinocchio's derivatives are defined (see TREES).
* Every mechanism at its defaults and most detailed options, at 3 states of a run: A, B, C, D of
  ẋ and of FMU outputs (coordinates, reactions, friction torques and loads, points, supports,
  deflections, energy) equal adaptive finite differences (numdifftools) to ≤ 1e-6 relative per block.
* The discrete-time step map (one 10 ms co-simulation step, the FMU's method and step) equals finite
  differences of the Simulator's step — the kernel both FMU kinds step with — to ≤ 1e-6, or, where
  the step map of a stiff LuGre system is too ill-conditioned for differences to resolve 1e-6, to
  within 10× the oracle's own error estimate (which must stay ≤ 1e-3 so the check still means
  something). Measured: every case ≤ 1e-6 but the crane and the manipulator at full detail (LuGre, ROS2
  and ROS34PW2): Ad 8.1e-5 and 7.1e-6 from differences whose own error is 4.5e-4 and 2.1e-5.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from fmu_mb.codes import Scheme
from fmu_mb.interop.pinocchio import to_pinocchio
from fmu_mb.linearization.jacobians import ComplexStep
from fmu_mb.model import compile_mechanism
from fmu_mb.outputs import expand, spec_table
from fmu_mb.samples import random_tree
from fmu_mb.simulator import METHODS, Simulator
from tests.linearization.cases import CASES, IDS, start
from tests.oracles.finite_differences import block_error, jacobian, scales

#: revolute/prismatic trees on a fixed base, with and without armature. Not spherical joints nor a floating
#: base (Pinocchio: Translation + SphericalZYX): Pinocchio maps them to JointModelSphericalZYX, whose motion subspace depends on q, and
#: computeABADerivatives does not differentiate that — its ∂q̈/∂q differs from central differences of its
#: own aba by 100 % on tree 10 (seen with pin 3.x); fmu_mb's spherical chains are checked against
#: differences with every mechanism below
TREES = ([(s, None, False, False) for s in range(10)] + [(s, None, False, False) for s in range(60, 66)]
         + [(s, None, False, False) for s in range(30, 34)] + [(s, None, False, True) for s in range(40, 46)])


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@pytest.mark.parametrize("seed,base,spherical,armature", TREES)
def test_tree_derivatives_equal_pinocchio(seed, base, spherical, armature):
    mech = random_tree(seed, n_links=7, base=base, with_spherical=spherical)
    if armature:
        rng = np.random.default_rng(seed)
        for j in mech.joints:
            if j.name != "base_joint" and j.ndof:
                j.armature = rng.uniform(0.01, 1.0, j.ndof)
    cm = compile_mechanism(mech)
    pmodel, _ = to_pinocchio(mech)
    pdata = pmodel.createData()
    nv = cm.nv
    rng = np.random.default_rng(2000 + seed)
    q = rng.uniform(-1.0, 1.0, nv)
    v = rng.normal(0.0, 1.0, nv)
    tau = rng.normal(0.0, 5.0, nv)
    sim = Simulator(cm)
    sim.set_state(q=q, qd=v)
    A, B, _, _ = ComplexStep(sim).continuous(sim.x, 0.0, tau)
    pin.computeABADerivatives(pmodel, pdata, q, v, tau)
    Minv = np.array(pdata.Minv)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    ddq_dq, ddq_dv = np.array(pdata.ddq_dq), np.array(pdata.ddq_dv)
    assert _rel(A[nv:2 * nv, :nv], ddq_dq) <= 1e-9
    assert _rel(A[nv:2 * nv, nv:2 * nv], ddq_dv) <= 1e-9
    assert _rel(B[nv:2 * nv], Minv) <= 1e-9
    assert np.array_equal(A[:nv, nv:2 * nv], np.eye(nv)) and not A[:nv, :nv].any()


def _outputs(cm):
    keep = ("q", "qd", "F", "M", "tau_fric", "load", "point", "support", "deflection", "kinetic")
    return [v.source for v in expand(cm) if v.type == "Real" and v.source[0] in keep]


@pytest.mark.parametrize("name,detail", CASES, ids=IDS)
def test_pipeline_jacobians_equal_finite_differences(name, detail):
    sim = start(name, detail)
    cm, m = sim.cm, sim.model
    sources = _outputs(cm)
    kind, a, b, f = spec_table(cm, sources)
    vr, vals, xdot = np.arange(len(sources)), np.zeros(len(sources)), np.zeros(m.nx)
    cs = ComplexStep(sim)
    for t_end in (0.0, 0.1, 0.3):
        if t_end > sim.t:
            sim.step(t_end - sim.t)
        x, t, tau = sim.x.copy(), sim.t, sim.tau_drive.copy()
        A, B, C, D = cs.continuous(x, t, tau, sources)

        def pipeline(xx, uu=tau):
            sim.k.gather_outputs_constrained(sim._m, sim._d, xx, t, uu, xdot, vr, kind, a, b, f, vals) if m.nc \
                else sim.k.gather_outputs_tree(sim._m, sim._d, xx, t, uu, xdot, vr, kind, a, b, f, vals)
            return np.r_[xdot, vals]

        Jx, Ex = jacobian(pipeline, x, scales(m, x))
        Ju, Eu = jacobian(lambda u: pipeline(x, u), tau, 10 * np.maximum(1.0, np.abs(tau)))
        nx = m.nx
        for label, exact, oracle, est in (("A", A, Jx[:nx], Ex[:nx]), ("B", B, Ju[:nx], Eu[:nx]),
                                          ("C", C, Jx[nx:], Ex[nx:]), ("D", D, Ju[nx:], Eu[nx:])):
            err, own = block_error(exact, oracle, est)
            assert err <= 1e-6, f"{label} at t = {t:g} s: {err:.2e} (oracle's own error {own:.1e})"
        _columns_equal_full_evaluations(cs, x, t, tau, np.arange(m.nv), (vr, kind, a, b, f), (A, B, C, D))


def _columns_equal_full_evaluations(cs, x, t, tau, inputs, spec, blocks, tol=1e-12):
    """The columns along q̇, z and τ keep the position-only stages of the first of them (kernels.jacobian,
    Data.q_held): each equals the directional derivative along it, one evaluation that forms every stage,
    to round-off (a stage kept from another q, or not kept consistently, is off at O(1)): ``tol`` relative to
    each block's largest entry."""
    from fmu_mb.kernels.jacobian import directional_derivative
    m = cs.sim.model
    vr, kind, a, b, f = spec
    A, B, C, D = blocks
    ny, ns = len(vr), 2 * m.nv + m.nz
    xc, tc, fc, yc = np.zeros(m.nx, complex), np.zeros(m.nv, complex), np.zeros(m.nx, complex), np.zeros(ny, complex)
    dxdot, dy, vbf = np.zeros(m.nx), np.zeros(ny), np.zeros(cs.cdata.bf_val.shape[0])
    full = np.zeros((m.nx + ny, ns + inputs.size))
    for j in range(ns + inputs.size):
        vx, vtau = np.zeros(m.nx), np.zeros(m.nv)
        if j < ns:
            vx[j] = 1.0
        else:
            vtau[inputs[j - ns]] = 1.0
        directional_derivative(cs._m, cs._d, cs._dc, x, t, 0.0, tau, vx, vtau, vbf, vr, kind, a, b, f,
                               xc, tc, fc, yc, dxdot, dy)
        full[:, j] = np.r_[dxdot, dy]
    for label, held, ref in (("A", A[:, :ns], full[:m.nx, :ns]), ("B", B, full[:m.nx, ns:]),
                             ("C", C[:, :ns], full[m.nx:, :ns]), ("D", D, full[m.nx:, ns:])):
        if ref.size:
            scale = max(np.max(np.abs(ref)), 1e-300)
            assert np.max(np.abs(held - ref)) <= tol * scale, (label, np.max(np.abs(held - ref)) / scale)


def _plain(case):
    """The Mechanism of a rigid tree the analytical path takes (kernels.tree_derivatives.plain_tree)."""
    from fmu_mb import registry
    if isinstance(case, tuple):
        return registry.build(case[0], **case[1])
    mech = random_tree(case, n_links=7, base="linearized" if case % 2 else None)
    rng = np.random.default_rng(case)
    for j in mech.joints:
        if j.name != "base_joint" and j.ndof:
            j.armature = rng.uniform(0.01, 1.0, j.ndof)
            j.spring = (rng.uniform(0, 50), rng.uniform(0, 2), rng.uniform(-0.2, 0.2))
            j.stops = (-0.4, 0.4, 1e4, 20.0)             # random q in [-1, 1]: most coordinates beyond a stop
    return mech


#: the five-axis tree, the crane in torque mode (a linearized sprung base; rigid, and flexible jib: RFEM springs of
#: 8e6 N·m/rad), random trees with prismatic joints, armature, joint springs and stops engaged, odd seeds on a
#: linearized sprung base
PLAIN = {"five_axis": ("five_axis", {}), "crane-torque": ("crane", {"mode": "torque"}),
         "crane-torque-flexible": ("crane", {"mode": "torque", "link": "flexible"}),
         **{f"tree{s}": s for s in range(6)}}


@pytest.mark.parametrize("case", list(PLAIN.values()), ids=list(PLAIN))
def test_plain_tree_jacobians_are_analytical_and_equal_the_complex_step(case):
    """The analytical path (kernels.tree_derivatives: derivatives of the inverse dynamics in one pass, M⁻¹) gives
    A, B and the coordinates' and rates' C, D; each column equals the complex step's full evaluation along it to
    round-off. (Pinocchio's computeABADerivatives checks the same path on the random trees above.)"""
    cm = compile_mechanism(_plain(case))
    sim = Simulator(cm)
    rng = np.random.default_rng(7)
    sim.set_state(q=rng.uniform(-1.0, 1.0, cm.nv), qd=rng.normal(0.0, 1.0, cm.nv))
    tau = rng.normal(0.0, 5.0, cm.nv)
    cs = ComplexStep(sim)
    assert cs._tree is not None, "not taken as a plain tree"
    sources = [v.source for v in expand(cm) if v.type == "Real" and v.source[0] in ("q", "qd")]
    kind, a, b, f = spec_table(cm, sources)
    x = sim.x.copy()
    blocks = cs.continuous(x, 0.0, tau, sources)
    _columns_equal_full_evaluations(cs, x, 0.0, tau, np.arange(cm.nv), (np.arange(len(sources)), kind, a, b, f),
                                    blocks)
    if not isinstance(case, tuple):
        assert np.any(np.abs(x[:cm.nv]) > 0.4), "no stop engaged"


def _friction_tree(seed):
    """A random tree (odd seeds on a linearized sprung base) whose every moving joint has friction: the four laws
    (Coulomb–viscous, Stribeck, Dahl and LuGre with bristle states) on the three load forms (journal, pin bearing
    of paper 002 eq. 47, fixed), cycled, and armature."""
    from fmu_mb.model.friction import (CoulombViscous, Dahl, FixedLoad, Friction, Journal, LuGre, PinBearing,
                                       Stribeck)
    mech = random_tree(seed, n_links=7, base="linearized" if seed % 2 else None)
    rng = np.random.default_rng(seed)
    laws = (CoulombViscous(k_c=0.1, k_v=0.3, v_eps=0.05), Stribeck(k_c=0.08, k_s=0.15, v_s=0.3, k_v=0.2, v_eps=0.05),
            Dahl(sigma0=1e3, mu_s=0.1, gamma=1.0), LuGre(sigma0=1e3, sigma1=3.0, sigma2=0.2, mu_s=0.12, mu_k=0.08,
                                                          v_s=0.3))
    loads = (Journal(0.04), PinBearing(0.02, 0.015, 0.3), FixedLoad(1.0))
    moving = [j for j in mech.joints if j.name != "base_joint" and j.ndof]
    for i, j in enumerate(moving):
        j.friction = Friction(laws[(i + seed) % 4], loads[(i + seed) % 3])
        j.armature = rng.uniform(0.01, 1.0, j.ndof)
    return mech


def _friction_state(sim, seed=7):
    """A random state (bristle deflections of ~1e-4 rad or m) and drive."""
    m = sim.model
    rng = np.random.default_rng(seed)
    sim.set_state(q=rng.uniform(-1.0, 1.0, m.nv), qd=rng.normal(0.0, 1.0, m.nv))
    sim.x[2 * m.nv:2 * m.nv + m.nz] = rng.normal(0.0, 1e-4, m.nz)
    return sim.x.copy(), rng.normal(0.0, 5.0, m.nv)


def _registry_model(name, **options):
    from fmu_mb import registry
    return lambda: registry.build(name, **options)


def _vendor_urdf(robot, friction):
    def build():
        from fmu_mb.interop import urdf
        from tests.interop.test_urdf import ROBOTS, robots_dir
        return urdf.mechanism(robots_dir() / ROBOTS[robot][0], base=ROBOTS[robot][1], friction=friction)
    return build


#: (mechanism, seed of its _friction_state, least bristle states): five_axis with paper 002's friction (pin-bearing
#: loads, eq. 47); the vendor's Panda URDF with either friction (its light prismatic fingers self-lock under LuGre
#: at most random states, seeds 7 to 10: seed 11 is one where the loop solves); random friction trees whose loop
#: converges at seed 7 (trees 3, 7, 9 self-lock there: test_self_locking_state_takes_the_complex_step)
FRICTION = {"five_axis-stribeck": (_registry_model("five_axis", friction="stribeck"), 7, 0),
            "five_axis-coulomb": (_registry_model("five_axis", friction="coulomb_viscous"), 7, 0),
            "panda-urdf": (_vendor_urdf("panda", "urdf"), 11, 0), "panda-lugre": (_vendor_urdf("panda", "lugre"), 11, 9),
            **{f"tree{s}": (lambda s=s: _friction_tree(s), 7, 3) for s in (0, 1, 2, 4, 5, 11)}}


@pytest.mark.parametrize("build,seed,bristles", list(FRICTION.values()), ids=list(FRICTION))
def test_friction_tree_jacobians_are_analytical_and_equal_the_complex_step(build, seed, bristles):
    """Trees with joint friction take the analytical path too (kernels.tree_derivatives.tree_jacobian: the implicit
    function of the friction ↔ reaction loop, the reactions' derivatives from the RNEA pass): A, B equal the full
    complex-step evaluations column by column. Tolerance 1e-9 of each block's largest entry: the two agree to
    1e-16..1e-10 (the largest where the bristle columns reach 1e9 s⁻² per rad through σ0·L on light links); leaving
    out one term — the reaction frame turning with q_j, or ∂τ_f/∂q̈ in the solve — is off by 5e-6..0.9."""
    cm = compile_mechanism(build())
    sim = Simulator(cm)
    x, tau = _friction_state(sim, seed)
    cs = ComplexStep(sim)
    sources = [v.source for v in expand(cm) if v.type == "Real" and v.source[0] in ("q", "qd")]
    kind, a, b, f = spec_table(cm, sources)
    blocks = cs.continuous(x, 0.0, tau, sources)
    assert cs.path == "tree", "the analytical path did not answer"
    assert sim.model.fric_dofs.size >= 5 and sim.model.nz >= bristles
    _columns_equal_full_evaluations(cs, x, 0.0, tau, np.arange(cm.nv), (np.arange(len(sources)), kind, a, b, f),
                                    blocks, tol=1e-9)


def test_self_locking_state_takes_the_complex_step():
    """Where the friction loop finds no solution (a self-locking joint: kernels.dynamics counts a failure) q̈ is not
    an implicit function of the state; the analytical path declines and the complex step answers, as before it."""
    cm = compile_mechanism(_friction_tree(3))
    sim = Simulator(cm)
    x, tau = _friction_state(sim)
    sim.tau_drive[:] = tau
    sim.evaluate()
    assert sim.data.fric_fail[0] > 0, "the loop converged: not the case this test is about"
    cs = ComplexStep(sim)
    A, B, _, _ = cs.continuous(x, 0.0, tau)
    assert cs.path == "complex"
    cs._tree = None
    A2, B2, _, _ = cs.continuous(x, 0.0, tau)
    assert np.array_equal(A, A2) and np.array_equal(B, B2)


@pytest.mark.parametrize("name,detail", CASES, ids=IDS)
def test_step_map_equals_finite_differences_of_the_step(name, detail):
    sim = start(name, detail)
    m = sim.model
    sim.step(0.1)
    x, t, tau = sim.x.copy(), sim.t, sim.tau_drive.copy()
    sim.evaluate()                          # (the partition the step starts from)
    Ad, Bd = ComplexStep(sim).step(x, t, tau, sim.h, 0.01, Scheme(METHODS[sim.method].scheme))
    record, failures = sim.state_record()

    def step(xx, uu=tau):
        sim.restore_record(record, failures, t)
        sim.x[:] = xx
        sim.tau_drive[:] = uu
        sim.step(0.01)
        return sim.x.copy()

    n = m.nx
    Jx, Ex = jacobian(step, x, scales(m, x))
    Ju, Eu = jacobian(lambda u: step(x, u), tau, 10 * np.maximum(1.0, np.abs(tau)))
    for label, exact, oracle, est, floor in (("Ad", Ad[:n, :n], Jx[:n, :n], Ex[:n, :n], 1.0),
                                             ("Bd", Bd[:n], Ju[:n], Eu[:n], 1e-6)):
        err, own = block_error(exact, oracle, est, floor)      # (Ad of a programmed mechanism: ≈ 0, floor 1)
        assert own <= 1e-3, f"{label}: the oracle resolves only {own:.1e}"
        assert err <= max(1e-6, 10 * own), f"{label}: {err:.2e} (oracle's own error {own:.1e})"


def test_step_map_inside_the_damped_window_is_the_damped_ros2s():
    """Within ROS2_FALLBACK_TIME of a redone step the FMU steps with the damped ROS2
    (kernels.linearly_implicit._guarded_steps), so the step map the complex step differentiates there is the
    damped ROS2's: at the same state, Ad of the ROS34PW2 run inside a window equals Ad of a damped-ROS2 run
    and differs from Ad of the ROS34PW2 run outside it (share_run_state carries the window into the complex
    Data; without it the complex run took a ROS34PW2 step). The state: 50 ms into the manipulator's
    full-detail torque-mode run, where ROS34PW2 steps without a redo; the window is set through the state
    record (its last value)."""
    from fmu_mb import registry
    mod = registry.load("manipulator")
    cm = compile_mechanism(mod.build(base="flexible", link="flexible", friction="lugre", mode="torque"))
    h = mod.FMU["step_size"]
    sims = {}
    for name in ("ros34pw2", "ros2"):
        sims[name] = Simulator(cm, h=h, method=name)
        sims[name].initialize(static=True)
    sim = sims["ros34pw2"]
    sim.step(0.05)
    rec, fails = sim.state_record()
    assert rec[-1] == 0.0
    outside, _ = ComplexStep(sim).step(sim.x, sim.t, sim.tau_drive, h, h, Scheme.ROS34PW2)
    rec[-1] = 3.0                                        # inside a window
    for s in sims.values():
        s.restore_record(rec, fails, sim.t)
    inside, _ = ComplexStep(sim).step(sim.x, sim.t, sim.tau_drive, h, h, Scheme.ROS34PW2)
    damped, _ = ComplexStep(sims["ros2"]).step(sim.x, sim.t, sim.tau_drive, h, h, Scheme.ROS2)
    scale = max(1.0, np.abs(damped).max())
    assert np.abs(inside - damped).max() <= 1e-12 * scale
    assert np.abs(outside - damped).max() > 1e-3 * scale          # (the two methods' maps differ)
