"""Paper 002, section 5.1: the five-axis tree under prescribed motion (Figs. 13–15).

Every joint accelerates at q̈ = 0.2 rad/s² from rest for 10 s (q = 0.1 t²,
q̇ = 0.2 t). Paper 002's Algorithm 1 for a tree: inverse dynamics gives the joint
constraint wrenches (eqs. 39, 44, 46), from them the equivalent normal loads
(eq. 47), the friction torques (eq. 42 Coulomb–viscous, eq. 52 Stribeck) and
the driving torques (eq. 54). We compute the same with fmu_mb's recursive
Newton–Euler pass; the output is
  fig13_constraint_torques.png  τ_r, the constraint (bending) moment of joints 1, 2, 4
  fig14_constraint_forces.png   f_r (radial) and f_m (axial) constraint forces of joints 1, 2, 4
  fig15_driving_torques.png     driving torques of joints 1, 2, 4: no friction,
                                Coulomb–viscous, Stribeck
  five_axis.csv                 every series, one row per time sample
Paper 002 compares these curves with ADAMS graphically; its figures' numbers
did not survive conversion, so the plots are for comparison by eye.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .. import algorithms as alg
from .. import registry
from ..model import compile_mechanism, make_data

JOINTS = ("joint1", "joint2", "joint4")
FRICTION = ("none", "coulomb_viscous", "stribeck")


def prescribed_motion(t, qdd=0.2, n=5):
    """q, q̇, q̈ of every joint at time t: constant acceleration from rest."""
    return np.full(n, 0.5 * qdd * t * t), np.full(n, qdd * t), np.full(n, qdd)


def compute(T: float = 10.0, dt: float = 0.01) -> dict:
    """Time series of the scenario (dict of arrays, keys as in the CSV)."""
    times = np.arange(0.0, T + 0.5 * dt, dt)
    out = {"t": times}
    for fr in FRICTION:
        cm = compile_mechanism(registry.build("five_axis", friction=fr))
        data = make_data(cm.model)
        qdd = registry.load("five_axis").QDD
        cols = {f"{fr}.{j}.{k}": np.zeros_like(times) for j in JOINTS
                for k in ("tau_drive", "tau_friction", "load", "tau_r", "f_r", "f_m")}
        for i, t in enumerate(times):
            q, v, a = prescribed_motion(t, qdd, cm.nv)
            tau = alg.inverse_dynamics(cm.model, data, q, v, a)
            for j in JOINTS:
                ji = cm.joint(j)
                F, M = data.fF[ji.body], data.fM[ji.body]
                axis = cm.model.body_axis[ji.body]
                cols[f"{fr}.{j}.tau_drive"][i] = tau[ji.dofadr]
                cols[f"{fr}.{j}.tau_friction"][i] = data.tau_fric[ji.dofadr]
                cols[f"{fr}.{j}.load"][i] = data.fric_load[ji.dofadr]
                cols[f"{fr}.{j}.tau_r"][i] = np.linalg.norm(M - (M @ axis) * axis)      # eq. (39)
                cols[f"{fr}.{j}.f_r"][i] = np.linalg.norm(F - (F @ axis) * axis)        # eq. (44)
                cols[f"{fr}.{j}.f_m"][i] = abs(F @ axis)                                # eq. (46)
        out.update(cols)
    return out


def plot(series: dict, out_dir: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = series["t"]
    paths = []
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, j in zip(axes, JOINTS):
        ax.plot(t, series[f"none.{j}.tau_r"], label="τ_r (eq. 39)")
        ax.set_title(f"{j}: constraint torque")
        ax.set_xlabel("t [s]")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("N·m")
    axes[0].legend()
    fig.tight_layout()
    paths.append(out_dir / "fig13_constraint_torques.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, j in zip(axes, JOINTS):
        ax.plot(t, series[f"none.{j}.f_r"], label="f_r radial (eq. 44)")
        ax.plot(t, series[f"none.{j}.f_m"], label="f_m axial (eq. 46)")
        ax.set_title(f"{j}: constraint force")
        ax.set_xlabel("t [s]")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("N")
    axes[0].legend()
    fig.tight_layout()
    paths.append(out_dir / "fig14_constraint_forces.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(2, 3, figsize=(13, 6.4), sharex=True)
    names = {"none": "no friction", "coulomb_viscous": "Coulomb–viscous (eq. 42)", "stribeck": "Stribeck (eq. 52)"}
    for c, j in enumerate(JOINTS):
        for fr in FRICTION:
            axes[0, c].plot(t, series[f"{fr}.{j}.tau_drive"], label=names[fr])
            if fr != "none":
                axes[1, c].plot(t, series[f"{fr}.{j}.tau_drive"] - series[f"none.{j}.tau_drive"],
                                label=names[fr], color="C1" if fr == "coulomb_viscous" else "C2")
        axes[0, c].set_title(f"{j}: driving torque")
        axes[1, c].set_title(f"{j}: with friction − without")
        axes[1, c].set_xlabel("t [s]")
        for r in range(2):
            axes[r, c].grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("N·m")
    axes[1, 0].set_ylabel("N·m")
    axes[0, 0].legend()
    axes[1, 0].legend()
    fig.tight_layout()
    paths.append(out_dir / "fig15_driving_torques.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def run(out_dir="results/five_axis", T: float = 10.0, dt: float = 0.01) -> str:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    series = compute(T, dt)
    keys = list(series)
    with open(out / "five_axis.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for row in zip(*(series[k] for k in keys)):
            w.writerow([f"{x:.10g}" for x in row])
    paths = plot(series, out)
    lines = [f"five_axis (paper 002, q̈ = 0.2 rad/s² on every joint, {T:g} s): wrote "
             + ", ".join(str(p) for p in paths) + f", {out / 'five_axis.csv'}",
             f"{'joint':8s} {'max τ_r N·m':>12s} {'max f_r N':>10s} {'f_m N':>8s} "
             f"{'τ_d(T) none':>12s} {'Coul.–visc.':>12s} {'Stribeck':>10s}"]
    for j in JOINTS:
        lines.append(f"{j:8s} {series[f'none.{j}.tau_r'].max():12.4f} {series[f'none.{j}.f_r'].max():10.4f} "
                     f"{series[f'none.{j}.f_m'][-1]:8.3f} {series[f'none.{j}.tau_drive'][-1]:12.4f} "
                     f"{series[f'coulomb_viscous.{j}.tau_drive'][-1]:12.4f} "
                     f"{series[f'stribeck.{j}.tau_drive'][-1]:10.4f}")
    return "\n".join(lines)
