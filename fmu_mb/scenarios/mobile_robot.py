"""Paper 004, section 4: the coasting mobile robot steered by d(t); redundancy and solvability.

The robot starts at 1 m/s along x0 and is steered only by the driving constraint d(t) of
the translational pair H: right turn, straight, left turn (10 s, no forces). It runs with
the three eliminations of redundant rows of section 4.4 (rows 6 & 21, 18 & 21, 19 & 21)
and with the canonical minimum-norm multipliers. Output:
  fig3_trajectories.png    platform centre of mass and knife-edge contact points
  fig4_reactions.png       non-unique reactions (revolute B, knife edge W3) differ between the
                           eliminations; unique ones (revolute D, knife edge W5) coincide
  steering.png             d(t) and the W1 inclination
  mobile_robot.csv         every series
The summary prints paper 004's analysis at the start and the end: ranks of Φ_q, Ψ, C,
the redundancy p and the QR solvability test (eq. 27) for every kinematic pair.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .. import redundancy, registry
from ..model import compile_mechanism
from ..simulator import Simulator

VARIANTS = ("C.y+W4", "W1+W4", "W2+W4", "min_norm")
PAIRS = ("A", "B", "C", "D", "E", "F", "G", "H", "drive", "W1", "W2", "W3", "W4", "W5")


def simulate(eliminate: str, T: float = 10.0, dt: float = 0.02) -> tuple[dict, list]:
    cm = compile_mechanism(registry.build("mobile_robot", eliminate=eliminate))
    sim = Simulator(cm, 1e-3)
    plat = cm.joint("platform").dofadr
    s = {k: [] for k in ("t", "x", "y", "heading", "d", "steer")}
    for p in ("W1", "W2", "W3", "W4", "W5"):
        s[f"{p}.x"], s[f"{p}.y"] = [], []
    for pair in PAIRS:
        s[f"{pair}.F"] = []
    analyses = []
    times = np.arange(0.0, T + 0.5 * dt, dt)
    for t in times:
        sim.advance_to(t)
        sim.evaluate()
        s["t"].append(t)
        s["x"].append(sim.q[plat])
        s["y"].append(sim.q[plat + 1])
        s["heading"].append(sim.q[plat + 2])
        s["d"].append(sim.data.con_g[cm.row("drive"), 0])
        s["steer"].append(sim.q[cm.joint("carrier_front").dofadr + 2] - sim.q[plat + 2])
        for p in ("W1", "W2", "W3", "W4", "W5"):
            r = sim.point(f"{p}_contact")
            s[f"{p}.x"].append(r[0])
            s[f"{p}.y"].append(r[1])
        for pair in PAIRS:
            F, _ = sim.constraint_reaction(pair)
            s[f"{pair}.F"].append(F[:2].copy())
        if abs(t) < 1e-12 or abs(t - T) < 1e-9:
            analyses.append((t, redundancy.analyse(sim), sim.uniqueness()))
    return {k: np.array(v) for k, v in s.items()}, analyses


def plot(runs: dict, out_dir: Path) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paths = []
    s = runs["min_norm"]
    fig, ax = plt.subplots(figsize=(9, 6))
    ax.plot(s["x"], s["y"], "k", lw=2, label="platform centre of mass")
    for p in ("W1", "W2", "W3", "W4", "W5"):
        ax.plot(s[f"{p}.x"], s[f"{p}.y"], lw=0.9, label=p)
    ax.set(xlabel="x0 [m]", ylabel="y0 [m]", title="Fig. 3 — trajectories of selected points of the robot",
           aspect="equal")
    ax.grid(True)
    ax.legend()
    paths.append(out_dir / "fig3_trajectories.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    panels = ((0, 0, "B", 0, "revolute B, x (non-unique)"), (0, 1, "B", 1, "revolute B, y (non-unique)"),
              (0, 2, "W3", None, "knife edge W3 (non-unique)"), (1, 0, "D", 0, "revolute D, x (unique)"),
              (1, 1, "D", 1, "revolute D, y (unique)"), (1, 2, "W5", None, "knife edge W5 (unique)"))
    for r, c, pair, comp, title in panels:
        ax = axes[r, c]
        for v in VARIANTS:
            F = runs[v][f"{pair}.F"]
            val = F[:, comp] if comp is not None else np.linalg.norm(F, axis=1) * np.sign(F[:, 1] + 1e-300)
            ax.plot(runs[v]["t"], val, label=v.replace("min_norm", "minimum norm"),
                    ls="-" if v != "min_norm" else "--")
        ax.set(xlabel="t [s]", ylabel="force on the first body [N]", title=title)
        ax.grid(True)
        ax.legend(fontsize=8)
    fig.suptitle("Fig. 4 — constraint reactions for different eliminations of the redundant rows")
    fig.tight_layout()
    paths.append(out_dir / "fig4_reactions.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(s["t"], 1e3 * s["d"], label="d(t) [mm]")
    ax.plot(s["t"], np.degrees(s["steer"]), label="W1 inclination [deg]")
    ax.plot(s["t"], np.degrees(s["heading"]), label="heading [deg]")
    ax.set(xlabel="t [s]", title="Fig. 2 — steering: slide in H, wheel inclination, platform heading")
    ax.grid(True)
    ax.legend()
    paths.append(out_dir / "steering.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def run(out: str = "results/mobile_robot") -> str:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, analyses = {}, {}
    for v in VARIANTS:
        runs[v], analyses[v] = simulate(v)
    paths = plot(runs, out_dir)
    with open(out_dir / "mobile_robot.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t", "x", "y", "heading", "d", "steer"] + [f"{v}.{p}.F{k}" for v in VARIANTS for p in PAIRS
                                                              for k in "xy"])
        s = runs["min_norm"]
        for i, t in enumerate(s["t"]):
            w.writerow([f"{t:.3f}"] + [f"{s[k][i]:.9g}" for k in ("x", "y", "heading", "d", "steer")]
                       + [f"{runs[v][f'{p}.F'][i][k]:.9g}" for v in VARIANTS for p in PAIRS for k in range(2)])
    lines = ["mobile_robot (paper 004 section 4): coasting at 1 m/s, steered by d(t), 10 s, RK4 h = 1 ms, projection"]
    for t, a, flags in analyses["min_norm"]:
        uq = [p for p in PAIRS if a.unique[p]]
        lines.append(f"t = {t:4.1f} s: rank Φ_q = {a.rank_phi}, rank Ψ = {a.rank_psi}, rank C = {a.rank} of "
                     f"{a.rows} rows, p = {a.redundancy}; unique (B_X = 0): {', '.join(uq)}; non-unique: "
                     f"{', '.join(p for p in PAIRS if not a.unique[p])}; kernel flags agree: "
                     f"{all(flags[p] == a.unique[p] for p in PAIRS)}")
    ref = runs["min_norm"]
    lines.append("variant    | max |Δq| to min-norm [m, rad] | max |ΔF| unique pairs [N] | max |ΔF| non-unique [N]")
    for v in VARIANTS[:3]:
        dq = max(np.abs(runs[v][k] - ref[k]).max() for k in ("x", "y", "heading"))
        du = max(np.abs(runs[v][f"{p}.F"] - ref[f"{p}.F"]).max() for p in PAIRS if analyses[v][0][1].unique[p])
        dn = max(np.abs(runs[v][f"{p}.F"] - ref[f"{p}.F"]).max() for p in PAIRS if not analyses[v][0][1].unique[p])
        lines.append(f"{v:10s} | {dq:.1e}                       | {du:.1e}                   | {dn:.1e}")
    lines.append(f"platform at 10 s: x = {ref['x'][-1]:.4f} m, y = {ref['y'][-1]:.4f} m, heading "
                 f"{np.degrees(ref['heading'][-1]):.3f} deg (parallel to x0 again)")
    lines += [f"wrote {p}" for p in paths] + [f"wrote {out_dir / 'mobile_robot.csv'}"]
    return "\n".join(lines)
