"""``fmu-mb report``: one self-contained HTML page per run or study, with the mechanism animated in 3D.

    from fmu_mb.report import write_report
    write_report("results/demo/crane_closed_loop.csv")           # -> results/demo/crane_closed_loop.html
    write_report("results/studies/crane_support_stiffness")      # a study folder -> .../report.html

A run's page: what ran (model, options, status), the animation of the mechanism (links as sticks,
flexible links bent, named points with their traces, supports, the programmed path; play/pause and a
time slider; fmu_mb.report.scene says how a flexible link's shape is drawn from its tip deflection),
then plots of its outputs by kind (joint states, drives, friction, reactions, violations, energy).
A study's page: its runs' table, each metric against the varied parameters, and the page of one run.
Pages embed plotly.js (about 4.6 MB) and need no network.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from .runs import ReportError, Run, build_model, guess_model, load_run, load_study, model_name, model_options

__all__ = ["write_report", "ReportError", "load_run", "load_study", "guess_model"]

MAX_FRAMES = 150


def _frame_rows(times: np.ndarray, max_frames: int) -> np.ndarray:
    """Rows of the animation: evenly spaced in time, at most max_frames, first and last included."""
    n = len(times)
    if n <= max_frames:
        return np.arange(n)
    targets = np.linspace(times[0], times[-1], max_frames)
    return np.unique(np.clip(np.searchsorted(times, targets), 0, n - 1))


def _auto_scale(table, beams: list, lengths: dict) -> float:
    """1, or the power of ten that draws the largest tip deflection at about 5 % of its link's length."""
    scale = 1.0
    for b in beams:
        cols = [f"{b}.deflection[{k}]" for k in (1, 2, 3) if f"{b}.deflection[{k}]" in table]
        if not cols:
            continue
        peak = float(np.nanmax(np.abs(table[cols].to_numpy(float)))) if len(table) else 0.0
        if peak > 0.0:
            scale = max(scale, 10.0 ** math.floor(math.log10(0.05 * lengths[b] / peak)))
    return scale


def _animation(run: Run, options: dict, deflection_scale, max_frames: int, paths=None):
    """(figure or None, note) of the run's mechanism."""
    from .figures import animation_figure
    from .scene import build_frames
    if run.model is None:
        return None, ("no animation: the run's model is unknown (its sidecar .json names no FMU or model that is "
                      "still there, and its joint coordinates match no model in models/); name it with --model "
                      "(a model name, a model file, a robot file or the FMU)")
    if not any(re.search(r"\.q(\[\d+\])?$", c) for c in run.table.columns):
        return None, "no animation: the run has no joint coordinates (<joint>.q outputs)"
    try:
        mech = build_model(run.model, **options)
    except (ValueError, TypeError) as exc:              # a model file's own validation message
        raise ReportError(f"{model_name(run.model)} cannot be built with {options or 'its defaults'}: {exc}") from None
    beams = [lk.name for lk in mech.links if getattr(lk, "flexible", False)]
    lengths = {lk.name: lk.length for lk in mech.links if hasattr(lk, "length")}
    scale = _auto_scale(run.table, beams, lengths) if deflection_scale is None else float(deflection_scale)
    times = run.table["time"].to_numpy(float)
    rows = _frame_rows(times, max_frames)
    frames = build_frames(run.model, options, run.table, rows, scale, run.values, paths)
    note = (f"{len(rows)} frames over {times[0]:g}–{times[-1]:g} s. Links are drawn as sticks between their "
            "joints, points and tips from the joint coordinates the run recorded.")
    if beams:
        note += (f" Flexible links ({', '.join(beams)}) are drawn through their recorded tip deflection with the "
                 f"static cantilever shape, deflection magnified ×{scale:g}.")
    if frames.paths or frames.moving_paths:
        note += " Dashed: " + ", ".join(list(frames.moving_paths) + list(frames.paths)) + "."
    return animation_figure(frames, f"{model_name(run.model)}: mechanism"), note


def _run_sections(run: Run, options: dict, deflection_scale, max_frames: int, paths=None) -> list:
    from .figures import time_figures
    fig, note = _animation(run, options, deflection_scale, max_frames, paths)
    sections = [("Mechanism", [fig] if fig is not None else [], note)]
    figs = time_figures(run.table)
    sections.append(("Outputs", figs, None if figs else "the run has no outputs the report plots"))
    return sections


def _run_meta(run: Run, options: dict) -> list:
    t = run.table["time"]
    shown = run.model if model_name(run.model) == run.model else f"{model_name(run.model)} (model file {run.model})"
    meta = [("run", str(run.source)), ("model", shown or "unknown"),
            ("options", ", ".join(f"{k} = {v}" for k, v in options.items()) or "the model's defaults"),
            ("time", f"{t.iloc[0]:g} … {t.iloc[-1]:g} s, {len(t)} samples")]
    if run.status:
        meta.append(("status", run.status))
    if run.message:
        meta.append(("message", run.message))
    changed = {k: v for k, v in run.values.items() if not k.startswith("model.")}
    if changed:
        meta.append(("start values", ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                                                for k, v in changed.items())))
    return meta


def write_report(source, out=None, *, model: str | None = None, options: dict | None = None,
                 run: str | None = None, deflection_scale: float | None = None,
                 max_frames: int = MAX_FRAMES, paths: dict | None = None) -> Path:
    """Write the HTML report of a run file (CSV/parquet) or a study folder and return its path.

    model: a models/ name, a model file, a URDF file or an FMU (default: the FMU the sidecar names, else
    its model name, else recognised from the columns; fmu_mb.report.runs.resolve_model); options:
    model options (NAME → value) over the run's ``model.*`` start values; run: for a study, the key
    of the run to animate (default: the first that finished); deflection_scale: magnification of
    flexible links' deflection (default: automatic, a power of ten, stated on the page); paths: more
    curves to draw in the animation, {name: (n, 3) world points}."""
    from .. import __version__
    from .figures import study_figures
    from .page import render
    source = Path(source)
    if max_frames < 2:
        raise ReportError(f"max_frames must be at least 2, got {max_frames}")
    if source.is_dir():
        study = load_study(source)
        table = study.table
        done = table[table["status"].isin(["ok", "warning"])] if "status" in table else table
        key = run or (str(done["key"].iloc[0]) if len(done) else None)
        if key is not None and key not in set(table["key"].astype(str)):
            raise ReportError(f"{source}: no run {key!r} (runs: {', '.join(table['key'].astype(str)[:5])}, ...)")
        sections = [("Runs", [table.to_html(index=False, classes="runs", float_format=lambda x: f"{x:.6g}",
                                            border=0)], f"{len(table)} runs, {len(done)} finished")]
        figs = study_figures(study)
        if figs:
            sections.append(("Metrics", figs, None))
        if key is not None:
            r = load_run(source / "runs" / f"{key}.parquet", model or study.model)
            opts = model_options(r.model, r.values, options) if r.model else {}
            sections += [(f"Run {key}: {h}", items, note)
                         for h, items, note in _run_sections(r, opts, deflection_scale, max_frames)]
        meta = [("study", str(source)), ("model", model_name(study.model) or "unknown"), ("fmu_mb", __version__)]
        return render(f"Study: {study.title}", meta, sections, Path(out) if out else source / "report.html")
    r = load_run(source, model)
    opts = model_options(r.model, r.values, options) if r.model else {}
    if options and not r.model:
        raise ReportError("options given but the run's model is unknown: name it with --model")
    sections = _run_sections(r, opts, deflection_scale, max_frames, paths)
    meta = _run_meta(r, opts) + [("fmu_mb", __version__)]
    return render(f"Run: {r.name}" + (f" ({model_name(r.model)})" if r.model else ""), meta, sections,
                  Path(out) if out else source.with_suffix(".html"))
