"""Paper 002, section 5.2: the three-loop closed chain driven at 0.1 rad/s (Figs. 17–19).

The active joint 1'' turns at 0.1 rad/s from the tabulated configuration for 10 s
(the mechanism locks at about 15.8 s, when links 1 and 4 stretch out). Output:
  fig17_passive_angles.png     the six passive joint angles
  fig18_cut_forces.png         forces of the three cut joints (world components, magnitude)
  fig19_active_joint.png       reaction force of the active joint 1'' and its driving torque
                               without friction, Coulomb–viscous (eq. 42), Stribeck (eq. 52)
  three_loop.csv               every series
Paper 002 compares its curves with ADAMS graphically; the numbers did not survive the
conversion, so the plots are for comparison by eye. The loops are solved to 1e-12 m
every step (projection); the summary lists the largest violation.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .. import registry
from ..model import compile_mechanism
from ..simulator import Simulator

PASSIVE = ("joint1", "joint2", "joint3", "joint4", "joint1p", "joint2p")
CUTS = (("cut1", "1pp"), ("cut2", "4"), ("cut3", "3"))
FRICTION = ("none", "coulomb_viscous", "stribeck")


def compute(T: float = 10.0, dt: float = 0.02) -> dict:
    out = {}
    for fr in FRICTION:
        cm = compile_mechanism(registry.build("three_loop", friction=fr))
        sim = Simulator(cm, 1e-3)
        act = cm.joint("joint1pp")
        rows, viol = [], 0.0
        times = np.arange(0.0, T + 0.5 * dt, dt)
        for t in times:
            sim.advance_to(t)
            sim.evaluate()
            row = [sim.q[cm.joint(j).dofadr] for j in PASSIVE]
            for cut, _ in CUTS:
                ci = cm.constraint(cut)
                F, _ = sim.constraint_reaction(cut)
                R = sim.data.oR[ci.body] @ ci.frame_R          # joint frame → world
                row += list((R @ F)[:2])
            Fa, _ = sim.reaction("joint1pp")
            row += [np.hypot(Fa[0], Fa[1]), sim.tau_required[act.dofadr], sim.data.tau_fric[act.dofadr]]
            rows.append(row)
            viol = max(viol, max(sim.violation(c) for c, _ in CUTS))
        a = np.array(rows)
        out["t"] = times
        names = [f"{j}.q" for j in PASSIVE] + [f"{c}.F{k}" for c, _ in CUTS for k in "xy"] + \
            ["joint1pp.F_radial", "joint1pp.tau_drive", "joint1pp.tau_friction"]
        for k, n in enumerate(names):
            out[f"{fr}.{n}"] = a[:, k]
        out[f"{fr}.max_violation"] = viol
    return out


def plot(series: dict, out_dir: Path) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t, paths = series["t"], []
    fig, ax = plt.subplots(figsize=(8, 5))
    for j in PASSIVE:
        ax.plot(t, np.degrees(series[f"none.{j}.q"]), label=j)
    ax.set(xlabel="t [s]", ylabel="angle [deg]", title="Fig. 17 — rotation angles of the six passive joints")
    ax.grid(True)
    ax.legend()
    paths.append(out_dir / "fig17_passive_angles.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.5))
    for ax, (cut, link) in zip(axes, CUTS):
        fx, fy = series[f"none.{cut}.Fx"], series[f"none.{cut}.Fy"]
        ax.plot(t, fx, label="x")
        ax.plot(t, fy, label="y")
        ax.plot(t, np.hypot(fx, fy), "k--", label="|F|")
        ax.set(xlabel="t [s]", ylabel="force [N]", title=f"{cut}: force on link {link}")
        ax.grid(True)
        ax.legend()
    fig.suptitle("Fig. 18 — constraint forces of the three closed-loop (cut) joints")
    fig.tight_layout()
    paths.append(out_dir / "fig18_cut_forces.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    a1.plot(t, series["none.joint1pp.F_radial"], "k")
    a1.set(xlabel="t [s]", ylabel="force [N]", title="Fig. 19 — constraint force of the active joint 1''")
    a1.grid(True)
    for fr in FRICTION:
        a2.plot(t, series[f"{fr}.joint1pp.tau_drive"], label=fr.replace("_", "–"))
    a2.set(xlabel="t [s]", ylabel="torque [N·m]", title="driving torque of joint 1'' (eq. 65)")
    a2.grid(True)
    a2.legend()
    fig.tight_layout()
    paths.append(out_dir / "fig19_active_joint.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def run(out: str = "results/three_loop") -> str:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    s = compute()
    paths = plot(s, out_dir)
    keys = [k for k in s if k != "t" and not k.endswith("max_violation")]
    with open(out_dir / "three_loop.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t"] + keys)
        for i, t in enumerate(s["t"]):
            w.writerow([f"{t:.4f}"] + [f"{s[k][i]:.9g}" for k in keys])
    lines = ["three_loop (paper 002 section 5.2), active joint 1'' at 0.1 rad/s, RK4 h = 1 ms, loops projected",
             "   t [s] | passive angles 1, 2, 3, 4, 1', 2' [deg]              | |cut1| |cut2| |cut3| [N] | "
             "tau_d [N·m]: none  C-V  Stribeck"]
    for tt in (0.0, 5.0, 10.0):
        i = int(np.argmin(np.abs(s["t"] - tt)))
        ang = " ".join(f"{np.degrees(s[f'none.{j}.q'][i]):7.3f}" for j in PASSIVE)
        mags = " ".join(f"{np.hypot(s[f'none.{c}.Fx'][i], s[f'none.{c}.Fy'][i]):6.2f}" for c, _ in CUTS)
        taus = "  ".join(f"{s[f'{fr}.joint1pp.tau_drive'][i]:.5f}" for fr in FRICTION)
        lines.append(f"  {tt:5.1f}  | {ang} | {mags} | {taus}")
    lines.append("max loop violation [m]: " + ", ".join(f"{fr} {s[f'{fr}.max_violation']:.1e}" for fr in FRICTION))
    lines += [f"wrote {p}" for p in paths] + [f"wrote {out_dir / 'three_loop.csv'}"]
    return "\n".join(lines)
