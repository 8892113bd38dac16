"""One run of a study, in a worker process: extract the FMU once, reuse its instance, step, record.

This module imports neither fmu_mb nor numba at module level (the study ships it to Dask workers by
value, ``cloudpickle.register_pickle_by_value``), so a worker process holds only the FMU's own
core: an FMU built by another fmu_mb version runs as well as one of this checkout.

Per worker process, each FMU (named by the digest of its bytes) is extracted once into the temporary
directory and instantiated once; later runs call fmi2Reset and set their start values again (a reset
instance gives the bits of a fresh one: tests/sweep/test_sweep.py). A run that fails — any FMI call
answering fmi2Error or worse — is returned with its status, the FMU's logged error message and the
time reached; its instance is freed and the next run makes a new one.
"""
from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
import types
import zipfile

import numpy as np

_STATUS = {0: "ok", 1: "warning", 2: "discard", 3: "error", 4: "fatal", 5: "pending"}
_CACHE = "_fmu_mb_sweep_worker_cache"


def _cache():
    """Per-process state (survives however the task function reached the worker)."""
    mod = sys.modules.get(_CACHE)
    if mod is None:
        mod = types.ModuleType(_CACHE)
        mod.dirs, mod.instances = {}, {}
        sys.modules[_CACHE] = mod
    return mod


def _extract(data: bytes, digest: str) -> str:
    c = _cache()
    d = c.dirs.get(digest)
    if d and os.path.isdir(d):
        return d
    root = os.path.join(tempfile.gettempdir(), f"fmu_mb-sweep-{os.getuid() if hasattr(os, 'getuid') else 0}")
    os.makedirs(root, exist_ok=True)
    d = os.path.join(root, digest[:16])
    if not os.path.isfile(os.path.join(d, "modelDescription.xml")):
        stage = tempfile.mkdtemp(prefix=".x-", dir=root)
        path = os.path.join(stage, "model.fmu")
        with open(path, "wb") as f:
            f.write(data)
        with zipfile.ZipFile(path) as z:
            z.extractall(os.path.join(stage, "x"))
        try:
            os.replace(os.path.join(stage, "x"), d)
        except OSError:                               # extracted meanwhile by another worker
            pass
        shutil.rmtree(stage, ignore_errors=True)
    c.dirs[digest] = d
    return d


class _Instance:
    """An FMU's co-simulation instance (FMI 2.0: FMU2Slave; FMI 3.0: FMU3Slave) with its log kept (status,
    message)."""

    def __init__(self, unzipdir: str):
        from fmpy import read_model_description
        from fmpy.fmi1 import calloc, free
        from fmpy.fmi2 import (
            FMU2Slave,
            fmi2CallbackAllocateMemoryTYPE,
            fmi2CallbackFreeMemoryTYPE,
            fmi2CallbackFunctions,
            fmi2CallbackLoggerTYPE,
        )
        from ..runs import variables
        self.md = read_model_description(os.path.join(unzipdir, "modelDescription.xml"))
        self.var = variables(self.md)             # (an FMI 3.0 array's elements by name too)
        self.log = []
        self.fmi3 = str(self.md.fmiVersion).startswith("3")
        if self.fmi3:
            self._instantiate3(unzipdir)
            return

        def logger(env, instance, status, category, message):
            self.log.append((int(status), (message or b"").decode("utf-8", "replace")))

        cb = fmi2CallbackFunctions()
        cb.logger = fmi2CallbackLoggerTYPE(logger)
        cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        self._cb = cb
        self.fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=unzipdir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName="sweep")
        self._instantiate("fmi2Instantiate", lambda: self.fmu.instantiate(callbacks=cb, loggingOn=False))

    def _instantiate(self, what: str, call) -> None:
        try:
            call()
        except Exception as exc:  # noqa: BLE001 — fmpy raises a bare Exception here
            why = "; ".join(m for s, m in self.log if s >= 2)
            raise RuntimeError(f"{what} failed{': ' + why if why else ''}") from exc
        self.used = False

    def _instantiate3(self, unzipdir: str) -> None:
        from fmpy.fmi3 import FMU3Slave

        def logger(env, status, category, message):
            self.log.append((int(status), (message or b"").decode("utf-8", "replace")))
        self.fmu = FMU3Slave(guid=self.md.guid, unzipDirectory=unzipdir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName="sweep")
        self._instantiate("fmi3InstantiateCoSimulation", lambda: self.fmu.instantiate(loggingOn=False, logMessage=logger))

    def start(self, start: float, stop: float, values: dict) -> None:
        """Into initialization mode at ``start`` with ``values`` set (an FMI 3.0 FMU's structural parameters first,
        in configuration mode)."""
        if self.fmi3:
            structural = {n: x for n, x in values.items() if self.var[n].causality == "structuralParameter"}
            if structural:
                self.fmu.enterConfigurationMode()
                for name, value in structural.items():
                    self.set(name, value)
                self.fmu.exitConfigurationMode()
            self.fmu.enterInitializationMode(startTime=start, stopTime=stop)
            values = {n: x for n, x in values.items() if n not in structural}
        else:
            self.fmu.setupExperiment(startTime=start, stopTime=stop)
            self.fmu.enterInitializationMode()
        for name, value in values.items():
            self.set(name, value)

    def reader(self, names: list):
        """A function returning the values of the Real variables ``names`` (FMI 3.0: array elements among them, read
        with their arrays in one call)."""
        if not names:
            return lambda: []
        if not self.fmi3:
            vrs = [self.var[n].valueReference for n in names]
            return lambda: self.fmu.getReal(vrs)
        from ..runs import element_index, size
        arrays = list(dict.fromkeys(self.var[n] for n in names))
        first, total = {}, 0
        for v in arrays:
            first[v.name], total = total, total + size(v)
        at = [first[self.var[n].name] + (element_index(self.var[n], n) or 0) for n in names]
        vrs = [v.valueReference for v in arrays]
        return lambda: (lambda got: [got[i] for i in at])(self.fmu.getFloat64(vrs, total))

    def set(self, name: str, value) -> None:
        v = self.var[name]
        f, vr = self.fmu, [v.valueReference]
        if self.fmi3 and getattr(v, "shape", None):        # an FMI 3.0 array (Float64): an element, or all of it
            from ..runs import element_index, size
            k = element_index(v, name)
            if k is None:
                values = [float(x) for x in (value.split() if isinstance(value, str) else value)]
            else:
                values = f.getFloat64(vr, size(v))
                values[k] = float(value)
            f.setFloat64(vr, values)
            return
        if v.type in ("Real", "Float64"):
            f.setFloat64(vr, [float(value)]) if self.fmi3 else f.setReal(vr, [float(value)])
        elif v.type == "Enumeration" or v.type.startswith(("Int", "UInt")) or v.type == "Integer":
            if isinstance(value, str) and v.type == "Enumeration":     # an item's name ("stribeck")
                codes = {item.name: int(item.value) for item in v.declaredType.items}
                if value not in codes:
                    raise ValueError(f"{name} = {value!r}: not one of {', '.join(codes)}")
                value = codes[value]
            if not self.fmi3:
                f.setInteger(vr, [int(value)])
            elif v.type == "Enumeration":
                f.setInt64(vr, [int(value)])
            else:
                getattr(f, f"set{v.type}")(vr, [int(value)])
        elif v.type == "Boolean":
            f.setBoolean(vr, [bool(value)])
        else:
            f.setString(vr, [str(value)])

    def free(self) -> None:
        try:
            self.fmu.freeInstance()
        except Exception:  # noqa: BLE001 — an instance in error may refuse; the process keeps running
            pass


def _instance(unzipdir: str, digest: str, fresh: bool = False) -> _Instance:
    c = _cache()
    if fresh:
        _drop(digest)
    inst = c.instances.get(digest)
    if inst is not None:
        inst.fmu.reset()
        inst.log.clear()
        return inst
    inst = _Instance(unzipdir)
    c.instances[digest] = inst
    return inst


def _drop(digest: str) -> None:
    inst = _cache().instances.pop(digest, None)
    if inst is not None:
        inst.free()


def run(fmu: bytes, digest: str, task: dict) -> dict:
    """Run ``task`` (fmu_mb.sweep.study: key, values, inputs, table, start, stop, step, outputs) on
    the FMU of bytes ``fmu``. Returns {'key', 'status', 'message', 't_end', 'wall', 'time': array,
    'outputs': {name: array}} (the samples up to the failure if the run failed)."""
    from fmpy.fmi1 import FMICallException
    t_wall = time.perf_counter()
    out = {"key": task["key"], "status": "ok", "message": "", "t_end": task["start"],
           "time": np.zeros(0), "outputs": {}}
    try:
        inst = _instance(_extract(fmu, digest), digest, task.get("fresh", False))
    except Exception as exc:  # noqa: BLE001 — reported as the run's failure, the study goes on
        out.update(status="fatal", message=str(exc))
        out["wall"] = time.perf_counter() - t_wall
        return out
    names = task["outputs"]                           # checked against the FMU by the study (study._tasks)
    table = task["table"]
    tab_inputs = [k for k in (table or {}) if k != "time"]
    read = inst.reader(names)
    start, stop, h = task["start"], task["stop"], task["step"]
    n = max(1, int(math.ceil((stop - start) / h - 1e-9)))
    times = np.empty(n + 1)
    values = np.full((n + 1, len(names)), np.nan)
    k = 0
    t = start
    try:
        f = inst.fmu
        inst.start(start, stop, {**task["values"], **task["inputs"]})
        for name in tab_inputs:
            inst.set(name, float(np.interp(start, table["time"], table[name])))
        f.exitInitializationMode()
        times[0], values[0] = start, read()
        for k in range(1, n + 1):
            t_next = min(start + k * h, stop)
            for name in tab_inputs:
                inst.set(name, float(np.interp(t, table["time"], table[name])))
            f.doStep(t, t_next - t)
            t = t_next
            times[k], values[k] = t, read()
        k = n + 1
        f.terminate()
        if any(s == 1 for s, _ in inst.log):
            out.update(status="warning", message=next(m for s, m in inst.log if s == 1))
    except FMICallException as exc:
        errors = [m for s, m in inst.log if s >= 3]
        out.update(status=_STATUS.get(exc.status, str(exc.status)),
                   message=(errors[-1] if errors else str(exc)))
        _drop(digest)
    except Exception as exc:  # noqa: BLE001 — a broken FMU must not stop the study
        out.update(status="fatal", message=f"{type(exc).__name__}: {exc}")
        _drop(digest)
    out["t_end"] = float(t)
    out["time"] = times[:k]
    out["outputs"] = {name: values[:k, i] for i, name in enumerate(names)}
    out["wall"] = time.perf_counter() - t_wall
    return out
