"""modelDescription.xml of a mechanism FMU, generated with lxml from its interface table.

What raw pythonfmu output lacks and this adds (DESIGN.md §7): UnitDefinitions
(SI units, deg display units for angles), descriptions and ranges on every
variable, ``needsExecutionTool="false"`` (PyFMI refuses "true"),
``canGetAndSetFMUstate``/``canSerializeFMUstate``, a DefaultExperiment,
ModelStructure with Outputs carrying explicit ``dependencies=""`` (outputs are
evaluated at the end of each step with the inputs held over it: no direct
feedthrough, so masters such as OMSimulator see no algebraic loop; a controller
lists the inputs its outputs depend on) and the
InitialUnknowns FMI 2.0 requires for calculated outputs; ``discrete``
variability for Integer/Boolean outputs; ``initial`` exactly where the
causality/variability combination allows it; named options (the model file's Choice options and
``solver.integrator``) as FMI 2.0 Enumerations: a SimpleType per option in TypeDefinitions whose
Items are its values with codes 0, 1, … (set and read with fmi2Set/GetInteger, as FMI 2.0 says).
"""
from __future__ import annotations

import datetime
import uuid

from lxml import etree

from ..units import UNITS
from .constants import LOG_CATEGORIES
from .interface import Interface



def _num(x) -> str:
    return f"{float(x):.17g}"


def fmu_guid(itf: Interface) -> str:
    """The FMU's GUID: a name-based UUID of the interface digest (the binary checks it at fmi2Instantiate)."""
    return "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, "fmu_mb:" + itf.digest())) + "}"


def enum_type_name(var_name: str) -> str:
    """The SimpleType of an enumerated variable: ``model.forearm`` → ``ModelForearm``."""
    return "".join(part[:1].upper() + part[1:] for part in var_name.replace("_", ".").split("."))


def model_description(itf: Interface, description: str, version: str, tool: str, stop_time: float,
                      comm_step: float, model_identifier: str | None = None, enumerations: bool = True) -> bytes:
    """The modelDescription.xml document (UTF-8 bytes). ``enumerations=False`` declares the named
    options as plain Integers (their codes listed in the description) for importers without FMI
    2.0 Enumeration support: OSP libcosim ignores Enumeration variables (libcosim issue #246)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    root = etree.Element("fmiModelDescription", fmiVersion="2.0", modelName=itf.model,
                         guid=fmu_guid(itf),
                         description=description, author="fmu_mb", version=version, generationTool=tool,
                         generationDateAndTime=now, variableNamingConvention="structured",
                         numberOfEventIndicators="0")
    etree.SubElement(root, "CoSimulation", modelIdentifier=model_identifier or itf.model,
                     needsExecutionTool="false", canHandleVariableCommunicationStepSize="true",
                     canInterpolateInputs="false", maxOutputDerivativeOrder="0", canRunAsynchronuously="false",
                     canBeInstantiatedOnlyOncePerProcess="false", canNotUseMemoryManagementFunctions="true",
                     canGetAndSetFMUstate="true", canSerializeFMUstate="true",
                     providesDirectionalDerivative="false")
    used = sorted({v.unit for v in itf.vars if v.unit})
    if used:
        units = etree.SubElement(root, "UnitDefinitions")
        for name in used:
            base, displays = UNITS[name]
            u = etree.SubElement(units, "Unit", name=name)
            etree.SubElement(u, "BaseUnit", **{k: str(e) for k, e in base.items()})
            for dname, factor in displays.items():
                etree.SubElement(u, "DisplayUnit", name=dname, factor=_num(factor))
    enums = {v.name: enum_type_name(v.name) for v in itf.vars if v.items and enumerations}
    if enums:
        types = etree.SubElement(root, "TypeDefinitions")
        for v in itf.vars:
            if v.name in enums:
                e = etree.SubElement(etree.SubElement(types, "SimpleType", name=enums[v.name]), "Enumeration")
                for code, (item, text) in enumerate(v.items):
                    attrs = {"name": item, "value": str(code)}
                    if text:
                        attrs["description"] = text
                    etree.SubElement(e, "Item", **attrs)
    cats = etree.SubElement(root, "LogCategories")
    for name, text in LOG_CATEGORIES.items():
        etree.SubElement(cats, "Category", name=name, description=text)
    etree.SubElement(root, "DefaultExperiment", startTime="0", stopTime=_num(stop_time), stepSize=_num(comm_step))
    mv = etree.SubElement(root, "ModelVariables")
    for vr, v in enumerate(itf.vars):
        attrs = {"name": v.name, "valueReference": str(vr), "description": v.description,
                 "causality": v.causality, "variability": v.variability}
        if v.initial is not None:
            attrs["initial"] = v.initial
        sv = etree.SubElement(mv, "ScalarVariable", **attrs)
        t = {"declaredType": enums[v.name]} if v.name in enums else {}
        if v.type == "Real":
            if v.unit:
                t["unit"] = v.unit
                if v.display_unit:
                    t["displayUnit"] = v.display_unit
        if v.min is not None and v.type != "Boolean":
            t["min"] = _num(v.min) if v.type == "Real" else str(int(v.min))
            t["max"] = _num(v.max) if v.type == "Real" else str(int(v.max))
        if v.causality in ("parameter", "input"):
            if v.type == "Real":
                t["start"] = _num(v.start)
            elif v.type == "Integer":
                t["start"] = str(int(v.start))
            else:
                t["start"] = "true" if v.start else "false"
        etree.SubElement(sv, "Enumeration" if v.name in enums else v.type, **t)
    ms = etree.SubElement(root, "ModelStructure")
    outputs = [vr for vr, v in enumerate(itf.vars) if v.causality == "output"]
    if outputs:
        out = etree.SubElement(ms, "Outputs")
        index = {v.name: i + 1 for i, v in enumerate(itf.vars)}
        for vr in outputs:
            deps = [index[n] for n in itf.vars[vr].depends]
            attrs = {"index": str(vr + 1), "dependencies": " ".join(map(str, deps))}
            if deps:
                attrs["dependenciesKind"] = " ".join(["dependent"] * len(deps))
            etree.SubElement(out, "Unknown", **attrs)
        init = etree.SubElement(ms, "InitialUnknowns")
        for vr in outputs:
            etree.SubElement(init, "Unknown", index=str(vr + 1))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def interface_markdown(itf: Interface, title: str) -> str:
    """The interface as a Markdown table (name, causality, variability, type, unit, start, range, description)."""
    lines = [f"# {title}", "", f"{len(itf.vars)} variables; value reference = row number − 1. Values outside the "
             "range are refused with fmi2Error (parameters at fmi2ExitInitializationMode).", "",
             "| vr | name | causality | variability | type | unit | start | range | description |",
             "|---:|---|---|---|---|---|---|---|---|"]
    for vr, v in enumerate(itf.vars):
        start = "" if v.start is None else (f"{v.start:g}" if isinstance(v.start, float) else str(v.start))
        rng = "" if v.min is None else f"[{v.min:g}, {v.max:g}]"
        kind = "Enumeration" if v.items else v.type
        if v.items:
            rng = ", ".join(f"{code} = {item}" for code, (item, _) in enumerate(v.items))
        lines.append(f"| {vr} | `{v.name}` | {v.causality} | {v.variability} | {kind} | {v.unit or ''} | {start} | "
                     f"{rng} | {v.description.replace('|', '/')} |")
    return "\n".join(lines) + "\n"
