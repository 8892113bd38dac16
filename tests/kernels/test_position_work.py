"""The position-only work the outputs' evaluation leaves (M, the constrained system's factors, the friction
increments) is reused by the next step's first stage at the same q, C and partition (kernels.constrained:
keep_position_work, _position_work_kept; issue 40): the same bits as forming it again, and never reused where
its key changed.

Each case runs the FMUs' cycle (a 1 ms communication step, then the outputs) twice in one process: as it runs,
and with the kept work dropped before every step (Data.pk_held = 0: every stage forms its own, as before the
reuse), and compares states, derivatives, reactions and multipliers bit for bit after every step.
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
    """The states, derivatives, reactions and multipliers after each 1 ms step + outputs, and the reuse count."""
    meta = mod.FMU
    sim = Simulator(cm, min(meta.get("step_size", 1e-3), 1e-3), method=method or auto_method(mod, options))
    sim.initialize(static=meta.get("static_start", False))
    sim.evaluate()
    rng = np.random.default_rng(7)
    drive = sim.tau_drive.copy()
    rows = []
    for k in range(STEPS):
        if options.get("mode") == "torque":             # a controller's inputs: new torques every step
            sim.tau_drive[:] = drive * (1.0 + 0.05 * rng.standard_normal(drive.shape))
        if between is not None:
            between(sim, k)
        if not reuse:
            sim.data.pk_held[0] = 0
        sim.step(1e-3)
        xdot = sim.evaluate()
        rows.append(np.concatenate([sim.x, xdot, sim.data.fM.ravel(), sim.data.fF.ravel(), sim.data.lam]))
    return np.array(rows), int(sim.data.pk_hits[0])


def _bits(a):
    return a.view(np.uint64)


@pytest.mark.parametrize("name, extra, method", [
    ("rpsup", {}, None),                                  # ROS34PW2, LuGre: friction increments reused
    ("rpsup", {"mode": "torque"}, "ros2_lowdamp"),
    ("manipulator", {}, None),                            # (in torque mode a tree: nothing to keep)
    ("crane", {}, None),                                  # ROS2 (low damping); three_loop's RK4 below
    ("three_loop", {"mode": "torque"}, None),
    ("mobile_robot", {}, "ros34pw2"),
])
def test_reuse_gives_the_same_bits(name, extra, method):
    mod, options, cm = _compiled(name, **extra)
    a, hits = _run(mod, options, cm, True, method=method)
    b, none = _run(mod, options, cm, False, method=method)
    assert np.isfinite(a).all()
    np.testing.assert_array_equal(_bits(a), _bits(b))
    assert hits == STEPS and none == 0                    # every step's first stage reused the outputs' work


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
    assert hits == STEPS - changed


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
    assert hits == STEPS - 2
