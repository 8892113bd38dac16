"""Command line: ``python -m fmu_mb.scenarios <name> [--out DIR]``."""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from . import SCENARIOS


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fmu_mb.scenarios",
                                description="Run a paper's scenario and save its plots (PNG) and data (CSV).")
    p.add_argument("name", choices=SCENARIOS, help="scenario (model) name")
    p.add_argument("--out", default=None, help="output directory (default results/<name>)")
    args = p.parse_args(argv)
    mod = importlib.import_module(f"fmu_mb.scenarios.{args.name}")
    t0 = time.perf_counter()
    summary = mod.run(args.out or f"results/{args.name}")
    print(summary)
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
