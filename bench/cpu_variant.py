"""Would an x86-64-v3 build of the kernel library pay? Baseline x86-64 against x86-64-v3 (AVX2, FMA), side by side.

Run:  python bench/cpu_variant.py [--rounds 7] [--seconds 0.5]

The kernel library (fmu_mb.native.library) is emitted for the architecture's baseline CPU. Here the same LLVM IR
(the one the library cache keeps) is emitted once more for x86-64-v3 into a temporary library, both are loaded
into one process, and every mechanism at its most detailed options (bench/native_fmu.py's DETAIL, the FMU's
default integrator and internal step) runs on each: two Simulators stepping 10 ms communication steps,
``--seconds`` of simulated time in turn, ``--rounds`` times (interleaved, so the machine's drift hits both alike).
Printed per mechanism: the median µs per step of each, the ratio v3 / baseline (< 1: v3 faster) with its rounds'
spread, and whether the two runs' states are equal bit for bit at the end (numba emits no fast-math flags, so
neither build contracts a multiply-add into an FMA or reorders a sum: they must be).
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def load_both():
    """(baseline kernels, x86-64-v3 kernels): this platform's library and the same IR emitted for x86-64-v3."""
    from fmu_mb.native import check
    from fmu_mb.native.clib import CLibraryKernels
    from fmu_mb.native.library import TARGETS, _link, cached, emit_object, ensure
    from fmu_mb.native.workers import kept_ir
    lib_dir = ensure(log=lambda *a: None)[0]
    man, why = check(lib_dir)
    if man is None:
        raise SystemExit(why)
    root = cached(("linux64",), log=lambda *a: None)["linux64"].parent
    tmp = Path(tempfile.mkdtemp(prefix="fmu_mb_v3_"))
    names, groups = [], sorted((root / "ir").glob("group*"))
    for i, g in enumerate(groups):
        entries = (g / "complete").read_text().split()
        names += entries
        obj = emit_object(kept_ir(g, entries), TARGETS["linux64"][0], cpu="x86-64-v3",
                          keep=[f"fmu_mb_k_{n}" for n in entries])
        (tmp / f"fmu_mb_kernels.{i}.o").write_bytes(obj)
    v3 = _link(tmp, "linux64", sorted(names), len(groups))
    return (CLibraryKernels(Path(lib_dir) / man["library"], man["schema"]),
            CLibraryKernels(v3, man["schema"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.5)
    args = ap.parse_args()
    from native_fmu import DETAIL, auto_method

    from fmu_mb import registry
    from fmu_mb.model import compile_mechanism
    from fmu_mb.simulator import Simulator
    if platform.machine() not in ("x86_64", "AMD64") or sys.platform != "linux":
        raise SystemExit("bench/cpu_variant.py compares two x86-64 Linux builds: not this machine")
    base, v3 = load_both()
    print(f"{'mechanism (most detailed options)':<36}{'baseline µs':>12}{'v3 µs':>9}{'v3 / base':>11}"
          f"{'  rounds v3 / base':<40}{'bitwise':>8}")
    n = int(round(args.seconds / 0.01))
    for name in registry.available():
        mod = registry.load(name)
        meta = getattr(mod, "FMU", {})
        cm = compile_mechanism(mod.build(**DETAIL[name]))
        sims = [Simulator(cm, h=meta.get("step_size", 1e-3), method=auto_method(mod, DETAIL[name]), kernels=k,
                          assemble=False) for k in (base, v3)]
        times = ([], [])
        for s in sims:
            s.initialize(static=meta.get("static_start", False))
            s.step(0.01)
        for _ in range(args.rounds):
            for s, t in zip(sims, times):
                t0 = time.perf_counter()
                for _ in range(n):
                    s.step(0.01)
                t.append((time.perf_counter() - t0) / n * 1e6)
        b, v = statistics.median(times[0]), statistics.median(times[1])
        per = " ".join(f"{x / y:.2f}" for x, y in zip(times[1], times[0]))
        same = np.array_equal(sims[0].x, sims[1].x)
        print(f"{name:<36}{b:>12.1f}{v:>9.1f}{v / b:>11.3f}  {per:<38}{'yes' if same else 'NO':>8}")


if __name__ == "__main__":
    main()
