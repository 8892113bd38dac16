"""Robustness cases, each run in a fresh process by tests/test_robustness.py:

    python -m tests.fmu_cases <case> '<json arguments>'

prints one line ``RESULT <json>`` and exits. A crash of the host (a signal, an abort at exit)
shows as the process's return code, so it fails the test instead of killing the test run.
The process is a plain FMI host (tests/fmi_raw.py): it imports neither fmu_mb nor numba
unless a case says so.
"""
from __future__ import annotations

import json
import math
import os
import struct
import sys
import threading
import zlib
from ctypes import byref, c_char_p, c_double, c_int, c_uint, c_void_p, create_string_buffer
from pathlib import Path
from urllib.parse import quote

from tests.fmi_raw import MESSAGES, EventInfo, Host, Library

CASES = {}


def _open(dir):
    """The extracted FMU at ``dir``: FMI 2.0 (tests/fmi_raw.Library) or FMI 3.0 (tests/fmi3_raw.Library3)."""
    head = (Path(dir) / "modelDescription.xml").read_bytes()[:4000]
    if b'fmiVersion="3.0"' in head:
        from tests.fmi3_raw import Library3
        return Library3(dir)
    return Library(dir)


def _host(lib, name, **kwargs):
    """An instance of ``lib``'s FMU of its version's host (the methods of both: tests/fmi_raw.Host)."""
    if lib.version == 3:
        from tests.fmi3_raw import Host3
        return Host3(lib, name, **kwargs)
    return Host(lib, name, **kwargs)


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _hex(values):
    return [float(v).hex() for v in values]


def _outputs(h):
    st, vals = h.get(h.reals())
    return st, vals


def _run(h, t0, n, dt):
    statuses = []
    t = t0
    for _ in range(n):
        statuses.append(h.step(t, dt))
        if statuses[-1] > 1:
            break
        t += dt
    return statuses, t


def _start(lib, name):
    """The start value of the variable of FMI 2.0 name ``name`` (an FMI 3.0 array's element: its own)."""
    if lib.version == 2:
        return lib.var[name].start
    v, k = lib.var[name]
    text = str(v.start if v.start is not None else "0").split()
    return text[k] if v.shape else text[0] if text else "0"


# ------------------------------------------------------------------------------------------ options
@case
def batch(cases):
    """Several cases in turn in this one process (``cases``: [name, args] each; a process per case spent most of its
    time starting): their results. The line printed before each names it, should one crash the host."""
    out = []
    for k, (name, args) in enumerate(cases):
        print("case", k, name, json.dumps(args), file=sys.stderr, flush=True)
        out.append(CASES[name](**args))
    return out


@case
def options(dir, combo, T=0.05, dt=0.01, logging_on=False, name="options"):
    """fmi2Instantiate -> initialization with the option values in `combo` -> T s -> outputs (``debug``: the
    fmi2OK messages, logged with logging_on; ``name``: the instance's, distinct for each in one process)."""
    lib = _open(dir)
    h = _host(lib, name, logging_on=logging_on)
    init = h.init(combo)
    steps, t = _run(h, 0.0, int(round(T / dt)), dt) if init <= 1 else ([], 0.0)
    st, vals = _outputs(h) if init <= 1 else (3, [])
    bad = [n for n, v in zip(h.reals(), vals) if not math.isfinite(v)]
    h.free()
    return {"init": init, "steps": steps, "t": t, "get": st, "n": len(vals), "nonfinite": bad,
            "errors": h.errors(), "warnings": [m for s, _, m in h.messages if s == 1],
            "debug": [m for s, _, m in h.messages if s == 0]}


# ------------------------------------------------------------------------------------------ resource URIs
def _uri(lib, form):
    path = lib.dir / "resources"
    enc = quote(os.fsencode(path))
    return {
        "as_uri": path.as_uri(),                            # FMPy: file:///..., every special character encoded
        "file_one_slash": "file:" + enc,                    # RFC 8089 file:/path
        "localhost": "file://localhost" + enc,
        "upper_scheme": "FILE://" + enc,
        "trailing_slash": path.as_uri() + "/",
        "plain_path": os.fsencode(path),                    # not a URI: an absolute path, taken as it is
        "unencoded": b"file://" + os.fsencode(path),        # a naive host: file:// + raw path
        "empty": "",
        "null": c_char_p(),
        "garbage": "not a uri \x01 at all",
        "http": "http://example.com" + enc,
        "other_host": "file://otherhost" + enc,
        "bad_escape": path.as_uri() + "%zz",
        "truncated_escape": path.as_uri() + "%4",
        "nul_escape": path.as_uri() + "%00x",
        "missing_dir": (lib.dir / "nowhere").as_uri(),
        "relative": "file:resources",
        "binaries_dir": (lib.dir / "binaries").as_uri(),
        "long": "file:///" + "a/" * 5000,
    }[form]


@case
def uri(dir, form):
    """fmi2Instantiate with a resource location of the given form; run 2 steps if it works."""
    lib = Library(dir)
    h = Host(lib, "uri", uri=_uri(lib, form))
    out = {"instantiated": bool(h.c), "messages": h.messages}
    if h.c:
        out["init"] = h.init({})
        out["steps"], _ = _run(h, 0.0, 2, 0.01)
        out["get"], vals = _outputs(h)
        out["finite"] = all(math.isfinite(v) for v in vals)
        h.free()
    return out


@case
def instantiate_args(dir, what):
    """fmi2Instantiate with a bad argument: NULL with a message, or (no logger) NULL and a line on stderr."""
    lib = Library(dir)
    kw = {"wrong_guid": dict(guid="{00000000-0000-0000-0000-000000000000}"), "empty_guid": dict(guid=b""),
          "null_guid": dict(guid=c_char_p()), "model_exchange": dict(fmu_type=0),
          "unknown_type": dict(fmu_type=2), "empty_name": dict(name_bytes=b""),
          "null_name": dict(name_bytes=c_char_p()), "invalid_utf8_name": dict(name_bytes=b"inst\xff"),
          "no_callbacks": dict(callbacks=False)}[what]
    h = Host(lib, "bad", **kw)
    out = {"instantiated": bool(h.c), "messages": MESSAGES}
    h.free()
    return out


# ------------------------------------------------------------------------------------------ state table
def _to_phase(h, phase):
    if phase in ("initialization", "stepping", "terminated"):
        h.setup()
        h.call("fmi2EnterInitializationMode")
    if phase in ("stepping", "terminated"):
        h.call("fmi2ExitInitializationMode")
        h.step(0.0, 0.01)
    if phase == "terminated":
        h.call("fmi2Terminate")


def _calls(h, lib, stepping_state):
    """name -> callable returning the status of one well-formed call of that function."""
    out_vr = lib.vr[h.reals()[0]]
    in_vr = lib.vr[h.reals("input")[0]]
    p_real = next(v for v in lib.md.modelVariables if v.causality == "parameter" and v.type == "Real")
    ints = [v.valueReference for v in lib.md.modelVariables if v.type in ("Integer", "Enumeration")][:1]
    bools = [v.valueReference for v in lib.md.modelVariables if v.type == "Boolean"][:1]
    one = (c_uint * 1)
    t_now = [0.01]

    def get_state():
        st, s = h.get_state()
        return st

    def set_state():
        st, blob = stepping_state
        s = c_void_p()
        r = h.f.fmi2DeSerializeFMUstate(h.c, create_string_buffer(blob, len(blob)), len(blob), byref(s))
        return h.f.fmi2SetFMUstate(h.c, s) if r <= 1 else 99

    def serialize():
        st, s = h.get_state()
        return h.serialize(s)[0] if st <= 1 else 99

    return {
        "fmi2SetDebugLogging": lambda: h.f.fmi2SetDebugLogging(h.c, 1, 0, None),
        "fmi2SetupExperiment": lambda: h.setup(),
        "fmi2EnterInitializationMode": lambda: h.call("fmi2EnterInitializationMode"),
        "fmi2ExitInitializationMode": lambda: h.call("fmi2ExitInitializationMode"),
        "fmi2Terminate": lambda: h.call("fmi2Terminate"),
        "fmi2Reset": lambda: h.call("fmi2Reset"),
        "fmi2GetReal": lambda: h.f.fmi2GetReal(h.c, one(out_vr), 1, (c_double * 1)()),
        "fmi2GetInteger": lambda: h.f.fmi2GetInteger(h.c, (c_uint * len(ints))(*ints), len(ints), (c_int * 1)()),
        "fmi2GetBoolean": lambda: h.f.fmi2GetBoolean(h.c, (c_uint * len(bools))(*bools), len(bools), (c_int * 1)()),
        "fmi2GetString": lambda: h.f.fmi2GetString(h.c, None, 0, None),
        "fmi2SetReal(input)": lambda: h.f.fmi2SetReal(h.c, one(in_vr), 1, (c_double * 1)(0.5)),
        "fmi2SetReal(parameter)": lambda: h.f.fmi2SetReal(h.c, one(p_real.valueReference), 1,
                                                           (c_double * 1)(float(p_real.start))),
        "fmi2SetInteger": lambda: h.f.fmi2SetInteger(h.c, None, 0, None),
        "fmi2SetBoolean": lambda: h.f.fmi2SetBoolean(h.c, None, 0, None),
        "fmi2SetString": lambda: h.f.fmi2SetString(h.c, None, 0, None),
        "fmi2GetFMUstate": get_state,
        "fmi2SetFMUstate": set_state,
        "fmi2SerializeFMUstate": serialize,
        "fmi2DoStep": lambda: h.step(t_now[0], 0.01),
        "fmi2GetRealStatus(lastSuccessfulTime)": lambda: h.f.fmi2GetRealStatus(h.c, 2, byref(c_double())),
        "fmi2GetBooleanStatus(terminated)": lambda: h.f.fmi2GetBooleanStatus(h.c, 3, byref(c_int())),
        "fmi2GetStatus(doStepStatus)": lambda: h.f.fmi2GetStatus(h.c, 0, byref(c_int())),
        "fmi2GetIntegerStatus": lambda: h.f.fmi2GetIntegerStatus(h.c, 0, byref(c_int())),
        "fmi2GetStringStatus(pendingStatus)": lambda: h.f.fmi2GetStringStatus(h.c, 1, byref(c_char_p())),
        "fmi2CancelStep": lambda: h.call("fmi2CancelStep"),
        "fmi2GetDirectionalDerivative": lambda: h.f.fmi2GetDirectionalDerivative(
            h.c, one(out_vr), 1, one(in_vr), 1, (c_double * 1)(1.0), (c_double * 1)()),
        "fmi2SetRealInputDerivatives": lambda: h.f.fmi2SetRealInputDerivatives(
            h.c, one(in_vr), 1, (c_int * 1)(1), (c_double * 1)(0.0)),
        "fmi2GetRealOutputDerivatives": lambda: h.f.fmi2GetRealOutputDerivatives(
            h.c, one(out_vr), 1, (c_int * 1)(1), (c_double * 1)()),
    }


@case
def state_table(dir, phase):
    """Every FMI function, well-formed, on a fresh instance in `phase`: {function: (status, messages)}."""
    lib = Library(dir)
    ref = Host(lib, "ref")
    ref.init({})
    ref.step(0.0, 0.01)
    st, s = ref.get_state()
    stepping_state = ref.serialize(s)
    ref.free()
    out = {}
    for k, name in enumerate(_calls(Host(lib, "probe"), lib, stepping_state)):
        h = Host(lib, f"i{k}")
        _to_phase(h, phase)
        del h.messages[:]
        status = _calls(h, lib, stepping_state)[name]()
        out[name] = (status, [m for s_, _, m in h.messages if s_ >= 2])
        h.free()
    return out


# ------------------------------------------------------------------------------------------ Model Exchange
def _me_host(lib, name, inputs=None):
    """A Model Exchange instance initialized (inputs set), in continuous-time mode."""
    h = Host(lib, name, fmu_type=0)
    h.init(inputs or {})
    h.call("fmi2EnterContinuousTimeMode")
    return h


@case
def model_exchange(dir, inputs=None):
    """Every class of bad Model Exchange call on an initialized instance in continuous-time mode, each checked to
    change nothing (the states, time and derivatives read as before, bitwise): {check: [status, messages,
    unchanged]}; and what well-formed calls answer."""
    lib = Library(dir)
    n = lib.n_states
    h = _me_host(lib, "me", inputs)
    out = {}
    h.call("fmi2SetTime", 0.01)
    st, x0 = h.states()
    st2, dx0 = h.derivatives()
    out["well_formed"] = [st, st2, h.completed()[0], h.reals_call("fmi2GetEventIndicators", 0)[0]]
    out["nominals"] = h.reals_call("fmi2GetNominalsOfContinuousStates", n)
    out["x0"], out["dx0"] = _hex(x0), _hex(dx0)

    def check(name, fn):
        del h.messages[:]
        status = fn()
        same = h.states()[1] == x0 and h.derivatives()[1] == dx0
        out[name] = [status, [m for s_, _, m in h.messages if s_ >= 2], same]
        if not same:                                    # put it back for the next check
            h.set_states(x0)
            h.call("fmi2SetTime", 0.01)

    def with_state(k, v):
        x = list(x0)
        x[k] = v
        return h.set_states(x)
    check("state_nan", lambda: with_state(0, math.nan))
    check("state_inf", lambda: with_state(n - 1, math.inf))
    check("coordinate_beyond_limit", lambda: with_state(0, 2e6))
    descs = [v.description for v in lib.md.modelVariables if v.name.startswith("state[")]
    inactive = [k for k, d in enumerate(descs) if "unused by the default options" in d]
    if inactive:                       # a slot of no state keeps what is set (integrators perturb it), derivative 0
        k = inactive[0]
        st = with_state(k, 0.5)
        out["unused_slot"] = [st, h.states()[1][k], h.derivatives()[1][k], h.derivatives()[1][:k] == dx0[:k]]
        h.set_states(x0)
    check("count_more", lambda: h.reals_call("fmi2SetContinuousStates", n + 1, list(x0) + [0.0])[0])
    check("count_fewer", lambda: h.reals_call("fmi2GetDerivatives", n - 1)[0])
    check("count_zero", lambda: h.reals_call("fmi2GetContinuousStates", 0)[0])
    check("null_states", lambda: h.f.fmi2SetContinuousStates(h.c, None, n))
    check("null_derivatives", lambda: h.f.fmi2GetDerivatives(h.c, None, n))
    check("null_event_info", lambda: h.f.fmi2NewDiscreteStates(h.c, None))
    check("null_completed", lambda: h.f.fmi2CompletedIntegratorStep(h.c, 1, None, None))
    check("indicators", lambda: h.reals_call("fmi2GetEventIndicators", 1)[0])
    check("time_nan", lambda: h.call("fmi2SetTime", math.nan))
    check("time_beyond", lambda: h.call("fmi2SetTime", 1e300))
    in_name = h.reals("input")[0]
    check("input_nan", lambda: h.set({in_name: math.nan}))
    check("do_step", lambda: h.step(0.01, 0.01))
    check("new_discrete_states_in_ct_mode", lambda: h.f.fmi2NewDiscreteStates(h.c, EventInfo()))
    check("enter_ct_mode_in_ct_mode", lambda: h.call("fmi2EnterContinuousTimeMode"))
    check("get_real_status", lambda: h.f.fmi2GetRealStatus(h.c, 2, byref(c_double())))
    one, seed = (c_uint * 1), (c_double * 1)

    def dd(unknown, known, value=1.0):
        return h.f.fmi2GetDirectionalDerivative(h.c, one(lib.vr[unknown]), 1, one(lib.vr[known]), 1, seed(value),
                                                seed())
    param = next(v.name for v in lib.md.modelVariables if v.causality == "parameter" and v.type == "Real")
    integer = next(v.name for v in lib.md.modelVariables if v.type in ("Integer", "Enumeration"))
    out["dd_well_formed"] = dd("der(state[1])", "state[1]")
    check("dd_parameter_known", lambda: dd("der(state[1])", param))
    check("dd_input_unknown", lambda: dd(in_name, "state[1]"))
    check("dd_nan_seed", lambda: dd("der(state[1])", "state[1]", math.nan))
    check("dd_integer_unknown", lambda: h.f.fmi2GetDirectionalDerivative(
        h.c, one(lib.vr[integer]), 1, one(lib.vr["state[1]"]), 1, seed(1.0), seed()))
    check("dd_null", lambda: h.f.fmi2GetDirectionalDerivative(h.c, None, 1, one(lib.vr["state[1]"]), 1, seed(1.0),
                                                               None))
    # event mode: the continuous-time functions are refused, the event functions answer
    h.call("fmi2EnterEventMode")
    check("set_states_in_event_mode", lambda: h.set_states(x0))
    check("completed_in_event_mode", lambda: h.completed()[0])
    info = EventInfo(7, 7, 7, 7, 7, 7.0)
    st = h.f.fmi2NewDiscreteStates(h.c, byref(info))
    out["event_info"] = [st, info.newDiscreteStatesNeeded, info.terminateSimulation,
                         info.nominalsOfContinuousStatesChanged, info.valuesOfContinuousStatesChanged,
                         info.nextEventTimeDefined]
    h.call("fmi2EnterContinuousTimeMode")
    # an input acts at once on the derivatives, and a state restored gives them back bit for bit
    st_a, saved = h.get_state()
    y0 = h.get(h.reals())[1]
    h.set({in_name: float(lib.var[in_name].start or 0.0) + 0.1})
    dx_in, y_in = h.derivatives()[1], h.get(h.reals())[1]
    out["input_acts"] = dx_in != dx0 or y_in != y0     # (an input a programmed motion takes acts on reactions)
    x_moved = [v + 1e-3 if not math.isclose(v, 0.0) else v for v in x0]
    h.set_states(x_moved)
    st_b = h.f.fmi2SetFMUstate(h.c, saved)
    out["restored"] = [st_a, st_b, h.states()[1] == x0, h.derivatives()[1] == dx0]
    # out of order: before initialization, a co-simulation instance, a terminated one
    early = Host(lib, "early", fmu_type=0)
    del early.messages[:]
    out["set_time_instantiated"] = [early.call("fmi2SetTime", 0.0), [m for s_, _, m in early.messages if s_ >= 2]]
    early.free()
    cs = Host(lib, "cs")
    cs.init(inputs or {})
    del cs.messages[:]
    out["cs_set_time"] = [cs.call("fmi2SetTime", 0.0), [m for s_, _, m in cs.messages if s_ >= 2]]
    del cs.messages[:]
    out["cs_get_derivatives"] = [cs.reals_call("fmi2GetDerivatives", n)[0], [m for s_, _, m in cs.messages if s_ >= 2]]
    cs.free()
    h.call("fmi2Terminate")
    out["terminated"] = [h.derivatives()[0], h.states()[0], h.call("fmi2SetTime", 0.02)]
    h.free()
    return out


def _me_to_phase(h, phase):
    if phase != "instantiated":
        h.setup()
        h.call("fmi2EnterInitializationMode")
    if phase in ("event", "continuous", "terminated"):
        h.call("fmi2ExitInitializationMode")
    if phase == "continuous":
        h.call("fmi2EnterContinuousTimeMode")
    if phase == "terminated":
        h.call("fmi2Terminate")


@case
def me_state_table(dir, phase):
    """Every Model Exchange call, well formed, on a fresh Model Exchange instance in `phase`: {call: (status,
    messages)}."""
    lib = Library(dir)
    n = lib.n_states
    ref = _me_host(lib, "ref")
    x = ref.states()[1]
    ref.free()
    out_vr = lib.vr[next(v.name for v in lib.md.modelVariables if v.causality == "output" and v.type == "Real")]
    in_vr = lib.vr[next(v.name for v in lib.md.modelVariables if v.causality == "input")]
    one = (c_uint * 1)
    calls = {
        "fmi2SetTime": lambda h: h.call("fmi2SetTime", 0.0),
        "fmi2SetContinuousStates": lambda h: h.set_states(x),
        "fmi2GetDerivatives": lambda h: h.derivatives()[0],
        "fmi2GetContinuousStates": lambda h: h.states()[0],
        "fmi2GetNominalsOfContinuousStates": lambda h: h.reals_call("fmi2GetNominalsOfContinuousStates", n)[0],
        "fmi2GetEventIndicators": lambda h: h.reals_call("fmi2GetEventIndicators", 0)[0],
        "fmi2EnterEventMode": lambda h: h.call("fmi2EnterEventMode"),
        "fmi2NewDiscreteStates": lambda h: h.f.fmi2NewDiscreteStates(h.c, EventInfo()),
        "fmi2EnterContinuousTimeMode": lambda h: h.call("fmi2EnterContinuousTimeMode"),
        "fmi2CompletedIntegratorStep": lambda h: h.completed()[0],
        "fmi2Terminate": lambda h: h.call("fmi2Terminate"),
        "fmi2GetReal": lambda h: h.f.fmi2GetReal(h.c, one(out_vr), 1, (c_double * 1)()),
        "fmi2SetReal(input)": lambda h: h.f.fmi2SetReal(h.c, one(in_vr), 1, (c_double * 1)(0.5)),
        "fmi2DoStep": lambda h: h.step(0.0, 0.01),
        "fmi2GetRealStatus": lambda h: h.f.fmi2GetRealStatus(h.c, 2, byref(c_double())),
        "fmi2GetDirectionalDerivative": lambda h: h.f.fmi2GetDirectionalDerivative(
            h.c, one(out_vr), 1, one(lib.vr["state[1]"]), 1, (c_double * 1)(1.0), (c_double * 1)()),
    }
    out = {}
    for k, (name, fn) in enumerate(calls.items()):
        h = Host(lib, f"me{k}", fmu_type=0)
        _me_to_phase(h, phase)
        del h.messages[:]
        out[name] = (fn(h), [m for s_, _, m in h.messages if s_ >= 2])
        h.free()
    return out


def _me_rk4(inst, h, stop):
    """Classical RK4 at step h over a Model Exchange instance from its states at t = 0 to `stop`; the instance
    left at the end (time, states set): (states, time)."""
    def f(t, x):
        inst.call("fmi2SetTime", t)
        inst.set_states(x)
        return inst.derivatives()[1]
    x, t = inst.states()[1], 0.0
    for _ in range(round(stop / h)):
        k1 = f(t, x)
        k2 = f(t + h / 2, [a + h / 2 * b for a, b in zip(x, k1)])
        k3 = f(t + h / 2, [a + h / 2 * b for a, b in zip(x, k2)])
        k4 = f(t + h, [a + h * b for a, b in zip(x, k3)])
        x = [a + h / 6 * (p + 2 * q + 2 * r + s) for a, p, q, r, s in zip(x, k1, k2, k3, k4)]
        t += h
    f(t, x)
    return x, t


@case
def me_rk4(dir, start, h, stop, names):
    """Classical RK4 at step h over the Model Exchange interface from the start to `stop`: `names` at the end."""
    lib = Library(dir)
    inst = _me_host(lib, "rk4", start)
    _me_rk4(inst, h, stop)
    st, values = inst.get(names)
    inst.free()
    return _hex(values) if st == 0 else None


@case
def me_directional(dir, start, h):
    """fmi2GetDirectionalDerivative against central differences through the FMI API, column by column (see
    tests/fmi/test_model_exchange.py): per block A, B, C, D [largest difference relative to the block's largest
    entry, that entry]."""
    lib = Library(dir)
    inst = _me_host(lib, "dd", start)
    x, _ = _me_rk4(inst, h, 0.02)                  # move off the (static) start: rates and friction
    md = lib.md
    states = [v.valueReference for v in md.modelVariables if v.name.startswith("state[")]
    ders = [v.valueReference for v in md.modelVariables if v.name.startswith("der(state[")]
    outputs = [v.valueReference for v in md.modelVariables if v.causality == "output" and v.type == "Real"]
    inputs = {v.name: v.valueReference for v in md.modelVariables if v.causality == "input" and v.type == "Real"
              and (v.name.endswith(".tau_drive") or v.name.endswith(".force"))}
    unknown = ders + outputs
    name_of = {v.valueReference: v.name for v in md.modelVariables}
    #: constraint violations are norms |Φ| at their kink Φ ≈ 0 on a run: no derivative to compare
    smooth_not = {k for k, vr in enumerate(unknown) if ".violation" in name_of[vr]}
    uvr = (c_uint * len(unknown))(*unknown)
    ovr = (c_uint * len(outputs))(*outputs)

    def evaluate():
        ys = (c_double * len(outputs))()
        inst.f.fmi2GetReal(inst.c, ovr, len(outputs), ys)
        return inst.derivatives()[1] + list(ys)
    statuses, dd_cols, fd_cols = set(), [], []
    columns = [("state", k, vr) for k, vr in enumerate(states)] + [("input", n, vr) for n, vr in inputs.items()]
    for kind, key, vr in columns:
        out = (c_double * len(unknown))()
        statuses.add(inst.f.fmi2GetDirectionalDerivative(inst.c, uvr, len(unknown), (c_uint * 1)(vr), 1,
                                                         (c_double * 1)(1.0), out))
        if kind == "state":
            def at(d):
                inst.set_states([v + d if i == key else v for i, v in enumerate(x)])
                return evaluate()
            base = 2e-7 * max(1.0, abs(x[key]))
        else:
            u = float(start.get(key, 0.0))

            def at(d):
                inst.set({key: u + d})
                return evaluate()
            base = 2e-4 * max(1.0, abs(u))
        # central differences at h and h/2, Richardson-extrapolated (error O(h⁴) beside the evaluation's noise)
        d1 = [(p - m) / (2 * base) for p, m in zip(at(base), at(-base))]
        d2 = [(p - m) / base for p, m in zip(at(base / 2), at(-base / 2))]
        at(0.0)
        fd = [(4 * b - a) / 3 for a, b in zip(d1, d2)]
        dd_cols.append([0.0 if k in smooth_not else v for k, v in enumerate(out)])       # (norms at their kink)
        fd_cols.append([0.0 if k in smooth_not else v for k, v in enumerate(fd)])
    # per block (A: der/states, B: der/inputs, C: outputs/states, D: outputs/inputs), relative to its largest entry
    blocks = {}
    ns, nd = len(states), len(ders)
    for name, cols, rows in (("A", range(ns), range(nd)), ("B", range(ns, len(columns)), range(nd)),
                             ("C", range(ns), range(nd, len(unknown))), ("D", range(ns, len(columns)),
                                                                         range(nd, len(unknown)))):
        scale = max([abs(fd_cols[c][r]) for c in cols for r in rows] or [0.0])
        err = max([abs(dd_cols[c][r] - fd_cols[c][r]) for c in cols for r in rows] or [0.0])
        blocks[name] = [err / scale if scale else err, scale]
    inst.free()
    return {"blocks": blocks, "columns": len(columns), "statuses": sorted(statuses)}


# ------------------------------------------------------------------------------------------ output derivatives
@case
def output_derivatives(dir, start, t0=0.3, dt=0.01, delta=2e-6):
    """The Real outputs' first time derivatives at the communication point t0 (fmi2GetRealOutputDerivatives,
    fmi3GetOutputDerivatives; arrays element-wise) against differences of the co-simulation's own steps from there
    (the FMU state restored before each): D(δ) = (−3 y(t0) + 4 y(t0 + δ) − y(t0 + 2δ)) / 2δ, one step each, at δ,
    δ/2 and δ/4, and the Richardson extrapolations R(δ, δ/2) and R(δ/2, δ/4) (error O(δ³); the step's own local
    error is O(δ³) too). The oracle's resolution per output is |R(δ, δ/2) − R(δ/2, δ/4)|: where an output is
    computed through stiff springs (a support's force: stiffness times a deflection of 1e-5 of the coordinates),
    its round-off divided by δ sets a floor that a smaller δ raises. An output is ``off`` when its derivative
    differs from R(δ/2, δ/4) by more than 1e-6 of its unit's largest derivative plus twice that resolution. The
    derivatives asked a second time, after the steps and the state restored, must be bit for bit the first ones.
    Returns per unit [largest difference, largest resolution] relative to the unit's largest derivative, and that
    derivative; ``violations`` are left out (norms |Φ| at their kink Φ ≈ 0 on a run); ``refused``: what order 2
    and an input answered."""
    lib = _open(dir)
    h = _host(lib, "od")
    init = h.init(start)
    statuses, t = _run(h, 0.0, int(round(t0 / dt)), dt)
    names = h.reals()
    st0, y0 = h.get(names)
    st, dy = h.output_derivatives(names)
    _, state = h.get_state()

    def ahead(d):
        h.set_state(state)
        steps = h.step(t, d)
        return steps, h.get(names)[1]
    diffs, step_statuses = [], set()
    for d in (delta, delta / 2, delta / 4):
        s1, y1 = ahead(d)
        s2, y2 = ahead(2 * d)
        step_statuses |= {s1, s2}
        diffs.append([(-3 * a + 4 * b - c) / (2 * d) for a, b, c in zip(y0, y1, y2)])
    coarse = [(4 * b - a) / 3 for a, b in zip(diffs[0], diffs[1])]
    fd = [(4 * b - a) / 3 for a, b in zip(diffs[1], diffs[2])]
    h.set_state(state)
    again = h.output_derivatives(names)
    units, rows = {}, []
    for n, a, b, c in zip(names, dy, fd, coarse):
        if ".violation" in n:
            continue
        v = lib.var[n] if lib.version == 2 else lib.var[n][0]
        unit = getattr(v, "unit", None) or "1"
        u = units.setdefault(unit, [0.0, 0.0, 0.0])
        u[0], u[1], u[2] = max(u[0], abs(a - b)), max(u[1], abs(b - c)), max(u[2], abs(b))
        rows.append((n, unit, a, b, abs(b - c)))
    off = [[n, a, b, r] for n, unit, a, b, r in rows if abs(a - b) > 1e-6 * units[unit][2] + 2 * r]
    refused = [h.output_derivatives(names[:1], order=2)[0]]
    inputs = [n for n in h.reals("input")]
    if inputs:
        refused.append(h.output_derivatives(inputs[:1])[0])
    h.free()
    return {"init": init, "steps": sorted(set(statuses) | step_statuses), "get": st0, "status": st, "n": len(names),
            "finite": all(math.isfinite(x) for x in dy), "same_again": again == (st, dy), "off": off[:10],
            "units": {k: [e / m if m else e, r / m if m else r, m] for k, (e, r, m) in units.items()},
            "refused": refused, "errors": h.errors()}


# ------------------------------------------------------------------------------------------ FMU states
#: fmu_mb.fmi.constants.STATE_HEAD (tests/fmi/test_constants.py checks they agree): this host imports no fmu_mb,
#: which would be another fmu_mb core than a Python FMU's in this process
_HEAD = struct.Struct("<6sH32sBIIdddq")


def _split(blob):
    head = list(_HEAD.unpack_from(blob, 0))
    nval, nstate = head[4], head[5]
    vals = list(struct.unpack_from(f"<{nval}d", blob, _HEAD.size))
    state = list(struct.unpack_from(f"<{nstate}d", blob, _HEAD.size + 8 * nval))
    return head, vals, state


def _join(head, vals, state):
    head[4], head[5] = len(vals), len(state)
    body = _HEAD.pack(*head) + struct.pack(f"<{len(vals)}d", *vals) + struct.pack(f"<{len(state)}d", *state)
    return body + struct.pack("<I", zlib.crc32(body))


def _saved_names(lib):
    """Names of the saved values, in the record's order: parameters, inputs as set, inputs in force (the
    latter as "held:<name>"; value-reference order)."""
    mv = sorted(lib.md.modelVariables, key=lambda v: v.valueReference)
    inputs = [v.name for v in mv if v.causality == "input"]
    return [v.name for v in mv if v.causality == "parameter"] + inputs + ["held:" + n for n in inputs]


def _forge(lib, blob, field, outputs, names=None):
    """``blob`` with ``field`` forged; ``outputs``: the FMU's Real outputs by their FMI 2.0 names; ``names``: the
    saved values' names (default :func:`_saved_names`; an FMI 3.0 FMU's test gives its FMI 2.0 twin's, whose value
    references the record follows)."""
    head, vals, state = _split(blob)
    names = names or _saved_names(lib)
    nv = sum(1 for n in outputs if n.endswith(".q") or ".q[" in n)
    kind, _, arg = field.partition(":")
    if kind == "phase":
        head[3] = int(arg)
    elif kind in ("t_start", "t_stop", "time"):
        head[{"t_start": 6, "t_stop": 7, "time": 8}[kind]] = float(arg)
    elif kind == "fails":
        head[9] = int(arg)
    elif kind in ("value", "held"):
        name, _, v = arg.rpartition("=")
        vals[names.index(name if kind == "value" else "held:" + name)] = float(v)
    elif kind == "q":
        state[0] = float(arg)
    elif kind == "qd":
        state[nv] = float(arg)
    elif kind == "last":
        state[-1] = float(arg)
    elif kind == "state_entry":
        i, _, v = arg.partition("=")
        state[int(i)] = float(v)
    elif kind == "truncate":
        state = state[:-int(arg)]
    else:
        raise ValueError(field)
    return _join(head, vals, state)


@case
def forged_state(dir, field, inputs=None, steps=3, dt=0.01, names=None, name="forged"):
    """A genuine state forged in one field, CRC recomputed: fmi2DeSerializeFMUstate/fmi2SetFMUstate
    must refuse it with a message and leave the instance exactly as it was (its next step equals
    the step after restoring the genuine state)."""
    lib = _open(dir)
    h = _host(lib, name)
    h.init({})
    h.set(inputs or {})
    _run(h, 0.0, steps, dt)
    t = steps * dt
    st, s = h.get_state()
    _, blob = h.serialize(s)
    forged = _forge(lib, blob, field, h.reals(), names)
    _, before = _outputs(h)
    del h.messages[:]
    ds, fs = h.deserialize(forged)
    ss = h.set_state(fs) if ds <= 1 else None
    refusal = h.errors()
    _, after = _outputs(h)
    step_after = h.step(t, dt)
    _, next_forged = _outputs(h)
    ds2, gs = h.deserialize(blob)
    ss2 = h.set_state(gs)
    step_genuine = h.step(t, dt)
    _, next_genuine = _outputs(h)
    h.free()
    return {"deserialize": ds, "set": ss, "refusal": refusal, "unchanged": _hex(after) == _hex(before),
            "step_after": step_after, "same_next": _hex(next_forged) == _hex(next_genuine),
            "genuine": [ds2, ss2, step_genuine]}


@case
def beyond_limits(dir, values, steps=400, dt=0.01):
    """Inputs that drive a coordinate or rate past the FMU's state limits (issue 36: fmi2OK with a coordinate
    of -5.3e33, then the FMU refused to restore the state it had reached): after every fmi2OK step the state
    is saved and restored on the spot; the first refused step's message."""
    lib = _open(dir)
    h = _host(lib, "limits")
    init = h.init({})
    h.set(values)
    t, statuses, unrestorable = 0.0, [], []
    for _ in range(steps):
        st = h.step(t, dt)
        statuses.append(st)
        if st > 1:
            break
        t += dt
        gs, s = h.get_state()
        ss = h.set_state(s)
        if gs > 1 or ss > 1:
            unrestorable.append([t, h.errors()[-1:]])
        h.free_state(s)
    errors = h.errors()
    h.free()
    return {"init": init, "statuses": statuses, "t": t, "unrestorable": unrestorable, "errors": errors[-1:]}


@case
def restore_fuzz(dir, seed=1, n=250, dt=0.01):
    """Random legitimate and hostile calls between saving and restoring FMU states (inputs set to sane,
    huge (±1e300), NaN and infinite values, steps of several sizes, some refused): after every
    fmi2SetFMUstate every output (Real, Integer, Boolean) reads what it read when the state was saved, bit
    for bit; restoring a genuine state succeeds whatever inputs are held; every state an fmi2OK step
    reaches can be saved and restored on the spot."""
    import random
    rng = random.Random(seed)
    lib = _open(dir)
    h = _host(lib, "fuzz")
    init = h.init({})
    inputs = h.reals("input")
    values = [0.0, 1e300, -1e300, float("nan"), float("inf"), 1e15, -1e5]
    saved, t = [], 0.0
    out = {"init": init, "mismatch": [], "refused": [], "unrestorable": [], "steps": [0, 0], "restores": 0}
    for k in range(n):
        a = rng.random()
        if a < 0.3 and inputs:
            name = rng.choice(inputs)
            start = float(_start(lib, name) or 0.0)
            h.set({name: rng.choice(values + [start, start * (1 + rng.uniform(-0.2, 0.2)) + rng.uniform(-1, 1)])})
        elif a < 0.65:
            size = rng.choice((dt, dt / 3, 2.5 * dt))
            st = h.step(t, size)
            out["steps"][st > 1] += 1
            if st <= 1:
                t += size
                before = h.read_all()
                gs, s = h.get_state()
                ss = h.set_state(s) if gs <= 1 else 99
                if ss > 1 or h.read_all() != before:
                    out["unrestorable"].append([k, t, ss, h.errors()[-1:]])
                h.free_state(s)
        elif a < 0.8 or not saved:
            st, s = h.get_state()
            if st <= 1:
                saved.append((s, h.read_all(), t))
        else:
            s, outputs, ts = rng.choice(saved)
            st = h.set_state(s)
            out["restores"] += 1
            if st > 1:
                out["refused"].append([k, h.errors()[-1:]])
            elif h.read_all() != outputs:
                got = h.read_all()
                out["mismatch"].append([k, [i for i, (x, y) in enumerate(zip(got, outputs)) if x != y][:5]])
            else:
                t = ts
    h.free()
    return out


# ------------------------------------------------------------------------------------------ values
@case
def start_value(dir, values, name="start"):
    """Initialization with out-of-range start values/parameters: fmi2Error naming them, and a
    retry with the defaults succeeds."""
    lib = _open(dir)
    h = _host(lib, name)
    set_status, rest = h.configure(values)          # (FMI 3.0: structural parameters in configuration mode)
    h.enter_init()
    set_status = max(set_status, h.set(rest))
    exit1 = h.exit_init()
    errors = h.errors()
    if rest != values:                              # a structural parameter: reset, configured at its start
        h.call("fmi3Reset")
        h.configure({k: _start(lib, k) for k in values})
        h.enter_init()
    h.set({k: _start(lib, k) for k in rest})
    exit2 = h.exit_init()
    steps, _ = _run(h, 0.0, 2, 0.01) if exit2 <= 1 else ([], 0)
    h.free()
    return {"set": set_status, "exit": exit1, "errors": errors, "retry": exit2, "steps": steps}


@case
def start_values(dir, trials):
    """:func:`start_value` for each of ``trials`` (a list of ``values``) in turn, each a fresh instance of its own
    name, in this one process (a process per trial spent most of its time starting): a list of their results. The
    line printed before each names it, should one crash the host."""
    out = []
    for k, values in enumerate(trials):
        print("trial", k, values, file=sys.stderr, flush=True)
        out.append(start_value(dir, values, name=f"start{k}"))
    return out


@case
def bad_input(dir, values, steps=2, dt=0.01, start=None):
    """Inputs that make the result non-finite or the motion impossible: the step fails with a
    message, outputs and time stay those of the last good step, and stepping goes on once the
    inputs are sane again."""
    lib = _open(dir)
    h = _host(lib, "input")
    init = h.init(start or {})
    good, t = _run(h, 0.0, steps, dt)
    _, before = _outputs(h)
    saved = {k: _start(lib, k) for k in values}
    set_status = h.set(values)
    del h.messages[:]
    failed, t_fail = _run(h, t, 400, dt)
    errors = h.errors()
    get_status, after = _outputs(h)
    last_ok = h.last_successful_time()
    h.set(saved)
    recovered = h.step(t_fail, dt)
    h.free()
    return {"init": init, "good": good, "set": set_status, "failed": failed, "t_fail": t_fail, "errors": errors,
            "get": get_status, "finite": all(math.isfinite(v) for v in after), "recovered": recovered,
            "last_successful_time": last_ok, "unchanged_if_first": _hex(after) == _hex(before)}


@case
def bad_setup(dir, start=0.0, stop=None, tol=None, then_step=None):
    lib = Library(dir)
    h = Host(lib, "setup")
    st = h.setup(start, stop, tol)
    errors = h.errors()
    out = {"setup": st, "errors": errors}
    if then_step is not None:
        h2 = Host(lib, "setup2")
        h2.setup(0.0, then_step[0])
        h2.call("fmi2EnterInitializationMode")
        h2.call("fmi2ExitInitializationMode")
        out["step"] = h2.step(0.0, then_step[1])
        out["step_errors"] = h2.errors()
        h2.free()
    h.free()
    return out


# ------------------------------------------------------------------------------------------ raw calls
@case
def raw_calls(dir, which):
    """Malformed calls (NULL arrays, NULL/freed/foreign state handles, wrong buffer sizes, NULL
    component): fmi2Error (or the documented status) with a message; the instance still steps."""
    lib = Library(dir)
    h = Host(lib, "raw")
    h.init({})
    h.step(0.0, 0.01)
    vr = (c_uint * 1)(lib.vr[h.reals()[0]])
    one = c_double * 1
    st, s = h.get_state()
    calls = {
        "getreal_null_vr": lambda: h.f.fmi2GetReal(h.c, None, 3, one()),
        "getreal_null_values": lambda: h.f.fmi2GetReal(h.c, vr, 1, None),
        "setreal_null_values": lambda: h.f.fmi2SetReal(h.c, vr, 1, None),
        "getreal_huge_n": lambda: h.f.fmi2GetReal(h.c, vr, 1 << 40, one()),
        "getreal_unknown_vr": lambda: h.f.fmi2GetReal(h.c, (c_uint * 1)(10 ** 9), 1, one()),
        "setstring_null_value": lambda: h.f.fmi2SetString(h.c, vr, 1, (c_char_p * 1)()),
        "null_component_step": lambda: h.f.fmi2DoStep(None, 0.01, 0.01, 1),
        "null_component_get": lambda: h.f.fmi2GetReal(None, vr, 1, one()),
        "set_null_state": lambda: h.f.fmi2SetFMUstate(h.c, None),
        "set_foreign_state": lambda: h.f.fmi2SetFMUstate(h.c, c_void_p(0xDEADBEEF)),
        "free_foreign_state": lambda: h.f.fmi2FreeFMUstate(h.c, byref(c_void_p(0xDEADBEEF))),
        "set_freed_state": lambda: (h.f.fmi2FreeFMUstate(h.c, byref(c_void_p(s.value))),
                                    h.f.fmi2SetFMUstate(h.c, s))[1],
        "serialize_wrong_size": lambda: h.f.fmi2SerializeFMUstate(h.c, s, create_string_buffer(8), 8),
        "serialize_null_buffer": lambda: h.f.fmi2SerializeFMUstate(h.c, s, None, 100),
        "size_null_pointer": lambda: h.f.fmi2SerializedFMUstateSize(h.c, s, None),
        "deserialize_null": lambda: h.f.fmi2DeSerializeFMUstate(h.c, None, 100, byref(c_void_p())),
        "deserialize_garbage": lambda: h.f.fmi2DeSerializeFMUstate(h.c, create_string_buffer(b"x" * 300, 300), 300,
                                                                   byref(c_void_p())),
        "deserialize_empty": lambda: h.f.fmi2DeSerializeFMUstate(h.c, create_string_buffer(0), 0, byref(c_void_p())),
        "get_state_null_pointer": lambda: h.f.fmi2GetFMUstate(h.c, None),
        "debug_logging_null_categories": lambda: h.f.fmi2SetDebugLogging(h.c, 1, 2, None),
        "debug_logging_unknown_category": lambda: h.f.fmi2SetDebugLogging(
            h.c, 1, 1, (c_char_p * 1)(b"logNoSuchThing")),
        "status_null_value": lambda: h.f.fmi2GetRealStatus(h.c, 2, None),
        "status_bad_kind": lambda: h.f.fmi2GetRealStatus(h.c, 77, byref(c_double())),
        "step_nan": lambda: h.step(0.01, float("nan")),
        "step_inf_time": lambda: h.step(float("inf"), 0.01),
        "setreal_nan": lambda: h.f.fmi2SetReal(h.c, (c_uint * 1)(lib.vr[h.reals("input")[0]]), 1,
                                               one(float("nan"))),
        "setinteger_min_int": lambda: h.f.fmi2SetInteger(
            h.c, (c_uint * 1)(next(v.valueReference for v in lib.md.modelVariables
                                   if v.type in ("Integer", "Enumeration"))), 1,
            (c_int * 1)(-2 ** 31)),
    }
    del h.messages[:]
    status = calls[which]()
    messages = [m for s_, _, m in h.messages if s_ >= 2]
    after = h.step(0.01, 0.01)
    h.free()
    return {"status": status, "messages": messages, "step_after": after}


# ------------------------------------------------------------------------------------------ logging
@case
def logging(dir, logging_on, categories=None):
    """What reaches the host's logger: errors always, debug messages only with logging on."""
    lib = Library(dir)
    h = Host(lib, "log", logging_on=logging_on)
    if categories is not None:
        arr = (c_char_p * len(categories))(*[c.encode() for c in categories])
        h.f.fmi2SetDebugLogging(h.c, 1, len(categories), arr)
    h.init({})
    status = h.step(5.0, 0.01)                           # not the FMU's time: an error
    h.free()
    return {"status": status, "messages": h.messages}


#: every fmi2 function after its component: its arguments' kinds (B fmi2Boolean, I an int (an fmi2Type, a status
#: kind), D fmi2Real, Z size_t, P a pointer: an array, an out argument, an FMU state, the event info)
FUZZ_SIGNATURES = {
    "fmi2SetDebugLogging": "BZP", "fmi2SetupExperiment": "BDDBD", "fmi2EnterInitializationMode": "",
    "fmi2ExitInitializationMode": "", "fmi2Terminate": "", "fmi2Reset": "", "fmi2GetReal": "PZP",
    "fmi2GetInteger": "PZP", "fmi2GetBoolean": "PZP", "fmi2GetString": "PZP", "fmi2SetReal": "PZP",
    "fmi2SetInteger": "PZP", "fmi2SetBoolean": "PZP", "fmi2SetString": "PZP", "fmi2GetFMUstate": "P",
    "fmi2SetFMUstate": "P", "fmi2FreeFMUstate": "P", "fmi2SerializedFMUstateSize": "PP",
    "fmi2SerializeFMUstate": "PPZ", "fmi2DeSerializeFMUstate": "PZP", "fmi2GetDirectionalDerivative": "PZPZPP",
    "fmi2SetRealInputDerivatives": "PZPP", "fmi2GetRealOutputDerivatives": "PZPP", "fmi2DoStep": "DDB",
    "fmi2CancelStep": "", "fmi2GetStatus": "IP", "fmi2GetRealStatus": "IP", "fmi2GetIntegerStatus": "IP",
    "fmi2GetBooleanStatus": "IP", "fmi2GetStringStatus": "IP", "fmi2EnterEventMode": "",
    "fmi2NewDiscreteStates": "P", "fmi2EnterContinuousTimeMode": "", "fmi2CompletedIntegratorStep": "BPP",
    "fmi2SetTime": "D", "fmi2SetContinuousStates": "PZ", "fmi2GetDerivatives": "PZ", "fmi2GetEventIndicators": "PZ",
    "fmi2GetContinuousStates": "PZ", "fmi2GetNominalsOfContinuousStates": "PZ"}
#: the values each kind takes (P: 0 = NULL, 1 = a zeroed 64-byte buffer)
FUZZ_VALUES = {"B": (0, 1, 7), "I": (0, 3, -1, 77), "D": (0.0, math.nan, -1.0, 1e300),
               "Z": (0, 1, 3, 2 ** 40, 2 ** 64 - 1), "P": (0, 1)}


@case
def fuzz(dir, me=False, per_phase=40, seed=1):
    """Every fmi2 function of the interface (co-simulation, or Model Exchange with ``me``), in every phase an instance
    can be in, with argument combinations drawn from :data:`FUZZ_VALUES` (NULL arrays and out arguments, counts up to
    2⁶⁴ − 1, NaN and huge times, Booleans other than 0 and 1, unknown status kinds, a zeroed buffer as an FMU state;
    a buffer with a count beyond its 64 bytes is left out: that is the host's lie), each on a fresh instance and once
    on a NULL component. A crash is the process's return code (the last line printed names the call). Returned: the
    calls made, and those that answered fmi2Error without a message, a status FMI 2.0 does not have, or did not
    refuse a NULL component. tests/fmi3_cases.py fuzz is the FMI 3.0 one."""
    import ctypes
    import random

    from tests.fuzz_args import Findings, arguments, combinations
    lib = Library(dir)
    raw = ctypes.CDLL(str(lib.dir / "binaries" / "linux64" / f"{lib.id}.so"))     # (untyped: any argument goes)
    types = {"B": c_int, "I": c_int, "D": c_double, "Z": ctypes.c_size_t, "P": c_void_p}

    def fn(name, kinds=""):
        f = getattr(raw, name)
        f.restype, f.argtypes = c_int, [c_void_p] + [types[k] for k in kinds]
        return f

    phases = {"instantiated": (), "initialization": ("fmi2SetupExperiment", "fmi2EnterInitializationMode"),
              "running": ("fmi2SetupExperiment", "fmi2EnterInitializationMode", "fmi2ExitInitializationMode"),
              "terminated": ("fmi2SetupExperiment", "fmi2EnterInitializationMode", "fmi2ExitInitializationMode",
                             "fmi2Terminate")}
    if me:
        phases["continuous"] = phases["running"] + ("fmi2EnterContinuousTimeMode",)
    rng = random.Random(seed)
    found = Findings(range(6))
    for name, kinds in FUZZ_SIGNATURES.items():
        if not hasattr(raw, name):
            continue
        f = fn(name, kinds)
        combos = combinations(kinds, FUZZ_VALUES)
        for phase, path in phases.items():
            for combo in rng.sample(combos, min(per_phase, len(combos))):
                h = Host(lib, "fuzz", fmu_type=0 if me else 1)
                for step in path:
                    if step == "fmi2SetupExperiment":
                        h.setup()
                    else:
                        h.call(step)
                args, _alive = arguments(kinds, combo)           # (_alive: the buffers, during the call)
                print(name, phase, combo, flush=True)
                before = len(h.messages)
                status = f(h.c, *args)
                found.check(f"{name} {phase} {combo}", status, len(h.messages) > before, f(None, *args))
                h.free()
    return found.result()


# ------------------------------------------------------------------------------------------ threads
def _scenario(lib, name, inputs, n, dt):
    h = _host(lib, name)
    h.init({})
    h.set(inputs)
    statuses, _ = _run(h, 0.0, n, dt)
    _, vals = _outputs(h)
    h.free()
    return statuses, _hex(vals)


@case
def threads(dirs, inputs, reps=20, n=50, dt=0.01):
    """Instances of one FMU and of two FMUs stepped concurrently from two threads, `reps` times:
    the same bits as the same runs one after the other."""
    libs = [_open(d) for d in dirs]
    jobs = [(libs[0], inputs[0]), (libs[0], inputs[1]), (libs[-1], inputs[-1])]
    sequential = [_scenario(lib, f"seq{k}", inp, n, dt) for k, (lib, inp) in enumerate(jobs)]
    mismatches = 0
    for r in range(reps):
        results = [None] * len(jobs)

        def work(k, lib, inp):
            results[k] = _scenario(lib, f"r{r}t{k}", inp, n, dt)

        threads_ = [threading.Thread(target=work, args=(k, lib, inp)) for k, (lib, inp) in enumerate(jobs)]
        for th in threads_:
            th.start()
        for th in threads_:
            th.join()
        mismatches += sum(res != ref for res, ref in zip(results, sequential))
    ok_status = all(max(s[0]) <= 1 for s in sequential)
    return {"mismatches": mismatches, "ok_status": ok_status, "runs": reps * len(jobs)}


# ------------------------------------------------------------------------------------------ soak
def _rss_kib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


@case
def soak(dir, n, dt, inputs, params=None, samples=10):
    """n doSteps of dt in one instance; resident memory sampled; the final outputs (hex) for the
    caller to compare with a fresh run of the same length."""
    lib = _open(dir)
    h = _host(lib, "soak")
    h.init(params or {})
    h.set(inputs)
    rss, worst = [], 0
    t = 0.0
    step = (lambda t: h.f.fmi2DoStep(h.c, t, dt, 1)) if lib.version == 2 else (lambda t: h.step(t, dt))
    chunk = max(1, n // samples)
    for k in range(n):
        st = step(t)
        if st > 1:
            worst = st
            break
        t = (k + 1) * dt
        if (k + 1) % chunk == 0:
            rss.append(_rss_kib())
    _, vals = _outputs(h)
    names = h.reals()
    h.free()
    return {"steps": k + 1, "worst": worst, "t": t, "rss_kib": rss, "outputs": dict(zip(names, _hex(vals)))}


# ------------------------------------------------------------------------------------------ runtimes
@case
def mixed_runtimes(dir, n=200):
    """The host runs numba's JIT (and scipy's BLAS it loads) while the FMU runs its native
    kernels, then exits: the process must end cleanly."""
    import numba
    import numpy as np

    @numba.njit(cache=False)
    def work(k):
        a = np.zeros(k)
        for i in range(k):
            a[i] = np.sin(i)
        return a.sum()

    lib = Library(dir)
    h = Host(lib, "mixed", logging_on=True)
    h.init({})
    statuses, _ = _run(h, 0.0, n, 0.001)
    kernels = [m for _, _, m in h.messages if "kernels:" in m]
    total = work(1000)
    h.free()
    return {"statuses": max(statuses), "kernels": kernels, "jit": total, "numba": "numba" in sys.modules}


@case
def fmpy_simulate(path, names, **kwargs):
    """FMPy's simulate_fmu in this fresh process: {name: hex values} of "time" and ``names``. (In the test
    process, after many FMUs were loaded and unloaded there, a native FMU's fmi2ExitInitializationMode under
    FMPy crashed the process twice in CI, cause not found; a fresh process per run is what a user's is.)"""
    from fmpy import simulate_fmu
    res = simulate_fmu(path, output=names, **kwargs)
    return {n: _hex(res[n]) for n in ["time", *names]}


def main(argv):
    name, args = argv[1], json.loads(argv[2]) if len(argv) > 2 else {}
    result = CASES[name](**args)
    sys.stdout.write("RESULT " + json.dumps(result, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
