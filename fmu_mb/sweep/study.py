"""Run a study on Dask: every run in a worker process, results as one tidy table.

Layout of the output folder::

    series.png                 with plot.series = [variables]: each variable over time, one line per run

    table.parquet, table.csv   one row per run: key, status, message, t_end (s), wall (s), the start
                               values of the run (one column per name), the metrics
    runs/<key>.parquet         the run's trajectories (time and the recorded outputs)
    runs/<key>.json            the run's row (a re-run skips every run whose row exists)
    summary.png                each metric over the runs (failed runs marked)
    study.json                 the model, title, metrics and series (for ``fmu-mb report <folder>``)

Scheduling. Without a scheduler address a ``dask.distributed.LocalCluster`` with one single-threaded
worker process per core runs the study; with ``scheduler="tcp://host:port"`` (or a ``Client``) the
same study runs on that cluster unchanged: the FMU travels to the workers as bytes (scattered once)
and the task function by value (fmu_mb.sweep.worker), so workers need Python with numpy and FMPy,
not this checkout. A failed run is a row with its FMI status and the FMU's message; a worker that
dies is recorded as status "crashed". The study never stops for a run.
"""
from __future__ import annotations

import json
import logging
import math
import os
import types
from pathlib import Path

import numpy as np

from .spec import Study, StudyError, fmu_digest, metric_value, parse_metric, run_key

FINISHED_OK = ("ok", "warning")


def resolve_fmu(target: str, log=print) -> Path:
    """An FMU file, or the cached FMU of a model in models/ (built once, fmu_mb.fmu_cache)."""
    path = Path(target)
    if path.is_file():
        return path
    from .. import registry
    if not path.suffix and target in registry.available():
        from ..fmu_cache import cached_fmu
        return cached_fmu(target, log=log)
    raise StudyError(f"fmu = {target!r}: neither an FMU file nor a model in {registry.models_dir()} "
                     f"(models: {', '.join(registry.available())})")


#: the real-valued types of FMI 2.0 and 3.0
REALS = ("Real", "Float64")


def _tasks(study: Study, md, digest: str) -> list:
    from ..fmi.arrays3 import element_names
    from ..runs import as_elements, variables as named
    variables = named(md)                          # (an FMI 3.0 array's elements by name too: E.r[2])
    exp = md.defaultExperiment
    start = float(exp.startTime) if exp is not None and exp.startTime is not None else 0.0
    stop = study.stop_time if study.stop_time is not None else \
        (float(exp.stopTime) if exp is not None and exp.stopTime is not None else start + 1.0)
    step = study.step if study.step is not None else \
        (float(exp.stepSize) if exp is not None and exp.stepSize is not None else (stop - start) / 100.0)
    if stop <= start:
        raise StudyError(f"{study.source}: stop_time {stop:g} s is not after the start time {start:g} s")
    outputs = list(study.outputs) if study.outputs is not None else \
        as_elements([v.name for v in md.modelVariables if v.causality == "output" and v.type in REALS], variables)
    for var in [v for _, v in map(parse_metric, study.metrics)] + list(study.plot.get("series", [])):
        if var not in outputs:
            outputs.append(var)
    problems = []
    for name in outputs:
        v = variables.get(name)
        if v is None or v.type not in REALS:
            problems.append(f"{name}: {'no such variable' if v is None else 'not a Real'} (outputs, metrics)")
    for var in [v for _, v in map(parse_metric, study.metrics)] + list(study.plot.get("series", [])):
        v = variables.get(var)
        if v is not None and getattr(v, "shape", None) and v.name == var:
            problems.append(f"{var}: an array of {md.modelName} (FMI 3.0); metrics and plots take one element of "
                            f"it, as {element_names(var, v.shape)[0]}")
    names = {n for r in study.runs for n in r} | set(study.inputs) | \
        {k for k in (study.input_table or {}) if k != "time"}
    for name in sorted(names):
        v = variables.get(name)
        if v is None:
            problems.append(f"{name}: no such variable")
        elif v.causality not in ("parameter", "structuralParameter", "input"):
            problems.append(f"{name}: a {v.causality}, only parameters and inputs take values")
    if problems:
        raise StudyError(f"{study.source}: {md.modelName} — " + "; ".join(problems))
    outputs = as_elements(outputs, variables)
    tasks = []
    for values in study.runs:
        key = run_key(digest, study, values)
        tasks.append({"key": key, "values": values, "inputs": study.inputs, "table": study.input_table,
                      "start": start, "stop": stop, "step": step, "outputs": outputs})
    return tasks


def _row(study: Study, task: dict, result: dict) -> dict:
    row = {"key": task["key"], "status": result["status"], "message": result["message"],
           "t_end": result["t_end"], "wall": result.get("wall", math.nan)}
    row.update(task["values"])
    outputs = result.get("outputs", {})
    for metric in study.metrics:
        stat, var = parse_metric(metric)
        y = np.asarray(outputs.get(var, []), float)
        row[metric] = metric_value(stat, y) if result["status"] in FINISHED_OK else math.nan
    return row


def _save_run(folder: Path, row: dict, result: dict) -> None:
    import pandas as pd
    frame = pd.DataFrame({"time": result["time"], **result["outputs"]})
    tmp = folder / f".{row['key']}.parquet"
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, folder / f"{row['key']}.parquet")
    tmp = folder / f".{row['key']}.json"
    tmp.write_text(json.dumps(row, default=float))
    os.replace(tmp, folder / f"{row['key']}.json")       # the row last: it marks the run finished


def _by_value(fn):
    """``fn`` as a function that pickle cannot find by name: Dask then serialises the task with
    cloudpickle, which ships fn.__module__ by value (cloudpickle.register_pickle_by_value), and the
    workers never import fmu_mb (whose core could differ from the FMU's)."""
    clone = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__qualname__ = f"{fn.__qualname__}__by_value"
    clone.__module__ = fn.__module__
    return clone


def _client(scheduler, workers):
    from dask.distributed import Client, LocalCluster
    if scheduler is None:
        n = workers or os.cpu_count() or 1
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        return Client(cluster), cluster
    if isinstance(scheduler, str):
        return Client(scheduler, timeout="30s"), None
    return scheduler, None                                 # a Client given by the caller


def run_study(study: Study, out, scheduler=None, workers: int | None = None, progress: bool = True,
              retry_failed: bool = False, reuse_instances: bool = True, log=print):
    """Run the runs of ``study`` not yet in ``out`` and return (table, number of runs executed):
    the table (pandas.DataFrame) holds every run of the study, finished before or now.
    ``reuse_instances=False`` gives every run a fresh FMU instance instead of fmi2Reset."""
    import cloudpickle
    import pandas as pd
    from fmpy import read_model_description

    from . import worker

    fmu = resolve_fmu(study.fmu, log=log)
    data = fmu.read_bytes()
    digest = fmu_digest(data)
    md = read_model_description(str(fmu))
    if not str(md.fmiVersion).startswith(("2", "3")):
        raise StudyError(f"{study.source}: {fmu} is an FMI {md.fmiVersion} FMU; sweeps run FMI 2.0 and 3.0 FMUs")
    if md.coSimulation is None:
        raise StudyError(f"{study.source}: {fmu} offers no co-simulation; sweeps step co-simulation FMUs")
    tasks = _tasks(study, md, digest)
    for t in tasks:
        t["fresh"] = not reuse_instances
    out = Path(out)
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    tasks = list({t["key"]: t for t in tasks}.values())     # a run listed twice runs once
    rows, todo = {}, []
    for task in tasks:
        f = runs / f"{task['key']}.json"
        if f.is_file():
            row = json.loads(f.read_text())
            if row["status"] in FINISHED_OK or not retry_failed:
                rows[task["key"]] = row
                continue
        todo.append(task)
    if todo:
        log(f"{md.modelName}: {len(todo)} of {len(tasks)} run(s) to do ({len(tasks) - len(todo)} finished before)")
        cloudpickle.register_pickle_by_value(worker)
        from dask.distributed import as_completed
        from tqdm import tqdm
        client, cluster = _client(scheduler, workers)
        try:
            shared = client.scatter(data, broadcast=True, hash=False)
            task_fn = _by_value(worker.run)
            futures = {client.submit(task_fn, shared, digest, t, key=f"fmu_mb-run-{t['key']}", pure=False): t
                       for t in todo}
            bar = tqdm(total=len(todo), unit="run", disable=not progress, desc=md.modelName)
            for fut in as_completed(futures):
                task = futures[fut]
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 — a dead worker (KilledWorker) or a lost task
                    result = {"status": "crashed", "message": f"{type(exc).__name__}: {exc}",
                              "t_end": task["start"], "time": np.zeros(0), "outputs": {}}
                row = _row(study, task, result)
                _save_run(runs, row, result)
                rows[task["key"]] = row
                bar.update(1)
                if row["status"] not in FINISHED_OK:
                    bar.write(f"run {row['key']} {row['status']} at t = {row['t_end']:g} s: {row['message']}")
            bar.close()
        finally:
            if cluster is not None:
                client.close()
                cluster.close()
            elif isinstance(scheduler, str):
                client.close()
    table = pd.DataFrame([rows[t["key"]] for t in tasks])
    table.to_parquet(out / "table.parquet", index=False)
    (out / "study.json").write_text(json.dumps({         # what fmu-mb report needs beyond the table
        "model": md.modelName, "fmu": str(Path(study.fmu).resolve()), "title": study.title, "source": str(study.source),
        "metrics": list(study.metrics), "series": list(study.plot.get("series", [])),
        "x": study.plot.get("x"), "varied": study.varied()}, indent=1))
    table.to_csv(out / "table.csv", index=False)
    if study.metrics:
        summary_plot(table, study, out / "summary.png")
    if study.plot.get("series"):
        series_plot(table, study, runs, out / "series.png")
    failed = int((~table["status"].isin(FINISHED_OK)).sum())
    log(f"{md.modelName}: {len(tasks)} run(s), {failed} failed; table {out / 'table.parquet'}")
    return table, len(todo)


def summary_plot(table, study: Study, path: Path) -> None:
    """One panel per metric (at most 6): its value per run against plot.x (default: the first varied
    start value, else the run number); failed runs as red crosses at the bottom."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = study.metrics[:6]
    varied = study.varied()
    xname = study.plot.get("x") or (varied[0] if varied else None)
    numeric = xname is not None and xname in table and \
        np.issubdtype(np.asarray(table[xname].dropna()).dtype, np.number)
    x = np.asarray(table[xname], float) if numeric else np.arange(len(table), dtype=float)
    ok = table["status"].isin(FINISHED_OK).to_numpy()
    others = [v for v in varied if v != xname]
    label = table[others].apply(lambda r: ", ".join(map(str, r)), axis=1) if others else None
    fig, axes = plt.subplots(len(metrics), 1, figsize=(7, 2.4 * len(metrics)), squeeze=False, sharex=True)
    for ax, metric in zip(axes[:, 0], metrics):
        y = np.asarray(table[metric], float)
        if label is not None:
            for text in dict.fromkeys(label[ok]):
                sel = ok & (label == text).to_numpy()
                order = np.argsort(x[sel])
                ax.plot(x[sel][order], y[sel][order], "o-", ms=4, label=f"{', '.join(others)} = {text}")
        else:
            order = np.argsort(x[ok])
            ax.plot(x[ok][order], y[ok][order], "o-", ms=4)
        if (~ok).any():
            lo = np.nanmin(y[ok]) if ok.any() else 0.0
            ax.plot(x[~ok], np.full((~ok).sum(), lo), "rx", ms=8, label="failed run")
        ax.set_ylabel(metric, fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_title(f"{study.title}: {len(table)} runs, {(~ok).sum()} failed", fontsize=10)
    if label is not None or (~ok).any():
        axes[0, 0].legend(fontsize=7)
    axes[-1, 0].set_xlabel(xname if numeric else "run")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def series_plot(table, study: Study, runs: Path, path: Path) -> None:
    """The variables of plot.series over time, one panel each, one line per finished run labelled
    with its varied start values (the papers' comparison figures)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    names = list(study.plot["series"])[:9]
    varied = study.varied()
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.4 * len(names)), squeeze=False, sharex=True)
    for _, row in table.iterrows():
        if row["status"] not in FINISHED_OK:
            continue
        frame = pd.read_parquet(runs / f"{row['key']}.parquet")
        label = ", ".join(f"{v} = {row[v]:g}" if isinstance(row[v], float) else f"{v} = {row[v]}" for v in varied)
        for ax, name in zip(axes[:, 0], names):
            if name in frame:
                ax.plot(frame["time"], frame[name], label=label or row["key"])
    for ax, name in zip(axes[:, 0], names):
        ax.set_ylabel(name, fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    axes[0, 0].set_title(study.title, fontsize=10)
    axes[-1, 0].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
