"""The one build front of ``fmu-mb build`` and ``build_fmus.py``: models (names, model files, URDF files) into
FMUs of either kind (Python FMUs, fmu_mb.fmi.builder; native FMUs, fmu_mb.fmi.native_fmu; both on the FMU
core, fmu_mb.fmi.binary), the signal blocks (the PD controller and the excitation, fmu_mb.fmi.block_fmu), and
each FMU's cross-check folder (fmu_mb.crosscheck)."""
from __future__ import annotations

import time
from pathlib import Path

from .errors import UserError, one_line

KINDS = ("python", "native", "both")


def urdf_model(path: str, out, base: str = "fixed", name: str | None = None, flexible=(), passive=(),
               support_stiffness: str | None = None, support_damping: str | None = None, support_points=(),
               strict: bool = False, log=print) -> str:
    """Write the model file of a URDF or MJCF file (OUT/models/<name>.py, fmu_mb.interop.urdf) and return its
    path."""
    from .interop.urdf import UrdfError, vector3, write_model
    try:
        robot = dict(passive=[p.strip() for item in passive for p in item.split(",") if p.strip()],
                     flexible=list(flexible))
        if support_stiffness:
            robot["support_stiffness"] = vector3(support_stiffness, "--support-stiffness")
        if support_damping:
            robot["support_damping"] = vector3(support_damping, "--support-damping")
        if support_points:
            robot["support_points"] = [vector3(p, "--support-points") for item in support_points for p in item.split()]
        target, warnings = write_model(path, Path(out) / "models", base=base, name=name, strict=strict, **robot)
    except UrdfError as exc:
        raise UserError(str(exc), 2) from None
    for w in warnings:
        log(f"{path}: {w}")
    log(f"{path}: model file {target} (edit it and build it again with: fmu-mb build {target})")
    return str(target)


def build(models, out, kind: str = "python", targets=None, options: dict | None = None, controller: bool = True,
          enumerations: bool = True, cross_check: Path | None = None, dynamics: bool = False, fmi=(2,),
          log=print) -> int:
    """Build the FMUs of ``models`` (names or model files) into ``out`` (native FMUs into OUT/native/, AArch64
    ones into OUT/native-aarch64/, FMI 3.0 ones, every platform in one FMU, into OUT/fmi3/), the signal blocks
    (the PD controller and the excitation) unless ``controller`` is false, and the cross-check folder of every
    Python FMU (and both folders, co-simulation and Model Exchange, of every FMI 3.0 FMU) into ``cross_check``
    (None: none); every result logged; ``dynamics``: every model's FMUs with the dynamics outputs (mass matrix, bias and
    gravity forces); ``fmi``: the FMI versions of the native FMUs (Python FMUs and the signal blocks are FMI 2.0).
    Returns the number of FMUs FMPy's validation found problems in."""
    from .fmi import builder, controller as pd
    from .fmi.excitation import build_excitation_fmu
    t0 = time.perf_counter()
    results = []
    try:
        if kind in ("python", "both"):
            results += [builder.build_fmu(m, out, enumerations=enumerations, dynamics=dynamics) for m in models]
        if kind in ("native", "both"):
            from .fmi.native_fmu import available_targets, build_native_fmus, check_targets
            chosen = check_targets(targets or available_targets()) if 2 in fmi else available_targets()
            where = Path(out) / ("native-aarch64" if "linux-aarch64" in chosen else "native")
            outs = {v: where if v == 2 else Path(out) / "fmi3" for v in sorted(set(fmi))}
        if controller and kind == "native":     # no Python in them: OUT/ (AArch64: with its native FMUs)
            results.append(pd.build_controller_fmu(where if "linux-aarch64" in chosen else out, targets=chosen))
            results.append(build_excitation_fmu(where if "linux-aarch64" in chosen else out, targets=chosen))
        elif controller:
            results.append(pd.build_controller_fmu(out))
            results.append(build_excitation_fmu(out))
        if kind in ("native", "both"):
            for v, folder in outs.items():
                shown = chosen if v == 2 else check_targets(targets or available_targets(3), 3)
                log(f"native FMI {v}.0 FMUs for {', '.join(shown)} into {folder}"
                    + ("" if targets or "win64" in shown else " (win64: install mingw-w64, Debian gcc-mingw-w64-x86-64)"))
            for m in models:
                built = build_native_fmus(m, outs, targets, enumerations=enumerations, options=options,
                                          dynamics=dynamics, log=log)
                results += [built[v] for v in outs]
    except (ValueError, RuntimeError, OSError, KeyError) as exc:
        raise UserError(f"build failed: {one_line(exc.args[0] if isinstance(exc, KeyError) else exc)}", 1) from None
    failed = 0
    for r in results:
        status = "valid" if not r.problems else f"{len(r.problems)} PROBLEM(S)"
        log(f"{r.path}  {r.size / 1024:.0f} KiB  {r.n_vars} variables  {r.seconds:.1f} s  {status}  (interface: {r.doc})")
        for p in r.problems:
            log(f"    {p}")
        failed += bool(r.problems)
    log(f"built {len(results)} FMU(s) in {time.perf_counter() - t0:.1f} s")
    python_fmus = [r for r in results
                   if r.path.parent not in (Path(out) / "native", Path(out) / "native-aarch64", Path(out) / "fmi3")]
    fmi3_fmus = [r for r in results if r.path.parent == Path(out) / "fmi3"]
    if cross_check is not None and (python_fmus or fmi3_fmus):
        from .crosscheck import write_folders         # (the native FMUs answer the same: tests/fmi/test_native_fmu.py)
        try:
            write_folders(python_fmus, cross_check, log)
            write_folders(fmi3_fmus, cross_check, log, fmi_types=("cs", "me"))      # fmus/3.0/cs|me/x86_64-linux
        except (ValueError, RuntimeError, OSError) as exc:
            raise UserError(one_line(exc), 1) from None
    return failed


def demo_first(models, out, kind: str = "both", targets=None, options: dict | None = None, enumerations: bool = True,
               cross_check: Path | None = None, dynamics: bool = False, fmi=(2,), log=print) -> int:
    """``fmu-mb build --demo`` (the quick start's first run): the demo's FMUs first (crane.fmu, a Python FMU, and
    the signal blocks pd_controller.fmu and excitation.fmu; the kernel library compiles with them), then the
    closed-loop demo (fmu_mb.demo) in its own process while the rest of the build goes on at a lower priority (nice 5: on a
    2-core machine the demo keeps a core); the demo's lines are printed as they come, prefixed "demo:".
    Builds what :func:`build` would. Returns the number of FMUs with problems, plus one if the demo failed."""
    import os
    import subprocess
    import sys
    import threading
    rest = [m for m in models if m != "crane"]
    after = [f"Python FMUs of {', '.join(map(str, rest))}"] if rest else []
    if kind in ("native", "both"):
        from .fmi.native_fmu import available_targets, check_targets
        chosen = check_targets(targets or available_targets())
        after.append(f"native FMUs of {', '.join(map(str, models))} for {', '.join(chosen)}")
    log("first run: the Python FMU of crane, the PD controller and the excitation first (the demo's), then the demo"
        + (f", while {' and '.join(after)} build" if after else ""))
    failed = build(["crane"], out, "python", enumerations=enumerations, cross_check=cross_check, dynamics=dynamics,
                   log=log)
    if failed:
        return failed
    log("the demo's FMUs are built: running python -m fmu_mb.demo while the other FMUs build")
    from .sources import importable_env
    demo = subprocess.Popen([sys.executable, "-m", "fmu_mb.demo", "--fmus", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=importable_env())

    def relay():
        for line in demo.stdout:
            log("demo: " + line.rstrip())
    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    if hasattr(os, "nice"):         # the rest builds behind the demo (its kernel workers inherit this)
        try:
            os.nice(5)
        except OSError:
            pass
    try:
        if rest:
            failed += build(rest, out, "python", controller=False, enumerations=enumerations, cross_check=cross_check,
                            dynamics=dynamics, log=log)
        if kind in ("native", "both"):
            failed += build(models, out, "native", targets, options, controller=False, enumerations=enumerations,
                            dynamics=dynamics, fmi=fmi, log=log)
    finally:
        demo.wait()
        reader.join()
    if demo.returncode != 0:
        log(f"the demo failed (exit status {demo.returncode}): its output is above")
        failed += 1
    return failed
