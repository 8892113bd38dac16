"""Step cost of two builds of the FMUs, A against B, interleaved in one run.

    python bench/ab_step_cost.py A_DIR B_DIR [--seconds 2] [--rounds 3] [--models crane ...] [--set NAME=VALUE ...]

``A_DIR`` and ``B_DIR`` each hold the Python FMUs and, in native/, the native ones (``fmu-mb build --kind both``,
or bench/ab_outputs.py's build of two commits). Every mechanism at its most detailed options (bench/realtime.py's
``DETAIL``) with the FMU's default integrator and internal step: the mean wall time of fmi2DoStep(10 ms) +
fmi2GetReal of every Real output through FMPy over ``--seconds`` of simulated time, each measurement in a fresh
process, A and B alternating ``--rounds`` times; printed per FMU: the median µs per step of each and the ratio
B/A (1.00 = unchanged; the spread of the rounds says what is noise). ``--set`` adds start values to both (numbers,
e.g. ``solver.integrator=2``: the same method in both builds where their defaults differ).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from realtime import DETAIL  # noqa: E402

RUN = r"""
import json, sys, tempfile
sys.path.insert(0, sys.argv[4])
from fmpy import extract, read_model_description
from fmi_timing import step_times
path, seconds, params = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
md = read_model_description(path)
times = step_times(md, extract(path), params, seconds, collect=False)
print(json.dumps(float(times[1:].mean())))
"""


def _params(name: str) -> dict:
    from fmu_mb import registry
    options = registry.load(name).OPTIONS
    return {f"model.{k}": options[k].values.index(v) for k, v in DETAIL[name].items()}


def measure(fmu: Path, seconds: float, params: dict) -> float:
    r = subprocess.run([sys.executable, "-c", RUN, str(fmu), str(seconds), json.dumps(params), str(ROOT / "bench")],
                       capture_output=True, text=True, check=True, cwd="/tmp")
    return json.loads(r.stdout.strip().splitlines()[-1]) * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=list(DETAIL))
    ap.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE", help="start values for both, numbers")
    args = ap.parse_args(argv)
    extra = {k: int(v) if v.lstrip("-").isdigit() else float(v) for k, _, v in (i.partition("=") for i in args.set)}
    print(f"{'FMU':26s} {'A µs/step':>10s} {'B µs/step':>10s} {'B/A':>6s}  (rounds B/A)")
    for model in args.models:
        for kind in ("", "native/"):
            a_path, b_path = args.a / f"{kind}{model}.fmu", args.b / f"{kind}{model}.fmu"
            if not (a_path.is_file() and b_path.is_file()):
                continue
            a, b = [], []
            for _ in range(args.rounds):
                a.append(measure(a_path, args.seconds, {**_params(model), **extra}))
                b.append(measure(b_path, args.seconds, {**_params(model), **extra}))
            ma, mb = statistics.median(a), statistics.median(b)
            rounds = " ".join(f"{y / x:.2f}" for x, y in zip(a, b))
            print(f"{(kind or 'python/') + model:26s} {ma:10.1f} {mb:10.1f} {mb / ma:6.3f}  ({rounds})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
