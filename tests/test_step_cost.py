"""The worst case of a step's work is fixed at initialization (issue 40, fmu_mb.step_cost): the kernels count
the bounded units they do (Data.work, codes.Work), and runs of every mechanism at its most detailed options
stay within the bound of every communication step, with the fixed parts (steps, evaluations, stage matrices,
friction solves, projections) exactly as counted; each iteration limit binds when set low, and reaches the
kernels through both FMU kinds (tests/test_robustness.py runs the ends of their ranges)."""
from __future__ import annotations

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.codes import ITERATION_LIMIT, Work
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import METHODS, Simulator
from fmu_mb.step_cost import StepCost, worst_communication_step, worst_step

#: every mechanism's most detailed options (its model file's MOST_DETAILED)
DETAIL = {name: registry.most_detailed(name) for name in registry.available()}
#: a communication step that is not a multiple of any model's internal step (a remainder step every time)
DT = 0.0107
FIXED = (Work.STEPS, Work.EVALUATIONS, Work.STAGE_MATRICES, Work.FRICTION_SOLVES, Work.PROJECTIONS)


def simulator(name, **options):
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    options = {**DETAIL[name], **options}
    sim = Simulator(compile_mechanism(mod.build(**options)), meta.get("step_size", 1e-3),
                    method=auto_method(mod, options))
    sim.initialize(static=meta.get("static_start", False))
    return sim


def communication_step(sim, dt=DT) -> np.ndarray:
    """The work of one communication step as an FMU does it: the step, then the outputs' evaluation. An RK4 step's
    first stage that reused the outputs' derivative (inputs held: kernels.constrained.derivative_kept) is counted
    as the evaluation it stands for: the worst case is the step that cannot reuse it."""
    sim.data.work[:] = 0
    reused = int(sim.data.fs_hits[0])
    sim.step(dt)
    sim.evaluate()
    work = sim.data.work.copy()
    reused = int(sim.data.fs_hits[0]) - reused
    work[Work.EVALUATIONS] += reused
    if sim.model.fric_dofs.shape[0]:
        work[Work.FRICTION_SOLVES] += reused
    return work


def _unguarded(sim, dt) -> np.ndarray:
    """The fixed parts of a communication step with no redone step and no damped window: n full steps of the
    method, the remainder step, the outputs' evaluation."""
    n = int(np.floor(dt / sim.h))
    scheme = METHODS[sim.method].scheme
    evals = {0: 4, 1: 2, 2: 4}[int(scheme)]
    m = sim.model
    out = np.zeros(len(Work), np.int64)
    out[Work.STEPS] = n + 1
    out[Work.EVALUATIONS] = (n + 1) * evals + 1
    out[Work.STAGE_MATRICES] = 0 if sim.method == "rk4" else n + 1
    out[Work.FRICTION_SOLVES] = out[Work.EVALUATIONS] if m.fric_dofs.shape[0] else 0
    out[Work.PROJECTIONS] = n + 1 if m.nc and sim.cm.mechanism.solver.projection else 0
    return out


@pytest.mark.parametrize("name,mode", [(n, "programmed") for n in DETAIL] + [("manipulator", "torque")])
def test_every_communication_step_stays_within_its_worst_case(name, mode):
    """0.5 s at the FMU's defaults (the manipulator released in torque mode too: its hub impact makes the
    small-γ step redo and the damped window run, the dearest steps there are). Per communication step
    (10.7 ms: full steps and a remainder) every count ≤ the bound; without a redo the fixed parts equal it."""
    options = {"mode": mode} if "mode" in registry.load(name).OPTIONS else {}
    sim = simulator(name, **options)
    bound = worst_communication_step(sim, DT).work()
    fixed = _unguarded(sim, DT)
    checked = redone = 0
    while sim.t < 0.5:
        redo, hold, split = sim.data.lin_redo[0], sim.data.lin_hold[0], sim.data.lin_split[0]
        work = communication_step(sim)
        over = [f"{w.name} {work[w]} > {bound[w]}" for w in Work if work[w] > bound[w]]
        assert not over, f"{name} at t = {sim.t:.4f} s: {over}"
        if sim.data.lin_redo[0] == redo and hold == 0 and sim.data.lin_hold[0] == 0 and sim.data.lin_split[0] == split:
            assert [work[w] for w in FIXED] == [fixed[w] for w in FIXED], (name, sim.t, work, fixed)
            checked += 1
        else:
            redone += 1
    assert checked > 30
    if mode == "torque":
        assert redone > 0                      # the guarded path ran and stayed within the bound


def test_the_worst_case_adds_up():
    """The bound of ROS34PW2 at 1.25 ms over 10.7 ms, the manipulator at full detail (5 friction joints with
    LuGre bristles, constrained, no projection), counted by hand: 8 full steps, each ≤ its 4 evaluations and
    14 damped ROS2 substeps of 2 (the step redone for its bristle error: 2 + 4 + 8 substeps down to an
    eighth), 32 evaluations and 15 stage matrices; a remainder step of 4 evaluations, plus 1 for the outputs:
    8·32 + 4 + 1 = 261 evaluations; per friction solve ≤ 30 + 1 Newton iterations and 4 + 11·30 residuals."""
    sim = simulator("manipulator")
    assert sim.model.nz > 0
    w = worst_communication_step(sim, DT)
    assert (w.steps, w.evaluations, w.stage_matrices, w.partitions) == (8 * 15 + 1, 261, 8 * 15 + 1, 261)
    assert (w.friction_solves, w.friction_iterations, w.friction_residuals, w.friction_most) == (
        261, 261 * 31, 261 * 334, 31)
    assert (w.projections, w.projection_iterations) == (0, 0)
    assert StepCost.of_work(w.work()) == w
    assert worst_step(sim).friction_most == (worst_step(sim) * 8).friction_most == 31


def test_the_friction_iteration_limit_binds():
    """The manipulator at full detail, programmed run: the friction solves take up to 3 Newton iterations (the
    round-off polish included) at the default limit; with the limit at 1 no solve takes more than 2 (one
    iteration and the polish), the unconverged ones are counted, and the run still goes on."""
    free = simulator("manipulator")
    capped = simulator("manipulator")
    capped.set_solver(friction_iterations=1)
    for sim in (free, capped):
        sim.data.work[:] = 0
        sim.advance_to(0.2)
    assert free.data.work[Work.FRICTION_MOST] == 3 and free.data.fric_fail[0] == 0
    assert capped.data.work[Work.FRICTION_MOST] == 2 and capped.data.fric_fail[0] > 0
    assert np.all(np.isfinite(capped.x))
    assert np.abs(capped.q - free.q).max() < 1e-6          # 1 iteration and the polish: near convergence


def test_the_projection_iteration_limit_binds():
    """three_loop (projection after every step) started 1 mm and 1 mrad off its loop closures: the first
    projection needs several Newton iterations; with the limit at 1 it takes one and leaves a violation, with
    the default it converges (the limit is not reached)."""
    out = {}
    for limit in (1, 25):
        sim = simulator("three_loop")
        sim.set_solver(projection_iterations=limit)
        sim.x[:sim.model.nv] += 1e-3
        communication_step(sim, sim.h)
        out[limit] = (sim.data.work[Work.PROJECTION_MOST], sim.violation())
    assert out[1][0] == 1 and out[1][1] > 1e-9
    assert 2 <= out[25][0] < 25 and out[25][1] < 1e-11


def test_the_limits_are_checked():
    sim = simulator("five_axis")
    for bad in (-1, ITERATION_LIMIT + 1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="friction_iterations must be an integer"):
            sim.set_solver(friction_iterations=bad)
    with pytest.raises(ValueError, match="projection_iterations must be an integer"):
        sim.set_solver(projection_iterations=0)
