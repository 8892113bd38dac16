"""The wall time of an FMU's steps through FMPy, with nothing but FMPy and numpy imported: a Python FMU
starts its own fmu_mb, and a process that has imported another fmu_mb cannot load it (bench/ab_step_cost.py
times FMUs of two commits; bench/realtime.py and bench/native_fmu.py use it too)."""
from __future__ import annotations

import gc
import time

import numpy as np


def step_times(md, unzipped: str, params: dict, seconds: float, comm: float = 0.01,
               collect: bool = True) -> np.ndarray:
    """Wall time (s) of every doStep + getReal of all Real outputs over ``seconds``, the first
    one included, of the FMU ``md`` (FMPy's model description) extracted in ``unzipped``, with
    ``params`` ({name: value}, Integer, Enumeration (by code) or Real parameters) set before initialization; Python's
    garbage collector disabled while stepping unless ``collect``."""
    from fmpy.fmi2 import FMU2Slave
    var = {v.name: v for v in md.modelVariables}
    outs = [v.valueReference for v in md.modelVariables if v.causality == "output" and v.type == "Real"]
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="detail")
    s.instantiate()
    for name, value in params.items():
        v = var[name]
        (s.setInteger if v.type in ("Integer", "Enumeration") else s.setReal)([v.valueReference], [value])
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    n = max(1, int(round(seconds / comm)))
    out = np.empty(n)
    was = gc.isenabled()
    if not collect:
        gc.disable()
    try:
        for k in range(n):
            t0 = time.perf_counter()
            s.doStep(k * comm, comm)
            s.getReal(outs)
            out[k] = time.perf_counter() - t0
    finally:
        if was:
            gc.enable()
        s.terminate()
        s.freeInstance()
    return out
