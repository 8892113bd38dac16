"""Golden files of every FMU's modelDescription.xml (tests/fmi/golden/<name>.txt).

Value references, names, causalities, units, start values and ranges are the contract
with every master that stored a connection or a parameter set: any change to them
must be deliberate. Each FMU the session fixture ``fmus`` builds is compared, as a
normalized text (one line per ScalarVariable in value-reference order, after lines
for the stable parts of the header), with its golden file; a mismatch fails with a
unified diff.

To accept a change, rewrite the golden files and review the diff with git::

    FMU_MB_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/fmi/test_golden.py
    git diff tests/fmi/golden

Left out because they differ between builds or carry no readable information:
``guid`` (a name-based UUID of the interface digest: a hash, and whatever it hashes,
names, types and causalities, is on the variable lines) and ``generationDateAndTime``
(the build time).
"""
from __future__ import annotations

import difflib
import os
import warnings
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from fmu_mb import registry

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_VAR = "FMU_MB_UPDATE_GOLDEN"
UPDATE_HINT = (f"{UPDATE_VAR}=1 .venv/bin/python -m pytest tests/fmi/test_golden.py rewrites the golden files; "
               "review the diff with git (git diff tests/fmi/golden)")
MAX_DIFF_LINES = 80

# the names the `fmus` fixture (tests/conftest.py) builds, known at collection time
NAMES = [*registry.available(), "pd_controller", "excitation"]

# header attributes that change from build to build (or are an unreadable hash)
EXCLUDED_ROOT_ATTRIBUTES = {"guid", "generationDateAndTime"}
# attributes holding a floating-point number, written with repr(float(...)) wherever they occur
FLOAT_ATTRIBUTES = {"startTime", "stopTime", "tolerance", "stepSize", "factor", "offset", "nominal"}
# the ScalarVariable columns; anything else on the variable or its type element goes to `other`
VARIABLE_COLUMNS = ("vr", "name", "causality", "variability", "initial", "type", "start", "min", "max", "unit",
                    "displayUnit", "description", "other (only if any)")
_VARIABLE_OWN = {"name", "valueReference", "description", "causality", "variability", "initial"}
_TYPE_OWN = {"start", "min", "max", "unit", "displayUnit"}
_HANDLED = {"ModelVariables", "ModelStructure"}


def _field(text) -> str:
    """One |-separated field: None as empty, with backslash, | and line breaks escaped."""
    if text is None:
        return ""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "\\r").replace("\n", "\\n")


def _float(text: str) -> str:
    return repr(float(text))


def _value(type_tag: str, key: str, text):
    """A typed attribute value, normalized: floats with repr (a changed start value shows)."""
    if text is None:
        return None
    if type_tag == "Real" and key in ("start", "min", "max", "nominal"):
        return _float(text)
    if type_tag in ("Integer", "Enumeration") and key in ("start", "min", "max"):
        return str(int(text))
    if key in FLOAT_ATTRIBUTES:
        return _float(text)
    return text


def _attrs(element, skip=()) -> str:
    """The element's attributes as sorted ``key=value`` fields (document order is not part of the contract)."""
    return " | ".join(f"{k}={_field(_value(element.tag, k, v))}" for k, v in sorted(element.attrib.items())
                      if k not in skip)


def _generic(element, path: str, out: list) -> None:
    """Any section without a dedicated format: one line per element, path and sorted attributes, then its text."""
    here = f"{path}/{element.tag}" if path else element.tag
    line = here + (f" | {_attrs(element)}" if element.attrib else "")
    if element.text and element.text.strip():
        line += f" | text={_field(element.text.strip())}"
    out.append(line)
    for child in element:
        if isinstance(child.tag, str):  # skip comments and processing instructions
            _generic(child, here, out)


def _variables(model_variables) -> list:
    """[(vr, name, row)] of every ScalarVariable in document order."""
    rows = []
    for sv in model_variables.findall("ScalarVariable"):
        typed = [c for c in sv if isinstance(c.tag, str) and c.tag != "Annotations"]
        assert len(typed) == 1, f"ScalarVariable {sv.get('name')!r} has {len(typed)} type elements"
        t = typed[0]
        other = [f"{k}={v}" for k, v in sorted(sv.attrib.items()) if k not in _VARIABLE_OWN]
        other += [f"{t.tag}.{k}={_value(t.tag, k, v)}" for k, v in sorted(t.attrib.items()) if k not in _TYPE_OWN]
        other += [f"{c.tag}.{_attrs(c)}" for c in t if isinstance(c.tag, str)]  # Enumeration items etc.
        vr = int(sv.get("valueReference"))
        row = (vr, sv.get("name"), sv.get("causality"), sv.get("variability"), sv.get("initial"), t.tag,
               _value(t.tag, "start", t.get("start")), _value(t.tag, "min", t.get("min")),
               _value(t.tag, "max", t.get("max")), t.get("unit"), t.get("displayUnit"), sv.get("description"),
               "; ".join(other))
        if not row[-1]:  # no `other` column when there is nothing in it (no trailing separator)
            row = row[:-1]
        rows.append((vr, sv.get("name"), " | ".join(_field(x) for x in row)))
    return rows


def _unknowns(section, label: str, names: list, out: list) -> None:
    """ModelStructure Unknowns with the referenced variables named (indices are 1-based into ModelVariables)."""
    def ref(index: str) -> str:
        i = int(index)
        return f"{index}:{names[i - 1]}" if 1 <= i <= len(names) else f"{index}:<no such variable>"

    for u in section.findall("Unknown"):
        deps = u.get("dependencies")
        if deps is None:
            dep_text = "<absent: depends on all>"
        else:
            dep_text = " ".join(ref(i) for i in deps.split()) or "<none>"
        line = f"{label} | {ref(u.get('index'))} | dependencies: {dep_text}"
        if u.get("dependenciesKind") is not None:
            line += f" | dependenciesKind: {u.get('dependenciesKind')}"
        rest = _attrs(u, skip=("index", "dependencies", "dependenciesKind"))
        out.append(line + (f" | {rest}" if rest else ""))


def normalize(xml: bytes) -> tuple:
    """(text lines, [(vr, name)] in document order) of a modelDescription.xml."""
    root = etree.fromstring(xml)
    assert root.tag == "fmiModelDescription", root.tag
    out = [f"# modelDescription.xml normalized by tests/fmi/test_golden.py; excluded: "
           f"{', '.join(sorted(EXCLUDED_ROOT_ATTRIBUTES))}",
           f"fmiModelDescription | {_attrs(root, skip=EXCLUDED_ROOT_ATTRIBUTES)}"]
    if root.find("TypeDefinitions") is None:
        out.append("TypeDefinitions | <none>")
    for child in root:
        if isinstance(child.tag, str) and child.tag not in _HANDLED:
            _generic(child, "", out)

    mv = root.find("ModelVariables")
    rows = _variables(mv) if mv is not None else []
    out.append(f"# ModelVariables: {len(rows)} | columns: {' | '.join(VARIABLE_COLUMNS)}")
    out += [row for _, _, row in sorted(rows, key=lambda r: r[0])]  # stable sort: value-reference order

    names = [name for _, name, _ in rows]
    ms = root.find("ModelStructure")
    out.append("# ModelStructure | Unknowns as index:name (index = vr + 1)")
    if ms is not None:
        for section in ms:
            if not isinstance(section.tag, str):
                continue
            if section.find("Unknown") is None:
                _generic(section, "ModelStructure", out)
            else:
                _unknowns(section, section.tag, names, out)
    return [line.rstrip() for line in out], [(vr, name) for vr, name, _ in rows]


def _diff(expected: list, actual: list, name: str) -> str:
    lines = list(difflib.unified_diff(expected, actual, fromfile=f"tests/fmi/golden/{name}.txt",
                                      tofile=f"{name}.fmu modelDescription.xml (this build)", lineterm=""))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... {len(lines) - MAX_DIFF_LINES} more diff lines"]
    return "\n".join(lines)


@pytest.mark.parametrize("name", NAMES)
def test_model_description_matches_golden(fmus, name):
    with zipfile.ZipFile(fmus[name].path) as z:
        xml = z.read("modelDescription.xml")
    actual, variables = normalize(xml)

    vrs = [vr for vr, _ in variables]
    assert vrs == list(range(len(vrs))), \
        f"{name}: value references are not 0..{len(vrs) - 1} in variable order: {vrs}"
    names = [n for _, n in variables]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"{name}: duplicate variable names {duplicates}"

    golden = GOLDEN / f"{name}.txt"
    if os.environ.get(UPDATE_VAR):
        old = golden.read_text(encoding="utf-8").splitlines() if golden.is_file() else None
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text("\n".join(actual) + "\n", encoding="utf-8", newline="\n")
        state = "created" if old is None else ("unchanged" if old == actual else "changed")
        warnings.warn(f"{UPDATE_VAR} set: wrote {golden} ({state}); review with git diff tests/fmi/golden", UserWarning)
        return
    if not golden.is_file():
        pytest.fail(f"{name}: golden file {golden} is missing.\n{UPDATE_HINT}", pytrace=False)
    expected = golden.read_text(encoding="utf-8").splitlines()
    if expected != actual:
        pytest.fail(f"{name}: modelDescription.xml differs from its golden file:\n{_diff(expected, actual, name)}"
                    f"\n\n{UPDATE_HINT}", pytrace=False)


def test_golden_files_cover_the_built_fmus(fmus):
    """Every FMU the fixture builds has a case above, and no golden file is left without an FMU."""
    assert sorted(fmus) == sorted(NAMES)
    stale = sorted(p.stem for p in GOLDEN.glob("*.txt") if p.stem not in fmus)
    assert not stale, f"golden files without an FMU: {stale} (delete tests/fmi/golden/<name>.txt)"
