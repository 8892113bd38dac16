"""URDF import (fmu_mb.interop.urdf, fmu_mb.model.robot) against Pinocchio's own URDF parser.

The robots are example-robot-data's files (PyPI ``example-robot-data``): UR5, Panda, Talos's left
arm (fixed base) and Solo12 (floating base, carried by the papers' 6-DOF base joint, which
Pinocchio gets as the same Translation + SphericalZYX composite root joint). Pinocchio reads the
file with urdfdom, independently of yourdfpy and of our compiler. Coordinates are matched by
joint name. Tolerance 1e-9 relative (measured: ≤ 8.2e-16)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from fmu_mb import algorithms as alg
from fmu_mb.interop import urdf as U
from fmu_mb.model import compile_mechanism, make_data

ROOT = Path(__file__).resolve().parents[1]


def robots_dir() -> Path:
    import cmeel
    return Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix" / "share" / "example-robot-data" / "robots"


ROBOTS = {"ur5": ("ur_description/urdf/ur5_robot.urdf", "fixed"),
          "panda": ("panda_description/urdf/panda.urdf", "fixed"),
          "talos_left_arm": ("talos_data/robots/talos_left_arm.urdf", "fixed"),
          "solo12": ("solo_description/robots/solo12.urdf", "free")}
REL = 1e-9


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


@pytest.mark.parametrize("robot", ROBOTS)
def test_imported_robot_matches_pinocchio(robot):
    """M(q), b(q, q̇), τ = ID(q, q̇, q̈) and every moving joint's reaction wrench (joint frame)
    at three random states."""
    f, base = ROBOTS[robot]
    path = robots_dir() / f
    cm = compile_mechanism(U.mechanism(path, base=base, friction="none"))
    model, data = cm.model, make_data(cm.model)
    if base == "free":
        root = pin.JointModelComposite()
        root.addJoint(pin.JointModelTranslation())
        root.addJoint(pin.JointModelSphericalZYX())
        pm = pin.buildModelFromUrdf(str(path), root)
    else:
        pm = pin.buildModelFromUrdf(str(path))
    pm.gravity = pin.Motion(np.r_[0.0, 0.0, -9.81, 0.0, 0.0, 0.0])
    pd = pm.createData()
    n = len(cm.dof_names)
    assert pm.nv == pm.nq == n
    perm, joints = np.zeros(n, int), {}
    for jid in range(1, pm.njoints):
        name = pm.names[jid]
        j = cm.joint("floating_base" if name == "root_joint" else U.identifier(name))
        joints[jid] = j
        perm[pm.joints[jid].idx_v:pm.joints[jid].idx_v + pm.joints[jid].nv] = j.dofadr + np.arange(pm.joints[jid].nv)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, v, a = rng.uniform(-1, 1, n), rng.normal(0, 1, n), rng.normal(0, 1, n)
        M = pin.crba(pm, pd, q[perm])
        M = np.triu(M) + np.triu(M, 1).T
        assert rel(alg.crba(model, data, q)[np.ix_(perm, perm)], M) <= REL
        assert rel(alg.nonlinear_effects(model, data, q, v)[perm], pin.rnea(pm, pd, q[perm], v[perm], 0 * v)) <= REL
        tau_ref = pin.rnea(pm, pd, q[perm], v[perm], a[perm])
        assert rel(alg.rnea(model, data, q, v, a)[perm], tau_ref) <= REL
        mine = np.array([np.r_[data.fF[j.body], data.fM[j.body]] for j in joints.values()])
        assert rel(mine, np.array([pd.f[jid].vector for jid in joints])) <= REL


PENDULUM = """<robot name="pendulum-1">
  <link name="stand"><inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="rod"><inertial><origin xyz="0 0 -0.25" rpy="0.3 0 0"/><mass value="1.0"/>
    <inertia ixx="0.021" iyy="0.021" izz="0.0005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="stand"/><child link="rod"/>
    <origin xyz="0 0 1" rpy="0 0 0"/><axis xyz="1 0 0"/><dynamics damping="{c}" friction="{F}"/></joint>
</robot>"""


def test_urdf_dynamics_friction_and_damping_are_the_joints_friction_torque(tmp_path):
    """<dynamics damping="c" friction="F"> → t_f = F·sgn_ε(q̇) + c·q̇ (ε = 1e-3 rad/s), the torque
    the simulation reports, sample by sample over a swing that passes through rest."""
    from fmu_mb.model.robot import V_EPS
    from fmu_mb.simulator import Simulator
    path = tmp_path / "pendulum.urdf"
    c, F = 0.05, 0.2
    path.write_text(PENDULUM.format(c=c, F=F))
    data = U.read(path)
    assert data["name"] == "pendulum_1" and data["root"] == "stand"
    mech = U.mechanism(path)
    mech.joint("hinge").q0 = [1.0]
    sim = Simulator(compile_mechanism(mech), step_size=1e-3, method="ros2")
    sim.initialize()
    k = sim.cm.joint("hinge").dofadr
    seen = []
    for _ in range(150):
        sim.step(0.01)
        sim.evaluate()                                  # the pipeline at the step's end state
        v = sim.qd[k]
        seen.append(v)
        assert sim.data.tau_fric[k] == pytest.approx(F * v / np.hypot(v, V_EPS) + c * v, rel=1e-9, abs=1e-12)
    assert min(seen) < -0.5 and max(seen) > 0.5      # it swung both ways


BROKEN = {
    "planar joint": ('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/><inertia ixx="1" '
                     'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j" type="planar">'
                     '<parent link="a"/><child link="b"/></joint></robot>', "joint 'j' has type 'planar'"),
    "closed loop": ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
                    '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>'
                    '<joint name="j2" type="fixed"><parent link="a"/><child link="c"/></joint>'
                    '<joint name="j3" type="fixed"><parent link="c"/><child link="b"/></joint></robot>',
                    "child of more than one joint"),
    "massless moving link": ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
                             '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
                             '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>',
                             "joint 'j' moves link 'b'"),
    "not xml": ("<robot name='r'><link", "not a readable URDF"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_broken_urdf_files_are_refused_naming_the_element(tmp_path, case):
    text, expect = BROKEN[case]
    path = tmp_path / "broken.urdf"
    path.write_text(text)
    with pytest.raises(ValueError, match=expect.replace("(", r"\(")):
        compile_mechanism(U.mechanism(path))
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(path), "--out", str(tmp_path / "dist"),
                        "--no-controller", "--no-cross-check", "--no-native"], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr, r.stderr
    assert expect in r.stderr, r.stderr


@pytest.mark.parametrize("robot,base", [("ur5", "fixed"), ("solo12", "sprung")])
def test_fmu_from_urdf_validates_and_runs_a_second_in_fmpy(tmp_path, robot, base):
    """``fmu-mb build robot.urdf``: a valid FMU (the build validates it with FMPy) that runs 1 s
    with drives of a tenth of the effort limits (at most 0.2 N·m), every output finite."""
    from fmpy import read_model_description, simulate_fmu
    path = robots_dir() / ROBOTS[robot][0]
    out = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(path), "--base", base, "--name", robot,
                        "--out", str(out), "--no-controller", "--no-cross-check"], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "valid" in r.stdout and (out / "models" / f"{robot}.py").is_file()
    fmu = out / f"{robot}.fmu"
    md = read_model_description(str(fmu))
    drives = {v.name: 0.0 for v in md.modelVariables if v.name.endswith(".tau_drive")}
    assert drives
    limits = {j.name: j.effort for j in U.read(path)["joints"] if j.effort}
    start = {n: 0.1 * min(limits.get(n.split(".")[0], 1.0), 2.0) for n in drives}   # (Solo's file says 1000)
    res = simulate_fmu(str(fmu), stop_time=1.0, start_values=start)
    assert res["time"][-1] == pytest.approx(1.0)
    for name in res.dtype.names:
        assert np.all(np.isfinite(res[name])), name
