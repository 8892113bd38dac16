"""Real-time factor of every mechanism: direct simulator and FMU (FMPy), at the FMU's step and the paper's.

Run:  python bench/realtime.py [--fmus dist] [--seconds 2]

For every model in models/ (default options, i.e. the paper's run where the model file
has one): the cost of one internal RK4 step of the jitted core (Simulator.step over
``--seconds`` of simulated time), the real-time factor (simulated / wall time) at the
FMU's default internal step and, where the paper used another, at the paper's step; then
the same mechanism as an FMU in FMPy with a 10 ms communication step, getReal of every
output after each doStep. Medians of 3 repetitions, one process, after a warm-up step
(numba's compilation is excluded: see bench/fmu_startup.py for start-up).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from fmu_mb import registry
from fmu_mb.model import compile_mechanism
from fmu_mb.simulator import Simulator

#: the papers' internal steps where they differ from the FMU default
PAPER_STEP = {"manipulator": 1e-5, "rpsup": 1e-5, "crane": 2.5e-4}
#: inputs that make the default run move
INPUTS = {"crane": ("column", -400.0)}


def direct(name: str, h: float, seconds: float) -> tuple[float, int, int]:
    """(µs per RK4 step, coordinates, constraint rows) of the direct simulator."""
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    cm = compile_mechanism(mod.build())
    times = []
    for _ in range(3):
        sim = Simulator(cm, h, assemble=False)
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
    return statistics.median(walls)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fmus", default=str(ROOT / "dist"), help="directory with the built FMUs (default dist/)")
    p.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per measurement")
    args = p.parse_args(argv)
    print("| model | coordinates | constraint rows | internal step h | µs per RK4 step | real-time factor "
          "(direct) | FMU in FMPy, 10 ms communication step: real-time factor |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in registry.available():
        meta = getattr(registry.load(name), "FMU", {})
        steps = [meta.get("step_size", 1e-3)]
        if name in PAPER_STEP and PAPER_STEP[name] not in steps:
            steps.append(PAPER_STEP[name])
        for h in steps:
            secs = min(args.seconds, 2e4 * h)                  # at most 20 000 steps per measurement
            us, nv, nc = direct(name, h, secs)
            fmu = ""
            path = Path(args.fmus) / f"{name}.fmu"
            if h == steps[0] and path.is_file():
                fmu = f"{1.0 / through_fmpy(path, secs):.1f}×"
            tag = " (paper)" if name in PAPER_STEP and h == PAPER_STEP[name] else ""
            print(f"| {name} | {nv} | {nc} | {h:g} s{tag} | {us:.1f} | {h / (us * 1e-6):.2f}× | {fmu} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
