"""Cost of one RK4 step of a closed-loop mechanism: fmu_mb vs Pinocchio's constraintDynamics.

Run:  python bench/constrained_cost.py [--rounds 9]

Mechanisms: random spatial trees of n links (revolute and prismatic joints, random inertias
and placements, fmu_mb.samples) closed by two spherical cut joints between non-adjacent links
at a random configuration (3 + 3 loop rows), no Baumgarte terms. Pinocchio's peer is
``pin.constraintDynamics`` (C++, proximal Cholesky solver of the KKT system, μ = 1e-12,
iterated to 1e-12; the trees are chosen with independent loop rows, so it needs one or two
iterations, reported) with two ``RigidConstraintModel(CONTACT_3D)``; the Pinocchio
model is built from the same description by fmu_mb.interop.pinocchio. Before timing,
q̈ of both at a state with loop-consistent velocities is compared (same system, checked).

Reported per RK4 step (4 dynamics evaluations):
  * fmu_mb, GPME form and Lagrange form: ``rk4_steps_constrained`` (jitted loop over steps);
  * Pinocchio: 4 × constraintDynamics called from Python (no RK4 arithmetic: a lower bound
    of a Python-driven RK4 step; Python's call overhead, ~1 µs per call, is included).
Medians over interleaved rounds.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

import pinocchio as pin

from fmu_mb.interop.pinocchio import to_pinocchio
from fmu_mb.kernels.integrators import rk4_steps_constrained
from fmu_mb.model import compile_mechanism
from fmu_mb.model.constraints import ConstraintSolver, CutJoint
from fmu_mb.samples import random_tree
from fmu_mb.simulator import Simulator

H = 1e-3


def closed_tree(seed: int, n_links: int, n_cuts: int = 2):
    """A random tree and ``n_cuts`` spherical cuts that close at a random configuration q."""
    mech = random_tree(seed, n_links=n_links)
    pmodel, ids = to_pinocchio(mech)
    rng = np.random.default_rng(900 + seed)
    q = rng.uniform(-1.0, 1.0, pmodel.nv)
    pdata = pmodel.createData()
    pin.forwardKinematics(pmodel, pdata, q)
    joint_of = {j.child: j.name for j in mech.joints}
    parent_of = {j.child: j.parent for j in mech.joints}
    names = [ln.name for ln in mech.links]
    cuts, pins = [], []
    while len(cuts) < n_cuts:
        a, b = rng.choice(names, 2, replace=False)
        if parent_of[a] == b or parent_of[b] == a:
            continue
        ja, jb = ids[joint_of[a]], ids[joint_of[b]]
        pa = rng.normal(0, 0.3, 3)
        pb = pdata.oMi[jb].actInv(pdata.oMi[ja].act(pa))
        cuts.append(CutJoint(f"cut{len(cuts)}", "spherical", a, b, origin_a=tuple(pa), origin_b=tuple(pb)))
        pins.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pmodel, ja, pin.SE3(np.eye(3), pa),
                                             jb, pin.SE3(np.eye(3), pb), pin.ReferenceFrame.LOCAL))
    mech.constraints = cuts
    return mech, pmodel, pins, q


class Pinocchio:
    def __init__(self, pmodel, constraints):
        self.model, self.data = pmodel, pmodel.createData()
        self.cms = pin.StdVec_RigidConstraintModel()
        self.cds = pin.StdVec_RigidConstraintData()
        for c in constraints:
            self.cms.append(c)
            self.cds.append(c.createData())
        pin.initConstraintDynamics(self.model, self.data, self.cms, self.cds)
        self.prox = pin.ProximalSettings(1e-12, 1e-12, 50)      # accuracy, μ, max iterations

    def qdd(self, q, v, tau):
        return pin.constraintDynamics(self.model, self.data, q, v, tau, self.cms, self.cds, self.prox).copy()

    def time_step(self, q, v, tau, n):
        m, d, cms, cds, prox = self.model, self.data, self.cms, self.cds, self.prox
        t0 = time.perf_counter()
        for _ in range(n):
            for _ in range(4):
                pin.constraintDynamics(m, d, q, v, tau, cms, cds, prox)
        return (time.perf_counter() - t0) / n


class FmuMb:
    def __init__(self, mech, formulation, q, v):
        mech.solver = ConstraintSolver(formulation=formulation)
        self.cm = compile_mechanism(mech)
        self.sim = Simulator(self.cm, H, assemble=False)
        self.sim.set_state(q=q, qd=v)
        self.x0 = self.sim.x.copy()

    def qdd(self):
        self.sim.evaluate()
        return self.sim.qdd.copy()

    def time_step(self, n):
        s = self.sim
        s.x[:] = self.x0
        t0 = time.perf_counter()
        rk4_steps_constrained(s._m, s._d, s.x, 0.0, s.tau_drive, H, n)
        return (time.perf_counter() - t0) / n


def loop_case(n: int, n_cuts: int = 2):
    """The first random closed tree of n links (seeds 0, 1, …) whose loop rows are independent, at a state with
    loop-consistent velocities, and random torques: (mech, pmodel, pins, q, v, tau)."""
    for seed in range(100):
        mech, pmodel, pins, q = closed_tree(seed, n, n_cuts)
        gp = FmuMb(mech, "gpme", q, np.zeros(pmodel.nv))
        gp.sim.evaluate()
        C = gp.sim.data.con_C.copy()
        if np.linalg.svd(C, compute_uv=False)[-1] > 1e-2:
            null = np.linalg.svd(C)[2][C.shape[0]:].T                 # loop-consistent velocities
            v = null @ np.random.default_rng(seed).normal(0, 1.0, null.shape[1])
            tau = np.random.default_rng(seed + 1).normal(0, 1.0, pmodel.nv)
            return mech, pmodel, pins, q, v, tau
    raise RuntimeError(f"no random tree of {n} links with independent loop rows among seeds 0-99")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=9, help="interleaved timing rounds (median reported)")
    args = p.parse_args(argv)
    print("closed loops: random tree + 2 spherical cut joints (6 loop rows), RK4, no Baumgarte\n")
    print("| links (coordinates) | max |q̈ fmu_mb − q̈ Pinocchio| | fmu_mb GPME µs/step | fmu_mb Lagrange µs/step "
          "| Pinocchio 4 × constraintDynamics µs | ratio GPME / Pinocchio | ratio Lagrange / Pinocchio |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in (9, 12, 24):
        mech, pmodel, pins, q, v, tau = loop_case(n)
        gp = FmuMb(mech, "gpme", q, v)
        lg = FmuMb(mech, "lagrange", q, v)
        for f in (gp, lg):
            f.sim.tau_drive[:] = tau
        pn = Pinocchio(pmodel, pins)
        err = max(np.abs(gp.qdd() - pn.qdd(q, v, tau)).max(), np.abs(lg.qdd() - pn.qdd(q, v, tau)).max())
        iters = pn.prox.iter
        steps = 2000
        tg, tl, tp = [], [], []
        for _ in range(args.rounds):
            tg.append(gp.time_step(steps))
            tl.append(lg.time_step(steps))
            tp.append(pn.time_step(q, v, tau, steps // 4))
        g, l_, pp = (statistics.median(x) * 1e6 for x in (tg, tl, tp))
        print(f"| {n} ({pmodel.nv}) | {err:.1e} | {g:.1f} | {l_:.1f} | {pp:.1f} ({iters} it.) | {g / pp:.2f} "
              f"| {l_ / pp:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
