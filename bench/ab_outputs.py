"""Outputs of the FMUs of this tree against those of another commit, bit for bit.

    python bench/ab_outputs.py [--base COMMIT] [--models crane ...] [--stop 1.0] [--step 0.01]

Builds every mechanism's Python and native FMU (linux64) from ``--base`` (a git worktree of that commit,
imported with PYTHONPATH) and from this tree, runs each FMU in its own process with FMPy (``simulate_fmu``,
every output) at the defaults and at each model's most detailed options (:data:`DETAIL`), and prints per run
whether the two agree bit for bit, else the largest difference and where. A behaviour-preserving change of
the FMU layer (issue 36) must print "bitwise" everywhere. Exit status 1 when anything differs.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: the most detailed options of each mechanism (FMI parameter values; the models' MOST_DETAILED written out, so that
#: this script runs from a tree whose models predate it)
DETAIL = {"crane": {"model.link": 1, "model.friction": 2, "model.base": 0},
          "manipulator": {"model.base": 1, "model.link": 1, "model.friction": 1},
          "rpsup": {"model.base": 1, "model.coupler": 1, "model.friction": 1},
          "five_axis": {"model.friction": 2}, "three_loop": {"model.friction": 2}, "mobile_robot": {}}

BUILD = r"""
import sys
from fmu_mb import registry
from fmu_mb.fmi.builder import build_fmu
from fmu_mb.fmi.native_fmu import build_native_fmu
out, models = sys.argv[1], sys.argv[2].split(",")
for m in models:
    build_fmu(m, out, validate=False)
    build_native_fmu(m, out + "/native", ["linux64"], validate=False, log=lambda *a: None)
"""

RUN = r"""
import json, sys
import numpy as np
from fmpy import read_model_description, simulate_fmu
path, out, stop, step, starts = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), json.loads(sys.argv[5])
md = read_model_description(path)
names = [v.name for v in md.modelVariables if v.causality == "output"]
r = simulate_fmu(path, stop_time=stop, step_size=step, output=names, start_values=starts)
np.savez(out, **{n: r[n] for n in r.dtype.names})
"""


def build(tree: Path, out: Path, models) -> None:
    env = {"PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-c", BUILD, str(out), ",".join(models)], cwd=tree, check=True,
                   env={**__import__("os").environ, **env})


def run(fmu: Path, out: Path, stop: float, step: float, starts: dict) -> dict:
    subprocess.run([sys.executable, "-c", RUN, str(fmu), str(out), str(stop), str(step), json.dumps(starts)],
                   check=True, capture_output=True, cwd=tempfile.gettempdir())
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="HEAD", help="the commit to compare with (default: HEAD)")
    ap.add_argument("--models", nargs="+", default=list(DETAIL))
    ap.add_argument("--stop", type=float, default=1.0)
    ap.add_argument("--step", type=float, default=0.01)
    args = ap.parse_args(argv)
    differ = 0
    with tempfile.TemporaryDirectory(prefix="fmu_mb_ab_") as tmp:
        tmp = Path(tmp)
        base = tmp / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            build(base, tmp / "a", args.models)
            build(ROOT, tmp / "b", args.models)
            for model in args.models:
                for kind in ("", "native/"):
                    for label, starts in (("defaults", {}), ("detail", DETAIL[model])):
                        a = run(tmp / "a" / f"{kind}{model}.fmu", tmp / "a.npz", args.stop, args.step, starts)
                        b = run(tmp / "b" / f"{kind}{model}.fmu", tmp / "b.npz", args.stop, args.step, starts)
                        same = a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
                        if same:
                            print(f"{model:13s} {kind or 'python/':8s} {label:9s} bitwise ({len(a) - 1} outputs, "
                                  f"{len(a['time'])} samples)")
                            continue
                        differ += 1
                        worst = max((float(np.max(np.abs(a[k].astype(float) - b[k].astype(float)))), k)
                                    for k in a if k in b)
                        print(f"{model:13s} {kind or 'python/':8s} {label:9s} DIFFERENT: {worst[0]:.3g} in {worst[1]}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
