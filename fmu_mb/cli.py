"""The command line of fmu_mb: ``fmu-mb`` (also ``python -m fmu_mb``), in FMPy's style.

    fmu-mb build [MODEL|FILE.py|FILE.urdf ...] [--base B] [--name N] [--flexible LINK=SPEC] [--passive J]
                 [--support-...] [--out DIR] [--kind python|native|both] [--target PLATFORM ...] [--no-controller]
                 [--no-native] [--integer-options] [--cross-check DIR | --no-cross-check]
    fmu-mb simulate TARGET [--input in.csv] [--stop-time S] [--step S] [--set NAME=VALUE ...]
                           [--outputs NAME,...] [--csv out.csv] [--plot out.png] [--debug-logging]
    fmu-mb info FMU
    fmu-mb scenario NAME [--out DIR]
    fmu-mb demo [--fmus DIR] [--out DIR] [--time S]

``simulate`` takes a built FMU or the name of a model in models/: a model's FMU is built once
into ``$FMU_MB_CACHE/cli-fmus/<model>-<key>/`` (default ``~/.cache/fmu_mb``), the key hashing the
model file, the core's digest, the FMU binary's source, pythonfmu's version and this Python;
later runs reuse it until one of them changes.

Errors (a missing file, a malformed CSV, an unknown variable, an FMU call that fails) end the
command with one line ``fmu-mb: error: ...`` on stderr: exit code 2 for what the command line
asked for (usage, files, names, values), 1 for a build or simulation that failed.
"""
from __future__ import annotations

import argparse
import difflib
import math
import os
import sys
import time
import zipfile
from pathlib import Path

from . import __version__

PROG = "fmu-mb"
#: most subplots ``simulate --plot`` draws (the first outputs; choose others with --outputs)
MAX_PLOTS = 12

BUILD_DESCRIPTION = """\
Build FMI 2.0 co-simulation FMUs of the mechanisms in models/ (and the PD controller).

    fmu-mb build                        # every model, into dist/
    fmu-mb build five_axis crane        # a selection (also: --model five_axis --model crane)
    fmu-mb build my_arm.py              # your own model file (docs/mechanisms.md)
    fmu-mb build robot.urdf --base free # a URDF robot (its model file goes to OUT/models/)
    fmu-mb build ur5.urdf --flexible forearm_link=aluminium,tube=0.08x0.004 --passive wrist_3_joint
    fmu-mb build --out /tmp/fmus --no-controller

Each FMU is validated with FMPy (schema and consistency); a Markdown table of its
interface is written next to it (<model>.md). Mechanism FMUs carry the kernel library
compiled ahead of time for this platform (fmu_mb.native; compiled once per core version,
~45 s; the native FMUs link the same), so they start without numba compiling or loading
anything; --no-native leaves it out (the FMU then runs the numba JIT and its on-disk cache).

Every FMU built also gets its FMI cross-check folder (default under OUT/cross-check, or
--cross-check DIR; --no-cross-check skips it, about 1 s per FMU):
DIR/fmus/2.0/cs/linux64/fmu_mb/<version>/<model>/ (the FMU, _in.csv, _ref.csv, _ref.opt,
ReadMe.md; fmu_mb.crosscheck): each reference is a run of the FMU with FMPy."""


class CliError(Exception):
    """An expected failure: reported as one line on stderr, exit code ``code``."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def _one_line(text) -> str:
    return " ".join(str(text).split())


def _close(name: str, names) -> str:
    near = difflib.get_close_matches(name, list(names), n=5, cutoff=0.6)
    return f" (close matches: {', '.join(near)})" if near else ""


# --------------------------------------------------------------------------------------- build

def _urdf_model(path: str, args) -> str:
    """Write the model file of a URDF (OUT/models/<name>.py, fmu_mb.interop.urdf) and return its path."""
    from .interop.urdf import UrdfError, vector3, write_model
    try:
        robot = dict(passive=[p.strip() for item in args.passive or [] for p in item.split(",") if p.strip()],
                     flexible=list(args.flexible or []))
        if args.support_stiffness:
            robot["support_stiffness"] = vector3(args.support_stiffness, "--support-stiffness")
        if args.support_damping:
            robot["support_damping"] = vector3(args.support_damping, "--support-damping")
        if args.support_points:
            robot["support_points"] = [vector3(p, "--support-points") for item in args.support_points
                                       for p in item.split()]
        target, warnings = write_model(path, Path(args.out) / "models", base=args.base or "fixed", name=args.name,
                                       **robot)
    except UrdfError as exc:
        raise CliError(str(exc), 2) from None
    for w in warnings:
        print(f"{path}: {w}")
    print(f"{path}: model file {target} (edit it and build it again with: fmu-mb build {target})")
    return str(target)


def _build(args) -> int:
    from . import registry
    from .fmi.builder import build_controller_fmu, build_fmu, native_kernels

    available = registry.available()
    models = list(args.models) + list(args.model or [])
    files = [m for m in models if m.endswith((".py", ".urdf")) or os.sep in m]
    unknown = [m for m in models if m not in available and m not in files]
    if unknown:
        choices = ", ".join(available) or f"none: no model files in {registry.models_dir()}"
        args.parser.error(f"unknown model(s) {', '.join(map(repr, unknown))} (choose from {choices}, or give the "
                          "path of a model file (.py) or a URDF file (.urdf))")
    urdfs = [m for m in files if m.endswith(".urdf")]
    urdf_only = [flag for flag, given in (("--base", args.base), ("--name", args.name), ("--flexible", args.flexible),
                                          ("--passive", args.passive), ("--support-stiffness", args.support_stiffness),
                                          ("--support-damping", args.support_damping),
                                          ("--support-points", args.support_points)) if given]
    if args.option and args.kind == "python":
        raise CliError("--option sets the Count/Value options native FMUs carry: use it with --kind native or both "
                       "(pythonfmu FMUs take every value at run time)", 2)
    if urdf_only and not urdfs:
        raise CliError(f"{', '.join(urdf_only)} apply to URDF files (robot.urdf)", 2)
    if args.name and len(urdfs) > 1:
        raise CliError("--name names one model: give one URDF file with it", 2)
    for m in files:
        if not Path(m).is_file():
            raise CliError(f"{m}: no such file", 2)
    models = [_urdf_model(m, args) if m in urdfs else m for m in dict.fromkeys(models)] or available
    if args.cross_check and args.no_cross_check:
        raise CliError("--cross-check DIR and --no-cross-check contradict each other", 2)
    cross_check = None if args.no_cross_check else Path(args.cross_check or Path(args.out) / "cross-check")
    if cross_check is not None and cross_check.exists() and not cross_check.is_dir():
        raise CliError(f"--cross-check: {cross_check} exists and is not a folder", 2)
    t0 = time.perf_counter()
    failed = 0
    try:
        if not args.no_native:
            where, seconds = native_kernels()
            print(f"native kernels: {where} ({f'compiled in {seconds:.0f} s' if seconds else 'up to date'})")
        results = []
        if args.kind in ("python", "both"):
            results += [build_fmu(m, args.out, native=not args.no_native, enumerations=not args.integer_options)
                        for m in models]
            if not args.no_controller:
                results.append(build_controller_fmu(args.out))
        if args.kind in ("native", "both"):
            from .fmi.native_fmu import available_targets, build_native_fmu, check_targets
            targets = check_targets(args.target or available_targets())
            where = Path(args.out) / ("native-aarch64" if "linux-aarch64" in targets else "native")
            print(f"native FMUs for {', '.join(targets)} into {where}"
                  + ("" if args.target or "win64" in targets else
                     " (win64: install mingw-w64, Debian gcc-mingw-w64-x86-64)"))
            baked = _baked_options(args.option or [])
            results += [build_native_fmu(m, where, targets, enumerations=not args.integer_options,
                                         options=baked) for m in models]
    except (ValueError, RuntimeError, OSError, KeyError) as exc:
        raise CliError(f"build failed: {_one_line(exc.args[0] if isinstance(exc, KeyError) else exc)}", 1) from None
    for r in results:
        status = "valid" if not r.problems else f"{len(r.problems)} PROBLEM(S)"
        print(f"{r.path}  {r.size / 1024:.0f} KiB  {r.n_vars} variables  {r.seconds:.1f} s  {status}  "
              f"(interface: {r.doc})")
        for p in r.problems:
            print(f"    {p}")
        failed += bool(r.problems)
    print(f"built {len(results)} FMU(s) in {time.perf_counter() - t0:.1f} s")
    python_fmus = [r for r in results if r.path.parent != Path(args.out) / "native"]
    if cross_check is not None and python_fmus:
        _cross_check(python_fmus, cross_check)       # (the native FMUs answer the same: tests/test_native_fmu.py)
    return 1 if failed else 0


def _baked_options(items) -> dict:
    """--option NAME=VALUE[,VALUE...] ... -> {name: float or [floats]}."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip().removeprefix("model.")
        try:
            values = [float(x) for x in value.split(",")]
        except ValueError:
            sep = ""
        if not sep or not name:
            raise CliError(f"--option {item!r}: expected NAME=VALUE or NAME=VALUE,VALUE,... with numbers "
                           "(e.g. --option n_div=5 or --option n_div=1,2,5)", 2)
        if name in out:
            raise CliError(f"--option {name} is given twice: list its values in one --option {name}=A,B", 2)
        out[name] = values[0] if len(values) == 1 else values
    return out


def _cross_check(results, root: Path) -> None:
    """The FMI cross-check folder of every valid FMU in ``results`` under ``root``."""
    from .crosscheck import write_artifacts
    t0 = time.perf_counter()
    for r in results:
        if r.problems:
            print(f"cross-check: {r.path.name} skipped (not a valid FMU)")
            continue
        t1 = time.perf_counter()
        try:
            folder = write_artifacts(r.path, root)
        except (ValueError, RuntimeError, OSError) as exc:
            raise CliError(f"cross-check artifacts of {r.path.name} failed: {_one_line(exc)}", 1) from None
        rows = len((folder / f"{folder.name}_ref.csv").read_text().splitlines()) - 1
        print(f"cross-check: {folder}  {rows} rows  {time.perf_counter() - t1:.1f} s")
    print(f"cross-check artifacts of {len(results)} FMU(s) in {root} in {time.perf_counter() - t0:.1f} s")


# ---------------------------------------------------------------------------- FMUs and models

def _cached_fmu(model: str) -> Path:
    """The FMU of ``models/<model>.py`` from the cache (fmu_mb.fmu_cache), built there if needed."""
    from .fmu_cache import FmuBuildError, cached_fmu
    try:
        return cached_fmu(model)
    except FmuBuildError as exc:
        raise CliError(_one_line(exc), 1) from None


def _fmu_path(target: str) -> Path:
    """A built FMU (file, or an extracted FMU's folder) or, for a model name, its cached FMU."""
    path = Path(target)
    if path.is_file() or (path.is_dir() and (path / "modelDescription.xml").is_file()):
        return path
    from . import registry
    models = registry.available()
    if target in models and not path.suffix:
        return _cached_fmu(target)
    if path.suffix.lower() == ".fmu" or os.sep in target or path.exists():
        raise CliError(f"no such FMU: {target}", 2)
    raise CliError(f"{target!r} is neither an FMU file nor a model in {registry.models_dir()} "
                   f"(models: {', '.join(models) or 'none'}){_close(target, models)}", 2)


def _model_description(path: Path):
    from fmpy import read_model_description
    try:
        return read_model_description(str(path))
    # fmpy reports a file that is no FMU as OSError, BadZipFile, KeyError (no modelDescription.xml),
    # lxml's XMLSyntaxError, its ValidationError, or a bare Exception (unsupported FMI version)
    except Exception as exc:  # noqa: BLE001
        raise CliError(f"cannot read the model description of {path}: {_one_line(exc) or type(exc).__name__}",
                       2) from None


def _variables(md) -> dict:
    return {v.name: v for v in md.modelVariables}


def _unknown(kind: str, name: str, md, names) -> CliError:
    return CliError(f"{kind} {name!r} is not a variable of {md.modelName}"
                    f"{_close(name, names) or ' (list them with: fmu-mb info FMU)'}", 2)


def _unit(v) -> str:
    return v.unit or (v.declaredType.unit if v.declaredType is not None else None) or ""


# ------------------------------------------------------------------------------------ simulate

_BOOLEAN = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def _typed(v, text: str):
    """``text`` converted to the type of variable ``v`` (ValueError if it is not one)."""
    if v.type in ("Real", "Float64", "Float32"):
        return float(text)
    if v.type == "Boolean":
        if text.strip().lower() not in _BOOLEAN:
            raise ValueError(f"not a Boolean (true/false, 1/0): {text!r}")
        return _BOOLEAN[text.strip().lower()]
    if v.type == "String":
        return text
    if v.type == "Enumeration" and v.declaredType is not None:
        items = {item.name: int(item.value) for item in v.declaredType.items}
        if text.strip() in items:              # an item's name, or its code
            return items[text.strip()]
        if text.strip().lstrip("+-").isdigit() and int(text) in items.values():
            return int(text)
        raise ValueError(f"not one of {', '.join(f'{n} ({c})' for n, c in items.items())}")
    return int(text)               # Integer, the FMI 3 integer types


def _start_values(items, md) -> dict:
    variables = _variables(md)
    values = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise CliError(f"--set takes NAME=VALUE, got {item!r}", 2)
        v = variables.get(name)
        if v is None:
            raise _unknown("--set: variable", name, md, variables)
        if v.causality not in ("parameter", "input"):
            raise CliError(f"--set: {name} is {'an' if v.causality in ('output', 'independent') else 'a'} "
                           f"{v.causality}; only parameters and inputs have start values to set", 2)
        try:
            values[name] = _typed(v, text)
        except ValueError as exc:
            raise CliError(f"--set {name}: {text!r} is not a value of type {v.type} ({_one_line(exc)})", 2) from None
    return values


def _input(path: Path, md):
    """The input signals of CSV file ``path`` (fmpy.util.read_csv), checked against the FMU."""
    import numpy as np
    from fmpy.util import read_csv

    if not path.is_file():
        raise CliError(f"no such input file: {path}", 2)
    try:
        problem = _csv_problem(path.read_text().splitlines())
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read input CSV {path}: {_one_line(exc)}", 2) from None
    if problem:
        raise CliError(f"malformed input CSV {path}: {problem}", 2)
    try:
        signals = read_csv(str(path))
    except (ValueError, IndexError, TypeError, UnicodeDecodeError) as exc:
        raise CliError(f"malformed input CSV {path}: {_one_line(exc) or type(exc).__name__} "
                       "(expected a header 'time,<input>,...' and rows of numbers)", 2) from None
    except OSError as exc:
        raise CliError(f"cannot read input CSV {path}: {_one_line(exc)}", 2) from None
    names = signals.dtype.names
    if names[0] != "time":
        raise CliError(f"input CSV {path}: the first column must be 'time', not {names[0]!r}", 2)
    t = signals["time"]
    if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise CliError(f"input CSV {path}: the time column must be finite and non-decreasing", 2)
    variables = _variables(md)
    for name in names[1:]:
        v = variables.get(name)
        if v is None:
            raise _unknown(f"input CSV {path}: column", name, md,
                           [n for n, x in variables.items() if x.causality == "input"])
        if v.causality != "input" and v.variability != "tunable":
            raise CliError(f"input CSV {path}: column {name!r} is {v.causality}, not an input of {md.modelName}", 2)
        if signals[name].ndim != 1:
            raise CliError(f"input CSV {path}: column {name!r} holds arrays; {md.modelName}'s inputs are scalars", 2)
    return signals


def _csv_problem(lines) -> str | None:
    """What makes ``lines`` unreadable for fmpy.util.read_csv (header, then rows of numbers of
    the header's width), said with the line number, or None."""
    if not lines or not lines[0].strip():
        return "no header line ('time,<input>,...')"
    header = [n.strip().strip('"') for n in lines[0].rstrip().split(",")]
    if len(lines) < 2:
        return "no data rows after the header"
    for i, line in enumerate(lines[1:], 2):
        cells = line.rstrip().split(",")
        if not line.strip():
            return f"line {i} is empty"
        if len(cells) != len(header):
            return f"line {i} has {len(cells)} values, the header {len(header)} columns"
        for name, cell in zip(header, cells):
            for x in cell.split(" "):
                try:
                    float(x)
                except ValueError:
                    return f"line {i}, column {name!r}: {cell!r} is not a number"
    return None


def _outputs(text, md) -> list:
    variables = _variables(md)
    if text is None:
        return [v.name for v in md.modelVariables if v.causality == "output"]
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise CliError("--outputs: no variable names given", 2)
    for n in names:
        if n not in variables:
            raise _unknown("--outputs: variable", n, md, variables)
    return names


def _positive(name):
    def parse(text):
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (math.isfinite(x) and x > 0):
            raise argparse.ArgumentTypeError(f"{name} must be positive and finite, got {text!r}")
        return x
    return parse


def _simulate(args) -> int:
    import numpy as np

    path = _fmu_path(args.target)
    md = _model_description(path)
    if md.coSimulation is None and md.modelExchange is None:
        raise CliError(f"{path} offers neither co-simulation nor model exchange", 2)
    start_values = _start_values(args.set, md)
    signals = _input(Path(args.input), md) if args.input else None
    outputs = _outputs(args.outputs, md)
    exp = md.defaultExperiment
    start = float(exp.startTime) if exp is not None and exp.startTime is not None else 0.0
    stop = args.stop_time if args.stop_time is not None else \
        (float(exp.stopTime) if exp is not None and exp.stopTime is not None else start + 1.0)
    step = args.step if args.step is not None else \
        (float(exp.stepSize) if exp is not None and exp.stepSize is not None else None)
    if stop <= start:
        raise CliError(f"--stop-time must be after the start time {start:g} s, got {stop:g}", 2)
    if args.plot and not outputs:
        raise CliError(f"--plot: {md.modelName} has no outputs; name variables to plot with --outputs", 2)
    for f, what in ((args.csv, "--csv"), (args.plot, "--plot")):
        if f and not Path(f).resolve().parent.is_dir():
            raise CliError(f"{what}: no such folder: {Path(f).parent}", 2)

    errors = []
    labels = ["OK", "WARNING", "DISCARD", "ERROR", "FATAL", "PENDING"]

    def logger(component, instance, status, category, message):
        text = (message or b"").decode("utf-8", "replace")
        if status >= 3:
            errors.append(text)
        print(f"[{labels[status] if 0 <= status < len(labels) else status}] {text}", flush=True)

    from fmpy import simulate_fmu
    t0 = time.perf_counter()
    try:
        result = simulate_fmu(str(path), start_time=start, stop_time=stop, output_interval=step,
                              start_values=start_values, input=signals, output=outputs,
                              debug_logging=args.debug_logging, logger=logger)
    # FMICallException (a failed FMI call) or, fmpy's other failures, a bare Exception
    except Exception as exc:  # noqa: BLE001
        why = f": {_one_line(errors[-1])}" if errors else ""
        raise CliError(f"simulating {path.name} failed: {_one_line(exc).rstrip('.') or type(exc).__name__}{why}",
                       1) from None
    seconds = time.perf_counter() - t0
    variables = _variables(md)
    print(f"{md.modelName}: {len(result)} samples of {len(outputs)} variable(s), t = {result['time'][0]:g} ... "
          f"{result['time'][-1]:g} s, in {seconds:.2f} s")
    if args.csv:
        from fmpy.util import write_csv
        try:
            write_csv(args.csv, result)
        except OSError as exc:
            raise CliError(f"--csv: cannot write {args.csv}: {_one_line(exc)}", 2) from None
        _write_sidecar(Path(args.csv), md, start_values, path)
        print(f"result: {args.csv}")
    if args.plot:
        _plot(result, outputs, variables, args.plot, f"{md.modelName} ({path.name})")
        print(f"plot: {args.plot}" + (f" (the first {MAX_PLOTS} of {len(outputs)} variables; choose with --outputs)"
                                      if len(outputs) > MAX_PLOTS else ""))
    if not args.csv and not args.plot:
        width = max(map(len, outputs), default=0)
        print(f"values at t = {result['time'][-1]:g} s (save all samples with --csv, plot with --plot):")
        for n in outputs:
            x = result[n][-1]
            value = f"{x:.10g}" if isinstance(x, (float, np.floating)) else str(x)
            print(f"  {n:<{width}}  {value} {_unit(variables[n])}".rstrip())
    return 0


def _write_sidecar(csv: Path, md, start_values: dict, fmu: Path) -> None:
    """``<csv stem>.json`` beside the result: the model and the start values the run set, for
    ``fmu-mb report`` (fmu_mb.report.runs)."""
    import json
    side = csv.with_suffix(".json")
    try:
        side.write_text(json.dumps({"model": md.modelName, "fmu": str(fmu), "values": start_values},
                                   default=str, indent=1))
    except OSError as exc:
        raise CliError(f"--csv: cannot write {side}: {_one_line(exc)}", 2) from None


def _plot(result, names, variables, filename, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = names[:MAX_PLOTS]
    fig, axes = plt.subplots(len(names), 1, sharex=True, squeeze=False, figsize=(8, 1.2 + 1.5 * len(names)))
    for ax, n in zip(axes[:, 0], names):
        ax.plot(result["time"], np.asarray(result[n], dtype=float), lw=1.0)
        unit = _unit(variables[n])
        ax.set_title(f"{n}" + (f" [{unit}]" if unit else ""), fontsize=8, loc="left")
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    try:
        fig.savefig(filename, dpi=110)
    except (OSError, ValueError) as exc:       # ValueError: a file type matplotlib cannot write
        raise CliError(f"--plot: cannot write {filename}: {_one_line(exc)}", 2) from None
    finally:
        plt.close(fig)


# ---------------------------------------------------------------------------------------- info

def _platforms(path: Path) -> list:
    if path.is_dir():
        return sorted(p.name for p in (path / "binaries").iterdir() if p.is_dir()) \
            if (path / "binaries").is_dir() else []
    with zipfile.ZipFile(path) as z:
        return sorted({n.split("/")[1] for n in z.namelist() if n.startswith("binaries/") and n.count("/") >= 2
                       and n.split("/")[1]})


def _number(text, kind):
    if text is None:
        return None
    try:
        return kind(text)
    except (TypeError, ValueError):
        return None


def _g(text) -> str:
    x = _number(text, float)
    return str(text) if x is None else f"{x:g}"


def interface_table(md, title: str | None = None) -> str:
    """The Markdown interface table of ``md`` (an fmpy ModelDescription), rendered by the same
    function that writes the build's ``dist/<model>.md`` (fmi.description.interface_markdown)."""
    from .fmi.description import interface_markdown
    from .fmi.interface import Interface, Var

    variables = sorted(md.modelVariables, key=lambda v: v.valueReference)
    itf = Interface(md.modelName)
    for v in variables:
        if v.type in ("Real", "Float64", "Float32"):
            start = _number(v.start, float)
        elif v.type == "Boolean":
            start = None if v.start is None else str(v.start).strip().lower() in ("true", "1")
        elif v.type == "String":
            start = v.start
        else:
            start = _number(v.start, int)
        lo, hi = _number(v.min, float), _number(v.max, float)
        if lo is not None or hi is not None:
            lo, hi = (-math.inf if lo is None else lo), (math.inf if hi is None else hi)
        items = tuple((i.name, i.description or "") for i in v.declaredType.items) \
            if v.type == "Enumeration" and v.declaredType is not None else ()
        itf.add(Var(v.name, "Integer" if items else v.type, v.causality or "local", v.variability or "continuous",
                    v.description or "", (), start, _unit(v) or None, lo, hi, items=items))
    lines = interface_markdown(itf, title or f"{md.modelName} — interface").splitlines()
    vrs = [v.valueReference for v in variables]
    ours = (md.generationTool or "").startswith("fmu_mb")
    if vrs != list(range(len(vrs))) or not ours:
        lines[2] = f"{len(vrs)} variables."
        for i, vr in enumerate(vrs):
            row = lines[6 + i]
            lines[6 + i] = f"| {vr} |" + row[len(f"| {i} |"):]
    return "\n".join(lines) + "\n"


def _info(args) -> int:
    path = Path(args.fmu)
    if not path.exists():
        raise CliError(f"no such FMU: {path}", 2)
    md = _model_description(path)
    try:
        platforms = _platforms(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise CliError(f"cannot list the binaries of {path}: {_one_line(exc)}", 2) from None
    kinds = [f"{name} ({t.modelIdentifier})" for name, t in (("co-simulation", md.coSimulation),
                                                            ("model exchange", md.modelExchange)) if t is not None]
    exp = md.defaultExperiment
    rows = [("Model name", md.modelName), ("Description", md.description), ("FMI version", md.fmiVersion),
            ("GUID", md.guid), ("Generation tool", md.generationTool), ("Generated", md.generationDateAndTime),
            ("FMU types", ", ".join(kinds)), ("Platforms", ", ".join(platforms) or "none (no binaries/)"),
            ("Default experiment", "" if exp is None else
             ", ".join(f"{k} = {_g(getattr(exp, a))}" for k, a in (("start", "startTime"), ("stop", "stopTime"),
                                                               ("step", "stepSize"), ("tolerance", "tolerance"))
                       if getattr(exp, a, None) is not None)),
            ("Variables", str(len(md.modelVariables)))]
    for k, v in rows:
        print(f"{k + ':':<20}{v if v is not None else ''}")
    print()
    print(interface_table(md, f"{path.name} — interface"), end="")
    return 0


# ------------------------------------------------------------------------------ scenario, demo

def _scenario(args) -> int:
    from .scenarios.__main__ import main as scenario_main
    return scenario_main([args.name] + (["--out", args.out] if args.out else []))


def _demo(args) -> int:
    from .demo import main as demo_main
    try:
        return demo_main([args.demo, "--fmus", args.fmus, "--out", args.out]
                         + (["--time", repr(args.time)] if args.time is not None else []))
    except SystemExit as exc:
        if isinstance(exc.code, str):       # the demo's own message, e.g. its FMUs are missing
            raise CliError(exc.code.replace("python build_fmus.py", "fmu-mb build"), 1) from None
        raise


# ---------------------------------------------------------------------------------------- main

def _sweep(args) -> int:
    from .fmu_cache import FmuBuildError
    from .sweep import StudyError, load_study, run_study
    from .sweep.study import FINISHED_OK
    try:
        study = load_study(args.study)
        out = Path(args.out) if args.out else Path("results") / "sweeps" / Path(args.study).stem
        table, executed = run_study(study, out, scheduler=args.scheduler, workers=args.workers,
                                    progress=not args.no_progress, retry_failed=args.retry_failed)
    except (StudyError, FmuBuildError) as exc:
        raise CliError(_one_line(exc), 2) from None
    except OSError as exc:
        raise CliError(f"sweep: {_one_line(exc)}", 1) from None
    failed = int((~table["status"].isin(FINISHED_OK)).sum())
    print(f"{len(table)} run(s) in {out}/table.parquet ({executed} run now, {failed} failed)")
    return 0


def _report(args) -> int:
    from .report import ReportError, write_report
    options = {}
    for item in args.option or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CliError(f"--option wants NAME=VALUE, got {item!r}", 2)
        options[name.strip().removeprefix("model.")] = value.strip()
    try:
        page = write_report(args.source, args.out, model=args.model, options=options or None, run=args.run,
                            deflection_scale=args.deflection_scale, max_frames=args.frames)
    except (ReportError, KeyError) as exc:
        raise CliError(_one_line(exc.args[0] if isinstance(exc, KeyError) else exc), 2) from None
    except OSError as exc:
        raise CliError(f"report: {_one_line(exc)}", 1) from None
    print(f"report: {page} ({page.stat().st_size / 1e6:.1f} MB, self-contained)")
    return 0


REPORT_DESCRIPTION = """Write one self-contained HTML page of a run or a study: the mechanism animated in 3D (play,
pause, time slider), then plots of its joint states, drives, friction torques, reactions, violations
and energies (plotly; no network needed to view it).

    fmu-mb simulate crane --set model.link=1 --csv run.csv && fmu-mb report run.csv
    fmu-mb report results/sweeps/crane_support_stiffness          # a study folder

A run is a CSV or parquet table of an FMU's outputs; its model and options come from the sidecar
<run>.json that 'simulate --csv', the demo and 'sweep' write, or from --model/--option."""


SWEEP_DESCRIPTION = """Run a study: an FMU (or a model of models/) over a grid, a list or random samples of start
values, every run in a Dask worker process; results as one table (table.parquet/.csv: one row per
run, its start values and metrics), each run's trajectories (runs/<key>.parquet) and summary plots.
Finished runs are skipped when the study is run again (results keyed by what defines the run).

    fmu-mb sweep studies/crane_support_stiffness.toml
    fmu-mb sweep my_study.toml --out results/my_study --scheduler tcp://10.0.0.5:8786

The study file is TOML; its entries are documented in fmu_mb/sweep/spec.py and docs in the README."""


def parser() -> argparse.ArgumentParser:
    from . import registry
    from .scenarios import SCENARIOS

    ap = argparse.ArgumentParser(prog=PROG, description="fmu_mb: multibody mechanisms as FMI 2.0 co-simulation "
                                 "FMUs — build, inspect and simulate them, run the papers' scenarios.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    models = registry.available()
    b = sub.add_parser("build", help="build the FMUs of models/ (and the PD controller)",
                       description=BUILD_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("models", nargs="*", metavar="MODEL",
                   help=f"model to build: a name in models/ (default: all of them: {', '.join(models)}), the path "
                        "of a model file (my_arm.py, docs/mechanisms.md) or of a URDF file (robot.urdf)")
    b.add_argument("--base", choices=("fixed", "free", "sprung"),
                   help="URDF files: the root link welded to the ground (default), on a free 6-DOF base joint, or on "
                        "that joint with four spring-damping supports")
    b.add_argument("--name", help="URDF files: the model's name (default: the robot's name in the file)")
    b.add_argument("--flexible", action="append", metavar="LINK=SPEC",
                   help="URDF files: make a link an RFEM beam from its frame to its child joint (repeatable). SPEC: "
                        "a material (aluminium, steel) or E=,G= (Pa); a section tube=DxT, rod=D, rect=BxH (m) or "
                        "area=,Iy=,Iz=,J= (m², m⁴); optional n_div= (sections, default 6), damping= (s), density= "
                        "(kg/m³; default: the URDF mass spread along the beam), end=JOINT. Example: "
                        "forearm_link=aluminium,tube=0.08x0.004,n_div=8")
    b.add_argument("--passive", action="append", metavar="JOINT[,JOINT]",
                   help="URDF files: moving joints without a drive input (default: every moving joint is driven)")
    b.add_argument("--support-stiffness", metavar="KX,KY,KZ",
                   help="URDF files, --base sprung: stiffness of each support along world x, y, z, N/m (default "
                        "1e6,1e6,1e6)")
    b.add_argument("--support-damping", metavar="DX,DY,DZ",
                   help="URDF files, --base sprung: damping of each support, N·s/m (default 1e3,1e3,1e3)")
    b.add_argument("--support-points", action="append", metavar="X,Y,Z",
                   help="URDF files, --base sprung: a support point in the root-link frame, m (repeatable; default "
                        "the corners of a 0.4 m square at z = 0)")
    b.add_argument("--model", "--model-file", action="append", dest="model", metavar="MODEL",
                   help="the same, as an option (repeatable)")
    b.add_argument("--out", default="dist", help="output directory (default: dist)")
    b.add_argument("--no-controller", action="store_true", help="do not build the PD controller FMU")
    b.add_argument("--no-native", action="store_true",
                   help="do not include the native kernel library (the FMUs then compile with numba on first use)")
    b.add_argument("--kind", choices=("python", "native", "both"), default="python",
                   help="python: FMUs running the fmu_mb core in the host's Python (default); native: FMUs with "
                        "the compiled kernels and a C FMI layer, no Python on the host, into OUT/native/ "
                        "(fmu_mb.fmi.native_fmu); both")
    b.add_argument("--target", nargs="+", choices=("linux64", "win64", "linux-aarch64"), metavar="PLATFORM",
                   help="platforms of the native FMUs: linux64, win64, linux-aarch64 (default: linux64, and win64 "
                        "where mingw-w64 is installed). FMI 2.0 has no AArch64 folder: its importers load "
                        "binaries/linux64 there, so linux-aarch64 FMUs (gcc-aarch64-linux-gnu) go to "
                        "OUT/native-aarch64/ without linux64")
    b.add_argument("--option", action="append", metavar="NAME=VALUE[,VALUE...]",
                   help="native FMUs: the value(s) of a Count/Value model option they carry (e.g. n_div=5, "
                        "damping=1.2e-3, support_z=1e6,1e7,1e8; repeatable for other options); these options rebuild "
                        "the model in Python, so a native FMU carries a compiled mechanism per value and its "
                        "parameter takes those values only (the first is its start value); a Value option its "
                        "arrays follow linearly takes any value anyway (the one given is its start value); "
                        "without it a Count option is carried at every value of its range")
    b.add_argument("--integer-options", action="store_true",
                   help="declare the named options (model.* choices, solver.integrator) as FMI Integers with their "
                        "codes in the description instead of Enumerations: for OSP libcosim, which ignores "
                        "Enumeration variables")
    b.add_argument("--cross-check", metavar="DIR", help="where each FMU's FMI cross-check folder goes (FMU, "
                   "input, reference from an FMPy run, options, ReadMe; DIR/fmus/2.0/cs/linux64/fmu_mb/...; "
                   "default: OUT/cross-check)")
    b.add_argument("--no-cross-check", action="store_true", help="do not write the cross-check artifacts")
    b.set_defaults(func=_build, parser=b)

    s = sub.add_parser("simulate", help="simulate an FMU (or a model of models/) with FMPy",
                       description="Simulate an FMU with fmpy.simulate_fmu: inputs from a CSV file, start "
                       "values, result as CSV and plot. Without --csv/--plot the final values are printed. "
                       "A model name instead of a file builds its FMU once into $FMU_MB_CACHE/cli-fmus "
                       "(default ~/.cache/fmu_mb/cli-fmus) and reuses it while the model file and core "
                       "are unchanged.")
    s.add_argument("target", metavar="TARGET", help=f"FMU file, or a model name ({', '.join(models)})")
    s.add_argument("--input", metavar="CSV", help="input signals: CSV with a 'time' column and one column per "
                   "input (fmpy.util.read_csv; linear interpolation, held after the last row)")
    s.add_argument("--stop-time", type=_positive("--stop-time"), metavar="S",
                   help="stop time, s (default: the modelDescription's DefaultExperiment)")
    s.add_argument("--step", type=_positive("--step"), metavar="S",
                   help="communication step = output interval, s (default: the DefaultExperiment's stepSize)")
    s.add_argument("--set", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="start value of a parameter or input (converted to its type; repeatable)")
    s.add_argument("--outputs", metavar="NAME,...", help="variables to record (default: every output)")
    s.add_argument("--csv", metavar="FILE", help="write the result as CSV (fmpy.util.write_csv)")
    s.add_argument("--plot", metavar="PNG", help=f"plot the result, one subplot per variable (at most {MAX_PLOTS})")
    s.add_argument("--debug-logging", action="store_true", help="switch on the FMU's debug log messages")
    s.set_defaults(func=_simulate, parser=s)

    i = sub.add_parser("info", help="print an FMU's identity and interface table",
                       description="Print a built FMU's model name, GUID, FMI version, generation tool, "
                       "platforms and its interface table (value reference, name, causality, variability, "
                       "type, unit, start, range, description).")
    i.add_argument("fmu", metavar="FMU", help="FMU file")
    i.set_defaults(func=_info, parser=i)

    c = sub.add_parser("scenario", help="run a paper's scenario (plots and CSV in results/<name>)",
                       description="Run a paper's scenario and save its plots (PNG) and data (CSV) "
                       "(= python -m fmu_mb.scenarios).")
    c.add_argument("name", choices=SCENARIOS, metavar="NAME", help=f"scenario: {', '.join(SCENARIOS)}")
    c.add_argument("--out", default=None, help="output directory (default results/<name>)")
    c.set_defaults(func=_scenario, parser=c)

    w = sub.add_parser("sweep", help="run a study (parameter sweep) of an FMU on Dask",
                       description=SWEEP_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("study", metavar="STUDY", help="study file (TOML)")
    w.add_argument("--out", metavar="DIR", help="output folder (default: results/sweeps/<study name>)")
    w.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler (tcp://host:port) instead "
                   "of a local cluster")
    w.add_argument("--workers", type=int, metavar="N", help="worker processes of the local cluster "
                   "(default: one per core)")
    w.add_argument("--retry-failed", action="store_true", help="run failed runs again (default: keep them)")
    w.add_argument("--no-progress", action="store_true", help="no progress bar")
    w.set_defaults(func=_sweep, parser=w)

    r = sub.add_parser("report", help="write an HTML report of a run or a study (3D animation and plots)",
                       description=REPORT_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("source", metavar="RUN", help="a run (CSV or parquet of FMU outputs) or a study folder")
    r.add_argument("--out", metavar="PAGE", help="the HTML file (default: the run's name with .html; a study's "
                   "report.html)")
    r.add_argument("--model", metavar="MODEL", help="the run's model in models/ (default: its sidecar's, else "
                   "recognised from its columns)")
    r.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="a model option for drawing, e.g. link=flexible (default: the run's model.* values)")
    r.add_argument("--run", metavar="KEY", help="for a study: the run to animate (default: the first finished)")
    r.add_argument("--deflection-scale", type=_positive("--deflection-scale"), metavar="X",
                   help="magnify flexible links' deflection by X (default: automatic power of ten)")
    r.add_argument("--frames", type=int, default=150, metavar="N", help="animation frames (default: 150)")
    r.set_defaults(func=_report, parser=r)

    d = sub.add_parser("demo", help="closed-loop co-simulation: crane FMUs (reference model, plant) + PD "
                       "controller FMU", description="Closed-loop co-simulation demos in FMPy (= python -m "
                       "fmu_mb.demo; build the FMUs first): crane — a programmed reference model, the PD "
                       "controller FMU with feed-forward and the full-detail crane in torque mode (plot, run "
                       "CSV, HTML report); five_axis — paper 002's tree under the PD controller FMU.")
    d.add_argument("demo", nargs="?", default="crane", choices=("crane", "five_axis"),
                   help="which demo (default: crane)")
    d.add_argument("--fmus", default="dist", help="directory with the FMUs (default: dist)")
    d.add_argument("--out", default="results/demo", help="output directory (default: results/demo)")
    d.add_argument("--time", type=_positive("--time"), default=None,
                   help="simulated time, s (default: crane 5, five_axis 4)")
    d.set_defaults(func=_demo, parser=d)
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
