"""Constraint kinds, trajectories and the constrained solver on small hand-checkable cases.

* every row kind: C against finite differences of Φ, Φ̇ = C q̇ + Φ_t and γ against finite
  differences of Φ̇ along q(τ) = q + q̇τ, t + τ (q̈ = 0, Baumgarte off);
* trajectories: exact derivatives against finite differences, paper 000 eq. (28);
* Baumgarte: the violation of a coordinate row obeys Φ̈ + 2αΦ̇ + β²Φ = 0 exactly;
* redundancy: the minimum-norm λ does not depend on the order of the equations;
  eliminated rows carry no force and leave q̈ unchanged;
* partitioning: the user's dependent coordinates are used, a singular choice is replaced;
* projection: a frictionless four-bar conserves energy and holds its loop to round-off.
"""
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from fmu_mb.algorithms import trajectory as evaluate
from fmu_mb.kernels import constraints as K
from fmu_mb.kernels import kinematics as KK
from fmu_mb.kernels.handles import data_struct, model_struct
from fmu_mb.kernels.trajectory import quintic
from fmu_mb.model import Body, Joint, Mechanism, compile_mechanism
from fmu_mb.model.constraints import (
    ConstraintSolver,
    CoordinateConstraint,
    CutJoint,
    EllipseShape,
    KnifeEdge,
    PointOnEllipse,
    PointTrajectory,
    PointVelocity,
)
from fmu_mb.samples import random_inertia
from fmu_mb.simulator import Simulator
from fmu_mb.trajectories import EllipseArc, Linear, Move, Rectangle, plane_frame


# ----------------------------------------------------------------------------- trajectories
def _fd_check(traj, times, h=1e-6, tol=1e-6):
    for t in times:
        p, v, a = evaluate(traj, t)
        pp, vp, _ = evaluate(traj, t + h)
        pm, vm, _ = evaluate(traj, t - h)
        assert np.allclose((pp - pm) / (2 * h), v, atol=tol * max(1, np.abs(v).max()))
        assert np.allclose((vp - vm) / (2 * h), a, atol=tol * 10 * max(1, np.abs(a).max()))


def test_quintic_is_paper_000_eq_28():
    ds, dt, ts = 0.3, 1.0, 0.5
    for t in np.linspace(0.5, 1.5, 11):
        s = 10 * ds / dt ** 3 * (t - ts) ** 3 - 15 * ds / dt ** 4 * (t - ts) ** 4 + 6 * ds / dt ** 5 * (t - ts) ** 5
        assert abs(ds * quintic((t - ts) / dt)[0] - s) <= 1e-15
    assert quintic(0.0) == (0.0, 0.0, 0.0) and quintic(1.0) == (1.0, 0.0, 0.0)


@pytest.mark.parametrize("traj", [
    Move(delta=0.2, t_start=0.3, duration=1.0),
    Rectangle(centre_u=0.1, centre_v=-0.2, width=0.4, height=0.3, move_time=1.0, stop_time=0.5, t_start=0.2),
    EllipseArc(a=3.0, b=2.0, centre=(0.1, 0.2, 0.3), phi_start=0.3, phi_end=2.0, t_start=0.1, duration=2.0),
    Linear(rate=0.1, start=0.2, t_start=0.0, unit="rad")])
def test_trajectory_derivatives_are_exact(traj):
    _fd_check(traj, np.linspace(0.05, 4.9, 37))


def test_rectangle_visits_corners_with_stops():
    r = Rectangle(centre_u=0.0, centre_v=0.0, width=0.4, height=0.2, move_time=1.0, stop_time=0.5, axes=(1, 2))
    corners = [(-0.2, -0.1), (0.2, -0.1), (0.2, 0.1), (-0.2, 0.1), (-0.2, -0.1)]
    for k, (u, v) in enumerate(corners):
        for t in (1.5 * k - 0.0001 * (k > 0) + 0.0001 * (k == 0), 1.5 * k - 0.25 if k else 0.0):
            p, vel, _ = evaluate(r, max(t, 0.0))
        p, vel, acc = evaluate(r, 1.5 * k - 0.25 if k else 0.0)      # during the stop
        assert np.allclose(p, (0.0, u, v), atol=1e-15) and np.allclose(vel, 0.0) and np.allclose(acc, 0.0)


def test_trajectory_parameters_are_checked():
    m = Move(delta=0.2, name="lift")
    with pytest.raises(ValueError, match="duration"):
        m.set(duration=-1.0)
    assert m.duration == 1.0                              # unchanged after the refusal
    with pytest.raises(KeyError, match="no parameter 'speed'"):
        m.set(speed=1.0)
    R, o = plane_frame(math.pi / 4, (0.0384, 0.2335, 0.0))      # paper 000 eq. (35)
    assert np.allclose(R @ [1, 0, 0], [math.sqrt(0.5), math.sqrt(0.5), 0]) and np.allclose(o, [0.0384, 0.2335, 0])


# ----------------------------------------------------------------------------- every row kind
def kitchen_sink(seed=3):
    """A spatial tree (free base, revolute/prismatic/spherical joints) with one constraint of
    every kind, time-dependent where the kind allows it."""
    rng = np.random.default_rng(seed)
    mech = Mechanism("sink", gravity=(0.0, 0.0, -9.81))

    def body(name):
        m, I = random_inertia(rng)
        return Body(name, m, tuple(rng.normal(0, 0.2, 3)), I)

    rot = lambda: Rotation.random(random_state=rng).as_matrix()
    mech.add(body("base"), Joint("base", "free", "ground", "base"))
    mech.add(body("a"), Joint("ja", "revolute", "base", "a", origin=(0.3, 0, 0.2), rotation=rot(), axis=(0, 0, 1)))
    mech.add(body("b"), Joint("jb", "prismatic", "a", "b", origin=(0.4, 0.1, 0), rotation=rot(), axis=(1, 0, 0)))
    mech.add(body("c"), Joint("jc", "spherical", "base", "c", origin=(-0.3, 0.2, 0.1)))
    mech.add(body("d"), Joint("jd", "revolute", "c", "d", origin=(0.2, 0.3, 0), rotation=rot(), axis=(0, 1, 0)))
    mech.constraints += [
        CoordinateConstraint("coord", "ja", trajectory=Move(delta=0.3, t_start=0.1, duration=1.0, unit="rad")),
        PointTrajectory("path", "b", (0.1, 0.2, 0.0),
                        EllipseArc(a=0.3, b=0.2, phi_end=3.0, duration=2.0), axes=(0, 2),
                        frame=plane_frame(0.7, (0.1, -0.2, 0.3))),
        CutJoint("cut_r", "revolute", "d", "b", origin_a=(0.1, 0, 0), origin_b=(0.0, 0.1, 0.2), rotation_a=rot(),
                 rotation_b=rot()),
        CutJoint("cut_p", "prismatic", "c", "a", origin_a=(0.0, 0.1, 0), origin_b=(0.2, 0.0, 0.1), rotation_a=rot(),
                 rotation_b=rot()),
        KnifeEdge("knife", "base", (0.2, 0.1, -0.1), (0.0, 1.0, 0.0)),
        PointVelocity("vel", "d", (0.1, 0.0, 0.0), (0.0, 0.0, 1.0), Move(delta=0.5, duration=1.0), in_link=False),
        PointOnEllipse("ell", "c", (0.1, 0.1, 0.0), EllipseShape(a=0.5, b=0.4), frame=plane_frame(0.3, (0.1, 0, 0))),
    ]
    return mech


def _terms(sim, q, v, t):
    m, d = model_struct(sim.model), data_struct(sim.data)          # (the JIT kernels themselves, whatever sim runs)
    KK.forward_kinematics(m, d, q, v)
    K.constraint_terms(m, d, q, v, t)
    d = sim.data
    return d.con_phi.copy(), d.con_phid.copy(), d.con_C.copy(), d.con_gam.copy()


def test_every_row_kind_against_finite_differences():
    cm = compile_mechanism(kitchen_sink())
    sim = Simulator(cm, 1e-3, assemble=False)
    rng = np.random.default_rng(7)
    q, v, t = rng.uniform(-0.5, 0.5, cm.nv), rng.normal(0, 1.0, cm.nv), 0.6
    phi, phid, C, gam = _terms(sim, q, v, t)
    kind = np.asarray(cm.model.con_kind)
    hol = kind != 3
    h = 1e-6
    J = np.zeros_like(C)
    for j in range(cm.nv):
        e = np.zeros(cm.nv)
        e[j] = h
        J[:, j] = (_terms(sim, q + e, v, t)[0] - _terms(sim, q - e, v, t)[0]) / (2 * h)
    assert np.abs(J[hol] - C[hol]).max() <= 1e-7                        # Φ_q
    dphi = (_terms(sim, q + h * v, v, t + h)[0] - _terms(sim, q - h * v, v, t - h)[0]) / (2 * h)
    assert np.abs(dphi[hol] - phid[hol]).max() <= 1e-7                  # Φ̇ = Φ_q q̇ + Φ_t
    ddphi = (_terms(sim, q + h * v, v, t + h)[1] - _terms(sim, q - h * v, v, t - h)[1]) / (2 * h)
    assert np.abs(ddphi + gam).max() <= 1e-6 * max(1.0, np.abs(gam).max())   # γ = −Φ̈(q̈ = 0)
    assert set(kind.tolist()) == {0, 1, 2, 3, 4}                         # every kind was checked


def test_reaction_pass_reproduces_the_applied_forces():
    """M q̈ + b − Cᵀλ from the Newton–Euler pass with the constraint wrenches equals the
    applied generalized forces: the row wrenches and C are the same map. (Coordinate rows act
    as generalized forces of their joint, not as wrenches: they show in the joint's axial
    reaction, so they are added here.)"""
    cm = compile_mechanism(kitchen_sink())
    sim = Simulator(cm, 1e-3, assemble=False)
    rng = np.random.default_rng(8)
    sim.set_state(q=rng.uniform(-0.5, 0.5, cm.nv), qd=rng.normal(0, 1.0, cm.nv), anchor=False)
    sim.tau_drive[:] = rng.normal(0, 3.0, cm.nv)
    sim.evaluate()
    coord = np.asarray(cm.model.con_kind) == 2
    applied = sim.tau_drive + sim.data.tau_pas + sim.data.con_C[coord].T @ sim.lam[coord]
    assert coord.any() and np.abs(sim.data.tau - applied).max() <= 1e-10


# ----------------------------------------------------------------------------- Baumgarte, redundancy, partition
def pendulum_chain(n=3, coord=None):
    mech = Mechanism("chain", gravity=(0.0, -9.81, 0.0))
    parent = "ground"
    for k in range(n):
        mech.add(Body(f"l{k}", 1.0 + 0.2 * k, (0.25, 0, 0), np.diag([1e-3, 0.02, 0.02])),
                 Joint(f"j{k}", "revolute", parent, f"l{k}", origin=(0.5 if k else 0.0, 0, 0), axis=(0, 0, 1),
                       q0=[0.3 * (k + 1)]))
        parent = f"l{k}"
    if coord:
        mech.constraints.append(coord)
    return mech


def test_baumgarte_violation_follows_its_ode():
    """A coordinate row Φ = q − g(t) gives q̈ = g̈ − 2αΦ̇ − β²Φ exactly, so Φ(t) is the solution of
    Φ̈ + 2αΦ̇ + β²Φ = 0 (paper 000 eq. 33) from Φ(0) = Φ0, Φ̇(0) = 0; RK4 error at h = 1 ms ≤ 1e-9."""
    alpha, beta, phi0 = 5.0, 4.0, 0.1
    mech = pendulum_chain(coord=CoordinateConstraint("hold", "j1", trajectory=Move(delta=0.0, start=0.6 - phi0)))
    mech.solver = ConstraintSolver(alpha=alpha, beta=beta, assemble=())
    sim = Simulator(compile_mechanism(mech), 1e-3)
    r = np.roots([1.0, 2 * alpha, beta * beta])
    c2 = -r[0] * phi0 / (r[1] - r[0])
    c1 = phi0 - c2
    for _ in range(20):
        sim.step(0.1)
        exact = (c1 * np.exp(r[0] * sim.t) + c2 * np.exp(r[1] * sim.t)).real
        assert abs((sim.q[1] - (0.6 - phi0)) - exact) <= 1e-9


def redundant_loop(order=(0, 1, 2), eliminate=()):
    """A planar parallelogram with three parallel cranks (one redundant row among cut1, cut2)
    and cut3 repeating cut2 (two more): 6 rows, rank 3."""
    mech = Mechanism("parallelogram", gravity=(0.0, -9.81, 0.0))
    for k in range(3):
        mech.add(Body(f"crank{k}", 1.0, (0.15, 0, 0), np.diag([1e-4, 4e-3, 4e-3])),
                 Joint(f"c{k}", "revolute", "ground", f"crank{k}", origin=(0.4 * k, 0, 0), axis=(0, 0, 1), q0=[0.8],
                       qd0=[1.0]))
    mech.add(Body("coupler", 2.0, (0.4, 0, 0), np.diag([1e-4, 0.1, 0.1])),
             Joint("top", "revolute", "crank0", "coupler", origin=(0.3, 0, 0), axis=(0, 0, 1), q0=[-0.8]))
    cuts = [CutJoint(f"cut{k}", "revolute", "coupler", f"crank{k}", origin_a=(0.4 * k, 0, 0), origin_b=(0.3, 0, 0),
                     planar=True) for k in (1, 2)]
    cuts.append(CutJoint("cut3", "revolute", "coupler", "crank2", origin_a=(0.8, 0, 0), origin_b=(0.3, 0, 0),
                         planar=True))
    mech.constraints = [cuts[i] for i in order]
    mech.solver = ConstraintSolver(eliminate=eliminate)
    return mech


def test_minimum_norm_multipliers_do_not_depend_on_the_order():
    ref = None
    for order in ((0, 1, 2), (2, 0, 1), (1, 2, 0)):
        cm = compile_mechanism(redundant_loop(order))
        sim = Simulator(cm, 1e-3)
        sim.evaluate()
        lam = dict(zip(cm.row_labels, sim.lam))
        assert sim.rank == 3 and cm.nc == 6
        if ref is None:
            ref = (lam, sim.qdd.copy())
        assert np.abs(sim.qdd - ref[1]).max() <= 1e-12
        assert max(abs(lam[k] - ref[0][k]) for k in lam) <= 1e-10


def test_eliminated_rows_carry_no_force_and_keep_the_motion():
    base = Simulator(compile_mechanism(redundant_loop()), 1e-3)
    base.evaluate()
    cm = compile_mechanism(redundant_loop(eliminate=("cut3.x", "cut3.y")))
    sim = Simulator(cm, 1e-3)
    sim.evaluate()
    lam = dict(zip(cm.row_labels, sim.lam))
    assert lam["cut3.x"] == lam["cut3.y"] == 0.0
    assert abs(lam["cut2.x"]) + abs(lam["cut2.y"]) > 0.0               # cut2 now carries what cut3 did
    assert np.abs(sim.qdd - base.qdd).max() <= 1e-12
    flags = base.uniqueness()
    # the cranks share the coupler's load in a way rigid bodies cannot split
    assert not flags["cut1"] and not flags["cut2"] and not flags["cut3"] and not flags["c0"]


def test_user_dependent_coordinates_and_fallback():
    mech = redundant_loop()
    mech.constraints = mech.constraints[:1]
    mech.solver = ConstraintSolver(dependent=("c1.q", "top.q"))
    sim = Simulator(compile_mechanism(mech), 1e-3)
    sim.evaluate()
    assert sorted(sim.dependent_coordinates) == ["c1.q", "top.q"]
    mech.solver = ConstraintSolver(dependent=("c2.q", "c0.q"))          # c2 does not enter cut1: singular
    sim = Simulator(compile_mechanism(mech), 1e-3)
    sim.evaluate()
    assert "c2.q" not in sim.dependent_coordinates and sim.rank == 2


def test_eliminating_a_needed_row_is_refused():
    with pytest.raises(ValueError, match="not redundant"):
        Simulator(compile_mechanism(redundant_loop(eliminate=("cut3.x", "cut3.y", "cut2.x", "cut2.y"))), 1e-3)


def test_projection_keeps_the_loop_and_the_energy():
    """The parallelogram (cut1 only) swings over the top: its cranks pass the change points
    c0 = −π (t ≈ 1.15 s) and 0 (t ≈ 1.95 s), where they are collinear with the ground line, C loses
    rank and the rigid model's motion is not unique (it may switch to the anti-parallelogram
    branch). The loop must hold through them; the energy is checked up to the first one (measured
    drift 1e-10 J), since across them it jumps by whatever the rounding picks: 5e-9 to 4e-3 J over
    5 s, depending on the formulation and on how the saddle system is factored."""
    mech = redundant_loop()
    mech.constraints = mech.constraints[:1]
    mech.solver = ConstraintSolver(projection=True)
    sim = Simulator(compile_mechanism(mech), 1e-3)
    e0 = sim.energies()["balance"]
    worst = 0.0
    for k in range(50):
        sim.step(0.1)
        sim.evaluate()
        worst = max(worst, sim.violation("cut1"))
        if k == 10:
            assert sim.q[0] < -3.2                        # (before the change point at c0 = −π)
            e = sim.energies()
            assert abs(e["balance"] - e0) <= 1e-9 * abs(e["kinetic"] + 1.0)
    assert worst <= 1e-12


def test_constraint_validation_messages():
    mech = pendulum_chain(coord=CoordinateConstraint("bad", "j9"))
    with pytest.raises(ValueError, match="joint 'j9' is not a joint"):
        compile_mechanism(mech)
    mech = pendulum_chain(coord=CoordinateConstraint("bad", "j1", coordinate=2))
    with pytest.raises(ValueError, match="coordinate 2 out of range"):
        compile_mechanism(mech)
    mech = pendulum_chain(coord=CutJoint("cut", "hinge", "l0", "l2"))
    with pytest.raises(ValueError, match="kind must be one of"):
        compile_mechanism(mech)
    mech = pendulum_chain()
    mech.solver = ConstraintSolver(eliminate=("nope",))
    with pytest.raises(ValueError, match="unknown constraint rows"):
        compile_mechanism(mech)
    mech = pendulum_chain()
    mech.solver = ConstraintSolver(alpha=-1.0)
    with pytest.raises(ValueError, match="alpha must be"):
        compile_mechanism(mech)
