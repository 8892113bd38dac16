"""What issue 40's speed targets leave for one evaluation of the pipeline, against the fastest peer's evaluation.

Run:  python bench/target_budget.py [--calls 3000]

A target of F× real time at communication step Δ leaves Δ/F of computing per communication step. The FMU's
default method takes n = ⌈Δ/h⌉ steps of its internal step h (the largest its accuracy allows: the model files and
docs/integrators.md say why, e.g. rpsup's friction torques 11 % off at 2 ms) with e evaluations of the pipeline
each (RK4 4, ROS2 2, ROS34PW2 4); the outputs' evaluation after the communication step and the first stage that
reuses it (inputs held) cancel. So one evaluation may cost at most

    b = Δ / (F · n · e)

— a generous budget: the stage matrix and its LU, the stage solves, the projection and the FMU's C layer are
counted as free. A second budget leaves out of Δ/F the step's other work as fmu_mb does it (the Rosenbrock stage
matrix built and LU-factored once and e stage solves; the projection after an RK4 step where the solver projects;
the FMU's C layer still free). Measured in the same run, at each mechanism's number of coordinates nv:

* fmu_mb: one stage derivative of the mechanism at its most detailed options (friction ↔ reaction loop,
  flexible members, supports; position work formed, not reused), on the state after 50 ms of its FMU's run;
* the same evaluation's problem without the mechanism's physics, on a random spatial tree of nv joints closed by
  spherical cut joints (two, 6 loop rows; one, 3 rows, below 9 joints; bench/constrained_cost.py's trees):
  fmu_mb's GPME stage derivative, and Pinocchio's constraintDynamics (C++, proximal KKT solver, 1e-12);
* Pinocchio's aba on that tree with its loops cut open: the floor of any forward dynamics of that size.

The Pinocchio times are called from Python; the same call on a 4-joint tree (one loop) is subtracted from each,
which removes the call's overhead and a little of its work, so they are lower bounds of the C++ time. Each time
is the best of 3 rounds of ``--calls`` calls (bench/profile_step.py's timer). Where Pinocchio's closed-loop
evaluation exceeds b, the target is out of reach at the step the mechanism's accuracy needs for any evaluation as
fast as Pinocchio's — which has no friction loop and no reactions to compute.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
import pinocchio as pin

from constrained_cost import FmuMb, Pinocchio, loop_case  # noqa: E402  (bench/ is the script's folder)
from profile_step import _best, _derivative, _projection, _stage_matrix, _stage_solve  # noqa: E402
from realtime import DETAIL  # noqa: E402

from fmu_mb import registry
from fmu_mb.codes import ROS2_GAMMA_DAMPED, SolverOption
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import METHODS, Simulator

#: (communication step s, real-time factor): issue 40's two speed targets
TARGETS = ((0.01, 100.0), (0.001, 50.0))
EVALUATIONS = {"RK4": 4, "ROS2": 2, "ROS34PW2": 4}


def _mechanism(name: str, calls: int) -> dict:
    """The model's size, method and step, and µs per stage derivative at its most detailed options."""
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    method, h = auto_method(mod, DETAIL[name]), meta.get("step_size", 1e-3)
    cm = compile_mechanism(mod.build(**DETAIL[name]))
    sim = Simulator(cm, h, method=method)
    sim.initialize(static=meta.get("static_start", False))
    sim.step(0.05)
    sim.data.pk_held[0] = sim.data.fs_held[0] = 0                 # (form the position work, as a new state does)
    m, d, x, f, k = sim._m, sim._d, sim.x.copy(), np.zeros_like(sim.x), np.zeros_like(sim.x)
    us = _best(_derivative, (m, d, x, sim.t, sim.tau_drive, f), calls)
    evaluations = EVALUATIONS[METHODS[method].scheme.name]
    rest = 0.0                                                    # the step's work besides its evaluations, µs
    if METHODS[method].scheme.name != "RK4":
        gh = ROS2_GAMMA_DAMPED * h
        rest += _best(_stage_matrix, (m, d, x, gh), calls)
        rest += evaluations * _best(_stage_solve, (m, d, f, k, gh), calls)
    if cm.model.nc and sim.data.solver_opt[SolverOption.PROJECTION] != 0.0:
        rest += _best(_projection, (m, d, x, sim.t), calls)
    return dict(nv=cm.model.nv, nc=cm.model.nc, method=method, h=h, evaluations=evaluations, fmu_mb=us, rest=rest)


class _Peers:
    """The frictionless closed tree of nv joints: fmu_mb's and Pinocchio's evaluations, Pinocchio's open ABA."""

    def __init__(self, nv: int, calls: int):
        mech, pmodel, pins, q, v, tau = loop_case(nv, 2 if nv >= 9 else 1)
        gp = FmuMb(mech, "gpme", q, v)
        gp.sim.tau_drive[:] = tau
        s, f = gp.sim, np.zeros_like(gp.sim.x)
        self.fmu_mb = _best(_derivative, (s._m, s._d, s.x, 0.0, s.tau_drive, f), calls)
        self.rows = s.model.nc
        pn = Pinocchio(pmodel, pins)
        self.pinocchio = _best(_constraint_dynamics, (pn, q, v, tau), calls)
        data = pmodel.createData()
        self.aba = _best(_aba, (pmodel, data, q, v, tau), calls)
        self.qdd_error = float(np.abs(gp.qdd() - pn.qdd(q, v, tau)).max())


def _constraint_dynamics(pn, q, v, tau, n):
    m, d, cms, cds, prox = pn.model, pn.data, pn.cms, pn.cds, pn.prox
    for _ in range(n):
        pin.constraintDynamics(m, d, q, v, tau, cms, cds, prox)


def _aba(model, data, q, v, tau, n):
    for _ in range(n):
        pin.aba(model, data, q, v, tau)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=3000, help="calls per timing round (best of 3 rounds)")
    args = p.parse_args(argv)
    small = _Peers(4, args.calls)                                 # the call's overhead (and a 4-joint loop's work)
    print(f"Pinocchio's call on a 4-joint tree, subtracted below: constraintDynamics {small.pinocchio:.2f} µs, "
          f"aba {small.aba:.2f} µs\n")
    print("| model | nv, rows | method, h | target | evaluations per communication step | budget µs per evaluation "
          "| the same after the step's other work | fmu_mb, the mechanism | fmu_mb, closed tree | Pinocchio, "
          "closed tree | Pinocchio aba, open tree | Pinocchio / budget | Pinocchio / budget after the other work |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    peers = {}
    for name in registry.available():
        mech = _mechanism(name, args.calls)
        nv = mech["nv"]
        if nv not in peers:
            peers[nv] = _Peers(nv, args.calls)
        peer = peers[nv]
        pin_loop, pin_aba = peer.pinocchio - small.pinocchio, peer.aba - small.aba
        for dt, factor in TARGETS:
            steps = max(1, math.ceil(dt / mech["h"] - 1e-9))
            h = min(mech["h"], dt)
            evals = steps * mech["evaluations"]
            budget = dt / factor / evals * 1e6
            left = (dt / factor * 1e6 - steps * mech["rest"]) / evals
            over = f"{pin_loop / left:.2f}" if left > 0 else "∞"
            print(f"| {name} | {nv}, {mech['nc']} | {mech['method']}, {h * 1e3:g} ms | {factor:g}× at "
                  f"{dt * 1e3:g} ms | {evals} | {budget:.2f} | {left:.2f} | {mech['fmu_mb']:.2f} | {peer.fmu_mb:.2f} "
                  f"({peer.rows} rows) | {pin_loop:.2f} | {pin_aba:.2f} | {pin_loop / budget:.2f} | {over} |")
    worst = max(p.qdd_error for p in peers.values())
    print(f"\nq̈ of fmu_mb and Pinocchio on the closed trees agree within {worst:.1e} (the same problem).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
