"""Peer comparison on a stiff chain: fmu_mb's Rosenbrock-W methods vs MuJoCo's ``implicitfast`` at the same step.

Run:  python bench/stiff_chain.py [--quick]

The chain: a pendulum whose arm is an RFEM beam (paper 001 eq. 7: n_div = 10 spring-damping elements,
11 rigid finite elements, 31 coordinates), a 0.8 m nylon strip 30 × 4 mm swinging in gravity from
−0.6 rad about a revolute pivot, with stiffness-proportional sde damping β = 2e-4 s. Its linearised
modes reach ω_max = 1.4e4 rad/s (bench/step_cost.omega_max), so explicit RK4 needs h < 2.8/ω_max = 0.2 ms.

The same chain is written in MJCF: one body per rfe with the inertia fmu_mb uses, each sde as three
hinges z, y, x (MuJoCo composes a body's joints in order: Rz(ψ)·Ry(θ)·Rx(φ), as paper 001's sde) with
the sde's stiffness and damping. Before anything is timed, both engines' RK4 at a small step are
compared (the "same chain" check). Then, at each step h: fmu_mb's ROS34PW2 and ROS2 (both γ; linearly implicit in
the springs and dampers) and MuJoCo ``implicitfast`` (implicit in the velocity-dependent forces,
joint damping included; joint stiffness stays explicit) run 2 s; the error is the largest coordinate
difference to the small-step reference over the run (sampled every 10 ms), the cost µs per step
(median of interleaved rounds, bench/step_cost.time_engines; both step in compiled loops:
``Simulator.step`` over n steps runs the method's ``*_steps_tree``, MuJoCo runs ``mujoco.rollout``).
"""
from __future__ import annotations

import argparse

import numpy as np
from step_cost import time_engines   # bench/ is the script's directory, first on sys.path

from fmu_mb.model import Beam, Joint, Mechanism, compile_mechanism
from fmu_mb.model.inertia import prism_segment
from fmu_mb.simulator import Simulator

N_DIV = 10
T = 2.0
DT = 0.01                    # sampling interval of the error, s
H_REF = 1e-5                 # reference: RK4 at 10 µs
BETA = 2e-4                  # s, stiffness-proportional sde damping
Q0 = -0.6                    # rad, initial pivot angle


def chain() -> Mechanism:
    m = Mechanism("stiff_chain", gravity=(0.0, 0.0, -9.81))
    b, t = 0.03, 0.004
    m.add(Beam("arm", 0.8, 1150.0, b * t, b * t**3 / 12, t * b**3 / 12, b * t**3 / 3, 2.0e9, 0.8e9,
               n_div=N_DIV, damping=BETA),
          Joint("pivot", "revolute", "ground", "arm", axis=(0, 1, 0), q0=Q0))
    return m


def mjcf(mech: Mechanism, h: float, integrator: str) -> str:
    beam = mech.link("arm")
    L = beam.rfe_lengths()
    k = beam.sde_stiffness()                        # ψ (z), θ (y), φ (x)

    def inertial(r):
        m, c, I = prism_segment(beam.density, beam.area, beam.Iy, beam.Iz, L[r])
        I = np.asarray(I, float)
        return (f'<inertial pos="{c[0]} {c[1]} {c[2]}" mass="{m}" fullinertia="{I[0, 0]} {I[1, 1]} {I[2, 2]} '
                f'{I[0, 1]} {I[0, 2]} {I[1, 2]}"/>')

    xml = f'<body name="rfe0"><joint name="pivot" type="hinge" axis="0 1 0"/>{inertial(0)}'
    for r in range(1, len(L)):
        joints = "".join(f'<joint name="sde{r}_{a}" type="hinge" axis="{ax}" stiffness="{k[i]}" '
                         f'damping="{BETA * k[i]}"/>'
                         for i, (a, ax) in enumerate((("psi", "0 0 1"), ("theta", "0 1 0"), ("phi", "1 0 0"))))
        xml += f'<body name="rfe{r}" pos="{L[r - 1]} 0 0">{joints}{inertial(r)}'
    xml += "</body>" * len(L)
    g = " ".join(str(v) for v in mech.gravity)
    return (f'<mujoco><option timestep="{h}" integrator="{integrator}" gravity="{g}">'
            f'<flag contact="disable" constraint="disable"/></option>'
            f'<worldbody>{xml}</worldbody></mujoco>')


class FmuMb:
    """fmu_mb's Simulator; reset/run as bench/step_cost.time_engines expects (the chain always starts
    at rest from Q0, so reset's arguments are not used)."""

    def __init__(self, cm, method, h):
        self.name = f"fmu_mb {method}"
        self.sim = Simulator(cm, h=h, method=method)
        self.x0 = self.sim.x.copy()
        self.h = h

    def reset(self, qd0=None, tau=None):
        self.sim.x[:] = self.x0
        self.sim.t = 0.0

    def run(self, n):
        self.sim.step(n * self.h)                     # one call: the kernel's loop over n steps

    def trajectory(self):
        self.reset()
        out = []
        for _ in range(int(round(T / DT))):
            self.sim.step(DT)
            out.append(self.sim.q.copy())
        return np.array(out)


class MuJoCo:
    """MuJoCo from the same description; run steps in ``mujoco.rollout``'s C loop."""

    def __init__(self, mech, integrator, h):
        import mujoco
        from mujoco import rollout
        self.mj, self.rollout, self.h = mujoco, rollout, h
        self.name = f"MuJoCo {integrator}"
        self.model = mujoco.MjModel.from_xml_string(mjcf(mech, h, integrator))
        self.data = mujoco.MjData(self.model)
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.reset()
        self.state = np.zeros(mujoco.mj_stateSize(self.model, spec))
        mujoco.mj_getState(self.model, self.data, self.state, spec)    # the start state of every run

    def reset(self, qd0=None, tau=None):
        self.mj.mj_resetData(self.model, self.data)
        self.data.qpos[0] = Q0

    def run(self, n):
        self.rollout.rollout(self.model, self.data, self.state[None, :], nstep=n)

    def trajectory(self):
        """Coordinates every DT; NaN rows from the first step MuJoCo flags as unstable (it would
        otherwise reset the state silently and go on)."""
        mj, m, d = self.mj, self.model, self.data
        self.reset()
        per = int(round(DT / self.h))
        out = []
        bad = False
        for _ in range(int(round(T / DT))):
            for _ in range(per):
                mj.mj_step(m, d)
            bad = bad or d.warning[mj.mjtWarning.mjWARN_BADQACC].number > 0 or not np.isfinite(d.qpos).all()
            out.append(np.full(m.nq, np.nan) if bad else d.qpos.copy())
        return np.array(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer timing rounds (smoke run)")
    args = ap.parse_args(argv)
    mech = chain()
    cm = compile_mechanism(mech)
    ref = FmuMb(cm, "rk4", H_REF).trajectory()
    mj_ref = MuJoCo(mech, "RK4", H_REF).trajectory()
    print(f"Stiff chain: RFEM pendulum, {N_DIV + 1} rfes, {cm.nv} coordinates, sde damping β = {BETA:g} s, "
          f"{T:g} s from {Q0} rad")
    print(f"same chain: RK4 at {H_REF:g} s, fmu_mb vs MuJoCo, max |Δq| = {np.abs(ref - mj_ref).max():.1e}\n")
    rounds, n = (3, 500) if args.quick else (7, 2000)
    print("| step h | engine, integrator | max error vs reference | µs per step | cost ratio to MuJoCo implicitfast |")
    print("|---:|---|---:|---:|---:|")
    for h in (1e-3, 5e-4, 2.5e-4, 1e-4):
        engines = [FmuMb(cm, "ros34pw2", h), FmuMb(cm, "ros2_lowdamp", h), FmuMb(cm, "ros2", h),
                   MuJoCo(mech, "implicitfast", h)]
        errs = {}
        for e in engines:
            q = e.trajectory()
            errs[e.name] = np.abs(q - ref).max() if np.isfinite(q).all() else float("inf")
        med = time_engines(engines, n, rounds)             # interleaved rounds, median µs per step
        base = med[engines[-1].name]
        for e in engines:
            err = errs[e.name]
            shown = f"{err:.1e}" if np.isfinite(err) else "diverged"
            print(f"| {h:g} s | {e.name} | {shown} | {med[e.name]:.1f} | {med[e.name] / base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
