"""Programmed trajectories (description side): what a model file writes.

Every trajectory is a vector function p̂(t) ∈ R³ with exact first and second
derivatives, compiled into segments (:mod:`.segments`). Scalar trajectories
(a coordinate function, a lift height) use component 0.

Each class declares ``PARAMS``: the scalar fields a user may change — the FMU
turns them into inputs named ``<trajectory name>.<field>`` (units and valid
ranges below). Changing them never changes the number of segments, so the
compiled arrays keep their shape and are rewritten in place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np

from ..codes import SEGMENT_WIDTH, SegmentKind
from ..messages import text


@dataclass(frozen=True)
class Param:
    unit: str
    description: str
    min: float = -1e6
    max: float = 1e6


def _vec3(v) -> np.ndarray:
    a = np.zeros(3)
    v = np.atleast_1d(np.asarray(v, dtype=float))
    if v.size > 3:
        raise ValueError(f"trajectory points have at most 3 components (got {v.size})")
    a[:v.size] = v
    return a


class Trajectory:
    """Base class: ``name``, ``PARAMS``, :meth:`segments`, :meth:`set`, :meth:`evaluate`."""

    name: str
    PARAMS: dict = {}

    def segments(self) -> list:
        """[(kind, t0, t1, par[8]), …] sorted by t0."""
        raise NotImplementedError

    def parameters(self) -> dict:
        """{field: (value, Param)} of the user-changeable scalars. A Param unit "@" stands
        for the trajectory's own ``unit`` (m or rad), "@/s" for its rate."""
        out = {}
        for k, p in self.PARAMS.items():
            if "@" in p.unit:
                p = Param(p.unit.replace("@", getattr(self, "unit", "m")), p.description, p.min, p.max)
            out[k] = (float(getattr(self, k)), p)
        return out

    def set(self, **values) -> None:
        """Change parameters (validated: finite, within the declared range, and the
        trajectory's own consistency checks)."""
        for k in values:
            if k not in self.PARAMS:
                raise KeyError(f"trajectory '{self.name}' has no parameter {k!r} "
                               f"(parameters: {', '.join(self.PARAMS) or 'none'})")
        old = {k: getattr(self, k) for k in values}
        for k, v in values.items():
            object.__setattr__(self, k, float(v))
        try:
            self.validate()
        except ValueError:
            for k, v in old.items():
                object.__setattr__(self, k, v)
            raise

    def validate(self) -> None:
        for k, (v, p) in self.parameters().items():
            if not (math.isfinite(v) and p.min <= v <= p.max):
                raise ValueError(text("TRAJECTORY_RANGE", len(self.name), self.name, k, p.min, p.max,
                                      f" {p.unit}" if p.unit else "", repr(v)))
        segs = self.segments()
        if not segs:
            raise ValueError(f"trajectory '{self.name}' has no segments")
        t0s = [s[1] for s in segs]
        if any(b < a for a, b in zip(t0s, t0s[1:])):
            raise ValueError(text("TRAJECTORY_ORDER", self.name))
        for kind, t0, t1, _ in segs:
            if kind != SegmentKind.LINEAR and not (t1 > t0):
                raise ValueError(text("TRAJECTORY_DURATION", self.name))

    def table(self):
        """(kind (n,), time (n, 2), par (n, SEGMENT_WIDTH)) arrays of the segments."""
        segs = self.segments()
        kind = np.array([s[0] for s in segs], dtype=np.int64)
        time = np.array([[s[1], s[2]] for s in segs], dtype=float).reshape(-1, 2)
        par = np.zeros((len(segs), SEGMENT_WIDTH))
        for i, s in enumerate(segs):
            par[i, :len(s[3])] = s[3]
        return kind, time, par


#: the most parameters a TableTrajectory may declare (the FMU core's buffer of a table function's arguments)
TABLE_MAX_PARAMS = 64


class TableTrajectory(Trajectory):
    """A trajectory whose segment table is computed by a function of its parameters: for paths whose
    table is not affine in them (an angle entering through a square root, a check between fields).

    Subclasses declare ``PARAMS`` (the values, in this order, reach the function as ``v``), ``KINDS``
    (the segment kinds, one per row: the number of segments never changes), ``CHECKS`` (messages of
    the codes 1, 2, … the function returns when the values are inconsistent) and

        table_function(v, time, par) -> int   (a staticmethod)

    writing the rows of ``time`` (n, 2) and ``par`` (n, SEGMENT_WIDTH), both zeroed before the call,
    and returning 0 or a check code. It must compile with numba in nopython mode without allocating
    (scalars, ``math``, indexing; helper functions of its module are compiled with it): Python runs
    it as it is, a native FMU carries it as machine code (fmu_mb.native.trajectory_code), so its
    inputs change the path in both kinds of FMU."""

    KINDS: tuple = ()
    CHECKS: tuple = ()

    @staticmethod
    def table_function(v, time, par) -> int:
        raise NotImplementedError

    def values(self) -> np.ndarray:
        """The parameters in ``PARAMS`` order: the function's ``v``."""
        return np.array([float(getattr(self, k)) for k in self.PARAMS])

    def segments(self):
        n = len(self.KINDS)
        time, par = np.zeros((n, 2)), np.zeros((n, SEGMENT_WIDTH))
        code = int(type(self).table_function(self.values(), time, par))
        if code:
            why = self.CHECKS[code - 1] if 0 < code <= len(self.CHECKS) else text("TABLE_CHECK_FAILED", code)
            raise ValueError(text("TRAJECTORY_REFUSED", self.name, why))
        return [(int(k), float(time[i, 0]), float(time[i, 1]), par[i].copy()) for i, k in enumerate(self.KINDS)]


@dataclass
class Hold(Trajectory):
    """A constant value (default: hold the value found at the start, see ``relative``
    in :mod:`fmu_mb.model.constraints`)."""
    value: object = 0.0
    name: str = "hold"

    def segments(self):
        p = _vec3(self.value)
        return [(SegmentKind.QUINTIC, 0.0, 1.0, np.concatenate([p, p]))]


@dataclass
class Move(Trajectory):
    """Rest-to-rest quintic move (paper 000 eq. (28), paper 001 eq. (22)) from ``start`` to
    ``start + delta`` over [t_start, t_start + duration]; scalar or vector."""
    delta: float = 0.0
    t_start: float = 0.0
    duration: float = 1.0
    start: object = 0.0
    unit: str = "m"
    name: str = "move"
    PARAMS = {"delta": Param("@", "displacement of the move", -1e3, 1e3),
              "t_start": Param("s", "start time of the move", 0.0, 1e6),
              "duration": Param("s", "duration of the move", 1e-3, 1e6)}

    def segments(self):
        p0 = _vec3(self.start)
        d = np.atleast_1d(np.asarray(self.delta, float))
        p1 = p0 + _vec3(d if d.size > 1 else [float(d[0])])
        return [(SegmentKind.QUINTIC, float(self.t_start), float(self.t_start + self.duration), np.concatenate([p0, p1]))]


@dataclass
class Linear(Trajectory):
    """Constant rate from t_start on: p̂ = start + rate·(t − t_start) (held before)."""
    rate: float = 0.0
    start: object = 0.0
    t_start: float = 0.0
    unit: str = "rad"
    name: str = "ramp"
    PARAMS = {"rate": Param("@/s", "constant rate", -1e3, 1e3),
              "t_start": Param("s", "time the motion starts", 0.0, 1e6)}

    def segments(self):
        r = np.atleast_1d(np.asarray(self.rate, float))
        return [(SegmentKind.LINEAR, float(self.t_start), float(self.t_start), np.concatenate([_vec3(self.start), _vec3(r)]))]


@dataclass
class Polyline(Trajectory):
    """Visits ``points`` in order with a quintic move of ``move_time`` between neighbours and a
    stop of ``stop_time`` at each point (paper 000: rectangle ABCD, Δt_E = 1 s).

    t_start: start of the first move; closed: return to the first point at the end."""
    points: list = field(default_factory=list)
    move_time: float = 1.0
    stop_time: float = 0.0
    t_start: float = 0.0
    closed: bool = True
    name: str = "path"
    PARAMS = {"move_time": Param("s", "duration of each move between corners", 1e-3, 1e4),
              "stop_time": Param("s", "stop at each corner", 0.0, 1e4),
              "t_start": Param("s", "start time of the first move", 0.0, 1e6)}

    def corner_points(self) -> list:
        return [_vec3(p) for p in self.points]

    def segments(self):
        pts = self.corner_points()
        if self.closed:
            pts = pts + [pts[0]]
        segs, t = [], float(self.t_start)
        for a, b in zip(pts, pts[1:]):
            segs.append((SegmentKind.QUINTIC, t, t + self.move_time, np.concatenate([a, b])))
            t += self.move_time + self.stop_time
        return segs


@dataclass
class Rectangle(Polyline):
    """A rectangle in a coordinate plane of its frame, visited corner by corner.

    Corners (u, v) = centre ± (width/2, height/2) in the plane spanned by frame
    axes ``axes`` (e.g. (1, 2) for the y^(P) z^(P) plane of paper 000), in the order
    A = lower-left, B = lower-right, C = upper-right, D = upper-left, starting at
    ``first`` (0 = A)."""
    centre_u: float = 0.0
    centre_v: float = 0.0
    width: float = 0.1
    height: float = 0.1
    axes: tuple = (1, 2)
    first: int = 0
    name: str = "rectangle"
    PARAMS = {**Polyline.PARAMS,
              "centre_u": Param("m", "rectangle centre, first in-plane axis", -1e3, 1e3),
              "centre_v": Param("m", "rectangle centre, second in-plane axis", -1e3, 1e3),
              "width": Param("m", "side length along the first in-plane axis", 1e-6, 1e3),
              "height": Param("m", "side length along the second in-plane axis", 1e-6, 1e3)}

    def corners(self) -> dict:
        u, v, w, h = self.centre_u, self.centre_v, 0.5 * self.width, 0.5 * self.height
        return {"A": (u - w, v - h), "B": (u + w, v - h), "C": (u + w, v + h), "D": (u - w, v + h)}

    def corner_points(self):
        uv = list(self.corners().values())
        uv = uv[self.first:] + uv[:self.first]
        out = []
        for (u, v) in uv:
            p = np.zeros(3)
            p[self.axes[0]], p[self.axes[1]] = u, v
            out.append(p)
        return out


@dataclass
class EllipseArc(Trajectory):
    """Timed motion along an ellipse x = c + a cos φ, y = c + b sin φ in the frame's xy plane,
    φ from phi_start to phi_end by a quintic over [t_start, t_start + duration]."""
    a: float = 1.0
    b: float = 1.0
    centre: object = (0.0, 0.0, 0.0)
    phi_start: float = 0.0
    phi_end: float = 2 * math.pi
    t_start: float = 0.0
    duration: float = 1.0
    name: str = "ellipse"
    PARAMS = {"a": Param("m", "semi-axis along the frame's x", 1e-6, 1e3),
              "b": Param("m", "semi-axis along the frame's y", 1e-6, 1e3),
              "phi_start": Param("rad", "start angle", -1e3, 1e3),
              "phi_end": Param("rad", "end angle", -1e3, 1e3),
              "t_start": Param("s", "start time", 0.0, 1e6),
              "duration": Param("s", "duration", 1e-3, 1e6)}

    def segments(self):
        return [(SegmentKind.ELLIPSE, float(self.t_start), float(self.t_start + self.duration),
                 np.concatenate([_vec3(self.centre), [self.a, self.b, self.phi_start, self.phi_end]]))]


def plane_frame(angle: float, origin=(0.0, 0.0, 0.0)):
    """(R^(P), r_org^(P)) of paper 000 eq. (35): frame {P} rotated by ``angle`` about the
    global z axis, origin at ``origin`` (m)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.asarray(origin, dtype=float)
