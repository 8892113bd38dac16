#!/usr/bin/env python3
"""Build FMI 2.0 co-simulation FMUs of the mechanisms in models/ (and the PD controller).

    python build_fmus.py                       # every model, into dist/
    python build_fmus.py --model five_axis     # a selection
    python build_fmus.py --out /tmp/fmus --no-controller

Each FMU is validated with FMPy (schema and consistency); a Markdown table of its
interface is written next to it (<model>.md). Mechanism FMUs carry the kernels compiled
ahead of time for this platform (fmu_mb.native; compiled once per core version, ~30 s),
so they start without numba compiling or loading anything; --no-native leaves them out
(the FMU then runs the numba JIT and its on-disk cache).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fmu_mb import registry  # noqa: E402
from fmu_mb.fmi.builder import build_controller_fmu, build_fmu, native_kernels  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", choices=registry.available(),
                    help="model to build (repeatable; default: all in models/)")
    ap.add_argument("--out", default="dist", help="output directory (default: dist)")
    ap.add_argument("--no-controller", action="store_true", help="do not build the PD controller FMU")
    ap.add_argument("--no-native", action="store_true",
                    help="do not include native kernels (the FMUs then compile with numba on first use)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    failed = 0
    if not args.no_native:
        where, seconds = native_kernels()
        print(f"native kernels: {where} ({f'compiled in {seconds:.0f} s' if seconds else 'up to date'})")
    results = [build_fmu(m, args.out, native=not args.no_native) for m in (args.model or registry.available())]
    if not args.no_controller:
        results.append(build_controller_fmu(args.out))
    for r in results:
        status = "valid" if not r.problems else f"{len(r.problems)} PROBLEM(S)"
        print(f"{r.path}  {r.size / 1024:.0f} KiB  {r.n_vars} variables  {r.seconds:.1f} s  {status}  "
              f"(interface: {r.doc})")
        for p in r.problems:
            print(f"    {p}")
        failed += bool(r.problems)
    print(f"built {len(results)} FMU(s) in {time.perf_counter() - t0:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
