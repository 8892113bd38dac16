"""Paper 001: the crane's programmed motion with support, link and joint-friction variants (Figs. 6–8).

Every run: RK4 h = 2.5e-4 s, Baumgarte α = 110, β = 20, initial configuration of eq. (23)
with the base and jib elastic coordinates from statics, column torque −4000 N·m for
0 ≤ t ≤ 0.1 s (eq. 21), E held on the ellipse a = 3 m, b = 2 m and lifted 0.2 m over 1 s
(eqs. 17, 22), 5 s. Output:
  fig6_rigid.png          joint coordinates, z_E and the trajectory of E, rigid links:
                          no friction, Dahl, LuGre
  fig7_flexible.png       the same with the flexible jib (RFEM, 4 rfes) and its tip deflection
  fig8_support.png        rigid links with LuGre friction, vertical support stiffness
                          s_z = 1e5, 1e6, 1e7 N/m: base z, θ (about y), φ (about x)
  violations.png          ellipse and lift constraint violations (log scale)
  crane.csv               every series
Paper 001's figures did not survive conversion; its text reports the ellipse reached
after 1.25 s, similar Dahl and LuGre results (Dahl resisting a little more), extra
vibration from the flexible jib that friction damps, and larger base motion for softer
supports — the summary prints the numbers that check these statements.
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from .. import registry
from ..model import compile_mechanism
from ..simulator import Simulator
from ..statics import static_equilibrium

RUNS = {"rigid.none": dict(link="rigid", friction="none"), "rigid.dahl": dict(link="rigid", friction="dahl"),
        "rigid.lugre": dict(link="rigid", friction="lugre"), "flexible.none": dict(link="flexible", friction="none"),
        "flexible.dahl": dict(link="flexible", friction="dahl"),
        "flexible.lugre": dict(link="flexible", friction="lugre"),
        "sz1e5": dict(link="rigid", friction="lugre", support_z=1e5),
        "sz1e6": dict(link="rigid", friction="lugre", support_z=1e6)}


def simulate(T: float = 5.0, dt: float = 0.01, **options) -> tuple[dict, float]:
    """Series of one crane run (dict of arrays) and its wall time: paper 001's undamped structure
    (model option damping = 0) unless ``damping`` is given."""
    mod = registry.load("crane")
    cm = compile_mechanism(mod.build(**{"damping": 0.0, **options}))
    sim = Simulator(cm, mod.RK4_STEP)
    sim.set_state(q=static_equilibrium(cm).q)
    col, jib, arm, base = (cm.joint(n).dofadr for n in ("column", "jib", "arm", "base"))
    cols = {k: [] for k in ("t", "column", "jib", "arm", "xE", "yE", "zE", "ellipse", "lift", "base_z",
                            "base_theta", "base_phi", "deflection")}
    t0 = time.perf_counter()
    while True:
        sim.evaluate()
        E = sim.point("E")
        for k, v in (("t", sim.t), ("column", sim.q[col]), ("jib", sim.q[jib]), ("arm", sim.q[arm]),
                     ("xE", E[0]), ("yE", E[1]), ("zE", E[2]), ("ellipse", sim.violation("ellipse")),
                     ("lift", sim.violation("lift")), ("base_z", sim.q[base + 2]), ("base_theta", sim.q[base + 4]),
                     ("base_phi", sim.q[base + 5])):
            cols[k].append(v)
        dfl = sim.deflection("jib")         # jib tip deflection, frame of its first rfe (0 when rigid)
        cols["deflection"].append(float(np.hypot(dfl[1], dfl[2])))
        if sim.t >= T - 1e-9:
            break
        if sim.t < mod.TORQUE_TIME - 1e-9:
            sim.tau_drive[col] = mod.TORQUE
            sim.step(min(dt, mod.TORQUE_TIME - sim.t))
        else:
            sim.tau_drive[col] = 0.0
            sim.step(dt)
    return {k: np.array(v) for k, v in cols.items()}, time.perf_counter() - t0


def plot(runs: dict, out_dir: Path) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paths = []
    for fig_name, link, title in (("fig6_rigid.png", "rigid", "Fig. 6 — rigid links"),
                                  ("fig7_flexible.png", "flexible", "Fig. 7 — flexible jib (4 rfes)")):
        fig, axes = plt.subplots(2, 3, figsize=(15, 8))
        for fr in ("none", "dahl", "lugre"):
            s = runs[f"{link}.{fr}"]
            for ax, k in zip(axes[0], ("column", "jib", "arm")):
                ax.plot(s["t"], np.degrees(s[k]), label=fr)
                ax.set(xlabel="t [s]", ylabel=f"{k} angle [deg]", title=f"joint {k}")
            axes[1, 0].plot(s["t"], s["zE"], label=fr)
            axes[1, 1].plot(s["xE"], s["yE"], label=fr)
            axes[1, 2].plot(s["t"], 1e3 * s["deflection"], label=fr)
        th = np.linspace(0, 2 * np.pi, 400)
        axes[1, 1].plot(3 * np.cos(th), 2 * np.sin(th), "k:", label="ellipse")
        axes[1, 0].set(xlabel="t [s]", ylabel="z_E [m]", title="lift of E (eq. 22)")
        axes[1, 1].set(xlabel="x_E [m]", ylabel="y_E [m]", title="trajectory of E", aspect="equal")
        axes[1, 2].set(xlabel="t [s]", ylabel="[mm]", title="jib tip deflection")
        for ax in axes.flat:
            ax.grid(True)
            ax.legend(fontsize=8)
        fig.suptitle(f"{title}: no friction, Dahl, LuGre")
        fig.tight_layout()
        paths.append(out_dir / fig_name)
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for key, lab in (("sz1e5", "s_z = 1e5 N/m"), ("sz1e6", "s_z = 1e6 N/m"), ("rigid.lugre", "s_z = 1e7 N/m")):
        s = runs[key]
        axes[0].plot(s["t"], 1e3 * s["base_z"], label=lab)
        axes[1].plot(s["t"], np.degrees(s["base_theta"]), label=lab)
        axes[2].plot(s["t"], np.degrees(s["base_phi"]), label=lab)
    for ax, yl in zip(axes, ("base z [mm]", "base θ (about y) [deg]", "base φ (about x) [deg]")):
        ax.set(xlabel="t [s]", ylabel=yl)
        ax.grid(True)
        ax.legend()
    fig.suptitle("Fig. 8 — rigid links, LuGre friction, vertical support stiffness")
    fig.tight_layout()
    paths.append(out_dir / "fig8_support.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for key in ("rigid.none", "flexible.lugre"):
        s = runs[key]
        ax.semilogy(s["t"], np.maximum(s["ellipse"], 1e-16), label=f"ellipse, {key}")
        ax.semilogy(s["t"], np.maximum(s["lift"], 1e-16), "--", label=f"lift, {key}")
    ax.axhline(1e-4, color="k", lw=0.8)
    ax.axvline(1.25, color="k", lw=0.8)
    ax.set(xlabel="t [s]", ylabel="violation [m]", title="programmed-constraint violations (α = 110, β = 20)")
    ax.grid(True)
    ax.legend(fontsize=8)
    paths.append(out_dir / "violations.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def run(out: str = "results/crane") -> str:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, walls = {}, {}
    for key, opts in RUNS.items():
        runs[key], walls[key] = simulate(**opts)
    paths = plot(runs, out_dir)
    with open(out_dir / "crane.csv", "w", newline="") as f:
        w = csv.writer(f)
        cols = [k for k in runs["rigid.none"] if k != "t"]
        w.writerow(["t"] + [f"{r}.{c}" for r in runs for c in cols])
        for i, t in enumerate(runs["rigid.none"]["t"]):
            w.writerow([f"{t:.4f}"] + [f"{runs[r][c][i]:.9g}" for r in runs for c in cols])
    lines = ["crane (paper 001): RK4 h = 2.5e-4 s, α = 110, β = 20, −4000 N·m on the column for 0.1 s, 5 s",
             "run             | ellipse viol. t=0 / 1.25 s / max after 1.25 s [m] | lift err max [m] | column at 5 s "
             "[deg] | max jib deflection [mm] | wall [s] (real-time factor)"]
    for key, s in runs.items():
        i125 = int(np.argmin(np.abs(s["t"] - 1.25)))
        after = s["ellipse"][s["t"] >= 1.25 - 1e-9].max()
        lines.append(f"{key:15s} | {s['ellipse'][0]:.2e} / {s['ellipse'][i125]:.2e} / {after:.2e}         | "
                     f"{s['lift'].max():.1e}          | {np.degrees(s['column'][-1]):8.2f}          | "
                     f"{1e3 * s['deflection'].max():6.2f}                  | {walls[key]:.2f} ({5.0 / walls[key]:.1f}×)")
    rz = {k: 1e3 * np.ptp(runs[k]["base_z"]) for k in ("sz1e5", "sz1e6", "rigid.lugre")}
    lines.append("base z range [mm] for s_z = 1e5 / 1e6 / 1e7 N/m: " + " / ".join(f"{v:.3f}" for v in rz.values()))
    lines += [f"wrote {p}" for p in paths] + [f"wrote {out_dir / 'crane.csv'}"]
    return "\n".join(lines)
