"""The mechanism drawn from a run's outputs: link sticks, flexible links bent, points, programmed paths.

A run holds the FMU's outputs, not its full state: every joint's coordinates (``<joint>.q``) but, of
a flexible link (RFEM, paper 001 eq. 7), only its tip deflection (``<beam>.deflection[1..3]``, the
tip's offset from the straight link in the link-root frame). The scene rebuilds each frame by forward
kinematics (paper 000 eqs. 5-6) of the compiled mechanism with

* the joints' coordinates from the run (a joint the run lacks stays at its start value q0), and
* each flexible link's sde rotations set to the **static tip-loaded cantilever shape** that puts
  its tip at the recorded deflection: relative rotations ψ_r = c_y·(L − x_r)·ℓ_r about z and
  θ_r = −c_z·(L − x_r)·ℓ_r about y at the sde positions x_r (curvature ∝ bending moment ∝ L − x),
  with c_y, c_z fitted by three Newton steps on the forward kinematics. Torsion is not recorded
  and is drawn as zero. This is a drawing, not the run's mode shape: the tip (and what hangs on
  it) is where the run put it; the curve between is the static shape through that tip.

``deflection_scale`` magnifies the deflection (links of metres bend by millimetres).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import algorithms as alg
from ..kernels.outputs import beam_deflection
from ..model import compile_mechanism, make_data
from ..model.constraints import PointOnEllipse, PointTrajectory
from ..model.description import Beam
from ..outputs import index_suffix


@dataclass
class Frames:
    """Drawable geometry of a run, per frame k: ``links[name][k]`` (n, 3) polyline vertices with NaN
    rows between separate segments; ``points[name][k]`` (3,); ``paths[name]`` a static (n, 3) curve
    or ``moving_paths[name][k]`` one per frame; ``supports[k]`` (n, 3) support attachment points."""
    time: np.ndarray
    links: dict
    points: dict
    supports: list
    paths: dict
    moving_paths: dict
    bounds: np.ndarray          # (2, 3) min/max over every frame


class Scene:
    """Forward kinematics of one compiled mechanism for drawing (see the module docstring)."""

    def __init__(self, cm, deflection_scale: float = 1.0):
        self.cm, self.scale = cm, float(deflection_scale)
        self.model, self.data = cm.model, make_data(cm.model)
        mech = cm.mechanism
        self.link_of = {}                                  # elementary body -> link name
        for name, body in cm.link_body.items():
            self.link_of[body] = name
        self.beams = {b.name: b for b in cm.beams}
        for b in cm.beams:
            for body in range(b.rfe_bodies[0], b.rfe_bodies[-1] + 1):
                self.link_of[body] = b.name
        self.links = {lk.name: lk for lk in mech.links}
        parent = self.model.body_parent
        # where each link's children attach: bodies whose parent belongs to the link
        self.children = {name: [] for name in cm.link_body}
        for i in range(self.model.nbody):
            p = int(parent[i])
            if p >= 0 and p in self.link_of and self.link_of.get(i) != self.link_of[p]:
                self.children[self.link_of[p]].append(i)
        self.point_bodies = dict(cm.points)
        self.supports = [(cm.link_body[s.link], np.asarray(s.point, float)) for s in mech.supports]

    # ------------------------------------------------------------------ coordinates
    def coordinate_columns(self) -> list:
        """(coordinate index, column name) of every joint coordinate an FMU outputs."""
        return [(j.dofadr + k, f"{j.name}.q{index_suffix(j.ndof, k)}") for j in self.cm.joints for k in range(j.ndof)]

    def configure(self, q: np.ndarray, deflections: dict) -> None:
        """Forward kinematics at joint coordinates ``q`` (full vector; sde entries overwritten) with
        each flexible link bent to its tip deflection ``deflections[name]`` (3,) × the scale."""
        for name, b in self.beams.items():
            target = self.scale * np.asarray(deflections.get(name, np.zeros(3)), float)
            weights = self._shape_weights(b)
            c = np.array([target[1], target[2]]) / max(np.sum(weights * (b.length - self._sde_x(b))), 1e-300)
            for _ in range(3):                              # Newton on (c_y, c_z) through the kinematics
                got = self._bend(q, b, weights, c)
                if np.max(np.abs(got - target[1:])) <= 1e-9 * (1.0 + np.max(np.abs(target))):
                    break
                J = np.empty((2, 2))
                for k in range(2):
                    dc = c.copy()
                    dc[k] += 1e-6 * (1.0 + abs(c[k]))
                    J[:, k] = (self._bend(q, b, weights, dc) - got) / (dc[k] - c[k])
                try:
                    c = c + np.linalg.solve(J, target[1:] - got)
                except np.linalg.LinAlgError:
                    break
            self._bend(q, b, weights, c)
        alg.forward_kinematics(self.model, self.data, q)

    @staticmethod
    def _sde_x(b) -> np.ndarray:
        return np.asarray(b.rfe_start[1:], float)            # sde r sits at the start of rfe r

    def _shape_weights(self, b) -> np.ndarray:
        x = np.concatenate([b.rfe_start, [b.length]])
        seg = 0.5 * (np.diff(x)[:-1] + np.diff(x)[1:])        # length each sde stands for
        return seg * (b.length - self._sde_x(b))

    def _bend(self, q, b, weights, c) -> np.ndarray:
        """Set the sde rotations of beam b for shape constants c; return the tip deflection (y, z) as the
        FMU's <beam>.deflection outputs define it (kernels.outputs.beam_deflection)."""
        for r, adr in enumerate(b.sde_dofadr):
            q[adr] = c[0] * weights[r]
            q[adr + 1] = -c[1] * weights[r]
            q[adr + 2] = 0.0
        alg.forward_kinematics(self.model, self.data, q)
        oR, op = self.data.oR, self.data.op
        first, last, tip = b.rfe_bodies[0], b.rfe_bodies[-1], b.length - b.rfe_start[-1]
        return np.array([beam_deflection(oR, op, first, last, tip, b.length, axis) for axis in (1, 2)])

    # ------------------------------------------------------------------ geometry
    def _world(self, body: int, p) -> np.ndarray:
        return self.data.op[body] + self.data.oR[body] @ np.asarray(p, float)

    def link_polylines(self) -> dict:
        """{link: (n, 3) vertices} at the current configuration: a star from the link's frame origin to
        where its children attach, to its points and to its tip; a flexible link through its rfes."""
        op = self.data.op
        out = {}
        for name, body in self.cm.link_body.items():
            link = self.links[name]
            origin = op[body]
            ends = [op[i] for i in self.children[name]]
            ends += [self._world(b, p) for pn, (b, p) in self.point_bodies.items() if self.link_of.get(b) == name]
            ends += [self._world(b, p) for b, p in self.supports if self.link_of.get(b) == name]
            if name in self.beams:
                b = self.beams[name]
                spine = [op[i] for i in b.rfe_bodies]
                spine.append(self._world(b.rfe_bodies[-1], (b.length - b.rfe_start[-1], 0.0, 0.0)))
                ends = [e for e in ends if np.min(np.linalg.norm(np.array(spine) - e, axis=1)) > 1e-9]
                verts = list(spine)
            else:
                if isinstance(link, Beam):
                    ends.append(self._world(body, (link.length, 0.0, 0.0)))
                elif not ends:
                    com = self.model.body_com[body]
                    if np.linalg.norm(com) > 1e-9:
                        ends.append(self._world(body, 2.0 * com))
                verts = []
            for e in ends:
                verts += [np.full(3, np.nan), origin, e]
            if not verts:
                verts = [origin, origin]
            out[name] = np.array(verts[1:] if np.isnan(verts[0][0]) else verts)
        return out

    def point_positions(self) -> dict:
        return {name: self._world(b, p) for name, (b, p) in self.point_bodies.items()}

    def support_points(self) -> np.ndarray:
        return np.array([self._world(b, p) for b, p in self.supports]).reshape(-1, 3)


def programmed_paths(cm, times: np.ndarray, point_tracks: dict) -> tuple:
    """(static {name: (n, 3)}, moving {name: [(n, 3) per frame]}) curves of the programmed constraints
    that define a path: a PointTrajectory on all three axes (absolute) is drawn as its curve over the
    run; a PointOnEllipse (paper 001's crane) as its ellipse at the point's current height."""
    static, moving = {}, {}
    for c in cm.mechanism.constraints:
        if isinstance(c, PointTrajectory) and len(c.axes) == 3 and not c.relative:
            R, o = c._frame()
            curve = np.array([R @ alg.trajectory(c.trajectory, t)[0] + o for t in times])
            static[f"{c.name} (programmed)"] = curve
        elif isinstance(c, PointOnEllipse):
            R, o = (np.eye(3), np.zeros(3)) if c.frame is None else (np.asarray(c.frame[0], float),
                                                                    np.asarray(c.frame[1], float))
            track = next((point_tracks[p.name] for p in cm.mechanism.points
                          if p.link == c.link and np.allclose(p.position, c.point) and p.name in point_tracks), None)
            th = np.linspace(0.0, 2.0 * np.pi, 121)
            a, b = c.shape.a, c.shape.b
            frames = []
            for k in range(len(times)):
                h = float(R[:, 2] @ (track[k] - o)) if track is not None else 0.0
                local = np.stack([a * np.cos(th), b * np.sin(th), np.full_like(th, h)], axis=1)
                frames.append(local @ R.T + o)
            moving[f"{c.name} (programmed)"] = frames
    return static, moving


def build_frames(model_name: str, options: dict, table, times_idx=None, deflection_scale: float = 1.0,
                 trajectory_values: dict | None = None, paths: dict | None = None) -> Frames:
    """Geometry of every selected row of ``table`` (a pandas DataFrame of FMU outputs with a ``time``
    column) for the mechanism ``model_name`` built with ``options``. ``trajectory_values``: values of
    trajectory parameters the run set (``<trajectory>.<param>``: inputs of the FMU); ``paths``: more
    curves to draw, {name: (n, 3) world points} (e.g. a reference model's path)."""
    from .runs import build_model
    mech = build_model(model_name, **options)
    cm = compile_mechanism(mech)
    for traj in cm.trajectories:
        vals = {p: v for p in traj.parameters() if (v := (trajectory_values or {}).get(f"{traj.name}.{p}")) is not None}
        if vals:
            traj.set(**vals)
    scene = Scene(cm, deflection_scale)
    rows = np.arange(len(table)) if times_idx is None else np.asarray(times_idx)
    cols = [(i, c) for i, c in scene.coordinate_columns() if c in table.columns]
    q_cols = np.column_stack([table[c].to_numpy(float) for _, c in cols]) if cols else np.zeros((len(table), 0))
    dof = np.array([i for i, _ in cols], int)
    defl = {b: np.column_stack([table[f"{b}.deflection[{k}]"].to_numpy(float) if f"{b}.deflection[{k}]" in table
                                else np.zeros(len(table)) for k in (1, 2, 3)]) for b in scene.beams}
    times = table["time"].to_numpy(float)[rows]
    links, points, supports = {n: [] for n in cm.link_body}, {n: [] for n in cm.points}, []
    q = cm.q0.astype(float).copy()
    for r in rows:
        q[dof] = q_cols[r]
        scene.configure(q, {b: d[r] for b, d in defl.items()})
        for n, v in scene.link_polylines().items():
            links[n].append(v)
        for n, v in scene.point_positions().items():
            points[n].append(v)
        supports.append(scene.support_points())
    points = {n: np.array(v) for n, v in points.items()}
    static, moving = programmed_paths(cm, times, points)
    for name, curve in (paths or {}).items():
        curve = np.asarray(curve, float)
        if curve.ndim != 2 or curve.shape[1] != 3:
            raise ValueError(f"path {name!r} must be an (n, 3) array of world points, got shape {curve.shape}")
        static[name] = curve
    every = [v for vs in links.values() for v in vs] + list(points.values()) + list(static.values()) + \
        [v for vs in moving.values() for v in vs] + supports
    stacked = np.concatenate([np.asarray(v, float).reshape(-1, 3) for v in every])
    bounds = np.array([np.nanmin(stacked, axis=0), np.nanmax(stacked, axis=0)])
    return Frames(times, links, points, supports, static, moving, bounds)
