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

A native mechanism FMU also offers Model Exchange (its interface has continuous states, fmi.interface.add_states):
``<ModelExchange>``, ``derivative`` on each ``der(state[k])``, ModelStructure/Derivatives, and Outputs whose
dependencies list the knowns of Model Exchange (:func:`output_dependencies`). The one ModelStructure serves both
interfaces (FMI 2.0): in co-simulation the inputs are held over each step, so what it lists as an input
dependency is a dependency at the step's end only through the step; a co-simulation master may take it as
direct feedthrough, which is the conservative reading.
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
    """The FMU's GUID: a name-based UUID of the interface digest and its number of continuous states (the binary
    checks it at fmi2Instantiate)."""
    states = sum(v.source[0] == "state" for v in itf.vars)
    return "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, "fmu_mb:" + itf.digest() + (f":{states}" if states else ""))) + "}"


def enum_type_name(var_name: str) -> str:
    """The SimpleType of an enumerated variable: ``model.forearm`` → ``ModelForearm``."""
    return "".join(part[:1].upper() + part[1:] for part in var_name.replace("_", ".").split("."))


#: outputs that are functions of the coordinates and rates alone (no input acts on them directly)
KINEMATIC = frozenset({"q", "qd", "point", "point_v", "point_w", "point_R", "deflection", "kinetic", "potential",
                       "mass_matrix", "bias_force", "gravity_force"})
#: outputs that are the energy counters among the states (fmi.interface.ENERGY_STATES)
COUNTERS = frozenset({"dissipated", "work_in", "work_constraints"})


def state_dependencies(itf: Interface) -> tuple[list, list, list]:
    """ScalarVariable indices (1-based) of the state slots other than the energy counters, of the energy
    counters' slots, and of the inputs."""
    states = [vr + 1 for vr, v in enumerate(itf.vars) if v.source[0] == "state"]
    inputs = [vr + 1 for vr, v in enumerate(itf.vars) if v.causality == "input"]
    n_energy = 3 if states else 0
    return states[:len(states) - n_energy], states[len(states) - n_energy:], inputs


def output_dependencies(itf: Interface, vr: int) -> list:
    """The knowns output ``vr`` depends on in Model Exchange (indices, 1-based): the kinematic outputs on the
    coordinates and rates (every non-counter state slot: which slot holds a coordinate depends on the option
    combination in force), the energy counters on their slots, every other output (reactions, friction,
    accelerations through them, violations of programmed motions, counters) also on every input. Without
    states (a Python FMU: co-simulation only): the inputs it depends on directly (``Var.depends``)."""
    dynamic, energy, inputs = state_dependencies(itf)
    v = itf.vars[vr]
    if not dynamic:
        index = {w.name: i + 1 for i, w in enumerate(itf.vars)}
        return [index[n] for n in v.depends]
    if v.source[0] in KINEMATIC:
        return dynamic
    if v.source[0] in COUNTERS:
        return energy
    return sorted(dynamic + inputs)


def enumeration_items(element, v) -> None:
    """An ``<Item>`` under ``element`` per value of the named option ``v``, codes 0, 1, … (FMI 2.0 and 3.0 alike)."""
    for code, (item, text) in enumerate(v.items):
        attrs = {"name": item, "value": str(code)}
        if text:
            attrs["description"] = text
        etree.SubElement(element, "Item", **attrs)


def unit_definitions(root, used) -> None:
    """``<UnitDefinitions>`` of the ``used`` unit names (fmu_mb.units: SI base exponents, display units) under
    ``root``, if any (the same element in FMI 2.0 and 3.0)."""
    if not used:
        return
    units = etree.SubElement(root, "UnitDefinitions")
    for name in sorted(used):
        base, displays = UNITS[name]
        u = etree.SubElement(units, "Unit", name=name)
        etree.SubElement(u, "BaseUnit", **{k: str(e) for k, e in base.items()})
        for dname, factor in displays.items():
            etree.SubElement(u, "DisplayUnit", name=dname, factor=_num(factor))


def model_description(itf: Interface, description: str, version: str, tool: str, stop_time: float,
                      comm_step: float, model_identifier: str | None = None, enumerations: bool = True,
                      output_derivatives: bool = True) -> bytes:
    """The modelDescription.xml document (UTF-8 bytes). ``enumerations=False`` declares the named
    options as plain Integers (their codes listed in the description) for importers without FMI
    2.0 Enumeration support: OSP libcosim ignores Enumeration variables (libcosim issue #246).
    ``output_derivatives``: the first time derivatives of the outputs (a mechanism's,
    fmi2GetRealOutputDerivatives: maxOutputDerivativeOrder = 1; a signal block has none)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    root = etree.Element("fmiModelDescription", fmiVersion="2.0", modelName=itf.model,
                         guid=fmu_guid(itf),
                         description=description, author="fmu_mb", version=version, generationTool=tool,
                         generationDateAndTime=now, variableNamingConvention="structured",
                         numberOfEventIndicators="0")
    derivative_of = {vr: [w.source for w in itf.vars].index(("state", v.source[1])) + 1
                     for vr, v in enumerate(itf.vars) if v.source[0] == "state_der"}
    if derivative_of:                   # continuous states: a native mechanism FMU offers Model Exchange too
        etree.SubElement(root, "ModelExchange", modelIdentifier=model_identifier or itf.model,
                         needsExecutionTool="false", completedIntegratorStepNotNeeded="false",
                         canBeInstantiatedOnlyOncePerProcess="false", canNotUseMemoryManagementFunctions="true",
                         canGetAndSetFMUstate="true", canSerializeFMUstate="true",
                         providesDirectionalDerivative="true")
    etree.SubElement(root, "CoSimulation", modelIdentifier=model_identifier or itf.model,
                     needsExecutionTool="false", canHandleVariableCommunicationStepSize="true",
                     canInterpolateInputs="false", maxOutputDerivativeOrder="1" if output_derivatives else "0",
                     canRunAsynchronuously="false",
                     canBeInstantiatedOnlyOncePerProcess="false", canNotUseMemoryManagementFunctions="true",
                     canGetAndSetFMUstate="true", canSerializeFMUstate="true",
                     providesDirectionalDerivative="true" if derivative_of else "false")
    unit_definitions(root, {v.unit for v in itf.vars if v.unit})
    enums = {v.name: enum_type_name(v.name) for v in itf.vars if v.items and enumerations}
    if enums:
        types = etree.SubElement(root, "TypeDefinitions")
        for v in itf.vars:
            if v.name in enums:
                enumeration_items(etree.SubElement(etree.SubElement(types, "SimpleType", name=enums[v.name]),
                                                   "Enumeration"), v)
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
        if vr in derivative_of:
            t["derivative"] = str(derivative_of[vr])
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

    def unknown(parent, vr, deps):
        attrs = {"index": str(vr + 1), "dependencies": " ".join(map(str, deps))}
        if deps:
            attrs["dependenciesKind"] = " ".join(["dependent"] * len(deps))
        etree.SubElement(parent, "Unknown", **attrs)
    if outputs:
        out = etree.SubElement(ms, "Outputs")
        for vr in outputs:
            unknown(out, vr, output_dependencies(itf, vr))
    if derivative_of:
        dynamic, energy, inputs = state_dependencies(itf)
        der = etree.SubElement(ms, "Derivatives")
        for vr in derivative_of:           # every derivative: the coordinates, rates and friction states, the inputs
            unknown(der, vr, sorted(dynamic + inputs))
    calculated = [vr for vr, v in enumerate(itf.vars) if v.causality in ("output", "local")]
    if calculated:
        init = etree.SubElement(ms, "InitialUnknowns")
        for vr in calculated:
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
