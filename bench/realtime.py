"""Real-time factor of every mechanism: direct simulator and FMU (FMPy), at the FMU's step and the paper's.

Run:  python bench/realtime.py [--fmus dist] [--seconds 2] [--detail-seconds 10] [--models crane ...]

For every model in models/ (default options, i.e. the paper's run where the model file
has one): the cost of one internal step (the FMU's default integrator) of the jitted core (Simulator.step over
``--seconds`` of simulated time), the real-time factor (simulated / wall time) at the
FMU's default internal step and, where the paper used another, at the paper's step; then
the same mechanism as an FMU in FMPy with a 10 ms communication step, getReal of every
output after each doStep. Medians of 3 repetitions, one process, after a warm-up step
(numba's compilation is excluded: see bench/fmu_startup.py for start-up).

Second table: every mechanism FMU at its most detailed options (``DETAIL``), with RK4 at the
model's RK4 step (``RK4_STEP``, else the FMU's step), with ROS2 (damped γ) at 1 and 2 ms, low-damping γ and ROS34PW2 at 1 ms and the default, stepped
through FMPy at a 10 ms communication step reading every Real output: real-time factor, mean,
99.9th percentile and worst doStep (+ getReal) after the first, the first one, and the worst
again with Python's garbage collector disabled (the stepping path should not allocate, so the
two worst cases should agree).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from fmi_timing import step_times  # noqa: E402  (bench/ is the script's folder)

from fmu_mb import registry
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import METHODS, Simulator

#: the papers' internal (RK4) steps where they differ from the FMU default
PAPER_STEP = {"manipulator": 1e-5, "rpsup": 1e-5, "crane": 2.5e-4}
#: inputs that make the default run move
INPUTS = {"crane": ("column", -400.0)}
#: the most detailed options of every model (its model file's MOST_DETAILED; the mobile robot has no physics options)
DETAIL = {name: registry.most_detailed(name) for name in registry.available()}


def direct(name: str, h: float, seconds: float, method: str = "rk4") -> tuple[float, int, int]:
    """(µs per step of ``method``, coordinates, constraint rows) of the direct simulator."""
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    cm = compile_mechanism(mod.build())
    times = []
    for _ in range(3):
        sim = Simulator(cm, h, assemble=False, method=method)
        sim.initialize(static=meta.get("static_start", False))
        if name in INPUTS:
            sim.tau_drive[cm.joint(INPUTS[name][0]).dofadr] = INPUTS[name][1]
        sim.step(h)                                               # warm-up (compiled already)
        n = max(1, int(round(seconds / h)))
        t0 = time.perf_counter()
        sim.step(n * h)
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times) * 1e6, cm.nv, cm.nc


def through_fmpy(path: Path, seconds: float, comm: float = 0.01) -> float:
    """Wall time per simulated second through FMPy (doStep + getReal of every Real output)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    md = read_model_description(str(path))
    d = extract(str(path))
    outs = [v.valueReference for v in md.modelVariables if v.causality == "output" and v.type == "Real"]
    walls = []
    for rep in range(3):
        s = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier,
                      instanceName=f"rt{rep}")
        s.instantiate()
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        s.exitInitializationMode()
        s.doStep(0.0, comm)
        s.getReal(outs)
        n = max(1, int(round(seconds / comm)))
        t0 = time.perf_counter()
        for k in range(1, n + 1):
            s.doStep(k * comm, comm)
            s.getReal(outs)
        walls.append((time.perf_counter() - t0) / (n * comm))
        s.terminate()
        s.freeInstance()
    shutil.rmtree(d, ignore_errors=True)
    return statistics.median(walls)


def option_parameters(name: str) -> dict:
    """FMU parameters (model.<option>) of the model's most detailed options, ``DETAIL``."""
    options = registry.load(name).OPTIONS
    return {f"model.{k}": options[k].values.index(v) for k, v in DETAIL[name].items()}


def detail_table(fmus: Path, seconds: float, models=None) -> None:
    from fmpy import extract, read_model_description
    print("\n| model at its most detailed options | integrator, internal step | simulated | real-time factor "
          "| mean doStep | p99.9 doStep | worst doStep | first doStep | worst, gc disabled |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in models or registry.available():
        path = fmus / f"{name}.fmu"
        if not path.is_file():
            continue
        md, unzipped = read_model_description(str(path)), extract(str(path))   # once per FMU
        mod = registry.load(name)
        meta = getattr(mod, "FMU", {})
        default = (auto_method(mod, DETAIL[name]), meta.get("step_size", 1e-3))   # the FMU's solver.integrator = auto
        h_rk4 = getattr(mod, "RK4_STEP", default[1])
        runs = [("rk4", h_rk4), ("ros2", 1e-3), ("ros2", 2e-3), ("ros2_lowdamp", 1e-3), ("ros34pw2", 1e-3)]
        if default not in runs:
            runs.append(default)
        for method, h in runs:
            label = f"{method}, {h:g} s" + (" (default)" if (method, h) == default else "")
            params = {**option_parameters(name), "solver.integrator": list(METHODS).index(method),
                      "solver.step_size": h}
            secs = min(meta.get("stop_time", seconds), seconds)
            if method == "rk4":
                secs = min(secs, 2.0)                           # RK4 at the papers' steps: 2 s suffice
            try:
                t = step_times(md, unzipped, params, secs)
                t_off = step_times(md, unzipped, params, secs, collect=False)
            except Exception as exc:                            # an FMI error: print it in the table
                print(f"| {name} | {label} | {secs:g} s | failed: {str(exc)[:60]} | | | | | |")
                continue
            rest = t[1:] if t.size > 1 else t
            print(f"| {name} | {label} | {secs:g} s | {secs / t.sum():.1f}× | {1e3 * rest.mean():.2f} ms "
                  f"| {1e3 * np.percentile(rest, 99.9):.2f} ms | {1e3 * rest.max():.2f} ms | {1e3 * t[0]:.1f} ms "
                  f"| {1e3 * (t_off[1:] if t_off.size > 1 else t_off).max():.2f} ms |")
        shutil.rmtree(unzipped, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fmus", default=str(ROOT / "dist"), help="directory with the built FMUs (default dist/)")
    p.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per measurement")
    p.add_argument("--detail-seconds", type=float, default=10.0,
                   help="simulated seconds per run of the most-detailed table (at most the model's stop time)")
    p.add_argument("--detail-only", action="store_true", help="print only the most-detailed table")
    p.add_argument("--models", nargs="+", choices=registry.available(), help="only these models (default: all)")
    args = p.parse_args(argv)
    if args.detail_only:
        detail_table(Path(args.fmus), args.detail_seconds, args.models)
        return 0
    print("| model | coordinates | constraint rows | integrator, internal step h | µs per step | real-time factor "
          "(direct) | FMU in FMPy, 10 ms communication step: real-time factor |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in args.models or registry.available():
        meta = getattr(registry.load(name), "FMU", {})
        steps = [meta.get("step_size", 1e-3)]
        if name in PAPER_STEP and PAPER_STEP[name] not in steps:
            steps.append(PAPER_STEP[name])
        for h in steps:
            secs = min(args.seconds, 2e4 * h)                  # at most 20 000 steps per measurement
            method = meta.get("method", "rk4") if h == steps[0] else "rk4"
            us, nv, nc = direct(name, h, secs, method)
            fmu = ""
            path = Path(args.fmus) / f"{name}.fmu"
            if h == steps[0] and path.is_file():
                fmu = f"{1.0 / through_fmpy(path, secs):.1f}×"
            tag = " (paper)" if name in PAPER_STEP and h == PAPER_STEP[name] else ""
            print(f"| {name} | {nv} | {nc} | {method}, {h:g} s{tag} | {us:.1f} | {h / (us * 1e-6):.2f}× | {fmu} |")
    detail_table(Path(args.fmus), args.detail_seconds, args.models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
