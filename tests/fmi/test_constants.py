"""The FMU core's numbers and words are defined once, in Python (fmu_mb.fmi.constants, fmu_mb.messages,
fmu_mb.native.arrays), and reach the C sources only through the generated header fmu_mb_constants.h."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from fmu_mb import messages
from fmu_mb.fmi import constants
from fmu_mb.fmi.constants import c_header
from fmu_mb.native import arrays

PACKAGE = Path(__file__).resolve().parents[2] / "fmu_mb"
#: the project's own C sources (the FMI standard's headers in fmi/c/fmi2 are shipped verbatim)
C_SOURCES = sorted(p for p in PACKAGE.rglob("*.[ch]") if p.parent.name not in ("fmi2", "fmi3"))   # (the standard's headers)


def _code(path: Path) -> str:
    """A C source without its comments."""
    text = re.sub(r"/\*.*?\*/", " ", path.read_text(), flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _truth() -> tuple[set, dict]:
    """(names, {value: name}) of what Python defines for the core: every public constant of the three
    modules, every enum member (also with its enum's prefix, as the header names it) and template."""
    names, values = set(), {}
    for module, prefix in ((constants, ""), (arrays, "ARRAYS_")):
        for name, value in vars(module).items():
            if not name.isupper() or name.startswith("_"):
                continue
            names |= {name, prefix + name}
            if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 1e5:
                values[float(value)] = name           # (smaller numbers are sizes of buffers too)
            elif isinstance(value, (bytes, str)) and len(value) >= 5:
                values[value.decode("latin-1") if isinstance(value, bytes) else value] = name
    for enum, prefix in ((constants.Phase, "PHASE_"), (constants.Role, "ROLE_"), (constants.VarType, "TYPE_"),
                         (constants.Causality, "CAUSALITY_"), (constants.OptionValues, "OPTION_")):
        names |= {prefix + m.name for m in enum}
    names |= {f"MSG_{n}" for n in messages.MESSAGES}
    for text in constants.PHASE_NAMES + tuple(constants.LOG_CATEGORIES):
        values[text] = "a phase or log category name"
    return names, values


def test_no_c_source_defines_what_python_defines():
    """No #define or enum member of a C source is named like a Python constant of the core (with or without
    the header's FMU_MB_ prefix) unless it only renames the generated one, and no literal of the sources
    repeats a distinctive value Python defines (a limit, a magic string, a phase or category name)."""
    names, values = _truth()
    found = []
    for path in C_SOURCES:
        code = _code(path)
        for name, value in re.findall(r"#\s*define\s+(\w+)\s+([^\n]*)", code):
            bare = name.removeprefix("FMU_MB_")
            if bare in names and not re.search(r"\bFMU_MB_\w+", value):
                found.append(f"{path.name}: #define {name} {value.strip()}")
        for body in re.findall(r"enum\s*\w*\s*\{([^}]*)\}", code):
            found += [f"{path.name}: enum member {m}" for m in re.findall(r"\b([A-Z_][A-Z0-9_]+)\b", body)
                      if m.removeprefix("FMU_MB_") in names]
        for literal in re.findall(r'"((?:[^"\\]|\\.)*)"', code):
            if literal in values:
                found.append(f"{path.name}: \"{literal}\" is {values[literal]}")
        for literal in re.findall(r"(?<![\w.])(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)(?:[uU]?[lL]{0,2})\b", code):
            v = float(literal)
            if v in values:
                found.append(f"{path.name}: {literal} is {values[v]}")
    assert not found, "\n".join(found)


def test_the_check_sees_a_mirrored_constant(tmp_path, monkeypatch):
    """The check above fails on a C source that repeats a limit, a name or a magic string."""
    bad = tmp_path / "bad.c"
    bad.write_text('#define TIME_LIMIT 2e9\nenum { PHASE_STEPPING };\nstatic const char *m = "FMUMBARR";\n'
                   "double x = 1e6;\n")
    monkeypatch.setattr(sys.modules[__name__], "C_SOURCES", [bad])
    with pytest.raises(AssertionError) as info:
        test_no_c_source_defines_what_python_defines()
    text = str(info.value)
    assert all(s in text for s in ("#define TIME_LIMIT", "enum member PHASE_STEPPING", "FMUMBARR", "1e6"))


def test_the_generated_header_says_what_python_says(tmp_path):
    """The header compiles, and a C program printing its numbers, phase masks and templates reads back
    Python's values."""
    (tmp_path / "fmu_mb_constants.h").write_text(c_header())
    checks = [("FMU_MB_TIME_LIMIT", "%.17g", constants.TIME_LIMIT),
              ("FMU_MB_COORDINATE_LIMIT", "%.17g", constants.COORDINATE_LIMIT),
              ("FMU_MB_MAX_VALUES", "%d", constants.MAX_VALUES),
              ("FMU_MB_STATE_FORMAT", "%d", constants.STATE_FORMAT),
              ("FMU_MB_ARRAYS_HEADER", "%d", arrays.HEADER),
              ("FMU_MB_MASK_fmi2DoStep", "%u", constants.phase_mask("fmi2DoStep")),
              ("FMU_MB_MASK_fmi2Get", "%u", constants.phase_mask("fmi2Get")),
              ("FMU_MB_ROLE_TRAJECTORY", "%d", int(constants.Role.TRAJECTORY)),
              ("MSG_STEP_NOT_CONTIGUOUS", "%s", messages.MESSAGES["STEP_NOT_CONTIGUOUS"])]
    body = "\n".join(f'    printf("{fmt}\\n", {name});' for name, fmt, _ in checks)
    src = tmp_path / "probe.c"
    src.write_text(f'#include <stdio.h>\n#include "fmu_mb_constants.h"\nint main(void) {{\n{body}\n    return 0;\n}}\n')
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", str(tmp_path), "-o", str(tmp_path / "probe"), str(src)],
                   check=True)
    out = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout.splitlines()
    for (name, fmt, want), got in zip(checks, out):
        assert (float(got) if fmt == "%.17g" else got if fmt == "%s" else int(got)) == want, name


def test_every_template_is_used_and_formats_in_both_languages():
    """Every message template is used by a C source or by Python (no dead words), every template a C source
    names exists, and each formats with Python's % from arguments of its conversions."""
    c_text = "\n".join(_code(p) for p in C_SOURCES)
    py_text = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py") if p.name != "messages.py")
    used_in_c = set(re.findall(r"\bMSG_([A-Z0-9_]+)", c_text))
    assert used_in_c <= set(messages.MESSAGES), used_in_c - set(messages.MESSAGES)
    unused = [n for n in messages.MESSAGES if n not in used_in_c and f'"{n}"' not in py_text]
    assert not unused, unused
    sample = {"s": "x", "d": 1, "u": 1, "g": 1.5, "e": 1.5, "f": 1.5}
    for name in messages.MESSAGES:
        args = tuple(sample[c] for c in messages.conversions(name))
        assert messages.pattern(name, prefix=False).match(messages.text(name, *args)), name


def test_every_phase_mask_is_the_state_table():
    """The masks are the FMI 2.0 state tables: co-simulation's (stepping only while stepping, values read from
    initialization on, set until fmi2Terminate, the experiment set up only when instantiated) and Model
    Exchange's (its event and continuous-time modes take stepping's place; states set only in continuous-time
    mode)."""
    P = constants.Phase
    allowed = {call: {p for p in P if constants.phase_mask(call) >> p & 1} for call in constants.CALLS}
    running = {P.STEPPING, P.EVENT, P.CONTINUOUS}
    assert allowed["fmi2DoStep"] == {P.STEPPING} and allowed["fmi2Terminate"] == running
    assert allowed["fmi2Get"] == {P.INITIALIZATION, P.TERMINATED} | running
    assert allowed["fmi2Set"] == {P.INSTANTIATED, P.INITIALIZATION} | running
    assert allowed["fmi2SetupExperiment"] == allowed["fmi2EnterInitializationMode"] == {P.INSTANTIATED}
    assert allowed["fmi2SetContinuousStates"] == allowed["fmi2CompletedIntegratorStep"] == {P.CONTINUOUS}
    assert allowed["fmi2NewDiscreteStates"] == allowed["fmi2EnterContinuousTimeMode"] == {P.EVENT}
    assert allowed["fmi2SetTime"] == allowed["fmi2EnterEventMode"] == {P.EVENT, P.CONTINUOUS}
    assert allowed["fmi2GetDerivatives"] == {P.EVENT, P.CONTINUOUS, P.TERMINATED}


def test_fmi3_state_table_is_fmi2s_under_fmi3s_names():
    """FMI 3.0's table (fmi3.c) allows each call where its FMI 2.0 counterpart is allowed: fmi3EnterInitializationMode
    where fmi2SetupExperiment was (it takes its arguments), fmi3UpdateDiscreteStates where fmi2NewDiscreteStates
    was; and every hint names FMI 3.0 functions. Configuration mode, which FMI 2.0 lacks, is entered in the phase
    fmi2SetupExperiment was allowed in (instantiated), and its hint names FMI 3.0's calls."""
    counterpart = {"fmi3EnterInitializationMode": "fmi2SetupExperiment", "fmi3UpdateDiscreteStates":
                   "fmi2NewDiscreteStates", "fmi3GetContinuousStateDerivatives": "fmi2GetDerivatives",
                   "fmi3GetFMUState": "fmi2GetFMUstate", "fmi3SetFMUState": "fmi2SetFMUstate",
                   "fmi3GetOutputDerivatives": "fmi2GetRealOutputDerivatives"}
    own = {"fmi3EnterConfigurationMode": "fmi2SetupExperiment"}
    for call, (phases, hint) in constants.CALLS3.items():
        if call in own:
            assert constants.phase_mask(call) == constants.phase_mask(own[call]), call
            assert "fmi2" not in hint and "fmi3EnterInitializationMode" in hint, call
            continue
        two = counterpart.get(call, call.replace("fmi3", "fmi2"))
        assert constants.phase_mask(call) == constants.phase_mask(two), call
        assert "fmi2" not in hint and constants.in_fmi3_words(constants.CALLS[two][1]) == hint, call


def test_fmi3_words():
    """The FMI 3.0 logger's translation: renamed functions and arguments, any other fmi2 name as fmi3, the rest kept."""
    w = constants.in_fmi3_words
    assert w("fmi2SetupExperiment: stopTime") == "fmi3EnterInitializationMode: stopTime"
    assert w("use fmi2SetFMUstate to go back; fmi2DoStep answers fmi2Error") == \
        "use fmi3SetFMUState to go back; fmi3DoStep answers fmi3Error"
    assert w("fmuResourceLocation and the GUID, nvr = 3") == "resourcePath and the instantiationToken, nValueReferences = 3"
    assert w("joint1.q (rad)") == "joint1.q (rad)"


def test_the_test_hosts_state_layout_is_the_fmus():
    """tests/fmu_cases.py forges FMU states with its own copy of the header layout (its host imports no
    fmu_mb); it must be the one the core writes."""
    from tests import fmu_cases
    assert fmu_cases._HEAD.format == constants.STATE_HEAD
