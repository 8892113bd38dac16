"""FMI 3.0 cases, each run in a fresh process by tests/fmi/test_fmi3.py:

    python -m tests.fmi3_cases <case> '<json arguments>'

prints one line ``RESULT <json>`` and exits (a crash of the host shows as the process's return code). The host is
FMPy's FMI 3.0 layer (fmpy.fmi3: ctypes over the FMU's binary); of fmu_mb this process imports only the naming
rule of the arrays' elements (fmu_mb.fmi.arrays3.element_names: the FMI 2.0 names).
"""
from __future__ import annotations

import json
import math
import os
import sys
from ctypes import c_bool, c_double, c_int32, c_size_t, c_uint32, cast

from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import (FMU3Model, FMU3Slave, fmi3ClockUpdateCallback, fmi3IntermediateUpdateCallback,
                       fmi3LockPreemptionCallback, fmi3LogMessageCallback, fmi3UnlockPreemptionCallback)

from fmu_mb.fmi.arrays3 import element_names

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Host:
    """One FMI 3.0 instance (co-simulation or Model Exchange) whose log messages are kept."""

    def __init__(self, dir, me=False, name="fmi3", instantiate=True, **kwargs):
        self.md = read_model_description(dir)
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.var = {v.name: v for v in self.md.modelVariables}
        self.messages = []
        cls = FMU3Model if me else FMU3Slave
        ident = (self.md.modelExchange if me else self.md.coSimulation).modelIdentifier
        self.f = cls(guid=self.md.guid, unzipDirectory=dir, modelIdentifier=ident, instanceName=name)
        self.dir = dir
        if instantiate:
            self.f.instantiate(logMessage=self.logger, **kwargs)

    def logger(self, env, status, category, message):
        self.messages.append((int(status), message.decode("utf-8", "replace")))

    def call(self, fn, *args):
        """(status, the messages the call logged)."""
        before = len(self.messages)
        try:
            fn(*args)
            status = 0
        except FMICallException as exc:
            status = exc.status
        return status, [m for _, m in self.messages[before:]]

    def float64_outputs(self):
        """The Float64 outputs (arrays among them) and their number of values."""
        outputs = [v for v in self.md.modelVariables if v.causality == "output" and v.type == "Float64"]
        return outputs, sum(size(v) for v in outputs)

    def outputs(self):
        """The values of every Float64 output (an array's elements row-major), hex."""
        outputs, n = self.float64_outputs()
        return [float(x).hex() for x in self.f.getFloat64([v.valueReference for v in outputs], n)]

    def output_names(self):
        """The names of the values :meth:`outputs` gives: the FMI 2.0 FMU's (fmu_mb.fmi.arrays3.element_names)."""
        return [n for v in self.float64_outputs()[0] for n in element_names(v.name, v.shape or ())]


def size(v):
    return int(math.prod(v.shape or ()))


def _refused(h, fn, *args):
    status, said = h.call(fn, *args)
    return {"status": status, "messages": said}


@case
def refusals(dir, input_name, int_name, enum_name, real_param, bad_value):
    """Every class of bad call on a co-simulation instance; what each answered and logged, and whether the
    outputs and time stayed bitwise as they were."""
    h = Host(dir)
    f, vr, out = h.f, h.vr, {}
    time_vr = vr["time"]
    out["step_before_init"] = _refused(h, f.doStep, 0.0, 0.01)
    out["get_before_init"] = _refused(h, f.getFloat64, [vr[input_name]])
    f.enterInitializationMode(startTime=0.0, stopTime=10.0)
    out["wrong_type_int"] = _refused(h, f.getFloat64, [vr[int_name]])
    out["wrong_type_enum"] = _refused(h, f.getInt32, [vr[enum_name]])
    out["unknown_vr"] = _refused(h, f.getFloat64, [time_vr + 7])
    values = (c_double * 2)()
    out["value_count"] = _refused(h, f.fmi3GetFloat64, f.component, (c_uint32 * 1)(vr[input_name]), 1, values, 2)
    out["set_time"] = _refused(h, f.setFloat64, [time_vr], [1.0])
    array = next(v for v in h.md.modelVariables if v.shape and v.causality == "output" and v.type == "Float64")
    out["array_value_count"] = _refused(h, f.fmi3GetFloat64, f.component, (c_uint32 * 1)(array.valueReference), 1,
                                        (c_double * 64)(), size(array) - 1)
    inside = min(set(range(time_vr)) - set(vr.values()))       # an array's element: no FMI 3.0 variable
    out["array_element"] = _refused(h, f.getFloat64, [inside])
    out["no_float32"] = _refused(h, f.getFloat32, [vr[input_name]])
    out["configuration"] = _refused(h, f.fmi3EnterConfigurationMode, f.component)
    f.exitInitializationMode()
    for k in range(5):
        f.doStep(k * 0.01, 0.01)
    before, t_before = h.outputs(), f.getFloat64([time_vr])[0]
    out["nan_input"] = _refused(h, f.setFloat64, [vr[input_name]], [math.nan])
    out["not_contiguous"] = _refused(h, f.doStep, 0.5, 0.01)
    out["negative_step"] = _refused(h, f.doStep, t_before, -0.01)
    out["after_stop"] = _refused(h, f.doStep, t_before, 20.0)
    out["set_parameter_now"] = _refused(h, f.setFloat64, [vr[real_param]], [bad_value])
    state = f.getFMUState()
    blob = bytearray(f.serializeFMUState(state))
    blob[len(blob) // 2] ^= 0x40
    out["forged_state"] = _refused(h, f.deserializeFMUState, bytes(blob))
    out["truncated_state"] = _refused(h, f.deserializeFMUState, bytes(blob[:40]))
    n = (c_size_t * 1)()
    derivs = (c_double * 4)()
    out["me_call_on_cs"] = _refused(h, f.fmi3GetContinuousStateDerivatives, f.component, derivs, 4)
    out["output_derivatives"] = _refused(h, f.fmi3GetOutputDerivatives, f.component, (c_uint32 * 1)(0), 1,
                                         (c_int32 * 1)(1), (c_double * 1)(), 1)
    out["enter_step_mode"] = _refused(h, f.fmi3EnterStepMode, f.component)
    t_last = (c_double * 1)()
    out["null_step_argument"] = _refused(h, f.fmi3DoStep, f.component, t_before, 0.01, False, None, (c_bool * 1)(),
                                         (c_bool * 1)(), t_last)
    kept = h.outputs() == before and f.getFloat64([time_vr])[0] == t_before
    f.setFMUState(state)                                    # (the state taken before the refusals)
    f.doStep(t_before, 0.01)
    event, terminate, early = (c_bool * 1)(), (c_bool * 1)(), (c_bool * 1)()
    status = f.fmi3DoStep(f.component, t_before + 0.01, 0.01, False, event, terminate, early, t_last)
    f.fmi3GetNumberOfContinuousStates(f.component, n)
    f.terminate()
    f.freeInstance()
    return {"cases": out, "kept": kept, "status_after": status, "last_successful": t_last[0],
            "t_expected": t_before + 0.02, "early": bool(early[0]), "n_states": int(n[0])}


@case
def parameters(dir, enum_name, enum_code, int_name, real_param, bad_value):
    """Options set as FMI 3.0 types (an Enumeration as Int64, a Count as Int32); a parameter out of its range
    refused at fmi3ExitInitializationMode and accepted when set back (initialization can be retried)."""
    h = Host(dir)
    f, vr = h.f, h.vr
    f.setInt64([vr[enum_name]], [enum_code])
    f.enterInitializationMode(startTime=0.0)
    enum_back = f.getInt64([vr[enum_name]])[0]
    int_back = f.getInt32([vr[int_name]])[0]
    good = f.getFloat64([vr[real_param]])[0]
    f.setFloat64([vr[real_param]], [bad_value])
    bad = _refused(h, f.exitInitializationMode)
    f.setFloat64([vr[real_param]], [good])
    retried = _refused(h, f.exitInitializationMode)
    f.doStep(0.0, 0.01)
    f.freeInstance()
    return {"enum_back": enum_back, "int_back": int_back, "bad": bad, "retried": retried}


@case
def instantiation(dir):
    """fmi3Instantiate* refusals (a wrong token, a resourcePath that is not the FMU's, NULL, event mode asked for,
    intermediate variables, scheduled execution) and an instance without a logger (no messages, no crash)."""
    h = Host(dir, instantiate=False)
    f, md, out = h.f, h.md, {}
    res = (os.path.join(dir, "resources") + os.sep).encode()
    log = fmi3LogMessageCallback(h.logger)
    ident = md.coSimulation.modelIdentifier

    def cs(token=md.guid.encode(), path=res, event=False, required=None, logger=log):
        before = len(h.messages)
        n = len(required or [])
        inst = f.fmi3InstantiateCoSimulation(b"x", token, path, False, False, event, False,
                                             (c_uint32 * max(n, 1))(*(required or [0])), n, None, logger,
                                             cast(None, fmi3IntermediateUpdateCallback))
        return bool(inst), [m for _, m in h.messages[before:]], inst

    for label, kwargs in (("token", dict(token=b"{not-this-one}")), ("path", dict(path=b"/nonexistent/dir/")),
                          ("null_path", dict(path=None)), ("event_mode", dict(event=True)),
                          ("intermediate", dict(required=[0]))):
        made, said, inst = cs(**kwargs)
        out[label] = {"made": made, "messages": said}
        if made:
            f.fmi3FreeInstance(inst)
    before = len(h.messages)
    inst = f.fmi3InstantiateScheduledExecution(b"x", md.guid.encode(), res, False, False, None, log,
                                               cast(None, fmi3ClockUpdateCallback), cast(None, fmi3LockPreemptionCallback),
                                               cast(None, fmi3UnlockPreemptionCallback))
    out["scheduled"] = {"made": bool(inst), "messages": [m for _, m in h.messages[before:]]}
    made, said, inst = cs(logger=cast(None, fmi3LogMessageCallback))
    status = None
    if made:                                                # (a refused call, nobody to tell: no crash)
        try:
            status = f.fmi3DoStep(inst, 0.0, 0.01, False, (c_bool * 1)(), (c_bool * 1)(), (c_bool * 1)(),
                                  (c_double * 1)())
        except FMICallException as exc:
            status = exc.status
        f.fmi3FreeInstance(inst)
    out["no_logger"] = {"made": made, "status": status}
    return {"cases": out, "identifier": ident}


@case
def resource_paths(dirs):
    """fmi3InstantiateCoSimulation from each extracted FMU folder of ``dirs`` (names with non-ASCII, space, + # ; %,
    a literal %41 or %20, non-UTF-8 bytes) with its resourcePath as bytes, with and without the trailing
    separator; initialization and two steps: per folder and form (instantiated, init status, step statuses, the
    outputs finite)."""
    import shutil
    import tempfile
    out = []
    for d in dirs:
        with tempfile.TemporaryDirectory() as tmp:             # (lxml opens no path that is not UTF-8)
            shutil.copy(os.path.join(d, "modelDescription.xml"), tmp)
            md = read_model_description(tmp)
        h = Host.__new__(Host)
        h.messages = []
        f = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier,
                      instanceName="paths")
        log = fmi3LogMessageCallback(h.logger)
        for form, path in (("separator", os.fsencode(os.path.join(d, "resources")) + os.sep.encode()),
                           ("bare", os.fsencode(os.path.join(d, "resources")))):
            inst = f.fmi3InstantiateCoSimulation(b"paths", md.guid.encode(), path, False, False, False, False,
                                                 (c_uint32 * 1)(0), 0, None, log,
                                                 cast(None, fmi3IntermediateUpdateCallback))
            row = {"dir": d, "form": form, "instantiated": bool(inst), "messages": [m for _, m in h.messages]}
            if inst:
                f.component = inst
                row["init"] = h.call(f.enterInitializationMode)[0] + h.call(f.exitInitializationMode)[0]
                row["steps"] = [h.call(f.doStep, k * 0.01, 0.01)[0] for k in range(2)]
                outputs = [v.valueReference for v in md.modelVariables if v.causality == "output"
                           and v.type == "Float64" and not v.dimensions]
                row["finite"] = all(math.isfinite(x) for x in f.getFloat64(outputs))
                f.fmi3FreeInstance(inst)
            out.append(row)
    return out


@case
def model_exchange(dir):
    """Model Exchange through FMI 3.0: the state table (event mode after initialization), bad states and time
    refused with the states kept, the derivatives at the states set."""
    h = Host(dir, me=True)
    f, out = h.f, {}
    f.enterInitializationMode(startTime=0.0)
    f.exitInitializationMode()
    n = (c_size_t * 1)()
    f.fmi3GetNumberOfContinuousStates(f.component, n)
    nx = int(n[0])
    x = (c_double * nx)()
    out["set_states_in_event_mode"] = _refused(h, f.fmi3SetContinuousStates, f.component, x, nx)
    flags = [(c_bool * 1)() for _ in range(5)]
    f.fmi3UpdateDiscreteStates(f.component, *flags, (c_double * 1)())
    f.enterContinuousTimeMode()
    f.fmi3GetContinuousStates(f.component, x, nx)
    x0 = [float(v).hex() for v in x]
    bad = (c_double * nx)(*x)
    bad[0] = math.nan
    out["nan_state"] = _refused(h, f.fmi3SetContinuousStates, f.component, bad, nx)
    out["wrong_count"] = _refused(h, f.fmi3SetContinuousStates, f.component, x, nx + 1)
    out["nan_time"] = _refused(h, f.setTime, math.nan)
    out["do_step_on_me"] = _refused(h, f.fmi3DoStep, f.component, 0.0, 0.01, False, (c_bool * 1)(), (c_bool * 1)(),
                                    (c_bool * 1)(), (c_double * 1)())
    f.fmi3GetContinuousStates(f.component, x, nx)
    kept = [float(v).hex() for v in x] == x0
    dx = (c_double * nx)()
    status = f.fmi3GetContinuousStateDerivatives(f.component, dx, nx)
    f.freeInstance()
    return {"cases": out, "kept": kept, "derivatives_status": status, "nx": nx}


def _me(dir, start):
    h = Host(dir, me=True)
    f = h.f
    for name, value in start.items():
        v = h.var[name]
        (f.setInt64 if v.type == "Enumeration" else f.setFloat64)([v.valueReference], [value])
    f.enterInitializationMode(startTime=0.0)
    f.exitInitializationMode()
    f.fmi3UpdateDiscreteStates(f.component, *[(c_bool * 1)() for _ in range(5)], (c_double * 1)())
    f.enterContinuousTimeMode()
    return h


@case
def derivatives(dir, start):
    """fmi3GetDirectionalDerivative of the state derivatives against central differences through the FMI 3.0 API
    (A: by the states, B: by the drive inputs; relative to each block's largest entry), and fmi3GetAdjointDerivative
    against the transpose of the directional derivatives."""
    h = _me(dir, start)
    f, md = h.f, h.md
    state = next(v for v in md.modelVariables if v.name == "state")            # (arrays: fmu_mb.fmi.arrays3)
    der = next(v for v in md.modelVariables if v.name == "der(state)")
    inputs = {v.name: v.valueReference for v in md.modelVariables if v.causality == "input"
              and v.type == "Float64" and (v.name.endswith(".tau_drive") or v.name.endswith(".force"))}
    nx = size(state)
    assert size(der) == nx and der.derivative is state
    x = (c_double * nx)()
    # move off the start (rates, friction): a few explicit Euler steps of 1 ms
    for k in range(20):
        f.fmi3GetContinuousStates(f.component, x, nx)
        dx = (c_double * nx)()
        f.fmi3GetContinuousStateDerivatives(f.component, dx, nx)
        f.setTime((k + 1) * 1e-3)
        f.fmi3SetContinuousStates(f.component, (c_double * nx)(*[a + 1e-3 * b for a, b in zip(x, dx)]), nx)
    f.fmi3GetContinuousStates(f.component, x, nx)
    x = list(x)

    def derivs():
        dx = (c_double * nx)()
        f.fmi3GetContinuousStateDerivatives(f.component, dx, nx)
        return list(dx)
    uvr = (c_uint32 * 1)(der.valueReference)
    columns = [("state", k, state.valueReference) for k in range(nx)] + [("input", n, vr) for n, vr in inputs.items()]
    dd, fd, statuses = [], [], set()
    for kind, key, vr in columns:
        col = (c_double * nx)()
        if kind == "state":                     # the state array with a unit seed on element key
            statuses.add(f.fmi3GetDirectionalDerivative(f.component, uvr, 1, (c_uint32 * 1)(vr), 1,
                                                        (c_double * nx)(*[float(i == key) for i in range(nx)]), nx,
                                                        col, nx))
        else:
            statuses.add(f.fmi3GetDirectionalDerivative(f.component, uvr, 1, (c_uint32 * 1)(vr), 1,
                                                        (c_double * 1)(1.0), 1, col, nx))
        if kind == "state":
            def at(d):
                f.fmi3SetContinuousStates(f.component, (c_double * nx)(*[v + d if i == key else v
                                                                        for i, v in enumerate(x)]), nx)
                return derivs()
            base = 2e-7 * max(1.0, abs(x[key]))
        else:
            u = float(start.get(key, 0.0))

            def at(d):
                f.setFloat64([vr], [u + d])
                return derivs()
            base = 2e-4 * max(1.0, abs(u))
        d1 = [(p - m) / (2 * base) for p, m in zip(at(base), at(-base))]
        d2 = [(p - m) / base for p, m in zip(at(base / 2), at(-base / 2))]
        at(0.0)
        fd.append([(4 * b - a) / 3 for a, b in zip(d1, d2)])
        dd.append(list(col))
    blocks = {}
    for name, cols in (("A", range(nx)), ("B", range(nx, len(columns)))):
        scale = max([abs(fd[c][r]) for c in cols for r in range(nx)] or [0.0])
        err = max([abs(dd[c][r] - fd[c][r]) for c in cols for r in range(nx)] or [0.0])
        blocks[name] = [err / scale if scale else err, scale]
    # adjoint: seed w over the unknowns -> J^T w over the knowns (the state array's elements, then the inputs)
    kvr = [state.valueReference] + list(inputs.values())
    w = [math.sin(1.0 + 0.37 * i) for i in range(nx)]
    adj = (c_double * len(columns))()
    statuses.add(f.fmi3GetAdjointDerivative(f.component, uvr, 1, (c_uint32 * len(kvr))(*kvr), len(kvr),
                                            (c_double * nx)(*w), nx, adj, len(columns)))
    expect = [sum(w[r] * dd[c][r] for r in range(nx)) for c in range(len(columns))]
    scale = max(abs(e) for e in expect)
    adjoint_err = max(abs(a - e) for a, e in zip(adj, expect)) / scale
    f.freeInstance()
    return {"blocks": blocks, "adjoint": [adjoint_err, scale], "statuses": sorted(statuses), "columns": len(columns)}


@case
def state_crossing(dir2, dir3, start, steps=30, dt=0.01):
    """An FMU state serialized by the FMI 2.0 FMU restores into the FMI 3.0 FMU of the same build and the reverse;
    both then step on bitwise alike."""
    md2 = read_model_description(dir2)
    s2 = FMU2Slave(guid=md2.guid, unzipDirectory=dir2, modelIdentifier=md2.coSimulation.modelIdentifier,
                   instanceName="two")
    s2.instantiate()
    vr2 = {v.name: v for v in md2.modelVariables}
    for name, value in start.items():
        (s2.setInteger if vr2[name].type in ("Integer", "Enumeration") else s2.setReal)([vr2[name].valueReference],
                                                                                       [value])
    s2.setupExperiment(startTime=0.0)
    s2.enterInitializationMode()
    s2.exitInitializationMode()
    for k in range(steps):
        s2.doStep(k * dt, dt)
    blob = s2.serializeFMUstate(s2.getFMUstate())
    h3 = Host(dir3)
    f3 = h3.f
    f3.enterInitializationMode(startTime=0.0)
    f3.exitInitializationMode()
    f3.setFMUState(f3.deserializeFMUState(blob))
    names = h3.output_names()
    t = steps * dt
    same_now = [float(x).hex() for x in s2.getReal([vr2[n].valueReference for n in names])] == h3.outputs()
    for k in range(steps):
        s2.doStep(t + k * dt, dt)
        f3.doStep(t + k * dt, dt)
    same_after = [float(x).hex() for x in s2.getReal([vr2[n].valueReference for n in names])] == h3.outputs()
    back = f3.serializeFMUState(f3.getFMUState())
    s2.setFMUstate(s2.deSerializeFMUstate(back))
    same_back = [float(x).hex() for x in s2.getReal([vr2[n].valueReference for n in names])] == h3.outputs()
    s2.freeInstance()
    f3.freeInstance()
    return {"same_now": same_now, "same_after": same_after, "same_back": same_back, "outputs": len(names)}


@case
def configuration(dir, structural, real_param, value, bad_value, enums=None, steps=20, dt=0.01):
    """Configuration mode (FMI 3.0: structural parameters change there only): the refusals around it, each with what
    it logged; then ``structural`` = ``value`` set there and a run of ``steps`` steps (its Float64 outputs, hex) and
    an out-of-range value refused when the mechanism is built (fmi3ExitInitializationMode)."""
    h = Host(dir)
    f, vr, out = h.f, h.vr, {}
    out["structural_outside"] = _refused(h, f.setInt32, [vr[structural]], [value])
    out["exit_not_entered"] = _refused(h, f.fmi3ExitConfigurationMode, f.component)
    f.enterConfigurationMode()
    out["enter_twice"] = _refused(h, f.fmi3EnterConfigurationMode, f.component)
    out["other_parameter"] = _refused(h, f.setFloat64, [vr[real_param]], [0.5])
    out["initialize_while_configuring"] = _refused(h, f.enterInitializationMode, None, 0.0)
    out["step_while_configuring"] = _refused(h, f.doStep, 0.0, dt)
    out["state_while_configuring"] = _refused(h, f.getFMUState)
    f.setInt32([vr[structural]], [value])
    f.exitConfigurationMode()
    for name, code in (enums or {}).items():
        f.setInt64([vr[name]], [code])
    f.enterInitializationMode(startTime=0.0)
    out["enter_after_instantiated"] = _refused(h, f.fmi3EnterConfigurationMode, f.component)
    f.exitInitializationMode()
    for k in range(steps):
        f.doStep(k * dt, dt)
    run = h.outputs()
    back = f.getInt32([vr[structural]])[0]
    f.reset()                                   # back to instantiated: configuration mode again, a bad value
    f.enterConfigurationMode()
    f.setInt32([vr[structural]], [bad_value])
    f.exitConfigurationMode()
    f.enterInitializationMode(startTime=0.0)
    bad = _refused(h, f.exitInitializationMode)
    f.freeInstance()
    return {"cases": out, "run": run, "back": back, "bad": bad}


@case
def no_structure(dir):
    """An FMU without structural parameters refuses configuration mode."""
    h = Host(dir)
    out = _refused(h, h.f.fmi3EnterConfigurationMode, h.f.component)
    h.f.freeInstance()
    return out


@case
def run_built(dir, enums=None, steps=20, dt=0.01):
    """The Float64 outputs (hex) after ``steps`` steps at the FMU's defaults (and the Enumerations ``enums``)."""
    h = Host(dir)
    for name, code in (enums or {}).items():
        h.f.setInt64([h.vr[name]], [code])
    h.f.enterInitializationMode(startTime=0.0)
    h.f.exitInitializationMode()
    for k in range(steps):
        h.f.doStep(k * dt, dt)
    out = h.outputs()
    h.f.freeInstance()
    return out


#: every fmi3 function after its instance: its arguments' kinds (B fmi3Boolean, D fmi3Float64, Z size_t, U a value
#: reference, P a pointer: an array, an out argument, an FMU state; fmi3FunctionTypes.h)
SIGNATURES = {
    "fmi3SetDebugLogging": "BZP", "fmi3EnterInitializationMode": "BDDBD", "fmi3ExitInitializationMode": "",
    "fmi3EnterEventMode": "", "fmi3Terminate": "", "fmi3Reset": "", "fmi3GetFloat64": "PZPZ", "fmi3GetFloat32": "PZPZ",
    "fmi3GetInt8": "PZPZ", "fmi3GetInt32": "PZPZ", "fmi3GetInt64": "PZPZ", "fmi3GetUInt64": "PZPZ",
    "fmi3GetBoolean": "PZPZ", "fmi3GetString": "PZPZ", "fmi3GetBinary": "PZPPZ", "fmi3GetClock": "PZP",
    "fmi3SetFloat64": "PZPZ", "fmi3SetFloat32": "PZPZ", "fmi3SetInt8": "PZPZ", "fmi3SetInt32": "PZPZ",
    "fmi3SetInt64": "PZPZ", "fmi3SetUInt64": "PZPZ", "fmi3SetBoolean": "PZPZ", "fmi3SetString": "PZPZ",
    "fmi3SetBinary": "PZPPZ", "fmi3SetClock": "PZP", "fmi3GetNumberOfVariableDependencies": "UP",
    "fmi3GetVariableDependencies": "UPPPPZ", "fmi3GetFMUState": "P", "fmi3SetFMUState": "P", "fmi3FreeFMUState": "P",
    "fmi3SerializedFMUStateSize": "PP", "fmi3SerializeFMUState": "PPZ", "fmi3DeserializeFMUState": "PZP",
    "fmi3GetDirectionalDerivative": "PZPZPZPZ", "fmi3GetAdjointDerivative": "PZPZPZPZ",
    "fmi3EnterConfigurationMode": "", "fmi3ExitConfigurationMode": "", "fmi3GetIntervalDecimal": "PZPP",
    "fmi3GetIntervalFraction": "PZPPP", "fmi3GetShiftDecimal": "PZP", "fmi3GetShiftFraction": "PZPP",
    "fmi3SetIntervalDecimal": "PZP", "fmi3SetIntervalFraction": "PZPP", "fmi3SetShiftDecimal": "PZP",
    "fmi3SetShiftFraction": "PZPP", "fmi3EvaluateDiscreteStates": "", "fmi3UpdateDiscreteStates": "PPPPPP",
    "fmi3EnterContinuousTimeMode": "", "fmi3CompletedIntegratorStep": "BPP", "fmi3SetTime": "D",
    "fmi3SetContinuousStates": "PZ", "fmi3GetContinuousStateDerivatives": "PZ", "fmi3GetEventIndicators": "PZ",
    "fmi3GetContinuousStates": "PZ", "fmi3GetNominalsOfContinuousStates": "PZ", "fmi3GetNumberOfEventIndicators": "P",
    "fmi3GetNumberOfContinuousStates": "P", "fmi3EnterStepMode": "", "fmi3GetOutputDerivatives": "PZPPZ",
    "fmi3DoStep": "DDBPPPP", "fmi3ActivateModelPartition": "UD"}
#: the values each kind takes (P: 0 = NULL, 1 = a zeroed 64-byte buffer)
KIND_VALUES = {"B": (False, True), "D": (0.0, math.nan, -1.0, 1e300), "Z": (0, 1, 3, 2 ** 40, 2 ** 64 - 1),
               "U": (0, 2 ** 32 - 1), "P": (0, 1)}


@case
def fuzz(dir, me=False, per_phase=40, seed=1):
    """Every fmi3 function of the interface, in every phase an instance can be in, with argument combinations drawn
    from :data:`KIND_VALUES` (NULL arrays and out arguments, counts from 0 to 2⁶⁴ − 1, NaN and huge times, value
    references out of range, a zeroed buffer as an FMU state; a buffer with a count beyond its 64 bytes is left out:
    that is the host's lie), each on a fresh instance and once on a NULL instance. A crash is the process's return
    code (the last line printed names the call). Returned: the calls made, and those that answered fmi3Error without
    logging a word, that answered a status FMI 3.0 does not have, or that did not refuse a NULL instance."""
    import random
    from ctypes import CDLL, CFUNCTYPE, c_char_p, c_int, c_void_p

    from tests.fuzz_args import Findings, arguments, combinations
    md = read_model_description(dir)
    ident = (md.modelExchange if me else md.coSimulation).modelIdentifier
    lib = CDLL(os.path.join(dir, "binaries", "x86_64-linux", ident + ".so"))
    log_type = CFUNCTYPE(None, c_void_p, c_int, c_char_p, c_char_p)
    messages = []
    logger = log_type(lambda env, status, category, message: messages.append(status))
    types = {"B": c_bool, "D": c_double, "Z": c_size_t, "U": c_uint32, "P": c_void_p}

    def fn(name, kinds=""):
        f = getattr(lib, name)
        f.restype, f.argtypes = c_int, [c_void_p] + [types[k] for k in kinds]
        return f

    inst = lib.fmi3InstantiateModelExchange if me else lib.fmi3InstantiateCoSimulation
    inst.restype = c_void_p
    common = [md.guid.encode(), os.path.join(dir, "resources").encode(), False, True]
    if me:
        inst.argtypes = [c_char_p, c_char_p, c_char_p, c_bool, c_bool, c_void_p, log_type]
        args_inst = [b"fuzz", *common, None, logger]
    else:
        inst.argtypes = [c_char_p, c_char_p, c_char_p, c_bool, c_bool, c_bool, c_bool, c_void_p, c_size_t, c_void_p,
                         log_type, c_void_p]
        args_inst = [b"fuzz", *common, False, False, None, 0, None, logger, None]
    lib.fmi3FreeInstance.argtypes = [c_void_p]
    phases = {"instantiated": (), "configuration": ("fmi3EnterConfigurationMode",),
              "initialization": ("init",), "running": ("init", "fmi3ExitInitializationMode"),
              "terminated": ("init", "fmi3ExitInitializationMode", "fmi3Terminate")}
    if me:
        phases["continuous"] = ("init", "fmi3ExitInitializationMode", "fmi3EnterContinuousTimeMode")
    rng = random.Random(seed)
    found = Findings(range(5))
    for name, kinds in SIGNATURES.items():
        f = fn(name, kinds)
        combos = combinations(kinds, KIND_VALUES)
        for phase, path in phases.items():
            for combo in rng.sample(combos, min(per_phase, len(combos))):
                s = inst(*args_inst)
                for step in path:
                    if step == "init":
                        fn("fmi3EnterInitializationMode", "BDDBD")(s, False, 0.0, 0.0, False, 0.0)
                    else:
                        fn(step)(s)
                args, _alive = arguments(kinds, combo)           # (_alive: the buffers, during the call)
                print(name, phase, combo, flush=True)
                before = len(messages)
                status = f(s, *args)
                found.check(f"{name} {phase} {combo}", status, len(messages) > before, f(None, *args))
                lib.fmi3FreeInstance(s)
    return found.result()


def main(argv):
    name, args = argv[1], json.loads(argv[2]) if len(argv) > 2 else {}
    result = CASES[name](**args)
    sys.stdout.write("RESULT " + json.dumps(result, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
