"""The page of a linear model: its modes animated in the mechanism's 3D view, the pole map and Bode plots.

    from fmu_mb.report.modes import write_modes_report
    write_modes_report("crane", {"mode": "torque", "link": "flexible"}, "crane_modes.html")

(also ``fmu-mb linearize MODEL --report PAGE``). The model is linearized once (fmu_mb.linearization) with
the chosen outputs plus what the drawing needs — every joint coordinate and each flexible link's tip
deflection. A mode is drawn as the motion y(θ) = y_op + a·Re(C v e^{iθ}) over one period (v its
eigenvector, a such that its largest coordinate swings 0.05 rad or m; a flexible link's deflection
magnified as in a run's report, stated on the page). Poles in 1/s with frequency and damping on hover;
Bode plots G(jω) = C (jωI − A)⁻¹ B + D (a discrete model's at e^{jωΔt}) from every input to each chosen
``.q`` output (else every chosen output).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..linearization import linearize
from .runs import ReportError, model_name

#: the largest coordinate's swing in a mode's animation, rad or m
SWING = 0.05
FRAMES = 24


def _drawing_outputs(cm) -> list:
    """What the 3D view reads of a run: every joint coordinate and each flexible link's tip deflection."""
    from .scene import Scene
    scene = Scene(cm, 1.0)
    return [c for _, c in scene.coordinate_columns()] + [f"{b}.deflection[{k}]" for b in scene.beams for k in (1, 2, 3)]


def _pole_map(lm):
    import plotly.graph_objects as go
    lam = lm.eigenvalues()
    w = np.abs(lam)
    zeta = np.where(w > 0, -lam.real / np.where(w > 0, w, 1.0), np.nan)
    text = [f"λ = {l.real:.4g} {'+' if l.imag >= 0 else '−'} {abs(l.imag):.4g}i 1/s<br>f = {x / (2 * np.pi):.4g} Hz, "
            f"ζ = {z:.4f}" for l, x, z in zip(lam, w, zeta)]
    fig = go.Figure(go.Scatter(x=lam.real, y=lam.imag, mode="markers", marker=dict(symbol="x", size=9),
                               hovertext=text, hoverinfo="text", name="poles"))
    fig.update_layout(title="poles (continuous-time eigenvalues)", xaxis_title="Re λ [1/s]",
                      yaxis_title="Im λ [1/s]", template="plotly_white", height=420)
    return fig


def _bode(lm, outputs: list):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    rows = [lm.outputs.index(o) for o in outputs if o.endswith(".q")] or [lm.outputs.index(o) for o in outputs]
    f = np.logspace(-2, 3, 400)
    if lm.dt is not None:
        f = f[f < 0.5 / lm.dt]
    s = 2j * np.pi * f if lm.dt is None else np.exp(2j * np.pi * f * lm.dt)
    n = lm.A.shape[0]
    G = np.array([lm.C @ np.linalg.solve(z * np.eye(n) - lm.A, lm.B) + lm.D for z in s])     # (f, ny, nu)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06)
    for k, name_in in enumerate(lm.inputs):
        for r in rows:
            g = G[:, r, k]
            label = f"{name_in} → {lm.outputs[r]}"
            fig.add_trace(go.Scatter(x=f, y=20 * np.log10(np.maximum(np.abs(g), 1e-300)), name=label,
                                     legendgroup=label, mode="lines"), row=1, col=1)
            fig.add_trace(go.Scatter(x=f, y=np.degrees(np.unwrap(np.angle(g))), name=label, legendgroup=label,
                                     showlegend=False, mode="lines"), row=2, col=1)
    fig.update_xaxes(type="log", title_text="frequency [Hz]", row=2, col=1)
    fig.update_xaxes(type="log", row=1, col=1)
    fig.update_yaxes(title_text="magnitude [dB]", row=1, col=1)
    fig.update_yaxes(title_text="phase [°]", row=2, col=1)
    fig.update_layout(title="Bode plots (per unit of the input's unit)", template="plotly_white", height=620)
    return fig


def _mode_table(lm, mode, draw: list) -> pd.DataFrame:
    rows = [lm.outputs.index(c) for c in draw]
    npos = lm.n_positions
    a = SWING / max(float(np.max(np.abs(mode.vector[:npos]))), 1e-300) if npos else 0.0
    theta = np.linspace(0.0, 2 * np.pi, FRAMES + 1)
    y = lm.y_op[rows][None, :] + a * np.real((lm.C[rows] @ mode.vector)[None, :] * np.exp(1j * theta)[:, None])
    period = 1.0 / mode.damped_frequency if mode.damped_frequency > 0 else 1.0
    table = pd.DataFrame(y, columns=draw)
    table.insert(0, "time", theta / (2 * np.pi) * period)
    return table


def write_modes_report(model, options: dict | None = None, out=None, *, modes: int = 6, outputs=None,
                       **linearize_options) -> Path:
    """Write the modes page of ``model`` (a models/ name or a model file) built with ``options`` and
    return its path (default ``<model>_modes.html``). ``modes``: the oscillatory modes to animate, slowest
    first; ``outputs``: the Bode plots' outputs (default the actuated joints' q); the other keywords go to
    :func:`fmu_mb.linearization.linearize` (``at``, ``drive``, ``inputs``, ``dt``, ...)."""
    from ..linearization import default_outputs
    from ..model import compile_mechanism
    from ..report import _auto_scale
    from .figures import animation_figure
    from .page import render
    from .runs import build_model
    from .scene import build_frames
    options = dict(options or {})
    if not isinstance(model, (str, Path)):
        raise ReportError("the modes page draws a model given by name or file")
    mech = build_model(str(model), **options)
    cm = compile_mechanism(mech)
    draw = _drawing_outputs(cm)
    chosen = list(outputs) if outputs is not None else default_outputs(cm)
    lm = linearize(str(model), options, outputs=list(dict.fromkeys(chosen + draw)), **linearize_options)
    name = model_name(str(model))
    oscillating = [m for m in lm.modes() if m.eigenvalue.imag != 0][:max(0, int(modes))]
    beams = [lk.name for lk in mech.links if getattr(lk, "flexible", False)]
    lengths = {lk.name: lk.length for lk in mech.links if hasattr(lk, "length")}
    sections = []
    for k, m in enumerate(oscillating):
        table = _mode_table(lm, m, draw)
        scale = _auto_scale(table, beams, lengths)
        frames = build_frames(str(model), options, table, None, scale)
        dominant = ", ".join(f"{n} {a:.2f}" for n, a in m.dominant(3))
        note = (f"f = {m.frequency:.4g} Hz (damped {m.damped_frequency:.4g} Hz), ζ = {m.damping:.4f}; largest "
                f"coordinates: {dominant}. One period, the largest coordinate swinging {SWING:g} rad or m"
                + (f", flexible links' deflection magnified ×{scale:g}" if beams else "") + ".")
        sections.append((f"Mode {k + 1}: {m.frequency:.4g} Hz", [animation_figure(frames, f"{name}: mode {k + 1}")],
                         note))
    if not oscillating:
        sections.append(("Modes", [], "the model has no oscillatory mode"))
    sections.append(("Poles", [_pole_map(lm)], None))
    sections.append(("Frequency response", [_bode(lm, chosen)], None))
    out = Path(out) if out else Path(f"{name}_modes.html")
    kind = "continuous time" if lm.dt is None else f"discrete time, dt = {lm.dt:g} s"
    meta = [("model", name), ("options", ", ".join(f"{k} = {v}" for k, v in options.items()) or "the model's defaults"),
            ("operating point", lm.operating_point), ("states", f"{len(lm.states)} ({kind}); {lm.coordinates}"),
            ("inputs", ", ".join(lm.inputs) or "none")]
    return render(f"{name}: linear model and modes", meta, sections, out)
