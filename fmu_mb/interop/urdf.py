"""URDF import: read a URDF file into plain robot data (fmu_mb.interop.urdf_read) and write a model file.

    fmu-mb build robot.urdf [--base fixed|free|sprung] [--name NAME] [--flexible LINK=SPEC ...]
                            [--passive JOINT ...] [--support-stiffness KX,KY,KZ] [--support-damping DX,DY,DZ]
                            [--support-points X,Y,Z ...]

:func:`read` gives the links and joints (fmu_mb.model.robot.RobotLink / RobotJoint) in the
file's frames and units; :func:`model_source` writes them as a model file that calls
:func:`fmu_mb.model.robot.build_robot`, so the FMU built from it needs neither the URDF nor a
parser. The mapping of URDF elements is in fmu_mb.model.robot's docstring; what the reader repairs
(with a warning) and refuses is in fmu_mb.interop.urdf_read's, the naming scheme in
fmu_mb.interop.names'. Visual and collision elements (meshes) are not read.
"""
from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from pprint import pformat

import numpy as np

from ..model.robot import (
    BASES,
    FRICTIONS,
    JOINT_TYPES,
    LIMITS,
    MATERIALS,
    SUPPORT_DAMPING,
    SUPPORT_POINTS,
    SUPPORT_STIFFNESS,
    FlexibleLink,
    RobotJoint,
    RobotLink,
    section,
)
from ..registry import identifier
from . import urdf_read
from .urdf_read import UrdfError

#: FlexibleLink fields a --flexible SPEC may set as key=value (besides a material and a section shape)
_SPEC_FLOATS = ("area", "Iy", "Iz", "J", "E", "G", "damping", "density")


def read(path, strict: bool = False) -> dict:
    """dict(name, root, links, joints, warnings) of the URDF at ``path`` (fmu_mb.interop.urdf_read)."""
    return urdf_read.read(path, strict=strict)


def parse_flexible(text: str) -> FlexibleLink:
    """A FlexibleLink from ``LINK=SPEC``; SPEC is comma-separated: a material (aluminium, steel),
    a section (``tube=DxT``, ``rod=D``, ``rect=BxH``, m) or ``area= Iy= Iz= J=`` (m², m⁴), and
    optionally ``E= G=`` (Pa), ``density=`` (kg/m³), ``n_div=``, ``damping=`` (s), ``end=JOINT``.
    Example: ``forearm_link=aluminium,tube=0.08x0.004,n_div=8``."""
    link, sep, spec = text.partition("=")
    if not sep or not link.strip() or not spec.strip():
        raise UrdfError(f"--flexible takes LINK=SPEC (for example forearm_link=aluminium,tube=0.08x0.004), "
                        f"got {text!r}")
    link = link.strip()          # the file's name (the model's identifier is looked up by model_source)
    vals: dict = {}
    for token in (t.strip() for t in spec.split(",") if t.strip()):
        key, eq, value = token.partition("=")
        try:
            if not eq:
                if key.lower() not in MATERIALS:
                    raise ValueError(f"unknown material {key!r} (known: {', '.join(MATERIALS)}; or give E=, G=, "
                                     "density=)")
                vals.setdefault("E", MATERIALS[key.lower()][0])
                vals.setdefault("G", MATERIALS[key.lower()][1])
                vals.setdefault("_material_density", MATERIALS[key.lower()][2])
            elif key in ("tube", "rod", "rect"):
                vals.update(zip(("area", "Iy", "Iz", "J"), section(key, *(float(x) for x in value.split("x")))))
            elif key in _SPEC_FLOATS:
                vals[key] = float(value)
            elif key == "n_div":
                vals[key] = int(value)
            elif key == "end":
                vals[key] = value.strip()
            else:
                raise ValueError(f"unknown key {key!r} (keys: tube, rod, rect, {', '.join(_SPEC_FLOATS)}, n_div, end)")
        except ValueError as exc:
            raise UrdfError(f"--flexible {text}: {token!r}: {exc}") from None
    vals.pop("_material_density", None)   # the URDF mass sets the density unless density= is given
    missing = [k for k in ("area", "Iy", "Iz", "J", "E", "G") if k not in vals]
    if missing:
        raise UrdfError(f"--flexible {text}: missing {', '.join(missing)} (give a material such as aluminium and a "
                        "section such as tube=0.08x0.004, or the values)")
    return FlexibleLink(link, **vals)


def vector3(text: str, what: str) -> tuple:
    try:
        v = tuple(float(x) for x in text.split(","))
    except ValueError:
        v = ()
    if len(v) != 3 or not all(np.isfinite(v)):
        raise UrdfError(f"{what} takes three finite numbers X,Y,Z (got {text!r})")
    return v


def mechanism(path, base: str = "fixed", friction: str | None = None, gravity=None, strict: bool = False,
              **robot):
    """The Mechanism of the URDF or MJCF file at ``path`` (fmu_mb.model.robot.build_robot of its robot data;
    friction: default the file's law, "urdf" or "mjcf"; gravity: default the file's or (0, 0, −9.81) m/s²;
    ``robot``: build_robot's further arguments, such as passive, flexible, support_stiffness)."""
    from ..model.robot import build_robot
    data = robot_data(path, strict=strict)
    robot["passive"] = list(data.get("passive", [])) + list(robot.get("passive", []))
    return build_robot(data["name"], data["links"], data["joints"], data["root"], base=base,
                       friction=friction or FORMATS[file_format(path)][1],
                       gravity=gravity if gravity is not None else data.get("gravity", (0.0, 0.0, -9.81)),
                       cuts=data.get("cuts", []), **robot)


MODEL_TEMPLATE = '''"""{title}

Generated from {source} by ``fmu-mb build`` ({reader}): the {fmt}'s links and joints
as data, built by fmu_mb.model.robot.build_robot (its docstring gives the mapping). Edit freely and
build this file (``fmu-mb build {stem}.py``). Base: {base}. Not imported: {not_imported}.{notes}
"""
from fmu_mb.model.options import Choice
from fmu_mb.model.constraints import CutJoint
from fmu_mb.model.robot import FlexibleLink, RobotJoint, RobotLink, build_robot

NAME = {name!r}
ROOT = {root!r}
BASE = {base!r}
GRAVITY = {gravity!r}
#: moving joints without a drive input
PASSIVE = {passive!r}
#: base="sprung": support points in the root-link frame (m), stiffness (N/m) and damping (N·s/m)
#: along the world axes, per support (paper 000 eqs. 15-16)
SUPPORTS = {supports}
#: links made flexible (RFEM beams, paper 001 eq. 7): section m², m⁴; E, G Pa; damping s; density kg/m³
#: (None: the link's {fmt} mass spread along the beam)
FLEXIBLE = {flexible}
#: loop closures (fmu_mb.model.constraints.CutJoint): MJCF's connect (spherical) and weld (fixed) equalities
CUTS = {cuts}

LINKS = {links}

JOINTS = {joints}

OPTIONS = {{
    "friction": Choice({frictions!r}, {friction_default!r},
                       "joint friction: {friction_default} = {friction_text}, lugre = the papers' LuGre law on the "
                       "journal load from the joint reaction (paper 000 eqs. 21-22), none"),
    "limits": Choice({limit_choices!r}, "stops",
                     "joint limits of the file: stops = penalty spring-dampers beyond them (fmu_mb.model.robot), "
                     "none = free range"),
}}
if FLEXIBLE:
    OPTIONS["links"] = Choice(("flexible", "rigid"), "flexible",
                              "the links of FLEXIBLE as RFEM beams, or rigid with the {fmt}'s inertia")
#: ROS2 (linearly implicit, L-stable) at {step_ms:g} ms: the regularised Coulomb slope F/eps of light links
#: (and the sde springs of flexible links) are stiff for an explicit method; ROS2 takes them in its
#: stage matrix (docs/integrators.md)
FMU = {{"step_size": {step!r}, "method": "ros2", "stop_time": 1.0, "static_start": False}}


def build(friction: str = {friction_default!r}, limits: str = "stops", links: str = "flexible"):
    """The robot {name} on a {base} base."""
    return build_robot(NAME, [RobotLink(*link) for link in LINKS], [RobotJoint(**joint) for joint in JOINTS], ROOT,
                       base=BASE, friction=friction, limits=limits, gravity=GRAVITY, passive=PASSIVE,
                       flexible=[FlexibleLink(**f) for f in FLEXIBLE] if links == "flexible" else [],
                       support_points=SUPPORTS["points"], support_stiffness=SUPPORTS["stiffness"],
                       support_damping=SUPPORTS["damping"], description={title!r},
                       cuts=[CutJoint(**c) for c in CUTS])
'''


#: per robot-file format: reader, the friction option's file law and its words, what is not imported
FORMATS = {
    "URDF": ("fmu_mb.interop.urdf_read", "urdf", "the file's <dynamics damping friction> (Coulomb of fixed size plus "
             "viscous)", "visual and collision geometry; the joints' effort and velocity limits are listed but not "
             "enforced"),
    "MJCF": ("fmu_mb.interop.mjcf, MuJoCo's compiler", "mjcf", "the file's frictionloss (Coulomb of fixed size)",
             "geoms, contacts, tendons, sites, sensors; actuators' gains and ranges (the drives are joint torques)"),
}


def file_format(path) -> str:
    """"MJCF" for a MuJoCo file (.xml, .mjcf), else "URDF"."""
    return "MJCF" if Path(path).suffix.lower() in (".xml", ".mjcf") else "URDF"


def robot_data(path, strict: bool = False) -> dict:
    """The robot data of a URDF or MJCF file (:func:`read`, fmu_mb.interop.mjcf.read)."""
    if file_format(path) == "MJCF":
        from . import mjcf
        return mjcf.read(path, strict=strict)
    return read(path, strict=strict)


def model_source(path, base: str = "fixed", name: str | None = None, gravity=None, passive=(),
                 flexible=(), support_stiffness=SUPPORT_STIFFNESS, support_damping=SUPPORT_DAMPING,
                 support_points=None, strict: bool = False) -> tuple[str, str, list]:
    """(model name, source of a model file, import warnings) for the URDF or MJCF file at ``path``
    (gravity: default the file's, MJCF, or (0, 0, −9.81) m/s²); the robot is built once here, so a
    file is only written for a robot that builds (UrdfError otherwise)."""
    from ..model import compile_mechanism
    from ..model.robot import MJCF_FRICTIONS, build_robot
    from .checks import singular_motion
    fmt = file_format(path)
    reader, friction, friction_text, not_imported = FORMATS[fmt]
    if base not in BASES:
        raise UrdfError(f"base must be one of {', '.join(BASES)} (got {base!r})")
    if fmt == "MJCF" and base != "fixed":
        raise UrdfError(f"{path}: --base applies to URDF files (an MJCF file's free bodies have their own free joints)")
    if base != "sprung" and (support_points is not None or tuple(support_stiffness) != SUPPORT_STIFFNESS
                             or tuple(support_damping) != SUPPORT_DAMPING):
        raise UrdfError("the support options apply to --base sprung")
    data = robot_data(path, strict=strict)
    name = identifier(name or data["name"])
    gravity = tuple(map(float, gravity if gravity is not None else data.get("gravity", (0.0, 0.0, -9.81))))
    passive = list(dict.fromkeys(list(data.get("passive", [])) +
                                 [data["joint_ids"].get(p, identifier(p)) for p in passive]))   # file or model names
    flexible = [f if isinstance(f, FlexibleLink) else parse_flexible(f) for f in flexible]
    flexible = [replace(f, link=data["link_ids"].get(f.link, identifier(f.link)),
                        end=None if f.end is None else data["joint_ids"].get(f.end, identifier(f.end)))
                for f in flexible]
    points = [tuple(map(float, p)) for p in (support_points or SUPPORT_POINTS)]
    supports = dict(points=points, stiffness=tuple(map(float, support_stiffness)),
                    damping=tuple(map(float, support_damping)))
    cuts = list(data.get("cuts", []))
    try:
        mech = build_robot(name, data["links"], data["joints"], data["root"], base=base, gravity=gravity,
                           passive=passive, flexible=flexible, support_points=supports["points"],
                           support_stiffness=supports["stiffness"], support_damping=supports["damping"],
                           friction=friction, cuts=cuts)
        mech.validate()
        singular = singular_motion(compile_mechanism(mech))
    except ValueError as exc:
        text = str(exc)
        if file_format(path) == "MJCF" and "no moving joint" in text:     # --base is the URDF's: MJCF gives its own
            text = text.split(" (")[0] + " (the file has no hinge, slide, ball or free joint: nothing moves)"
        raise UrdfError(f"{path}: {text}") from None
    if singular:
        raise UrdfError(f"{path}: robot '{name}': {singular}")
    warnings = list(data["warnings"])
    by_name = {lk.name: lk for lk in data["links"]}
    for f in flexible:
        beam = mech.link(f.link)
        m = beam.density * beam.area * beam.length
        warnings.append(f"link '{f.link}' is a flexible beam of {beam.length:.4g} m, {m:.4g} kg ({fmt} mass "
                        f"{by_name[f.link].mass:.4g} kg), {f.n_div} sections; the {fmt}'s centre of mass and "
                        "inertia of that link are replaced by the uniform beam's")
    links = [(lk.name, lk.mass, lk.com, lk.inertia) for lk in data["links"]]
    joints = [{k: v for k, v in asdict(j).items() if v is not None and not (k in _ZERO and v == 0.0)}
              for j in data["joints"]]
    flex = [{k: v for k, v in asdict(f).items() if v is not None} for f in flexible]
    notes = "".join(f"\nImport note: {w}." for w in warnings)
    n_move = sum(j.type != "fixed" for j in data["joints"])
    title = f"Robot {data['name']} from {Path(path).name}: {len(links)} links, {n_move} moving joints"
    step = 1e-3
    src = MODEL_TEMPLATE.format(title=title, source=Path(path).name, stem=name, base=base, notes=notes, name=name,
                                root=data["root"], gravity=gravity, links=pformat(links, width=110),
                                joints=pformat(joints, width=110, sort_dicts=False),
                                frictions=MJCF_FRICTIONS if fmt == "MJCF" else FRICTIONS, limit_choices=LIMITS,
                                passive=passive, supports=pformat(supports, width=110, sort_dicts=False),
                                flexible=pformat(flex, width=110, sort_dicts=False), step=step, step_ms=step * 1e3,
                                cuts=pformat([asdict(c) for c in cuts], width=110, sort_dicts=False), fmt=fmt,
                                reader=reader, friction_default=friction, friction_text=friction_text,
                                not_imported=not_imported)
    return name, src, warnings


#: RobotJoint fields left out of a model file where zero (their default)
_ZERO = ("armature",)


def write_model(path, out_dir, base: str = "fixed", name: str | None = None, **robot) -> tuple[Path, list]:
    """Write ``<out_dir>/<name>.py`` from the URDF or MJCF file at ``path`` (``robot``: the further arguments of
    :func:`model_source`); returns its path and the import warnings."""
    name, src, warnings = model_source(path, base=base, name=name, **robot)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.py"
    target.write_text(src)
    return target, warnings
