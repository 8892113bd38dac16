"""FMU start-up and stepping cost: cold and warm fmi2Instantiate → first fmi2DoStep, and µs per step.

Run:  python bench/fmu_startup.py [--fmus dist] [--model five_axis] [--warm-runs 5]

Every measurement is a fresh Python process that imports FMPy (and with it
numpy), extracts the FMU to a new temporary directory, as FMPy does, and times
fmi2Instantiate, setup/initialization and the first 1 ms doStep, for both FMU kinds
(``--fmus``: the Python FMUs, ``--fmus``/native: the native ones; ``fmu-mb build --kind both``).
Both are the same binary (the FMU core over the kernel library compiled ahead of time; no
numba in the process, checked); a Python FMU's binary also starts pythonfmu's wrapper and
the model file's Python, which build the compiled arrays of the options set:

each cold — ``FMU_MB_CACHE`` points to an empty directory: the Python FMU's core is installed
as on a machine that never ran the FMU — and warm — the same cache directory again, in new
processes (target: ≤ 1 s).

Then, in one process, the cost of a co-simulation step through FMPy at the
paper's settings (h = 1 ms, communication step 1 ms, Stribeck friction):
µs per doStep + getReal of all outputs, and the real-time factor, for each kind.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import json, sys, time, shutil
t_import = time.perf_counter()
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
fmu = sys.argv[1]
md = read_model_description(fmu)
d = extract(fmu)
t0 = time.perf_counter()
s = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier, instanceName="b")
s.instantiate()
t1 = time.perf_counter()
s.setupExperiment(startTime=0.0); s.enterInitializationMode(); s.exitInitializationMode()
t2 = time.perf_counter()
s.doStep(0.0, 1e-3)
t3 = time.perf_counter()
print(json.dumps({"instantiate": t1 - t0, "initialize": t2 - t1, "first_step": t3 - t2, "total": t3 - t0,
                  "numba": "numba" in sys.modules}))
s.terminate(); s.freeInstance(); shutil.rmtree(d, ignore_errors=True)
'''

STEPPING = r'''
import json, sys, time, shutil
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
fmu, n = sys.argv[1], int(sys.argv[2])
md = read_model_description(fmu)
d = extract(fmu)
vr = {v.name: v.valueReference for v in md.modelVariables}
outs = [v.valueReference for v in md.modelVariables if v.causality == "output" and v.type == "Real"]
s = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier, instanceName="b")
s.instantiate(); s.setupExperiment(startTime=0.0); s.enterInitializationMode()
if md.modelName == "five_axis":          # its Stribeck friction (code 2); other models: their defaults
    s.setInteger([vr["model.friction"]], [2])
s.exitInitializationMode()
tau = [v for k, v in vr.items() if k.endswith("tau_drive")]
s.setReal(tau, [1.0] * len(tau))
for k in range(200):
    s.doStep(k * 1e-3, 1e-3)
t0 = time.perf_counter()
for k in range(200, 200 + n):
    s.doStep(k * 1e-3, 1e-3)
t1 = time.perf_counter()
for k in range(200 + n, 200 + 2 * n):
    s.doStep(k * 1e-3, 1e-3)
    s.getReal(outs)
t2 = time.perf_counter()
print(json.dumps({"step": (t1 - t0) / n, "step_get": (t2 - t1) / n, "n_outputs": len(outs)}))
s.terminate(); s.freeInstance(); shutil.rmtree(d, ignore_errors=True)
'''


def child(code, *args, env=None):
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(fmu, warm_runs):
    """(cold, [warm...]) timings with a fresh cache directory."""
    with tempfile.TemporaryDirectory(prefix="fmu_mb_cache_") as cache:
        env = dict(os.environ, FMU_MB_CACHE=cache)
        runs = [child(CHILD, fmu, env=env) for _ in range(warm_runs + 1)]
    if any(r["numba"] for r in runs):
        raise RuntimeError(f"{fmu}: numba was imported (an FMU runs the kernel library compiled ahead of time)")
    return runs[0], runs[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fmus", default="dist")
    ap.add_argument("--model", default="five_axis")
    ap.add_argument("--warm-runs", type=int, default=5)
    args = ap.parse_args()
    kinds = [("Python FMU", Path(args.fmus) / f"{args.model}.fmu"),
             ("native FMU", Path(args.fmus) / "native" / f"{args.model}.fmu")]
    missing = [str(f) for _, f in kinds if not f.is_file()]
    if missing:
        raise SystemExit(f"{', '.join(missing)} not found: run 'fmu-mb build {args.model} --kind both' first")
    rows, stepping = [], []
    for label, fmu in kinds:
        rows.append((label, measure(fmu, args.warm_runs)))
        with tempfile.TemporaryDirectory(prefix="fmu_mb_cache_") as cache:
            stepping.append((label, child(STEPPING, fmu, 5000, env=dict(os.environ, FMU_MB_CACHE=cache))))
    print(f"{args.model}.fmu in FMPy, fresh process per run (numpy/FMPy already imported by the host)\n")
    print("| FMU | start | fmi2Instantiate | setup + initialization | first doStep (1 ms) | instantiate → first step |")
    print("|---|---|---:|---:|---:|---:|")
    for label, (cold, warm) in rows:
        med = {k: statistics.median(w[k] for w in warm) for k in warm[0]}
        print(f"| {label} | cold (empty cache) | {cold['instantiate']:.3f} s | {cold['initialize']:.3f} s | "
              f"{cold['first_step']:.4f} s | **{cold['total']:.3f} s** |")
        print(f"| {label} | warm (median of {args.warm_runs} new processes) | {med['instantiate']:.3f} s | "
              f"{med['initialize']:.3f} s | {med['first_step']:.4f} s | **{med['total']:.3f} s** "
              f"(max {max(w['total'] for w in warm):.3f} s) |")
    friction = "Stribeck friction" if args.model == "five_axis" else "default options"
    print(f"\nstepping through FMPy, h = 1 ms, communication step 1 ms, {friction}:")
    for label, st in stepping:
        print(f"  {label}: {st['step'] * 1e6:.0f} µs per doStep, {st['step_get'] * 1e6:.0f} µs per doStep + getReal "
              f"of {st['n_outputs']} outputs → real-time factor {1e-3 / st['step_get']:.1f}")


if __name__ == "__main__":
    main()
