"""URDF import: read a URDF file (with ``yourdfpy``) into plain robot data and write a model file.

    fmu-mb build robot.urdf [--base fixed|free|sprung] [--name NAME]

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

from ..model.robot import BASES, FRICTIONS, JOINT_TYPES, RobotJoint, RobotLink
from ..registry import identifier


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


def mechanism(path, base: str = "fixed", friction: str = "urdf", gravity=(0.0, 0.0, -9.81)):
    """The Mechanism of the URDF at ``path`` (fmu_mb.model.robot.build_robot of :func:`read`)."""
    from ..model.robot import build_robot
    data = read(path)
    return build_robot(data["name"], data["links"], data["joints"], data["root"], base=base, friction=friction,
                       gravity=gravity)


MODEL_TEMPLATE = '''"""{title}

Generated from {source} by ``fmu-mb build`` (fmu_mb.interop.urdf): the URDF's links and joints
as data, built by fmu_mb.model.robot.build_robot (its docstring gives the mapping). Edit freely and
build this file (``fmu-mb build {stem}.py``). Base: {base}. Not imported: visual and collision
geometry; joint limits are listed but not enforced.{notes}
"""
from fmu_mb.model.options import Choice
from fmu_mb.model.robot import RobotJoint, RobotLink, build_robot

NAME = {name!r}
ROOT = {root!r}
BASE = {base!r}
GRAVITY = {gravity!r}

LINKS = {links}

JOINTS = {joints}

OPTIONS = {{
    "friction": Choice({frictions!r}, "urdf",
                       "joint friction: urdf = the file's <dynamics damping friction> (Coulomb of fixed size "
                       "plus viscous), lugre = the papers' LuGre law on the journal load from the joint reaction "
                       "(paper 000 eqs. 21-22), none"),
}}
#: ROS2 (linearly implicit, L-stable) at 1 ms: the regularised Coulomb slope F/eps of light links is
#: stiff for an explicit method; ROS2 takes it in its stage matrix (README, "Integrators")
FMU = {{"step_size": 1e-3, "method": "ros2", "stop_time": 1.0, "static_start": False}}


def build(friction: str = "urdf"):
    """The robot {name} on a {base} base."""
    return build_robot(NAME, [RobotLink(*link) for link in LINKS], [RobotJoint(**joint) for joint in JOINTS], ROOT,
                       base=BASE, friction=friction, gravity=GRAVITY, description={title!r})
'''


def model_source(path, base: str = "fixed", name: str | None = None,
                 gravity=(0.0, 0.0, -9.81)) -> tuple[str, str, list]:
    """(model name, source of a model file, import warnings) for the URDF at ``path``."""
    if base not in BASES:
        raise UrdfError(f"base must be one of {', '.join(BASES)} (got {base!r})")
    data = read(path)
    name = identifier(name or data["name"])
    links = [(lk.name, lk.mass, lk.com, lk.inertia) for lk in data["links"]]
    joints = [{k: v for k, v in asdict(j).items() if v is not None} for j in data["joints"]]
    notes = "".join(f"\nImport note: {w}." for w in data["warnings"])
    n_move = sum(j.type != "fixed" for j in data["joints"])
    title = f"Robot {data['name']} from {Path(path).name}: {len(links)} links, {n_move} moving joints"
    src = MODEL_TEMPLATE.format(title=title, source=Path(path).name, stem=name, base=base, notes=notes, name=name,
                                root=data["root"], gravity=tuple(gravity), links=pformat(links, width=110),
                                joints=pformat(joints, width=110, sort_dicts=False), frictions=FRICTIONS)
    return name, src, data["warnings"]


def write_model(path, out_dir, base: str = "fixed", name: str | None = None) -> tuple[Path, list]:
    """Write ``<out_dir>/<name>.py`` from the URDF at ``path``; returns its path and the import warnings."""
    name, src, warnings = model_source(path, base=base, name=name)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.py"
    target.write_text(src)
    return target, warnings
