"""The command line of fmu_mb: ``fmu-mb`` (also ``python -m fmu_mb``), in FMPy's style.

    fmu-mb build [MODEL|FILE.py|FILE.urdf|FILE.xml ...] [--base B] [--name N] [--flexible LINK=SPEC] [--passive J]
                 [--support-...] [--out DIR] [--kind python|native|both] [--target PLATFORM ...] [--fmi 2 3]
                 [--no-controller] [--integer-options] [--cross-check DIR | --no-cross-check]
    fmu-mb simulate TARGET [--input in.csv] [--stop-time S] [--step S] [--set NAME=VALUE ...]
                           [--outputs NAME,...] [--csv out.csv] [--plot out.png] [--debug-logging]
    fmu-mb info FMU
    fmu-mb scenario NAME [--out DIR]
    fmu-mb demo [--fmus DIR] [--out DIR] [--time S]
    fmu-mb ssp [MODEL|FILE.py] [--set NAME=VALUE ...] [--step S] [--stop-time S] [--omega W] [--out FILE.ssp]
    fmu-mb linearize MODEL [--set OPTION=VALUE ...] [--at POINT] [--drive INPUT=VALUE ...] [--inputs ...]
                     [--outputs ...] [--dt S] [--out FILE.mat|.npz] [--report PAGE.html]
    fmu-mb compile [simulation|linearization|native ...]

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
import os
import sys
from pathlib import Path

from . import __version__
from .errors import UserError, one_line

PROG = "fmu-mb"

BUILD_DESCRIPTION = """\
Build FMUs of the mechanisms in models/, your model files and robot files (and the PD controller): Python FMUs
(FMI 2.0 co-simulation) and native ones (FMI 2.0 co-simulation and Model Exchange; FMI 3.0 with --fmi 3).

    fmu-mb build                        # every model, into dist/
    fmu-mb build five_axis crane        # a selection (also: --model five_axis --model crane)
    fmu-mb build my_arm.py              # your own model file (docs/mechanisms.md)
    fmu-mb build robot.urdf --base free # a URDF robot (its model file goes to OUT/models/)
    fmu-mb build ur5.urdf --flexible forearm_link=aluminium,tube=0.08x0.004 --passive wrist_3_joint
    fmu-mb build reacher.xml            # a MuJoCo (MJCF) model, compiled by MuJoCo (pip install mujoco)
    fmu-mb build --out /tmp/fmus --no-controller

Each FMU is validated with FMPy (schema and consistency); a Markdown table of its
interface is written next to it (<model>.md). Every FMU's binary is the fmu_mb FMU core with the
kernel library compiled ahead of time (fmu_mb.native.library; compiled once per core version), so
no FMU compiles or imports numba when it runs; a Python FMU builds its mechanism with the model
file's Python (any option value), a native FMU carries them compiled (no Python on the host).

Every FMU built also gets its FMI cross-check folder (default under OUT/cross-check, or
--cross-check DIR; --no-cross-check skips it, about 1 s per FMU):
DIR/fmus/2.0/cs/linux64/fmu_mb/<version>/<model>/ (the FMU, _in.csv, _ref.csv, _ref.opt,
ReadMe.md; fmu_mb.crosscheck): each reference is a run of the FMU with FMPy."""


LINEARIZE_DESCRIPTION = """\
The linear model of a mechanism at an operating point, from the pipeline's exact Jacobians (complex
step: no finite differences), with its modes (natural frequency, damping ratio, largest coordinates).

    fmu-mb linearize crane --set mode=torque                    # at static equilibrium
    fmu-mb linearize crane --set mode=torque link=flexible --out crane.mat
    fmu-mb linearize five_axis --at 0.5 --drive joint1.tau_drive=2  # the state a run reaches at 0.5 s
    fmu-mb linearize crane --set mode=torque --dt 0.001 --out crane_1ms.npz   # discrete time, 1 ms
    fmu-mb linearize crane --set mode=torque link=flexible --report crane_modes.html   # modes animated, poles, Bode
    fmu-mb linearize crane --set link=flexible --along 0:5:0.1 --out crane_ltv.mat   # along the programmed motion

States: coordinates, rates and friction bristle states (constrained mechanisms: the independent ones
of the coordinate partition, paper 000 eq. 25); inputs: drive torques/forces; outputs: FMU outputs.
Python: fmu_mb.linearization.linearize (docs/linear-models.md)."""


COMPILE_DESCRIPTION = """\
Compile now what a first simulate, build or linearize would otherwise wait for: numba's JIT kernels of the
simulation (every integrator, trees and closed loops) and of the linearization (complex step), kept on disk
beside the package (or in $NUMBA_CACHE_DIR), and this platform's native kernel library, kept in
$FMU_MB_CACHE (default ~/.cache/fmu_mb). The JIT kernels compile in one process, the library beside it: about
15 minutes on a 2-core machine the first time (measured 15.5), once per version of fmu_mb; seconds when nothing
changed.

    fmu-mb compile                      # everything
    fmu-mb compile simulation native    # no linearization"""


RT_BENCH_DESCRIPTION = """Step a native co-simulation FMU (FMI 2.0 or 3.0) at a fixed rate, as a hardware-in-the-loop rig
does, and report the distribution of its step times (fmi2DoStep or fmi3DoStep plus reading every output): median,
p99, p99.99, max, overruns (steps longer than the period). A small C program (compiled on first use with cc) runs
the loop: no Python in it; it locks its memory, asks for SCHED_FIFO and pins one CPU, and says what it got. With
--me, the FMU's Model Exchange interface is integrated by the program's own fixed-step solver instead, as a rig
that imports an ME FMU integrates it (explicit: the stiff options need the co-simulation step's implicit methods).

    fmu-mb rt-bench dist/native/crane.fmu                                # 100000 steps at 1 kHz
    fmu-mb rt-bench dist/native/crane.fmu --set model.link=flexible model.friction=lugre
    fmu-mb rt-bench dist/native/five_axis.fmu --rate 0 --steps 1000000   # back to back: the distribution
    fmu-mb rt-bench dist/native/five_axis.fmu --rate 0 --step 0.01       # back to back, 10 ms steps
    fmu-mb rt-bench dist/native/five_axis.fmu --vary joint1.tau_drive=0.5   # an input written every step
    fmu-mb rt-bench dist/native/five_axis.fmu --me rk4                   # Model Exchange, the rig's RK4
"""


#: robot description files fmu-mb build imports (fmu_mb.interop): URDF and MuJoCo's MJCF
ROBOT_FILES = (".urdf", ".xml", ".mjcf")


def _urdf_model(path: str, args) -> str:
    from .build import urdf_model
    return urdf_model(path, args.out, base=args.base or "fixed", name=args.name, flexible=args.flexible or [],
                      passive=args.passive or [], support_stiffness=args.support_stiffness,
                      support_damping=args.support_damping, support_points=args.support_points or [],
                      strict=args.strict)


def _build(args) -> int:
    from . import registry
    from .build import build

    available = registry.available()
    models = list(args.models) + list(args.model or [])
    files = [m for m in models if m.endswith((".py",) + ROBOT_FILES) or os.sep in m]
    unknown = [m for m in models if m not in available and m not in files]
    if unknown:
        choices = ", ".join(available) or f"none: no model files in {registry.models_dir()}"
        args.parser.error(f"unknown model(s) {', '.join(map(repr, unknown))} (choose from {choices}, or give the "
                          "path of a model file (.py), a URDF file (.urdf) or an MJCF file (.xml))")
    urdfs = [m for m in files if m.endswith(ROBOT_FILES)]
    urdf_only = [flag for flag, given in (("--base", args.base), ("--name", args.name), ("--flexible", args.flexible),
                                          ("--passive", args.passive), ("--support-stiffness", args.support_stiffness),
                                          ("--support-damping", args.support_damping),
                                          ("--support-points", args.support_points),
                                          ("--strict", args.strict)) if given]
    if 3 in args.fmi and args.kind == "python":
        raise UserError("--fmi 3 builds native FMUs (pythonfmu writes FMI 2.0 only): use it with --kind native or "
                        "both", 2)
    if args.option and args.kind == "python":
        raise UserError("--option sets the Count/Value options native FMUs carry: use it with --kind native or both "
                        "(Python FMUs take every value at run time)", 2)
    if urdf_only and not urdfs:
        raise UserError(f"{', '.join(urdf_only)} apply to robot files (robot.urdf, robot.xml)", 2)
    if args.name and len(urdfs) > 1:
        raise UserError("--name names one model: give one robot file with it", 2)
    for m in files:
        if not Path(m).is_file():
            raise UserError(f"{m}: no such file", 2)
    if args.dynamics and not models:
        raise UserError("--dynamics: name the models to build with it (mechanisms without kinematic loops or "
                        "nonholonomic constraints, such as crane, five_axis, manipulator and URDF robots)", 2)
    if args.cross_check and args.no_cross_check:
        raise UserError("--cross-check DIR and --no-cross-check contradict each other", 2)
    cross_check = None if args.no_cross_check else Path(args.cross_check or Path(args.out) / "cross-check")
    if cross_check is not None and cross_check.exists() and not cross_check.is_dir():
        raise UserError(f"--cross-check: {cross_check} exists and is not a folder", 2)
    models = [_urdf_model(m, args) if m in urdfs else m for m in dict.fromkeys(models)] or available
    if args.demo:
        if args.kind == "native" or args.no_controller or "crane" not in models:
            raise UserError("--demo runs the crane closed loop on Python FMUs: build crane (or every model) with "
                            "--kind python or both and the PD controller", 2)
        from .build import demo_first
        failed = demo_first(models, args.out, args.kind, args.target, _baked_options(args.option or []),
                            enumerations=not args.integer_options, cross_check=cross_check, dynamics=args.dynamics,
                            fmi=tuple(args.fmi))
        return 1 if failed else 0
    failed = build(models, args.out, args.kind, args.target, _baked_options(args.option or []),
                   controller=not args.no_controller, enumerations=not args.integer_options, cross_check=cross_check,
                   dynamics=args.dynamics, fmi=tuple(args.fmi))
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
            raise UserError(f"--option {item!r}: expected NAME=VALUE or NAME=VALUE,VALUE,... with numbers "
                            "(e.g. --option n_div=5 or --option n_div=1,2,5)", 2)
        if name in out:
            raise UserError(f"--option {name} is given twice: list its values in one --option {name}=A,B", 2)
        out[name] = values[0] if len(values) == 1 else values
    return out


def _simulate(args) -> int:
    from . import runs
    from .fmu_cache import fmu_path

    path = fmu_path(args.target)
    md = runs.model_description(path)
    start = runs.start_values(args.set, md)
    signals = runs.read_inputs(Path(args.input), md) if args.input else None
    outputs = runs.output_names(args.outputs, md)
    if args.plot and not outputs:
        raise UserError(f"--plot: {md.modelName} has no outputs; name variables to plot with --outputs", 2)
    for f, what in ((args.csv, "--csv"), (args.plot, "--plot")):
        if f and not Path(f).resolve().parent.is_dir():
            raise UserError(f"{what}: no such folder: {Path(f).parent}", 2)
    result, seconds = runs.simulate(path, md, start, signals, outputs, args.stop_time, args.step, args.debug_logging,
                                    log=lambda text: print(text, flush=True))
    print(f"{md.modelName}: {len(result)} samples of {len(outputs)} variable(s), t = {result['time'][0]:g} ... "
          f"{result['time'][-1]:g} s, in {seconds:.2f} s")
    if args.csv:
        runs.write_result(Path(args.csv), result, md, start, path)
        print(f"result: {args.csv}")
    if args.plot:
        runs.plot(result, outputs, md, args.plot, f"{md.modelName} ({path.name})")
        print(f"plot: {args.plot}" + (f" (the first {runs.MAX_PLOTS} of {len(outputs)} variables; choose with "
                                      "--outputs)" if len(outputs) > runs.MAX_PLOTS else ""))
    if not args.csv and not args.plot:
        print(runs.final_values(result, outputs, md))
    return 0


def _rt_bench(args) -> int:
    import json
    from . import rtbench, runs
    if args.steps < 1:
        raise UserError(f"--steps must be at least 1 (got {args.steps})", 2)
    if not (args.rate >= 0.0) or args.rate == float("inf"):
        raise UserError(f"--rate must be a number of steps per second >= 0 (got {args.rate:g})", 2)
    if args.step is not None and args.rate:
        raise UserError(f"--step sets the communication step of a back-to-back run (--rate 0); at --rate "
                        f"{args.rate:g} it is 1/rate", 2)
    if args.cpu is not None and not 0 <= args.cpu < (os.cpu_count() or 1):
        raise UserError(f"--cpu: this machine has CPUs 0 ... {(os.cpu_count() or 1) - 1} (got {args.cpu})", 2)
    if args.json and not Path(args.json).resolve().parent.is_dir():
        raise UserError(f"--json: no such folder: {Path(args.json).parent}", 2)
    path = Path(args.fmu)
    if not path.is_file():
        raise UserError(f"{path}: no such file", 2)
    md = runs.model_description(path)
    start = runs.start_values(args.set, md)
    vary = _amplitudes(args.vary)
    rtbench.vary_args(md, start, vary)                      # refused before a long paced run begins
    if args.rate:
        print(f"{path.name}: {args.steps} steps at {args.rate:g} Hz take {args.steps / args.rate:.0f} s "
              "(--steps, or --rate 0 for back-to-back steps)", flush=True)
    report = rtbench.run(path, args.steps, args.rate, args.cpu, start, md, args.step, vary=vary, me=args.me)
    print(rtbench.describe(path.name, report), flush=True)
    if args.baseline:
        report["baseline"] = rtbench.baseline(report["median_ns"], args.steps, args.rate, args.cpu)
        print(rtbench.describe_baseline(report["baseline"]))
    if args.json:
        Path(args.json).write_text(json.dumps({"fmu": str(path), "start": start, "vary": vary, **report}, indent=1))
    return 1 if report.get("status", 0) > 1 else 0


def _amplitudes(items: list) -> dict:
    """--vary NAME=AMPLITUDE ... as {name: amplitude}; UserError for a malformed item."""
    out = {}
    for item in items:
        name, eq, text = item.partition("=")
        try:
            out[name.strip()] = float(text)
        except ValueError:
            out = None
        if not eq or out is None or not name.strip():
            raise UserError(f"--vary {item}: expected NAME=AMPLITUDE, e.g. joint1.tau_drive=0.5", 2)
    return out


def _info(args) -> int:
    from .fmu_info import describe
    print(describe(Path(args.fmu)), end="")
    return 0


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
            raise UserError(exc.code.replace("python build_fmus.py", "fmu-mb build"), 1) from None
        raise


def _compile(args) -> int:
    from .precompile import PARTS, run
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        raise UserError(f"unknown part {unknown[0]!r}: choose from {', '.join(PARTS)}", code=2)
    try:
        run(tuple(dict.fromkeys(args.parts)) or PARTS)
    except RuntimeError as exc:
        raise UserError(str(exc), code=1) from None
    return 0


def _ssp(args) -> int:
    from .errors import one_line
    from .ssp import write_closed_loop
    try:
        write_closed_loop(args.model, args.out, args.step, args.stop_time, args.omega, args.set,
                          targets=args.target or None)
    except (KeyError, ValueError) as exc:
        raise UserError(f"ssp: {one_line(exc.args[0] if isinstance(exc, KeyError) else exc)}", 2) from None
    except (RuntimeError, OSError) as exc:
        raise UserError(f"ssp: {one_line(exc)}", 1) from None
    return 0


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
        raise UserError(one_line(exc), 2) from None
    except OSError as exc:
        raise UserError(f"sweep: {one_line(exc)}", 1) from None
    failed = int((~table["status"].isin(FINISHED_OK)).sum())
    print(f"{len(table)} run(s) in {out}/table.parquet ({executed} run now, {failed} failed)")
    return 0


def _option_value(text: str):
    """A model option's value from the command line: an integer, a number, true/false or a word."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def _pairs(items, what: str) -> dict:
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"{what} wants NAME=VALUE, got {item!r}", 2)
        out[name.strip()] = value
    return out


def _times(text: str):
    """T0:T1:DT -> the times T0, T0 + DT, ... up to T1 (s)."""
    import numpy as np
    try:
        t0, t1, dt = (float(v) for v in text.split(":"))
    except ValueError:
        raise UserError(f"--along wants T0:T1:DT in s, e.g. 0:2:0.1 (got {text!r})", 2) from None
    if not (0 <= t0 <= t1 and dt > 0) or (t1 - t0) / dt > 10000:
        raise UserError(f"--along {text}: needs 0 <= T0 <= T1, DT > 0 and at most 10000 samples", 2)
    return t0 + dt * np.arange(int(np.floor((t1 - t0) / dt + 1e-9)) + 1)


def _linearize(args) -> int:
    from .linearization import LinearizationError, linearize, linearize_along, save_along
    from .registry import ModelFileError
    options = {k.removeprefix("model."): _option_value(v) for k, v in _pairs(args.set, "--set").items()}
    try:
        drive = {k: float(v) for k, v in _pairs(args.drive, "--drive").items()}
    except ValueError:
        raise UserError("--drive wants NAME=NUMBER (an input of the model, N·m or N)", 2) from None
    at = args.at
    if at not in ("equilibrium", "start"):
        try:
            at = float(at)
        except ValueError:
            raise UserError(f"--at wants equilibrium, start or a time in s (got {args.at!r})", 2) from None
    from .runs import split_names
    names = (lambda text: split_names(text) if text else None)
    if args.out and Path(args.out).suffix not in (".mat", ".npz"):
        raise UserError(f"--out: a linear model is written as .mat or .npz (got {args.out})", 2)
    for f, what in ((args.out, "--out"), (args.report, "--report")):
        if f and not Path(f).resolve().parent.is_dir():
            raise UserError(f"{what}: no such folder: {Path(f).parent}", 2)
    if args.along and (args.report or args.at != "equilibrium"):
        raise UserError("--along makes a linear time-varying model along a run: --at and --report do not apply", 2)
    import tempfile
    with tempfile.TemporaryDirectory(prefix="fmu_mb_linearize_") as folder:
        model = _model_file(args.model, Path(folder))
        if args.along:
            times = _times(args.along)
            try:
                models = linearize_along(model, options, times=times, drive=drive or None,
                                         inputs=names(args.inputs), outputs=names(args.outputs), dt=args.dt,
                                         method=args.method, step_size=args.step)
                for m in models:
                    ev = m.eigenvalues()
                    growth = f", largest real part of the eigenvalues {max(ev.real):.4g} 1/s" if ev.size else \
                        " (the programmed motion leaves no free coordinate)"
                    print(f"t = {m.t_op:8.4g} s: {m.A.shape[0]} states{growth}")
                if args.out:
                    save_along(models, args.out)
                    print(f"linear time-varying model ({len(models)} samples): {args.out}")
            except (LinearizationError, ModelFileError, KeyError, ValueError) as exc:
                raise UserError(one_line(exc.args[0] if isinstance(exc, KeyError) else exc), 2) from None
            except RuntimeError as exc:
                raise UserError(f"linearize: {one_line(exc)}", 1) from None
            return 0
        kwargs = dict(at=at, drive=drive or None, inputs=names(args.inputs), outputs=names(args.outputs), dt=args.dt,
                      method=args.method, step_size=args.step)
        try:
            lm = linearize(model, options, **kwargs)
        except (LinearizationError, ModelFileError, KeyError, ValueError) as exc:
            raise UserError(one_line(exc.args[0] if isinstance(exc, KeyError) else exc), 2) from None
        except RuntimeError as exc:
            raise UserError(f"linearize: {one_line(exc)}", 1) from None
        print(lm.summary(args.modes))
        if args.out:
            lm.save(args.out)
            print(f"linear model: {args.out}")
        if args.report:
            from .report import ReportError
            from .report.modes import write_modes_report
            try:
                page = write_modes_report(model, options, args.report, **kwargs)
            except (ReportError, LinearizationError) as exc:
                raise UserError(one_line(exc), 2) from None
            print(f"report: {page} ({page.stat().st_size / 1e6:.1f} MB, self-contained)")
    return 0


def _model_file(target: str, folder: Path) -> str:
    """A model name or file as given; an FMU: the model file its resources carry (a Python FMU's), extracted
    into ``folder``."""
    if not target.endswith(".fmu"):
        return target
    import zipfile
    try:
        with zipfile.ZipFile(target) as z:
            files = [n for n in z.namelist() if n.startswith("resources/models/") and n.endswith(".py")]
            if not files:
                raise UserError(f"{target}: carries no model file (a native FMU); linearize the model it was built "
                                "from (its name or file)", 2)
            z.extract(files[0], folder)
            return str(folder / files[0])
    except (OSError, zipfile.BadZipFile) as exc:
        raise UserError(f"{target}: {one_line(exc)}", 2) from None


def _report(args) -> int:
    from .report import ReportError, write_report
    options = {}
    for item in args.option or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserError(f"--option wants NAME=VALUE, got {item!r}", 2)
        options[name.strip().removeprefix("model.")] = value.strip()
    try:
        page = write_report(args.source, args.out, model=args.model, options=options or None, run=args.run,
                            deflection_scale=args.deflection_scale, max_frames=args.frames)
    except (ReportError, KeyError) as exc:
        raise UserError(one_line(exc.args[0] if isinstance(exc, KeyError) else exc), 2) from None
    except OSError as exc:
        raise UserError(f"report: {one_line(exc)}", 1) from None
    print(f"report: {page} ({page.stat().st_size / 1e6:.1f} MB, self-contained)")
    return 0


def _positive(name):
    def parse(text):
        from .runs import positive
        try:
            return positive(name, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


REPORT_DESCRIPTION = """Write one self-contained HTML page of a run or a study: the mechanism animated in 3D (play,
pause, time slider), then plots of its joint states, drives, friction torques, reactions, violations
and energies (plotly; no network needed to view it).

    fmu-mb simulate crane --set model.link=1 --csv run.csv && fmu-mb report run.csv
    fmu-mb report results/sweeps/crane_support_stiffness          # a study folder
    fmu-mb simulate dist/ur5.fmu --csv ur5.csv && fmu-mb report ur5.csv   # a URDF robot: drawn from its FMU

A run is a CSV or parquet table of an FMU's outputs; its model and options come from the sidecar
<run>.json that 'simulate --csv', the demo and 'sweep' write, or from --model/--option."""


SWEEP_DESCRIPTION = """Run a study: an FMU (or a model of models/) over a grid, a list or random samples of start
values, every run in a Dask worker process; results as one table (table.parquet/.csv: one row per
run, its start values and metrics), each run's trajectories (runs/<key>.parquet) and summary plots.
Finished runs are skipped when the study is run again (results keyed by what defines the run).

    fmu-mb sweep studies/crane_support_stiffness.toml
    fmu-mb sweep my_study.toml --out results/my_study --scheduler tcp://10.0.0.5:8786

The study file is TOML; its entries are documented in fmu_mb/sweep/spec.py and docs/sweeps.md."""


SSP_DESCRIPTION = """Write a mechanism's closed loop as an SSP 1.0 file (SystemStructure.ssd, one .ssv parameter set
per component, the FMUs in resources/): a reference model (the mechanism FMU in programmed mode) gives joint
references and required drives to the PD controller FMU, which drives the same FMU as the plant (torque mode).
For the crane, the quick start's loop (python -m fmu_mb.demo): the excitation FMU adds paper 001's column pulse.
The FMUs are built for it (native, Integer options: libcosim reads no FMI 2.0 Enumeration).

    fmu-mb ssp                                      # dist/ssp/crane_closed_loop.ssp, the quick start's loop
    fmu-mb ssp crane --set model.n_div=8 --out crane8.ssp
    fmu-mb ssp three_loop --omega 20                # another mechanism with a programmed mode
    fmu-mb ssp path/to/my_arm.py                    # your model file (with OPTIONS["mode"])

FMPy and libcosim run it to the same result as the Python master (fmu_mb.system.run; docs/systems.md)."""


def parser() -> argparse.ArgumentParser:
    from . import registry
    from .runs import MAX_PLOTS
    from .scenarios import SCENARIOS

    ap = argparse.ArgumentParser(prog=PROG, description="fmu_mb: multibody mechanisms as FMUs (FMI 2.0 and 3.0, "
                                 "co-simulation and Model Exchange) — build, inspect, simulate, linearize and "
                                 "benchmark them, run the papers' scenarios.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    models = registry.available()
    b = sub.add_parser("build", help="build the FMUs of models/ (and the PD controller)",
                       description=BUILD_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("models", nargs="*", metavar="MODEL",
                   help=f"model to build: a name in models/ (default: all of them: {', '.join(models)}), the path "
                        "of a model file (my_arm.py, docs/mechanisms.md), a URDF file (robot.urdf) or a MuJoCo MJCF file "
                        "(robot.xml)")
    b.add_argument("--base", choices=("fixed", "free", "sprung"),
                   help="URDF files: the root link welded to the ground (default), on a free 6-DOF base joint, or on "
                        "that joint with four spring-damping supports")
    b.add_argument("--name", help="URDF and MJCF files: the model's name (default: the robot's name in the file)")
    b.add_argument("--flexible", action="append", metavar="LINK=SPEC",
                   help="URDF and MJCF files: make a link an RFEM beam from its frame to its child joint (repeatable). "
                        "SPEC: "
                        "a material (aluminium, steel) or E=,G= (Pa); a section tube=DxT, rod=D, rect=BxH (m) or "
                        "area=,Iy=,Iz=,J= (m², m⁴); optional n_div= (sections, default 6), damping= (s), density= "
                        "(kg/m³; default: the URDF mass spread along the beam), end=JOINT. Example: "
                        "forearm_link=aluminium,tube=0.08x0.004,n_div=8")
    b.add_argument("--passive", action="append", metavar="JOINT[,JOINT]",
                   help="URDF and MJCF files: moving joints without a drive input (default: every moving joint of a "
                        "URDF, every joint with an actuator of an MJCF file is driven)")
    b.add_argument("--support-stiffness", metavar="KX,KY,KZ",
                   help="URDF files, --base sprung: stiffness of each support along world x, y, z, N/m (default "
                        "1e6,1e6,1e6)")
    b.add_argument("--support-damping", metavar="DX,DY,DZ",
                   help="URDF files, --base sprung: damping of each support, N·s/m (default 1e3,1e3,1e3)")
    b.add_argument("--support-points", action="append", metavar="X,Y,Z",
                   help="URDF files, --base sprung: a support point in the root-link frame, m (repeatable; default "
                        "the corners of a 0.4 m square at z = 0)")
    b.add_argument("--strict", action="store_true",
                   help="URDF and MJCF files: refuse a link whose inertia is not physical instead of repairing it to "
                        "the nearest physical one with a warning (docs/mechanisms.md, what is repaired, what is refused)")
    b.add_argument("--model", "--model-file", action="append", dest="model", metavar="MODEL",
                   help="the same, as an option (repeatable)")
    b.add_argument("--out", default="dist", help="output directory (default: dist)")
    b.add_argument("--no-controller", action="store_true", help="do not build the signal blocks (the PD controller "
                   "and the excitation FMU)")
    b.add_argument("--demo", action="store_true",
                   help="the quick start's first run: build the crane demo's FMUs first, then run the demo "
                        "(python -m fmu_mb.demo) on one core while the rest builds on the other")
    b.add_argument("--kind", choices=("python", "native", "both"), default="python",
                   help="python: FMUs whose mechanism the model file's Python builds at run time, any option "
                        "value (default); native: FMUs carrying the compiled mechanisms, no Python on the host, "
                        "into OUT/native/ (fmu_mb.fmi.native_fmu); both")
    b.add_argument("--target", nargs="+", choices=("linux64", "win64", "linux-aarch64"), metavar="PLATFORM",
                   help="platforms of the native FMUs: linux64, win64, linux-aarch64 (default: linux64, and win64 "
                        "where mingw-w64 is installed). FMI 2.0 has no AArch64 folder: its importers load "
                        "binaries/linux64 there, so linux-aarch64 FMUs (gcc-aarch64-linux-gnu) go to "
                        "OUT/native-aarch64/ without linux64")
    b.add_argument("--fmi", nargs="+", type=int, choices=(2, 3), default=[2], metavar="VERSION",
                   help="FMI versions of the native FMUs: 2 (default; OUT/native/), 3 (FMI 3.0, co-simulation and "
                        "Model Exchange, every platform in one FMU: OUT/fmi3/), or 2 3 (both, compiled once); Python "
                        "FMUs and the PD controller are FMI 2.0")
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
    b.add_argument("--dynamics", action="store_true",
                   help="also output the mass matrix M(q), the bias forces C(q, q̇)q̇ + g(q) and the gravity forces "
                        "g(q) at the driven coordinates (dynamics.M[i,j], dynamics.tau_bias[i], dynamics.tau_gravity[i], "
                        "in the order of the tau_drive inputs): for computed-torque control. Mechanisms without "
                        "kinematic loops or nonholonomic constraints; name them")
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
    r.add_argument("--model", metavar="MODEL", help="the run's model: a name in models/, a model file (.py), a URDF "
                   "or MJCF file or an FMU, which carries its model file (default: the FMU its sidecar names, else the "
                   "sidecar's model name, else recognised from its columns)")
    r.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="a model option for drawing, e.g. link=flexible (default: the run's model.* values)")
    r.add_argument("--run", metavar="KEY", help="for a study: the run to animate (default: the first finished)")
    r.add_argument("--deflection-scale", type=_positive("--deflection-scale"), metavar="X",
                   help="magnify flexible links' deflection by X (default: automatic power of ten)")
    r.add_argument("--frames", type=int, default=150, metavar="N", help="animation frames (default: 150)")
    r.set_defaults(func=_report, parser=r)

    n = sub.add_parser("linearize", help="linear model (A, B, C, D) and modes of a mechanism at an operating point",
                       description=LINEARIZE_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    n.add_argument("model", metavar="MODEL", help=f"a model name ({', '.join(models)}), a model file (.py) or a "
                   "Python FMU (its model file)")
    n.add_argument("--set", nargs="+", action="extend", default=[], metavar="OPTION=VALUE",
                   help="a model option, e.g. link=flexible n_div=10 (repeatable; default: the model's defaults)")
    n.add_argument("--at", default="equilibrium", metavar="POINT",
                   help="operating point: equilibrium (static, drive inputs at the holding torques; default), start "
                        "(the FMU's start) or a time in s (the state a run from the start reaches, drive held)")
    n.add_argument("--along", metavar="T0:T1:DT",
                   help="a linear time-varying model instead: the linear models along one run from the start at t = "
                        "T0, T0 + DT, ... T1 s (drive held; with --dt, the step maps of DT-long steps); --out "
                        "writes them stacked (.mat: n×n×N arrays)")
    n.add_argument("--drive", nargs="+", action="extend", default=[], metavar="INPUT=VALUE",
                   help="drive input values at the operating point, e.g. column.tau_drive=-40 (N·m or N; at "
                        "equilibrium added to the holding torques)")
    n.add_argument("--inputs", metavar="NAME,...", help="drive inputs of the model (default: all)")
    n.add_argument("--outputs", metavar="NAME,...", help="Real outputs of the model (default: the actuated joints' q "
                   "and qd)")
    n.add_argument("--dt", type=_positive("--dt"), metavar="S", help="sample time of a discrete-time model: the "
                   "co-simulation step map (default: continuous time)")
    n.add_argument("--method", metavar="NAME", help="integrator of the step map (default: the FMU's)")
    n.add_argument("--step", type=_positive("--step"), metavar="S", help="its internal step, s (default: the FMU's)")
    n.add_argument("--modes", type=int, default=12, metavar="N", help="modes to list (default 12)")
    n.add_argument("--out", metavar="FILE", help="write the model: .mat (MATLAB ss data, names, units) or .npz")
    n.add_argument("--report", metavar="PAGE", help="write an HTML page: the modes animated in the 3D view, the pole "
                   "map and Bode plots from the inputs to the outputs (fmu_mb.report.modes)")
    n.set_defaults(func=_linearize, parser=n)

    from .rtbench import ME_SOLVERS       # (standard library only: cheap at start-up)
    t = sub.add_parser("rt-bench", help="step a native FMU at a fixed rate as a HIL rig does: step-time "
                       "distribution and overruns", description=RT_BENCH_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("fmu", metavar="FMU", help="a native FMU, FMI 2.0 or 3.0 (fmu-mb build MODEL --kind native "
                   "[--fmi 3])")
    t.add_argument("--rate", type=float, default=1000.0, metavar="HZ",
                   help="steps per second; the communication step is 1/HZ (default 1000: 1 ms steps); 0: back to "
                        "back, 1 ms steps or --step (the step-time distribution without waiting)")
    t.add_argument("--step", type=_positive("--step"), metavar="S",
                   help="with --rate 0: the communication step, s (default 0.001; e.g. 0.01 for a master's 10 ms "
                        "steps)")
    t.add_argument("--steps", type=int, default=100_000, metavar="N", help="steps to time (default 100000: 100 s at "
                   "1 kHz; the README table uses 1000000)")
    t.add_argument("--cpu", type=int, metavar="N", help="the CPU to pin the loop to (default: the last one)")
    t.add_argument("--set", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="start values of parameters and inputs, e.g. model.link=flexible (inputs not in --vary "
                        "are held)")
    t.add_argument("--vary", nargs="+", action="extend", default=[], metavar="NAME=AMPLITUDE",
                   help="Real inputs written before every step, as a rig's controller writes them: start value + "
                        "AMPLITUDE·sin(2π·t), t in s (the write is timed with the step; a changing input defeats "
                        "the reuse of an RK4 step's first derivative, which held inputs allow)")
    t.add_argument("--me", choices=list(ME_SOLVERS), metavar="SOLVER",
                   help="integrate the FMU's Model Exchange interface instead, as a rig that imports an ME FMU does: "
                        "with its fixed-step solver, euler (Simulink's ode1) or rk4 (ode4), one step per period; each "
                        "stage sets the time and states and gets the derivatives, a step ends with "
                        "CompletedIntegratorStep and the outputs read")
    t.add_argument("--baseline", action="store_true",
                   help="then run the same loop with each step a fixed computation of the FMU's median step time "
                        "(no FMU): the worst / median the machine itself adds to a step that never varies")
    t.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    t.set_defaults(func=_rt_bench, parser=t)

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

    k = sub.add_parser("compile", help="compile the kernels now (numba's JIT cache, the native kernel library), "
                       "not at the first simulate, build or linearize", description=COMPILE_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    k.add_argument("parts", nargs="*", metavar="PART",
                   help="simulation, linearization, native (default: all three)")
    k.set_defaults(func=_compile, parser=k)

    p = sub.add_parser("ssp", help="a mechanism's closed loop (reference model, PD controller, plant) as an SSP "
                       "file for FMPy, OSP libcosim and other SSP tools", description=SSP_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", default="crane", metavar="MODEL",
                   help="a mechanism with a programmed mode: a name in models/ (default: crane, the quick start's "
                        "loop) or a model file")
    p.add_argument("--set", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
                   help="the plant's parameter values, e.g. model.friction=lugre model.n_div=8 (default for the "
                        "crane: flexible jib, LuGre; model.mode is torque)")
    p.add_argument("--step", type=_positive("--step"), metavar="S",
                   help="the exchange step, s (default: crane 0.00025, others 0.001)")
    p.add_argument("--stop-time", type=_positive("--stop-time"), metavar="S", help="the default experiment's end, s "
                   "(default 5)")
    p.add_argument("--omega", type=_positive("--omega"), metavar="RAD_S", help="the PD law's natural frequency "
                   "(Kp = ω² M_jj, Kd = 2ω M_jj; default: crane 6, others 10)")
    p.add_argument("--target", nargs="+", metavar="PLATFORM", help="platforms of the FMUs' binaries (default: "
                   "linux64, and win64 where mingw-w64 is installed)")
    p.add_argument("--out", metavar="FILE", help="the .ssp to write (default: dist/ssp/<model>_closed_loop.ssp)")
    p.set_defaults(func=_ssp, parser=p)
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
