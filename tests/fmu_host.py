"""Helpers for driving fmu_mb FMUs through FMPy's low-level FMI 2.0 API in tests."""
from __future__ import annotations

import shutil

from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException, calloc, free
from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                       fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)


class Instance:
    """One FMU instance with its log messages collected (status, category, text)."""

    def __init__(self, fmu_path, name="inst", unzipdir=None):
        self.md = read_model_description(str(fmu_path))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.var = {v.name: v for v in self.md.modelVariables}
        self._own_dir = unzipdir is None
        self.dir = unzipdir or extract(str(fmu_path))
        self.messages = []

        def log(env, instance, status, category, message):
            self.messages.append((status, category.decode() if category else "", message.decode()))

        self._cb = fmi2CallbackFunctions()
        self._cb.logger = fmi2CallbackLoggerTYPE(log)
        self._cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        self._cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        self.fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName=name)
        try:
            self.fmu.instantiate(callbacks=self._cb, loggingOn=True)
        except Exception as exc:
            raise RuntimeError(f"fmi2Instantiate of {fmu_path} failed; log: {self.messages}") from exc

    def init(self, **params):
        self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()
        self.set(**params)
        self.fmu.exitInitializationMode()
        return self

    def set(self, **values):
        for name, value in values.items():
            name = name.replace("__", ".")
            t = self.var[name].type
            if t == "Real":
                self.fmu.setReal([self.vr[name]], [float(value)])
            elif t in ("Integer", "Enumeration"):            # FMI 2.0: enumerations are fmi2Integer
                self.fmu.setInteger([self.vr[name]], [int(value)])
            else:
                self.fmu.setBoolean([self.vr[name]], [bool(value)])

    def get(self, *names):
        return self.fmu.getReal([self.vr[n] for n in names])

    def errors(self):
        return [m for s, c, m in self.messages if s >= 3]

    def call_status(self, fn, *args):
        """Status code of an FMI call: 0 if it returned fmi2OK/fmi2Warning, else the error status."""
        try:
            fn(*args)
            return 0
        except FMICallException as exc:
            return exc.status

    def close(self):
        try:
            self.fmu.terminate()
        except FMICallException:
            pass
        self.fmu.freeInstance()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
