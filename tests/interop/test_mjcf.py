"""MJCF import (fmu_mb.interop.mjcf) against MuJoCo, which compiles the same file.

The models: the 14 MJCF files gymnasium ships in its wheel (arms: reacher, pusher; legged: ant,
half_cheetah, hopper, walker2d, humanoid; free bodies: ant, humanoid; several joints in one body:
half_cheetah, hopper, swimmer, point, humanoid), and files of our own in tests/interop/mjcf/ for what
they lack: ball joints, joints away from the body origin, a hinge with ``ref``, stiffness with
``springref``, a free body with a child, a non-motor actuator (ball_chain.xml); a four-bar closed by a
``connect`` (fourbar.xml); a body ``weld``-ed to a pendulum (weld.xml, and weld_tree.xml, the same as
a tree). Compared with ``mj_forward`` (contacts, limits, frictionloss and actuation disabled, fluid
forces off): M(q) and the accelerations at 5 random states, armature, damping and springs included.
Coordinates: hinge and slide MuJoCo's minus ``ref``; ball and free joints ZYX Euler angles, so MuJoCo's
angular velocity ω = E(θ, φ)·(ψ̇, θ̇, φ̇) and M_ours = Eᵀ·M_mj·E (measured: ≤ 2.6e-14 relative)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
gymnasium = pytest.importorskip("gymnasium", reason="LOUD SKIP: gymnasium (test extra) ships the MJCF models")

from fmu_mb import algorithms as alg  # noqa: E402
from fmu_mb.interop import mjcf  # noqa: E402
from fmu_mb.interop import urdf as U  # noqa: E402
from fmu_mb.model import compile_mechanism, make_data  # noqa: E402
from fmu_mb.simulator import Simulator  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OURS = Path(__file__).resolve().parent / "mjcf"
GYM = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
MODELS = {p.name: p for p in sorted(GYM.glob("*.xml"))} | {p.name: OURS / p.name for p in
                                                           (OURS / "ball_chain.xml", OURS / "weld_tree.xml")}
REL = 1e-9


@pytest.fixture(autouse=True)
def _quiet_mujoco():
    """MuJoCo's default warning handler writes MUJOCO_LOG.TXT into the working folder (gymnasium's
    files use a deprecated compiler attribute): the tests' own compilations keep them in memory."""
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda text: None)
    yield
    mujoco.set_mju_user_warning(previous)


def _quat(psi, theta, phi):
    """Unit quaternion (w, x, y, z) of Rz(ψ)·Ry(θ)·Rx(φ)."""
    cz, sz, cy, sy, cx, sx = (f(a / 2) for a in (psi, theta, phi) for f in (np.cos, np.sin))
    return np.array([cz * cy * cx + sz * sy * sx, cz * cy * sx - sz * sy * cx, cz * sy * cx + sz * cy * sx,
                     sz * cy * cx - cz * sy * sx])


def _E(theta, phi):
    """Body angular velocity of Rz(ψ)·Ry(θ)·Rx(φ) per Euler rate (ψ̇, θ̇, φ̇)."""
    return np.array([[-np.sin(theta), 0.0, 1.0], [np.cos(theta) * np.sin(phi), np.cos(phi), 0.0],
                     [np.cos(theta) * np.cos(phi), -np.sin(phi), 0.0]])


def _Edot_rates(theta, phi, r):
    """dE/dt · r for the Euler rates r = (ψ̇, θ̇, φ̇)."""
    pd, td, fd = r
    st, ct, sf, cf = np.sin(theta), np.cos(theta), np.sin(phi), np.cos(phi)
    return np.array([-pd * td * ct, -td * fd * sf + pd * (-td * st * sf + fd * ct * cf),
                     -td * fd * cf + pd * (-td * st * cf - fd * ct * sf)])


def _mujoco_state(m, cm, data, q, v):
    """(qpos, qvel, J, J̇·v) of MuJoCo for our (q, q̇): qvel = J·q̇."""
    qpos, J, Jdv = m.qpos0.copy(), np.zeros((m.nv, len(q))), np.zeros(m.nv)
    for j in range(m.njnt):
        a = cm.joint(data["joint_ids"][mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)]).dofadr
        qa, va, t = m.jnt_qposadr[j], m.jnt_dofadr[j], mujoco.mjtJoint(int(m.jnt_type[j]))
        if t in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            qpos[qa], J[va, a] = q[a] + m.qpos0[qa], 1.0
            continue
        lin = 3 if t == mujoco.mjtJoint.mjJNT_FREE else 0
        if lin:
            qpos[qa:qa + 3], J[va:va + 3, a:a + 3] = q[a:a + 3], np.eye(3)
        psi, th, ph = q[a + lin:a + lin + 3]
        qpos[qa + lin:qa + lin + 4] = _quat(psi, th, ph)
        J[va + lin:va + lin + 3, a + lin:a + lin + 3] = _E(th, ph)
        Jdv[va + lin:va + lin + 3] = _Edot_rates(th, ph, v[a + lin:a + lin + 3])
    return qpos, J @ v, J, Jdv


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_and_accelerations_equal_mujocos(name):
    path = MODELS[name]
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT |
                           mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS | mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    m.opt.viscosity = m.opt.density = 0.0              # (swimmer's fluid forces: not a joint-space model)
    d = mujoco.MjData(m)
    data = mjcf.read(path)
    cm = compile_mechanism(U.mechanism(path, friction="none", limits="none"))
    md, n = make_data(cm.model), cm.model.nv
    assert n == m.nv and abs(np.asarray(cm.model.body_mass).sum() - m.body_mass.sum()) <= 1e-12 * m.body_mass.sum()
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, v = np.array(cm.q0, float) + rng.uniform(-0.6, 0.6, n), rng.normal(0.0, 1.0, n)
        d.qpos[:], d.qvel[:], J, Jdv = _mujoco_state(m, cm, data, q, v)
        mujoco.mj_forward(m, d)
        M_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M_mj)
        M = alg.crba(cm.model, md, q)
        M = np.triu(M) + np.triu(M, 1).T
        ref = J.T @ M_mj @ J
        assert np.abs(M - ref).max() <= REL * np.abs(ref).max()
        x = np.zeros(cm.model.nx)
        x[:n], x[n:2 * n] = q, v
        qdd = alg.forward_dynamics(cm.model, md, x, np.zeros(n))[n:2 * n]
        assert np.abs(J @ qdd + Jdv - d.qacc).max() <= REL * max(1.0, np.abs(d.qacc).max())


def _fourbar_at(d_imp: float, seed: int):
    """(our λ, MuJoCo's efc_force, our q̈, MuJoCo's qacc) of fourbar.xml at an assembled random state,
    MuJoCo's equality impedance set to ``d_imp``."""
    path = OURS / "fourbar.xml"
    data = mjcf.read(path)
    cm = compile_mechanism(U.mechanism(path, friction="none", limits="none"))
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_ACTUATION
    m.eq_solimp[:, 0:2] = d_imp
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    sim = Simulator(cm, 1e-3)
    q0 = np.array(cm.q0, float)
    q0[cm.joint(data["joint_ids"]["crank"]).dofadr] = rng.uniform(-1.0, 1.0)
    sim.initialize(q=q0)                                  # assembled: the loop closes
    sim.evaluate()
    C = sim.data.con_C.copy()
    v = rng.normal(0.0, 1.0, cm.nv)
    v -= np.linalg.pinv(C) @ (C @ v)                     # consistent velocities
    sim.set_state(q=sim.q.copy(), qd=v)
    sim.evaluate()
    perm = [cm.joint(data["joint_ids"][mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)]).dofadr
            for j in range(m.njnt)]
    d.qpos[:], d.qvel[:] = sim.q[perm], v[perm]
    mujoco.mj_forward(m, d)
    assert d.nefc == 3 and np.abs(d.efc_pos).max() <= 1e-12      # MuJoCo sees the loop closed too
    return sim.lam[:3].copy(), d.efc_force.copy(), sim.qdd[perm], d.qacc.copy()


def test_connect_loop_reactions_converge_to_mujocos_efc_force_as_its_softness_vanishes():
    """The four-bar's cut joint (world x, y, z rows of p_a − p_b, as MuJoCo's connect rows p1 − p2): our
    rigid λ against MuJoCo's efc_force, which is soft by (1 − d)/d of the constraint's inertia (solimp d;
    MuJoCo caps d at 0.9999). Measured residual: 4.6e-5 relative at d = 0.9999, ten times that at 0.999 —
    it converges to ours as d → 1."""
    for seed in range(5):
        res = {}
        for d_imp in (0.999, 0.9999):
            lam, efc, qdd, qacc = _fourbar_at(d_imp, seed)
            scale = np.abs(efc).max()
            res[d_imp] = (np.abs(lam - efc).max() / scale, np.abs(qdd - qacc).max() / np.abs(qacc).max())
        assert res[0.9999][0] <= 1e-4 and res[0.9999][1] <= 1e-4, res
        assert 5.0 < res[0.999][0] / res[0.9999][0] < 20.0, res          # ∝ (1 − d)


def test_weld_loop_moves_as_the_tree_it_closes():
    """weld.xml (a free body welded to a pendulum's tip: 7 coordinates, 6 cut-joint rows) against
    weld_tree.xml (the body a child of the pendulum): the same swing over 0.5 s to round-off."""
    a = compile_mechanism(U.mechanism(OURS / "weld.xml", limits="none"))
    b = compile_mechanism(U.mechanism(OURS / "weld_tree.xml", limits="none"))
    sa, sb = Simulator(a, 1e-3, method="rk4"), Simulator(b, 1e-3, method="rk4")
    sa.initialize()
    sb.initialize()
    for _ in range(50):
        sa.step(0.01)
        sb.step(0.01)
    assert abs(sb.q[0]) > 0.5                                           # it swung
    assert abs(sa.q[a.joint("swing").dofadr] - sb.q[0]) <= 1e-9


def test_mjcf_mapping_of_actuators_friction_and_names():
    """ball_chain.xml: motors and the position servo give drive inputs, the free body's rotor (no
    actuator) is passive; frictionloss becomes a Coulomb friction of that size; half_cheetah's bodies
    named like their joints get the suffix _link."""
    mech = U.mechanism(OURS / "ball_chain.xml")
    driven = {j.name for j in mech.joints if j.actuated}
    assert driven == {"pitch", "roll", "extend"}
    path = OURS / "friction.xml"
    path.write_text((OURS / "fourbar.xml").read_text().replace('damping="0.05"', 'frictionloss="0.7"'))
    try:
        law = U.mechanism(path).joint("crank").friction
        assert law.load.value == 0.7 and law.law.k_c == 1.0 and law.law.k_v == 0.0     # t_f = 0.7·sgn_ε(q̇)
        assert U.mechanism(path, friction="none").joint("crank").friction is None
    finally:
        path.unlink()
    data = mjcf.read(GYM / "half_cheetah.xml")
    assert data["link_ids"]["bthigh"] == "bthigh_link" and data["joint_ids"]["bthigh"] == "bthigh"
    assert [j.name for j in data["joints"][:3]] == ["rootx", "rootz", "rooty"]        # one body, three joints


@pytest.mark.parametrize("case,text,expect", [
    ("malformed", "<mujoco><worldbody><body name='a'>", "MuJoCo's compiler refuses the file"),
    ("unknown attribute", "<mujoco><worldbody><body name='a' mass='1'/></worldbody></mujoco>",
     "MuJoCo's compiler refuses the file"),
    ("nothing moves", "<mujoco><worldbody><body name='a'><inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>"
                      "</body></worldbody></mujoco>", "no moving joint (the file has no hinge, slide, ball or free joint"),
])
def test_mjcf_refusals_are_one_line_exit_2_no_fmu(tmp_path, case, text, expect):
    path = tmp_path / "robot.xml"
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(path), "--out", str(tmp_path / "dist"),
                        "--no-controller", "--no-cross-check"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and expect in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.rglob("*.fmu"))
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(OURS / "fourbar.xml"), "--base", "free",
                        "--out", str(tmp_path / "dist")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "--base applies to URDF files" in r.stderr, r.stderr


def test_mjcf_fmu_runs_in_fmpy_as_the_simulator(tmp_path):
    """``fmu-mb build ball_chain.xml --kind both``: both FMUs validate, agree bit for bit, and give the
    direct simulation's coordinates (the model file's defaults: ROS2 at 1 ms) over 0.2 s."""
    from fmpy import simulate_fmu
    out = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(OURS / "ball_chain.xml"), "--out", str(out),
                        "--kind", "both", "--target", "linux64", "--no-controller", "--no-cross-check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    results = [simulate_fmu(str(f), stop_time=0.2, output_interval=0.01, validate=True)
               for f in (out / "ball_chain.fmu", out / "native" / "ball_chain.fmu")]
    for n in results[0].dtype.names:
        assert np.array_equal(results[0][n], results[1][n], equal_nan=True), n
    from fmu_mb import registry
    module = registry.load_file(out / "models" / "ball_chain.py", "ball_chain")
    cm = compile_mechanism(module.build())
    sim = Simulator(cm, module.FMU["step_size"], method=module.FMU["method"])
    sim.initialize()
    for _ in range(20):
        sim.step(0.01)
    final = results[0][-1]
    checked = 0
    for j in cm.joints:
        n = len(j.coordinate_names)
        for k in range(n):
            name = f"{j.name}.q" + ("" if n == 1 else f"[{k + 1}]")
            assert final[name] == pytest.approx(sim.q[j.dofadr + k], abs=1e-12), name
            checked += 1
    assert checked == cm.nv == 16 and abs(final["pitch.q"]) > 1e-3          # (it moved)


def test_flexible_link_of_an_mjcf_model(tmp_path):
    """``--flexible`` works as for URDF: reacher's first arm becomes an RFEM beam carrying its MJCF mass;
    the model file builds and its beam bends (sde coordinates) under the drive it does not follow rigidly."""
    from fmu_mb import registry
    name, src, warnings = U.model_source(GYM / "reacher.xml", flexible=["body0=aluminium,rod=0.02,n_div=4"])
    assert any("link 'body0' is a flexible beam of 0.1 m" in w for w in warnings)
    (tmp_path / f"{name}.py").write_text(src)
    cm = compile_mechanism(registry.load_file(tmp_path / f"{name}.py", name).build())
    assert sum(n.startswith("body0.sde") for n in cm.dof_names) == 4 * 3        # n_div sde joints × 3 rotations
    sim = Simulator(cm, 1e-3, method="ros2")
    sim.initialize()
    sim.tau_drive[cm.joint("joint0").dofadr] = 0.05
    for _ in range(10):
        sim.step(0.01)
    bend = [sim.q[k] for k, n in enumerate(cm.dof_names) if n.startswith("body0.sde")]
    assert np.all(np.isfinite(sim.q)) and max(map(abs, bend)) > 1e-9
