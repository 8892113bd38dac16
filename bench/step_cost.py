"""Cost of one RK4 step: fmu_mb vs MuJoCo vs Pinocchio on the five-axis chain, and vs rfe count.

Run:  python bench/step_cost.py [--quick]

Part 1 — the five-axis tree of paper 002 (5 revolute joints, paper's inertias),
integrated with classical RK4 at h = 1 ms under constant joint torques:
  * fmu_mb: ``rk4_steps_tree`` (jitted loop over steps);
  * MuJoCo: the same chain in MJCF with integrator="RK4", contacts and
    constraints disabled, stepped by ``mujoco.rollout`` (C loop) and by
    ``mj_step`` from Python;
  * Pinocchio: RK4 written in Python around ``pin.aba`` (four calls per step):
    Python overhead dominates, it is listed for scale.
The engines run interleaved in rounds on the same machine and the median
per-step time of each is reported; before timing, 1 s of motion is integrated
by each and the largest joint-angle difference is printed, so that "same chain"
is checked, not assumed.

Part 2 — a pendulum whose arm is an RFEM beam with n_rfe rigid finite elements
(n_rfe = 1: rigid arm; n_rfe = n_div + 1): µs per RK4 step, and the growth
exponent p of cost ∝ n_rfe^p between neighbouring sizes. The articulated-body
algorithm is O(n), so p ≈ 1 is expected (target: no faster than n²).
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from fmu_mb import registry
from fmu_mb.kernels.handles import data_struct, model_struct
from fmu_mb.kernels.integrators import rk4_steps_tree
from fmu_mb.model import Beam, Body, Joint, Mechanism, compile_mechanism, make_data

H = 1e-3
QD0 = np.array([0.5, -0.3, 0.8, 0.2, -0.6])
TAU = np.array([1.0, 0.5, -0.2, 0.3, 0.1])


def mjcf_five_axis(fa) -> str:
    children = {}
    for k, p in fa.PARENT.items():
        children.setdefault(p, []).append(k)

    def body(k):
        x, y, z = fa.PLACEMENT[k]
        cx, cy, cz = fa.COM[k]
        ix = fa.INERTIA[k]
        s = (f'<body name="link{k}" pos="{x} {y} {z}"><joint name="joint{k}" type="hinge" axis="0 0 1"/>'
             f'<inertial pos="{cx} {cy} {cz}" mass="{fa.MASS[k]}" diaginertia="{ix[0]} {ix[1]} {ix[2]}"/>')
        return s + "".join(body(c) for c in children.get(k, [])) + "</body>"

    g = " ".join(str(v) for v in fa.GRAVITY)
    motors = "".join(f'<motor joint="joint{k}"/>' for k in range(1, 6))
    return (f'<mujoco><option timestep="{H}" integrator="RK4" gravity="{g}">'
            f'<flag contact="disable" constraint="disable"/></option>'
            f'<worldbody>{body(1)}</worldbody><actuator>{motors}</actuator></mujoco>')


class FmuMb:
    name = "fmu_mb (numba, rk4_steps_tree)"
    h = H

    def __init__(self, mech):
        self.cm = compile_mechanism(mech)
        self.m, self.d = model_struct(self.cm.model), data_struct(make_data(self.cm.model))
        self.x = np.zeros(self.cm.model.nx)
        self.tau = np.zeros(self.cm.nv)

    def reset(self, qd0, tau):
        self.x[:] = 0.0
        self.x[self.cm.nv:2 * self.cm.nv] = qd0
        self.tau[:] = tau

    def run(self, n):
        if not rk4_steps_tree(self.m, self.d, self.x, 0.0, self.tau, self.h, n):
            raise RuntimeError(f"{self.cm.name}: state became non-finite at h = {self.h} s")

    def q(self):
        return self.x[:self.cm.nv].copy()


class MuJoCoRollout:
    name = "MuJoCo RK4 (rollout, C loop)"

    def __init__(self, xml):
        import mujoco
        from mujoco import rollout
        self.mj, self.rollout = mujoco, rollout
        self.model = mujoco.MjModel.from_xml_string(xml)
        self.data = mujoco.MjData(self.model)
        self.spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.state = np.zeros(mujoco.mj_stateSize(self.model, self.spec))

    def reset(self, qd0, tau):
        mj = self.mj
        mj.mj_resetData(self.model, self.data)
        self.data.qvel[:] = qd0
        self.data.ctrl[:] = tau
        mj.mj_getState(self.model, self.data, self.state, self.spec)
        self.tau = np.asarray(tau, float)
        self._ctrl = {}

    def run(self, n):
        ctrl = self._ctrl.get(n)
        if ctrl is None:
            ctrl = self._ctrl[n] = np.tile(self.tau, (1, n, 1))
        st, _ = self.rollout.rollout(self.model, self.data, self.state[None, :], ctrl)
        self.state[:] = st[0, -1]

    def q(self):
        self.mj.mj_setState(self.model, self.data, self.state, self.spec)
        return self.data.qpos.copy()


class MuJoCoStep(MuJoCoRollout):
    name = "MuJoCo RK4 (mj_step from Python)"

    def reset(self, qd0, tau):
        self.mj.mj_resetData(self.model, self.data)
        self.data.qvel[:] = qd0
        self.data.ctrl[:] = tau

    def run(self, n):
        step, m, d = self.mj.mj_step, self.model, self.data
        for _ in range(n):
            step(m, d)

    def q(self):
        return self.data.qpos.copy()


class PinocchioPy:
    name = "Pinocchio aba ×4 per step (Python RK4)"

    def __init__(self, mech):
        import pinocchio as pin

        from fmu_mb.interop.pinocchio import to_pinocchio
        self.pin = pin
        self.model, _ = to_pinocchio(mech)
        self.data = self.model.createData()

    def reset(self, qd0, tau):
        self.qv = np.zeros(self.model.nq)
        self.v = np.array(qd0, float)
        self.tau = np.array(tau, float)

    def run(self, n):
        aba, m, d, tau = self.pin.aba, self.model, self.data, self.tau
        q, v = self.qv, self.v
        for _ in range(n):
            a1 = aba(m, d, q, v, tau)
            q2, v2 = q + 0.5 * H * v, v + 0.5 * H * a1
            a2 = aba(m, d, q2, v2, tau)
            q3, v3 = q + 0.5 * H * v2, v + 0.5 * H * a2
            a3 = aba(m, d, q3, v3, tau)
            q4, v4 = q + H * v3, v + H * a3
            a4 = aba(m, d, q4, v4, tau)
            q = q + H / 6 * (v + 2 * v2 + 2 * v3 + v4)
            v = v + H / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        self.qv, self.v = q, v

    def q(self):
        return self.qv.copy()


def time_engines(engines, nsteps, rounds, qd0=QD0, tau=TAU):
    times = {e.name: [] for e in engines}
    for _ in range(rounds):
        for e in engines:
            e.reset(qd0, tau)
            t0 = time.perf_counter()
            e.run(nsteps)
            times[e.name].append((time.perf_counter() - t0) / nsteps * 1e6)
    return {k: statistics.median(v) for k, v in times.items()}


def part1(quick):
    fa = registry.load("five_axis")
    mech = registry.build("five_axis")
    engines = [FmuMb(mech), MuJoCoRollout(mjcf_five_axis(fa)), MuJoCoStep(mjcf_five_axis(fa))]
    try:
        engines.append(PinocchioPy(mech))
    except ImportError:
        pass
    for e in engines:              # warm up (numba compile/cache load) and check the physics agree
        e.reset(QD0, TAU)
        e.run(1000)
    ref = engines[0].q()
    print("Part 1 — five-axis tree (paper 002), RK4, h = 1 ms, constant torques\n")
    print("joint angles after 1 s, max |difference| to fmu_mb:")
    for e in engines[1:]:
        print(f"  {e.name:42s} {np.max(np.abs(e.q() - ref)):.2e} rad")
    nsteps, rounds = (2000, 5) if quick else (20000, 9)
    med = time_engines(engines[:3], nsteps, rounds)
    if len(engines) > 3:
        med.update(time_engines(engines[3:], max(200, nsteps // 20), rounds))
    base = med[engines[1].name]
    print(f"\n| engine | µs per RK4 step (median of {rounds}) | ratio to MuJoCo rollout |")
    print("|---|---:|---:|")
    for e in engines:
        print(f"| {e.name} | {med[e.name]:.2f} | {med[e.name] / base:.2f} |")
    return med[engines[0].name] / base


def rfem_pendulum(n_rfe):
    m = Mechanism("rfem_pendulum", gravity=(0.0, 0.0, -9.81))
    m.add(Body("hub", 0.5, (0, 0, 0), np.diag([1e-3, 1e-3, 1e-3])),
          Joint("pivot", "revolute", "ground", "hub", axis=(0, 1, 0), q0=-0.6))
    b, t = 0.03, 0.004
    m.add(Beam("arm", 0.8, 1150.0, b * t, b * t**3 / 12, t * b**3 / 12, b * t**3 / 3, 2.0e9, 0.8e9,
               n_div=n_rfe - 1), Joint("root", "fixed", "hub", "arm"))
    return m


def omega_max(cm):
    """Highest frequency of the model linearized about its initial configuration (rad/s)."""
    import scipy.linalg

    from fmu_mb import algorithms as alg
    data = make_data(cm.model)
    q = cm.q0
    M = alg.crba(cm.model, data, q)
    K = np.zeros((cm.nv, cm.nv))
    for k in range(cm.nv):
        e = np.zeros(cm.nv)
        e[k] = 1e-7
        K[:, k] = (alg.generalized_gravity_and_springs(cm.model, data, q + e)
                   - alg.generalized_gravity_and_springs(cm.model, data, q - e)) / 2e-7
    return float(np.sqrt(np.max(np.abs(scipy.linalg.eigvals(0.5 * (K + K.T), M).real))))


def part2(quick):
    sizes = [1, 2, 5, 10, 20, 50, 100]
    print("\nPart 2 — pendulum with an RFEM arm: cost of one RK4 step vs number of rfes")
    print("(step h = 1/ω_max of the linearized model, within RK4's stability limit 2.8/ω_max)\n")
    print("| n_rfe | coordinates | h [s] | µs per RK4 step | µs per rfe | growth exponent p (cost ∝ n^p) |")
    print("|---:|---:|---:|---:|---:|---:|")
    prev = None
    worst = 0.0
    for n in sizes:
        e = FmuMb(rfem_pendulum(n))
        e.h = min(H, 1.0 / omega_max(e.cm))
        e.reset(np.zeros(e.cm.nv), np.zeros(e.cm.nv))
        e.run(10)
        steps = max(200, (4000 if quick else 40000) // n)
        zero = np.zeros(e.cm.nv)
        med = time_engines([e], steps, 3 if quick else 5, zero, zero)[e.name]
        p = "" if prev is None else f"{np.log(med / prev[1]) / np.log(n / prev[0]):.2f}"
        if prev is not None and n >= 10:
            worst = max(worst, float(p))
        print(f"| {n} | {e.cm.nv} | {e.h:.1e} | {med:.1f} | {med / n:.2f} | {p} |")
        prev = (n, med)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps and rounds (smoke run)")
    args = ap.parse_args()
    ratio = part1(args.quick)
    worst = part2(args.quick)
    print(f"\nfive_axis: fmu_mb / MuJoCo = {ratio:.3f} (issue 40's target: ≤ 0.5); "
          f"rfe growth exponent for n ≥ 10: max {worst:.2f} (target ≤ 2)")


if __name__ == "__main__":
    main()
