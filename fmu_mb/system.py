"""Systems of FMUs: components, their parameter values and connections, and the Python master that runs them the
way an SSP master does (fmu_mb.ssp writes the same system as an ``.ssp`` for FMPy's ``fmpy.ssp`` and OSP libcosim).

The exchange (:func:`run`) is what both of those masters do, so the three give the same numbers:

* every connection holds a value, 0.0 at the start;
* each step, every component takes its connected inputs from the connections, steps from t to t + h, and its
  outputs are read; then every connection takes its start connector's new value (Jacobi: an output reaches an
  input one step later, a chain of k components k steps later).

The two SSP masters differ in one thing only: before the first step, FMPy holds every connection at 0.0, libcosim at
the outputs the components give after their initialization. A system whose result must not depend on the master
therefore lets nothing that differs reach a result: :func:`crane_closed_loop` enables its controller's drives after
the first exchanges (PD controller ``t_enable``) and starts its pulse after the first step.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Component:
    """One FMU instance of a system: ``name``, its ``fmu`` file, the ``parameters`` set before its initialization
    ({variable: value}: an int for an Integer or Enumeration variable, a float for a Real), and the unconnected
    ``outputs`` a result shows (declared as output connectors in the .ssp)."""
    name: str
    fmu: Path
    parameters: dict = field(default_factory=dict)
    outputs: tuple = ()


@dataclass(frozen=True)
class Connection:
    """An output ``start`` ("component.variable") feeding an input ``end``."""
    start: str
    end: str

    def ends(self):
        return [tuple(x.split(".", 1)) for x in (self.start, self.end)]


@dataclass
class System:
    """Components, connections and the default experiment (a fixed exchange ``step`` and ``stop_time``, s)."""
    name: str
    description: str
    components: list
    connections: list
    step: float
    stop_time: float

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(f"system {self.name} has no component {name!r}: {', '.join(c.name for c in self.components)}")

    def connectors(self, name: str) -> dict:
        """{variable: "input" | "output"} of component ``name``: its connected variables and recorded outputs."""
        out = {}
        for con in self.connections:
            (sc, sv), (ec, ev) = con.ends()
            if sc == name:
                out[sv] = "output"
            if ec == name:
                out[ev] = "input"
        for v in self.component(name).outputs:
            out.setdefault(v, "output")
        return out

    def check(self) -> None:
        """Every connection joins an existing output to an existing input, and every input is fed once."""
        names = {c.name for c in self.components}
        fed = set()
        for con in self.connections:
            for comp, _ in con.ends():
                if comp not in names:
                    raise ValueError(f"connection {con.start} -> {con.end}: no component {comp!r} in {self.name}")
            if con.end in fed:
                raise ValueError(f"input {con.end} is fed by two connections")
            fed.add(con.end)


class _Instance:
    """One component in the master (FMPy's FMI 2.0 co-simulation API), its variables by name."""

    def __init__(self, comp: Component, start_time: float):
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Slave
        self.md = read_model_description(str(comp.fmu))
        self.vars = {v.name: v for v in self.md.modelVariables}
        for name in comp.parameters:
            if name not in self.vars:
                raise KeyError(f"{comp.fmu.name} has no variable {name!r} (component {comp.name})")
        self.dir = extract(str(comp.fmu))
        self.fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName=comp.name)
        self.fmu.instantiate()
        self.fmu.setupExperiment(startTime=start_time)
        for name, value in comp.parameters.items():          # before initialization, as fmpy.ssp does
            self.set([name], [value])
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()

    def refs(self, names):
        return [self.vars[n].valueReference for n in names]

    def set(self, names, values):
        by_type = {"Real": [], "Integer": [], "Boolean": []}
        for n, v in zip(names, values):
            kind = "Integer" if self.vars[n].type == "Enumeration" else self.vars[n].type
            if kind not in by_type:
                raise ValueError(f"{n}: a {kind} variable; a system sets Real, Integer and Boolean ones")
            by_type[kind].append((n, v))
        for kind, pairs in by_type.items():
            if pairs:
                refs = self.refs(n for n, _ in pairs)
                if kind == "Real":
                    self.fmu.setReal(refs, [float(v) for _, v in pairs])
                elif kind == "Integer":
                    self.fmu.setInteger(refs, [int(v) for _, v in pairs])
                else:
                    self.fmu.setBoolean(refs, [bool(v) for _, v in pairs])

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


def run(system: System, stop_time: float | None = None, record=None) -> dict:
    """Run ``system`` from 0 to ``stop_time`` (default its own) with exchanges every ``system.step`` (module
    docstring). Returns {"time": (n + 1,), component: {variable: (n + 1,)}}: every connector's value and the
    Real outputs named in ``record`` ({component: [variables]}, or "all" for every Real output) at 0 (after
    initialization) and after each step."""
    system.check()
    T = system.stop_time if stop_time is None else stop_time
    h = system.step
    n = int(round(T / h))
    inst = {}
    try:
        for c in system.components:
            inst[c.name] = _Instance(c, 0.0)
        inputs, outputs, shown = {}, {}, {}
        for c in system.components:
            conn = system.connectors(c.name)
            inputs[c.name] = [v for v, k in conn.items() if k == "input"]
            outs = [v for v, k in conn.items() if k == "output"]
            extra = (record or {}).get(c.name, ())
            if extra == "all":
                extra = [v.name for v in inst[c.name].md.modelVariables if v.causality == "output" and v.type == "Real"]
            shown[c.name] = list(dict.fromkeys([*outs, *extra]))
            outputs[c.name] = outs
        value = {f"{c}.{v}": 0.0 for c, outs in outputs.items() for v in outs}
        log = {c.name: {v: np.zeros(n + 1) for v in [*inputs[c.name], *shown[c.name]]} for c in system.components}
        feeds = [(con.start, con.end) for con in system.connections]
        for name, i in inst.items():
            if shown[name]:
                for v, x in zip(shown[name], i.fmu.getReal(i.refs(shown[name]))):
                    log[name][v][0] = x
        for k in range(n):
            t = k * h
            given = {end: value[start] for start, end in feeds}
            for name, i in inst.items():
                ins = inputs[name]
                if ins:
                    vals = [given[f"{name}.{v}"] for v in ins]
                    i.set(ins, vals)
                    for v, x in zip(ins, vals):
                        log[name][v][k + 1] = x
                i.fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
                if shown[name]:
                    for v, x in zip(shown[name], i.fmu.getReal(i.refs(shown[name]))):
                        log[name][v][k + 1] = x
            for name in inst:
                for v in outputs[name]:
                    value[f"{name}.{v}"] = log[name][v][k + 1]
    finally:
        for i in inst.values():
            i.close()
    return {"time": np.arange(n + 1) * h, **log}


# ------------------------------------------------------------------------------- the quick start's closed loop
CRANE_JOINTS = ("column", "jib", "arm")
#: the plant of the quick start: torque mode, flexible jib, LuGre friction (sprung base: the default)
CRANE_PLANT = {"model.mode": 1, "model.link": 1, "model.friction": 2}
CRANE_REFERENCE = {"model.mode": 0, "model.base": 1}       # programmed, rigid base (rigid jib, no friction)
PULSE, PULSE_TIME = -4000.0, 0.1          # N·m on the column for 0.1 s (paper 001 eq. 21)


def mass_matrix(cm, q) -> np.ndarray:
    """M(q) of a compiled mechanism (kernels.crba), by the native kernel library where a build has put it
    (fmu_mb.native: no numba compile, which took 22 s on a first run), else by numba's JIT kernels."""
    from .backend import kernel_set
    from .model import make_data
    from .native import fallback_dir
    k = kernel_set("auto", (fallback_dir(),))[0]
    data = make_data(cm.model)
    m, d = k.handles(cm.model, data)
    k.forward_kinematics(m, d, np.ascontiguousarray(q, dtype=float), np.zeros(cm.model.nv))
    k.crba(m, d)
    return data.M.copy()


def pd_channel(i: int, joint: str) -> list:
    """The connections of the PD controller's channel ``i`` around ``joint``: the reference's and the plant's
    coordinate and rate in, the command out to the plant's drive."""
    return [Connection(f"reference.{joint}.q", f"controller.q_ref[{i}]"),
            Connection(f"reference.{joint}.qd", f"controller.qd_ref[{i}]"),
            Connection(f"plant.{joint}.q", f"controller.q[{i}]"),
            Connection(f"plant.{joint}.qd", f"controller.qd[{i}]"),
            Connection(f"controller.tau[{i}]", f"plant.{joint}.tau_drive")]


def gain_values(Kp, Kd) -> dict:
    """The PD controller's parameter values {"Kp[i]": ..., "Kd[i]": ...} of per-channel gains."""
    return {**{f"Kp[{i + 1}]": float(k) for i, k in enumerate(Kp)}, **{f"Kd[{i + 1}]": float(k) for i, k in enumerate(Kd)}}


def crane_gains(omega=6.0, zeta=1.0):
    """Kp, Kd of the column, jib and arm from the rigid crane's mass-matrix diagonal at its start."""
    from . import registry
    from .model import compile_mechanism
    cm = compile_mechanism(registry.build("crane", mode="torque"))
    M = np.diag(mass_matrix(cm, cm.q0))
    m = np.array([M[cm.joint(j).dofadr] for j in CRANE_JOINTS])
    return omega ** 2 * m, 2 * zeta * omega * m


def crane_closed_loop(fmu_dir, step: float = 2.5e-4, stop_time: float = 5.0, omega: float = 6.0,
                      plant_options: dict | None = None, crane_fmu=None) -> System:
    """The quick start's closed loop (fmu_mb.demo): a reference crane (programmed mode, rigid) gives joint
    references and required drives to the PD controller, which drives the full-detail plant crane; the excitation
    adds paper 001's −4000 N·m column pulse (eq. 21) to the reference's column drive and to the column's
    feed-forward. Gains from the rigid crane's mass-matrix diagonal (:func:`crane_gains`). The FMUs from
    ``fmu_dir`` (crane.fmu unless ``crane_fmu``, pd_controller.fmu, excitation.fmu).

    Master-independent start (module docstring): the pulse runs over [h/2, h/2 + 0.1 s), i.e. from the second
    step for 0.1 s; the drives are enabled at 2.5 h, once the controller's inputs are the components' outputs after
    a step in every master (the feed-forward's path through the excitation takes two exchanges)."""
    fmu_dir = Path(fmu_dir)
    crane = Path(crane_fmu) if crane_fmu else fmu_dir / "crane.fmu"
    gains = gain_values(*crane_gains(omega))
    plant_values = dict(CRANE_PLANT if plant_options is None else plant_options)
    components = [
        Component("reference", crane, dict(CRANE_REFERENCE), outputs=tuple(f"E.r[{k}]" for k in (1, 2, 3))),
        Component("excitation", fmu_dir / "excitation.fmu",
                  {**{f"amplitude[{i}]": PULSE for i in (1, 2)}, **{f"start[{i}]": 0.5 * step for i in (1, 2)},
                   **{f"duration[{i}]": PULSE_TIME for i in (1, 2)}}),
        Component("controller", fmu_dir / "pd_controller.fmu", {**gains, "t_enable": 2.5 * step}),
        Component("plant", crane, plant_values,
                  outputs=(*(f"E.r[{k}]" for k in (1, 2, 3)), *(f"{j}.tau_friction" for j in CRANE_JOINTS),
                           "jib.deflection[2]", "jib.deflection[3]", "energy.dissipated")),
    ]
    cons = [Connection("excitation.y[2]", "reference.column.tau_drive"),
            Connection("reference.column.tau_required", "excitation.u[1]"),
            Connection("excitation.y[1]", "controller.tau_ff[1]")]
    for i, j in enumerate(CRANE_JOINTS, start=1):
        cons += pd_channel(i, j)
        if i > 1:
            cons.append(Connection(f"reference.{j}.tau_required", f"controller.tau_ff[{i}]"))
    return System("crane_closed_loop",
                  "paper 001's crane under a PD controller with feed-forward from a reference crane (fmu_mb quick "
                  "start): reference (programmed, rigid), PD controller, plant (torque mode, flexible jib, LuGre, "
                  "sprung base), the column pulse from the excitation", components, cons, step, stop_time)


# ------------------------------------------------------------------------------------- any mechanism's closed loop
def mode_codes(module) -> dict:
    """{"programmed": code, "torque": code} of a model module's ``mode`` option; KeyError if it has none."""
    opt = getattr(module, "OPTIONS", {}).get("mode")
    values = tuple(getattr(opt, "values", ()))
    if "programmed" not in values or "torque" not in values:
        raise KeyError("mode")
    return {v: values.index(v) for v in ("programmed", "torque")}


def pd_gains(module, path, joints, omega: float, zeta: float = 1.0):
    """Kp = ω² M_jj, Kd = 2ζω M_jj of ``joints`` from the mass-matrix diagonal of the model in torque mode at its
    start (its defaults otherwise), the rule of the quick start's controller."""
    from .model import compile_mechanism
    from .registry import build_checked
    cm = compile_mechanism(build_checked(module, path, mode="torque"))
    M = np.diag(mass_matrix(cm, cm.q0))
    m = np.array([M[cm.joint(j).dofadr] for j in joints])
    return omega ** 2 * m, 2 * zeta * omega * m


def driven_joints(fmu) -> list:
    """The joints of a mechanism FMU a joint controller can close a loop around: a ``<joint>.tau_drive`` input
    and ``<joint>.q``, ``<joint>.qd`` outputs."""
    from fmpy import read_model_description
    md = read_model_description(str(fmu), validate=False)
    names = {v.name: v.causality for v in md.modelVariables}
    return [n[:-len(".tau_drive")] for n, c in names.items() if c == "input" and n.endswith(".tau_drive")
            and names.get(n[:-len(".tau_drive")] + ".q") == "output"
            and names.get(n[:-len(".tau_drive")] + ".qd") == "output"]


def mechanism_closed_loop(model, fmu, fmu_dir, step: float = 1e-3, stop_time: float = 5.0, omega: float = 10.0,
                          plant_options: dict | None = None) -> System:
    """The quick start's structure for any mechanism with a programmed mode: the mechanism FMU ``fmu`` as the
    reference (``model.mode`` = programmed, its other options at their defaults) giving joint references and
    required drives to the PD controller (pd_controller.fmu in ``fmu_dir``, one channel per driven joint, gains
    :func:`pd_gains`), which drives the same FMU as the plant (torque mode, ``plant_options``). Drives enabled
    at 1.5 steps (module docstring). ``model``: the mechanism's name or model file (for its mass matrix)."""
    from .registry import load_file, locate
    name, path = locate(model)
    module = load_file(path, name)
    try:
        codes = mode_codes(module)
    except KeyError:
        raise ValueError(f"{name} has no programmed mode (an option mode with programmed and torque) to be the "
                         "reference model of its closed loop") from None
    joints = driven_joints(fmu)
    if not joints:
        raise ValueError(f"{Path(fmu).name} has no driven joint (a <joint>.tau_drive input with <joint>.q and "
                         "<joint>.qd outputs) to close a loop around")
    gains = gain_values(*pd_gains(module, path, joints, omega))
    components = [Component("reference", Path(fmu), {"model.mode": codes["programmed"]}),
                  Component("controller", Path(fmu_dir) / "pd_controller.fmu", {**gains, "t_enable": 1.5 * step}),
                  Component("plant", Path(fmu), {**(plant_options or {}), "model.mode": codes["torque"]})]
    from fmpy import read_model_description
    has = {v.name for v in read_model_description(str(fmu), validate=False).modelVariables}
    cons = []
    for i, j in enumerate(joints, start=1):
        cons += pd_channel(i, j)
        if f"{j}.tau_required" in has:
            cons.append(Connection(f"reference.{j}.tau_required", f"controller.tau_ff[{i}]"))
    return System(f"{name}_closed_loop", f"{name} under a PD controller with feed-forward from a reference {name} "
                  "(programmed mode) (fmu_mb)", components, cons, step, stop_time)
