"""Programmed trajectories with exact derivatives: quintic moves (paper 000 eq. (28),
paper 001 eq. (22)), polylines/rectangles with stops, ellipse arcs, constant rates,
and the inclined plane frame B^(P) (paper 000 eq. (35))."""
from .paths import EllipseArc, Hold, Linear, Move, Param, Polyline, Rectangle, Trajectory, plane_frame
from .profiles import quintic
from .segments import ELLIPSE, LINEAR, NPAR, QUINTIC, eval_trajectory

__all__ = ["ELLIPSE", "EllipseArc", "Hold", "LINEAR", "Linear", "Move", "NPAR", "Param", "Polyline", "QUINTIC",
           "Rectangle", "Trajectory", "eval_trajectory", "plane_frame", "quintic"]
