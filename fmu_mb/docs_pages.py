"""The generated pages of the documentation site: one page per mechanism of models/ from its interface
table (every FMU variable with unit, range, start and description, the model options and the FMU's
defaults, the model file's docstring with its papers and equations), the command line from its
argparse parser, and the benchmark page of the last recorded runs (bench/results/, bench/record.py). They are committed (so they read on GitHub too) and a test keeps them current.

    python -m fmu_mb.docs_pages            # write docs/reference/ and docs/benchmark-runs.md
    python -m fmu_mb.docs_pages --check    # exit 1 naming the pages that are not current
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"


def mechanism_page(name: str) -> str:
    """The page of the mechanism ``name`` of models/."""
    from . import registry
    from .fmi.description import interface_markdown
    from .fmi.interface import build_interface
    from .model import compile_mechanism
    module = registry.load(name)
    meta = getattr(module, "FMU", {})
    itf = build_interface(name, module, compile_mechanism(module.build()), meta.get("step_size", 1e-3),
                          meta.get("static_start", False), meta.get("method", "rk4"))
    doc = (module.__doc__ or name).strip()
    options = getattr(module, "OPTIONS", {})
    lines = [f"# {name}", "", "*Generated from `models/" + name + ".py` and its interface table by "
             "`python -m fmu_mb.docs_pages`: do not edit.*", "", doc, "", "## FMU", "",
             f"`fmu-mb build {name}` writes `dist/{name}.fmu` (and `--kind native` `dist/native/{name}.fmu`, the "
             "same interface). Defaults: integrator "
             f"`{meta.get('method', 'rk4')}` at {meta.get('step_size', 1e-3):g} s (`solver.integrator` = auto, "
             f"`solver.step_size`), stop time {meta.get('stop_time', 10.0):g} s"
             + (", start from static equilibrium" if meta.get("static_start") else "") + "."]
    notes = getattr(module, "ACCURACY", ())
    if notes:
        lines += ["", "Measured accuracy notes (`ACCURACY`; where the default method is outside them, "
                  "`solver.integrator = auto` runs the first method they allow at the step, otherwise the FMU "
                  "warns at initialization; [integrators](../../integrators.md)):", ""]
        for a in notes:
            where = (f"`model.{a.option}` < {a.below:g}" if hasattr(a, "below") else f"`model.{a.option}` = {a.value}")
            steps = ", ".join(f"{m} ≤ {h:g} s" for m, h in a.steps.items() if h > 0) or "none"
            lines.append(f"- {where}: {a.measured} (within {a.bound}: {steps})")
    if options:
        lines += ["", "## Options", "", "Each is an FMU parameter `model.<name>` (the model file's `OPTIONS`).", "",
                  "| option | values | default | description |", "|---|---|---|---|"]
        for key, o in options.items():
            values = _values(o)
            lines.append(f"| `model.{key}` | {values} | {getattr(o, 'default', '')} | "
                         f"{getattr(o, 'description', '').replace('|', '/')} |")
    detail = getattr(module, "MOST_DETAILED", None)
    if detail:
        lines += ["", "Full detail (the model file's `MOST_DETAILED`: what the benchmarks and the accuracy tests run as "
                  "the most detailed options): " + ", ".join(f"`model.{k} = {v}`" for k, v in detail.items()) + "."]
    table = interface_markdown(itf, "").split("\n", 2)[2]          # without its title
    lines += ["", "## Variables", "", table]
    return "\n".join(lines).rstrip() + "\n"


def _values(option) -> str:
    """The values an option takes: a Choice's names, a Flag's two, a Count's or Value's range (and unit)."""
    if hasattr(option, "values"):
        return ", ".join(map(str, option.values))
    if not hasattr(option, "min"):
        return "false, true"
    return f"[{option.min:g}, {option.max:g}]" + (f" {option.unit}" if getattr(option, "unit", "") else "")


def cli_page() -> str:
    """The command line: the help of ``fmu-mb`` and of each command, as the parser prints them."""
    from .cli import PROG, parser
    ap = parser()
    lines = ["# Command line", "", "*Generated from the argparse parser by `python -m fmu_mb.docs_pages`: do not "
             "edit.*", "", "```text", ap.format_help().rstrip(), "```"]
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    for command, p in sub.choices.items():
        lines += ["", f"## {PROG} {command}", "", "```text", p.format_help().rstrip(), "```"]
    return "\n".join(lines) + "\n"


def controller_page() -> str:
    """The PD controller FMU's page (fmu_mb.fmi.controller)."""
    from .fmi import controller
    from .fmi.description import interface_markdown
    table = interface_markdown(controller.controller_interface(), "").split("\n", 2)[2]
    return "\n".join(["# pd_controller", "", "*Generated from `fmu_mb/fmi/controller.py` by `python -m "
                      "fmu_mb.docs_pages`: do not edit.*", "", controller.__doc__.strip(), "",
                      "`fmu-mb build` writes `dist/pd_controller.fmu` beside the mechanism FMUs (no Python in it: "
                      "one FMU for both kinds).", "", "## Variables", "", table]).rstrip() + "\n"


def excitation_page() -> str:
    """The excitation FMU's page (fmu_mb.fmi.excitation)."""
    from .fmi import excitation
    from .fmi.description import interface_markdown
    table = interface_markdown(excitation.excitation_interface(), "").split("\n", 2)[2]
    return "\n".join(["# excitation", "", "*Generated from `fmu_mb/fmi/excitation.py` by `python -m "
                      "fmu_mb.docs_pages`: do not edit.*", "", excitation.__doc__.strip(), "",
                      "`fmu-mb build` writes `dist/excitation.fmu` beside the PD controller (no Python in it); the "
                      "quick start's closed loop puts paper 001's column pulse through it ([Systems](../systems.md)).",
                      "", "## Variables", "", table]).rstrip() + "\n"


def benchmark_runs_page() -> str:
    """The last recorded run of each benchmark (bench/results/*.md, written by ``python bench/record.py``)."""
    runs = sorted((ROOT / "bench" / "results").glob("*.md"))
    return "\n".join(["# Benchmark runs", "", "*Generated from `bench/results/` by `python -m fmu_mb.docs_pages`: "
                      "do not edit. Each section is the last run of a script recorded by `python bench/record.py "
                      "SCRIPT ARGS`, with its commit, date and machine; [Benchmarks](benchmarks.md) says what each "
                      "measures and how to read it.*", ""] + [r.read_text().rstrip() + "\n" for r in runs]) + "\n"


def pages() -> dict[Path, str]:
    """{path: text} of every generated page."""
    from . import registry
    models = registry.available()
    out = {REFERENCE / "cli.md": cli_page(), REFERENCE / "pd_controller.md": controller_page(),
           REFERENCE / "excitation.md": excitation_page(),
           ROOT / "docs" / "benchmark-runs.md": benchmark_runs_page()}
    for name in models:
        out[REFERENCE / "mechanisms" / f"{name}.md"] = mechanism_page(name)
    out[REFERENCE / "mechanisms" / "index.md"] = "\n".join(
        ["# Mechanisms", "", "*Generated by `python -m fmu_mb.docs_pages`: do not edit.*", "",
         "The mechanisms of `models/`, each an FMU of `fmu-mb build` (papers and equations on each page):", ""]
        + [f"- [{n}]({n}.md): {(registry.load(n).__doc__ or n).strip().splitlines()[0]}" for n in models]) + "\n"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fmu_mb.docs_pages", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is not current")
    args = ap.parse_args(argv)
    stale = []
    for path, text in pages().items():
        if path.is_file() and path.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
