"""Running an FMU with FMPy as ``fmu-mb simulate`` and the studies of fmu_mb.sweep do: its model description,
start values given as text, the input CSV (one reader for both), the outputs to record, the run, its sidecar
and a plot. Every problem a user can fix is a fmu_mb.errors.UserError naming the file, the variable or the
value (code 2), a run that fails is one with code 1."""
from __future__ import annotations

import math
import time
from pathlib import Path

from .errors import UserError, close_matches, one_line

#: most subplots :func:`plot` draws (the first outputs; choose others with --outputs)
MAX_PLOTS = 12
_BOOLEAN = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


def model_description(path: Path):
    """The fmpy ModelDescription of an FMU file or extracted folder."""
    from fmpy import read_model_description
    try:
        return read_model_description(str(path))
    # fmpy reports a file that is no FMU as OSError, BadZipFile, KeyError (no modelDescription.xml),
    # lxml's XMLSyntaxError, its ValidationError, or a bare Exception (unsupported FMI version)
    except Exception as exc:  # noqa: BLE001
        raise UserError(f"cannot read the model description of {path}: {one_line(exc) or type(exc).__name__}",
                        2) from None


def variables(md) -> dict:
    """{name: variable} of the FMU's variables and, for an FMI 3.0 FMU, of its arrays' elements by their names
    (``E.r[2]``: the array ``E.r``; fmu_mb.fmi.arrays3.element_names)."""
    from .fmi.arrays3 import element_names
    known = {v.name: v for v in md.modelVariables}
    for v in md.modelVariables:
        if getattr(v, "shape", None):
            known.update({n: v for n in element_names(v.name, v.shape)})
    return known


def element_index(v, name: str) -> int | None:
    """Where element ``name`` is in array variable ``v`` (row-major), None if ``name`` is ``v`` itself."""
    from .fmi.arrays3 import element_names
    return element_names(v.name, v.shape).index(name) if name != v.name else None


def unknown(kind: str, name: str, md, names) -> UserError:
    return UserError(f"{kind} {name!r} is not a variable of {md.modelName}"
                     f"{close_matches(name, names) or ' (list them with: fmu-mb info FMU)'}", 2)


def unit(v) -> str:
    return v.unit or (v.declaredType.unit if v.declaredType is not None else None) or ""


def typed(v, text: str):
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


def start_values(items, md) -> dict:
    """{name: value} of ``NAME=VALUE`` items, each checked to be a parameter or input and converted to its type."""
    known = variables(md)
    values = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(f"--set takes NAME=VALUE, got {item!r}", 2)
        v = known.get(name)
        if v is None:
            raise unknown("--set: variable", name, md, known)
        if v.causality not in ("parameter", "structuralParameter", "input"):
            raise UserError(f"--set: {name} is {'an' if v.causality in ('output', 'independent') else 'a'} "
                            f"{v.causality}; only parameters and inputs have start values to set", 2)
        try:
            if getattr(v, "shape", None):                  # an FMI 3.0 array: the whole of it, or an element
                k = element_index(v, name)
                whole = values.get(v.name) or [typed(v, x) for x in str(v.start or "").split()] or [None] * size(v)
                if k is None:
                    whole = [typed(v, x) for x in text.replace(",", " ").split()]
                    if len(whole) != size(v):
                        raise ValueError(f"{v.name} has {size(v)} elements; give them all, separated by spaces, "
                                         f"or set one: {v.name}[1]=VALUE")
                else:
                    whole[k] = typed(v, text)
                values[v.name] = whole
            else:
                values[name] = typed(v, text)
        except ValueError as exc:
            raise UserError(f"--set {name}: {text!r} is not a value of type {v.type} ({one_line(exc)})", 2) from None
    return values


def size(v) -> int:
    """The number of values of variable ``v`` (an FMI 3.0 array's elements; 1 for a scalar)."""
    return int(math.prod(getattr(v, "shape", None) or ()))


def csv_problem(lines) -> str | None:
    """What makes ``lines`` unreadable as an input table (a header, then rows of numbers of the header's width),
    said with the line number, or None."""
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


def read_inputs(path: Path, md=None):
    """The input signals of CSV file ``path`` (fmpy.util.read_csv: a 'time' column, one column per input;
    linear interpolation), checked: readable, time first, finite and non-decreasing, every value finite, and,
    given the FMU's ``md``, every other column one of its inputs."""
    import numpy as np
    from fmpy.util import read_csv

    path = Path(path)
    if not path.is_file():
        raise UserError(f"no such input file: {path}", 2)
    try:
        problem = csv_problem(path.read_text().splitlines())
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read input CSV {path}: {one_line(exc)}", 2) from None
    if problem:
        raise UserError(f"malformed input CSV {path}: {problem}", 2)
    try:
        signals = read_csv(str(path))
    except (ValueError, IndexError, TypeError, UnicodeDecodeError) as exc:
        raise UserError(f"malformed input CSV {path}: {one_line(exc) or type(exc).__name__} "
                        "(expected a header 'time,<input>,...' and rows of numbers)", 2) from None
    except OSError as exc:
        raise UserError(f"cannot read input CSV {path}: {one_line(exc)}", 2) from None
    names = signals.dtype.names
    if names[0] != "time":
        raise UserError(f"input CSV {path}: the first column must be 'time', not {names[0]!r}", 2)
    t = signals["time"]
    if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise UserError(f"input CSV {path}: the time column must be finite and non-decreasing", 2)
    for name in names[1:]:
        if signals[name].ndim != 1:
            raise UserError(f"input CSV {path}: column {name!r} holds arrays; inputs are scalars", 2)
        if not np.all(np.isfinite(signals[name])):
            raise UserError(f"input CSV {path}: column {name!r} holds a value that is not finite", 2)
    if md is not None:
        known = variables(md)
        for name in names[1:]:
            v = known.get(name)
            if v is None:
                raise unknown(f"input CSV {path}: column", name, md,
                              [n for n, x in known.items() if x.causality == "input"])
            if v.causality != "input" and v.variability != "tunable":
                raise UserError(f"input CSV {path}: column {name!r} is {v.causality}, not an input of {md.modelName}", 2)
    return signals


def split_names(text: str) -> list:
    """Variable names from "a,b,..." (a comma inside brackets belongs to the name: ``dynamics.M[1,2]``)."""
    import re
    return [n.strip() for n in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", text) if n.strip()]


def output_names(text, md) -> list:
    """The variables to record: ``text`` "a,b,..." checked, or every output; an FMI 3.0 array as its elements
    (``E.r``: ``E.r[1]``, ``E.r[2]``, ``E.r[3]``, the columns of the run's result)."""
    known = variables(md)
    if text is None:
        return as_elements([v.name for v in md.modelVariables if v.causality == "output"], known)
    names = split_names(text)
    if not names:
        raise UserError("--outputs: no variable names given", 2)
    for n in names:
        if n not in known:
            raise unknown("--outputs: variable", n, md, known)
    return as_elements(names, known)


def as_elements(names, known: dict) -> list:
    """``names`` with each FMI 3.0 array named whole replaced by its elements (``E.r``: ``E.r[1]`` …), in order,
    once each; ``known``: :func:`variables`."""
    from .fmi.arrays3 import element_names
    return list(dict.fromkeys(e for n in names for e in (element_names(n, known[n].shape)
                                                         if getattr(known[n], "shape", None) and known[n].name == n
                                                         else [n])))


def simulate(path: Path, md, start: dict, signals, outputs: list, stop_time=None, step=None,
             debug_logging: bool = False, log=print):
    """(result, seconds) of fmpy.simulate_fmu of the FMU at ``path`` over its DefaultExperiment (or to
    ``stop_time``, at output interval ``step``), every message of the FMU passed to ``log``."""
    if md.coSimulation is None and md.modelExchange is None:
        raise UserError(f"{path} offers neither co-simulation nor model exchange", 2)
    exp = md.defaultExperiment
    t0 = float(exp.startTime) if exp is not None and exp.startTime is not None else 0.0
    stop = stop_time if stop_time is not None else \
        (float(exp.stopTime) if exp is not None and exp.stopTime is not None else t0 + 1.0)
    step = step if step is not None else (float(exp.stepSize) if exp is not None and exp.stepSize is not None else None)
    if stop <= t0:
        raise UserError(f"--stop-time must be after the start time {t0:g} s, got {stop:g}", 2)
    errors = []
    labels = ["OK", "WARNING", "DISCARD", "ERROR", "FATAL", "PENDING"]

    def logger(*call):       # FMI 2.0: (component, instance, status, category, message); 3.0: (env, status, ...)
        status, message = int(call[-3]), call[-1]
        text = (message or b"").decode("utf-8", "replace")
        if status >= 3:
            errors.append(text)
        log(f"[{labels[status] if 0 <= status < len(labels) else status}] {text}")

    from fmpy import simulate_fmu

    from .fmi.arrays3 import flat_result
    started = time.perf_counter()
    instance, folder = None, None
    try:
        structural = {n: v for n, v in start.items() if variables(md)[n].causality == "structuralParameter"}
        if structural:           # FMI 3.0: set in configuration mode, on an instance simulate_fmu then runs
            instance, folder = _configured(path, md, structural, logger, debug_logging)
            start = {n: v for n, v in start.items() if n not in structural}
        known = variables(md)
        record = list(dict.fromkeys(known[n].name for n in outputs))     # (an FMI 3.0 array element: its array)
        result = flat_result(simulate_fmu(str(folder or path), start_time=t0, stop_time=stop, output_interval=step,
                                          start_values=start, input=signals, output=record,
                                          debug_logging=debug_logging, logger=logger, fmu_instance=instance))
    # FMICallException (a failed FMI call) or, fmpy's other failures, a bare Exception
    except Exception as exc:  # noqa: BLE001
        why = f": {one_line(errors[-1])}" if errors else ""
        raise UserError(f"simulating {path.name} failed: {one_line(exc).rstrip('.') or type(exc).__name__}{why}",
                        1) from None
    finally:
        if instance is not None:
            instance.freeInstance()
        if folder is not None:
            import shutil
            shutil.rmtree(folder, ignore_errors=True)
    return result, time.perf_counter() - started


def _configured(path: Path, md, structural: dict, logger, debug_logging: bool):
    """(instance, its folder): an FMI 3.0 co-simulation instance of the FMU with its structural parameters set in
    configuration mode (where FMI 3.0 changes them; fmpy.simulate_fmu would set them in the instantiated state)."""
    from fmpy import extract
    from fmpy.fmi3 import FMU3Slave
    folder = extract(str(path))
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=folder, modelIdentifier=md.coSimulation.modelIdentifier,
                    instanceName=md.modelName)
    fmu.instantiate(loggingOn=debug_logging, logMessage=logger)
    known = variables(md)
    fmu.enterConfigurationMode()
    for name, value in structural.items():
        getattr(fmu, f"set{known[name].type}")([known[name].valueReference], [value])
    fmu.exitConfigurationMode()
    return fmu, folder


def final_values(result, outputs, md) -> str:
    """The outputs' values at the end of a run, one per line with their units."""
    import numpy as np
    known, width = variables(md), max(map(len, outputs), default=0)
    lines = [f"values at t = {result['time'][-1]:g} s (save all samples with --csv, plot with --plot):"]
    for n in outputs:
        x = result[n][-1]
        value = f"{x:.10g}" if isinstance(x, (float, np.floating)) else str(x)
        lines.append(f"  {n:<{width}}  {value} {unit(known[n])}".rstrip())
    return "\n".join(lines)


def write_result(csv: Path, result, md, start: dict, fmu: Path) -> None:
    """The run as CSV (fmpy.util.write_csv) and ``<csv stem>.json`` beside it: the model and the start values
    the run set, for ``fmu-mb report`` (fmu_mb.report.runs)."""
    import json

    from fmpy.util import write_csv
    side = csv.with_suffix(".json")
    for target, write in ((csv, lambda: write_csv(str(csv), result)),
                          (side, lambda: side.write_text(json.dumps({"model": md.modelName,
                                                                     "fmu": str(Path(fmu).resolve()),
                                                                     "values": start}, default=str, indent=1)))):
        try:
            write()
        except OSError as exc:
            raise UserError(f"--csv: cannot write {target}: {one_line(exc)}", 2) from None


def plot(result, names, md, filename, title) -> None:
    """One subplot per variable (the first :data:`MAX_PLOTS`), as a PNG (or any file type matplotlib writes)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    known = variables(md)
    names = names[:MAX_PLOTS]
    fig, axes = plt.subplots(len(names), 1, sharex=True, squeeze=False, figsize=(8, 1.2 + 1.5 * len(names)))
    for ax, n in zip(axes[:, 0], names):
        ax.plot(result["time"], np.asarray(result[n], dtype=float), lw=1.0)
        u = unit(known[n])
        ax.set_title(f"{n}" + (f" [{u}]" if u else ""), fontsize=8, loc="left")
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    try:
        fig.savefig(filename, dpi=110)
    except (OSError, ValueError) as exc:       # ValueError: a file type matplotlib cannot write
        raise UserError(f"--plot: cannot write {filename}: {one_line(exc)}", 2) from None
    finally:
        plt.close(fig)


def positive(name: str, text: str) -> float:
    """``text`` as a finite positive number (ValueError naming ``name`` otherwise)."""
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be positive and finite, got {text!r}")
    return x
