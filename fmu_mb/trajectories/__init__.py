"""Programmed trajectories with exact derivatives: quintic moves (paper 000 eq. (28),
paper 001 eq. (22)), polylines/rectangles with stops, ellipse arcs, constant rates,
and the inclined plane frame B^(P) (paper 000 eq. (35)). Descriptions only: the jitted
evaluation is fmu_mb.kernels.trajectory (from Python: fmu_mb.algorithms.trajectory)."""
from .paths import (EllipseArc, Hold, Linear, Move, Param, Polyline, Rectangle, TableTrajectory, Trajectory,
                    plane_frame)

__all__ = ["EllipseArc", "Hold", "Linear", "Move", "Param", "Polyline", "Rectangle", "TableTrajectory", "Trajectory",
           "plane_frame"]
