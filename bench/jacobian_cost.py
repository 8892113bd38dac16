"""Cost of the exact Jacobians (fmu_mb.linearization.jacobians: the complex step of kernels.jacobian, or for a rigid
tree (joint friction included) the analytical derivatives of kernels.tree_derivatives) against one pipeline evaluation,
against central differences, and against Pinocchio's analytical ABA derivatives.

Run:  python bench/jacobian_cost.py [--rounds 7]

Part 1 — every mechanism at its defaults and most detailed options, at the state a run from the FMU's
start reaches at 0.1 s (the linearization tests' states): the median time of

  * one pipeline evaluation ẋ = f(x, τ) (the gather kernel with an empty output table, what every
    integrator stage costs);
  * the full A = ∂ẋ/∂x and B = ∂ẋ/∂τ over the drive inputs as fmu_mb.linearization gets them (column "path":
    "complex", the complex step, one complex evaluation per state and input; "tree", the analytical pass);
  * central differences of the same columns, counted as 2 × (states + inputs) evaluations at the
    measured cost of one (their ideal cost: no Python in between).

Ratios: Jacobian / evaluation, Jacobian / central differences (< 1: cheaper than differences). The
issue's goals: A, B of a tree in < 5 evaluations, every mechanism cheaper than central differences.

Part 2 — five_axis (5 revolute joints, no friction: the analytical path): its A, B against Pinocchio's
``computeABADerivatives`` (C++, analytical; Carpentier & Mansard 2018) and its ``aba``, each called
from Python in a loop, the engines interleaved in rounds.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fmu_mb.linearization.jacobians import ComplexStep  # noqa: E402
from tests.linearization.cases import CASES, start  # noqa: E402


def _median_seconds(fn, repeat: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        times.append((time.perf_counter() - t0) / repeat)
    return statistics.median(times)


def part1(rounds: int) -> None:
    print("Part 1: the exact A, B against one evaluation and central differences (µs, median)")
    print(f"{'mechanism':<26}{'path':>8}{'states':>7}{'inputs':>7}{'f(x)':>10}{'A, B':>12}{'/ f(x)':>9}"
          f"{'central':>12}{'/ central':>11}")
    for name, detail in CASES:
        sim = start(name, detail)
        sim.step(0.1)
        m = sim.model
        x, t, tau = sim.x.copy(), sim.t, sim.tau_drive.copy()
        inputs = sim.cm.actuated_dofs
        cs = ComplexStep(sim)
        cs.continuous(x, t, tau, inputs=inputs)                    # compile / warm
        e = np.zeros(0, np.int64)
        f0, xdot, vals = np.zeros((0, 3)), np.zeros(m.nx), np.zeros(0)
        gather = sim.k.gather_outputs_constrained if m.nc else sim.k.gather_outputs_tree
        one = _median_seconds(lambda: gather(sim._m, sim._d, x, t, tau, xdot, e, e, e, e, f0, vals), 200, rounds)
        jac = _median_seconds(lambda: cs.continuous(x, t, tau, inputs=inputs), 5, rounds)
        ns = 2 * m.nv + m.nz
        central = 2 * (ns + inputs.size) * one
        label = f"{name} ({'detail' if detail else 'defaults'})"
        path = cs.path
        print(f"{label:<26}{path:>8}{ns:>7}{inputs.size:>7}{one * 1e6:>10.1f}{jac * 1e6:>12.0f}{jac / one:>9.1f}"
              f"{central * 1e6:>12.0f}{jac / central:>11.2f}")


def part2(rounds: int) -> None:
    import pinocchio as pin

    from fmu_mb import registry
    from fmu_mb.interop.pinocchio import to_pinocchio
    from fmu_mb.model import compile_mechanism
    from fmu_mb.simulator import Simulator
    mech = registry.build("five_axis")
    cm = compile_mechanism(mech)
    pmodel, _ = to_pinocchio(mech)
    pdata = pmodel.createData()
    rng = np.random.default_rng(5)
    q, v, tau = rng.uniform(-1, 1, cm.nv), rng.normal(0, 1, cm.nv), rng.normal(0, 2, cm.nv)
    sim = Simulator(cm)
    sim.set_state(q=q, qd=v)
    cs = ComplexStep(sim)
    inputs = np.arange(cm.nv)
    A, B, _, _ = cs.continuous(sim.x, 0.0, tau, inputs=inputs)
    pin.computeABADerivatives(pmodel, pdata, q, v, tau)
    nv = cm.nv
    agree = max(np.max(np.abs(A[nv:2 * nv, :nv] - pdata.ddq_dq)) / np.max(np.abs(pdata.ddq_dq)),
                np.max(np.abs(A[nv:2 * nv, nv:2 * nv] - pdata.ddq_dv)) / np.max(np.abs(pdata.ddq_dv)))
    x = sim.x.copy()
    fmu_mb_t, pin_t, aba_t = [], [], []
    for _ in range(rounds):
        fmu_mb_t.append(_median_seconds(lambda: cs.continuous(x, 0.0, tau, inputs=inputs), 200, 1))
        pin_t.append(_median_seconds(lambda: pin.computeABADerivatives(pmodel, pdata, q, v, tau), 2000, 1))
        aba_t.append(_median_seconds(lambda: pin.aba(pmodel, pdata, q, v, tau), 2000, 1))
    f, p, a = statistics.median(fmu_mb_t), statistics.median(pin_t), statistics.median(aba_t)
    print()
    print(f"Part 2: five_axis, ∂q̈/∂(q, q̇, τ) (agreement {agree:.1e} relative), µs per call from Python, median of "
          f"{rounds} rounds")
    print(f"  fmu_mb analytical (A, B: 10 states, 5 inputs)   {f * 1e6:9.1f}")
    print(f"  Pinocchio computeABADerivatives                  {p * 1e6:9.1f}   fmu_mb / Pinocchio = {f / p:.1f}")
    print(f"  Pinocchio aba (one forward dynamics)             {a * 1e6:9.1f}   derivatives / aba: Pinocchio "
          f"{p / a:.1f}, fmu_mb {f / a:.1f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    part1(args.rounds)
    part2(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
