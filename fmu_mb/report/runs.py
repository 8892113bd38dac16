"""Runs and studies as the report reads them.

A **run** is a table of an FMU's outputs over time (column ``time`` first): a CSV (``fmu-mb simulate
--csv``, the demo, FMPy's ``write_csv``) or a parquet file (a study's ``runs/<key>.parquet``). Its
**sidecar** — the file of the same stem with ``.json`` — holds what the table cannot: the model
(``model``: the FMU's modelName), the start values the run set (``values``: parameters such as
``model.link`` and trajectory inputs) and, for a study's runs, its FMI status and message. Without a
sidecar the model is recognised from the joint-coordinate columns (:func:`guess_model`) and the
model options are the defaults unless given.

A **study** is the folder ``fmu-mb sweep`` writes: ``table.parquet``, ``runs/``, ``study.json``.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path


class ReportError(Exception):
    """Something the report cannot read or draw, said in one line (file, column or option named)."""


@dataclass
class Run:
    name: str
    table: object                      # pandas.DataFrame, column "time" first
    source: Path
    model: str | None = None
    values: dict = field(default_factory=dict)
    status: str | None = None
    message: str = ""


@dataclass
class Study:
    folder: Path
    table: object                      # one row per run (fmu_mb.sweep.study)
    model: str | None
    title: str
    parameters: list                   # columns that are start values the study varied
    metrics: list
    series: list


def _read_table(path: Path):
    import pandas as pd
    try:
        if path.suffix.lower() == ".parquet":
            table = pd.read_parquet(path)
        else:
            table = pd.read_csv(path)
    except Exception as exc:  # noqa: BLE001 — pandas/pyarrow raise many kinds for a bad file
        raise ReportError(f"cannot read {path}: {' '.join(str(exc).split()) or type(exc).__name__}") from None
    table.columns = [str(c).strip().strip('"') for c in table.columns]
    if "time" not in table.columns:
        raise ReportError(f"{path}: no 'time' column (columns: {', '.join(map(str, table.columns[:8]))}"
                          f"{', ...' if len(table.columns) > 8 else ''})")
    if len(table) < 1:
        raise ReportError(f"{path}: no rows")
    return table


def _is_path(ref: str) -> bool:
    return ref.endswith((".py", ".urdf", ".xml", ".mjcf", ".fmu")) or "/" in ref or os.sep in ref


def resolve_model(ref: str) -> str:
    """The model reference the report builds from (:func:`load_model`): a name in models/ as it is, or
    the path of a model file — given as a model file (.py), a URDF or MJCF file (its model file, as
    ``fmu-mb build`` writes it) or an FMU of either kind (the model file it carries in resources/models/)."""
    import hashlib
    import zipfile

    from .. import registry
    if not _is_path(ref):
        if ref not in registry.available():
            raise ReportError(f"no model named {ref!r} in models/ (give a model file, a URDF file or the run's FMU "
                              "with --model)")
        return ref
    path = Path(ref)
    if not path.is_file():
        raise ReportError(f"--model: no such file: {path}")
    if path.suffix == ".py":
        return str(path.resolve())
    if path.suffix.lower() in (".urdf", ".xml", ".mjcf"):
        from ..interop.urdf import UrdfError, model_source
        try:
            name, text, _ = model_source(path)
        except UrdfError as exc:
            raise ReportError(str(exc)) from None
    elif path.suffix == ".fmu":
        try:
            with zipfile.ZipFile(path) as z:
                files = [n for n in z.namelist() if n.startswith("resources/models/") and n.endswith(".py")]
                if len(files) != 1:
                    raise ReportError(f"{path}: carries no model file (resources/models/); it was built by an older "
                                      "fmu_mb or is not an fmu_mb FMU: name the model file with --model")
                name, text = Path(files[0]).stem, z.read(files[0]).decode()
        except zipfile.BadZipFile:
            raise ReportError(f"{path}: not an FMU (not a zip file)") from None
    else:
        raise ReportError(f"--model {path}: give a models/ name, a model file (.py), a URDF or MJCF file or an FMU")
    from ..native import cache_root
    folder = cache_root() / "report-models" / hashlib.sha256(text.encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.py"
    if not target.is_file():
        target.write_text(text)
    return str(target)


def model_name(ref: str | None) -> str | None:
    """The name to show for a model reference (a path's stem)."""
    return Path(ref).stem if ref and _is_path(ref) else ref


def load_model(ref: str):
    """The model module of a reference of :func:`resolve_model` (a models/ name or a model file's path)."""
    from .. import registry
    from ..registry import ModelFileError
    if not _is_path(ref):
        return registry.load(ref)
    try:
        return registry.load_file(ref, registry.identifier(Path(ref).stem))
    except ModelFileError as exc:
        raise ReportError(str(exc)) from None


def build_model(ref: str, **options):
    """``load_model(ref).build(**options)``, checked to be a Mechanism."""
    from ..model.description import Mechanism
    mech = load_model(ref).build(**options)
    if not isinstance(mech, Mechanism):
        raise ReportError(f"{model_name(ref)}: build() returned {type(mech).__name__}, not a Mechanism")
    return mech


def _recorded_model(ref: str | None) -> str | None:
    """:func:`resolve_model` of what a sidecar or study recorded, or None where that is gone (an FMU
    moved away, a model name not in this models/): the report then recognises the model or draws no
    animation, and says so."""
    from .. import registry
    if not ref or (_is_path(ref) and not Path(ref).is_file()) or (not _is_path(ref) and
                                                                  ref not in registry.available()):
        return None
    return resolve_model(ref)


def load_run(path, model: str | None = None) -> Run:
    """The run in ``path`` (CSV or parquet) with its sidecar's model and values, if there is one. The
    model (:func:`resolve_model`): ``model`` if given, else the FMU the sidecar names (it carries its
    model file), else the sidecar's model name in models/, else the one recognised from the columns."""
    path = Path(path)
    if not path.is_file():
        raise ReportError(f"no such file: {path}")
    table = _read_table(path)
    meta = {}
    side = path.with_suffix(".json")
    if side.is_file():
        try:
            meta = json.loads(side.read_text())
        except ValueError as exc:
            raise ReportError(f"{side}: not JSON ({exc})") from None
    values = dict(meta.get("values", {}))
    if not values and "status" in meta:                  # a study's run row: its start values are columns
        values = {k: v for k, v in meta.items() if "." in k and "(" not in k}    # not the metrics
    study = path.parent.parent / "study.json"
    fmu = Path(meta["fmu"]) if meta.get("fmu") else None
    fmu = fmu if fmu is None or fmu.is_file() or fmu.is_absolute() else path.parent / fmu    # (as written)
    if model:
        model = resolve_model(model)                      # named by the user: an unknown one is an error
    else:
        named = meta.get("model") or (json.loads(study.read_text()).get("model") if study.is_file() else None)
        model = (_recorded_model(str(fmu) if fmu is not None and fmu.is_file() else named)
                 or guess_model(table.columns))
    return Run(path.stem, table, path, model, values, meta.get("status"), meta.get("message", ""))


def load_study(folder) -> Study:
    """The study written by ``fmu-mb sweep`` into ``folder``."""
    import pandas as pd
    folder = Path(folder)
    f = folder / "table.parquet"
    if not f.is_file():
        raise ReportError(f"{folder}: not a study folder (no table.parquet; run 'fmu-mb sweep' first)")
    table = pd.read_parquet(f)
    meta = json.loads((folder / "study.json").read_text()) if (folder / "study.json").is_file() else {}
    fixed = {"key", "status", "message", "t_end", "wall"}
    metrics = list(meta.get("metrics", []))
    parameters = [c for c in table.columns if c not in fixed and c not in metrics]
    model = meta.get("fmu") if meta.get("fmu") and Path(meta["fmu"]).is_file() else meta.get("model")
    return Study(folder, table, _recorded_model(model), meta.get("title") or folder.name, parameters, metrics,
                 list(meta.get("series", [])))


def guess_model(columns) -> str | None:
    """The model of models/ whose joints' coordinate outputs (``<joint>.q...``) include every such
    column of the run, the one with most in common; None when no model matches."""
    from .. import registry
    from ..outputs import index_suffix
    cols = {c for c in columns if ".q" in c and not c.startswith("solver.")}
    if not cols:
        return None
    best, score = None, 0
    for name in registry.available():
        try:
            mech = registry.build(name)
        except Exception:  # noqa: BLE001 — a broken user model file must not stop the guess
            continue
        names = set()
        for j in mech.joints:
            n = len(j.coordinate_names)
            names |= {f"{j.name}.{x}{index_suffix(n, k)}" for k in range(n) for x in ("q", "qd")}
        common = len(cols & names)
        if cols <= names and common > score:
            best, score = name, common
    return best


def model_options(model: str, values: dict, given: dict | None = None) -> dict:
    """build() options of ``model`` (a reference of :func:`resolve_model`) from a run's ``model.<option>``
    start values (FMU codes or names) and ``given`` (the command line's NAME=VALUE, which win). Unknown
    names are refused."""
    options = getattr(load_model(model), "OPTIONS", {})
    model = model_name(model)
    raw = {k[len("model."):]: v for k, v in values.items() if k.startswith("model.")}
    raw.update(given or {})
    out = {}
    for name, value in raw.items():
        if name not in options:
            raise ReportError(f"{model} has no option {name!r} (options: {', '.join(options) or 'none'})")
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if isinstance(value, str):
            for conv in (int, float):
                try:
                    value = conv(value)
                    break
                except ValueError:
                    pass
        if isinstance(value, float) and value.is_integer() and type(options[name]).__name__ in ("Choice", "Count"):
            value = int(value)
        try:
            out[name] = options[name].check(name, value)
        except ValueError as exc:
            raise ReportError(f"{model}: {exc}") from None
    return out
