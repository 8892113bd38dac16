"""Where a native FMU's step goes, by function: every mechanism under the HIL harness, sampled by ``perf``.

Run:  python bench/native_profile.py [--models crane ...] [--step 0.001] [--steps 20000] [--top 10]

For every model: its native FMU (linux64) built without stripping its binary (so ``perf`` names every kernel
and every function of the C layer), stepped back to back by ``fmu-mb rt-bench``'s C harness at the most detailed
options (bench/realtime.py's ``DETAIL``) with ``--step`` communication steps, every Real output read after each,
under ``perf record`` (user-space samples of the harness process). Printed per model: the step's median, then
its samples grouped by where the code lives — the numba kernels (``fmu_mb.kernels``), the FMU's C layer
(``fmu_mb/fmi/c``: checks, outputs, stepping), libm, libc, the system (the OS kernel, the clock), the rest; the
FMU's start is in the run too, a few % at the default 20000 steps — and the ``--top`` functions, each
kernel named by its module and function. What an optimisation of one function can buy is its share. The
JIT-level view by pipeline stage is bench/profile_step.py; this one is the code the FMU actually runs.
Needs ``perf`` (Debian: linux-perf) and kernel.perf_event_paranoid <= 2 (sampling one's own processes); the
script says so and stops otherwise.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from realtime import DETAIL  # noqa: E402  (bench/ is the script's folder)
from rt_bench import typed_start  # noqa: E402

from fmu_mb import registry, rtbench
from fmu_mb.fmi import binary
from fmu_mb.fmi.native_fmu import build_native_fmu
from fmu_mb.runs import model_description

#: numba's mangled kernel names: _ZN<len>fmu_mb<len>kernels<len><module><len><function>B<abi>...
_MANGLED = re.compile(r"_ZN6fmu_mb7kernels(\d+)")
_DEMANGLED = re.compile(r"fmu_mb::kernels::(\w+)::(\w+)")


def kernel_name(symbol: str) -> str | None:
    """``module.function`` of a numba kernel's symbol (mangled or demangled by perf), else None."""
    m = _DEMANGLED.search(symbol)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    m = _MANGLED.search(symbol)
    if not m:
        return None
    parts, rest = [], symbol[m.start(1):]
    while len(parts) < 2:
        n = re.match(r"(\d+)", rest)
        if not n:
            return None
        k = int(n.group(1))
        parts.append(rest[len(n.group(1)):len(n.group(1)) + k])
        rest = rest[len(n.group(1)) + k:]
    return ".".join(parts)


def where(dso: str, symbol: str) -> tuple[str, str]:
    """(group, display name) of a sample's function."""
    name = kernel_name(symbol)
    if name:
        return "kernels", name
    if dso.startswith("libm"):
        return "libm", symbol
    if dso.startswith("libc"):
        return "libc", symbol
    if dso.endswith(".so") and not dso.startswith(("ld-", "lib")):
        return "FMU C layer", symbol                # the FMU binary's own functions that are not kernels
    if dso.startswith("[kernel") or dso == "[vdso]":
        return "system", symbol                     # the OS: page faults, timer interrupts, the harness's clock
    return "other", f"{symbol} ({dso})"


def _unstripped(model: str, out: Path) -> Path:
    """The model's native FMU with its binary's symbols kept (binary.link strips with the target's strip tool)."""
    tools = binary.TOOLS
    binary.TOOLS = {k: ("no-strip-tool-for-profiling", v[1]) for k, v in tools.items()}
    try:
        return build_native_fmu(model, out, ["linux64"], validate=False, log=lambda s: None).path
    finally:
        binary.TOOLS = tools


def profile(fmu: Path, start: dict, md, step: float, steps: int, data: Path) -> tuple[dict, list]:
    """(harness report, [(percent, dso, symbol)]) of one run under perf record."""
    report = rtbench.run(fmu, steps, 0.0, None, start, md, step,
                         launcher=("perf", "record", "-q", "-F", "10000", "-o", str(data)))
    if report.get("error"):
        raise SystemExit(f"native_profile: {fmu.stem} stopped after {report['steps']} steps: {report['error']}")
    rep = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,symbol", "-g", "none",
                          "--stdio", "--percent-limit", "0.05", "-t", "|"], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for line in rep.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) >= 3 and fields[0].endswith("%") and not line.startswith("#"):
            rows.append((float(fields[0][:-1]), fields[1], re.sub(r"^\[[.k]\]\s*", "", fields[2]).split()[0]))
    return report, rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=registry.available())
    ap.add_argument("--step", type=float, default=0.001, help="communication step, s (default 0.001)")
    ap.add_argument("--steps", type=int, default=20000, help="steps per model (default 20000)")
    ap.add_argument("--top", type=int, default=10, help="functions listed per model (default 10)")
    args = ap.parse_args(argv)
    if shutil.which("perf") is None:
        print("native_profile: needs perf (Debian: apt-get install linux-perf)", file=sys.stderr)
        return 1
    paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
    if paranoid.is_file() and int(paranoid.read_text()) > 2:
        print("native_profile: kernel.perf_event_paranoid > 2 forbids sampling (sysctl kernel.perf_event_paranoid=2)",
              file=sys.stderr)
        return 1
    print(f"{args.steps} steps of {args.step:g} s back to back per model, most detailed options, every Real output "
          "read after each; share of the samples, %")
    with tempfile.TemporaryDirectory(prefix="fmu_mb_native_profile_") as tmp:
        for m in args.models:
            fmu = _unstripped(m, Path(tmp))
            md = model_description(fmu)
            start = typed_start(md, DETAIL[m], args.steps * args.step)      # (within range: rt_bench._in_range)
            report, rows = profile(fmu, start, md, args.step, args.steps, Path(tmp) / f"{m}.data")
            groups, names = defaultdict(float), defaultdict(float)
            for pct, dso, sym in rows:
                g, name = where(dso, sym)
                groups[g] += pct
                names[(g, name)] += pct
            total = sum(groups.values()) or 1.0
            opts = " ".join(f"{k}={v}" for k, v in DETAIL[m].items()) or "(no options)"
            print(f"\n{m} ({opts}): median {report['median_ns'] / 1000:.1f} µs per step, {report['steps']} steps")
            print("  " + ", ".join(f"{g} {100 * groups[g] / total:.1f}" for g in
                                   ("kernels", "FMU C layer", "libm", "libc", "system", "other") if groups[g] > 0))
            for (g, name), pct in sorted(names.items(), key=lambda kv: -kv[1])[:args.top]:
                print(f"  {100 * pct / total:6.1f}  {name}" + ("" if g == "kernels" else f"  [{g}]"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
