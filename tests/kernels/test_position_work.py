"""What the outputs' evaluation leaves for the next step (kernels.constrained; issue 40): its position-only work
(M, the constrained system's factors, the friction increments), reused by the next step's first stage at the same
q, C and partition (keep_outputs_work, _position_work_kept), and its derivative, reused as an RK4 step's first
stage from the same state, time and inputs (derivative_kept). The same bits as forming them
again, and never reused where their key changed. A linearly implicit step's first stage reuses the whole
evaluation (evaluation_kept: its stage matrix reads the evaluation's M, C, partition and friction loop too) when
nothing else ran on the Data since.

Each case runs the FMUs' cycle (a 1 ms communication step, then the outputs) twice in one process: as it runs,
and with what was kept dropped before every step (Data.pk_held = Data.fs_held = 0: every stage forms its own, as
before the reuse), and compares states, derivatives, reactions and multipliers bit for bit after every step.
"""
from __future__ import annotations

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import Simulator

STEPS = 25


def _compiled(name: str, **extra):
    mod = registry.load(name)
    options = {**registry.most_detailed(name), **extra}
    return mod, options, compile_mechanism(mod.build(**options))


def _run(mod, options, cm, reuse: bool, between=None, method=None):
    """The states, derivatives, reactions and multipliers after each 1 ms step + outputs, and the reuse counts
    (position work, derivative)."""
    meta = mod.FMU
    sim = Simulator(cm, min(meta.get("step_size", 1e-3), 1e-3), method=method or auto_method(mod, options))
    sim.initialize(static=meta.get("static_start", False))
    sim.evaluate()
    rng = np.random.default_rng(7)
    drive = sim.tau_drive.copy()
    rows = []
    for k in range(STEPS):
        if options.get("mode") == "torque":             # a controller's inputs: new torques every step
            act = cm.actuated_dofs
            sim.tau_drive[act] = drive[act] + 0.01 * rng.standard_normal(act.shape)
        if between is not None:
            between(sim, k)
        if not reuse:
            sim.data.pk_held[0] = 0
            sim.data.fs_held[0] = 0
        sim.step(1e-3)
        xdot = sim.evaluate()
        rows.append(np.concatenate([sim.x, xdot, sim.data.fM.ravel(), sim.data.fF.ravel(), sim.data.lam]))
    return np.array(rows), (int(sim.data.pk_hits[0]), int(sim.data.fs_hits[0]))


def _bits(a):
    return a.view(np.uint64)


N = STEPS


@pytest.mark.parametrize("name, extra, method, expected", [
    ("rpsup", {}, None, (0, N)),                          # ROS34PW2, LuGre, inputs held: the whole evaluation
    ("rpsup", {"mode": "torque"}, "ros2_lowdamp", (N, 0)),  # new torques: M, the factors, the friction increments
    ("rpsup", {"mode": "torque"}, None, (N, 0)),
    ("manipulator", {}, None, (0, N)),                    # (in torque mode a tree: nothing kept)
    ("crane", {}, None, (0, N)),                          # ROS2 (low damping)
    ("three_loop", {}, None, (0, N)),                     # RK4, inputs held: the derivative itself
    ("three_loop", {"mode": "torque"}, None, (N, 0)),     # RK4, new torques every step: M and the factors
    ("mobile_robot", {}, None, (0, N)),
    ("mobile_robot", {}, "ros34pw2", (0, N)),
])
def test_reuse_gives_the_same_bits(name, extra, method, expected):
    mod, options, cm = _compiled(name, **extra)
    a, hits = _run(mod, options, cm, True, method=method)
    b, none = _run(mod, options, cm, False, method=method)
    assert np.isfinite(a).all()
    np.testing.assert_array_equal(_bits(a), _bits(b))
    assert hits == expected and none == (0, 0)            # every step's first stage reused the outputs' work


def test_a_changed_input_is_not_reused():
    """three_loop at RK4 with its inputs held reuses the outputs' derivative; a step after new solver options
    (Baumgarte's terms on: the rows' velocity and position errors then enter q̈), a new drive torque, a new rate of
    the programmed crank or a new row offset must evaluate its first stage: each changes ẋ at the same state, so
    a reuse there would change the motion (the same bits as without reuse)."""
    mod, options, cm = _compiled("three_loop")

    def change(sim, k):
        if k == 0:
            sim.set_solver(alpha=20.0, beta=20.0)
        if k == 3:
            sim.tau_drive[0] += 1e-3
        if k == 7:
            sim.set_trajectory("drive", rate=0.11)              # rad/s (was 0.1)
        if k == 11:
            sim.data.con_off[0] += 1e-6

    a, hits = _run(mod, options, cm, True, change)
    b, _ = _run(mod, options, cm, False, change)
    np.testing.assert_array_equal(_bits(a), _bits(b))
    assert hits[1] == N - 4


def test_a_changed_ellipse_is_not_reused():
    """The crane's programmed ellipse: its row of C follows the trajectory's semi-axes (inputs), so a new axis
    changes C at the same q. The steps after such a change must form M and the factors again: no reuse there,
    and the motion the no-reuse run gives (a key without C would reuse the old factors)."""
    mod, options, cm = _compiled("crane")

    def widen(sim, k):
        if k % 3 == 1:
            sim.set_trajectory("ellipse", a=3.0 + 0.002 * k)

    a, hits = _run(mod, options, cm, True, widen, method="ros2_lowdamp")
    b, _ = _run(mod, options, cm, False, widen, method="ros2_lowdamp")
    np.testing.assert_array_equal(_bits(a), _bits(b))
    changed = len(range(1, STEPS, 3))
    assert hits == (0, STEPS - changed)                   # (inputs held: the whole evaluation, where its key holds)


def test_a_new_partition_or_restored_state_is_not_reused():
    """A partition asked for again (cp_valid = 0) and a state restored from an earlier record: no reuse on
    those steps, the same bits as without it."""
    mod, options, cm = _compiled("rpsup")
    kept = {}

    def disturb(sim, k):
        if k == 4:
            kept["record"] = sim.state_record() + (sim.t,)
        if k == 9:
            sim.data.cp_valid[0] = 0
        if k == 15:
            record, failures, t = kept["record"]
            sim.restore_record(record, failures, t)

    a, hits = _run(mod, options, cm, True, disturb)
    b, _ = _run(mod, options, cm, False, disturb)
    np.testing.assert_array_equal(_bits(a), _bits(b))
    # step 9 partitions afresh; step 15 starts from the restored state (its q differs from the kept one)
    assert hits == (0, STEPS - 2)


@pytest.mark.parametrize("name, method", [("rpsup", None), ("crane", "ros2_lowdamp")])
def test_a_pass_between_is_not_reused(name, method):
    """Between the outputs and the next step a host may run another pass on the same Data at another state
    (here a Model Exchange derivative at a trial state, as an importer's finite-difference Jacobian asks for):
    the outputs' derivative stays valid for its key, but Data no longer holds that evaluation's kinematics, M,
    q̈ and friction loop, which a linearly implicit stage matrix reads. Those steps must evaluate their first
    stage (the same bits as without reuse; a reuse there would build the stage matrix at the trial state)."""
    mod, options, cm = _compiled(name)

    def trial(sim, k):
        if k % 4 == 2:
            xp = sim.x.copy()
            xp[:cm.model.nv] += 1e-6
            sim.k.derivative_constrained(sim._m, sim._d, xp, float(sim.t), sim.tau_drive, np.empty_like(xp))

    a, hits = _run(mod, options, cm, True, trial, method=method)
    b, _ = _run(mod, options, cm, False, trial, method=method)
    np.testing.assert_array_equal(_bits(a), _bits(b))
    assert hits == (0, STEPS - len(range(2, STEPS, 4)))
