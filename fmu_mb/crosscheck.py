"""FMI cross-check artifacts of a built FMU (modelica/fmi-cross-check, rules 4.1, section 9.1.4).

``write_artifacts(fmu, root)`` writes ``<root>/fmus/2.0/cs/linux64/fmu_mb/<version>/<Model>/``
with ``<Model>.fmu`` (a copy), ``<Model>_in.csv``, ``<Model>_ref.csv``, ``<Model>_ref.opt`` and
``ReadMe.md``; for an FMI 3.0 FMU ``<root>/fmus/3.0/cs|me/x86_64-linux/...`` (``fmi_type="me"``: its Model
Exchange interface under FMPy's CVODE at ``_ref.opt``'s RelTol, the output interval its StepSize). The reference is the FMU run by ``fmpy.simulate_fmu`` exactly as the importer
``python -m fmpy.cross_check`` runs it: in a fresh Python, the written ``_in.csv`` read with
``fmpy.util.read_csv``, ``validate=False, step_size, stop_time, input, output``; ``reproduce(folder)``
repeats that run.

Scenarios are data, one :class:`Scenario` per model in :data:`SCENARIOS`, and a generic one
(first joints' q/qd, energies) for any other FMU. They live here, not as a ``CROSS_CHECK`` dict
in ``models/<name>.py``: a model file is carried inside its FMU and keys the FMU caches, so
tooling data there would change every FMU for nothing; and what a scenario may contain is
dictated by the cross-check tooling, not by the mechanism:

* no start values: the importer sets none (the rules have no file for them), so a reference made
  with non-default parameters could not be repeated. Every run uses the FMU's defaults.
* no step: for a co-simulation FMU ``simulate_fmu`` ignores ``step_size``; the communication step
  is the DefaultExperiment's stepSize, doubled until at most 1000 steps fit the run
  (:func:`communication_step`), and ``_ref.opt`` records that step.
* every input is a column of ``_in.csv`` (the rules: "must match the input variables"; FMPy's
  importer validates against all of them); inputs a scenario does not drive hold their start
  value.
"""
from __future__ import annotations

import json
import math
import platform
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import __version__

TOOL = "fmu_mb"
MAX_OUTPUTS = 10            # the rules: "at most 10 of the important variables"
MAX_CSV = 1_000_000         # bytes, any CSV (rules, appendix B)
MAX_FMU = 10_000_000        # bytes (fmpy.cross_check.validate_vendor_repo)
#: the same FMU on the same machine must repeat its reference to this, relative to 1 + the
#: signal's range: a fixed internal step, deterministic compiled kernels and values written
#: round-trip exact leave nothing to differ; measured: 0 (bitwise)
TIGHT = 1e-9


def _u(unit: str) -> str:
    return f" {unit}" if unit else ""


@dataclass(frozen=True)
class Pulse:
    """``value`` for t_on ≤ t < t_off, 0 otherwise (a discontinuity: two rows at each edge)."""
    value: float
    t_on: float
    t_off: float

    def at(self, t: float, left: bool = False) -> float:
        inside = self.t_on < t <= self.t_off if left else self.t_on <= t < self.t_off
        return self.value if inside else 0.0

    def text(self, unit: str) -> str:
        return f"{self.value:g}{_u(unit)} for {self.t_on:g} s ≤ t < {self.t_off:g} s, 0 otherwise"


@dataclass(frozen=True)
class Sine:
    """``amplitude · sin(2π · frequency · t + phase)``, sampled at every communication point."""
    amplitude: float
    frequency: float
    phase: float = 0.0

    def at(self, t: float, left: bool = False) -> float:
        return self.amplitude * math.sin(2.0 * math.pi * self.frequency * t + self.phase)

    def text(self, unit: str) -> str:
        phase = f" {'+' if self.phase > 0 else '-'} {abs(self.phase):.6g} rad" if self.phase else ""
        return f"{self.amplitude:.6g}{_u(unit)} · sin(2π · {self.frequency:g} Hz · t{phase})"


@dataclass(frozen=True)
class Scenario:
    """A cross-check run: what it shows (ReadMe), the recorded outputs, the driven inputs, and
    its length (None: the DefaultExperiment's stopTime)."""
    about: str
    outputs: tuple
    inputs: dict = field(default_factory=dict)
    stop_time: float | None = None


_TAU = "tau_drive"
SCENARIOS = {
    "five_axis": Scenario(
        "Paper 002 §5.1's five-axis tree in forward dynamics: every joint driven by a cosine torque of "
        "its own amplitude and frequency (the joint axes are vertical, so gravity does no work and "
        "kinetic energy = drive work). Outputs: joint angles and rates, the bending moment and radial "
        "force of joints 1 and 2 (paper 002 Figs. 13-14), the normal load that would drive joint 2's "
        "friction (eq. 47), x of link 5's tip, the kinetic energy and the drives' work.",
        ("joint1.q", "joint1.qd", "joint2.q", "joint4.q", "joint1.M[1]", "joint2.F[1]", "joint2.F_normal",
         "tip5.r[1]", "energy.kinetic", "energy.work_in"),
        {f"joint{k}.{_TAU}": Sine(a, f, math.pi / 2) for k, a, f in
         ((1, 1.0, 0.2), (2, 0.5, 0.3), (3, 0.25, 0.5), (4, 0.5, 0.25), (5, 0.25, 0.4))}),
    "three_loop": Scenario(
        "Paper 002 §5.2: the driving joint 1'' turns at the programmed 0.1 rad/s from the tabulated "
        "configuration (no driven input). Outputs: the passive joints, the driving torque (Fig. 17; "
        "0.880992 N·m at t = 0 in the paper), one component of each cut force (Figs. 18-19; at t = 0 "
        "the magnitudes are the paper's 70.31 / 69.10 / 28.69 N), the normal load of joint 1'' "
        "(eq. 47) and the potential energy. The loops' violations stay at round-off (< 1e-14 m) and "
        "are left out: they carry no signal and round-off differs between machines.",
        ("joint1.q", "joint1.qd", "joint1p.q", "joint2p.q", "joint1pp.tau_required", "cut1.F[2]", "cut2.F[1]",
         "cut3.F[1]", "joint1pp.F_normal", "energy.potential")),
    "crane": Scenario(
        "Paper 001's run: from static equilibrium on its eight supports, a column torque of -4000 N·m "
        "for 0.1 s (eq. 21) while E is held on the ellipse a = 3 m, b = 2 m and lifted 0.2 m over 1 s "
        "(eqs. 17, 22). Outputs: the joint angles, the column's rate, z of E, the jib joint's axial "
        "reaction, the force holding E on the ellipse and that constraint's violation (Baumgarte start "
        "transient), the base's yaw on its supports, kinetic energy. The base vibrates on its supports "
        "at 33 Hz, which the 8 ms step samples about 4 times a period; the reactions chosen carry the "
        "most slow content (the journal loads, the friction laws' normal loads, are |.| of that "
        "vibration at 66 Hz: aliased, left out).",
        ("column.q", "column.qd", "jib.q", "arm.q", "E.r[3]", "jib.F[3]", "ellipse.F[1]",
         "ellipse.violation", "base.q[4]", "energy.kinetic"),
        {f"column.{_TAU}": Pulse(-4000.0, 0.0, 0.1)}),
    "manipulator": Scenario(
        "Paper 000 §3.1: E traces the rectangle ABCD (1 s per side, eq. 28-29) from static "
        "equilibrium, ideal joints on the rigid base (the model's defaults; no driven input). "
        "Outputs: the five joint coordinates, ψ(1,2)'s required drive torque, a component of its "
        "reaction force (joint-frame x) and its journal load (LuGre's normal load, eqs. 20-22), z of "
        "E, kinetic energy.",
        ("phi11.q", "psi12.q", "psi13.q", "x14.q", "x15.q", "psi12.tau_required", "psi12.F[1]",
         "psi12.F_normal", "E.r[3]", "energy.kinetic")),
    "rpsup": Scenario(
        "Paper 000 §3.2: the closed RPSUP loop with E on the rectangle in the 45° plane (four 1 s "
        "moves, 0.5 s at rest), from static equilibrium (no driven input). Outputs: the joint "
        "coordinates, the required torque of R11 and its journal load, the cut revolute's reaction "
        "and the loop's violation (Baumgarte-controlled), z of E, kinetic energy.",
        ("R11.q", "P12.q", "P21.q", "R22.q", "R11.tau_required", "R11.F_normal", "cut_R.F[1]",
         "cut_R.violation", "E.r[3]", "energy.kinetic")),
    "mobile_robot": Scenario(
        "Paper 004 §4: the robot coasts at 1 m/s while the programmed slide steers right at 1 s and "
        "left at 6 s (no driven input). Outputs: the platform's position, heading and yaw rate, "
        "the front wheel carrier's and the trolley's headings, the steering drive's force, the "
        "lateral reactions of knife edges W1 and W5 (minimum-norm multipliers of the redundant rows) "
        "and the kinetic energy (knife edges do no work; the programmed steering exchanges 2.5 mJ). "
        "The violations stay at round-off and are left out.",
        ("platform.q[1]", "platform.q[2]", "platform.q[3]", "platform.qd[3]", "carrier_front.q[3]",
         "trolley.q[3]", "drive.F[2]", "W1.F[2]", "W5.F[2]", "energy.kinetic")),
    "pd_controller": Scenario(
        "The PD law tau = tau_ff + Kp (q_ref - q) + Kd (qd_ref - qd) at its default gains "
        "(Kp = 100, Kd = 10): channel 1 follows a 0.5 Hz sine with a lagging, smaller measured "
        "motion; channel 2 a 1 Hz sine against a resting joint plus a 5 N·m feed-forward pulse "
        "from 2 s to 4 s. Direct feedthrough: FMPy reads the outputs after each step, which are "
        "the law applied to the inputs set at that step's start.",
        ("tau[1]", "tau[2]"),
        {"q_ref[1]": Sine(0.5, 0.5), "qd_ref[1]": Sine(0.5 * math.pi, 0.5, math.pi / 2),
         "q[1]": Sine(0.45, 0.5, -0.2), "qd[1]": Sine(0.45 * math.pi, 0.5, math.pi / 2 - 0.2),
         "q_ref[2]": Sine(0.2, 1.0), "qd_ref[2]": Sine(0.4 * math.pi, 1.0, math.pi / 2),
         "tau_ff[2]": Pulse(5.0, 2.0, 4.0)}),
    "excitation": Scenario(
        "The excitation at its defaults (amplitude 0: no pulse on any channel) passes each signal through: "
        "channel 1 a 1 Hz sine, channel 2 a 5-unit pulse from 2 s to 4 s. Direct feedthrough: FMPy reads the "
        "outputs after each step, which are the inputs set at that step's start.",
        ("y[1]", "y[2]"), {"u[1]": Sine(1.0, 1.0), "u[2]": Pulse(5.0, 2.0, 4.0)}),
}


def generic_scenario(md) -> Scenario:
    """For an FMU without an entry in :data:`SCENARIOS`: its first four joints' q and qd and the
    kinetic and potential energy (or its first Real outputs), no driven input."""
    real = [v.name for v in md.modelVariables if v.causality == "output" and v.type in ("Real", "Float64")
            and not getattr(v, "shape", None)]
    joints = [n for n in real if re.fullmatch(r".+\.qd?(\[1\])?", n)][:8]
    energy = [n for n in ("energy.kinetic", "energy.potential") if n in real]
    outputs = tuple(joints + energy) or tuple(real[:MAX_OUTPUTS])
    return Scenario(f"Generic run of {md.modelName}: the FMU's defaults, no driven input.", outputs)


def scenario_for(md) -> Scenario:
    """The model's scenario; for an FMI 3.0 FMU without the outputs that are elements of its arrays (a cross-check
    CSV column names a variable, and FMI 3.0 holds E.r[3] in the array E.r: fmu_mb.fmi.arrays3)."""
    scenario = SCENARIOS.get(md.modelName) or generic_scenario(md)
    names = {v.name for v in md.modelVariables}
    left = [n for n in scenario.outputs if n not in names and n.endswith("]")]
    if not str(md.fmiVersion).startswith("3") or not left:
        return scenario
    return Scenario(f"{scenario.about} FMI 3.0: {', '.join(left)} left out (elements of arrays; a cross-check CSV "
                    f"column names a variable).", tuple(n for n in scenario.outputs if n not in left),
                    scenario.inputs, scenario.stop_time)


# ------------------------------------------------------------------------------------ the run

def communication_step(md, stop_time: float) -> float:
    """The communication step ``fmpy.simulate_fmu`` takes for this co-simulation FMU when given
    no output_interval (fmpy.simulation: DefaultExperiment stepSize, doubled while the run would
    take more than 1000 steps; without one, fmpy.util.auto_interval)."""
    from fmpy.util import auto_interval
    exp = md.defaultExperiment
    start = float(exp.startTime) if exp is not None and exp.startTime is not None else 0.0
    if exp is None or exp.stepSize is None:
        return float(auto_interval(stop_time - start))
    h = float(exp.stepSize)
    while (stop_time - start) / h > 1000:
        h *= 2
    return h


def _check_names(md, scenario: Scenario) -> None:
    import difflib
    variables = {v.name: v for v in md.modelVariables}
    problems = []
    for name in scenario.outputs:
        if name not in variables:
            near = difflib.get_close_matches(name, list(variables), n=3)
            problems.append(f"output {name!r} is not a variable of {md.modelName}"
                            + (f" (close: {', '.join(near)})" if near else ""))
    for name in scenario.inputs:
        if variables.get(name) is None or variables[name].causality != "input":
            problems.append(f"input {name!r} is not an input of {md.modelName}")
    if not scenario.outputs or len(scenario.outputs) > MAX_OUTPUTS:
        problems.append(f"{len(scenario.outputs)} outputs; the cross-check rules allow 1 to {MAX_OUTPUTS}")
    if problems:
        raise ValueError(f"cross-check scenario of {md.modelName}: " + "; ".join(problems))


def _cell(x) -> str:
    """A CSV number: shortest round-trip repr for floats (C literal), 0/1 for booleans."""
    if isinstance(x, (bool, int, np.bool_, np.integer)):
        return str(int(x))
    return repr(float(x))


def _write_csv(path: Path, names, rows) -> None:
    lines = [",".join(f'"{n}"' for n in names)] + [",".join(_cell(x) for x in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    if path.stat().st_size > MAX_CSV:
        raise ValueError(f"{path.name} is {path.stat().st_size / 1e6:.2f} MB; the cross-check rules allow 1 MB "
                         "(record fewer outputs or a shorter run)")


def _input_rows(md, scenario: Scenario, stop: float, step: float):
    """(names, rows) of ``_in.csv``: every input, driven ones by their signal, the others held at
    their start value; rows at 0, the stop time, every communication point if a signal is
    sampled, and two rows (left and right value) at each discontinuity."""
    inputs = [v for v in md.modelVariables if v.causality == "input"]
    times = {0.0, stop}
    if any(isinstance(s, Sine) for s in scenario.inputs.values()):
        times |= {k * step for k in range(int(round(stop / step)) + 1) if k * step <= stop}
    edges = {e for s in scenario.inputs.values() if isinstance(s, Pulse) for e in (s.t_on, s.t_off) if 0 < e < stop}
    held = {v.name: float(v.start or 0.0) for v in inputs}
    rows = []
    for t in sorted(times | edges):
        for left in ((True, False) if t in edges else (False,)):
            rows.append([t] + [scenario.inputs[v.name].at(t, left) if v.name in scenario.inputs else held[v.name]
                               for v in inputs])
    return ["time"] + [v.name for v in inputs], rows


_RUN = """import sys, numpy as np, fmpy
from fmpy.util import read_csv
fmu, inp, stop, step, kind, rtol, out, *names = sys.argv[1:]
r = fmpy.simulate_fmu(fmu, validate=False, fmi_type=kind, step_size=float(step), stop_time=float(stop),
                      relative_tolerance=float(rtol), input=read_csv(inp) if inp else None, output=names)
np.save(out, np.asarray(r))
"""
#: the cross-check's FMI types -> FMPy's
FMI_TYPES = {"cs": "CoSimulation", "me": "ModelExchange"}
#: RelTol of ``_ref.opt``: CVODE's relative tolerance for a Model Exchange reference (a co-simulation FMU ignores it)
REL_TOL = {"cs": 1e-4, "me": 1e-6}


def _simulate_apart(fmu: Path, in_csv: Path | None, stop: float, step: float, outputs, fmi_type: str = "cs"):
    """The importer's run in a fresh Python that has not imported fmu_mb (as ``python -m
    fmpy.cross_check``): the FMU runs the core it carries, whatever core this process has."""
    import subprocess
    import sys
    import tempfile
    with tempfile.TemporaryDirectory(prefix="fmu_mb_xc_") as tmp:
        out = Path(tmp) / "result.npy"
        r = subprocess.run([sys.executable, "-c", _RUN, str(fmu.resolve()), str(in_csv.resolve()) if in_csv else "",
                            repr(stop), repr(step), FMI_TYPES[fmi_type], repr(REL_TOL[fmi_type]), str(out), *outputs],
                           cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0 or not out.is_file():
            why = [x for x in (r.stderr + r.stdout).strip().splitlines() if x.strip()][-3:]
            raise RuntimeError(f"simulating {fmu.name} with FMPy failed: {' '.join(why) or f'exit code {r.returncode}'}")
        return np.load(out, allow_pickle=False)


#: the cross-check's platform folder per FMI version (FMI 3.0 names platforms by tuple)
PLATFORMS = {"2.0": "linux64", "3.0": "x86_64-linux"}


def model_folder(root, model: str, fmi_version: str = "2.0", fmi_type: str = "cs") -> Path:
    """``<root>/fmus/<fmi_version>/<fmi_type>/<platform>/fmu_mb/<version>/<model>``."""
    return Path(root) / "fmus" / fmi_version / fmi_type / PLATFORMS[fmi_version] / TOOL / __version__ / model


def write_artifacts(fmu_path, root, scenario: Scenario | None = None, fmi_type: str = "cs") -> Path:
    """Write the cross-check folder of the built FMU ``fmu_path`` under ``root`` for its interface ``fmi_type``
    ("cs" or "me"; scenario: default :func:`scenario_for` its model) and return it. ValueError if a name of the
    scenario is not a variable of the FMU, the FMU lacks that interface or a file would exceed the rules' sizes,
    RuntimeError if the run fails."""
    from fmpy import read_model_description

    fmu_path = Path(fmu_path)
    md = read_model_description(str(fmu_path))
    if fmi_type not in FMI_TYPES or getattr(md, "coSimulation" if fmi_type == "cs" else "modelExchange") is None:
        raise ValueError(f"{fmu_path.name} has no {FMI_TYPES.get(fmi_type, fmi_type)} interface")
    if md.fmiVersion not in PLATFORMS:
        raise ValueError(f"{fmu_path.name}: FMI {md.fmiVersion}; cross-check folders are written for FMI 2.0 and 3.0")
    scenario = scenario or scenario_for(md)
    _check_names(md, scenario)
    if fmu_path.stat().st_size > MAX_FMU:
        raise ValueError(f"{fmu_path.name} is {fmu_path.stat().st_size / 1e6:.1f} MB; the cross-check rules allow 10 MB")
    exp = md.defaultExperiment
    start = float(exp.startTime) if exp is not None and exp.startTime is not None else 0.0
    stop = scenario.stop_time or (float(exp.stopTime) if exp is not None and exp.stopTime else start + 1.0)
    step = communication_step(md, stop)

    name = md.modelName
    folder = model_folder(root, name, md.fmiVersion, fmi_type)
    folder.mkdir(parents=True, exist_ok=True)
    fmu = folder / f"{name}.fmu"
    shutil.copyfile(fmu_path, fmu)
    in_csv = folder / f"{name}_in.csv"
    has_inputs = any(v.causality == "input" for v in md.modelVariables)
    if has_inputs:
        _write_csv(in_csv, *_input_rows(md, scenario, stop, step))
    elif in_csv.exists():
        in_csv.unlink()
    result = _simulate_apart(fmu, in_csv if has_inputs else None, stop, step, scenario.outputs, fmi_type)
    columns = ["time", *scenario.outputs]
    _write_csv(folder / f"{name}_ref.csv", columns, zip(*(result[c] for c in columns)))
    (folder / f"{name}_ref.opt").write_text(
        f"StartTime, {start!r}\nStopTime, {stop!r}\nStepSize, {step!r}\nRelTol, {REL_TOL[fmi_type]!r}\n")
    (folder / "ReadMe.md").write_text(_readme(md, fmu, scenario, start, stop, step, len(result), has_inputs,
                                              fmi_type))
    return folder



def write_folders(results, root: Path, log=print, fmi_types=("cs",)) -> None:
    """The cross-check folders (one per interface of ``fmi_types``) of every valid FMU of ``results``
    (fmu_mb.fmi.builder.BuildResult) under ``root``, one line each logged; ValueError/RuntimeError naming the FMU
    whose folder failed."""
    import time
    t0 = time.perf_counter()
    for r in results:
        if r.problems:
            log(f"cross-check: {r.path.name} skipped (not a valid FMU)")
            continue
        for kind in fmi_types:
            t1 = time.perf_counter()
            try:
                folder = write_artifacts(r.path, root, fmi_type=kind)
            except (ValueError, RuntimeError, OSError) as exc:
                raise type(exc)(f"cross-check artifacts of {r.path.name} failed: {' '.join(str(exc).split())}") \
                    from None
            rows = len((folder / f"{folder.name}_ref.csv").read_text().splitlines()) - 1
            log(f"cross-check: {folder}  {rows} rows  {time.perf_counter() - t1:.1f} s")
    log(f"cross-check artifacts of {len(results)} FMU(s) in {root} in {time.perf_counter() - t0:.1f} s")

def reproduce(folder):
    """(result, reference, options) of the folder's FMU run as ``python -m fmpy.cross_check``
    runs it: ``_ref.opt`` and ``_in.csv`` read with fmpy.util, ``simulate_fmu(validate=False)`` (a
    Model Exchange folder, ``.../me/...``: its Model Exchange interface at the RelTol of ``_ref.opt``)."""
    import fmpy
    from fmpy.util import read_csv, read_ref_opt_file

    folder = Path(folder)
    name = folder.name
    opt = read_ref_opt_file(str(folder / f"{name}_ref.opt"))
    reference = read_csv(str(folder / f"{name}_ref.csv"))
    in_csv = folder / f"{name}_in.csv"
    signals = read_csv(str(in_csv)) if in_csv.is_file() else None
    kind = "me" if folder.parents[3].name == "me" else "cs"
    result = fmpy.simulate_fmu(str(folder / f"{name}.fmu"), validate=False, fmi_type=FMI_TYPES[kind],
                               step_size=opt["StepSize"] or None, stop_time=opt["StopTime"],
                               relative_tolerance=opt["RelTol"], input=signals,
                               output=list(reference.dtype.names[1:]))
    return result, reference, opt


def deviation(result, reference) -> dict:
    """{output: max |y − y_ref| / (1 + range of y_ref)} over the reference's rows (inf where the
    time grids differ); the tight check is every value ≤ :data:`TIGHT`."""
    t, t_ref = np.asarray(result["time"], float), np.asarray(reference["time"], float)
    out = {}
    for n in reference.dtype.names[1:]:
        if t.shape != t_ref.shape or np.any(np.abs(t - t_ref) > 1e-12 * (1 + abs(t_ref[-1]))):
            out[n] = math.inf
            continue
        y, y_ref = np.asarray(result[n], float), np.asarray(reference[n], float)
        out[n] = float(np.max(np.abs(y - y_ref)) / (1.0 + np.ptp(y_ref)))
    return out


# ------------------------------------------------------------------------------------- ReadMe

def _unit(v) -> str:
    return v.unit or (v.declaredType.unit if v.declaredType is not None else None) or ""


def _native_kernels(fmu: Path) -> str:
    """The target of the native kernel library the FMU carries ('linux64'), or ''."""
    with zipfile.ZipFile(fmu) as z:
        names = [n for n in z.namelist() if n.endswith("native/lib/manifest.json")]
        return str(json.loads(z.read(names[0])).get("target", "")) if names else ""


def _solver(variables) -> str:
    step, method = variables.get("solver.step_size"), variables.get("solver.integrator")
    if step is None:
        return "none (an algebraic law evaluated when its outputs are read; no state)"
    text = f"fixed internal step `solver.step_size` = {float(step.start):g} s"
    if method is not None:
        m = re.search(rf"\b{int(method.start)} = (\w+)", method.description or "")
        text += f", `solver.integrator` = {method.start}" + (f" ({m.group(1)})" if m else "")
    static = variables.get("init.static")
    if static is not None and str(static.start).lower() in ("true", "1"):
        text += "; the run starts from static equilibrium (`init.static` = true)"
    return text


def _python_fmu(fmu: Path) -> bool:
    """Whether the FMU runs its model in CPython (a pythonfmu FMU carrying fmu_mb's sources)."""
    with zipfile.ZipFile(fmu) as z:
        return any(n.startswith("resources/fmu_mb/") for n in z.namelist())


def _readme(md, fmu: Path, scenario: Scenario, start, stop, step, rows, has_inputs, fmi_type: str = "cs") -> str:
    import fmpy
    variables = {v.name: v for v in md.modelVariables}
    name = md.modelName
    native = _native_kernels(fmu)
    here = f"CPython {platform.python_version()}"
    me = fmi_type == "me"
    call_extra = f'fmi_type="ModelExchange", relative_tolerance={REL_TOL["me"]!r}, ' if me else ""
    lines = [f"# {name}", "", f"{md.description or name}", "",
             f"Exported by fmu_mb {__version__} (generation tool: {md.generationTool}), FMI {md.fmiVersion} "
             f"{'Model Exchange' if me else 'co-simulation'}, {PLATFORMS[md.fmiVersion]}.", "",
             "## Scenario", "", scenario.about, "",
             f"Start {start:g} s, stop {stop:g} s. Every parameter keeps its default (start value in the "
             "modelDescription): the cross-check importers set no start values.", ""]
    if has_inputs:
        lines += [f"Inputs (`{name}_in.csv`, every input of the FMU; linear interpolation, a discontinuity is "
                  "two rows at one time):", ""]
        for v in md.modelVariables:
            if v.causality != "input":
                continue
            s = scenario.inputs.get(v.name)
            lines.append(f"* `{v.name}`: " + (s.text(_unit(v)) if s is not None else f"held at its start value "
                                              f"{float(v.start or 0):g}{_u(_unit(v))}"))
        lines.append("")
    lines += [f"## Outputs (`{name}_ref.csv`)", "", "| name | unit | description |", "|---|---|---|"]
    lines += [f"| `{n}` | {_unit(variables[n])} | {variables[n].description or ''} |" for n in scenario.outputs]
    lines += ["", "## How the reference was produced", "",
              f"`fmpy.simulate_fmu(\"{name}.fmu\", validate=False, {call_extra}step_size={step!r}, "
              f"stop_time={stop!r}, input=fmpy.util.read_csv(\"{name}_in.csv\"), output=[...])`" if has_inputs else
              f"`fmpy.simulate_fmu(\"{name}.fmu\", validate=False, {call_extra}step_size={step!r}, "
              f"stop_time={stop!r}, output=[...])`",
              f"with FMPy {fmpy.__version__}, numpy {np.__version__}, {here} on {platform.system()} "
              f"{platform.machine()}" + (f" (FMPy's CVODE on the Model Exchange interface, relative tolerance "
                                          f"{REL_TOL['me']:g} = the `RelTol` of `{name}_ref.opt`, output every "
                                          f"{step:g} s = its `StepSize`). {rows} rows. " if me else
                                          f" — the call `python -m fmpy.cross_check` makes. {rows} rows. For a "
              "co-simulation FMU FMPy takes the communication step from the DefaultExperiment (its "
              f"stepSize, doubled until at most 1000 steps fit): {step:g} s, the `StepSize` of `{name}_ref.opt`; "
              "inputs are set at the start of each step and held over it, and at a discontinuity of the "
              "input FMPy ends the step there (an extra row). ") + "Values are written in their shortest "
              "round-trip form (up to 17 significant digits): the CSV holds the doubles exactly.", "",
              (f"The importer's solver integrates the FMU's continuous states; its own solver settings "
               f"({_solver(variables)}) apply to its co-simulation interface only." if me else
               f"The FMU's internal solver: {_solver(variables)}. It has no error control and ignores `RelTol` "
               "(which the rules require in `_ref.opt`)."), "",
              "## Comparison", "",
              "Cross-check criterion: FMPy's `fmpy.cross_check.validate_result` (a band of ±10 % of each "
              "signal's range around the reference, widened by ±10 of 1000 resampled points in time; at most "
              "10 % of the samples outside).",
              f"Repeatability: the same FMU on the machine that produced the reference repeats it to "
              f"max |y − y_ref| ≤ {TIGHT:g} · (1 + range of y_ref) (checked by fmu_mb's tests; measured: "
              "bitwise): the internal step is fixed, the kernels are deterministic compiled code and the "
              "CSV is exact, so any difference there is a defect. Other machines were not tested; there "
              "the band criterion applies.", "",
              "## Platform requirement", ""]
    if not _python_fmu(fmu):
        lines += ["The FMU's binary is the FMU core and its model compiled to C (fmu_mb's native FMU: no Python): "
                  f"the importing machine needs {PLATFORMS[md.fmiVersion]} and its C library (libc, libm), nothing "
                  "else (rule 9.1.3).", ""]
        return "\n".join(lines)
    lines += ["The FMU is a C layer in front of pythonfmu's wrapper and runs the model in CPython. The importing "
              "machine needs linux x86-64 and " + f"CPython 3 (built and tested with {here})" +
              " as a shared library, with numpy importable: a Python host (FMPy) lends its own interpreter; "
              "otherwise the binary loads `$FMU_MB_LIBPYTHON`, else the build machine's libpython path, else "
              "`libpython3.so`, and points `PYTHONPATH` at the build environment's site-packages if that exists "
              "and `PYTHONPATH` is unset." +
              (" The model's kernels come compiled ahead of time as a C library (fmu_mb's kernel library, "
               "generic x86-64, any Python version); the FMU falls back to numba's JIT, which then needs numba "
               "and scipy too, only where that library cannot load." if native else
               " The FMU was built without its compiled kernel library: it runs numba's JIT, so the importing "
               "Python needs numba and scipy too.") +
              " The FMU carries fmu_mb's Python sources and pythonfmu's package, not Python or numpy: it does "
              "not meet rule 9.1.3's \"without additional requirements\".", ""]
    return "\n".join(lines)

