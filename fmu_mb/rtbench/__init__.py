"""``fmu-mb rt-bench``: a native co-simulation FMU (FMI 2.0 or 3.0) stepped at a fixed rate by a small C program, as
a hardware-in-the-loop rig steps it, and the distribution of its step times.

rt_bench.c (next to this file) is compiled on first use with the system's C compiler into
``$FMU_MB_CACHE/rtbench/<hash of the source>/`` and run on the extracted FMU: no Python in the loop. It locks
the process's memory (mlockall), asks for SCHED_FIFO priority 80 when paced (back to back, a real-time task would
be throttled by the kernel's real-time bandwidth limit for ~50 ms each second) and pins the loop to one CPU, and
reports what it got (an unprivileged user gets SCHED_OTHER; run as root or with CAP_SYS_NICE for the real-time
class). Each
step is fmi2DoStep (fmi3DoStep) plus reading every Real (Float64) output, timed with CLOCK_MONOTONIC; the loop
sleeps until the next period (absolute clock_nanosleep), or runs back to back with ``rate=0``. Inputs are held at
their start values, or written before every step as a rig's controller writes its output (``vary``:
V0 + A·sin(2π·t), t the step's start time in s; the write is part of the step's time, and a changed input defeats
the reuse of work keyed on it, such as an RK4 step's first derivative). With ``me``, the FMU's Model Exchange
interface instead, integrated by the harness with a rig's fixed-step explicit solver (Euler or classical RK4, one
step per period: each stage sets the time and states and gets the derivatives; the step ends with the new time and
states set, CompletedIntegratorStep and the outputs read); its RK4 gives the co-simulation RK4 step's numbers bit for
bit (tests/test_rt_bench.py). Linux.
"""
from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..errors import UserError

SOURCE = Path(__file__).with_name("rt_bench.c")
#: the FMI 2.0 and 3.0 standards' headers, which the FMU core compiles against too
FMI2_HEADERS = Path(__file__).resolve().parents[1] / "fmi" / "c" / "fmi2"
FMI3_HEADERS = FMI2_HEADERS.with_name("fmi3")
#: what the report lists, in order: (key, label, unit)
TIMES = (("median_ns", "median"), ("p99_ns", "p99"), ("p9999_ns", "p99.99"), ("max_ns", "max"), ("mean_ns", "mean"))


def compiler() -> str:
    """The C compiler (``$CC``, cc or gcc); UserError saying how to get one."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise UserError("rt-bench compiles a small C program: no C compiler found (Debian: apt-get install gcc; or set "
                        "CC)", 1)
    return cc


def program() -> Path:
    """The compiled harness, built once per version of rt_bench.c."""
    from ..native import cache_root
    text = SOURCE.read_bytes() + b"".join(h.read_bytes() for d in (FMI2_HEADERS, FMI3_HEADERS)
                                          for h in sorted(d.glob("*.h")))
    folder = cache_root() / "rtbench" / hashlib.sha256(text).hexdigest()[:16]
    exe = folder / "rt_bench"
    if not exe.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"rt_bench.{os.getpid()}"
        r = subprocess.run([compiler(), "-O2", "-std=gnu11", "-Wall", "-I", str(FMI2_HEADERS), "-I", str(FMI3_HEADERS),
                            "-o", str(tmp),
                            str(SOURCE), "-ldl", "-lm"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise UserError(f"rt-bench: compiling {SOURCE.name} failed: {r.stderr.strip()[-500:]}", 1)
        os.replace(tmp, exe)
    return exe


def _start_args(md, start: dict) -> list:
    """The harness's VR=V / VR:i=V / VR:b=V (FMI 3.0 also VR:e=V Enumeration, VR:c=V structural and VR:a=V1,V2,...
    Float64 arrays) arguments of typed start values {name: value}."""
    by_name = {v.name: v for v in md.modelVariables}
    args = []
    for name, value in start.items():
        v = by_name[name]
        if isinstance(value, (list, tuple)):
            if v.type != "Float64":
                raise UserError(f"--set {name}: rt-bench sets arrays of Float64 ({name} is an array of {v.type})", 2)
            args.append(f"{v.valueReference}:a=" + ",".join(repr(float(x)) for x in value))
        elif v.causality == "structuralParameter" and v.type in ("Int32", "Int64", "UInt32", "UInt64"):
            args.append(f"{v.valueReference}:c={int(value)}")
        elif v.type in ("Real", "Float64"):
            args.append(f"{v.valueReference}={float(value)!r}")
        elif v.type == "Boolean":
            args.append(f"{v.valueReference}:b={int(bool(value))}")
        elif v.type == "Enumeration" and md.fmiVersion.startswith("3"):
            args.append(f"{v.valueReference}:e={int(value)}")
        elif v.type in ("Integer", "Enumeration", "Int32"):
            args.append(f"{v.valueReference}:i={int(value)}")
        else:
            raise UserError(f"--set {name}: rt-bench sets Real (Float64), Integer (Int32), Enumeration and Boolean "
                            f"variables ({name} is {v.type})", 2)
    return args


def _extent(md, dimension, start: dict) -> int:
    """An FMI 3.0 array dimension's size: its start, or the value of the structural parameter it names (as set in
    ``start``, else that parameter's start)."""
    if dimension.start is not None:
        return int(dimension.start)
    ref = next(v for v in md.modelVariables if v.valueReference == dimension.valueReference)
    return int(start.get(ref.name, ref.start))


def vary_args(md, start: dict, vary: dict) -> list:
    """The harness's vary=VR,V0,A arguments: each Real input {name: amplitude A} written before every step as
    V0 + A·sin(2π·t), V0 its start value (``start``'s, else the model description's); UserError for anything
    else."""
    by_name = {v.name: v for v in md.modelVariables}
    args = []
    for name, amplitude in vary.items():
        v = by_name.get(name)
        if v is None:
            raise UserError(f"--vary {name}: not a variable of {md.modelName}", 2)
        if v.causality != "input" or v.type not in ("Real", "Float64") or getattr(v, "dimensions", None):
            what = f"an input of type {v.type}" if v.causality == "input" else \
                f"{'an' if v.causality[0] in 'aeiou' else 'a'} {v.causality}"
            advice = "; set it once with --set" if v.causality in ("input", "parameter") else ""
            raise UserError(f"--vary {name}: rt-bench writes Real inputs during the run ({name} is {what}{advice})",
                            2)
        if not math.isfinite(amplitude):
            raise UserError(f"--vary {name}={amplitude}: the amplitude must be a finite number", 2)
        v0 = float(start.get(name, v.start if v.start is not None else 0.0))
        args.append(f"vary={v.valueReference},{v0!r},{float(amplitude)!r}")
    return args


#: the rig's fixed-step solvers for a Model Exchange FMU (``run(me=...)``): name -> the harness's code (its stages)
ME_SOLVERS = {"euler": 1, "rk4": 4}


def run(fmu: Path, steps: int = 100_000, rate: float = 1000.0, cpu: int | None = None, start: dict | None = None,
        md=None, step: float | None = None, launcher: tuple = (), vary: dict | None = None,
        me: str | None = None) -> dict:
    """Step the native FMU ``fmu`` ``steps`` times at ``rate`` Hz (0: back to back, communication steps of ``step``
    s, default 1 ms) on ``cpu`` (None: the last one) with typed ``start`` values; the inputs ``vary`` {name:
    amplitude} written before every step (V0 + A·sin(2π·t)); the harness's report as a dict (ints and floats;
    ``outputs``: the Real outputs after the last step, in the model description's order). ``me``: its Model
    Exchange interface integrated by the harness with that fixed-step solver (:data:`ME_SOLVERS`), as a rig that
    imports an ME FMU does, instead of its co-simulation step. ``launcher``: a command the harness runs under
    (bench/native_profile.py: perf record)."""
    if step is not None and (rate or not 0.0 < step < float("inf")):
        raise UserError(f"the communication step of a back-to-back run (rate 0) must be > 0 s; a paced run's is "
                        f"1/rate (got step {step:g} s at rate {rate:g} Hz)", 2)
    if me is not None and me not in ME_SOLVERS:
        raise UserError(f"the rig's solver for Model Exchange is one of {', '.join(ME_SOLVERS)} (got {me!r})", 2)
    from ..runs import model_description
    if not sys.platform.startswith("linux"):
        raise UserError("rt-bench runs on Linux (clock_nanosleep, mlockall, SCHED_FIFO)", 1)
    md = md or model_description(fmu)
    interface = md.modelExchange if me else md.coSimulation
    if interface is None:
        raise UserError(f"{fmu}: rt-bench {'integrates Model Exchange' if me else 'steps co-simulation'} FMUs here; "
                        f"this one offers no {'Model Exchange' if me else 'co-simulation'}"
                        + ("" if me or md.modelExchange is None else " (it offers Model Exchange: --me euler|rk4)"),
                        2)
    if "pythonfmu" in (md.generationTool or ""):
        raise UserError(f"{fmu} is a Python FMU (it runs the Python interpreter in every step): rt-bench measures "
                        "native FMUs (fmu-mb build MODEL --kind native)", 2)
    cpu = (os.cpu_count() or 1) - 1 if cpu is None else cpu
    varied = vary_args(md, start or {}, vary or {})
    fmi3 = md.fmiVersion.startswith("3")
    outputs = [v for v in md.modelVariables if v.causality == "output" and v.type in ("Real", "Float64")]
    values = sum(math.prod(_extent(md, d, start or {}) for d in getattr(v, "dimensions", None) or ()) for v in outputs)
    with tempfile.TemporaryDirectory(prefix="fmu_mb_rtbench_") as tmp:
        with zipfile.ZipFile(fmu) as z:
            z.extractall(tmp)
        platform = "x86_64-linux" if fmi3 else "linux64"
        binary = Path(tmp) / "binaries" / platform / f"{interface.modelIdentifier}.so"
        if not binary.is_file():
            raise UserError(f"{fmu}: no binaries/{platform}/{binary.name} (an FMU for another platform?)", 2)
        resources = str(Path(tmp) / "resources") + "/" if fmi3 else (Path(tmp) / "resources").as_uri()
        return _harness([str(binary), resources, md.guid, str(steps), repr(float(rate)), str(cpu),
                         ",".join(str(v.valueReference) for v in outputs)] + _start_args(md, start or {})
                        + ([f"step={step!r}"] if step else []) + varied + ([f"fmi3={values}"] if fmi3 else [])
                        + ([f"me={ME_SOLVERS[me]},{md.numberOfContinuousStates}"] if me else []), launcher)


def spin(iterations: int, steps: int = 100_000, rate: float = 1000.0, cpu: int | None = None) -> dict:
    """The harness with each step a fixed computation (``iterations`` of a dependent floating-point recurrence)
    instead of an FMU: the same loop, clock, scheduling, memory lock and CPU; the report as :func:`run`'s."""
    if not sys.platform.startswith("linux"):
        raise UserError("rt-bench runs on Linux (clock_nanosleep, mlockall, SCHED_FIFO)", 1)
    cpu = (os.cpu_count() or 1) - 1 if cpu is None else cpu
    return _harness(["--spin", str(int(iterations)), "-", str(steps), repr(float(rate)), str(cpu), ""])


def baseline(step_ns: float, steps: int = 100_000, rate: float = 1000.0, cpu: int | None = None) -> dict:
    """The platform's own jitter for a step of ``step_ns``: :func:`spin` with the iterations that make its median
    about ``step_ns`` (calibrated by 2000 back-to-back steps). A step whose work never varies shows, in its
    worst / median, what the machine (interrupts, the hypervisor, other tasks) adds to any step: the floor under
    an FMU's ratio. Adds ``spin_iterations`` to the report."""
    probe = 20_000
    cal = spin(probe, 2000, 0.0, cpu)
    n = max(1, round(step_ns / (cal["median_ns"] / probe)))
    return {**spin(n, steps, rate, cpu), "spin_iterations": n}


def _harness(args: list, launcher: tuple = ()) -> dict:
    """Run the compiled harness with ``args`` (under the command ``launcher``, if any); its report as a dict (ints
    and floats; ``error`` when the FMU refused a step)."""
    r = subprocess.run([*launcher, str(program())] + args, capture_output=True, text=True)
    said = "; ".join(line.strip() for line in r.stderr.splitlines() if line.strip())
    if r.returncode not in (0, 5):
        raise UserError(f"rt-bench: {said or f'the harness stopped with status {r.returncode}'}", 1)
    report = {}
    for line in r.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key == "outputs":
            report[key] = [float.fromhex(v) for v in value.split(",") if v]
        else:
            report[key] = float(value) if "." in value or "e" in value else int(value)
    if r.returncode == 5:
        report["error"] = said
    return report


def describe_baseline(report: dict) -> str:
    """The baseline's report (:func:`baseline`) as the command prints it."""
    us = {k: report[k] / 1000.0 for k, _ in TIMES}
    return (f"platform baseline (the same loop, each step {report['spin_iterations']} iterations of a fixed "
            "recurrence instead of the FMU): " + ", ".join(f"{label} {us[k]:.1f} µs" for k, label in TIMES)
            + f"; worst / median {report['max_ns'] / report['median_ns']:.2f}"
            + (f"; overruns {report['overruns']}" if report["rate_hz"] else ""))


def describe(name: str, report: dict) -> str:
    """The report as the command prints it."""
    us = {k: report[k] / 1000.0 for k, _ in TIMES}
    dt = report["communication_step_s"]
    rate = report["rate_hz"]
    v3 = report.get("fmi_version") == 3
    solver = next((k for k, c in ME_SOLVERS.items() if c == report.get("model_exchange")), None)
    calls = "fmi3DoStep + every Float64" if v3 else "fmi2DoStep + every Real"
    if solver:
        calls = (f"{solver}: {ME_SOLVERS[solver]} × (SetTime + SetContinuousStates + "
                 f"{'GetContinuousStateDerivatives' if v3 else 'GetDerivatives'}), CompletedIntegratorStep + every "
                 f"{'Float64' if v3 else 'Real'}")
    pace = (f"at {rate:g} Hz" if rate else "back to back") + f" (communication step {dt * 1e3:g} ms)"
    sched = "SCHED_FIFO 80" if report["sched_fifo"] else \
        "SCHED_OTHER (back to back: a real-time class would be throttled by the kernel)" if not rate else \
        "SCHED_OTHER (SCHED_FIFO not permitted: run as root or with CAP_SYS_NICE)"
    lines = [f"{name}: {report['steps']} steps {pace} in {report['wall_s']:.1f} s",
             f"  memory locked: {'yes' if report['memory_locked'] else 'no (mlockall not permitted)'}; scheduling: "
             f"{sched}; CPU: {report['pinned_cpu'] if report['pinned_cpu'] >= 0 else 'not pinned'}",
             f"  step time ({calls} output): " + ", ".join(f"{label} {us[k]:.1f} µs" for k, label in TIMES),
             f"  worst / median {report['max_ns'] / report['median_ns']:.2f}; "
             f"real time × {dt / (report['median_ns'] * 1e-9):.0f} "
             f"at the median, × {dt / (report['max_ns'] * 1e-9):.0f} at the worst step"
             + (f"; overruns (steps longer than the period): {report['overruns']}" if rate else "")]
    if report.get("varied_inputs"):
        lines.insert(2, f"  inputs written before every step (V0 + A·sin(2π·t), in the step's time): "
                        f"{report['varied_inputs']}")
    if report.get("status", 0) > 1:
        lines.append(f"  STOPPED: the FMU answered status {report['status']} after {report['steps']} steps: "
                     f"{report.get('error', '')}")
        if solver:
            lines.append(f"  (Model Exchange, the rig's explicit {solver} at {dt * 1e3:g} ms: where the options make "
                         "the model stiff, its co-simulation step integrates it with implicit methods)")
    return "\n".join(lines)
