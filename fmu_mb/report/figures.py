"""Plotly figures of a run: time plots of its outputs by kind, and the 3D animation of the mechanism.

Plotly writes the interactive page (zoom, hover, legend toggles) and its animation machinery
(frames, play/pause buttons, a time slider) from figure data; nothing here is JavaScript.
"""
from __future__ import annotations

import re

import numpy as np

#: (title, y-axis label, pattern of the output names it plots), in page order
GROUPS = (
    ("Joint coordinates", "q [rad or m]", r"\.q(\[\d+\])?$"),
    ("Joint rates", "q̇ [rad/s or m/s]", r"\.qd(\[\d+\])?$"),
    ("Driving and required forces", "τ [N·m or N]", r"\.(tau_drive|tau_required)(\[\d+\])?$"),
    ("Friction torques", "τ_f [N·m or N]", r"\.tau_friction$"),
    ("Normal loads of the friction laws", "[N, N·m]", r"\.(F_normal|friction_load)$"),
    ("Reaction forces (joints, cut joints)", "F [N]", r"^(?!support\[)[^\[]+\.F\[\d\]$"),
    ("Reaction moments", "M [N·m]", r"\.M\[\d\]$"),
    ("Constraint forces (multipliers)", "λ", r"\.force(\[\d+\])?$"),
    ("Constraint violations", "[m, rad]", r"\.(violation|violation_angle)$"),
    ("Support forces", "F [N]", r"^support\[\d+\]\.F\[\d\]$"),
    ("Point positions", "r [m]", r"\.r\[\d\]$"),
    ("Link deflections", "δ [m]", r"\.deflection\[\d\]$"),
    ("Energy", "E [J]", r"^energy\."),
)
MAX_SAMPLES = 2000           # per line in the time plots (a stride keeps the page small)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def grouped_columns(columns) -> list:
    """[(title, label, [column, ...])] of the GROUPS a run has columns for (each column in one group)."""
    taken, out = set(), []
    for title, label, pattern in GROUPS:
        rx = re.compile(pattern)
        cols = [c for c in columns if c != "time" and c not in taken and rx.search(c)]
        if cols:
            taken |= set(cols)
            out.append((title, label, cols))
    return out


def time_figures(table, height: int = 320) -> list:
    """One plotly figure per group of outputs in ``table`` (columns ``time`` and output names)."""
    import plotly.graph_objects as go
    stride = max(1, int(np.ceil(len(table) / MAX_SAMPLES)))
    t = table["time"].to_numpy(float)[::stride]
    figs = []
    for title, label, cols in grouped_columns(table.columns):
        fig = go.Figure()
        for c in cols:
            y = table[c].to_numpy(float)[::stride]
            fig.add_trace(go.Scatter(x=t, y=y, mode="lines", name=c, line=dict(width=1.5)))
        fig.update_layout(title=title, height=height, margin=dict(l=60, r=20, t=40, b=40),
                          xaxis_title="t [s]", yaxis_title=label, legend=dict(font=dict(size=10)),
                          template="plotly_white")
        figs.append(fig)
    return figs


def animation_figure(frames, title: str, height: int = 640):
    """The mechanism over time (fmu_mb.report.scene.Frames): links as sticks, points with their traces,
    the supports, the programmed paths; play/pause and a time slider. One plotly frame per sample."""
    import plotly.graph_objects as go

    def line3(v, **kw):
        v = np.asarray(v, float).reshape(-1, 3)
        return go.Scatter3d(x=v[:, 0], y=v[:, 1], z=v[:, 2], **kw)

    links, points = list(frames.links), list(frames.points)
    moving = list(frames.moving_paths)

    def animated(k):
        data = [line3(frames.links[n][k], mode="lines+markers", name=n, line=dict(width=7, color=PALETTE[i % 10]),
                      marker=dict(size=3, color=PALETTE[i % 10]), hovertext=n, hoverinfo="text")
                for i, n in enumerate(links)]
        for n in points:
            track = frames.points[n][:k + 1]
            data.append(line3(track, mode="lines", name=f"{n} (trace)", line=dict(width=2, color="#444"),
                              hoverinfo="skip", showlegend=False))
            data.append(line3(frames.points[n][k], mode="markers+text", name=n, text=[n], textposition="top center",
                              marker=dict(size=5, color="#000")))
        if len(frames.supports) and frames.supports[0].size:
            data.append(line3(frames.supports[k], mode="markers", name="supports",
                              marker=dict(size=4, symbol="diamond", color="#888")))
        for n in moving:
            data.append(line3(frames.moving_paths[n][k], mode="lines", name=n,
                              line=dict(width=2, dash="dash", color="#d62728")))
        return data

    first = animated(0)
    n_anim = len(first)
    static = [line3(v, mode="lines", name=n, line=dict(width=3, dash="dash", color=("#d62728", "#2ca02c")[i % 2]))
              for i, (n, v) in enumerate(frames.paths.items())]
    fig = go.Figure(data=first + static)
    names = [f"{t:.3f}" for t in frames.time]
    fig.frames = [go.Frame(data=animated(k), name=names[k], traces=list(range(n_anim)))
                  for k in range(len(frames.time))]
    dt = float(np.median(np.diff(frames.time))) if len(frames.time) > 1 else 0.1
    ms = max(20, int(round(1000 * dt)))                  # real time where the browser keeps up
    lo, hi = frames.bounds
    pad = 0.05 * float(np.max(hi - lo)) + 1e-3
    play = dict(label="▶ play", method="animate",
                args=[None, dict(frame=dict(duration=ms, redraw=True), transition=dict(duration=0),
                                 fromcurrent=True, mode="immediate")])
    pause = dict(label="❚❚ pause", method="animate",
                 args=[[None], dict(frame=dict(duration=0, redraw=False), transition=dict(duration=0),
                                    mode="immediate")])
    slider = dict(active=0, currentvalue=dict(prefix="t = ", suffix=" s", font=dict(size=13, color="#222")),
                  pad=dict(t=30), font=dict(color="rgba(0,0,0,0)"), tickcolor="rgba(0,0,0,0)",  # no 150 tick labels
                  steps=[dict(label=names[k], method="animate",
                              args=[[names[k]], dict(frame=dict(duration=0, redraw=True), mode="immediate",
                                                     transition=dict(duration=0))])
                         for k in range(len(names))])
    fig.update_layout(
        title=title, height=height, margin=dict(l=0, r=0, t=40, b=0), template="plotly_white",
        scene=dict(xaxis=dict(range=[lo[0] - pad, hi[0] + pad], title="x [m]"),
                   yaxis=dict(range=[lo[1] - pad, hi[1] + pad], title="y [m]"),
                   zaxis=dict(range=[lo[2] - pad, hi[2] + pad], title="z [m]"), aspectmode="data"),
        updatemenus=[dict(type="buttons", showactive=False, x=0.02, y=0.02, xanchor="left", yanchor="bottom",
                          direction="left", buttons=[play, pause])],
        sliders=[slider])
    return fig


def study_figures(study, height: int = 360) -> list:
    """Each metric of a study against its first varied parameter (one line per value of a second)."""
    import plotly.graph_objects as go
    ok = study.table[study.table["status"].isin(["ok", "warning"])] if "status" in study.table else study.table
    varied = [p for p in study.parameters if ok[p].nunique() > 1] if len(ok) else []
    figs = []
    if not varied:
        return figs
    x = varied[0]
    groups = [(None, ok)] if len(varied) < 2 else list(ok.groupby(varied[1]))
    for m in study.metrics:
        fig = go.Figure()
        for value, part in groups:
            part = part.sort_values(x)
            fig.add_trace(go.Scatter(x=part[x], y=part[m], mode="lines+markers",
                                     name=m if value is None else f"{varied[1]} = {value}"))
        log = bool((ok[x] > 0).all() and ok[x].max() / max(ok[x].min(), 1e-300) > 50)
        fig.update_layout(title=m, height=height, xaxis_title=x, yaxis_title=m, template="plotly_white",
                          xaxis_type="log" if log else None, margin=dict(l=60, r=20, t=40, b=40))
        figs.append(fig)
    return figs
