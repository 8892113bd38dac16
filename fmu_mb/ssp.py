"""A system of FMUs (fmu_mb.system) as an SSP 1.0 file: ``SystemStructure.ssd`` (components, connectors,
connections, the default experiment), one ``.ssv`` parameter set per component and the FMUs, in ``resources/``.

Written with lxml and validated against the SSP 1.0 schemas (the copies FMPy ships, fmpy/ssp/schema). Read by
FMPy's ``fmpy.ssp.simulate_ssp`` (pass :func:`fmpy_parameter_set`: FMPy applies no parameter binding by itself) and
by OSP libcosim (``CosimExecution.from_ssp_file``: component parameter sets, and the fixed step from the OSP
annotation of the default experiment)."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path

from lxml import etree

SSD = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SSC = "http://ssp-standard.org/SSP1/SystemStructureCommon"
SSV = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
OSP = "http://opensimulationplatform.com/SSP/OSPAnnotations"
FMU_TYPE = "application/x-fmu-sharedlibrary"


def _q(ns, tag):
    return f"{{{ns}}}{tag}"


def _types(fmu: Path) -> dict:
    """{variable: "Real" | "Integer" | "Boolean"} of an FMU (Enumerations are Integers to an SSP)."""
    from fmpy import read_model_description
    md = read_model_description(str(fmu), validate=False)
    return {v.name: "Integer" if v.type == "Enumeration" else v.type for v in md.modelVariables}


def ssd_tree(system, sources: dict, types: dict) -> etree._Element:
    """The SystemStructure.ssd of ``system``: ``sources`` {component: path of its FMU in the .ssp},
    ``types`` {component: {variable: type}}."""
    root = etree.Element(_q(SSD, "SystemStructureDescription"), nsmap={"ssd": SSD, "ssc": SSC, "osp": OSP},
                         version="1.0", name=system.name)
    sysel = etree.SubElement(root, _q(SSD, "System"), name=system.name, description=system.description)
    elements = etree.SubElement(sysel, _q(SSD, "Elements"))
    for c in system.components:
        comp = etree.SubElement(elements, _q(SSD, "Component"), name=c.name, type=FMU_TYPE, source=sources[c.name])
        connectors = etree.SubElement(comp, _q(SSD, "Connectors"))
        for var, kind in system.connectors(c.name).items():
            if var not in types[c.name]:
                raise ValueError(f"{c.fmu.name} (component {c.name}) has no variable {var!r}")
            con = etree.SubElement(connectors, _q(SSD, "Connector"), name=var, kind=kind)
            etree.SubElement(con, _q(SSC, types[c.name][var]))
        if c.parameters:
            bindings = etree.SubElement(comp, _q(SSD, "ParameterBindings"))
            etree.SubElement(bindings, _q(SSD, "ParameterBinding"), source=f"resources/{c.name}.ssv")
    connections = etree.SubElement(sysel, _q(SSD, "Connections"))
    for con in system.connections:
        (sc, sv), (ec, ev) = con.ends()
        etree.SubElement(connections, _q(SSD, "Connection"), startElement=sc, startConnector=sv, endElement=ec,
                         endConnector=ev)
    exp = etree.SubElement(root, _q(SSD, "DefaultExperiment"), startTime="0.0", stopTime=repr(system.stop_time))
    ann = etree.SubElement(etree.SubElement(exp, _q(SSD, "Annotations")), _q(SSC, "Annotation"),
                           type="com.opensimulationplatform")
    algorithm = etree.SubElement(ann, _q(OSP, "Algorithm"))
    etree.SubElement(algorithm, _q(OSP, "FixedStepAlgorithm"), baseStepSize=repr(system.step))
    return root


def ssv_tree(name: str, parameters: dict, types: dict) -> etree._Element:
    """A parameter set (.ssv) of {variable: value}, each typed as the FMU declares it."""
    root = etree.Element(_q(SSV, "ParameterSet"), nsmap={"ssv": SSV}, version="1.0", name=name)
    params = etree.SubElement(root, _q(SSV, "Parameters"))
    for var, value in parameters.items():
        kind = types.get(var)
        if kind not in ("Real", "Integer", "Boolean"):
            raise ValueError(f"parameter {var!r} of {name}: the FMU has no Real, Integer or Boolean variable of "
                             "that name")
        text = repr(float(value)) if kind == "Real" else str(int(value)) if kind == "Integer" else \
            str(bool(value)).lower()
        etree.SubElement(etree.SubElement(params, _q(SSV, "Parameter"), name=var), _q(SSV, kind), value=text)
    return root


def _bytes(tree) -> bytes:
    return etree.tostring(tree, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def write_ssp(system, path) -> Path:
    """Write ``system`` as the SSP file ``path`` (written beside it, then renamed: no half-written file); each
    distinct FMU once in resources/. Validated against the SSP 1.0 schemas before it is renamed."""
    system.check()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmus, sources = {}, {}
    for c in system.components:
        fmu = Path(c.fmu).resolve()
        if not fmu.is_file():
            raise FileNotFoundError(f"component {c.name}: no FMU {c.fmu}")
        fmus.setdefault(fmu, f"resources/{fmu.name}")
        if list(fmus.values()).count(fmus[fmu]) > 1:
            raise ValueError(f"two different FMUs named {fmu.name}: rename one")
        sources[c.name] = fmus[fmu]
    types = {c.name: _types(Path(c.fmu)) for c in system.components}
    members = {"SystemStructure.ssd": _bytes(ssd_tree(system, sources, types))}
    for c in system.components:
        if c.parameters:
            members[f"resources/{c.name}.ssv"] = _bytes(ssv_tree(c.name, c.parameters, types[c.name]))
    part = path.with_name(f".{path.name}.part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        for member, data in members.items():
            z.writestr(member, data)
        for fmu, member in fmus.items():
            z.write(fmu, member)
    problems = validate_ssp(part)
    if problems:
        part.unlink()
        raise ValueError("the .ssp does not validate against SSP 1.0:\n" + "\n".join(problems))
    os.replace(part, path)
    return path


def _schema(name: str):
    import fmpy.ssp
    return etree.XMLSchema(file=str(Path(fmpy.ssp.__file__).parent / "schema" / name))


def validate_ssp(path) -> list:
    """Problems of an .ssp against the SSP 1.0 schemas (its .ssd and every .ssv), one line each; [] if none."""
    problems = []
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        if "SystemStructure.ssd" not in names:
            return ["no SystemStructure.ssd at the root of the archive"]
        checks = [("SystemStructure.ssd", "SystemStructureDescription.xsd")]
        checks += [(n, "SystemStructureParameterValues.xsd") for n in names if n.endswith(".ssv")]
        for member, xsd in checks:
            schema = _schema(xsd)
            if not schema.validate(etree.fromstring(z.read(member))):
                problems += [f"{member} line {e.line}: {e.message}" for e in schema.error_log]
    return problems


def fmpy_parameter_set(path):
    """The parameter values of every component of an .ssp as one FMPy ParameterSet, named "component.variable"
    (what ``fmpy.ssp.simulate_ssp(path, parameter_set=...)`` applies; it reads but does not apply bindings), Booleans
    as 1.0/0.0 (fmpy.ssp compares a Boolean's value with 0.0)."""
    from fmpy.ssp.ssd import Parameter, ParameterSet, find_components, read_ssd
    merged = ParameterSet(name="parameters")
    for comp in find_components(read_ssd(str(path)).system):
        for binding in comp.parameterBindings:
            for values in binding.parameterValues:
                for p in values.parameters:
                    q = Parameter(name=f"{comp.name}.{p.name}")
                    q.type, q.value, q.unit = p.type, p.value, p.unit
                    if p.type == "Boolean":      # fmpy.ssp sets `value != 0.0`: "false" would be true
                        q.value = 1.0 if str(p.value).strip().lower() in ("true", "1") else 0.0
                    merged.parameters.append(q)
    return merged


def plant_values(module, items, md) -> dict:
    """{variable: value} of ``--set NAME=VALUE`` items against the plant FMU's model description ``md``; a named
    option (model.<option>) also by its value's name (the .ssp's FMUs number them: Integer options)."""
    from .runs import start_values
    options = getattr(module, "OPTIONS", {})
    named, rest = {}, []
    for item in items:
        name, _, text = item.partition("=")
        values = tuple(getattr(options.get(name.strip().removeprefix("model."), None), "values", ()) or ())
        if name.strip().startswith("model.") and text.strip() in values:
            named[name.strip()] = values.index(text.strip())
        else:
            rest.append(item)
    return {**named, **start_values(rest, md)}


def write_closed_loop(model: str = "crane", out=None, step: float | None = None, stop_time: float | None = None,
                      omega: float | None = None, settings=(), targets=None, log=print) -> Path:
    """``fmu-mb ssp``: build the FMUs of ``model``'s closed loop (fmu_mb.system: the quick start's crane loop for
    the crane, :func:`fmu_mb.system.mechanism_closed_loop` for another mechanism with a programmed mode) and write
    it as ``out`` (default dist/ssp/<model>_closed_loop.ssp). The mechanism's native FMU names its options with
    Integers (libcosim reads no FMI 2.0 Enumeration) and carries its Count options at their defaults and at the
    values ``settings`` (the plant's NAME=VALUE items) give."""
    import tempfile

    from fmpy import read_model_description

    from .fmi.controller import build_controller_fmu
    from .fmi.excitation import build_excitation_fmu
    from .fmi.native_fmu import build_native_fmu
    from .model.options import Count, Value
    from .registry import load_file, locate, models_dir
    from .system import CRANE_PLANT, crane_closed_loop, driven_joints, mechanism_closed_loop, mode_codes
    name, path = locate(model)
    module = load_file(path, name)
    quick_start = Path(path).resolve() == (models_dir() / "crane.py").resolve()
    try:
        mode_codes(module)
    except KeyError:
        raise ValueError(f"{name} has no programmed mode (an option mode with programmed and torque) to be the "
                         "reference model of its closed loop") from None
    out = Path(out or Path("dist") / "ssp" / f"{name}_closed_loop.ssp")
    counts = {}                 # Count and Value options the plant sets: the FMU carries those values
    for item in settings:
        key, _, text = item.partition("=")
        opt = getattr(module, "OPTIONS", {}).get(key.strip().removeprefix("model."))
        if key.strip().startswith("model.") and isinstance(opt, (Count, Value)):
            try:
                counts[key.strip().removeprefix("model.")] = int(text) if isinstance(opt, Count) else float(text)
            except ValueError:
                raise ValueError(f"--set {item}: {text!r} is not a{' whole' if isinstance(opt, Count) else ''} "
                                 "number") from None
    with tempfile.TemporaryDirectory(prefix="fmu_mb_ssp_") as tmp:
        log(f"building the FMUs of {name}'s closed loop (native, Integer options) ...")
        fmu = build_native_fmu(model, tmp, targets, enumerations=False, options=counts or None, every_count=False,
                               log=log).path
        md = read_model_description(str(fmu), validate=False)
        plant = plant_values(module, settings, md)
        joints = driven_joints(fmu)
        build_controller_fmu(tmp, channels=max(6, len(joints)), targets=targets)
        if quick_start:
            build_excitation_fmu(tmp, targets=targets)
            system = crane_closed_loop(tmp, step or 2.5e-4, stop_time or 5.0, omega or 6.0,
                                       {**CRANE_PLANT, **plant}, crane_fmu=fmu)
        else:
            system = mechanism_closed_loop(model, fmu, tmp, step or 1e-3, stop_time or 5.0, omega or 10.0, plant)
        write_ssp(system, out)
    log(f"{out}: {', '.join(c.name for c in system.components)}; {len(system.connections)} connections; exchange "
        f"step {system.step:g} s, {system.stop_time:g} s (validated against SSP 1.0)")
    log(f"run it in FMPy: fmpy.ssp.simulation.simulate_ssp('{out}', stop_time={system.stop_time!r}, "
        f"step_size={system.step!r}, parameter_set=fmu_mb.ssp.fmpy_parameter_set('{out}')); in OSP libcosim: "
        f"libcosimpy.CosimExecution.CosimExecution.from_ssp_file('{out}') (docs/systems.md)")
    return out
