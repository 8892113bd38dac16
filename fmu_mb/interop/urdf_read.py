"""Reading a URDF file into plain robot data (fmu_mb.model.robot.RobotLink / RobotJoint).

The XML is parsed by lxml in strict mode: a malformed or truncated file is refused with its line,
never recovered into a smaller robot. Only what the dynamics needs is read (``<link>``'s
``<inertial>``; ``<joint>``'s type, parent, child, ``<origin>``, ``<axis>``, ``<limit>``,
``<dynamics>``, ``<mimic>``); visuals, collisions, materials, transmissions and ``<gazebo>`` are
skipped, so an element that the dynamics does not use cannot stop an import. Every refusal is one
line: the file, the line, the element and what to fix (:class:`UrdfError`).

What is repaired (each with one warning; ``strict=True`` refuses instead), as Pinocchio and
MuJoCo load such files:

* an inertia that is not physical (negative round-off moments, moments violating the triangle
  inequality, a massless link with rotational inertia) → the nearest physical one
  (fmu_mb.model.inertia.nearest_physical_inertia), the warning giving the moments before and after;
* names: links and joints made distinct identifiers (fmu_mb.interop.names);
* as urdfdom and PyBullet read files (pybullet_data's): an XML declaration of version "0.0" or after
  blank lines, NUL bytes after the document (:func:`_lenient_text`); a limit whose lower exceeds its
  upper → no limit (PyBullet's convention); PyBullet's ``spherical`` joint type → a ball joint.

Frames follow the URDF spec: ``<origin xyz rpy>`` is Trans(xyz)·Rz(yaw)·Ry(pitch)·Rx(roll), a
joint's axis is in the joint frame (default x), a link's inertia tensor is given in the frame of
its ``<inertial><origin>`` and is rotated here into the link frame.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from ..model.inertia import inertia_defect, nearest_physical_inertia
from ..model.robot import RobotJoint, RobotLink
from ..registry import identifier
from .names import distinct_names

#: URDF joint types (the spec's six); floating and planar between links are refused by the robot builder
URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: PyBullet's URDF extension: a ball joint (pybullet_data's humanoid.urdf), read as MJCF's ``ball``
SPHERICAL = "spherical"


class UrdfError(ValueError):
    """A URDF file that cannot be imported (the message names the file, the line and the element)."""


class _File:
    """The file being read: its path for messages and the strictness of the import."""

    def __init__(self, path: Path, strict: bool):
        self.path, self.strict = path, strict

    def error(self, el, text: str) -> UrdfError:
        line = f":{el.sourceline}" if el is not None and el.sourceline else ""
        return UrdfError(f"{self.path}{line}: {text}")

    def numbers(self, el, attr: str, n: int, default=None, what: str = "") -> tuple | None:
        """``n`` finite floats from attribute ``attr`` of ``el`` (``default`` where it is absent)."""
        if el is None or el.get(attr) is None:
            return default
        text = el.get(attr)
        try:
            vals = tuple(float(x) for x in text.split())
        except ValueError:
            vals = ()
        if len(vals) != n or not all(math.isfinite(v) for v in vals):
            hint = (" (xacro expressions and roslaunch substitutions must be expanded first: xacro robot.urdf.xacro "
                    "> robot.urdf)" if "$" in text else " (separated by spaces, not commas)" if "," in text
                    else f" ({len(vals)} given)" if vals else "")
            raise self.error(el, f"<{el.tag} {attr}=\"{text}\"> of {what} must be {n} finite number"
                                 f"{'s' if n > 1 else ''}{hint}")
        return vals

    def number(self, el, attr: str, what: str, default=None) -> float | None:
        vals = self.numbers(el, attr, 1, None, what)
        return default if vals is None else vals[0]


def _rpy(r: float, p: float, y: float) -> np.ndarray:
    """Rz(y)·Ry(p)·Rx(r): URDF's fixed-axis roll, pitch, yaw."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _origin(f: _File, el, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(position, rotation) of the ``<origin>`` child of ``el`` (identity where absent)."""
    o = el.find("origin")
    xyz = f.numbers(o, "xyz", 3, (0.0, 0.0, 0.0), what)
    rpy = f.numbers(o, "rpy", 3, (0.0, 0.0, 0.0), what)
    return np.array(xyz), _rpy(*rpy)


#: an XML declaration (its version and encoding), wherever it stands in the first bytes of a file
_DECLARATION = re.compile(rb"<\?xml\s[^>]*?\?>")
_VERSION = re.compile(rb"""version\s*=\s*["']([^"']*)["']""")
NEWLINE = b"\n"
_ENCODING = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _lenient_text(f: _File, raw: bytes, warnings: list) -> bytes | str:
    """The file's bytes, or its text with the lexical slips that urdfdom (TinyXML) and PyBullet read repaired: an
    XML declaration after blank lines (pybullet_data's biped2d) or of version "0.0" (pybullet_data's minitaur,
    bike, ...) is blanked out, keeping every line number; NUL bytes after the root element (its humanoid.urdf)
    are dropped. One warning each; ``strict`` refuses instead."""
    repairs, text = [], raw
    tail = text.rstrip(b"\x00\r\n\t ")
    if b"\x00" in text[len(tail):]:
        repairs.append("NUL bytes after the end of the document were dropped")
        text = tail + b"\n"
    m = _DECLARATION.search(text, 0, 4096)
    before = text[:m.start()] if m else b""
    version = _VERSION.search(m.group()) if m else None
    if m and before.strip(b"\xef\xbb\xbf\r\n\t "):
        m = None                                    # text before it: lxml's own message says what is wrong
    elif m and before.lstrip(b"\xef\xbb\xbf"):
        why = f"its XML declaration stands on line {before.count(NEWLINE) + 1}, after blank lines"
    elif m and version and not re.fullmatch(rb"1\.\d+", version[1]):
        why = f"its XML declaration has version '{version[1].decode(errors='replace')}'"
    else:
        m = None
    if m:
        repairs.append(f"{why}: read as XML 1.0")
        enc = _ENCODING.search(m.group())
        blank = re.sub(rb"[^\n]", b" ", m.group())
        codec = enc[1].decode() if enc else "utf-8"
        codec = "utf-8-sig" if codec.lower().replace("-", "").replace("_", "") == "utf8" else codec
        text = (text[:m.start()] + blank + text[m.end():]).decode(codec)
    if repairs and f.strict:
        raise UrdfError(f"{f.path}: not well-formed XML: {'; '.join(repairs)} (--strict refuses what would otherwise "
                        "be repaired)")
    warnings += [f"the file: {r}, as urdfdom and PyBullet read it" for r in repairs]
    return text


def _parse(f: _File, warnings: list):
    from lxml import etree          # tooling only: the FMU never imports this module

    parser = etree.XMLParser(recover=False, remove_comments=True, resolve_entities=False, no_network=True)
    try:
        text = _lenient_text(f, f.path.read_bytes(), warnings)
        root = etree.fromstring(text, parser)
    except etree.XMLSyntaxError as exc:
        line = f":{exc.lineno}" if exc.lineno else ""
        raise UrdfError(f"{f.path}{line}: not well-formed XML ({exc.msg}); fix the file (a truncated file or an "
                        "unclosed element)") from None
    except (OSError, UnicodeDecodeError, LookupError) as exc:
        raise UrdfError(f"{f.path}: cannot be read ({exc})") from None
    if root.tag != "robot":
        raise f.error(root, f"the root element is <{root.tag}>, a URDF's is <robot>")
    for el in root.iter():
        if isinstance(el.tag, str) and (el.tag.startswith("{") and "xacro" in el.tag or el.tag.startswith("xacro:")):
            raise f.error(el, "the file holds xacro macros (<xacro:…>): expand it first, "
                              "xacro robot.urdf.xacro > robot.urdf")
    return root


def _name(f: _File, el, kind: str) -> str:
    name = el.get("name")
    if not name or not name.strip():
        raise f.error(el, f"<{kind}> has no name attribute (every {kind} needs one: "
                          f"{'joints refer to links by name' if kind == 'link' else 'its variables are named by it'})")
    return name.strip()


def _link(f: _File, el, name: str, warnings: list) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, inertia about the com in the link frame) of a ``<link>``."""
    inertial = el.find("inertial")
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    what = f"link '{name}'"
    m_el = inertial.find("mass")
    if m_el is None or m_el.get("value") is None:
        raise f.error(inertial, f"<inertial> of {what} has no <mass value=…> (give the mass in kg)")
    mass = f.number(m_el, "value", what)
    if mass < 0.0:
        raise f.error(m_el, f"<mass value=\"{m_el.get('value')}\"> of {what} must be >= 0 kg")
    i_el = inertial.find("inertia")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    if i_el is None:
        raise f.error(inertial, f"<inertial> of {what} has no <inertia ixx= ixy= ixz= iyy= iyz= izz=> (kg·m²)")
    missing = [k for k in keys if i_el.get(k) is None]
    if missing:
        raise f.error(i_el, f"<inertia> of {what} lacks {', '.join(missing)} (give all six, kg·m²)")
    xx, xy, xz, yy, yz, zz = (f.number(i_el, k, what) for k in keys)
    com, R = _origin(f, inertial, what)
    J = R @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ R.T
    defect = inertia_defect(mass, J)
    if defect:
        if f.strict:
            raise f.error(i_el, f"{what}: {defect} (--strict refuses what would otherwise be repaired)")
        fixed = nearest_physical_inertia(mass, J)
        before, after = np.linalg.eigvalsh(0.5 * (J + J.T)), np.linalg.eigvalsh(fixed)
        warnings.append(f"link '{name}': {defect.split(' (')[0]}; principal moments {_moments(before)} kg·m² "
                        f"repaired to the nearest physical {_moments(after)}")
        J = fixed
    return mass, com, J


def _moments(m) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in m) + "]"


def _joint(f: _File, el, name: str, links: set, warnings: list) -> dict:
    what = f"joint '{name}'"
    jtype = el.get("type")
    if jtype is None:
        raise f.error(el, f"{what} has no type attribute (one of {', '.join(URDF_JOINT_TYPES)})")
    if jtype == SPHERICAL and not f.strict:
        limit = "; its <limit> is not imported" if el.find("limit") is not None else ""
        warnings.append(f"{what}: type 'spherical' (PyBullet's extension of URDF) is imported as a ball joint, "
                        f"ZYX Euler coordinates ψ θ φ{limit}")
    elif jtype not in URDF_JOINT_TYPES:
        extension = " (PyBullet's 'spherical' is imported unless --strict)" if jtype == SPHERICAL else ""
        raise f.error(el, f"{what} has type {jtype!r}; a URDF joint is one of {', '.join(URDF_JOINT_TYPES)}"
                          f"{extension}")
    ends = {}
    for end in ("parent", "child"):
        e = el.find(end)
        if e is None or not e.get("link"):
            raise f.error(el, f"{what} has no <{end} link=…>")
        if e.get("link") not in links:
            raise f.error(e, f"{what}: {end} link {e.get('link')!r} is not a <link> of the file")
        ends[end] = e.get("link")
    origin, R = _origin(f, el, what)
    axis = np.array(f.numbers(el.find("axis"), "xyz", 3, (1.0, 0.0, 0.0), what))
    if jtype not in ("fixed", "floating", SPHERICAL) and not np.linalg.norm(axis) > 0.0:
        raise f.error(el.find("axis"), f"<axis xyz> of {what} must be a non-zero vector")
    lim, dyn = el.find("limit"), el.find("dynamics")
    lower = upper = None
    if jtype in ("revolute", "prismatic"):
        lower, upper = f.number(lim, "lower", what), f.number(lim, "upper", what)
        if lower is not None and upper is not None and lower > upper:
            limit = f"<limit lower=\"{lim.get('lower')}\" upper=\"{lim.get('upper')}\"> of {what}: lower exceeds upper"
            if f.strict:
                raise f.error(lim, f"{limit} (swap them for a limit; --strict refuses what would otherwise be "
                                   "repaired)")
            warnings.append(f"{limit}: imported without a limit, as PyBullet reads it (swap them for a limit)")
            lower = upper = None
    effort, velocity = f.number(lim, "effort", what), f.number(lim, "velocity", what)
    for key, v in (("effort", effort), ("velocity", velocity)):
        if v is not None and v < 0.0:
            raise f.error(lim, f"<limit {key}=\"{v:g}\"> of {what} must be >= 0")
    damping, friction = f.number(dyn, "damping", what, 0.0), f.number(dyn, "friction", what, 0.0)
    if damping < 0.0 or friction < 0.0:
        raise f.error(dyn, f"<dynamics damping friction> of {what} must be >= 0")
    if jtype == SPHERICAL and friction:
        warnings.append(f"{what}: the friction of a spherical joint is not imported")
        friction = 0.0
    mimic = el.find("mimic")
    return dict(type="ball" if jtype == SPHERICAL else jtype, parent=ends["parent"], child=ends["child"],
                origin=origin, rotation=R, axis=axis,
                lower=lower, upper=upper, effort=effort, velocity=velocity, damping=damping, friction=friction,
                mimic=None if mimic is None else mimic.get("joint"))


def _ball(j: dict) -> dict:
    """What a ball joint (URDF 'spherical') takes besides a scalar joint's fields: ZYX Euler start 0, a
    z axis (unused: the joint has three), its <dynamics damping> as a damper on the three Euler rates."""
    if j["type"] != "ball":
        return {}
    return dict(start=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0),
                spring=(0.0, float(j["damping"]), 0.0) if j["damping"] else None)


def read(path, strict: bool = False) -> dict:
    """dict(name, root, links, joints, warnings, link_ids, joint_ids) of the URDF at ``path``: links
    and joints as RobotLink / RobotJoint with distinct identifiers (``link_ids``, ``joint_ids``: the
    file's names → them), repairs and renames in ``warnings``."""
    path = Path(path)
    if not path.is_file():
        raise UrdfError(f"{path}: no such URDF file")
    f = _File(path, strict)
    warnings: list[str] = []
    robot = _parse(f, warnings)
    raw_links, raw_joints = {}, {}
    for el in robot.findall("link"):
        name = _name(f, el, "link")
        if name in raw_links:
            raise f.error(el, f"link '{name}' is defined twice (first at line {raw_links[name].sourceline})")
        raw_links[name] = el
    for el in robot.findall("joint"):
        name = _name(f, el, "joint")
        if name in raw_joints:
            raise f.error(el, f"joint '{name}' is defined twice (first at line {raw_joints[name].sourceline})")
        raw_joints[name] = el
    if not raw_links:
        raise f.error(robot, "the file has no <link>: nothing to import")
    joints = {name: _joint(f, el, name, set(raw_links), warnings) for name, el in raw_joints.items()}
    seen: dict[str, str] = {}
    for name, j in joints.items():
        if j["child"] in seen:
            raise f.error(raw_joints[name], f"link '{j['child']}' is the child of joints '{seen[j['child']]}' and "
                                            f"'{name}' (a closed loop: URDF describes trees; close loops with "
                                            "constraints in a model file, docs/mechanisms.md)")
        seen[j["child"]] = name
    roots = [n for n in raw_links if n not in seen]
    if len(roots) != 1:
        raise f.error(robot, "the links must form one tree with a single root; links that no joint moves: "
                             f"{', '.join(roots) if roots else 'none (a loop)'}")
    link_ids, joint_ids, renames = distinct_names(list(raw_links), list(raw_joints), roots[0])
    links = []
    for name, el in raw_links.items():
        mass, com, J = _link(f, el, name, warnings)
        links.append(RobotLink(link_ids[name], float(mass), tuple(map(float, com)),
                               tuple(tuple(map(float, row)) for row in J)))
    out = []
    for name, j in joints.items():
        if j["mimic"] is not None:
            warnings.append(f"joint '{name}' mimics '{j['mimic']}': imported as an independent joint")
        fields = dict(origin=tuple(map(float, j["origin"])),
                      rotation=tuple(tuple(map(float, r)) for r in j["rotation"]),
                      axis=tuple(map(float, j["axis"])), lower=j["lower"], upper=j["upper"], effort=j["effort"],
                      velocity=j["velocity"], damping=float(j["damping"]), friction=float(j["friction"]))
        out.append(RobotJoint(joint_ids[name], j["type"], link_ids[j["parent"]], link_ids[j["child"]],
                              **(fields | _ball(j))))
    name = robot.get("name")
    return dict(name=identifier(name.strip() if name and name.strip() else path.stem), root=link_ids[roots[0]],
                links=links, joints=out, warnings=renames + warnings, link_ids=link_ids, joint_ids=joint_ids)
