"""Native FMU against the pythonfmu FMU and the direct kernel calls, side by side in one run.

Run:  python bench/native_fmu.py [--fmus dist] [--seconds 4] [--models crane ...]

``--fmus`` holds the pythonfmu FMUs, ``--fmus``/native the native ones (``fmu-mb build --kind both``).
Every mechanism at its most detailed options (bench/realtime.py's ``DETAIL``) with the FMU's default
integrator and internal step, 10 ms communication steps:

* direct: the same work without FMI — ``Simulator.step(0.01)`` and one ``Simulator.gather`` of every
  Real output (the kernels the pythonfmu FMU runs, compiled ahead of time; Python calls them);
* native / pythonfmu FMU: ``fmi2DoStep`` + ``fmi2GetReal`` of every Real output through FMPy;

mean µs per 10 ms step (after the first), the FMU's cost relative to the direct one, real-time factors.
Then start-up: a fresh process loads the FMU (FMPy: dlopen), instantiates, initializes and takes the
first 10 ms step: the median of 5 processes per FMU kind, measured inside the process (the
interpreter's own start is not counted).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from fmi_timing import step_times  # noqa: E402
from realtime import DETAIL, option_parameters  # noqa: E402

from fmu_mb import registry  # noqa: E402
from fmu_mb.model.options import auto_method  # noqa: E402

COMM = 0.01

STARTUP = r'''
import json, sys, time
t0 = time.perf_counter()
from fmpy import read_model_description
from fmpy.fmi2 import FMU2Slave
md = read_model_description(sys.argv[1] + "/modelDescription.xml")
t1 = time.perf_counter()
s = FMU2Slave(guid=md.guid, unzipDirectory=sys.argv[1], modelIdentifier=md.coSimulation.modelIdentifier,
              instanceName="start")
s.instantiate()
s.setupExperiment(startTime=0.0)
s.enterInitializationMode()
s.exitInitializationMode()
s.doStep(0.0, 0.01)
t2 = time.perf_counter()
s.terminate(); s.freeInstance()
print(json.dumps({"fmpy_import": t1 - t0, "first_step": t2 - t1}))
'''


def library_dir() -> str:
    """This platform's kernel library (compiled when missing: the FMUs link the same object code)."""
    from fmu_mb.native.library import ensure
    return str(ensure(log=lambda *a: None)[0])


def direct_step_us(name: str, seconds: float) -> float:
    """Mean µs of Simulator.step(0.01) + one gather of every output, at the FMU's defaults and DETAIL."""
    from fmu_mb.fmi.interface import build_interface
    from fmu_mb.model import compile_mechanism
    from fmu_mb.outputs import spec_table
    from fmu_mb.simulator import Simulator
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    cm = compile_mechanism(mod.build(**DETAIL[name]))
    itf = build_interface(name, mod, compile_mechanism(mod.build()), meta.get("step_size", 1e-3),
                          meta.get("static_start", False), meta.get("method", "rk4"))
    outs = [i for i, v in enumerate(itf.vars) if v.causality == "output"]
    sim = Simulator(cm, h=meta.get("step_size", 1e-3), method=auto_method(mod, DETAIL[name]), kernels="native",
                    kernel_dirs=(library_dir(),), assemble=False)
    sim.initialize(static=meta.get("static_start", False))
    kind, a, b, f = spec_table(cm, [itf.vars[i].source for i in outs])
    vr, vals, xdot = np.array(outs, np.int64), np.zeros(len(itf.vars)), np.zeros(sim.model.nx)
    sim.step(COMM)
    sim.gather(xdot, vr, kind, a, b, f, vals)
    n = int(round(seconds / COMM))
    t0 = time.perf_counter()
    for _ in range(n):
        sim.step(COMM)
        sim.gather(xdot, vr, kind, a, b, f, vals)
    return (time.perf_counter() - t0) / n * 1e6


def fmu_step_us(path: Path, name: str, seconds: float) -> float:
    from fmpy import extract, read_model_description
    md = read_model_description(str(path))
    with tempfile.TemporaryDirectory() as d:
        extract(str(path), d)
        times = step_times(md, d, option_parameters(name), seconds, COMM)
    return float(np.mean(times[1:])) * 1e6


def startup_ms(path: Path, runs: int = 5) -> float:
    from fmpy import extract
    out = []
    with tempfile.TemporaryDirectory() as d:
        extract(str(path), d)
        for _ in range(runs):
            r = subprocess.run([sys.executable, "-c", STARTUP, d], capture_output=True, text=True, check=True)
            out.append(json.loads(r.stdout.strip().splitlines()[-1])["first_step"])
    return statistics.median(out) * 1e3


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fmus", default=str(ROOT / "dist"), help="pythonfmu FMUs; native ones in FMUS/native")
    p.add_argument("--seconds", type=float, default=4.0, help="simulated seconds per measurement")
    p.add_argument("--models", nargs="+", choices=registry.available(), help="only these models (default: all)")
    args = p.parse_args(argv)
    fmus = Path(args.fmus)
    print("| model at its most detailed options | direct µs / 10 ms | native FMU µs | native / direct | "
          "pythonfmu FMU µs | pythonfmu / direct | real-time factor native | pythonfmu |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    starts = []
    for name in args.models or registry.available():
        secs = min(args.seconds, float(getattr(registry.load(name), "FMU", {}).get("stop_time", 10.0)))
        d = direct_step_us(name, secs)
        nat = fmu_step_us(fmus / "native" / f"{name}.fmu", name, secs)
        py = fmu_step_us(fmus / f"{name}.fmu", name, secs)
        opts = ", ".join(f"{k}={v}" for k, v in DETAIL[name].items()) or "defaults"
        print(f"| {name} ({opts}) | {d:.0f} | {nat:.0f} | {nat / d:.3f} | {py:.0f} | {py / d:.3f} | "
              f"{COMM * 1e6 / nat:.1f}× | {COMM * 1e6 / py:.1f}× |", flush=True)
        starts.append((name, startup_ms(fmus / "native" / f"{name}.fmu"), startup_ms(fmus / f"{name}.fmu")))
    print("\n| FMU | load + instantiate + initialize + first 10 ms step, native | pythonfmu |")
    print("|---|---:|---:|")
    for name, nat, py in starts:
        print(f"| {name} | {nat:.1f} ms | {py:.0f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
