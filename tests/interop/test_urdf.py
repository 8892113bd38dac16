"""URDF import (fmu_mb.interop.urdf, fmu_mb.model.robot) against Pinocchio's own URDF parser.

The robots are example-robot-data's files (PyPI ``example-robot-data``): UR5, Panda, Talos's left
arm (fixed base) and Solo12 (floating base, carried by the papers' 6-DOF base joint, which
Pinocchio gets as the same Translation + SphericalZYX composite root joint). Pinocchio reads the
file with urdfdom, independently of our reader (fmu_mb.interop.urdf_read) and compiler. Coordinates are matched by
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

ROOT = Path(__file__).resolve().parents[2]


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
    sim = Simulator(compile_mechanism(mech), h=1e-3, method="ros2")
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
                    "is the child of joints"),
    "massless moving link": ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
                             '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
                             '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>',
                             "joint 'j' moves link 'b'"),
    "not xml": ("<robot name='r'><link", "not well-formed XML"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_broken_urdf_files_are_refused_naming_the_element(tmp_path, case):
    text, expect = BROKEN[case]
    path = tmp_path / "broken.urdf"
    path.write_text(text)
    with pytest.raises(ValueError, match=expect.replace("(", r"\(")):
        compile_mechanism(U.mechanism(path))
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(path), "--out", str(tmp_path / "dist"),
                        "--no-controller", "--no-cross-check"], capture_output=True, text=True,
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


# ----------------------------------------------------------------------------- flexible links, options
CANTILEVER = """<?xml version="1.0"?>
<robot name="cantilever">
  <link name="world"/>
  <link name="arm">
    <inertial><origin xyz="0.15 0 0.2" rpy="0 0 0"/><mass value="1.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <link name="tip">
    <inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="0.5"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="world"/><child link="arm"/>
    <origin xyz="0 0 1.0" rpy="0 0.9272952180016122 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="3"/>
  </joint>
  <joint name="tip_joint" type="fixed">
    <parent link="arm"/><child link="tip"/>
    <origin xyz="0.3 0 0.4" rpy="0 0 0"/>
  </joint>
</robot>
"""


def build_cli(tmp_path, urdf, *args):
    return subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(urdf), "--out", str(tmp_path / "dist"),
                           "--no-controller", "--no-cross-check", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)


def test_flexible_urdf_link_sags_as_beam_theory(tmp_path):
    """``--flexible arm=aluminium,tube=0.03x0.002,n_div=N``: the link becomes an RFEM beam carrying its
    URDF mass (1.5 kg, spread uniformly) and a 0.5 kg tip link at its end. Held horizontal by its drive
    (init.static), its tip deflection through the FMU converges to beam theory
    w·L⁴/(8EI) + P·L³/(3EI) = 0.358 mm: measured −1.06 % (6 sections), −0.096 % (20), the 1/n² of
    the method. The segment is oblique in the link's frame, (0.3, 0, 0.4) m, and the joint frame
    pitched by atan(4/3) so that it is horizontal: this exercises the beam-frame re-expression."""
    from fmpy import simulate_fmu

    from fmu_mb.model.robot import MATERIALS, section
    urdf = tmp_path / "cantilever.urdf"
    urdf.write_text(CANTILEVER)
    area, second, _, _ = section("tube", 0.03, 0.002)
    E, L = MATERIALS["aluminium"][0], 0.5
    theory = (1.5 * 9.81 / L) * L ** 4 / (8 * E * second) + 0.5 * 9.81 * L ** 3 / (3 * E * second)
    err = {}
    for n in (6, 20):
        r = build_cli(tmp_path, urdf, "--name", f"cantilever{n}", "--flexible", f"arm=aluminium,tube=0.03x0.002,n_div={n}")
        assert r.returncode == 0 and "valid" in r.stdout, r.stdout + r.stderr
        assert "link 'arm' is a flexible beam of 0.5 m, 1.5 kg (URDF mass 1.5 kg), " in r.stdout
        res = simulate_fmu(str(tmp_path / "dist" / f"cantilever{n}.fmu"), stop_time=0.01,
                           start_values={"init.static": True})
        err[n] = -res["arm.deflection[3]"][0] / theory - 1.0
        assert res["arm.deflection[2]"][0] == pytest.approx(0.0, abs=1e-6 * theory)    # bending in the vertical plane
    assert abs(err[6]) < 0.02 and abs(err[20]) < 0.002
    assert 8.0 < err[6] / err[20] < 14.0                                          # (20/6)² = 11.1


def test_flexible_links_keep_the_robots_kinematics_and_mass():
    """UR5 with its upper arm and forearm made flexible (beams re-expressed in frames along their
    segments, which are oblique in UR5's link frames): with the sdes at rest every rigid link's
    placement equals the rigid import's at random joint angles (≤ 1e-12), and the mass is kept."""
    from fmu_mb.model.robot import FlexibleLink, build_robot, section
    d = U.read(robots_dir() / ROBOTS["ur5"][0])
    a, Iy, Iz, J = section("tube", 0.08, 0.004)
    flex = [FlexibleLink(ln, a, Iy, Iz, J, 7e10, 2.6e10, n_div=4) for ln in ("upper_arm_link", "forearm_link")]
    rigid = compile_mechanism(build_robot("ur5", d["links"], d["joints"], d["root"], friction="none"))
    flexible = compile_mechanism(build_robot("ur5", d["links"], d["joints"], d["root"], friction="none",
                                             flexible=flex))
    assert len(flexible.dof_names) == len(rigid.dof_names) + 2 * 4 * 3
    assert np.sum(flexible.model.body_mass) == pytest.approx(np.sum(rigid.model.body_mass), rel=1e-12)
    dr, df = make_data(rigid.model), make_data(flexible.model)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, len(rigid.dof_names))
        qf = np.zeros(len(flexible.dof_names))
        for i, n in enumerate(rigid.dof_names):
            qf[flexible.dof_names.index(n)] = q[i]
        alg.forward_kinematics(rigid.model, dr, q)
        alg.forward_kinematics(flexible.model, df, qf)
        for link in ("shoulder_link", "wrist_1_link", "wrist_2_link", "wrist_3_link", "tool0"):
            br, bf = rigid.link_body[link], flexible.link_body[link]
            assert np.max(np.abs(dr.op[br] - df.op[bf])) <= 1e-12, link
            assert np.max(np.abs(dr.oR[br] - df.oR[bf])) <= 1e-12, link


def test_sprung_base_support_options_and_passive_joints(tmp_path):
    """``--base sprung --support-stiffness 0,0,2e5 --support-damping ... --passive FL_KFE``: the
    passive joint has no drive input, and in static equilibrium (init.static) the base sinks by
    m·g/(4·k_z) (four supports, symmetric about the root frame's origin)."""
    from fmpy import read_model_description, simulate_fmu
    path = robots_dir() / ROBOTS["solo12"][0]
    kz = 2e5
    r = build_cli(tmp_path, path, "--base", "sprung", "--name", "solo", "--passive", "FL_KFE,HR_KFE",
                  "--support-stiffness", f"2e5,2e5,{kz}", "--support-damping", "200,200,200",
                  "--support-points", "-0.1,-0.1,0 -0.1,0.1,0", "--support-points", "0.1,-0.1,0",
                  "--support-points", "0.1,0.1,0")
    assert r.returncode == 0 and "valid" in r.stdout, r.stdout + r.stderr
    src = (tmp_path / "dist" / "models" / "solo.py").read_text()
    assert "'stiffness': (200000.0, 200000.0, 200000.0)" in src and "PASSIVE = ['FL_KFE', 'HR_KFE']" in src
    fmu = str(tmp_path / "dist" / "solo.fmu")
    names = {v.name for v in read_model_description(fmu).modelVariables}
    assert "FL_KFE.tau_drive" not in names and "HR_KFE.tau_drive" not in names and "FR_KFE.tau_drive" in names
    mass = sum(lk.mass for lk in U.read(path)["links"])
    res = simulate_fmu(fmu, stop_time=0.01, start_values={"init.static": True})
    assert res["floating_base.q[3]"][0] == pytest.approx(-mass * 9.81 / (4 * kz), rel=1e-4)


SOLO, UR5 = ROBOTS["solo12"][0], ROBOTS["ur5"][0]
BAD_OPTIONS = {
    "no section": (UR5, ["--flexible", "forearm_link=aluminium"], "missing area, Iy, Iz, J"),
    "unknown material": (UR5, ["--flexible", "forearm_link=unobtainium,tube=0.08x0.004"], "unknown material"),
    "unknown key": (UR5, ["--flexible", "forearm_link=aluminium,tube=0.08x0.004,colour=red"], "unknown key 'colour'"),
    "wall thicker than radius": (UR5, ["--flexible", "forearm_link=aluminium,tube=0.004x0.08"], "wall thickness"),
    "no such link": (UR5, ["--flexible", "elbow=aluminium,rod=0.05"], "flexible link 'elbow': no such link"),
    "root link": (UR5, ["--flexible", "world=aluminium,rod=0.05"], "the root link cannot be flexible"),
    "link without a child joint": (UR5, ["--flexible", "tool0=aluminium,rod=0.05"], "carries no joint"),
    "unknown passive joint": (UR5, ["--passive", "elbow"], "passive joints ['elbow'] are not moving joints"),
    "two numbers for three": (SOLO, ["--base", "sprung", "--support-stiffness", "1,2"], "three finite numbers"),
    "supports on a fixed base": (UR5, ["--support-stiffness", "1,2,3"], "apply to --base sprung"),
    "URDF options for a model file": ("examples/two_link_arm.py", ["--flexible", "forearm=steel,rod=0.02"],
                                      "--flexible apply to robot files"),
}


@pytest.mark.parametrize("case", BAD_OPTIONS)
def test_bad_urdf_options_are_one_line_errors(tmp_path, case):
    f, args, expect = BAD_OPTIONS[case]
    path = ROOT / f if f.endswith(".py") else robots_dir() / f
    r = build_cli(tmp_path, path, *args)
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr, r.stderr
    assert expect in r.stderr, r.stderr
    assert not (tmp_path / "dist" / "models").exists() or not list((tmp_path / "dist" / "models").iterdir())


def test_urdf_limits_are_joint_stops_that_hold_and_conserve_energy(tmp_path):
    """``<limit lower upper>`` → a penalty stop beyond each limit (fmu_mb.model.robot): the pendulum
    released near the horizontal (1.5 rad) falls onto its lower stop at 0.3 rad, short of hanging straight. Through the impact the
    energy balance E_k + E_g + E_stop + E_diss stays at its start value (RK4 at 1e-5 s: measured
    1.3e-6 J of the 1.2 J swing, asserted ≤ 1e-5 of it: the stop's force has a kink at contact, where
    RK4 loses its order), the stop dissipates (critically damped), and at rest the stop's torque k·e holds the
    gravity torque (ROS2 at 1 ms, 3 s). Without stops (limits="none") the pendulum passes the limit."""
    from fmu_mb.model.robot import STOP_OMEGA
    from fmu_mb.simulator import Simulator
    path = tmp_path / "pendulum.urdf"
    path.write_text(PENDULUM.format(c=0.0, F=0.0).replace(
        'type="continuous"', 'type="revolute"').replace(
        "<dynamics", '<limit lower="0.3" upper="1.6" effort="50" velocity="5"/><dynamics'))
    finals = {}
    for limits, method, h, T in (("stops", "rk4", 1e-5, 0.6), ("stops", "ros2", 1e-3, 3.0), ("none", "ros2", 1e-3, 0.6)):
        mech = U.mechanism(path, limits=limits)
        mech.joint("hinge").q0 = [1.5]
        cm = compile_mechanism(mech)
        sim = Simulator(cm, h=h, method=method)
        sim.initialize()
        e0 = sim.energies()["balance"]
        q_min, worst = 1.5, 0.0
        for _ in range(int(round(T / 0.01))):
            sim.step(0.01)
            q_min = min(q_min, sim.q[0])
            worst = max(worst, abs(sim.energies()["balance"] - e0))
        finals[(limits, method)] = (sim, q_min, worst, cm)
    sim, q_min, worst, cm = finals[("stops", "rk4")]
    k = cm.model.dof_stop_k[0]
    assert 0.2 < q_min < 0.3 and sim.energies()["dissipated"] > 0.1             # it hit the stop, which damps
    assert worst <= 1e-5 * 1.2
    assert k == pytest.approx(min(50.0 / 1e-2, (0.021 + 0.25 ** 2) * STOP_OMEGA ** 2), rel=1e-3)
    sim, _, _, cm = finals[("stops", "ros2")]
    assert abs(sim.qd[0]) < 1e-6
    stop_torque = -cm.model.dof_stop_k[0] * (sim.q[0] - 0.3)
    held = 1.0 * 9.81 * 0.25 * np.sin(sim.q[0])                  # rod's centre of mass 0.25 m below the hinge
    assert stop_torque == pytest.approx(held, rel=1e-6)
    assert finals[("none", "ros2")][1] < -1.0                            # no stop: it swings through


def test_urdf_fmu_every_option_combination_runs_and_bad_input_is_refused(tmp_path):
    """UR5 with a flexible forearm, through FMPy: each of the 12 combinations of its Enumeration
    options (model.friction × model.limits × model.links) runs 0.2 s driven, every output finite;
    a NaN drive torque is refused at fmi2SetReal with fmi2Error and a logged message naming it, the
    input keeps its last good value and the next step continues from the last good state."""
    import itertools

    from fmpy import read_model_description, simulate_fmu
    from fmpy.fmi1 import FMICallException

    from tests.fmu_host import Instance
    r = build_cli(tmp_path, robots_dir() / UR5, "--name", "ur5_flex", "--flexible",
                  "forearm_link=aluminium,tube=0.08x0.004,n_div=4")
    assert r.returncode == 0 and "valid" in r.stdout, r.stdout + r.stderr
    fmu = str(tmp_path / "dist" / "ur5_flex.fmu")
    md = read_model_description(fmu)
    enums = {v.name: [int(i.value) for i in v.declaredType.items] for v in md.modelVariables
             if v.type == "Enumeration" and v.name.startswith("model.")}
    assert sorted(enums) == ["model.friction", "model.limits", "model.links"]
    drives = {v.name: 1.0 for v in md.modelVariables if v.name.endswith(".tau_drive")}
    for combo in itertools.product(*enums.values()):
        res = simulate_fmu(fmu, stop_time=0.2, start_values={**drives, **dict(zip(enums, combo))})
        assert res["time"][-1] == pytest.approx(0.2), combo
        for name in res.dtype.names:
            assert np.all(np.isfinite(res[name])), (combo, name)
    inst = Instance(fmu)
    try:
        inst.init(**drives)
        inst.fmu.doStep(0.0, 0.01)
        with pytest.raises(FMICallException):
            inst.set(elbow_joint__tau_drive=float("nan"))
        assert any("elbow_joint.tau_drive" in m for m in inst.errors()), inst.errors()
        assert inst.fmu.getReal([inst.vr["elbow_joint.tau_drive"]]) == [1.0]
        inst.fmu.doStep(0.01, 0.01)
        assert all(np.isfinite(inst.get("elbow_joint.q", "forearm_link.deflection[3]")))
    finally:
        inst.fmu.freeInstance()
