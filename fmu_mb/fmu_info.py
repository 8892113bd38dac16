"""What ``fmu-mb info`` says of a built FMU: its identity, platforms and interface table."""
from __future__ import annotations

import math
import zipfile
from pathlib import Path

from .errors import UserError, one_line
from .runs import model_description, unit


def platforms(path: Path) -> list:
    """The binaries/ folders of an FMU file or extracted folder."""
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

    ordered = sorted(md.modelVariables, key=lambda v: v.valueReference)
    itf = Interface(md.modelName)
    for v in ordered:
        if getattr(v, "shape", None):          # an FMI 3.0 array: its start values as written
            start = v.start
        elif v.type in ("Real", "Float64", "Float32"):
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
        kind = "Integer" if items else v.type + (f"[{' × '.join(map(str, v.shape))}]" if getattr(v, "shape", None)
                                                 else "")
        itf.add(Var(v.name, kind, v.causality or "local", v.variability or "continuous",
                    v.description or "", (), start, unit(v) or None, lo, hi, items=items))
    lines = interface_markdown(itf, title or f"{md.modelName} — interface").splitlines()
    vrs = [v.valueReference for v in ordered]
    ours = (md.generationTool or "").startswith("fmu_mb")
    if vrs != list(range(len(vrs))) or not ours:
        lines[2] = f"{len(vrs)} variables."
        for i, vr in enumerate(vrs):
            row = lines[6 + i]
            lines[6 + i] = f"| {vr} |" + row[len(f"| {i} |"):]
    return "\n".join(lines) + "\n"


def describe(path: Path) -> str:
    """The identity of the FMU at ``path`` (name, description, FMI version, GUID, tool, types, platforms,
    default experiment, number of variables) and its interface table."""
    if not path.exists():
        raise UserError(f"no such FMU: {path}", 2)
    md = model_description(path)
    try:
        found = platforms(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise UserError(f"cannot list the binaries of {path}: {one_line(exc)}", 2) from None
    kinds = [f"{name} ({t.modelIdentifier})" for name, t in (("co-simulation", md.coSimulation),
                                                            ("model exchange", md.modelExchange)) if t is not None]
    exp = md.defaultExperiment
    rows = [("Model name", md.modelName), ("Description", md.description), ("FMI version", md.fmiVersion),
            ("GUID", md.guid), ("Generation tool", md.generationTool), ("Generated", md.generationDateAndTime),
            ("FMU types", ", ".join(kinds)), ("Platforms", ", ".join(found) or "none (no binaries/)"),
            ("Default experiment", "" if exp is None else
             ", ".join(f"{k} = {_g(getattr(exp, a))}" for k, a in (("start", "startTime"), ("stop", "stopTime"),
                                                               ("step", "stepSize"), ("tolerance", "tolerance"))
                       if getattr(exp, a, None) is not None)),
            ("Variables", str(len(md.modelVariables)))]
    head = "".join(f"{k + ':':<20}{v if v is not None else ''}\n" for k, v in rows)
    return head + "\n" + interface_table(md, f"{path.name} — interface")
