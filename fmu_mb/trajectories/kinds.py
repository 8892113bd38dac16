"""Segment kinds and the width of a segment's parameter row (layout in trajectories.segments)."""
QUINTIC, ELLIPSE, LINEAR = 0, 1, 2
NPAR = 8
