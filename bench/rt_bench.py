"""Step-time distribution of every mechanism's native FMU under the HIL harness (``fmu-mb rt-bench``).

Run:  python bench/rt_bench.py [--fmus DIR] [--steps 1000000] [--paced-steps 30000] [--master-steps 30000]
      [--me-steps 30000] [--models crane ...]

For every model: its native FMU (linux64; built into a temporary folder unless ``--fmus`` holds
``<model>.fmu`` native FMUs) stepped by the C harness with 1 ms communication steps, reading every Real output
after each step, at the defaults and at the most detailed options (bench/realtime.py's ``DETAIL``): back to back
over ``--steps`` steps (the distribution of the step time: median, p99, p99.99, max, worst/median, real-time
factor at the median and at the worst step), the detailed options back to back again with the drive inputs
written before every step (``DRIVES``: start + 1e-3·sin(2π·t) N·m or N, negligible in the motion, new bits in every
step as a rig's controller output has: no step reuses the outputs' derivative, which held inputs allow an RK4 step),
then the detailed options paced at 1 kHz over ``--paced-steps`` with the drives written (the rig's case: the caches
cool between steps; overruns counted), and the detailed options back to back with 10 ms
communication steps over ``--master-steps`` (a co-simulation master's step: issue 40's ≥ 100× real time at full
detail is read there; the FMU's internal step stays its default); last, the Model Exchange interface integrated by
the harness as a rig's RK4 at 1 ms (``--me rk4``, the drives written) over ``--me-steps``, defaults and most
detailed options (those too stiff for an explicit 1 ms step say where they stop). After the first two tables, the
platform baseline
(``fmu_mb.rtbench.baseline``): the same loop with each step a fixed computation of the median of the detailed
runs, no FMU, over as many steps: its worst/median is what the machine adds to a step that never varies (the
floor under the FMUs' ratios; issue 40's determinism target is worst ≤ 2× median). The scheduling class and
memory locking the harness obtained are printed with each table. three_loop's crank turns the paper's 1 rad over
each run, whatever its length (past about 1.57 rad its loops reach a dead point); a run that stops before its last
step ends the bench with the FMU's message instead of printing a row of fewer steps than it says.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from realtime import DETAIL  # noqa: E402  (bench/ is the script's folder)

from fmu_mb import registry
from fmu_mb.fmi.native_fmu import build_native_fmu
from fmu_mb.rtbench import baseline, run
from fmu_mb.runs import model_description, typed


def drives(md) -> dict:
    """{name: 1e-3} for every drive input (``*.tau_drive``, ``*.force``): the inputs a rig's controller writes."""
    return {v.name: 1e-3 for v in md.modelVariables
            if v.causality == "input" and v.type == "Real" and v.name.endswith((".tau_drive", ".force"))}


def typed_start(md, options: dict, seconds: float) -> dict:
    """Typed start values: the options, and what keeps a run of ``seconds`` of simulated time within the
    mechanism's range (:func:`_in_range`)."""
    by_name = {v.name: v for v in md.modelVariables}
    start = {f"model.{k}": typed(by_name[f"model.{k}"], str(v)) for k, v in options.items()}
    return {**start, **_in_range(md.modelName, seconds)}


def _in_range(model: str, seconds: float) -> dict:
    """Inputs that keep a run of ``seconds`` where the mechanism can go: three_loop's crank turns at a constant
    rate (0.1 rad/s, paper 002's 1 rad in 10 s) and past about 1.57 rad its loops reach a dead point, where the
    FMU stops with an error (after 15.8 s at the paper's rate); a long run turns it the paper's 1 rad over the
    whole run instead. The others' programmed motions end and hold."""
    return {"drive.rate": 1.0 / seconds} if model == "three_loop" else {}


def _checked(run_report: dict, model: str, label: str, steps: int) -> dict:
    """The report of a run that took every step; SystemExit naming the model and the FMU's message otherwise (a
    row of a run that stopped early would time fewer steps than it says, and its last ones the failing path)."""
    if run_report.get("error") or run_report["steps"] < steps:
        raise SystemExit(f"rt_bench: {model} ({label}) stopped after {run_report['steps']} of {steps} steps: "
                         f"{run_report.get('error', '')}")
    return run_report


def _add_row(rows: list, settings: set, name: str, label: str, r: dict, text: str | None = None) -> None:
    """Append run report ``r``'s row (or ``text`` in its place) to ``rows`` and show it on stderr as it comes; the
    harness's settings (paced or back to back, memory lock, scheduling class, CPU) added to ``settings``."""
    settings.add(("paced" if r["rate_hz"] else "back to back", r["memory_locked"], r["sched_fifo"], r["pinned_cpu"]))
    rows.append(text or _row(name, label, r))
    print(rows[-1], file=sys.stderr, flush=True)


def _detail_rows(fmus: dict, mds: dict, models: list, steps: int, rate: float, label: str, settings: set,
                 step: float | None = None, written: bool = False) -> list:
    """One table's rows: every model at its most detailed options, ``steps`` steps at ``rate`` Hz (0: back to back,
    communication steps of ``step`` s, default 1 ms), the drive inputs written every step if ``written``; the
    harness's settings added to ``settings``, each row also shown on stderr as it comes."""
    rows = []
    dt = step or (1.0 / rate if rate else 1e-3)
    for m in models:
        md = mds[m]
        r = _checked(run(fmus[m], steps, rate, None, typed_start(md, DETAIL[m], steps * dt), md, step=step,
                         vary=drives(md) if written else None), m, label, steps)
        _add_row(rows, settings, m, "detail", r)
    return rows


def _me_rows(fmus: dict, mds: dict, models: list, steps: int, settings: set) -> list:
    """Model Exchange integrated by the harness (the rig's RK4 at 1 ms, ``--me rk4``), drives written every step,
    at the defaults and the most detailed options; an option set whose stiffness an explicit 1 ms step cannot
    follow stops early, and its row says after how many steps and why."""
    rows = []
    for m in models:
        md = mds[m]
        for label, options in (("defaults", {}), ("detail", DETAIL[m])):
            r = run(fmus[m], steps, 0.0, None, typed_start(md, options, steps * 1e-3), md, vary=drives(md), me="rk4")
            stopped = r.get("error") or r["steps"] < steps
            _add_row(rows, settings, m, label, r, f"{m:<13}{label:<9}  stops at step {r['steps']}: the options are "
                     "stiff for an explicit 1 ms step (the co-simulation step integrates them implicitly)"
                     if stopped else None)
    return rows


def _row(name: str, label: str, r: dict) -> str:
    us = lambda k: r[k] / 1000.0                                  # noqa: E731
    dt = r["communication_step_s"]
    return (f"{name:<13}{label:<9}{us('median_ns'):>9.1f}{us('p99_ns'):>9.1f}{us('p9999_ns'):>9.1f}"
            f"{us('max_ns'):>9.1f}{r['max_ns'] / r['median_ns']:>9.2f}{dt / (r['median_ns'] * 1e-9):>9.0f}"
            f"{dt / (r['max_ns'] * 1e-9):>9.0f}{r['overruns']:>9d}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fmus", help="folder with native <model>.fmu (default: build them)")
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--paced-steps", type=int, default=30_000)
    ap.add_argument("--master-steps", type=int, default=30_000, help="10 ms steps back to back per model")
    ap.add_argument("--me-steps", type=int, default=30_000, help="Model Exchange steps (the rig's RK4) per run")
    ap.add_argument("--models", nargs="+", default=registry.available())
    args = ap.parse_args(argv)
    head = f"{'model':<13}{'options':<9}{'median':>9}{'p99':>9}{'p99.99':>9}{'max':>9}{'max/med':>9}{'RT×med':>9}" \
           f"{'RT×max':>9}{'overruns':>9}"
    with tempfile.TemporaryDirectory(prefix="fmu_mb_rtbench_") as tmp:
        fmus = {}
        for m in args.models:
            given = Path(args.fmus) / f"{m}.fmu" if args.fmus else None
            fmus[m] = given if given and given.is_file() else \
                build_native_fmu(m, Path(tmp), ["linux64"], validate=False, log=lambda s: None).path
        mds = {m: model_description(fmus[m]) for m in args.models}
        rows, settings, detail_medians = [], set(), []
        for m in args.models:
            for label, options in (("defaults", {}), ("detail", DETAIL[m])):
                start = typed_start(mds[m], options, args.steps * 1e-3)
                r = _checked(run(fmus[m], args.steps, 0.0, None, start, mds[m]), m, label, args.steps)
                _add_row(rows, settings, m, label, r)
                if label == "detail":
                    detail_medians.append(r["median_ns"])
        typical = sorted(detail_medians)[len(detail_medians) // 2]
        rows.append(_row("baseline", "fixed", baseline(typical, args.steps, 0.0, None)))
        print(f"Back to back: {args.steps} steps of 1 ms (fmi2DoStep + every Real output), µs; RT×: real-time "
              "factor at the median / worst step; baseline: a fixed computation of the detailed runs' median "
              "step, no FMU")
        print(head)
        print("\n".join(rows))
        rows = _detail_rows(fmus, mds, args.models, args.steps, 0.0, "drives written", settings, written=True)
        print(f"\nBack to back, the drive inputs written before every step (a rig's controller output; "
              f"start + 1e-3·sin(2π·t) N·m or N): {args.steps} steps of 1 ms, most detailed options, µs")
        print(head)
        print("\n".join(rows))
        rows = _detail_rows(fmus, mds, args.models, args.paced_steps, 1000.0, "paced", settings, written=True)
        rows.append(_row("baseline", "fixed", baseline(typical, args.paced_steps, 1000.0, None)))
        print(f"\nPaced at 1 kHz, the drive inputs written before every step (the rig's case): {args.paced_steps} "
              "steps, most detailed options, µs")
        print(head)
        print("\n".join(rows))
        rows = _detail_rows(fmus, mds, args.models, args.master_steps, 0.0, "10 ms", settings, step=0.01)
        print(f"\nBack to back, 10 ms communication steps (a master's; issue 40's ≥ 100× real time at full detail): "
              f"{args.master_steps} steps, most detailed options, the FMU's default internal step, µs")
        print(head)
        print("\n".join(rows))
        rows = _me_rows(fmus, mds, args.models, args.me_steps, settings)
        print(f"\nModel Exchange integrated by the rig's own RK4 at 1 ms (--me rk4: 4 × fmi2SetTime + "
              f"fmi2SetContinuousStates + fmi2GetDerivatives, fmi2CompletedIntegratorStep + every Real output), the "
              f"drive inputs written before every step: {args.me_steps} steps back to back, µs")
        print(head)
        print("\n".join(rows))
    print()
    for mode, locked, fifo, cpu in sorted(settings):
        print(f"harness, {mode}: memory locked {'yes' if locked else 'no'}, "
              f"{'SCHED_FIFO 80' if fifo else 'SCHED_OTHER'}, pinned to CPU {cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
