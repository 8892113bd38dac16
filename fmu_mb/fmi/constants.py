"""Every number the FMU core's C sources share with Python, defined once.

The C header ``fmu_mb_constants.h`` is generated from this module (:func:`c_header`) whenever an FMU
binary is compiled (fmu_mb.fmi.binary); no C source defines any of these itself (tests/fmi/test_constants.py
reads them all). The FMI 2.0 co-simulation state table is :data:`CALLS`: which phases each call is allowed
in, as a phase mask per call in C (the Reference-FMUs' ``MASK_fmi2DoStep`` shape), with the hint its refusal
gives. The message templates are fmu_mb.messages.

Importable without numpy or numba.
"""
from __future__ import annotations

import struct
from enum import IntEnum


class Phase(IntEnum):
    """Phases of an FMI 2.0 instance: the co-simulation state machine (section 4.2.4) and, for a Model
    Exchange instance, its event and continuous-time modes (section 3.2.3) in place of stepping."""
    INSTANTIATED = 0
    INITIALIZATION = 1
    STEPPING = 2
    TERMINATED = 3
    EVENT = 4               # Model Exchange: event mode
    CONTINUOUS = 5          # Model Exchange: continuous-time mode


#: phase names as messages say them, in code order
PHASE_NAMES = ("instantiated", "initialization mode", "stepping", "terminated", "event mode",
               "continuous-time mode")

_ALL = tuple(Phase)
_I, _N, _S, _T = Phase.INSTANTIATED, Phase.INITIALIZATION, Phase.STEPPING, Phase.TERMINATED
_E, _C = Phase.EVENT, Phase.CONTINUOUS
#: FMI 2.0 state table of both interfaces (the Reference-FMUs' masks): call -> (the phases it is allowed in,
#: what a refusal advises or ""). A co-simulation instance never is in event or continuous-time mode, a Model
#: Exchange instance never stepping; the API files refuse the other interface's functions by name first.
CALLS = {
    "fmi2SetupExperiment": ((_I,), ""),
    "fmi2EnterInitializationMode": ((_I,), ""),
    "fmi2ExitInitializationMode": ((_N,), "call fmi2EnterInitializationMode first"),
    "fmi2Terminate": ((_S, _E, _C), ""),
    "fmi2DoStep": ((_S,), "it is allowed after fmi2ExitInitializationMode and before fmi2Terminate"),
    "fmi2Get": ((_N, _S, _T, _E, _C), "call fmi2EnterInitializationMode first"),
    "fmi2Set": ((_I, _N, _S, _E, _C), "variables cannot be set after fmi2Terminate"),
    "fmi2Status": ((_S, _T), ""),
    "fmi2GetFMUstate": (_ALL, ""),
    "fmi2SetFMUstate": (_ALL, ""),
    "fmi2EnterEventMode": ((_E, _C), "call fmi2ExitInitializationMode first"),
    "fmi2NewDiscreteStates": ((_E,), "call fmi2EnterEventMode first"),
    "fmi2EnterContinuousTimeMode": ((_E,), "call fmi2ExitInitializationMode (or fmi2EnterEventMode) first"),
    "fmi2CompletedIntegratorStep": ((_C,), "call fmi2EnterContinuousTimeMode first"),
    "fmi2SetTime": ((_E, _C), "call fmi2ExitInitializationMode first"),
    "fmi2SetContinuousStates": ((_C,), "call fmi2EnterContinuousTimeMode first"),
    "fmi2GetDerivatives": ((_E, _C, _T), "call fmi2ExitInitializationMode first"),
    "fmi2GetContinuousStates": ((_N, _E, _C, _T), "call fmi2EnterInitializationMode first"),
    "fmi2GetEventIndicators": ((_N, _E, _C, _T), "call fmi2EnterInitializationMode first"),
    "fmi2GetNominalsOfContinuousStates": ((_I, _E, _C, _T), ""),
    "fmi2GetDirectionalDerivative": ((_N, _S, _T, _E, _C), "call fmi2EnterInitializationMode first"),
    "fmi2GetRealOutputDerivatives": ((_S, _T), "call fmi2ExitInitializationMode first"),
}


#: FMI 3.0 state table of both interfaces (fmi3.c): the same phases as FMI 2.0's (fmi3EnterInitializationMode
#: takes fmi2SetupExperiment's arguments; configuration mode is a flag of the phase `instantiated`, for the
#: structural parameters; no event mode in co-simulation: hasEventMode = false)
CALLS3 = {
    "fmi3EnterConfigurationMode": ((_I,), "configuration mode is entered after instantiation or fmi3Reset, before "
                                          "fmi3EnterInitializationMode"),
    "fmi3EnterInitializationMode": ((_I,), ""),
    "fmi3ExitInitializationMode": ((_N,), "call fmi3EnterInitializationMode first"),
    "fmi3Terminate": ((_S, _E, _C), ""),
    "fmi3DoStep": ((_S,), "it is allowed after fmi3ExitInitializationMode and before fmi3Terminate"),
    "fmi3Get": ((_N, _S, _T, _E, _C), "call fmi3EnterInitializationMode first"),
    "fmi3Set": ((_I, _N, _S, _E, _C), "variables cannot be set after fmi3Terminate"),
    "fmi3GetFMUState": (_ALL, ""),
    "fmi3SetFMUState": (_ALL, ""),
    "fmi3EnterEventMode": ((_E, _C), "call fmi3ExitInitializationMode first"),
    "fmi3UpdateDiscreteStates": ((_E,), "call fmi3EnterEventMode first"),
    "fmi3EnterContinuousTimeMode": ((_E,), "call fmi3ExitInitializationMode (or fmi3EnterEventMode) first"),
    "fmi3CompletedIntegratorStep": ((_C,), "call fmi3EnterContinuousTimeMode first"),
    "fmi3SetTime": ((_E, _C), "call fmi3ExitInitializationMode first"),
    "fmi3SetContinuousStates": ((_C,), "call fmi3EnterContinuousTimeMode first"),
    "fmi3GetContinuousStateDerivatives": ((_E, _C, _T), "call fmi3ExitInitializationMode first"),
    "fmi3GetContinuousStates": ((_N, _E, _C, _T), "call fmi3EnterInitializationMode first"),
    "fmi3GetEventIndicators": ((_N, _E, _C, _T), "call fmi3EnterInitializationMode first"),
    "fmi3GetNominalsOfContinuousStates": ((_I, _E, _C, _T), ""),
    "fmi3GetDirectionalDerivative": ((_N, _S, _T, _E, _C), "call fmi3EnterInitializationMode first"),
    "fmi3GetOutputDerivatives": ((_S, _T), "call fmi3ExitInitializationMode first"),
}

#: The core's messages name FMI 2.0's functions and arguments; an FMI 3.0 FMU's logger (fmi3.c) says them in FMI
#: 3.0's words: each (FMI 2.0 text, FMI 3.0 text) in this order, then any other "fmi2" prefix as "fmi3"
#: (fmi2DoStep, fmi2Terminate, fmi2Error, ...: the same names in both)
FMI3_WORDS = (
    ("fmi2SetupExperiment", "fmi3EnterInitializationMode"),
    ("fmi2GetFMUstate", "fmi3GetFMUState"),
    ("fmi2SetFMUstate", "fmi3SetFMUState"),
    ("fmi2FreeFMUstate", "fmi3FreeFMUState"),
    ("fmi2SerializedFMUstateSize", "fmi3SerializedFMUStateSize"),
    ("fmi2SerializeFMUstate", "fmi3SerializeFMUState"),
    ("fmi2DeSerializeFMUstate", "fmi3DeserializeFMUState"),
    ("fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates"),
    ("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives"),
    ("fmi2GetReal", "fmi3GetFloat64"),
    ("fmi2SetReal", "fmi3SetFloat64"),
    ("fmi2GetInteger", "fmi3GetInt32"),
    ("fmi2SetInteger", "fmi3SetInt32"),
    ("providesDirectionalDerivative ", "providesDirectionalDerivatives "),
    ("fmuResourceLocation", "resourcePath"),
    ("GUID", "instantiationToken"),
    ("with nvr =", "with nValueReferences ="),
    ("nvr = ", "nValueReferences = "),
    ("with nx = ", "with nContinuousStates = "),
    (": nx = ", ": nContinuousStates = "),
    ("with ni = ", "with nEventIndicators = "),
    (": ni = ", ": nEventIndicators = "),
    ("numberOfEventIndicators = 0", "no <EventIndicator> in the ModelStructure"),
    ("ModelStructure/Derivatives", "ModelStructure/ContinuousStateDerivative"),
    ("FMI 2.0", "FMI 3.0"),
)


def in_fmi3_words(text: str) -> str:
    """``text`` in FMI 3.0's words (:data:`FMI3_WORDS`; what an FMI 3.0 FMU's logger does in C, fmi3.c)."""
    out, i = [], 0
    while i < len(text):
        for old, new in (*FMI3_WORDS, ("fmi2", "fmi3")):
            if text.startswith(old, i):
                out.append(new)
                i += len(old)
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def phase_mask(call: str) -> int:
    """Bit p set for every phase p ``call`` is allowed in (an FMI 2.0 or FMI 3.0 call)."""
    return sum(1 << int(p) for p in {**CALLS, **CALLS3}[call][0])


class VarType(IntEnum):
    """Type of an interface variable in the model table (FMI 2.0 Real, Integer/Enumeration, Boolean)."""
    REAL = 0
    INTEGER = 1
    BOOLEAN = 2


class Causality(IntEnum):
    PARAMETER = 0
    INPUT = 1
    OUTPUT = 2
    LOCAL = 3               # a native FMU's continuous states and their derivatives (Model Exchange)


class Role(IntEnum):
    """What a variable means to the core (the model table's ``role``; fmu_mb.fmi.model_table)."""
    OPTION = 1              # model.<option>
    STEP = 2                # solver.step_size: the internal step h
    INTEGRATOR = 3          # solver.integrator
    MAX_STEPS = 4           # solver.max_steps_per_call
    GRAVITY = 5             # gravity[1..3] (aux: axis)
    STATIC = 6              # init.static
    ALPHA = 7               # solver.alpha (Baumgarte)
    BETA = 8                # solver.beta
    PROJECTION = 9          # solver.projection
    MAX_VIOLATION = 10      # solver.max_violation
    ASSEMBLE = 11           # init.assemble
    Q_START = 12            # <joint>.q_start
    QD_START = 13           # <joint>.qd_start
    FRICTION_ITERATIONS = 14  # solver.friction_iteration_limit
    PROJECTION_ITERATIONS = 15  # solver.projection_iteration_limit
    TAU_DRIVE = 20          # <joint>.tau_drive
    BODY_FORCE = 21         # <force>.force
    TRAJECTORY = 22         # <trajectory>.<parameter>
    OUTPUT = 30             # any output
    VIOLATION = 31          # <constraint>.violation(_angle): checked against solver.max_violation
    STATE = 32              # state[k] (aux: slot k), a continuous state of Model Exchange
    STATE_DERIVATIVE = 33   # der(state[k])
    GAIN_P = 40             # PD controller: Kp[i] (aux: channel)
    GAIN_D = 41             # Kd[i]
    TAU_MAX = 42            # tau_max[i]
    Q_REF = 43              # q_ref[i]
    QD_REF = 44             # qd_ref[i]
    TAU_FF = 45             # tau_ff[i]
    Q_MEASURED = 46         # q[i]
    QD_MEASURED = 47        # qd[i]
    TAU_COMMAND = 48        # tau[i] (output)
    ENABLE_TIME = 49        # PD controller: t_enable (its drives are off before it)
    AMPLITUDE = 50          # excitation: amplitude[i] (aux: channel)
    PULSE_START = 51        # start[i]
    PULSE_DURATION = 52     # duration[i]
    SIGNAL_IN = 53          # u[i]
    SIGNAL_OUT = 54         # y[i] (output)


class OptionValues(IntEnum):
    """Which values of a model option an FMU takes (the model table's ``FMU_MB_OPTION_VALUES``)."""
    EVERY = 0               # a Choice/Flag: every value carried (native) or built (Python)
    BUILT = 1               # a Count/Value fixed at its built value (native)
    CARRIED = 2             # a Count/Value carried at the listed values (native: the variant rows)
    LINEAR = 3              # a Value taken at any value through slope records (native: fmi.native_values)
    ANY = 4                 # any value in range: the Python FMU builds the mechanism for it


#: largest |time| an FMU accepts, s: beyond it a double resolves time more coarsely than 2.4e-7 s (it
#: still admits Unix time as a start time)
TIME_LIMIT = 2e9
#: range of every start coordinate (m or rad) and of the coordinates an FMU state or step may reach:
#: beyond it an angle's double-precision resolution is coarser than 1e-10 rad
COORDINATE_LIMIT = 1e6
#: range of every start rate (m/s or rad/s) and of the rates an FMU state or step may reach
RATE_LIMIT = 1e6
#: longest value-reference array one fmi2Get*/fmi2Set* call may pass
MAX_VALUES = 1 << 24
#: longest serialized FMU state accepted, bytes
MAX_STATE_BYTES = 1 << 31
#: most model options an FMU may declare
MAX_OPTIONS = 256

#: FMU state record (fmu_mb.fmi.c/state.c): magic, format, the header's struct layout (little-endian:
#: magic, format, interface digest, phase, number of values, number of state values, start time, stop
#: time (NaN: none), time, friction failures), then the values, the state and a CRC-32 (format 4: the state
#: record holds the damped ROS2 steps still to take, kernels.record)
STATE_MAGIC = b"FMUMB\0"
STATE_FORMAT = 4
STATE_HEAD = "<6sH32sBIIdddq"

#: debug-log categories of the modelDescription, in bit order of fmi2SetDebugLogging's mask
LOG_CATEGORIES = {
    "logStatusWarning": "Log messages with fmi2Warning status.",
    "logStatusDiscard": "Log messages with fmi2Discard status.",
    "logStatusError": "Log messages with fmi2Error status.",
    "logStatusFatal": "Log messages with fmi2Fatal status.",
    "logAll": "Log all messages.",
}


def c_string(text: str) -> str:
    """A C string literal of ``text`` (UTF-8; every byte outside printable ASCII as an octal escape)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= byte < 127 and ch != "?":
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _c_value(x) -> str:
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x) if abs(x) < 2 ** 31 else f"{x}LL"
    if isinstance(x, float):
        return repr(x)
    raise TypeError(x)


def c_header() -> str:
    """Text of ``fmu_mb_constants.h``: this module's numbers, the solver slots and integration methods the
    core reads (fmu_mb.codes, fmu_mb.simulator.METHODS) and the message templates (fmu_mb.messages)."""
    from ..codes import Group, OutputKind, RecordCheck, Scheme, SegmentKind, SolverOption, SolverStat
    from ..model.options import AUTO_ORDER
    from ..simulator import METHODS
    from ..messages import MESSAGES
    from ..model.compiled import RECORD_EXTRA, RECORD_MAX_COUNT
    from ..native import arrays
    from ..trajectories.paths import TABLE_MAX_PARAMS
    out = ["/* generated from fmu_mb/fmi/constants.py (and fmu_mb.codes, fmu_mb.simulator, fmu_mb.messages):",
           " * do not edit */", "#ifndef FMU_MB_CONSTANTS_H", "#define FMU_MB_CONSTANTS_H", ""]
    for enum, prefix in ((Phase, "PHASE"), (VarType, "TYPE"), (Causality, "CAUSALITY"), (Role, "ROLE"),
                         (OptionValues, "OPTION"), (Scheme, "SCHEME"), (RecordCheck, "RECORD")):
        out += [f"#define FMU_MB_{prefix}_{m.name} {int(m)}" for m in enum]
        out.append("")
    out.append("#define FMU_MB_PHASE_NAMES {" + ", ".join(c_string(n) for n in PHASE_NAMES) + "}")
    for call, (_, hint) in {**CALLS, **CALLS3}.items():
        out.append(f"#define FMU_MB_MASK_{call} {phase_mask(call)}u")
        out.append(f"#define FMU_MB_HINT_{call} {c_string(hint)}")
    out.append("")
    for name in ("TIME_LIMIT", "COORDINATE_LIMIT", "RATE_LIMIT", "MAX_VALUES", "MAX_STATE_BYTES", "MAX_OPTIONS",
                 "STATE_FORMAT"):
        out.append(f"#define FMU_MB_{name} {_c_value(globals()[name])}")
    out.append(f"#define FMU_MB_TABLE_MAX_PARAMS {TABLE_MAX_PARAMS}")
    out.append("#define FMU_MB_FMI3_WORDS {" + ", ".join(f"{{{c_string(a)}, {c_string(b)}}}" for a, b in FMI3_WORDS)
               + "}")
    out.append(f"#define FMU_MB_N_FMI3_WORDS {len(FMI3_WORDS)}")
    out.append(f"#define FMU_MB_STATE_MAGIC {c_string(STATE_MAGIC.decode('latin-1'))}")
    out.append(f"#define FMU_MB_STATE_MAGIC_SIZE {len(STATE_MAGIC)}")
    out.append(f"#define FMU_MB_STATE_HEAD_SIZE {struct.calcsize(STATE_HEAD)}")
    out.append("#define FMU_MB_LOG_CATEGORIES {" + ", ".join(c_string(n) for n in LOG_CATEGORIES) + "}")
    out.append(f"#define FMU_MB_N_LOG_CATEGORIES {len(LOG_CATEGORIES)}")
    out.append(f"#define FMU_MB_LOG_CATEGORY_LIST {c_string(', '.join(LOG_CATEGORIES))}")
    out.append("")
    for slot in (SolverOption.ALPHA, SolverOption.BETA, SolverOption.PROJECTION, SolverOption.ROS2_GAMMA,
                 SolverOption.PROJECTION_TOL, SolverOption.FRICTION_ITERATIONS, SolverOption.PROJECTION_ITERATIONS):
        out.append(f"#define FMU_MB_OPT_{slot.name} {int(slot)}")
    for slot in (SolverStat.PIVOT_RATIO_CHOSEN, SolverStat.PIVOT_RATIO, SolverStat.RANK,
                 SolverStat.PROJECTION_RESIDUAL):
        out.append(f"#define FMU_MB_STAT_{slot.name} {int(slot)}")
    out.append(f"#define FMU_MB_RECORD_MAX_COUNT {RECORD_MAX_COUNT}LL")
    out.append(f"#define FMU_MB_RECORD_EXTRA {RECORD_EXTRA}")
    out.append(f"#define FMU_MB_ARRAYS_MAGIC {c_string(arrays.MAGIC.decode('ascii'))}")
    out.append(f"#define FMU_MB_ARRAYS_VERSION {arrays.VERSION}")
    out.append(f"#define FMU_MB_ARRAYS_NAME_BYTES {arrays.NAME_BYTES}")
    out.append(f"#define FMU_MB_ARRAYS_HEADER {arrays.HEADER}")
    out.append(f"#define FMU_MB_ARRAYS_ENTRY {arrays.ENTRY.size}")
    out.append(f"#define FMU_MB_ARRAYS_MAX_NDIM {arrays.MAX_NDIM}")
    out.append(f"#define FMU_MB_ARRAYS_FLOAT64 {arrays.KINDS['float64']}")
    out.append(f"#define FMU_MB_ARRAYS_INT64 {arrays.KINDS['int64']}")
    out.append(f"#define FMU_MB_ARRAYS_SCALAR {arrays.SCALAR}")
    out.append(f"#define FMU_MB_ARRAYS_ZEROS {arrays.ZEROS}")
    out.append(f"#define FMU_MB_BLOCK_HEADER {arrays.BLOCK_HEADER}")
    out.append(f"#define FMU_MB_OUT_Q {int(OutputKind.Q)}")
    out.append(f"#define FMU_MB_OUT_QD {int(OutputKind.QD)}")
    out.append(f"#define FMU_MB_SEGMENT_LINEAR {int(SegmentKind.LINEAR)}")
    out.append(f"#define FMU_MB_GROUP_KINEMATIC {int(Group.KINEMATIC)}")
    out.append(f"#define FMU_MB_N_METHODS {len(METHODS)}")
    out.append("#define FMU_MB_METHOD_SCHEME {" + ", ".join(str(int(m.scheme)) for m in METHODS.values()) + "}")
    out.append("#define FMU_MB_METHOD_GAMMA {" + ", ".join(repr(m.gamma) for m in METHODS.values()) + "}")
    out.append("#define FMU_MB_METHOD_NAME {" + ", ".join(c_string(n) for n in METHODS) + "}")
    out.append(f"#define FMU_MB_NMETHODS {len(METHODS)}")
    out.append(f"#define FMU_MB_METHOD_AUTO {len(METHODS)}")          # solver.integrator = auto
    out.append("#define FMU_MB_AUTO_ORDER {" + ", ".join(str(list(METHODS).index(m)) for m in AUTO_ORDER) + "}")
    out.append("")
    out += [f"#define MSG_{name} {c_string(t)}" for name, t in MESSAGES.items()]
    out += ["", "#endif", ""]
    return "\n".join(out)
