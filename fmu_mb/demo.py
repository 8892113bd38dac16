"""Closed-loop co-simulation demos in FMPy: a mechanism FMU driven by the PD controller FMU.

    python -m fmu_mb.demo [crane | five_axis] [--fmus dist] [--out results/demo] [--time S]

**crane** (default; paper 001): model-based tracking control of the full-detail crane. Four FMU
instances (fmu_mb.system.crane_closed_loop: the system ``fmu-mb ssp`` writes as an .ssp), exchanging
every 0.25 ms the way an SSP master does (fmu_mb.system.run: outputs reach inputs one step later):

* a *reference model* — crane.fmu in programmed mode, rigid jib and base, no friction: E held on the
  ellipse a = 3 m, b = 2 m and lifted 0.2 m in 1 s (eqs. 17, 22), the column pushed by paper 001's
  −4000 N·m pulse for 0.1 s (eq. 21). It gives the joint references q_ref, q̇_ref and, through
  ``<joint>.tau_required``, the drives that realise the programmed motion (feed-forward);
* the *excitation* — excitation.fmu: the pulse, into the reference's column drive and added to the
  column's feed-forward (from the second step: no SSP master's start may reach the result);
* the *PD controller* — pd_controller.fmu: τ = τ_ff + Kp (q_ref − q) + Kd (q̇_ref − q̇), gains from
  the rigid crane's mass-matrix diagonal (Kp = ω² M_jj, Kd = 2ζω M_jj, ω = 6 rad/s, ζ = 1), drives
  enabled after the first exchanges (t_enable = 2.5 steps);
* the *plant* — crane.fmu in torque mode at full detail: RFEM-flexible jib (eq. 7), LuGre friction
  in the three journals loaded by the joint reactions (eqs. 13-15), base on eight springs.

The controller knows neither the friction nor the jib's flexibility nor the sprung base; the run
shows how far E strays from the programmed ellipse and what the drives, the friction and the jib do.
The master samples at 0.25 ms (4 kHz, a servo drive's rate): the jib's and the arm's drives act on
the first rigid finite element of the flexible jib, a short hub whose local mode against the first
spring-damping element is fast, and a PD law sampled at 1 ms destabilises it (with ω = 10 rad/s the
plant fails within 15 ms, with ω = 5 at 0.5 ms too; real drives add their rotor's reflected inertia,
which paper 001 does not model); at 4 kHz and ω = 10, LuGre's stick-slip at the jib still excites
kN·m chatter of the drive, at ω = 6 not. Prints a
summary and writes ``crane_closed_loop.png``, the plant's outputs ``crane_closed_loop.csv`` (with its
sidecar ``.json``) and the animated report ``crane_closed_loop.html`` (fmu_mb.report).

**five_axis** (paper 002): every joint of the five-axis tree (Stribeck friction with pin-bearing
normal loads) follows a rest-to-rest reference q_ref = A·(1 − cos(π t/T₁)) of 0.8 rad under the PD
controller FMU (ω = 30 rad/s, ζ = 1); writes ``closed_loop.png``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from .system import (CRANE_JOINTS, CRANE_PLANT as PLANT, PULSE, PULSE_TIME,  # noqa: F401  (the demo's constants)
                     crane_gains, mass_matrix)

DEMOS = ("crane", "five_axis")


class _Instance:
    """One FMU instance in the master loop (FMPy's FMI 2.0 API), variables by name."""

    def __init__(self, path: Path, name: str, integers=None, reals=None):
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Slave
        self.md = read_model_description(str(path))
        self.dir = extract(str(path))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.outputs = [v.name for v in self.md.modelVariables if v.causality == "output" and v.type == "Real"]
        self.s = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                           modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName=name)
        self.s.instantiate()
        self.s.setupExperiment(startTime=0.0)
        self.s.enterInitializationMode()
        if integers:
            self.s.setInteger([self.vr[k] for k in integers], list(integers.values()))
        if reals:
            self.s.setReal([self.vr[k] for k in reals], list(reals.values()))
        self.s.exitInitializationMode()

    def refs(self, names):
        return [self.vr[n] for n in names]

    def close(self):
        self.s.terminate()
        self.s.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


def _fmus(fmu_dir: Path, names) -> dict:
    paths = {n: fmu_dir / f"{n}.fmu" for n in names}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: run 'python build_fmus.py' first")
    return paths


# ------------------------------------------------------------------------------------------ crane
ELLIPSE = (3.0, 2.0)                        # m, semi-axes (paper 001 eq. 17)


def ellipse_distance(x, y, a=ELLIPSE[0], b=ELLIPSE[1]):
    """First-order distance of (x, y) from the ellipse: |Φ|/|∇Φ| with Φ = ½ab((x/a)² + (y/b)² − 1) (the
    FMU's ellipse violation, models/crane.py)."""
    phi = 0.5 * a * b * ((x / a) ** 2 + (y / b) ** 2 - 1.0)
    grad = a * b * np.hypot(x / a ** 2, y / b ** 2)
    return np.abs(phi) / grad



def crane(fmu_dir="dist", out_dir="results/demo", T=5.0, h=2.5e-4, report=True, plant_options=None,
          omega=6.0, say=None) -> str:
    """Run the crane demo (module docstring) and return its summary. h: the master's step (s), omega:
    the PD law's natural frequency (rad/s); plant_options: the plant's model.* values; ``say``: given each
    line of the summary as soon as it is known (the plot's before the report is written)."""
    from .system import crane_closed_loop, run
    say = say or (lambda line: None)
    fmu_dir, out_dir = Path(fmu_dir), Path(out_dir)
    _fmus(fmu_dir, ("crane", "pd_controller", "excitation"))
    out_dir.mkdir(parents=True, exist_ok=True)
    plant_options = dict(PLANT if plant_options is None else plant_options)
    system = crane_closed_loop(fmu_dir, h, T, omega, plant_options)
    n = len(CRANE_JOINTS)
    t0 = time.perf_counter()
    res = run(system, record={"plant": "all"})
    wall = time.perf_counter() - t0
    ref, plant, ctrl = res["reference"], res["plant"], res["controller"]
    inputs = [v for v, kind in system.connectors("plant").items() if kind == "input"]
    outputs = [v for v in plant if v not in inputs]
    col = {name: i for i, name in enumerate(outputs)}
    log_plant = np.column_stack([plant[v] for v in outputs])
    log_tau = np.column_stack([plant[f"{j}.tau_drive"] for j in CRANE_JOINTS])      # as the plant took them
    ff = np.column_stack([ctrl[f"tau_ff[{i + 1}]"] for i in range(n)])
    q_ref = np.column_stack([ref[f"{j}.q"] for j in CRANE_JOINTS])
    E_ref = np.column_stack([ref[f"E.r[{k}]"] for k in (1, 2, 3)])
    P_q = [col[f"{j}.q"] for j in CRANE_JOINTS]
    t = res["time"]
    E = log_plant[:, [col[f"E.r[{k}]"] for k in (1, 2, 3)]]
    err = log_plant[:, P_q] - q_ref
    dist = ellipse_distance(E[:, 0], E[:, 1])
    settle = min(1.25, 0.5 * t[-1])               # s: after the lift (1 s) and the pulse's transient
    settled = t >= settle
    defl = log_plant[:, [col[f"jib.deflection[{k}]"] for k in (2, 3)]]
    fric = log_plant[:, [col[f"{j}.tau_friction"] for j in CRANE_JOINTS]]
    png = out_dir / "crane_closed_loop.png"
    _crane_plot(t, E, E_ref, err, log_tau, ff, fric, defl, png)
    csv = out_dir / "crane_closed_loop.csv"
    _write_run(csv, t, log_plant, outputs, log_tau, plant_options, stride=5)
    lines = [
        f"closed loop: crane.fmu ×2 (reference model: programmed, rigid jib, no friction; plant: torque mode, "
        f"flexible jib, LuGre, sprung base) + pd_controller.fmu + excitation.fmu (the column pulse), an SSP "
        f"master's exchange (fmu_mb.system; the same as fmu-mb ssp's .ssp in fmpy.ssp and libcosim), h = "
        f"{h * 1e3:g} ms, {T:g} s "
        f"simulated in {wall:.2f} s wall ({T / wall:.1f}× real time)",
        "  joint tracking error max (column, jib, arm): "
        + ", ".join(f"{1e3 * v:.2f}" for v in np.abs(err).max(axis=0)) + " mrad; at the end: "
        + ", ".join(f"{1e3 * v:.3f}" for v in np.abs(err[-1])) + " mrad",
        f"  E off the programmed ellipse: {1e3 * dist[settled].max():.2f} mm max after {settle:g} s "
        f"(reference model: {1e3 * ellipse_distance(E_ref[settled, 0], E_ref[settled, 1]).max():.3f} mm); "
        f"|E − E_ref| max {1e3 * np.linalg.norm(E - E_ref, axis=1).max():.2f} mm, lift z_E − z_E,ref at the end "
        f"{1e3 * (E[-1, 2] - E_ref[-1, 2]):+.2f} mm",
        "  peak drives (column, jib, arm): " + ", ".join(f"{v:.0f}" for v in np.abs(log_tau).max(axis=0))
        + " N·m; peak friction torques: " + ", ".join(f"{v:.0f}" for v in np.abs(fric).max(axis=0))
        + f" N·m; friction and dampers dissipated {log_plant[-1, col['energy.dissipated']]:.0f} J",
        f"  jib tip deflection max {1e3 * np.hypot(*defl.T).max():.2f} mm",
        f"  plot: {png}",
        f"  plant outputs: {csv} (+ {csv.with_suffix('.json').name})",
    ]
    for line in lines:
        say(line)
    if report:
        from .report import write_report
        page = write_report(csv, out_dir / "crane_closed_loop.html",
                            paths={"E (reference model)": E_ref[::10]})
        lines.append(f"  report (3D animation, plots): {page}")
        say(lines[-1])
    return "\n".join(lines)


def _write_run(csv: Path, t, log, names, tau, options, stride=5) -> None:
    """The plant's outputs and drives as a run file for fmu-mb report: CSV + sidecar (fmu_mb.report.runs)."""
    import pandas as pd
    frame = pd.DataFrame(log[::stride], columns=names)
    for i, j in enumerate(CRANE_JOINTS):
        frame[f"{j}.tau_drive"] = tau[::stride, i]
    frame.insert(0, "time", t[::stride])
    frame.to_csv(csv, index=False, float_format="%.10g")
    csv.with_suffix(".json").write_text(json.dumps({"model": "crane", "fmu": "crane.fmu (plant)",
                                                    "values": options}, indent=1))


def _crane_plot(t, E, E_ref, err, tau, ff, fric, defl, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(2, 2, figsize=(12, 8))
    th = np.linspace(0, 2 * np.pi, 200)
    ax[0, 0].plot(ELLIPSE[0] * np.cos(th), ELLIPSE[1] * np.sin(th), "k:", label="programmed ellipse")
    ax[0, 0].plot(E_ref[:, 0], E_ref[:, 1], "C2--", lw=2, label="E, reference model")
    ax[0, 0].plot(E[:, 0], E[:, 1], "C0", label="E, plant (closed loop)")
    ax[0, 0].set_aspect("equal")
    ax[0, 0].set_xlabel("x [m]")
    ax[0, 0].set_ylabel("y [m]")
    ax[0, 0].set_title("path of E (top view)")
    ax[0, 0].legend(fontsize=8)
    for i, j in enumerate(CRANE_JOINTS):
        ax[0, 1].plot(t, 1e3 * err[:, i], label=j)
    ax[0, 1].set_ylabel("q − q_ref [mrad]")
    ax[0, 1].set_title("joint tracking error")
    ax[0, 1].legend(fontsize=8)
    for i, j in enumerate(CRANE_JOINTS):
        ax[1, 0].plot(t, tau[:, i], f"C{i}", label=f"{j}: PD + feed-forward")
        ax[1, 0].plot(t, ff[:, i], f"C{i}:", lw=1, label=f"{j}: feed-forward")
    ax[1, 0].set_ylabel("τ [N·m]")
    ax[1, 0].set_title("drives (controller FMU output)")
    ax[1, 0].legend(fontsize=7, ncol=2)
    for i, j in enumerate(CRANE_JOINTS):
        ax[1, 1].plot(t, fric[:, i], label=f"{j} friction [N·m]")
    ax2 = ax[1, 1].twinx()
    ax2.plot(t, 1e3 * np.hypot(defl[:, 0], defl[:, 1]), "k", lw=0.8, label="jib tip deflection")
    ax2.set_ylabel("jib tip deflection [mm]")
    ax[1, 1].set_title("LuGre friction torques and jib deflection")
    ax[1, 1].legend(fontsize=8, loc="upper right")
    for a in (ax[0, 1], ax[1, 0], ax[1, 1]):
        a.set_xlabel("t [s]")
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)

# ------------------------------------------------------------------------------------- five_axis
def five_axis_gains(omega=30.0, zeta=1.0, q=0.4):
    from . import registry
    from .model import compile_mechanism
    cm = compile_mechanism(registry.build("five_axis"))
    M = np.diag(mass_matrix(cm, np.full(cm.nv, q)))
    return omega**2 * M, 2 * zeta * omega * M


def five_axis(fmu_dir="dist", out_dir="results/demo", T=4.0, h=1e-3) -> str:
    fmu_dir, out_dir = Path(fmu_dir), Path(out_dir)
    paths = _fmus(fmu_dir, ("five_axis", "pd_controller"))
    out_dir.mkdir(parents=True, exist_ok=True)
    n = 5
    Kp, Kd = five_axis_gains()
    inst = []
    try:
        inst.append(_Instance(paths["five_axis"], "five_axis", {"model.friction": 2}))   # Stribeck, paper 002 eq. 52
        inst.append(_Instance(paths["pd_controller"], "pd_controller", reals={
            **{f"Kp[{i + 1}]": Kp[i] for i in range(n)}, **{f"Kd[{i + 1}]": Kd[i] for i in range(n)}}))
        log, wall = _five_axis_loop(*inst, n, T, h)
    finally:
        for s in inst:
            s.close()
    A, T1 = 0.4, T / 2
    png = out_dir / "closed_loop.png"
    _plot(log, n, png, A, T1)
    err = np.abs(log[:, 1 + 2 * n:1 + 3 * n])
    lines = [
        f"closed loop: five_axis.fmu (Stribeck friction) + pd_controller.fmu, FMPy master, h = {h * 1e3:g} ms, "
        f"{T:g} s simulated in {wall:.2f} s wall ({T / wall:.1f}× real time)",
        f"  max |tracking error|: {err.max() * 1e3:.2f} mrad (joint {err.max(axis=0).argmax() + 1}); "
        f"RMS {np.sqrt(np.mean(err ** 2)) * 1e3:.2f} mrad; final {err[-1].max() * 1e3:.3f} mrad",
        f"  peak driving torque: {np.abs(log[:, 1 + n:1 + 2 * n]).max():.1f} N·m; peak joint-1 axial reaction "
        f"{np.abs(log[:, 1 + 3 * n + 2]).max():.1f} N, bending moment {np.hypot(*log[:, 1 + 3 * n + 3:1 + 3 * n + 5].T).max():.1f} N·m",
        f"  friction: peak joint-1 torque {np.abs(log[:, -3]).max():.3f} N·m, energy dissipated {log[-1, -1]:.3f} J",
        f"  plot: {png}",
    ]
    return "\n".join(lines)


def _five_axis_loop(plant_i, ctrl_i, n, T, h):
    plant, ctrl, P, C = plant_i.s, ctrl_i.s, plant_i.vr, ctrl_i.vr
    q_out = [P[f"joint{i}.q"] for i in range(1, n + 1)]
    qd_out = [P[f"joint{i}.qd"] for i in range(1, n + 1)]
    tau_in = [P[f"joint{i}.tau_drive"] for i in range(1, n + 1)]
    extra = [P[k] for k in ("joint1.F[1]", "joint1.F[2]", "joint1.F[3]", "joint1.M[1]", "joint1.M[2]",
                            "joint1.tau_friction", "joint2.tau_friction", "energy.dissipated")]
    c_in = {k: [C[f"{k}[{i}]"] for i in range(1, n + 1)] for k in ("q_ref", "qd_ref", "q", "qd")}
    tau_out = [C[f"tau[{i}]"] for i in range(1, n + 1)]
    A, T1 = 0.4, T / 2
    steps = int(round(T / h))
    log = np.zeros((steps, 1 + 3 * n + len(extra)))
    t0 = time.perf_counter()
    for k in range(steps):
        t = k * h
        ref = A * (1 - np.cos(np.pi * min(t, T1) / T1))
        ref_d = A * np.pi / T1 * np.sin(np.pi * t / T1) if t < T1 else 0.0
        q, qd = plant.getReal(q_out), plant.getReal(qd_out)
        ctrl.setReal(c_in["q_ref"], [ref] * n)
        ctrl.setReal(c_in["qd_ref"], [ref_d] * n)
        ctrl.setReal(c_in["q"], q)
        ctrl.setReal(c_in["qd"], qd)
        tau = ctrl.getReal(tau_out)
        plant.setReal(tau_in, tau)
        log[k] = [t, *q, *tau, *(np.array(q) - ref), *plant.getReal(extra)]
        plant.doStep(t, h)
        ctrl.doStep(t, h)
    return log, time.perf_counter() - t0


def _plot(log, n, png, A, T1):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = log[:, 0]
    fig, ax = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    ref = A * (1 - np.cos(np.pi * np.minimum(t, T1) / T1))
    ax[0, 0].plot(t, ref, "k--", lw=2, label="reference")
    for i in range(n):
        ax[0, 0].plot(t, log[:, 1 + i], label=f"joint {i + 1}")
    ax[0, 0].set_ylabel("q [rad]")
    ax[0, 0].legend(fontsize=8)
    ax[0, 0].set_title("joint angles")
    for i in range(n):
        ax[0, 1].plot(t, 1e3 * log[:, 1 + 2 * n + i], label=f"joint {i + 1}")
    ax[0, 1].set_ylabel("q − q_ref [mrad]")
    ax[0, 1].set_title("tracking error")
    for i in range(n):
        ax[1, 0].plot(t, log[:, 1 + n + i], label=f"joint {i + 1}")
    ax[1, 0].set_ylabel("τ [N·m]")
    ax[1, 0].set_title("driving torques (controller FMU output)")
    ax[1, 0].set_xlabel("t [s]")
    base = 1 + 3 * n
    ax[1, 1].plot(t, log[:, base + 2], label="joint 1 axial force F[3] [N]")
    ax[1, 1].plot(t, np.hypot(log[:, base + 3], log[:, base + 4]), label="joint 1 bending moment [N·m]")
    ax[1, 1].plot(t, 100 * log[:, base + 5], label="joint 1 friction torque × 100 [N·m]")
    ax[1, 1].set_title("joint 1 reaction and friction")
    ax[1, 1].set_xlabel("t [s]")
    ax[1, 1].legend(fontsize=8)
    for a in ax.flat:
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("demo", nargs="?", default="crane", choices=DEMOS,
                    help="crane (default: reference model + PD controller + full-detail plant) or five_axis")
    ap.add_argument("--fmus", default="dist", help="directory with the mechanism's FMU and pd_controller.fmu")
    ap.add_argument("--out", default="results/demo", help="output directory for the plot (and report)")
    ap.add_argument("--time", type=float, default=None, help="simulated time, s (default: crane 5, five_axis 4)")
    args = ap.parse_args(argv)
    if args.demo == "crane":
        print(f"crane closed loop, {args.time or 5.0:g} s: starting the four FMU instances ...", flush=True)
        crane(args.fmus, args.out, args.time or 5.0, say=lambda line: print(line, flush=True))
    else:
        print(five_axis(args.fmus, args.out, args.time or 4.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
