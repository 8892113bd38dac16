"""Paper 000, section 3.1: the OLKC manipulator tracking the rectangle ABCD (Figs. 7-11).

The eight variants S_{r|fl}_L_{r|fl}_J_{nf|f} (rigid/flexible base support, rigid/RFEM link
(1,2), ideal/LuGre joints) of ``models/manipulator.py`` run for t_k = 4 s with RK4 at the model's
FMU step (Baumgarte α = 1e3, β = 1e2). Every run starts from the static equilibrium of the whole
constrained system with E at A (gravity held by the supports, the sde springs and the force of
the programmed constraint; :func:`static_start`), after which E is moved 1 cm off A along slider
(1,5) — the starting point "*" of Fig. 7 — and q̇ = 0, z = 0. Output:

  fig07_trajectory.png    E in the y^(P) z^(P) plane and its world coordinates x, y, z (Fig. 7)
  fig08_violation.png     |Φ_p| on a log scale (Fig. 8)
  fig09_joints.png        the five joint coordinates (Fig. 9)
  fig10_joint_forces.png  reaction force magnitudes |F| of the five joints (Fig. 10)
  fig11_rms.png           RMS (eq. 34) of the axial and normal joint forces (Fig. 11)
  fig_link12_deflection.png  tip deflection of link (1,2) in the L_fl runs
  manipulator.csv         time series of every variant (every 1 ms)
  manipulator_rms.csv     the RMS table

Joint forces: the reaction of each joint on its child (Simulator.reaction), resolved in the
joint frame: axial = the component along the joint axis (the sliding direction of x(1,4),
x(1,5)), normal = the magnitude of the perpendicular part. RMS (eq. 34) by the trapezoid rule on
a 0.1 ms grid (samples of the force at RK4 step ends).
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from .. import registry
from ..model import compile_mechanism
from ..simulator import Simulator
from ..statics import constrained_static_equilibrium

JOINTS = ("phi11", "psi12", "psi13", "x14", "x15")
LABELS = {"phi11": "φ(1,1)", "psi12": "ψ(1,2)", "psi13": "ψ(1,3)", "x14": "x(1,4)", "x15": "x(1,5)"}
VARIANTS = [(b, l, f) for b in ("rigid", "flexible") for l in ("rigid", "flexible") for f in ("none", "lugre")]


def variant_name(base: str, link: str, friction: str) -> str:
    """Paper 000's notation (Fig. 6): S_r/S_fl, L_r/L_fl, J_nf/J_f."""
    return (f"S_{'r' if base == 'rigid' else 'fl'}_L_{'r' if link == 'rigid' else 'fl'}"
            f"_J_{'nf' if friction == 'none' else 'f'}")


# ------------------------------------------------------------------ the paper's start
def static_start(cm, offset: float | None = None) -> np.ndarray:
    """The start of the paper's run (Fig. 7): the static equilibrium of the whole constrained
    mechanism with E held at A by the programmed rows (every coordinate free: gravity balanced
    by the supports or the base rows, the sde springs and the force at E; paper 000 starts
    from statics), then E moved ``offset`` (m; default ``START_OFFSET`` of models/manipulator.py)
    off A along slider (1,5), the point "*". The FMU's ``init.static`` (default true) starts
    from the same statics without the offset (the model solver's static_groups / static_hold)."""
    mod = registry.load("manipulator")
    offset = mod.START_OFFSET if offset is None else offset
    q0 = np.array(cm.q0, dtype=float)
    q0[cm.dof("x15.q")] -= mod.START_OFFSET
    groups = tuple(g for g in ("base", "programmed") if any(c.group == g for c in cm.constraints))
    q = constrained_static_equilibrium(cm, q=q0, hold=(), groups=groups, tol=1e-9).q
    q[cm.dof("x15.q")] += offset
    return q


# ------------------------------------------------------------------ one run
def simulate(base="rigid", link="rigid", friction="none", h: float | None = None, T: float = 4.0,
             dt_force: float = 1e-4, dt_out: float = 1e-3, formulation="gpme", n_div: int | None = None,
             method: str = "rk4", damping: float | None = None) -> dict:
    """Run one variant with RK4 at the model's RK4 step (or ``method`` at ``h``); returns the time series
    (every dt_out) and the RMS of the joint forces (trapezoid on the dt_force grid)."""
    mod = registry.load("manipulator")
    h = mod.RK4_STEP if h is None else h
    opts = dict(base=base, link=link, friction=friction, formulation=formulation)
    if n_div is not None:
        opts["n_div"] = n_div
    if damping is not None:
        opts["damping"] = damping
    cm = compile_mechanism(registry.build("manipulator", **opts))
    q0 = static_start(cm)
    sim = Simulator(cm, h=h, method=method)
    sim.set_state(q=q0)
    axis = {j: cm.model.body_axis[cm.joint(j).body].copy() for j in JOINTS}
    dof = {j: cm.dof(f"{j}.q") for j in JOINTS}
    n_f = int(round(T / dt_force))
    every = int(round(dt_out / dt_force))
    tf = np.arange(n_f + 1) * dt_force
    ax = np.zeros((n_f + 1, len(JOINTS)))
    nm = np.zeros_like(ax)
    out = {k: [] for k in ("t", "E_x", "E_y", "E_z", "violation", "deflection_y", "deflection_z")}
    for j in JOINTS:
        out[f"{j}.q"], out[f"{j}.F"] = [], []
    t0 = time.perf_counter()
    for i in range(n_f + 1):
        if i:
            sim.step(dt_force)
        sim.evaluate()
        F = {}
        for k, j in enumerate(JOINTS):
            f = sim.reaction(j)[0]
            a = float(f @ axis[j])
            ax[i, k] = a
            nm[i, k] = float(np.linalg.norm(f - a * axis[j]))
            F[j] = float(np.linalg.norm(f))
        if i % every == 0:
            E = sim.point("E")
            out["t"].append(sim.t)
            out["E_x"].append(E[0])
            out["E_y"].append(E[1])
            out["E_z"].append(E[2])
            out["violation"].append(sim.violation("path"))
            for j in JOINTS:
                out[f"{j}.q"].append(sim.q[dof[j]])
                out[f"{j}.F"].append(F[j])
            dfl = sim.deflection("link12")      # tip, frame of its first rfe; 0 when rigid
            out["deflection_y"].append(dfl[1])
            out["deflection_z"].append(dfl[2])
    wall = time.perf_counter() - t0
    series = {k: np.asarray(v) for k, v in out.items()}
    rms = {}
    for k, j in enumerate(JOINTS):
        rms[f"{j}.axial"] = rms_value(tf, ax[:, k])
        rms[f"{j}.normal"] = rms_value(tf, nm[:, k])
    return {"series": series, "rms": rms, "wall": wall, "h": h, "nv": cm.nv,
            "friction_failures": sim.friction_failures, "repartitions": sim.repartitions}


def rms_value(t, F) -> float:
    """Paper 000 eq. (34): sqrt(1/t_k ∫_0^t_k F² dt), trapezoid rule."""
    return float(np.sqrt(np.trapezoid(np.asarray(F) ** 2, t) / (t[-1] - t[0])))


# ------------------------------------------------------------------ summary numbers
def violation_bounds(series, t_moves: float = 1.0, t_transient: float = 2.2) -> tuple[float, float]:
    """(max |Φ_p| from B on (t ≥ 1 s), max |Φ_p| after the transient (t ≥ 2.2 s)), m."""
    t, v = series["t"], series["violation"]
    a, b = v[t >= t_moves - 1e-9], v[t >= t_transient - 1e-9]
    return (float(a.max()) if a.size else float("nan")), (float(b.max()) if b.size else float("nan"))


# ------------------------------------------------------------------ plots
def plot(results: dict, out_dir: Path) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mod = registry.load("manipulator")
    names = list(results)
    styles = {n: dict(color=f"C{k}", lw=1.0, ls="-" if "J_nf" in n else "--") for k, n in enumerate(names)}
    paths = []

    # Fig. 7: trajectory and coordinates of E
    fig = plt.figure(figsize=(13, 5))
    axp = fig.add_subplot(1, 2, 1)
    o = np.array(mod.PLANE_ORIGIN)
    rect_z = o[2] + np.array([0, mod.RECT_W, mod.RECT_W, 0, 0])
    rect_y = o[1] + np.array([0, 0, mod.RECT_H, mod.RECT_H, 0])
    axp.plot(rect_z, rect_y, color="0.7", lw=6, alpha=0.5, label="ABCD")
    for lab, (zc, yc) in zip("ABCD", zip(rect_z[:4], rect_y[:4])):
        axp.annotate(lab, (zc, yc), textcoords="offset points", xytext=(6, -12), fontsize=11)
    for n in names:
        s = results[n]["series"]
        axp.plot(s["E_z"], s["E_y"], label=n, **styles[n])
    s0 = results[names[0]]["series"]
    axp.plot(s0["E_z"][0], s0["E_y"][0], "k*", ms=10, label="start *")
    axp.set_xlabel("z = z^(P) [m]")
    axp.set_ylabel("y = y^(P) [m]")
    axp.set_aspect("equal")
    axp.set_title("E in the y^(P) z^(P) plane (x = %.2f m)" % o[0])
    axp.legend(fontsize=7, loc="center")
    axp.grid(True, alpha=0.3)
    for k, c in enumerate("xyz"):
        a = fig.add_subplot(3, 2, 2 * k + 2)
        for n in names:
            s = results[n]["series"]
            a.plot(s["t"], s[f"E_{c}"], **styles[n])
        a.set_ylabel(f"{c}_E [m]")
        a.grid(True, alpha=0.3)
    a.set_xlabel("t [s]")
    fig.tight_layout()
    paths.append(out_dir / "fig07_trajectory.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    # Fig. 8: violation
    fig, a = plt.subplots(figsize=(9, 4.5))
    for n in names:
        s = results[n]["series"]
        a.semilogy(s["t"], np.maximum(s["violation"], 1e-16), label=n, **styles[n])
    a.axhline(5e-3, color="k", lw=0.8, ls=":")
    a.axhline(5e-7, color="k", lw=0.8, ls=":")
    a.text(0.02, 5e-3, "5e-3 m", va="bottom", fontsize=8)
    a.text(0.02, 5e-7, "5e-7 m", va="bottom", fontsize=8)
    for tc in (1.0, 2.0, 3.0):
        a.axvline(tc, color="0.8", lw=0.8)
    a.set_xlabel("t [s]")
    a.set_ylabel("|Φ_p| [m]")
    a.set_title("programmed-constraint violation (α = 1e3, β = 1e2)")
    a.legend(fontsize=7, ncol=2)
    a.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    paths.append(out_dir / "fig08_violation.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    # Figs. 9 and 10: joint coordinates and force magnitudes
    for fname, key, unit, title in (("fig09_joints.png", "q", None, "joint coordinates"),
                                    ("fig10_joint_forces.png", "F", "N", "joint reaction force magnitude |F|")):
        fig, axes = plt.subplots(5, 1, figsize=(10, 11), sharex=True)
        for a, j in zip(axes, JOINTS):
            for n in names:
                s = results[n]["series"]
                a.plot(s["t"], s[f"{j}.{key}"], label=n, **styles[n])
            u = unit or ("m" if j.startswith("x") else "rad")
            a.set_ylabel(f"{LABELS[j]} [{u}]")
            a.grid(True, alpha=0.3)
        axes[0].set_title(title)
        axes[0].legend(fontsize=7, ncol=4)
        axes[-1].set_xlabel("t [s]")
        fig.tight_layout()
        paths.append(out_dir / fname)
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)

    # Fig. 11: RMS bars
    fig, axes = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    w = 0.8 / len(names)
    x = np.arange(len(JOINTS))
    for r, comp in enumerate(("axial", "normal")):
        for k, n in enumerate(names):
            vals = [results[n]["rms"][f"{j}.{comp}"] for j in JOINTS]
            axes[r].bar(x + (k - len(names) / 2 + 0.5) * w, vals, w, label=n, color=f"C{k}")
        axes[r].set_ylabel(f"RMS {comp} force [N]")
        axes[r].set_yscale("log")
        axes[r].grid(True, axis="y", which="both", alpha=0.3)
    axes[1].set_xticks(x, [LABELS[j] for j in JOINTS])
    axes[0].legend(fontsize=7, ncol=4)
    axes[0].set_title("RMS of the joint forces, eq. (34), t_k = %.0f s" % results[names[0]]["series"]["t"][-1])
    fig.tight_layout()
    paths.append(out_dir / "fig11_rms.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    # link (1,2) deflection
    fl = [n for n in names if "L_fl" in n]
    if fl:
        fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
        for n in fl:
            s = results[n]["series"]
            axes[0].plot(s["t"], 1e3 * s["deflection_y"], label=n, **styles[n])
            axes[1].plot(s["t"], 1e3 * s["deflection_z"], label=n, **styles[n])
        axes[0].set_ylabel("in-plane (y) [mm]")
        axes[1].set_ylabel("out-of-plane (z) [mm]")
        axes[1].set_xlabel("t [s]")
        axes[0].set_title("tip deflection of link (1,2) (frame of its first rfe)")
        axes[0].legend(fontsize=8)
        for a in axes:
            a.grid(True, alpha=0.3)
        fig.tight_layout()
        paths.append(out_dir / "fig_link12_deflection.png")
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)
    return paths


# ------------------------------------------------------------------ entry point
def run(out_dir="results/manipulator", T: float = 4.0, h: float | None = None, variants=None) -> str:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for v in variants or VARIANTS:
        results[variant_name(*v)] = simulate(*v, h=h, T=T)
    names = list(results)
    # time series CSV (1 ms)
    t = results[names[0]]["series"]["t"]
    cols = {"t": t}
    for n in names:
        for k, v in results[n]["series"].items():
            if k != "t":
                cols[f"{n}.{k}"] = v
    with open(out / "manipulator.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(cols))
        for row in zip(*cols.values()):
            w.writerow([f"{x:.10g}" for x in row])
    with open(out / "manipulator_rms.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant"] + [f"{j}.{c}" for j in JOINTS for c in ("axial", "normal")])
        for n in names:
            w.writerow([n] + [f"{results[n]['rms'][f'{j}.{c}']:.6g}" for j in JOINTS for c in ("axial", "normal")])
    paths = plot(results, out)
    r0 = results[names[0]]
    lines = [f"manipulator (paper 000 §3.1): {len(names)} variants, t_k = {T:g} s, RK4 h = {r0['h']:g} s, "
             f"α = 1e3, β = 1e2; wrote {', '.join(p.name for p in paths)}, manipulator.csv, manipulator_rms.csv "
             f"in {out}",
             "",
             f"{'variant':14s} {'nv':>3s} {'|Φ_p|(0) m':>11s} {'max t≥1 s':>10s} {'max t≥2.2 s':>11s} "
             f"{'max |defl| mm':>13s} {'wall s':>7s}"]
    for n in names:
        r = results[n]
        s = r["series"]
        moves, after = violation_bounds(s)
        dfl = 1e3 * np.max(np.hypot(s["deflection_y"], s["deflection_z"]))
        lines.append(f"{n:14s} {r['nv']:3d} {s['violation'][0]:11.3e} {moves:10.3e} {after:11.3e} {dfl:13.2f} "
                     f"{r['wall']:7.1f}")
    lines += ["", "RMS of the joint forces, eq. (34) [N] (axial / normal, joint frames)",
              f"{'variant':14s} " + " ".join(f"{LABELS[j]:>17s}" for j in JOINTS)]
    for n in names:
        rr = results[n]["rms"]
        lines.append(f"{n:14s} " + " ".join(f"{rr[f'{j}.axial']:8.2f}/{rr[f'{j}.normal']:<8.2f}" for j in JOINTS))
    return "\n".join(lines)
