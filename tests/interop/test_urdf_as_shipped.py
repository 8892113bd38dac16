"""URDF files as their vendors ship them (fmu_mb.interop.urdf_read, names, checks).

Every URDF that example-robot-data ships imports, or is refused for the one reason Pinocchio
cannot simulate it either (a singular mass matrix), or because it is empty; each fixed-base
robot's free fall from the FMU start pose equals Pinocchio's ABA of the same file (loaded by
urdfdom, with the same repaired inertias) integrated by scipy. Then one test per class of
repair and refusal, each message one line naming the file, the line and the element."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
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


def _pinocchio(path: Path, data: dict):
    """Pinocchio's model of the file, the links our reader repaired given its repaired inertia."""
    root = etree.parse(str(path)).getroot()
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
    return pm


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
    U.model_source(path)                                             # imports, as fmu-mb build does
    data = U.read(path)
    cm = compile_mechanism(U.mechanism(path, friction="none", limits="none"))
    sim = Simulator(cm, h=2.5e-4, method="rk4")
    sim.initialize()
    q0, v0, n = sim.q.copy(), sim.qd.copy(), len(sim.q)
    pm = _pinocchio(path, data)
    pd = pm.createData()
    assert pm.nv == n
    spans = [(pm.joints[j].idx_q, pm.joints[j].nq, pm.joints[j].idx_v, cm.joint(data["joint_ids"][pm.names[j]]).dofadr)
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
    assert np.max(np.abs(sim.q - ref.y[:n, -1])) <= TOL
    moved = np.max(np.abs(ref.y[:n, -1] - q0))
    assert moved > 1e-5 or moved < 1e-12              # it fell (the hanging pendulums start at rest: they stay)
    _tool_frames_equal_pinocchios(cm, sim, pm, pd, pin_q, P, data)


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


# ----------------------------------------------------------------------------- refusals
REFUSALS = {
    "unclosed <inertial>": (lambda t: t.replace("</inertial></link>\n  <joint", "</link>\n  <joint", 1),
                            ":5: not well-formed XML"),
    "truncated file": (lambda t: t[:len(t) // 2], "not well-formed XML"),
    "inverted limits": (lambda t: t.replace('lower="-1" upper="1"', 'lower="1.5" upper="-1.5"'),
                        ":7: <limit lower=\"1.5\" upper=\"-1.5\"> of joint 'shoulder': lower exceeds upper"),
    "non-finite limit": (lambda t: t.replace('upper="1"', 'upper="nan"'),
                         "<limit upper=\"nan\"> of joint 'shoulder' must be 1 finite number"),
    "xacro expression": (lambda t: t.replace('upper="1"', 'upper="${pi/2}"'), "xacro expressions must be expanded"),
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
