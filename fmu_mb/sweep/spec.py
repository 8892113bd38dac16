"""A study: which FMU, which runs, what to record — read from a TOML file or built in Python.

A study file (TOML, read with the standard library's ``tomllib``)::

    fmu = "five_axis"             # FMU file (relative to this file) or a model of models/ (built once)
    stop_time = 1.0               # s (default: the FMU's DefaultExperiment)
    step = 0.01                   # communication step = output interval, s
    outputs = ["joint1.q", "joint1.tau_friction"]      # trajectories kept per run (default: every output)
    metrics = ["max_abs(joint1.q)", "final(joint1.q)"] # summary columns: stat(variable), see STATS

    [parameters]                  # start values of every run (parameters or inputs)
    "solver.integrator" = 1

    [grid]                        # full factorial over these lists
    "model.friction" = [0, 1, 2]
    "gravity[3]" = [-9.81, -1.62]

    [[runs]]                      # and/or explicit runs
    "model.friction" = 2

    [random]                      # and/or random samples (numpy's default_rng(seed))
    n = 8
    seed = 1
    "joint1.tau_drive" = { uniform = [-1.0, 1.0] }     # or { normal = [mean, std] }, { choice = [...] }

    [plot]
    x = "gravity[3]"              # summary.png: metrics against this start value (default: the first varied)
    series = ["joint1.q"]         # series.png: these variables over time, one line per run

    [inputs]                      # constant inputs (start values do the same), or:
    # inputs_csv = "drive.csv"    # a 'time' column and one column per input (linear interpolation)

Runs are the grid's, then the list's, then the random samples, each over [parameters]. Each run has
a key: a digest of the FMU's bytes and everything that defines the run (start values, inputs, times,
outputs), so a re-run of a study recognises finished runs whatever their order in the file.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: summary statistics a metric may name, over the recorded samples of one variable
STATS = ("final", "max", "min", "max_abs", "mean", "rms")
_METRIC = re.compile(r"^\s*(" + "|".join(STATS) + r")\(\s*([^()]+?)\s*\)\s*$")
_KEYS = {"fmu", "stop_time", "step", "outputs", "metrics", "parameters", "grid", "runs", "random", "inputs",
         "inputs_csv", "plot", "title"}


class StudyError(ValueError):
    """A study that cannot run: the message names the file, the entry and what is wrong."""


@dataclass
class Study:
    """Everything a sweep needs (see the module docstring for the file form)."""
    fmu: str                                         # FMU path or model name
    runs: list                                       # one dict of start values per run
    stop_time: float | None = None
    step: float | None = None
    outputs: list | None = None                      # None: every output of the FMU
    metrics: list = field(default_factory=list)
    inputs: dict = field(default_factory=dict)       # constant inputs
    input_table: dict | None = None                  # {'time': array, name: array, ...}
    title: str = "study"
    plot: dict = field(default_factory=dict)         # {'x': start value, 'series': [variables]}
    source: str = "<python>"

    def varied(self) -> list:
        """Names whose value differs between runs, in first-seen order."""
        names = list(dict.fromkeys(k for r in self.runs for k in r))
        return [n for n in names if len({json.dumps(r.get(n)) for r in self.runs}) > 1]


def parse_metric(text: str) -> tuple[str, str]:
    """'max_abs(joint1.q)' -> ('max_abs', 'joint1.q')."""
    m = _METRIC.match(text)
    if not m:
        raise StudyError(f"metric {text!r} is not stat(variable) with stat one of {', '.join(STATS)}")
    return m.group(1), m.group(2)


def metric_value(stat: str, y: np.ndarray) -> float:
    """The statistic ``stat`` of the samples y (NaN if there are none)."""
    if y.size == 0:
        return math.nan
    if stat == "final":
        return float(y[-1])
    if stat == "max":
        return float(np.max(y))
    if stat == "min":
        return float(np.min(y))
    if stat == "max_abs":
        return float(np.max(np.abs(y)))
    if stat == "mean":
        return float(np.mean(y))
    return float(np.sqrt(np.mean(np.square(y))))


def _number(where: str, value, positive=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (positive and value <= 0):
        raise StudyError(f"{where} must be a {'positive ' if positive else ''}finite number, got {value!r}")
    return float(value)


def _scalar(where: str, value):
    if isinstance(value, bool) or isinstance(value, int) or isinstance(value, str):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise StudyError(f"{where}: {value!r} is not a number, Boolean or string")


def _table(where: str, value) -> dict:
    if not isinstance(value, dict):
        raise StudyError(f"{where} must be a table of name = value, got {type(value).__name__}")
    return value


def _random_runs(where: str, spec: dict) -> list:
    spec = dict(_table(where, spec))
    n = spec.pop("n", None)
    seed = spec.pop("seed", 0)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise StudyError(f"{where}.n must be a positive integer (the number of samples), got {n!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise StudyError(f"{where}.seed must be an integer, got {seed!r}")
    rng = np.random.default_rng(seed)
    columns = {}
    for name, dist in spec.items():
        d = _table(f"{where}.{name!r}", dist)
        if len(d) != 1:
            raise StudyError(f"{where}.{name!r} must be one of {{uniform = [a, b]}}, {{normal = [mean, std]}}, "
                             f"{{choice = [...]}}, got {d!r}")
        (kind, args), = d.items()
        if kind == "choice":
            if not isinstance(args, list) or not args:
                raise StudyError(f"{where}.{name!r}.choice must be a non-empty list")
            idx = rng.integers(0, len(args), n)
            columns[name] = [_scalar(f"{where}.{name!r}", args[i]) for i in idx]
            continue
        if kind not in ("uniform", "normal") or not isinstance(args, list) or len(args) != 2:
            raise StudyError(f"{where}.{name!r}: {kind} = {args!r}: expected uniform = [a, b], normal = [mean, std] "
                             "or choice = [...]")
        a, b = (_number(f"{where}.{name!r}.{kind}", v) for v in args)
        if kind == "uniform" and not a < b:
            raise StudyError(f"{where}.{name!r}.uniform = [{a:g}, {b:g}] needs a < b")
        if kind == "normal" and b < 0:
            raise StudyError(f"{where}.{name!r}.normal: standard deviation {b:g} < 0")
        columns[name] = (rng.uniform(a, b, n) if kind == "uniform" else rng.normal(a, b, n)).tolist()
    return [{k: columns[k][i] for k in columns} for i in range(n)]


def study_from_dict(d: dict, source: str = "<python>", base: Path | None = None) -> Study:
    """A Study from the parsed TOML table ``d`` (paths relative to ``base``)."""
    unknown = sorted(set(d) - _KEYS)
    if unknown:
        raise StudyError(f"{source}: unknown entr{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(_KEYS))})")
    if not isinstance(d.get("fmu"), str) or not d["fmu"]:
        raise StudyError(f"{source}: 'fmu' (an FMU file or a model name) is missing")
    fmu = d["fmu"]
    if base is not None and (fmu.endswith(".fmu") or "/" in fmu) and not Path(fmu).is_absolute():
        fmu = str((base / fmu).resolve())
    fixed = {k: _scalar(f"{source}: parameters.{k}", v) for k, v in _table("parameters", d.get("parameters", {})).items()}
    grid = _table("grid", d.get("grid", {}))
    for k, v in grid.items():
        if not isinstance(v, list) or not v:
            raise StudyError(f"{source}: grid.{k!r} must be a non-empty list of values, got {v!r}")
    runs = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())] if grid else []
    listed = d.get("runs", [])
    if not isinstance(listed, list) or not all(isinstance(r, dict) for r in listed):
        raise StudyError(f"{source}: 'runs' must be an array of tables ([[runs]])")
    runs += [dict(r) for r in listed]
    if "random" in d:
        runs += _random_runs(f"{source}: random", d["random"])
    if not runs:
        runs = [{}]
    runs = [{**fixed, **{k: _scalar(f"{source}: run {i + 1}: {k}", v) for k, v in r.items()}}
            for i, r in enumerate(runs)]
    outputs = d.get("outputs")
    if outputs is not None and (not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs)):
        raise StudyError(f"{source}: 'outputs' must be a list of variable names")
    metrics = d.get("metrics", [])
    if not isinstance(metrics, list):
        raise StudyError(f"{source}: 'metrics' must be a list such as [\"max_abs(joint1.q)\"]")
    for mtr in metrics:
        try:
            parse_metric(mtr)
        except StudyError as exc:
            raise StudyError(f"{source}: {exc}") from None
    table = None
    if "inputs_csv" in d:
        path = Path(d["inputs_csv"])
        path = path if path.is_absolute() or base is None else base / path
        table = read_input_csv(path)
    plot = _table("plot", d.get("plot", {}))
    if set(plot) - {"x", "series"} or not isinstance(plot.get("x", ""), str) or \
            not isinstance(plot.get("series", []), list):
        raise StudyError(f"{source}: plot takes x = \"name\" and series = [\"variable\", ...], got {plot!r}")
    return Study(fmu=fmu, runs=runs,
                 stop_time=None if d.get("stop_time") is None else _number(f"{source}: stop_time", d["stop_time"], True),
                 step=None if d.get("step") is None else _number(f"{source}: step", d["step"], True),
                 outputs=outputs, metrics=list(metrics),
                 inputs={k: _number(f"{source}: inputs.{k}", v) for k, v in _table("inputs", d.get("inputs", {})).items()},
                 input_table=table, title=str(d.get("title", Path(source).stem)), plot=plot, source=source)


def load_study(path) -> Study:
    """The Study of TOML file ``path``."""
    path = Path(path)
    try:
        d = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StudyError(f"cannot read the study file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML: {exc}") from None
    return study_from_dict(d, str(path), path.resolve().parent)


def read_input_csv(path: Path) -> dict:
    """{'time': array, input: array, ...} of an input CSV file, read and checked as ``fmu-mb simulate --input``
    reads it (fmu_mb.runs.read_inputs; the columns are checked against the FMU when the runs start)."""
    from ..errors import UserError
    from ..runs import read_inputs
    try:
        signals = read_inputs(path)
    except UserError as exc:
        raise StudyError(f"inputs_csv: {exc}") from None
    return {c: np.asarray(signals[c], float) for c in signals.dtype.names}


def fmu_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_key(digest: str, study: Study, values: dict) -> str:
    """16 hex digits naming one run: the FMU's bytes and everything that defines the run."""
    table = None if study.input_table is None else {k: np.asarray(v).tolist() for k, v in study.input_table.items()}
    text = json.dumps({"fmu": digest, "values": sorted(values.items()), "inputs": sorted(study.inputs.items()),
                       "table": table, "stop": study.stop_time, "step": study.step, "outputs": study.outputs},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
