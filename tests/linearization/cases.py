"""Mechanisms and states the linearization tests share: every model at its defaults and at its most
detailed options, run from the FMU's start (its static start, method and step) with a drive."""
from __future__ import annotations

import numpy as np

from fmu_mb import registry
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import Simulator

#: the most detailed options of every model (its model file's MOST_DETAILED)
DETAIL = {name: registry.most_detailed(name) for name in registry.available()}
CASES = [(name, detail) for name in registry.available() for detail in (False, True)]
IDS = [f"{name}-{'detail' if detail else 'defaults'}" for name, detail in CASES]


def start(name: str, detail: bool) -> Simulator:
    """A Simulator of the model as its FMU starts it, the drive of :func:`drive` held."""
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    options = DETAIL[name] if detail else {}
    cm = compile_mechanism(mod.build(**options))
    sim = Simulator(cm, h=meta.get("step_size", 1e-3), method=auto_method(mod, options))
    sim.initialize(static=meta.get("static_start", False))
    sim.tau_drive[:] = drive(sim)
    return sim


def drive(sim: Simulator) -> np.ndarray:
    """A drive that moves each mechanism its own way: the crane's column 10 % of the paper's pulse,
    the five-axis tree two axes, the others (programmed or closed loops) small torques."""
    cm = sim.cm
    tau = np.zeros(cm.nv)
    act = cm.actuated_dofs
    if cm.name == "crane":
        tau[cm.dof("column.q")] = -400.0
    elif cm.name == "five_axis":
        tau[act[0]], tau[act[-1]] = 2.0, -0.5
    else:
        tau[act] = np.linspace(0.5, -0.5, act.size)
    return tau
