"""URDF files as their vendors ship them (fmu_mb.interop.urdf_read, names, checks).

Every URDF that example-robot-data ships imports, or is refused for the one reason Pinocchio
cannot simulate it either (a singular mass matrix), or because it is empty; each fixed-base
robot's free fall from the FMU start pose equals Pinocchio's ABA of the same file (loaded by
urdfdom, with the same repaired inertias) integrated by scipy. The same for the robots of a
second collection, PyBullet's pybullet_data (its lexical slips, inverted limits and spherical
joints as PyBullet reads them), whose other files (objects: nothing moves) are refused in one
line. Then one test per class of repair and refusal, each message one line naming the file,
the line and the element."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pybullet_data
import pytest
from lxml import etree
from scipy.integrate import solve_ivp

from fmu_mb.interop import urdf as U
from fmu_mb.interop.names import distinct_names
from fmu_mb.model import compile_mechanism
from fmu_mb.model.inertia import inertia_defect, nearest_physical_inertia
from fmu_mb.simulator import Simulator

from .test_urdf import robots_dir

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p.relative_to(robots_dir()).as_posix() for p in robots_dir().rglob("*.urdf"))
#: the files that cannot import, and why (asserted: no other file is refused, each for this reason)
REFUSED = {"icub_description/robots/icub.urdf": "the mass matrix is singular",           # neck_yaw/neck_roll
           "romeo_description/urdf/romeo.urdf": "which have no mass: its equation of motion is singular",
           "romeo_description/urdf/romeo_laas_small.urdf": "which have no mass: its equation of motion is singular",
           "ur_description/urdf/ur3.urdf": "the file has no <link>"}              # an empty <robot/>
#: single rigid bodies (drones): nothing moves on a fixed base; they import on a free one
FREE_ONLY = ("hector_description/robots/quadrotor_base.urdf", "iris_description/robots/iris_simple.urdf")
FREE_FALL = 0.1         # s
TOL = 1e-9              # rad (m): measured ≤ 9.9e-12 (alex_psyonic_hands, 39 DOF), most ≤ 1e-13

PB = Path(pybullet_data.getDataPath())
#: a moving joint (PyBullet's 'spherical' included): the robots of pybullet_data; its other files are objects
MOVING = re.compile(rb"""type\s*=\s*["'](revolute|continuous|prismatic|spherical)["']""")
PB_ALL = sorted(p.relative_to(PB).as_posix() for p in PB.rglob("*.urdf"))
PB_ROBOTS = [rel for rel in PB_ALL if MOVING.search((PB / rel).read_bytes())]
#: the robots of pybullet_data that cannot import (urdfdom refuses each too), and the message's point
PB_REFUSED = {"bicycle/bike.urdf": "must be 3 finite numbers (separated by spaces, not commas)",  # xyz="0.07, 0, -0.69"
              "biped/biped2d_pybullet.urdf": "<limit lower=\"-1.57.\"> of joint 'torso_to_rightleg' must be 1 finite",
              "husky/husky.urdf": "roslaunch substitutions must be expanded first",     # $(optenv HUSKY_IMU_XYZ ...)
              "quadruped/microtaur/microtaur.urdf": "must be 3 finite numbers (4 given)"}        # rpy="-3.14 1.57 0 0"


def _reference_xml(path: Path):
    """The file's element tree as urdfdom reads it: without its XML declaration (PyBullet's files give version
    "0.0" or put it after blank lines) and without the NUL bytes after the document (its humanoid.urdf)."""
    raw = re.sub(rb"<\?xml[^>]*\?>", b"", path.read_bytes(), count=1).rstrip(b"\x00\r\n\t ")
    return etree.fromstring(raw, etree.XMLParser(remove_comments=True))


def _expand_spherical(root) -> dict:
    """Each PyBullet 'spherical' joint → revolute z, y, x joints through two massless links, the three axes of
    ZYX Euler angles ψ θ φ (R = Rz(ψ)·Ry(θ)·Rx(φ)): Pinocchio's URDF parser knows no spherical type. Returns
    {new joint: (the spherical joint, its coordinate 0, 1, 2)}."""
    euler = {}
    for j in root.findall("joint"):
        if j.get("type") != "spherical":
            continue
        name, parent, child = j.get("name"), j.find("parent").get("link"), j.find("child").get("link")
        chain = [parent, f"{name}__z", f"{name}__y", child]
        for link in chain[1:3]:
            etree.SubElement(root, "link", name=link)
        for k, (suffix, axis) in enumerate((("psi", "0 0 1"), ("theta", "0 1 0"), ("phi", "1 0 0"))):
            el = etree.SubElement(root, "joint", name=f"{name}__{suffix}", type="revolute")
            euler[el.get("name")] = (name, k)
            etree.SubElement(el, "parent", link=chain[k])
            etree.SubElement(el, "child", link=chain[k + 1])
            if k == 0 and j.find("origin") is not None:
                el.append(j.find("origin"))
            etree.SubElement(el, "axis", xyz=axis)
            etree.SubElement(el, "limit", lower="-10", upper="10", effort="0", velocity="0")
        root.remove(j)
    return euler


def _pinocchio(path: Path, data: dict):
    """Pinocchio's model of the file, the links our reader repaired given its repaired inertia, and the joints
    that stand for a spherical joint's coordinates (_expand_spherical)."""
    root = _reference_xml(path)
    euler = _expand_spherical(root)
    by = {lk.name: lk for lk in data["links"]}
    for el in root.findall("link"):
        raw = el.get("name")
        if not any(w.startswith(f"link '{raw}':") and "repaired" in w for w in data["warnings"]):
            continue
        lk, inertial = by[data["link_ids"][raw]], el.find("inertial")
        for child in list(inertial):
            inertial.remove(child)
        J = np.asarray(lk.inertia)          # (repr of a Python float: urdfdom skips an inertial it cannot parse)
        etree.SubElement(inertial, "origin", xyz=" ".join(repr(float(c)) for c in lk.com), rpy="0 0 0")
        etree.SubElement(inertial, "mass", value=repr(float(lk.mass)))
        etree.SubElement(inertial, "inertia", **{k: repr(float(J[i, j])) for k, (i, j) in
                                                 dict(ixx=(0, 0), ixy=(0, 1), ixz=(0, 2), iyy=(1, 1), iyz=(1, 2),
                                                      izz=(2, 2)).items()})
    pm = pin.buildModelFromXML(etree.tostring(root).decode())
    pm.gravity = pin.Motion(np.r_[0.0, 0.0, -9.81, 0.0, 0.0, 0.0])
    return pm, euler


@pytest.mark.parametrize("rel", FILES)
def test_shipped_urdf_imports_and_falls_as_pinocchio(rel):
    """Import (the model file ``fmu-mb build`` writes), then 0.1 s of free fall from the start
    pose, no friction, no limits, RK4 at 0.25 ms, against ABA (continuous joints: Pinocchio's
    cos/sin coordinates) integrated by DOP853 at rtol = atol = 1e-13."""
    path = robots_dir() / rel
    if rel in REFUSED:
        with pytest.raises(U.UrdfError, match=REFUSED[rel]) as err:
            U.model_source(path)
        assert "\n" not in str(err.value) and str(path) in str(err.value)
        return
    if rel in FREE_ONLY:
        with pytest.raises(U.UrdfError, match="no moving joint"):
            U.model_source(path)
        U.model_source(path, base="free")
        return
    _falls_as_pinocchio(path)


@pytest.mark.parametrize("rel", PB_ROBOTS)
def test_pybullet_robot_imports_and_falls_as_pinocchio(rel):
    """pybullet_data's robots (40 of 44 import; the 4 others are refused as urdfdom refuses them) fall as
    Pinocchio's ABA of the same file; its 'spherical' joints are a z-y-x chain of revolute joints there."""
    path = PB / rel
    if rel in PB_REFUSED:
        with pytest.raises(U.UrdfError) as err:
            U.model_source(path)
        assert PB_REFUSED[rel] in str(err.value) and "\n" not in str(err.value), err.value
        with pytest.raises(ValueError, match="does not contain a valid URDF model"):
            pin.buildModelFromUrdf(str(path))                       # urdfdom refuses the file as well
        return
    _falls_as_pinocchio(path)


def test_pybullet_objects_are_refused_in_one_line_as_nothing_to_simulate():
    """The ~1050 files of pybullet_data without a moving joint (cubes, tables, plane, a deformable torus without
    a <link>): each refused in one line, none with another reason (their lexical slips pass)."""
    others = [rel for rel in PB_ALL if rel not in PB_ROBOTS]
    reasons = {}
    for rel in others:
        with pytest.raises(U.UrdfError) as err:
            U.model_source(PB / rel)
        msg = str(err.value)
        assert "\n" not in msg and msg.startswith(str(PB / rel)), msg
        reasons[rel] = "no moving joint" if "no moving joint" in msg else "no <link>" if "no <link>" in msg else msg
    assert len(others) > 1000 and set(reasons.values()) == {"no moving joint", "no <link>"}, \
        [m for m in reasons.values() if not m.startswith("no ")][:3]


def _falls_as_pinocchio(path: Path) -> None:
    U.model_source(path)                                             # imports, as fmu-mb build does
    data = U.read(path)
    cm = compile_mechanism(U.mechanism(path, friction="none", limits="none"))
    sim = Simulator(cm, h=2.5e-4, method="rk4")
    sim.initialize()
    q0, v0, n = sim.q.copy(), sim.qd.copy(), len(sim.q)
    pm, euler = _pinocchio(path, data)
    pd = pm.createData()
    assert pm.nv == n
    spans = [(pm.joints[j].idx_q, pm.joints[j].nq, pm.joints[j].idx_v, _dof(cm, data, euler, pm.names[j]))
             for j in range(1, pm.njoints)]
    P = np.zeros((n, n))
    for _, _, iv, d in spans:
        P[iv, d] = 1.0

    def pin_q(q):
        out = np.zeros(pm.nq)
        for iq, nq, _, d in spans:
            out[iq:iq + nq] = (np.cos(q[d]), np.sin(q[d])) if nq == 2 else q[d]
        return out

    def rhs(_, y):
        return np.r_[y[n:], P.T @ pin.aba(pm, pd, pin_q(y[:n]), P @ y[n:], np.zeros(n))]

    for _ in range(40):
        sim.step(FREE_FALL / 40)
    ref = solve_ivp(rhs, (0.0, FREE_FALL), np.r_[q0, v0], method="DOP853", rtol=1e-13, atol=1e-13)
    assert ref.success
    err, moved = np.max(np.abs(sim.q - ref.y[:n, -1])), np.max(np.abs(ref.y[:n, -1] - q0))
    # to TOL, and to 1e-5 of the fall itself (at rest, hanging pendulums: round-off; racecar's wheels 3.2e-6 rad,
    # error 2.5e-16; measured worst ratio 7.4e-7: minitaur_derpy, 1.8e-8 rad fall, 1.4e-14 error)
    assert err <= TOL and err <= 1e-5 * moved + 1e-13, (err, moved)
    _tool_frames_equal_pinocchios(cm, sim, pm, pd, pin_q, P, data)


def _dof(cm, data: dict, euler: dict, pin_joint: str) -> int:
    """Our coordinate of a Pinocchio joint (or of one of an expanded spherical joint's three: ψ θ φ)."""
    name, k = euler.get(pin_joint, (pin_joint, 0))
    return cm.joint(data["joint_ids"][name]).dofadr + k


def _tool_frames_equal_pinocchios(cm, sim, pm, pd, pin_q, P, data):
    """Every leaf link is a tool frame (a point of its name): its position, orientation, velocity and
    angular velocity outputs equal Pinocchio's frame placement and LOCAL_WORLD_ALIGNED velocity."""
    raw = {ours: theirs for theirs, ours in data["link_ids"].items()}
    assert cm.points and all(name in raw for name in cm.points)
    sources = [(key, name, k) for name in cm.points for key, n in (("point", 3), ("point_R", 9), ("point_v", 3),
                                                                 ("point_w", 3)) for k in range(n)]
    sim.evaluate()
    got = sim.read(sources).reshape(len(cm.points), 18)
    q, v = pin_q(sim.q), P @ sim.qd
    pin.forwardKinematics(pm, pd, q, v)
    pin.updateFramePlacements(pm, pd)
    for row, name in zip(got, cm.points):
        fid = pm.getFrameId(raw[name], pin.BODY)
        M = pd.oMf[fid]
        vel = pin.getFrameVelocity(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
        ref = np.r_[M.translation, M.rotation.ravel(), vel.linear, vel.angular]
        assert np.max(np.abs(row - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref))), name


# ----------------------------------------------------------------------------- repairs
def test_nearest_physical_inertia_is_the_projection_onto_the_triangle_boundary():
    """The issue's examples, and a rotated tensor (the principal axes are kept)."""
    for before, after in (([0.001, 0.001, 0.01], [0.011 / 3, 0.011 / 3, 0.022 / 3]),
                          ([-2.5e-22, 3.4e-23, 3.0e-6], [1e-6, 1e-6, 2e-6]),
                          ([-3.5e-8, 1e-6, 1.2e-6], [0.2e-6 / 3, 1e-6 + 0.2e-6 / 3, 1.2e-6 - 0.2e-6 / 3])):
        assert inertia_defect(1.0, np.diag(before))
        J = nearest_physical_inertia(1.0, np.diag(before))
        assert np.allclose(np.linalg.eigvalsh(J), after, rtol=1e-12, atol=1e-22)
        assert inertia_defect(1.0, J) is None
    R = np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))[0]
    J = nearest_physical_inertia(2.0, R @ np.diag([0.001, 0.001, 0.01]) @ R.T)
    assert np.allclose(R.T @ J @ R, np.diag([0.011 / 3, 0.011 / 3, 0.022 / 3]), atol=1e-15)
    assert not nearest_physical_inertia(0.0, np.eye(3)).any()             # massless: no inertia


ARM = """<robot name="arm">
  <link name="{root}"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="{link}"><inertial><origin xyz="0 0 -0.2"/><mass value="{mass}"/>
    <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="{joint}" type="revolute"><parent link="{root}"/><child link="{link}"/><origin xyz="0 0 1"/>
    <axis xyz="1 0 0"/><limit lower="{lower}" upper="{upper}" effort="10" velocity="2"/></joint>
</robot>"""
GOOD = dict(root="base", link="upper", joint="shoulder", mass=1.0, ixx=0.02, iyy=0.02, izz=0.001, lower=-1, upper=1)


def arm(tmp_path, name="arm.urdf", **changes) -> Path:
    path = tmp_path / name
    path.write_text(ARM.format(**{**GOOD, **changes}))
    return path


@pytest.mark.parametrize("case,changes,warning", [
    ("triangle", dict(ixx=0.001, iyy=0.001, izz=0.01), "violate the triangle inequality"),
    ("negative round-off", dict(ixx=0.02, iyy=0.02, izz=-1e-9), "positive semi-definite"),
])
def test_unphysical_inertia_is_repaired_with_one_warning_or_refused_when_strict(tmp_path, case, changes, warning):
    path = arm(tmp_path, **changes)
    name, src, warnings = U.model_source(path)
    repaired = [w for w in warnings if "repaired" in w]
    assert len(repaired) == 1 and "link 'upper'" in repaired[0] and warning in repaired[0]
    assert "\n" not in repaired[0] and "kg·m²" in repaired[0]
    link = next(lk for lk in U.read(path)["links"] if lk.name == "upper")
    assert inertia_defect(1.0, link.inertia) is None
    with pytest.raises(U.UrdfError, match=f"{path}:5: link 'upper': .*{warning}.*--strict"):
        U.model_source(path, strict=True)


def test_massless_link_with_inertia_loses_the_inertia(tmp_path):
    """bolt.urdf's feet: mass 0, inertia 5e-7 kg·m² (on a fixed joint below a link with mass)."""
    text = ARM.format(**GOOD).replace("</robot>", """<link name="foot"><inertial><mass value="0"/>
      <inertia ixx="5.7e-7" iyy="8.4e-7" izz="5.3e-7" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="ankle" type="fixed"><parent link="upper"/><child link="foot"/></joint></robot>""")
    path = tmp_path / "foot.urdf"
    path.write_text(text)
    _, _, warnings = U.model_source(path)
    assert any("link 'foot': a massless body cannot have rotational inertia" in w and "[0, 0, 0]" in w
               for w in warnings)


def test_link_and_joint_of_one_name_and_reserved_words_get_distinct_identifiers(tmp_path):
    """ANYmal C's ``LF_HAA`` is a link and a joint: the joint keeps the name (its variables
    ``LF_HAA.q``, ``LF_HAA.tau_drive``), the link becomes ``LF_HAA_link``; a link named ``ground``
    becomes ``ground_link``; a joint named ``solver`` becomes ``solver_joint``."""
    path = robots_dir() / "anymal_c_simple_description/urdf/anymal.urdf"
    name, src, warnings = U.model_source(path)
    data = U.read(path)
    assert data["link_ids"]["LF_HAA"] == "LF_HAA_link" and data["joint_ids"]["LF_HAA"] == "LF_HAA"
    assert sum("get the suffix _link" in w for w in warnings) == 1
    assert "LF_HAA.q" in compile_mechanism(U.mechanism(path)).dof_names
    p = arm(tmp_path, root="ground", joint="solver", link="model")
    _, _, warnings = U.model_source(p)
    assert [w for w in warnings if "renamed" in w] == [
        "link 'ground' is renamed 'ground_link' ('ground' is reserved: the fixed world frame)",
        "link 'model' is renamed 'model_link' ('model' is reserved: a name fmu_mb uses itself)",
        "joint 'solver' is renamed 'solver_joint' ('solver' is reserved: a name fmu_mb uses itself)"]
    cm = compile_mechanism(U.mechanism(p))
    assert cm.dof_names == ["solver_joint.q"]
    links, joints, _ = distinct_names(["a-b", "a_b", "a"], ["a", "c"], root="a-b")
    assert (links, joints) == ({"a-b": "a_b", "a_b": "a_b_link", "a": "a_link"}, {"a": "a", "c": "c"})


def test_robot_without_a_name_is_named_after_its_file(tmp_path):
    """example-robot-data's ur3.urdf has ``<robot>`` without a name (yourdfpy: KeyError: 'name')."""
    path = tmp_path / "my-arm.urdf"
    path.write_text(ARM.format(**GOOD).replace('<robot name="arm">', "<robot>"))
    assert U.model_source(path)[0] == "my_arm"


#: the lexical slips of pybullet_data's files (PyBullet's and urdfdom's parsers read them; lxml alone does not)
SLIPS = {"declaration of version 0.0": (lambda t: '<?xml version="0.0" ?>\n' + t,
                                        "its XML declaration has version '0.0': read as XML 1.0"),
         "declaration after blank lines": (lambda t: '\n\n<?xml version="1.0" encoding="utf-8"?>\n' + t,
                                           "its XML declaration stands on line 3, after blank lines: read as XML 1.0"),
         "NUL bytes after the document": (lambda t: t + "\n\x00\x00",
                                          "NUL bytes after the end of the document were dropped")}


@pytest.mark.parametrize("slip", SLIPS)
def test_lexical_slips_read_as_urdfdom_reads_them_keeping_line_numbers_or_refused_when_strict(tmp_path, slip):
    edit, warning = SLIPS[slip]
    path = tmp_path / "arm.urdf"
    path.write_text(edit(ARM.format(**GOOD)), encoding="utf-8")
    _, _, warnings = U.model_source(path)
    assert [w for w in warnings if w.startswith("the file: ")] == [f"the file: {warning}, as urdfdom and PyBullet "
                                                                   "read it"]
    assert U.read(path)["joints"][0].upper == 1.0
    with pytest.raises(U.UrdfError, match=f"{path}: not well-formed XML: .*--strict"):
        U.model_source(path, strict=True)
    shift = edit("").count("\n") if slip != "NUL bytes after the document" else 0
    path.write_text(edit(ARM.format(**GOOD).replace('upper="1"', 'upper="x"')), encoding="utf-8")
    with pytest.raises(U.UrdfError, match=f"{path}:{7 + shift}: <limit upper=\"x\">"):   # the line in the file
        U.model_source(path)


def test_declared_encoding_is_honoured(tmp_path):
    """A latin-1 file declaring so (the joint's name 'épaule' in one byte per letter) behind a 0.0 declaration."""
    path = tmp_path / "arm.urdf"
    path.write_bytes(('<?xml version="0.0" encoding="ISO-8859-1"?>\n' + ARM.format(**GOOD | {"joint": "épaule"}))
                     .encode("latin-1"))
    assert U.read(path)["joint_ids"] == {"épaule": U.read(path)["joints"][0].name}


def test_inverted_limits_mean_no_limit_as_pybullet_reads_them_or_are_refused_when_strict(tmp_path):
    """PyBullet: a limit whose upper is below its lower is ignored (pybullet_data's cube_no_rotation: 1 -1)."""
    path = arm(tmp_path, lower=1.5, upper=-1.5)
    _, _, warnings = U.model_source(path)
    assert [w for w in warnings if "limit" in w] == [
        "<limit lower=\"1.5\" upper=\"-1.5\"> of joint 'shoulder': lower exceeds upper: imported without a limit, "
        "as PyBullet reads it (swap them for a limit)"]
    j = U.read(path)["joints"][0]
    assert (j.lower, j.upper, j.effort) == (None, None, 10.0)
    cm = compile_mechanism(U.mechanism(path))
    assert cm.q0[cm.joint("shoulder").dofadr] == 0.0               # no limit: the start is 0, no stop
    with pytest.raises(U.UrdfError, match=f"{path}:7: .*lower exceeds upper \\(swap them for a limit; --strict"):
        U.model_source(path, strict=True)


def test_spherical_joint_is_a_ball_joint_of_zyx_euler_coordinates_or_refused_when_strict(tmp_path):
    """PyBullet's 'spherical' type (its humanoid.urdf): three coordinates, its damping on their rates, its
    friction and limit not imported (each said); the dynamics is checked against Pinocchio on pybullet_data's
    files (test_pybullet_robot_imports_and_falls_as_pinocchio)."""
    path = tmp_path / "arm.urdf"
    path.write_text(ARM.format(**GOOD).replace('type="revolute"', 'type="spherical"').replace(
        "</joint>", '<dynamics damping="0.5" friction="0.2"/></joint>'))
    _, _, warnings = U.model_source(path)
    assert [w for w in warnings if "shoulder" in w] == [
        "joint 'shoulder': type 'spherical' (PyBullet's extension of URDF) is imported as a ball joint, ZYX Euler "
        "coordinates ψ θ φ; its <limit> is not imported", "joint 'shoulder': the friction of a spherical joint is "
        "not imported"]
    j = U.read(path)["joints"][0]
    assert (j.type, j.start, j.spring, j.friction, j.lower) == ("ball", (0.0, 0.0, 0.0), (0.0, 0.5, 0.0), 0.0, None)
    cm = compile_mechanism(U.mechanism(path))
    assert cm.dof_names == ["shoulder.psi", "shoulder.theta", "shoulder.phi"]
    with pytest.raises(U.UrdfError, match=f"{path}:6: joint 'shoulder' has type 'spherical'.*imported unless --strict"):
        U.model_source(path, strict=True)


# ----------------------------------------------------------------------------- refusals
REFUSALS = {
    "unclosed <inertial>": (lambda t: t.replace("</inertial></link>\n  <joint", "</link>\n  <joint", 1),
                            ":5: not well-formed XML"),
    "truncated file": (lambda t: t[:len(t) // 2], "not well-formed XML"),
    "rpy of 4 numbers": (lambda t: t.replace('<origin xyz="0 0 1"/>', '<origin xyz="0 0 1" rpy="0 1.57 0 0"/>'),
                         ":6: <origin rpy=\"0 1.57 0 0\"> of joint 'shoulder' must be 3 finite numbers (4 given)"),
    "commas": (lambda t: t.replace('<origin xyz="0 0 1"/>', '<origin xyz="0, 0, 1"/>'),
               "must be 3 finite numbers (separated by spaces, not commas)"),
    "unknown joint type": (lambda t: t.replace('type="revolute"', 'type="ball"'),
                           "joint 'shoulder' has type 'ball'; a URDF joint is one of revolute, continuous"),
    "non-finite limit": (lambda t: t.replace('upper="1"', 'upper="nan"'),
                         "<limit upper=\"nan\"> of joint 'shoulder' must be 1 finite number"),
    "xacro expression": (lambda t: t.replace('upper="1"', 'upper="${pi/2}"'), "xacro expressions and roslaunch"),
    "link without a name": (lambda t: t.replace('<link name="upper">', "<link>"), ":4: <link> has no name attribute"),
    "unknown parent": (lambda t: t.replace('<parent link="base"/>', '<parent link="bsae"/>'),
                       "joint 'shoulder': parent link 'bsae' is not a <link> of the file"),
    "no moving joint": (lambda t: t.replace('type="revolute"', 'type="fixed"'), "no moving joint"),
    "not a robot": (lambda t: t.replace("<robot", "<sdf").replace("</robot>", "</sdf>"),
                    "the root element is <sdf>, a URDF's is <robot>"),
    "negative mass": (lambda t: t.replace('value="1.0"', 'value="-1"'), "must be >= 0 kg"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_malformed_urdf_is_refused_in_one_line_exit_2_no_fmu(tmp_path, case):
    edit, expect = REFUSALS[case]
    path = tmp_path / "arm.urdf"
    path.write_text(edit(ARM.format(**GOOD)))
    with pytest.raises(U.UrdfError) as err:
        U.model_source(path)
    assert expect in str(err.value) and str(err.value).startswith(str(path)) and "\n" not in str(err.value)
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(path), "--out", str(tmp_path / "dist"),
                        "--no-controller", "--no-cross-check"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and expect in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.rglob("*.fmu")) and not list(tmp_path.rglob("*.py"))
