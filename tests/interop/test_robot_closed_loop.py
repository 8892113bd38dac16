"""A robot file's FMU in a closed loop with fmu_mb's PD controller FMU, as the demo runs the crane.

A URDF arm (two revolute joints under gravity) and gymnasium's MJCF reacher (two hinges, armature and
damping from the file), each built by ``fmu-mb build --kind native`` with the PD controller, run in an
FMPy master loop at 1 ms: both joints step to q_ref = q_start + 0.3 rad from rest. Gains per joint from
the inertia it moves at the start (ω = 20 rad/s, critically damped: Kp = ω²·M_ii, Kd = 2ω·M_ii), no
gravity feed-forward: the loop is stable and settles within the static error of a PD under gravity,
|g_i(q)|/Kp_i (zero for the reacher, whose plane is horizontal)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fmu_mb import algorithms as alg
from fmu_mb import registry
from fmu_mb.model import compile_mechanism, make_data
from tests.fmu_host import Instance
from tests.robot_files import arm_urdf

ROOT = Path(__file__).resolve().parents[2]
OMEGA, STEP, T, H = 20.0, 0.3, 2.0, 1e-3


def _robot_file(kind: str, tmp: Path) -> Path:
    if kind == "urdf":
        path = tmp / "pd_arm.urdf"
        path.write_text(arm_urdf("pd_arm", tilt=0.0, damping=0.0))
        return path
    gym = pytest.importorskip("gymnasium", reason="LOUD SKIP: gymnasium (test extra) ships the MJCF models")
    pytest.importorskip("mujoco")
    return Path(gym.__file__).parent / "envs" / "mujoco" / "assets" / "reacher.xml"


@pytest.mark.parametrize("kind", ["urdf", "mjcf"])
def test_robot_files_fmu_follows_a_step_under_the_pd_controller_fmu(kind, tmp_path):
    robot = _robot_file(kind, tmp_path)
    out = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(robot), "--out", str(out), "--kind", "native",
                        "--target", "linux64", "--no-cross-check"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    model = next((out / "models").glob("*.py"))
    module = registry.load_file(model, model.stem)
    cm = compile_mechanism(module.build())
    joints = [j for j in cm.joints if len(j.coordinate_names) == 1 and j.actuated][:2]
    assert len(joints) == 2
    dofs = [j.dofadr for j in joints]
    M = alg.crba(cm.model, make_data(cm.model), np.asarray(cm.q0, float))
    Kp, Kd = OMEGA ** 2 * M[dofs, dofs], 2.0 * OMEGA * M[dofs, dofs]
    q_ref = np.asarray(cm.q0, float)[dofs] + STEP
    plant = Instance(out / "native" / f"{model.stem}.fmu", "plant").init()
    ctrl = Instance(out / "pd_controller.fmu", "ctrl").init(
        **{f"Kp[{i + 1}]": Kp[i] for i in range(2)}, **{f"Kd[{i + 1}]": Kd[i] for i in range(2)})
    q_out = [plant.vr[f"{j.name}.q"] for j in joints]
    qd_out = [plant.vr[f"{j.name}.qd"] for j in joints]
    tau_in = [plant.vr[f"{j.name}.tau_drive"] for j in joints]
    c = {k: [ctrl.vr[f"{k}[{i}]"] for i in (1, 2)] for k in ("q_ref", "qd_ref", "q", "qd")}
    tau_out = [ctrl.vr[f"tau[{i}]"] for i in (1, 2)]
    ctrl.fmu.setReal(c["q_ref"], list(q_ref))
    ctrl.fmu.setReal(c["qd_ref"], [0.0, 0.0])
    for k in range(int(round(T / H))):
        q, qd = plant.fmu.getReal(q_out), plant.fmu.getReal(qd_out)
        ctrl.fmu.setReal(c["q"], q)
        ctrl.fmu.setReal(c["qd"], qd)
        plant.fmu.setReal(tau_in, ctrl.fmu.getReal(tau_out))
        plant.fmu.doStep(k * H, H)
        ctrl.fmu.doStep(k * H, H)
    q, qd = np.array(plant.fmu.getReal(q_out)), np.array(plant.fmu.getReal(qd_out))
    assert not plant.errors() and not ctrl.errors()
    plant.close()
    ctrl.close()
    # the static error of a PD under gravity at the final pose: Kp·e = g(q) (the reacher: g = 0)
    x = np.zeros(cm.model.nx)
    x[:cm.nv] = np.asarray(cm.q0, float)
    x[dofs] = q
    g = alg.generalized_gravity_and_springs(cm.model, make_data(cm.model), x[:cm.nv])[dofs]
    assert np.all(np.abs(qd) < 1e-3)                                               # it settled
    assert np.all(np.abs(q - q_ref) <= np.abs(g) / Kp + 1e-3), (q - q_ref, g / Kp)
    assert np.all(np.abs(q - (q_ref - STEP)) > 0.5 * STEP)                          # it moved to the step
