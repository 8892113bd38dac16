"""Paper 000, section 3.2: the closed-loop RPSUP mechanism in programmed motion (Figs. 14–20).

E (the centre of the spherical joint) follows the rectangle A→B→C→D→A in the y^(P) z^(P)
plane inclined at 45° (eq. 35), quintic moves of 1 s (eq. 28), Baumgarte α = 500, β = 50
(eq. 37), RK4 at the model's FMU step. Eight cases in the paper's notation
S_{r|fl}_L_{r|fl}_J_{nf|f}: rigid (eq. 32) or flexible (eqs. 15–16) base support, rigid or
RFEM coupler (eqs. 17–18), ideal or LuGre joints (eqs. 19–22). Every case starts "from
solving the statics case" (:func:`static_start`: loop closed, arm joints ψ(1,1),
x(1,2) held, base and coupler in equilibrium), so with a flexible base E starts off A
and the programmed rows remove the offset (the slow Baumgarte pole, −2.51 1/s).

Output (``results/rpsup``):
  fig14_trajectory.png            E in the y^(P) z^(P) plane, and a zoom at A
  fig15_coordinates.png           x, y, z of E (global frame)
  fig16_velocity_acceleration.png y-components of E's velocity and acceleration
  fig17_violations.png            cut-joint R violation in the joint frame (log) and |Φ_p|
  fig18_joint_coordinates.png     ψ(1,1), x(1,2), S angles, z(2,1), ψ(2,2), base y
  fig19_coupler_deformation.png   coupler displacement in its rfe-0 frame at t = 0, 1, 2, 3, 4 s
  fig20_rms_forces.png            RMS normal and axial joint forces (eq. 34)
  rpsup.csv                       the series of every case (5 ms samples)
Paper 000's figures and tables did not survive conversion: the comparison is qualitative;
its two numbers are the 4.39 cm cut-joint violation of S_r_L_r_J_nf at t = 2.014 s (which we
do not get: see the summary) and the ≈ 4 cm coupler deformation at t = 2 s with the rigid
support (the coupler section was calibrated to it).

E's velocity is exact (point velocity from q̇); its acceleration is the central difference
of the velocity samples (2 ms).
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from .. import registry
from ..kernels.kinematics import point_velocity
from ..model import compile_mechanism
from ..simulator import Simulator
from ..statics import constrained_static_equilibrium

CASES = [(b, c, f) for b in ("rigid", "flexible") for c in ("rigid", "flexible") for f in ("none", "lugre")]
JOINTS = ("R11", "P12", "S13", "P21", "R22")
FORCE_JOINTS = JOINTS + ("cut_R",)
#: axis of each joint in its reaction frame (axial force along it; S13: the coupler axis)
AXIS = {"R11": 2, "P12": 0, "S13": 0, "P21": 2, "R22": 2, "cut_R": 2}
SHAPE_TIMES = (0.0, 1.0, 2.0, 3.0, 4.0)


def case_name(base, coupler, friction) -> str:
    return f"S_{'r' if base == 'rigid' else 'fl'}_L_{'r' if coupler == 'rigid' else 'fl'}_J_" \
           f"{'nf' if friction == 'none' else 'f'}"


def cut_violation_local(sim) -> np.ndarray:
    """Position violation r_a − r_b of the cut joint R in its frame J_a (m, (3,)), last evaluate."""
    ci = sim.cm.constraint("cut_R")
    d = sim.data
    R = d.oR[ci.body] @ ci.frame_R
    phi = np.array([d.con_phi[k] for k in ci.rows[:3]])        # world x, y, z rows
    return R.T @ phi


def e_velocity(sim) -> np.ndarray:
    body, p = sim.cm.points["E"]
    sim.k.forward_kinematics(sim._m, sim._d, sim.q, sim.qd)
    return np.array(point_velocity(sim.data.oR, sim.data.w, sim.data.vl, body, p[0], p[1], p[2]))


# --------------------------------------------------------------------------- statics and coupler shape
def static_start(cm, q=None, tol: float = 1e-10):
    """Initial conditions "from solving the statics case" (paper 000 section 3.2) for a
    compiled RPSUP: at rest under gravity, support and sde springs, the arm joints
    ``STATIC_HOLD`` of models/rpsup.py (ψ(1,1), x(1,2): they place E) held, the loop (and the
    fixed base) closed. fmu_mb.statics.constrained_static_equilibrium; the FMU's
    ``init.static`` does the same. Returns its solution: q, λ of the loop and base rows,
    ``holding`` (the drive forces of the held joints, ≈ 0 elsewhere), residual."""
    mod = registry.load("rpsup")
    return constrained_static_equilibrium(cm, q=q, hold=mod.STATIC_HOLD, groups=("kinematic", "base"), tol=tol)


def coupler_shape(sim) -> tuple[np.ndarray, np.ndarray]:
    """Deformation of the coupler at the simulator's current state (paper 000 Fig. 19).

    Returns (x, u): x (n,) the undeformed abscissae of the rfe joints and the tip, m, and
    u (n, 3) their displacement from the straight coupler in the frame of rfe 0 (the RFEM
    link frame; u[-1] is the FMU output coupler.deflection). A rigid coupler gives u = 0."""
    cm = sim.cm
    beams = [b for b in cm.beams if b.name == "coupler"]
    if not beams:
        return np.array([0.0, registry.load("rpsup").COUPLER_LENGTH]), np.zeros((2, 3))
    info = beams[0]
    tip = sim.deflection("coupler")                  # the FMU's output (kinematics at the current state)
    oR, op = sim.data.oR, sim.data.op
    b0 = info.rfe_bodies[0]
    u = [oR[b0].T @ (op[b] - op[b0]) - np.array([x, 0.0, 0.0]) for x, b in zip(info.rfe_start, info.rfe_bodies)]
    return np.array(list(info.rfe_start) + [info.length]), np.array(u + [tip])


def chord_sag(sim) -> float:
    """Largest distance of the coupler's rfe joints from the chord S–U (m): the deflection of a
    link pinned at both ends, independent of the rfe-0 frame."""
    x, u = coupler_shape(sim)
    p = np.column_stack([x, np.zeros_like(x), np.zeros_like(x)]) + u
    a, b = p[0], p[-1]
    e = (b - a) / np.linalg.norm(b - a)
    r = p - a
    return float(np.max(np.linalg.norm(r - np.outer(r @ e, e), axis=1)))


def simulate(base, coupler, friction, T=None, dt=0.002, h=None) -> dict:
    """One case from statics: time series (dict of arrays) and coupler shapes."""
    mod = registry.load("rpsup")
    T = mod.STOP_TIME if T is None else T
    h = mod.RK4_STEP if h is None else h
    cm = compile_mechanism(mod.build(base=base, coupler=coupler, friction=friction))
    st = static_start(cm)
    sim = Simulator(cm, h=h)
    sim.set_state(q=st.q, qd=np.zeros(cm.nv))
    n = int(round(T / dt))
    R_P, O_P = mod.R_P, mod.O_P
    keys = (["t", "E.x", "E.y", "E.z", "E.xP", "E.yP", "E.zP", "E.vy", "cut.x", "cut.y", "cut.z", "cut.norm",
             "cut.angle", "path.y", "path.z", "path.norm", "tip.y", "tip.z", "tip.norm", "sag", "base.y",
             "balance", "kinetic"] + [f"q.{j}" for j in ("R11", "P12", "S13.psi", "S13.theta", "S13.phi", "P21",
                                                        "R22")]
            + [f"{j}.{k}" for j in FORCE_JOINTS for k in ("normal", "axial")])
    out = {k: np.zeros(n + 1) for k in keys}
    shapes = {}
    hasp = any(c.name == "path" for c in cm.constraints)
    dofs = [cm.dof(n_) for n_ in ("R11.q", "P12.q", "S13.psi", "S13.theta", "S13.phi", "P21.q", "R22.q")]
    t0 = time.perf_counter()
    for i in range(n + 1):
        if i:
            sim.step(dt)
        sim.evaluate()
        E = sim.point("E")
        v = e_velocity(sim)
        loc = cut_violation_local(sim)
        xs, u = coupler_shape(sim)
        row = {"t": sim.t, "E.x": E[0], "E.y": E[1], "E.z": E[2], "E.vy": v[1],
               "cut.x": loc[0], "cut.y": loc[1], "cut.z": loc[2], "cut.norm": sim.violation("cut_R"),
               "cut.angle": sim.violation_angle("cut_R"),
               "tip.y": u[-1, 1], "tip.z": u[-1, 2], "tip.norm": float(np.linalg.norm(u[-1])),
               "sag": chord_sag(sim), "base.y": sim.q[cm.dof("base.y")]}
        eP = R_P.T @ (E - O_P)
        row["E.xP"], row["E.yP"], row["E.zP"] = eP
        if hasp:
            ci = cm.constraint("path")
            row["path.y"], row["path.z"] = (sim.data.con_phi[k] for k in ci.rows)
            row["path.norm"] = sim.violation("path")
        e = sim.energies()
        row["balance"], row["kinetic"] = e["balance"], e["kinetic"]
        for name, d in zip(("R11", "P12", "S13.psi", "S13.theta", "S13.phi", "P21", "R22"), dofs):
            row[f"q.{name}"] = sim.q[d]
        for j in FORCE_JOINTS:
            F = sim.constraint_reaction(j)[0] if j == "cut_R" else sim.reaction(j)[0]
            a = AXIS[j]
            row[f"{j}.axial"] = abs(F[a])
            row[f"{j}.normal"] = float(np.linalg.norm(np.delete(F, a)))
        for k, val in row.items():
            out[k][i] = val
        for ts in SHAPE_TIMES:
            if abs(sim.t - ts) < 0.5 * dt:
                shapes[ts] = (xs, u)
    out["wall"] = time.perf_counter() - t0
    out["E.ay"] = np.gradient(out["E.vy"], out["t"])
    out["static_residual"] = st.residual
    out["E0_offset"] = float(np.hypot(out["E.yP"][0], out["E.zP"][0]))
    out["shapes"] = shapes
    out["rms"] = {f"{j}.{k}": float(np.sqrt(np.trapezoid(out[f"{j}.{k}"] ** 2, out["t"]) / out["t"][-1]))
                  for j in FORCE_JOINTS for k in ("normal", "axial")}                 # eq. (34)
    out["nv"], out["h"] = cm.nv, h
    return out


def compute(T=None, dt=0.002, cases=CASES) -> dict:
    return {case_name(*c): simulate(*c, T=T, dt=dt) for c in cases}


# ------------------------------------------------------------------------------------------- plots
def plot(res: dict, out_dir: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mod = registry.load("rpsup")
    names = list(res)
    style = {n: dict(color=f"C{i}", lw=1.2, ls="-" if "J_nf" in n else "--") for i, n in enumerate(names)}
    paths = []

    def save(fig, name):
        fig.tight_layout()
        paths.append(out_dir / name)
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)

    # Fig. 14: trajectory in the plane
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    corners = [mod.CORNERS[c] for c in "ABCDA"]
    for ax in axes:
        ax.plot([c[0] for c in corners], [c[1] for c in corners], "k:", lw=1, label="programmed")
        for n in names:
            r = res[n]
            ax.plot(r["E.yP"], r["E.zP"], label=n, **style[n])
            ax.plot(r["E.yP"][0], r["E.zP"][0], "o", color=style[n]["color"], ms=4)
        ax.set_xlabel("y^(P) [m]")
        ax.set_ylabel("z^(P) [m]")
        ax.grid(True, alpha=0.3)
    for c, (u, v) in mod.CORNERS.items():
        axes[0].annotate(c, (u, v), textcoords="offset points", xytext=(-12, -12))
    axes[0].set_aspect("equal")
    axes[0].set_title("E in the plane y^(P) z^(P) (o: start from statics)")
    axes[0].legend(fontsize=7)
    axes[1].set_xlim(-0.002, 0.010)
    axes[1].set_ylim(-0.0015, 0.0015)
    axes[1].set_title("zoom at A: the statics offset is removed during A→B")
    save(fig, "fig14_trajectory.png")

    # Fig. 15: E coordinates
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, k in zip(axes, ("E.x", "E.y", "E.z")):
        for n in names:
            ax.plot(res[n]["t"], res[n][k], label=n, **style[n])
        ax.set_title(f"{k[-1]}_E (global) [m]")
        ax.set_xlabel("t [s]")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    save(fig, "fig15_coordinates.png")

    # Fig. 16: y velocity / acceleration
    fig, axes = plt.subplots(1, 2, figsize=(13, 4))
    for n in names:
        axes[0].plot(res[n]["t"], res[n]["E.vy"], label=n, **style[n])
        axes[1].plot(res[n]["t"], res[n]["E.ay"], label=n, **style[n])
    axes[0].set_title("y-velocity of E [m/s]")
    axes[1].set_title("y-acceleration of E [m/s²]")
    for ax in axes:
        ax.set_xlabel("t [s]")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    save(fig, "fig16_velocity_acceleration.png")

    # Fig. 17: violations (log)
    fig, axes = plt.subplots(2, 3, figsize=(15, 7), sharex=True)
    panels = [("cut.x", "cut R: Φ̃_x (joint frame) [m]"), ("cut.y", "cut R: Φ̃_y [m]"), ("cut.z", "cut R: Φ̃_z [m]"),
              ("cut.angle", "cut R: axis misalignment [rad]"), ("cut.norm", "cut R: ‖Φ̃_k‖ [m]"),
              ("path.norm", "programmed: ‖Φ_p‖ (y^(P), z^(P)) [m]")]
    for ax, (k, title) in zip(axes.flat, panels):
        for n in names:
            ax.semilogy(res[n]["t"], np.maximum(np.abs(res[n][k]), 1e-18), label=n, **style[n])
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    slope = -(mod.ALPHA - np.sqrt(mod.ALPHA**2 - mod.BETA**2))
    ref = [n for n in names if n.startswith("S_fl")]
    if ref:
        r = res[ref[0]]
        axes[1, 2].semilogy(r["t"], r["path.norm"][0] * np.exp(slope * r["t"]), "k:", lw=1,
                            label=f"Baumgarte e^({slope:.3f} t)")
    axes[1, 2].legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("t [s]")
    save(fig, "fig17_violations.png")

    # Fig. 18: joint coordinates
    fig, axes = plt.subplots(2, 4, figsize=(16, 7), sharex=True)
    panels = [("q.R11", "ψ(1,1) [rad]"), ("q.P12", "x(1,2) [m]"), ("q.S13.psi", "ψ(1,3,0) [rad]"),
              ("q.S13.theta", "θ(1,3,0) [rad]"), ("q.S13.phi", "φ(1,3,0) [rad]"), ("q.P21", "z(2,1) [m]"),
              ("q.R22", "ψ(2,2) [rad]"), ("base.y", "base y^(b) [m]")]
    for ax, (k, title) in zip(axes.flat, panels):
        for n in names:
            ax.plot(res[n]["t"], res[n][k], label=n, **style[n])
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("t [s]")
    save(fig, "fig18_joint_coordinates.png")

    # Fig. 19: coupler deformation
    flex = [n for n in names if "L_fl" in n]
    if flex:
        fig, axes = plt.subplots(1, len(flex), figsize=(4.2 * len(flex), 4), sharey=True, squeeze=False)
        for ax, n in zip(axes[0], flex):
            for i, ts in enumerate(SHAPE_TIMES):
                if ts in res[n]["shapes"]:
                    xs, u = res[n]["shapes"][ts]
                    ax.plot(xs, 100 * u[:, 2], "o-", color=f"C{i}", ms=3, label=f"t = {ts:g} s (z)")
                    ax.plot(xs, 100 * u[:, 1], ":", color=f"C{i}", lw=1)
            ax.set_title(n, fontsize=10)
            ax.set_xlabel("x along the coupler [m]")
            ax.grid(True, alpha=0.3)
        axes[0, 0].set_ylabel("displacement in the rfe-0 frame [cm]\n(solid: z, dotted: y)")
        axes[0, 0].legend(fontsize=7)
        save(fig, "fig19_coupler_deformation.png")

    # Fig. 20: RMS forces
    fig, axes = plt.subplots(1, 2, figsize=(15, 4.5))
    w = 0.8 / len(names)
    x = np.arange(len(FORCE_JOINTS))
    for ax, kind in zip(axes, ("normal", "axial")):
        for i, n in enumerate(names):
            ax.bar(x + (i - len(names) / 2 + 0.5) * w, [res[n]["rms"][f"{j}.{kind}"] for j in FORCE_JOINTS], w,
                   label=n, color=f"C{i}", hatch="" if "J_nf" in n else "//")
        ax.set_xticks(x, FORCE_JOINTS)
        ax.set_title(f"RMS of the {kind} joint force (eq. 34) [N]")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    save(fig, "fig20_rms_forces.png")
    return paths


def write_csv(res: dict, path: Path, every: int = 5) -> None:
    names = list(res)
    series = [k for k, v in res[names[0]].items() if isinstance(v, np.ndarray) and k != "t"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t"] + [f"{n}.{k}" for n in names for k in series])
        t = res[names[0]]["t"]
        for i in range(0, t.size, every):
            w.writerow([f"{t[i]:.6g}"] + [f"{res[n][k][i]:.9g}" for n in names for k in series])


def summary(res: dict) -> str:
    lines = [f"{'case':15s} {'max‖Φ̃_k‖ m':>12s} {'max ang rad':>11s} {'‖Φ̃_k‖(2s)':>11s} {'|Φ_p|(0) m':>11s} "
             f"{'max|Φ_p| t>1s':>13s} {'|Φ_p|(end)':>10s} {'max|xP_E| m':>11s} {'tip(2s) cm':>10s} "
             f"{'max tip cm':>10s} {'sag(2s) cm':>10s} {'Δbalance J':>10s} {'wall s':>7s}"]
    for n, r in res.items():
        t = r["t"]
        i2 = int(np.argmin(np.abs(t - 2.0)))
        late = t > 1.0 if t[-1] > 1.0 else t >= 0.0
        dbal = np.max(np.abs(r["balance"] - r["balance"][0])) if "J_nf" in n else float("nan")
        lines.append(f"{n:15s} {np.max(r['cut.norm']):12.2e} {np.max(r['cut.angle']):11.2e} {r['cut.norm'][i2]:11.2e} "
                     f"{r['path.norm'][0]:11.2e} {np.max(r['path.norm'][late]):13.2e} {r['path.norm'][-1]:10.2e} "
                     f"{np.max(np.abs(r['E.xP'])):11.2e} {100 * r['tip.norm'][i2]:10.2f} "
                     f"{100 * np.max(r['tip.norm']):10.2f} {100 * r['sag'][i2]:10.2f} {dbal:10.1e} {r['wall']:7.1f}")
    lines.append("RMS joint forces (eq. 34), N — normal / axial:")
    lines.append(f"{'case':15s} " + " ".join(f"{j:>15s}" for j in FORCE_JOINTS))
    for n, r in res.items():
        lines.append(f"{n:15s} " + " ".join(f"{r['rms'][j + '.normal']:7.2f}/{r['rms'][j + '.axial']:<7.2f}"
                                              for j in FORCE_JOINTS))
    return "\n".join(lines)


def run(out_dir="results/rpsup", T: float | None = None, dt: float = 0.002) -> str:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res = compute(T, dt)
    write_csv(res, out / "rpsup.csv")
    paths = plot(res, out)
    mod = registry.load("rpsup")
    head = (f"rpsup (paper 000 §3.2): E on the rectangle {mod.WIDTH:g} × {mod.HEIGHT:g} m in the 45° plane, "
            f"α = {mod.ALPHA:g}, β = {mod.BETA:g}, RK4 h = {mod.RK4_STEP:g} s, start from statics; wrote "
            + ", ".join(p.name for p in paths) + f", rpsup.csv in {out}")
    return head + "\n" + summary(res)
