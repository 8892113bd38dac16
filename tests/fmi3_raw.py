"""The FMI 3.0 co-simulation host of the robustness cases (tests/fmu_cases.py): the methods of tests/fmi_raw.Host,
over FMPy's FMI 3.0 layer (fmpy.fmi3: ctypes over the binary), every status returned instead of raised. Variables
are named as the FMI 2.0 FMU names them (an array's elements by fmu_mb.fmi.arrays3.element_names: ``E.r[2]``), so
one case reads both versions alike. Of fmu_mb this imports only that naming rule.
"""
from __future__ import annotations

import math
from ctypes import byref, c_bool, c_double, c_int32, c_int64, c_size_t, c_ubyte, c_uint32, c_void_p
from pathlib import Path

from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave

from fmu_mb.fmi.arrays3 import element_names

#: the value types of FMI 3.0 variables, as ctypes (an Enumeration is read and set as Int64)
CTYPES = {"Float64": c_double, "Int32": c_int32, "Int64": c_int64, "Enumeration": c_int64, "Boolean": c_bool}


class Library3:
    """An extracted FMI 3.0 FMU: its model description, and where each FMI 2.0 name is (variable, element)."""

    version = 3

    def __init__(self, unzipdir):
        self.dir = Path(unzipdir)
        self.md = read_model_description(str(self.dir))
        self.id = self.md.coSimulation.modelIdentifier
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.var = {}                                    # FMI 2.0 name -> (variable, element index)
        for v in self.md.modelVariables:
            for k, n in enumerate(element_names(v.name, v.shape or ())):
                self.var[n] = (v, k)

    def size(self, v) -> int:
        return int(math.prod(v.shape or ()))


class Host3:
    """One FMI 3.0 co-simulation instance; ``messages`` collects (status, category, text) of its log."""

    def __init__(self, lib: Library3, name="inst", logging_on=False):
        self.lib, self.messages, self.t_last = lib, [], math.nan
        self.fmu = FMU3Slave(guid=lib.md.guid, unzipDirectory=str(lib.dir), modelIdentifier=lib.id,
                             instanceName=name)
        try:
            self.fmu.instantiate(loggingOn=logging_on, logMessage=self._log)
            self.c = self.fmu.component
        except Exception:  # noqa: BLE001 — FMPy raises a bare Exception when instantiation returns NULL
            self.c = None

    def _log(self, env, status, category, message):
        self.messages.append((int(status), category.decode() if category else None,
                              message.decode("utf-8", "replace") if message else ""))

    def call(self, name, *args) -> int:
        """The status of fmi3 function ``name`` on this instance with ``args``."""
        try:
            return int(getattr(self.fmu, name)(self.c, *args) or 0)
        except FMICallException as exc:
            return int(exc.status)

    # ---------------------------------------------------------------- the phases
    def enter_init(self, start=0.0) -> int:
        return self.call("fmi3EnterInitializationMode", False, 0.0, start, False, 0.0)

    def exit_init(self) -> int:
        return self.call("fmi3ExitInitializationMode")

    def configure(self, values: dict) -> tuple[int, dict]:
        """The structural parameters among ``values`` set in configuration mode (FMI 3.0: only there; from the
        phase instantiated); (status, the other values)."""
        structural = {n: x for n, x in values.items() if self.lib.var[n][0].causality == "structuralParameter"}
        if not structural:
            return 0, values
        st = self.call("fmi3EnterConfigurationMode")
        st = max(st, self.set(structural))
        st = max(st, self.call("fmi3ExitConfigurationMode"))
        return st, {n: x for n, x in values.items() if n not in structural}

    def init(self, params=None, start=0.0) -> int:
        st, params = self.configure(params or {})
        st = max(st, self.enter_init(start))
        st = max(st, self.set(params))
        return max(st, self.exit_init())

    def step(self, t, h) -> int:
        event, stop, early, last = c_bool(), c_bool(), c_bool(), c_double()
        st = self.call("fmi3DoStep", t, h, True, byref(event), byref(stop), byref(early), byref(last))
        if st <= 1:
            self.t_last = last.value
        return st

    def last_successful_time(self) -> float:
        """FMI 2.0's fmi2LastSuccessfulTime: the lastSuccessfulTime of the last step that returned one."""
        return self.t_last

    # ---------------------------------------------------------------- values
    def _values(self, v, n=None):
        """(status, the values of variable v)."""
        n = self.lib.size(v) if n is None else n
        buf = (CTYPES[v.type] * max(1, n))()
        getter = "Int64" if v.type == "Enumeration" else v.type
        st = self.call(f"fmi3Get{getter}", (c_uint32 * 1)(v.valueReference), 1, buf, n)
        return st, list(buf)[:n]

    def set(self, values: dict) -> int:
        """Set each FMI 2.0 name's value (an array element: its array read, the element changed, written back)."""
        st = 0
        for name, value in values.items():
            v, k = self.lib.var[name]
            if isinstance(value, str):                      # a start value as the modelDescription has it
                value = value == "true" if v.type == "Boolean" else float(value)
            if v.shape:
                got, whole = self._values(v)
                st = max(st, got)
                whole[k] = float(value)
            else:
                whole = [value]
            setter = "Int64" if v.type == "Enumeration" else v.type
            cast = {"Float64": float, "Boolean": bool}.get(v.type, int)
            buf = (CTYPES[v.type] * len(whole))(*[cast(x) for x in whole])
            st = max(st, self.call(f"fmi3Set{setter}", (c_uint32 * 1)(v.valueReference), 1, buf, len(whole)))
        return st

    def get(self, names) -> tuple[int, list]:
        """(status, values) of Float64 variables by their FMI 2.0 names (arrays read once)."""
        variables = {self.lib.var[n][0].name: self.lib.var[n][0] for n in names}
        read, st = {}, 0
        for name, v in variables.items():
            s, read[name] = self._values(v)
            st = max(st, s)
        return st, [read[self.lib.var[n][0].name][self.lib.var[n][1]] for n in names]

    def output_derivatives(self, names, order=1) -> tuple[int, list]:
        """(status, the time derivatives of order ``order``) of Float64 outputs by their FMI 2.0 names: each
        variable asked once (an array whole), in one fmi3GetOutputDerivatives call."""
        variables = list({self.lib.var[n][0].name: self.lib.var[n][0] for n in names}.values())
        count = sum(self.lib.size(v) for v in variables)
        buf = (c_double * max(1, count))()
        st = self.call("fmi3GetOutputDerivatives", (c_uint32 * max(1, len(variables)))(*[v.valueReference
                                                                                          for v in variables]),
                       len(variables), (c_int32 * max(1, len(variables)))(*[order] * len(variables)), buf, count)
        at, o = {}, 0
        for v in variables:
            at[v.name], o = o, o + self.lib.size(v)
        return st, [buf[at[self.lib.var[n][0].name] + self.lib.var[n][1]] for n in names]

    def reals(self, causality="output") -> list:
        """The FMI 2.0 names of the Float64 variables of ``causality`` (arrays element-wise)."""
        return [n for v in self.lib.md.modelVariables if v.causality == causality and v.type == "Float64"
                for n in element_names(v.name, v.shape or ())]

    def read_all(self) -> list:
        """Every output of every type (Float64, Int32, Enumeration, Boolean): a status per type, then the values
        (Float64 as hex strings)."""
        out = []
        for types in (("Float64",), ("Int32", "Enumeration"), ("Boolean",)):
            for v in [v for v in self.lib.md.modelVariables if v.causality == "output" and v.type in types]:
                st, vals = self._values(v)
                out.append(st)
                out += [float(x).hex() if v.type == "Float64" else int(x) for x in vals]
        return out

    # ---------------------------------------------------------------- FMU states
    def get_state(self) -> tuple[int, c_void_p]:
        s = c_void_p()
        return self.call("fmi3GetFMUState", byref(s)), s

    def set_state(self, state) -> int:
        return self.call("fmi3SetFMUState", state)

    def free_state(self, state) -> int:
        return self.call("fmi3FreeFMUState", byref(state))

    def serialize(self, state) -> tuple[int, bytes]:
        n = c_size_t()
        st = self.call("fmi3SerializedFMUStateSize", state, byref(n))
        if st > 1:
            return st, b""
        buf = (c_ubyte * n.value)()
        st = max(st, self.call("fmi3SerializeFMUState", state, buf, n.value))
        return st, bytes(buf)

    def deserialize(self, blob: bytes) -> tuple[int, c_void_p]:
        s = c_void_p()
        buf = (c_ubyte * max(1, len(blob))).from_buffer_copy(blob.ljust(1, b"\0"))
        return self.call("fmi3DeserializeFMUState", buf, len(blob), byref(s)), s

    def errors(self) -> list:
        return [m for s, _, m in self.messages if s >= 3]

    def free(self) -> None:
        if self.c:
            self.fmu.fmi3FreeInstance(self.c)
            self.c = None
