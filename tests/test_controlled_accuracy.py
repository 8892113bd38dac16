"""Accuracy at real-time speed under a controller (issue 40): every mechanism at its most detailed options,
in torque mode, driven 5 s by a stabilizing controller at the papers' drive sizes, run by the FMU's default
method and internal step, stays within 1e-3 rad (or m) of a converged reference, every coordinate (elastic
ones included) at every communication step; also at the ends of each Value option's range where a
closed loop exists.

The loops (the controller sampled and held, as a co-simulation master or a rig drives the FMU):

* **crane** — the README's quick-start loop (fmu_mb.demo.crane), with the PD law acting on the current sample
  (the demo's SSP exchange, fmu_mb.system, acts on the previous one): the rigid crane in programmed mode with paper
  001's −4000 N·m column pulse gives the references and the feed-forward (its required drives plus the
  pulse); a PD law with the demo's gains (ω = 6 rad/s, ζ = 1 on the rigid crane's mass-matrix diagonal),
  sampled every 0.25 ms, drives the full-detail plant (flexible jib, LuGre, sprung base);
* **manipulator, rpsup, three_loop, mobile_robot** — the programmed run's joint motion and required drives
  (feed-forward) plus a PD law on the actuated joints, gains from the mass-matrix diagonal at the start
  (ω = 10 rad/s, ζ = 0.7), sampled every 10 ms (tests/kernels/test_linearly_implicit.py's tracking loop);
* **five_axis** (no programmed mode) — paper 002's motion (q̈ = 0.2 rad/s² from rest) by inverse dynamics
  plus a computed-torque PD law (M(q) at each sample, ω = 10, ζ = 0.7), every 10 ms (a diagonal PD law is
  unstable on this tree, see test_linearly_implicit).

The reference is the same loop run by a converged method, RK4 where it is stable at a practical step: the step
``h`` of each case and ``2h`` are asserted to agree within REF_AGREE (1 % of the bound), and each reference was
checked against ROS34PW2 at 1e-5 s (values in CASES). The FMU's method is solver.integrator = auto's choice
(fmu_mb.model.options.auto_method; tests/test_robustness.py checks the FMU core makes the same): rpsup's LuGre
note makes it ros34pw2, where ros2_lowdamp at 1 ms is 5.8e-3 off (models/rpsup.py).

Where no closed loop exists, whatever the method. The manipulator's flexible link with paper 000's ideal drives
(armature 0): a PD law sampled at 10 ms acts on the link's ~2e-5 kg·m² hub alone (models/manipulator.py; the
runs fail within 40 ms, ROS34PW2 at 1e-5 s included): the cases set the armature the model file advises (0.5
kg·m²) and its maximum. The undamped crane under a PD law at 10 ms (ω = 10 rad/s) is unstable too: ROS34PW2 at
1e-5 s and RK4 at 2.5e-5 s leave the plan by radians within 0.3 s (the sampled loop pumps the undamped jib and
base modes), while ROS2's numerical damping hides it; under the quick-start loop (0.25 ms) it is stable and
in the cases.
"""
from __future__ import annotations

import numpy as np
import pytest

from fmu_mb import algorithms as alg
from fmu_mb import demo, registry
from fmu_mb.model import compile_mechanism
from fmu_mb.model.compiled import make_data
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import Simulator
from tests.test_step_cost import DETAIL

T = 5.0
BOUND = 1e-3
#: the reference's own step-halving difference (its error is smaller still: ≤ REF_AGREE / (2^p − 1))
REF_AGREE = 1e-5


def _default(name, options):
    """The FMU's integrator (solver.integrator = auto) and internal step for these options."""
    mod = registry.load(name)
    return auto_method(mod, options), mod.FMU["step_size"]


def _crane_plan(dt=2.5e-4):
    """The quick-start loop's reference crane (programmed, rigid jib and base, no friction, the column pulse):
    joint references and feed-forward per sample."""
    mod = registry.load("crane")
    cm = compile_mechanism(mod.build(base="rigid"))
    idx = [cm.joint(j).dofadr for j in demo.CRANE_JOINTS]
    sim = Simulator(cm, h=mod.FMU["step_size"], method=mod.FMU["method"])
    sim.initialize(static=True)
    rq, rv, ff = [], [], []
    for k in range(int(round(T / dt))):
        pulse = demo.PULSE if k * dt < demo.PULSE_TIME - 1e-12 else 0.0
        sim.evaluate()
        f = sim.tau_required[idx].copy()
        f[0] += pulse                                   # the column's applied pulse is feed-forward too
        rq.append(sim.q[idx].copy()), rv.append(sim.qd[idx].copy()), ff.append(f)
        sim.tau_drive[idx[0]] = pulse
        sim.step(dt)
    Kp, Kd = demo.crane_gains()
    return dict(dt=dt, q=rq, v=rv, ff=ff, kp=Kp, kd=Kd, gains="fixed")


def _programmed_plan(name, options, dt=0.01, omega=10.0, zeta=0.7):
    """The programmed run at the FMU's defaults: actuated joints' motion and required drives per sample."""
    mod = registry.load(name)
    method, h = _default(name, options)
    cm = compile_mechanism(mod.build(**options))
    act = cm.actuated_dofs
    sim = Simulator(cm, h=h, method=method)
    sim.initialize(static=mod.FMU.get("static_start", False))
    rq, rv, ff = [], [], []
    for _ in range(int(round(T / dt))):
        sim.evaluate()
        rq.append(sim.q[act].copy()), rv.append(sim.qd[act].copy()), ff.append(sim.tau_required[act].copy())
        sim.step(dt)
    return dict(dt=dt, q=rq, v=rv, ff=ff, omega=omega, zeta=zeta, gains="diagonal")


def _five_axis_plan(options, dt=0.01, omega=10.0, zeta=0.7):
    """Paper 002's motion and its inverse-dynamics drives per sample."""
    from fmu_mb.scenarios import five_axis as paper
    cm = compile_mechanism(registry.load("five_axis").build(**options))
    data, act = make_data(cm.model), cm.actuated_dofs
    rq, rv, ff = [], [], []
    for k in range(int(round(T / dt))):
        q, v, a = paper.prescribed_motion(k * dt, n=cm.nv)
        rq.append(q[act]), rv.append(v[act]), ff.append(alg.inverse_dynamics(cm.model, data, q, v, a)[act])
    return dict(dt=dt, q=rq, v=rv, ff=ff, omega=omega, zeta=zeta, gains="computed_torque")


def plan(name, options):
    """The controller's references and feed-forward for mechanism ``name`` with ``options`` (see the module)."""
    if name == "crane":
        return _crane_plan()
    if name == "five_axis":
        return _five_axis_plan(options)
    return _programmed_plan(name, options)


def closed_loop(name, options, method, h, p) -> np.ndarray:
    """Run the plant in torque mode under the plan's controller; q (every coordinate) after each sample."""
    mod = registry.load(name)
    torque = {"mode": "torque"} if "mode" in mod.OPTIONS else {}
    cm = compile_mechanism(mod.build(**torque, **options))
    act = ([cm.joint(j).dofadr for j in demo.CRANE_JOINTS] if name == "crane" else cm.actuated_dofs)
    sim = Simulator(cm, h=h, method=method)
    sim.initialize(static=mod.FMU.get("static_start", False))
    data = make_data(cm.model)
    if p["gains"] == "fixed":
        kp, kd = p["kp"], p["kd"]
    else:
        M = alg.crba(cm.model, data, sim.q)[np.ix_(act, act)]
        kp, kd = p["omega"] ** 2 * np.diag(np.diag(M)), 2.0 * p["zeta"] * p["omega"] * np.diag(np.diag(M))
    out = np.empty((len(p["ff"]), cm.nv))
    for k, (q_ref, v_ref, ff) in enumerate(zip(p["q"], p["v"], p["ff"])):
        if p["gains"] == "computed_torque":
            M = alg.crba(cm.model, data, sim.q)[np.ix_(act, act)]
            kp, kd = p["omega"] ** 2 * M, 2.0 * p["zeta"] * p["omega"] * M
        e, ed = q_ref - sim.q[act], v_ref - sim.qd[act]
        sim.set_drive(ff + (kp * e + kd * ed if p["gains"] == "fixed" else kp @ e + kd @ ed))
        sim.step(p["dt"])
        out[k] = sim.q
    assert sim.friction_failures == 0
    return out


FLEX_MANIPULATOR = dict(DETAIL["manipulator"], armature=0.5)

#: (mechanism, options over its most detailed ones, reference method, reference step h). Measured (this machine):
#: the default's largest deviation from the reference; the reference's from ROS34PW2 at 1e-5 s (RK4 at 5e-6 s
#: for rpsup's: 2.4e-10).
CASES = [
    ("crane", {}, "rk4", 1e-4),                                    # 2.9e-6; RK4 at 1e-4 s 5.3e-9 from ROS34PW2
    ("crane", dict(damping=0.0), "rk4", 5e-5),                     # 4.6e-5 (the paper's undamped structure)
    ("crane", dict(damping=1e-2), "ros34pw2", 1e-4),               # 1.2e-6 (RK4 is unstable at 1e-4 s here)
    ("crane", dict(support_z=1e4), "rk4", 1e-4),                   # auto: ros34pw2 (the crane's note), 7.9e-7
    ("crane", dict(support_z=1e9), "rk4", 1e-4),                   # 2.8e-6
    ("manipulator", FLEX_MANIPULATOR, "ros34pw2", 2e-4),           # 3.8e-6; reference 1.6e-7
    pytest.param("manipulator", dict(FLEX_MANIPULATOR, armature=10.0), "ros34pw2", 1e-4,   # 9.4e-4; ref. 1.6e-6
                 marks=pytest.mark.xfail(strict=False, reason=(
                     "known limit (issue 40, docs/integrators.md): under numba 0.68 / NumPy 2.4 on an AMD EPYC "
                     "host the programmed run at the defaults fails at 3.07 s where a LuGre joint comes to rest; "
                     "with older numba, and on an Intel Xeon host, it runs (9.4e-4 from the reference): the case "
                     "sits at the limit and round-off decides"))),
    ("manipulator", dict(FLEX_MANIPULATOR, damping=0.0), "ros34pw2", 2e-4),     # 3.8e-6; reference 4.8e-7
    ("manipulator", dict(FLEX_MANIPULATOR, damping=1e-2), "ros34pw2", 2e-4),    # 4.5e-7
    ("rpsup", {}, "ros34pw2", 2e-4),                               # auto: ros34pw2 (LuGre), 1.6e-5; reference 1.8e-7
    ("five_axis", {}, "rk4", 2.5e-4),                              # 6.4e-7
    ("three_loop", {}, "rk4", 2.5e-4),                             # 2.4e-6 at its 2.5 ms (1.2e-8 at 1 ms)
    ("mobile_robot", {}, "rk4", 2.5e-4),                           # 8.4e-13 at its 5 ms (6.3e-13 at 1 ms)
]


def _case_id(c) -> str:
    name, options = (c.values if hasattr(c, "values") else c)[:2]
    return f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items() if k not in DETAIL[name]) or 'detail'}"


@pytest.mark.parametrize("name, options, ref_method, ref_h", CASES, ids=[_case_id(c) for c in CASES])
def test_the_default_solver_stays_within_1e_3_of_the_converged_closed_loop(name, options, ref_method, ref_h):
    options = {**DETAIL[name], **options}
    p = plan(name, options)
    ref = closed_loop(name, options, ref_method, ref_h, p)
    agree = np.abs(closed_loop(name, options, ref_method, 2 * ref_h, p) - ref).max()
    assert agree <= REF_AGREE, f"reference not converged: {agree:.2e} between h and 2h"
    method, h = _default(name, options)
    err = np.abs(closed_loop(name, options, method, h, p) - ref).max()
    print(f"{name} {options}: default {method} at {h:g} s (samples of {p['dt']:g} s): {err:.2e} from {ref_method} at {ref_h:g} s "
          f"(which agrees with 2h to {agree:.1e})")
    assert err <= BOUND - REF_AGREE
