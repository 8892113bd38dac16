"""A raw FMI 2.0 host over ctypes (co-simulation, and Model Exchange where the binary has it), for robustness
tests (tests/fmu_cases.py).

Unlike FMPy's FMU2Slave it passes whatever a test asks for (NULL pointers, odd URIs, wrong
GUIDs, foreign state handles) and returns every status instead of raising. It imports
neither fmu_mb nor numba: a process using it is a host as an importing tool would be.
Log messages are collected through FMPy's logger proxy (the C function that formats the
message as a printf format with its variadic arguments, as FMPy's default logger does), so
a message must survive formatting to be read back.
"""
from __future__ import annotations

import ctypes
import tempfile
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char, c_char_p, c_double, c_int, c_size_t, c_uint,
                    c_void_p, create_string_buffer)
from pathlib import Path

from fmpy import read_model_description
from fmpy.fmi1 import calloc, free

Logger = CFUNCTYPE(None, c_void_p, c_char_p, c_int, c_char_p, c_char_p)
Alloc = CFUNCTYPE(c_void_p, c_size_t, c_size_t)
Free = CFUNCTYPE(None, c_void_p)
StepFinished = CFUNCTYPE(None, c_void_p, c_int)


class Callbacks(Structure):
    _fields_ = [("logger", Logger), ("allocateMemory", Alloc), ("freeMemory", Free),
                ("stepFinished", StepFinished), ("componentEnvironment", c_void_p)]


VR = POINTER(c_uint)
SIGNATURES = {
    "fmi2Instantiate": (c_void_p, [c_char_p, c_int, c_char_p, c_char_p, c_void_p, c_int, c_int]),
    "fmi2FreeInstance": (None, [c_void_p]),
    "fmi2SetDebugLogging": (c_int, [c_void_p, c_int, c_size_t, POINTER(c_char_p)]),
    "fmi2SetupExperiment": (c_int, [c_void_p, c_int, c_double, c_double, c_int, c_double]),
    "fmi2EnterInitializationMode": (c_int, [c_void_p]),
    "fmi2ExitInitializationMode": (c_int, [c_void_p]),
    "fmi2Terminate": (c_int, [c_void_p]),
    "fmi2Reset": (c_int, [c_void_p]),
    "fmi2GetReal": (c_int, [c_void_p, VR, c_size_t, POINTER(c_double)]),
    "fmi2GetInteger": (c_int, [c_void_p, VR, c_size_t, POINTER(c_int)]),
    "fmi2GetBoolean": (c_int, [c_void_p, VR, c_size_t, POINTER(c_int)]),
    "fmi2GetString": (c_int, [c_void_p, VR, c_size_t, POINTER(c_char_p)]),
    "fmi2SetReal": (c_int, [c_void_p, VR, c_size_t, POINTER(c_double)]),
    "fmi2SetInteger": (c_int, [c_void_p, VR, c_size_t, POINTER(c_int)]),
    "fmi2SetBoolean": (c_int, [c_void_p, VR, c_size_t, POINTER(c_int)]),
    "fmi2SetString": (c_int, [c_void_p, VR, c_size_t, POINTER(c_char_p)]),
    "fmi2GetFMUstate": (c_int, [c_void_p, POINTER(c_void_p)]),
    "fmi2SetFMUstate": (c_int, [c_void_p, c_void_p]),
    "fmi2FreeFMUstate": (c_int, [c_void_p, POINTER(c_void_p)]),
    "fmi2SerializedFMUstateSize": (c_int, [c_void_p, c_void_p, POINTER(c_size_t)]),
    "fmi2SerializeFMUstate": (c_int, [c_void_p, c_void_p, POINTER(c_char), c_size_t]),
    "fmi2DeSerializeFMUstate": (c_int, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_void_p)]),
    "fmi2GetDirectionalDerivative": (c_int, [c_void_p, VR, c_size_t, VR, c_size_t, POINTER(c_double),
                                             POINTER(c_double)]),
    "fmi2SetRealInputDerivatives": (c_int, [c_void_p, VR, c_size_t, POINTER(c_int), POINTER(c_double)]),
    "fmi2GetRealOutputDerivatives": (c_int, [c_void_p, VR, c_size_t, POINTER(c_int), POINTER(c_double)]),
    "fmi2DoStep": (c_int, [c_void_p, c_double, c_double, c_int]),
    "fmi2CancelStep": (c_int, [c_void_p]),
    "fmi2GetStatus": (c_int, [c_void_p, c_int, POINTER(c_int)]),
    "fmi2GetRealStatus": (c_int, [c_void_p, c_int, POINTER(c_double)]),
    "fmi2GetIntegerStatus": (c_int, [c_void_p, c_int, POINTER(c_int)]),
    "fmi2GetBooleanStatus": (c_int, [c_void_p, c_int, POINTER(c_int)]),
    "fmi2GetStringStatus": (c_int, [c_void_p, c_int, POINTER(c_char_p)]),
}

class EventInfo(Structure):
    _fields_ = [("newDiscreteStatesNeeded", c_int), ("terminateSimulation", c_int),
                ("nominalsOfContinuousStatesChanged", c_int), ("valuesOfContinuousStatesChanged", c_int),
                ("nextEventTimeDefined", c_int), ("nextEventTime", c_double)]


_REALS = (c_int, [c_void_p, POINTER(c_double), c_size_t])
#: the Model Exchange functions (a binary without them, the PD controller's, offers co-simulation only)
ME_SIGNATURES = {
    "fmi2EnterEventMode": (c_int, [c_void_p]),
    "fmi2NewDiscreteStates": (c_int, [c_void_p, POINTER(EventInfo)]),
    "fmi2EnterContinuousTimeMode": (c_int, [c_void_p]),
    "fmi2CompletedIntegratorStep": (c_int, [c_void_p, c_int, POINTER(c_int), POINTER(c_int)]),
    "fmi2SetTime": (c_int, [c_void_p, c_double]),
    "fmi2SetContinuousStates": _REALS,
    "fmi2GetDerivatives": _REALS,
    "fmi2GetEventIndicators": _REALS,
    "fmi2GetContinuousStates": _REALS,
    "fmi2GetNominalsOfContinuousStates": _REALS,
}

#: messages by instance name: FMPy's logger proxy keeps one Python logger per process (the last
#: one given to it), so one logger serves every Host and sorts the messages by instance name
MESSAGES: dict = {}


def _log(env, instance, status, category, message):
    key = instance.decode("utf-8", "replace") if instance else ""
    MESSAGES.setdefault(key, []).append((status, category.decode() if category else None,
                                         message.decode("utf-8", "replace") if message else ""))


_LOGGER = Logger(_log)


class Library:
    """The FMU binary of an extracted FMU, with typed fmi2 functions."""

    version = 2

    def __init__(self, unzipdir):
        self.dir = Path(unzipdir)
        with tempfile.TemporaryDirectory() as tmp:      # FMPy (lxml) cannot open paths that are not UTF-8
            xml = Path(tmp) / "modelDescription.xml"
            xml.write_bytes((self.dir / "modelDescription.xml").read_bytes())
            self.md = read_model_description(str(xml))
        self.id = self.md.coSimulation.modelIdentifier
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.var = {v.name: v for v in self.md.modelVariables}
        self.dll = ctypes.CDLL(str(self.dir / "binaries" / "linux64" / f"{self.id}.so"))
        for name, (res, args) in SIGNATURES.items():
            f = getattr(self.dll, name)
            f.restype, f.argtypes = res, args
        self.model_exchange = hasattr(self.dll, "fmi2SetContinuousStates")
        for name, (res, args) in (ME_SIGNATURES.items() if self.model_exchange else ()):
            f = getattr(self.dll, name)
            f.restype, f.argtypes = res, args
        self.n_states = len(self.md.derivatives)

    def uri(self) -> str:
        return (self.dir / "resources").as_uri()


class Host:
    """One instance; ``messages`` collects (status, category, text) of every log call made for its
    instance name (give instances of one process distinct names)."""

    def __init__(self, lib: Library, name="inst", logging_on=False, uri=None, guid=None, fmu_type=1,
                 callbacks=True, name_bytes=None):
        from fmpy.logging import addLoggerProxy
        self.lib, self.f = lib, lib.dll
        if name_bytes is not None and not isinstance(name_bytes, bytes):       # c_char_p(): a NULL name
            key = ""
        else:
            key = (name_bytes.decode("utf-8", "replace") if name_bytes is not None else name) or ""
        self.messages = MESSAGES.setdefault(key, [])
        self._cb = Callbacks()
        self._cb.logger = _LOGGER
        self._cb.allocateMemory = Alloc(calloc)
        self._cb.freeMemory = Free(free)
        addLoggerProxy(byref(self._cb))
        guid = lib.md.guid if guid is None else guid
        uri = lib.uri() if uri is None else uri
        self.c = self.f.fmi2Instantiate(
            name_bytes if name_bytes is not None else (name.encode() if name is not None else None), fmu_type,
            guid.encode() if isinstance(guid, str) else guid, uri.encode() if isinstance(uri, str) else uri,
            ctypes.addressof(self._cb) if callbacks else None, 0, int(logging_on))

    # ---------------------------------------------------------------- calls
    def call(self, name, *args) -> int:
        return getattr(self.f, name)(self.c, *args)

    def setup(self, start=0.0, stop=None, tol=None) -> int:
        return self.f.fmi2SetupExperiment(self.c, int(tol is not None), tol or 0.0, start, int(stop is not None),
                                          0.0 if stop is None else stop)

    def init(self, params=None, start=0.0) -> int:
        st = self.enter_init(start)
        st = max(st, self.set(params or {}))
        return max(st, self.exit_init())

    # (the methods of the phases, states and values that tests/fmi3_raw.Host3 has too: a case using only them runs
    # on both FMI versions)
    def configure(self, values: dict) -> tuple[int, dict]:
        """FMI 2.0 has no structural parameters: (0, ``values``) (tests/fmi3_raw.Host3 sets them)."""
        return 0, values

    def enter_init(self, start=0.0) -> int:
        return max(self.setup(start), self.call("fmi2EnterInitializationMode"))

    def exit_init(self) -> int:
        return self.call("fmi2ExitInitializationMode")

    def set_state(self, state) -> int:
        return self.f.fmi2SetFMUstate(self.c, state)

    def free_state(self, state) -> int:
        return self.f.fmi2FreeFMUstate(self.c, byref(state))

    def last_successful_time(self) -> float:
        t = c_double()
        self.f.fmi2GetRealStatus(self.c, 2, byref(t))
        return t.value

    def read_all(self) -> list:
        """Every output of every type (Real, Integer/Enumeration, Boolean): a status per type, then the values (Real
        as hex strings)."""
        out = []
        for types, fn, ctype in ((("Real",), self.f.fmi2GetReal, c_double),
                                 (("Integer", "Enumeration"), self.f.fmi2GetInteger, c_int),
                                 (("Boolean",), self.f.fmi2GetBoolean, c_int)):
            vrs = [v.valueReference for v in self.lib.md.modelVariables if v.causality == "output" and v.type in types]
            buf = (ctype * max(1, len(vrs)))()
            out.append(fn(self.c, (c_uint * max(1, len(vrs)))(*vrs), len(vrs), buf))
            out += [float(x).hex() if ctype is c_double else int(x) for x in buf[:len(vrs)]]
        return out

    def set(self, values: dict) -> int:
        st = 0
        for name, value in values.items():
            vr = (c_uint * 1)(self.lib.vr[name])
            t = self.lib.var[name].type
            if isinstance(value, str):                      # a start value as the modelDescription has it
                value = value == "true" if t == "Boolean" else float(value)
            if t == "Real":
                st = max(st, self.f.fmi2SetReal(self.c, vr, 1, (c_double * 1)(float(value))))
            elif t in ("Integer", "Enumeration"):            # FMI 2.0: enumerations are fmi2Integer
                st = max(st, self.f.fmi2SetInteger(self.c, vr, 1, (c_int * 1)(int(value))))
            else:
                st = max(st, self.f.fmi2SetBoolean(self.c, vr, 1, (c_int * 1)(int(bool(value)))))
        return st

    def get(self, names) -> tuple[int, list]:
        vrs = (c_uint * len(names))(*[self.lib.vr[n] for n in names])
        out = (c_double * len(names))()
        st = self.f.fmi2GetReal(self.c, vrs, len(names), out)
        return st, list(out)

    def reals(self, causality="output") -> list:
        return [v.name for v in self.lib.md.modelVariables if v.causality == causality and v.type == "Real"]

    def step(self, t, h) -> int:
        return self.f.fmi2DoStep(self.c, t, h, 1)

    def output_derivatives(self, names, order=1) -> tuple[int, list]:
        """(status, the time derivatives of order ``order``) of Real outputs by name
        (fmi2GetRealOutputDerivatives)."""
        n = len(names)
        out = (c_double * max(1, n))()
        st = self.f.fmi2GetRealOutputDerivatives(self.c, (c_uint * max(1, n))(*[self.lib.vr[x] for x in names]), n,
                                                 (c_int * max(1, n))(*[order] * n), out)
        return st, list(out)[:n]

    def get_state(self) -> tuple[int, c_void_p]:
        s = c_void_p()
        return self.f.fmi2GetFMUstate(self.c, byref(s)), s

    def serialize(self, state) -> tuple[int, bytes]:
        n = c_size_t()
        st = self.f.fmi2SerializedFMUstateSize(self.c, state, byref(n))
        if st > 1:
            return st, b""
        buf = create_string_buffer(n.value)
        st = max(st, self.f.fmi2SerializeFMUstate(self.c, state, buf, n.value))
        return st, buf.raw

    def deserialize(self, blob: bytes) -> tuple[int, c_void_p]:
        s = c_void_p()
        buf = create_string_buffer(blob, len(blob))
        return self.f.fmi2DeSerializeFMUstate(self.c, buf, len(blob), byref(s)), s

    # ---------------------------------------------------------------- Model Exchange
    def reals_call(self, name, n, values=None) -> tuple[int, list]:
        """(status, values) of an fmi2 function taking (c, fmi2Real[], size_t): ``values`` passed in, or an
        array of ``n`` read back."""
        buf = (c_double * max(n, 1))(*(values or []))
        return getattr(self.f, name)(self.c, buf, n), list(buf)[:n]

    def states(self) -> tuple[int, list]:
        return self.reals_call("fmi2GetContinuousStates", self.lib.n_states)

    def derivatives(self) -> tuple[int, list]:
        return self.reals_call("fmi2GetDerivatives", self.lib.n_states)

    def set_states(self, x) -> int:
        return self.reals_call("fmi2SetContinuousStates", len(x), list(x))[0]

    def completed(self) -> tuple[int, int, int]:
        event, stop = c_int(7), c_int(7)
        st = self.f.fmi2CompletedIntegratorStep(self.c, 1, byref(event), byref(stop))
        return st, event.value, stop.value

    def errors(self) -> list:
        return [m for s, _, m in self.messages if s >= 3]

    def free(self) -> None:
        if self.c:
            self.f.fmi2FreeInstance(self.c)
            self.c = None
