"""modelDescription.xml of a native mechanism FMU for FMI 3.0, generated with lxml from the same interface table
as the FMI 2.0 one (fmi.description), written for FMI 3.0 rather than transliterated:

- Types: Real variables are ``Float64``, the model's named options and ``solver.integrator`` ``Enumeration``s of an
  ``EnumerationType`` each (set and read as Int64), other Integers (Count options, iteration limits and counts)
  ``Int32``, Booleans ``Boolean``. Count options (``model.n_div``: a flexible link's rigid finite elements, its
  bodies and coordinates) are ``structuralParameter``s, set in configuration mode only (fmi3.c).
- Arrays: vector quantities (a point's position, a joint's reaction, gravity, the continuous states) are Float64
  arrays with ``<Dimension>``s, by the rule of :mod:`fmu_mb.fmi.arrays3`; a vector whose elements differ in unit (a
  free joint's coordinates: metres and radians) keeps its FMI 2.0 scalar names.
- ``time`` is declared the independent variable (FMI 3.0 requires one), value reference = the number of
  interface variables, after every other (their value references are the FMI 2.0 FMU's: one numbering).
- ``instantiationToken`` is the FMI 2.0 FMU's GUID: both binaries check it, and an FMU state of one restores into
  the other (the state record names the interface, not the FMI version).
- ModelStructure lists value references (FMI 3.0), with the dependencies of fmi.description.output_dependencies
  (an array's: the union of its elements').
- Capabilities as the binary (fmi3.c) has them: co-simulation and Model Exchange, FMU state get/set/serialize,
  directional and adjoint derivatives, the outputs' first time derivatives in co-simulation; no event mode in
  co-simulation, no early return, no intermediate update, no clocks, no per-element dependency functions.
"""
from __future__ import annotations

import datetime

from lxml import etree

from .arrays3 import fmi3_variables
from .constants import LOG_CATEGORIES, in_fmi3_words
from .description import (_num, enum_type_name, enumeration_items, fmu_guid, output_dependencies, state_dependencies,
                          unit_definitions)
from .interface import Interface

#: platform tuples of FMI 3.0 per native target (fmu_mb.native.library.TARGETS)
PLATFORMS = {"linux64": "x86_64-linux", "win64": "x86_64-windows", "linux-aarch64": "aarch64-linux"}


def is_structural(v) -> bool:
    """A Count option (an Integer option without named values): a structural parameter in FMI 3.0."""
    return v.source[0] == "option" and v.type == "Integer" and not v.items


def fmi3_type(v) -> str:
    """The FMI 3.0 element of interface variable ``v``."""
    if v.items:
        return "Enumeration"
    return {"Real": "Float64", "Integer": "Int32", "Boolean": "Boolean"}[v.type]


def model_description3(itf: Interface, description: str, version: str, tool: str, stop_time: float,
                       comm_step: float, model_identifier: str | None = None) -> bytes:
    """The FMI 3.0 modelDescription.xml document (UTF-8 bytes) of a native mechanism FMU with continuous states
    (fmi.interface.add_states)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    ident = model_identifier or itf.model
    root = etree.Element("fmiModelDescription", fmiVersion="3.0", modelName=itf.model,
                         instantiationToken=fmu_guid(itf), description=description, author="fmu_mb", version=version,
                         generationTool=tool, generationDateAndTime=now, variableNamingConvention="structured")
    common = dict(modelIdentifier=ident, needsExecutionTool="false", canBeInstantiatedOnlyOncePerProcess="false",
                  canGetAndSetFMUState="true", canSerializeFMUState="true", providesDirectionalDerivatives="true",
                  providesAdjointDerivatives="true", providesPerElementDependencies="false")
    states = [vr for vr, v in enumerate(itf.vars) if v.source[0] == "state"]
    if not states:
        raise ValueError("an FMI 3.0 FMU is built for native mechanism FMUs (with continuous states)")
    etree.SubElement(root, "ModelExchange", **common, needsCompletedIntegratorStep="true",
                     providesEvaluateDiscreteStates="false")
    etree.SubElement(root, "CoSimulation", **common, canHandleVariableCommunicationStepSize="true",
                     maxOutputDerivativeOrder="1", providesIntermediateUpdate="false",
                     mightReturnEarlyFromDoStep="false", canReturnEarlyAfterIntermediateUpdate="false",
                     hasEventMode="false", providesEvaluateDiscreteStates="false")
    unit_definitions(root, {v.unit for v in itf.vars if v.unit} | {"s"})       # ("s": time's)
    enums = {v.name: enum_type_name(v.name) for v in itf.vars if v.items}
    if enums:
        types = etree.SubElement(root, "TypeDefinitions")
        for v in itf.vars:
            if v.name in enums:
                enumeration_items(etree.SubElement(types, "EnumerationType", name=enums[v.name]), v)
    cats = etree.SubElement(root, "LogCategories")
    for name, text in LOG_CATEGORIES.items():
        etree.SubElement(cats, "Category", name=name, description=in_fmi3_words(text))
    etree.SubElement(root, "DefaultExperiment", startTime="0", stopTime=_num(stop_time), stepSize=_num(comm_step))
    mv = etree.SubElement(root, "ModelVariables")
    etree.SubElement(mv, "Float64", name="time", valueReference=str(len(itf.vars)), causality="independent",
                     variability="continuous", unit="s", description="simulation time")
    variables = fmi3_variables(itf)
    head = {vr: w.vr for w in variables for vr in w.elements}          # interface variable -> its FMI 3.0 variable
    for w in variables:
        v = itf.vars[w.vr]
        kind = fmi3_type(v)
        attrs = {"name": w.name, "valueReference": str(w.vr), "description": in_fmi3_words(w.description),
                 "causality": "structuralParameter" if is_structural(v) else v.causality,
                 "variability": v.variability}
        if v.initial is not None:
            attrs["initial"] = v.initial
        if kind == "Enumeration":
            attrs["declaredType"] = enums[v.name]
        if kind == "Float64" and v.unit:
            attrs["unit"] = v.unit
            if v.display_unit:
                attrs["displayUnit"] = v.display_unit
        if v.min is not None and kind != "Boolean":
            attrs["min"] = _num(v.min) if kind == "Float64" else str(int(v.min))
            attrs["max"] = _num(v.max) if kind == "Float64" else str(int(v.max))
        if v.causality in ("parameter", "input"):
            attrs["start"] = " ".join(_num(itf.vars[e].start) if kind == "Float64" else
                                      ("true" if itf.vars[e].start else "false") if kind == "Boolean" else
                                      str(int(itf.vars[e].start)) for e in w.elements)
        if v.source[0] == "state_der":
            attrs["derivative"] = str(head[next(vr for vr, u in enumerate(itf.vars)
                                                if u.source == ("state", v.source[1]))])
        element = etree.SubElement(mv, kind, **attrs)
        for n in w.shape:
            etree.SubElement(element, "Dimension", start=str(n))
    ms = etree.SubElement(root, "ModelStructure")

    def unknown(tag, vr, deps):
        deps = sorted({head[d - 1] for d in deps})
        attrs = {"valueReference": str(vr), "dependencies": " ".join(map(str, deps))}
        if deps:
            attrs["dependenciesKind"] = " ".join(["dependent"] * len(deps))
        etree.SubElement(ms, tag, **attrs)
    for w in variables:
        if itf.vars[w.vr].causality == "output":
            unknown("Output", w.vr, [d for e in w.elements for d in output_dependencies(itf, e)])
    dynamic, _, inputs = state_dependencies(itf)
    for w in variables:
        if itf.vars[w.vr].source[0] == "state_der":
            unknown("ContinuousStateDerivative", w.vr, dynamic + inputs)
    for w in variables:
        if itf.vars[w.vr].causality in ("output", "local"):
            etree.SubElement(ms, "InitialUnknown", valueReference=str(w.vr))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
