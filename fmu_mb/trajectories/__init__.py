"""Programmed trajectories with exact derivatives: quintic moves (paper 000 eq. (28),
paper 001 eq. (22)), polylines/rectangles with stops, ellipse arcs, constant rates,
and the inclined plane frame B^(P) (paper 000 eq. (35))."""
from .paths import EllipseArc, Hold, Linear, Move, Param, Polyline, Rectangle, Trajectory, plane_frame
from .kinds import ELLIPSE, LINEAR, NPAR, QUINTIC

__all__ = ["ELLIPSE", "EllipseArc", "Hold", "LINEAR", "Linear", "Move", "NPAR", "Param", "Polyline", "QUINTIC",
           "Rectangle", "Trajectory", "eval_trajectory", "plane_frame", "quintic"]


def __getattr__(name):
    # the jitted functions import numba only when asked for (an FMU with native kernels never is)
    if name == "quintic":
        from .profiles import quintic
        return quintic
    if name == "eval_trajectory":
        from .segments import eval_trajectory
        return eval_trajectory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
