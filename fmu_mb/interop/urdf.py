"""URDF import: read a URDF file (with ``yourdfpy``) into plain robot data and write a model file.

    fmu-mb build robot.urdf [--base fixed|free|sprung] [--name NAME] [--flexible LINK=SPEC ...]
                            [--passive JOINT ...] [--support-stiffness KX,KY,KZ] [--support-damping DX,DY,DZ]
                            [--support-points X,Y,Z ...]

:func:`read` gives the links and joints (fmu_mb.model.robot.RobotLink / RobotJoint) in the
file's frames and units; :func:`model_source` writes them as a model file that calls
:func:`fmu_mb.model.robot.build_robot`, so the FMU built from it needs neither the URDF nor
``yourdfpy``. The mapping of URDF elements is in fmu_mb.model.robot's docstring. Visual and
collision elements (meshes) are not read. Names that are not identifiers (``-``, ``.``, ``/``)
become identifiers (those characters → ``_``); the FMU's variable names derive from them.
"""
from __future__ import annotations

from dataclasses import asdict
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

#: FlexibleLink fields a --flexible SPEC may set as key=value (besides a material and a section shape)
_SPEC_FLOATS = ("area", "Iy", "Iz", "J", "E", "G", "damping", "density")


class UrdfError(ValueError):
    """A URDF file that cannot be imported (the message names the file and the element)."""


def _float(value, default=0.0) -> float:
    return default if value is None else float(value)


def read(path) -> dict:
    """dict(name, root, links, joints, warnings) of the URDF at ``path`` (names as identifiers)."""
    import yourdfpy  # tooling only: the FMU never imports this module

    path = Path(path)
    if not path.is_file():
        raise UrdfError(f"{path}: no such URDF file")
    try:
        urdf = yourdfpy.URDF.load(str(path), load_meshes=False, build_scene_graph=False,
                                  build_collision_scene_graph=False, load_collision_meshes=False)
    except Exception as exc:  # noqa: BLE001 — the parser raises many kinds; the user needs the file and reason
        raise UrdfError(f"{path}: not a readable URDF ({type(exc).__name__}: {exc})") from None
    robot = urdf.robot
    warnings = []
    names = [identifier(ln.name) for ln in robot.links] + [identifier(j.name) for j in robot.joints]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UrdfError(f"{path}: names {dup} occur twice (links and joints need distinct names once "
                        "made identifiers)")
    links = []
    for ln in robot.links:
        mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        if ln.inertial is not None:
            T = np.asarray(ln.inertial.origin if ln.inertial.origin is not None else np.eye(4), float)
            mass = _float(ln.inertial.mass)
            com = T[:3, 3]
            R = T[:3, :3]
            inertia = R @ np.asarray(ln.inertial.inertia if ln.inertial.inertia is not None else np.zeros((3, 3)),
                                     float) @ R.T
        if mass < 0.0 or not np.isfinite(mass):
            raise UrdfError(f"{path}: link '{ln.name}': <mass value> must be finite and >= 0 (got {mass})")
        links.append(RobotLink(identifier(ln.name), mass, tuple(map(float, com)),
                               tuple(tuple(map(float, row)) for row in inertia)))
    joints = []
    for j in robot.joints:
        if j.type not in JOINT_TYPES:
            raise UrdfError(f"{path}: joint '{j.name}' has type {j.type!r}; supported: {', '.join(JOINT_TYPES)} "
                            "(floating and planar joints between links are not)")
        T = np.asarray(j.origin if j.origin is not None else np.eye(4), float)
        axis = np.asarray(j.axis if j.axis is not None else (1.0, 0.0, 0.0), float)
        if j.type != "fixed" and not (np.all(np.isfinite(axis)) and np.linalg.norm(axis) > 0.0):
            raise UrdfError(f"{path}: joint '{j.name}': <axis xyz> must be a non-zero vector (got {axis})")
        lim, dyn = j.limit, j.dynamics
        if j.mimic is not None:
            warnings.append(f"joint '{j.name}' mimics '{j.mimic.joint}': imported as an independent joint")
        joints.append(RobotJoint(
            identifier(j.name), j.type, identifier(j.parent), identifier(j.child),
            origin=tuple(map(float, T[:3, 3])), rotation=tuple(tuple(map(float, r)) for r in T[:3, :3]),
            axis=tuple(map(float, axis)),
            lower=None if lim is None or lim.lower is None or j.type == "continuous" else float(lim.lower),
            upper=None if lim is None or lim.upper is None or j.type == "continuous" else float(lim.upper),
            effort=None if lim is None or lim.effort is None else float(lim.effort),
            velocity=None if lim is None or lim.velocity is None else float(lim.velocity),
            damping=0.0 if dyn is None else _float(dyn.damping), friction=0.0 if dyn is None else _float(dyn.friction)))
        if joints[-1].damping < 0.0 or joints[-1].friction < 0.0:
            raise UrdfError(f"{path}: joint '{j.name}': <dynamics damping friction> must be >= 0")
    children = {j.child for j in joints}
    roots = [lk.name for lk in links if lk.name not in children]
    if len(roots) != 1:
        raise UrdfError(f"{path}: the links must form one tree with a single root; links that no joint moves: "
                        f"{roots or 'none (a loop)'}")
    seen = [j.child for j in joints]
    twice = sorted({c for c in seen if seen.count(c) > 1})
    if twice:
        raise UrdfError(f"{path}: links {twice} are the child of more than one joint (a closed loop: URDF "
                        "describes trees; close loops with constraints in a model file, docs/mechanisms.md)")
    return dict(name=identifier(robot.name or path.stem), root=roots[0], links=links,
                joints=joints, warnings=warnings)


def parse_flexible(text: str) -> FlexibleLink:
    """A FlexibleLink from ``LINK=SPEC``; SPEC is comma-separated: a material (aluminium, steel),
    a section (``tube=DxT``, ``rod=D``, ``rect=BxH``, m) or ``area= Iy= Iz= J=`` (m², m⁴), and
    optionally ``E= G=`` (Pa), ``density=`` (kg/m³), ``n_div=``, ``damping=`` (s), ``end=JOINT``.
    Example: ``forearm_link=aluminium,tube=0.08x0.004,n_div=8``."""
    link, sep, spec = text.partition("=")
    if not sep or not link.strip() or not spec.strip():
        raise UrdfError(f"--flexible takes LINK=SPEC (for example forearm_link=aluminium,tube=0.08x0.004), "
                        f"got {text!r}")
    link = identifier(link.strip())
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
                vals[key] = identifier(value)
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


def mechanism(path, base: str = "fixed", friction: str = "urdf", gravity=(0.0, 0.0, -9.81), **robot):
    """The Mechanism of the URDF at ``path`` (fmu_mb.model.robot.build_robot of :func:`read`;
    ``robot``: its further arguments, such as passive, flexible, support_stiffness)."""
    from ..model.robot import build_robot
    data = read(path)
    return build_robot(data["name"], data["links"], data["joints"], data["root"], base=base, friction=friction,
                       gravity=gravity, **robot)


MODEL_TEMPLATE = '''"""{title}

Generated from {source} by ``fmu-mb build`` (fmu_mb.interop.urdf): the URDF's links and joints
as data, built by fmu_mb.model.robot.build_robot (its docstring gives the mapping). Edit freely and
build this file (``fmu-mb build {stem}.py``). Base: {base}. Not imported: visual and collision
geometry; the joints' effort and velocity limits are listed but not enforced.{notes}
"""
from fmu_mb.model.options import Choice
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
#: (None: the link's URDF mass spread along the beam)
FLEXIBLE = {flexible}

LINKS = {links}

JOINTS = {joints}

OPTIONS = {{
    "friction": Choice({frictions!r}, "urdf",
                       "joint friction: urdf = the file's <dynamics damping friction> (Coulomb of fixed size "
                       "plus viscous), lugre = the papers' LuGre law on the journal load from the joint reaction "
                       "(paper 000 eqs. 21-22), none"),
    "limits": Choice({limit_choices!r}, "stops",
                     "joint limits of the file: stops = penalty spring-dampers beyond them (fmu_mb.model.robot), "
                     "none = free range"),
}}
if FLEXIBLE:
    OPTIONS["links"] = Choice(("flexible", "rigid"), "flexible",
                              "the links of FLEXIBLE as RFEM beams, or rigid with the URDF's inertia")
#: ROS2 (linearly implicit, L-stable) at {step_ms:g} ms: the regularised Coulomb slope F/eps of light links
#: (and the sde springs of flexible links) are stiff for an explicit method; ROS2 takes them in its
#: stage matrix (README, "Integrators")
FMU = {{"step_size": {step!r}, "method": "ros2", "stop_time": 1.0, "static_start": False}}


def build(friction: str = "urdf", limits: str = "stops", links: str = "flexible"):
    """The robot {name} on a {base} base."""
    return build_robot(NAME, [RobotLink(*link) for link in LINKS], [RobotJoint(**joint) for joint in JOINTS], ROOT,
                       base=BASE, friction=friction, limits=limits, gravity=GRAVITY, passive=PASSIVE,
                       flexible=[FlexibleLink(**f) for f in FLEXIBLE] if links == "flexible" else [],
                       support_points=SUPPORTS["points"], support_stiffness=SUPPORTS["stiffness"],
                       support_damping=SUPPORTS["damping"], description={title!r})
'''


def model_source(path, base: str = "fixed", name: str | None = None, gravity=(0.0, 0.0, -9.81), passive=(),
                 flexible=(), support_stiffness=SUPPORT_STIFFNESS, support_damping=SUPPORT_DAMPING,
                 support_points=None) -> tuple[str, str, list]:
    """(model name, source of a model file, import warnings) for the URDF at ``path``; the robot is
    built once here, so a file is only written for a robot that builds (UrdfError otherwise)."""
    from ..model.robot import build_robot
    if base not in BASES:
        raise UrdfError(f"base must be one of {', '.join(BASES)} (got {base!r})")
    if base != "sprung" and (support_points is not None or tuple(support_stiffness) != SUPPORT_STIFFNESS
                             or tuple(support_damping) != SUPPORT_DAMPING):
        raise UrdfError("the support options apply to --base sprung")
    data = read(path)
    name = identifier(name or data["name"])
    passive = [identifier(p) for p in passive]
    flexible = [f if isinstance(f, FlexibleLink) else parse_flexible(f) for f in flexible]
    points = [tuple(map(float, p)) for p in (support_points or SUPPORT_POINTS)]
    supports = dict(points=points, stiffness=tuple(map(float, support_stiffness)),
                    damping=tuple(map(float, support_damping)))
    try:
        mech = build_robot(name, data["links"], data["joints"], data["root"], base=base, gravity=gravity,
                           passive=passive, flexible=flexible, support_points=supports["points"],
                           support_stiffness=supports["stiffness"], support_damping=supports["damping"])
        mech.validate()
    except ValueError as exc:
        raise UrdfError(f"{path}: {exc}") from None
    warnings = list(data["warnings"])
    by_name = {lk.name: lk for lk in data["links"]}
    for f in flexible:
        beam = mech.link(f.link)
        m = beam.density * beam.area * beam.length
        warnings.append(f"link '{f.link}' is a flexible beam of {beam.length:.4g} m, {m:.4g} kg (URDF mass "
                        f"{by_name[f.link].mass:.4g} kg), {f.n_div} sections; the URDF's centre of mass and "
                        "inertia of that link are replaced by the uniform beam's")
    links = [(lk.name, lk.mass, lk.com, lk.inertia) for lk in data["links"]]
    joints = [{k: v for k, v in asdict(j).items() if v is not None} for j in data["joints"]]
    flex = [{k: v for k, v in asdict(f).items() if v is not None} for f in flexible]
    notes = "".join(f"\nImport note: {w}." for w in warnings)
    n_move = sum(j.type != "fixed" for j in data["joints"])
    title = f"Robot {data['name']} from {Path(path).name}: {len(links)} links, {n_move} moving joints"
    step = 1e-3
    src = MODEL_TEMPLATE.format(title=title, source=Path(path).name, stem=name, base=base, notes=notes, name=name,
                                root=data["root"], gravity=tuple(gravity), links=pformat(links, width=110),
                                joints=pformat(joints, width=110, sort_dicts=False), frictions=FRICTIONS, limit_choices=LIMITS,
                                passive=passive, supports=pformat(supports, width=110, sort_dicts=False),
                                flexible=pformat(flex, width=110, sort_dicts=False), step=step, step_ms=step * 1e3)
    return name, src, warnings


def write_model(path, out_dir, base: str = "fixed", name: str | None = None, **robot) -> tuple[Path, list]:
    """Write ``<out_dir>/<name>.py`` from the URDF at ``path`` (``robot``: the further arguments of
    :func:`model_source`); returns its path and the import warnings."""
    name, src, warnings = model_source(path, base=base, name=name, **robot)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.py"
    target.write_text(src)
    return target, warnings
