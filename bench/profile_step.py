"""Where the time of one integration step goes: every mechanism at its most detailed options.

Run:  python bench/profile_step.py [--models crane ...] [--calls 2000]

Each pipeline stage is called ``--calls`` times in a jitted loop (no Python between calls; best of 3) on the
state the mechanism reaches after 50 ms of its FMU's run (the model's FMU method and step, its start, zero
drives): the kinematics, the mass matrix (CRBA), the applied forces (springs, supports, friction laws), for a
tree the articulated-body inertias and the solve with the friction ↔ reaction loop, for a constrained mechanism
the constraint terms and ``prepare`` (kinematics, M, constraint terms, factorization of the constrained
system), one state derivative as a stage evaluates it (without the reactions only the outputs read), the Rosenbrock stage matrix (built and LU-factored) and one stage solve; then
the projection onto the constraints after a step (where the model's solver projects; timed from a state on
the constraints: the velocity sweep and one position check, a step's drift adds Newton iterations), then one step of
the FMU's default method and of the damped ROS2, timed through the kernels' stepping entry over
0.2 s. A stage's share is its time per call × its calls per step (RK4: 4 derivatives; ROS2: 2 derivatives, M,
the stage matrix, 2 solves; ROS34PW2: 4, M, 1, 4) over the default method's step: what an optimisation of
that stage can buy (issue 40's profile before the speed work).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from realtime import DETAIL  # noqa: E402  (bench/ is the script's folder)

from fmu_mb import registry
from fmu_mb.codes import ROS2_GAMMA_DAMPED, SolverOption
from fmu_mb.kernels.aba import aba_inertias
from fmu_mb.kernels.constrained import constrained_stage_derivative, prepare
from fmu_mb.kernels.constraints import constraint_terms
from fmu_mb.kernels.crba import crba
from fmu_mb.kernels.dynamics import applied_forces, solve_with_friction, stage_derivative
from fmu_mb.kernels.integrators import ALL_GROUPS
from fmu_mb.kernels.kinematics import forward_kinematics
from fmu_mb.kernels.linear_stage import stage_matrix, stage_solve
from fmu_mb.kernels.projection import project
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import METHODS, Simulator


@njit
def _kinematics(m, d, x, n):
    nv = m.nv
    for _ in range(n):
        forward_kinematics(m, d, x[0:nv], x[nv:2 * nv])


@njit
def _mass_matrix(m, d, x, n):
    for _ in range(n):
        crba(m, d)


@njit
def _applied(m, d, x, tau, n):
    nv, nz = m.nv, m.nz
    for _ in range(n):
        applied_forces(m, d, x[0:nv], x[nv:2 * nv], x[2 * nv:2 * nv + nz], tau)


@njit
def _aba_inertias(m, d, x, n):
    for _ in range(n):
        aba_inertias(m, d)


@njit
def _friction_solve(m, d, x, n):
    for _ in range(n):
        solve_with_friction(m, d, True)


@njit
def _constraint_terms(m, d, x, t, n):
    nv = m.nv
    for _ in range(n):
        constraint_terms(m, d, x[0:nv], x[nv:2 * nv], t)


@njit
def _prepare(m, d, x, t, n):
    nv = m.nv
    for _ in range(n):
        prepare(m, d, x[0:nv], x[nv:2 * nv], t)


@njit
def _derivative(m, d, x, t, tau, f, n):
    for _ in range(n):                     # (what an integrator's stage evaluates: no reactions it does not need)
        if m.nc > 0:
            constrained_stage_derivative(m, d, x, t, tau, f)
        else:
            stage_derivative(m, d, x, tau, f)


@njit
def _projection(m, d, x, t, n):
    y = x.copy()
    for _ in range(n):
        for i in range(x.shape[0]):
            y[i] = x[i]
        project(m, d, y, t, ALL_GROUPS)


@njit
def _stage_matrix(m, d, x, gh, n):
    for _ in range(n):
        stage_matrix(m, d, x, gh / ROS2_GAMMA_DAMPED, gh)


@njit
def _stage_solve(m, d, f, k, gh, n):
    for _ in range(n):
        stage_solve(m, d, f, k, gh)


def _best(fn, args, calls: int) -> float:
    """µs per call, best of 3 (after one warm-up that compiles)."""
    fn(*args, 2)
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        fn(*args, calls)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def _step_cost(cm, method: str, h: float, static: bool) -> float:
    """µs per internal step of ``method`` over 0.2 s (after 50 ms), best of 3."""
    best = np.inf
    for _ in range(3):
        sim = Simulator(cm, h, method=method)
        sim.initialize(static=static)
        sim.step(0.05)
        n = int(round(0.2 / h))
        t0 = time.perf_counter()
        sim.step(n * h)
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def profile(name: str, calls: int) -> tuple[list, str]:
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    method, h, static = auto_method(mod, DETAIL[name]), meta.get("step_size", 1e-3), meta.get("static_start", False)
    cm = compile_mechanism(mod.build(**DETAIL[name]))
    m = cm.model
    sim = Simulator(cm, h, method=method)
    sim.initialize(static=static)
    sim.step(0.05)
    mh, dh = sim._m, sim._d
    x, tau, ts = sim.x.copy(), sim.tau_drive.copy(), sim.t    # (the state's time: programmed rows depend on it)
    f, k = np.zeros_like(x), np.zeros_like(x)
    gh = ROS2_GAMMA_DAMPED * h
    t = {"kinematics": _best(_kinematics, (mh, dh, x), calls),
         "mass matrix": _best(_mass_matrix, (mh, dh, x), calls),
         "applied forces": _best(_applied, (mh, dh, x, tau), calls)}
    if m.nc:
        t["constraint terms"] = _best(_constraint_terms, (mh, dh, x, ts), calls)
        t["prepare (kin., M, terms, factor)"] = _best(_prepare, (mh, dh, x, ts), calls)
    else:
        t["ABA inertias"] = _best(_aba_inertias, (mh, dh, x), calls)
        _derivative(mh, dh, x, ts, tau, f, 1)
        t["solve + friction loop"] = _best(_friction_solve, (mh, dh, x), calls)
    t["state derivative"] = _best(_derivative, (mh, dh, x, ts, tau, f), calls)
    t["stage matrix + LU"] = _best(_stage_matrix, (mh, dh, x, gh), calls)
    t["stage solve"] = _best(_stage_solve, (mh, dh, f, k, gh), calls)
    projecting = m.nc > 0 and sim.data.solver_opt[SolverOption.PROJECTION] != 0.0
    if projecting:
        t["projection (after the step)"] = _best(_projection, (mh, dh, x, ts), calls)
    step = _step_cost(cm, method, h, static)
    damped = step if method == "ros2" else _step_cost(cm, "ros2", h, static)
    scheme = METHODS[method].scheme.name
    n_eval = {"RK4": 4, "ROS2": 2, "ROS34PW2": 4}[scheme]
    ros = scheme != "RK4"
    count = {stage: n_eval for stage in t}             # inside every evaluation of the pipeline
    count["mass matrix"] = n_eval if m.nc else int(ros)     # (a tree's derivative runs ABA; the stage needs M)
    count["stage matrix + LU"] = int(ros)
    count["stage solve"] = n_eval if ros else 0
    if projecting:
        count["projection (after the step)"] = 1
    est = n_eval * t["state derivative"] + (t["mass matrix"] * (m.nc == 0) + t["stage matrix + LU"]
                                            + n_eval * t["stage solve"] if ros else 0.0)
    est += t.get("projection (after the step)", 0.0)
    head = (f"{name}: nv {m.nv}, constraint rows {m.nc}, bristle states {m.nz}, friction joints "
            f"{m.fric_dofs.shape[0]}; {method} at {h:g} s: {step:.1f} µs per step ({h / step * 1e6:.0f}× real "
            f"time), ros2 {damped:.1f} µs; derivatives, M, stage matrix, solves and projection account for "
            f"{100 * est / step:.0f} % of the step")
    rows = [(stage, us, count[stage], 100 * us * count[stage] / step) for stage, us in t.items()]
    return rows, head


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=list(DETAIL))
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args(argv)
    for name in args.models:
        rows, head = profile(name, args.calls)
        print(head)
        print(f"  {'stage':34s} {'µs per call':>11s} {'calls per step':>15s} {'share of the step':>18s}")
        for stage, us, n, share in rows:
            print(f"  {stage:34s} {us:11.2f} {n:15d} {share:16.0f} %")
        print()
    print("The stages above 'state derivative' run inside it (their shares overlap its share). Each stage is timed "
          "alone, in a loop on one state: where the shares of a step add up to more than 100 %, its stages ran "
          "faster inside the step than alone.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
