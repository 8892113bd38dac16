"""Checks of an imported robot that need its compiled form (URDF and MJCF import).

A robot file can describe a mechanism whose joint-space mass matrix M(q) is singular although
every moving joint carries mass: two joints on one axis with no inertia between them, a link
whose only inertia lies on its joint's axis. Pinocchio's ABA and the FMU's integrators then
divide by zero (the first step gives a non-finite state). Such a file is refused at import with
the coordinates that move without moving any inertia.
"""
from __future__ import annotations

import numpy as np

#: M(q0) is singular when its smallest eigenvalue is below this fraction of its largest. Measured on
#: example-robot-data's 63 fixed-base robots: the smallest ratio of a regular one is 1.2e-7 (PR2),
#: the singular iCub's 7.4e-18
SINGULAR_RATIO = 1e-12


def singular_motion(cm) -> str | None:
    """Why the mass matrix of the compiled mechanism ``cm`` at its start pose is singular, or None."""
    from ..algorithms import crba
    from ..model import make_data

    n = len(cm.dof_names)
    if n == 0:
        return None
    M = crba(cm.model, make_data(cm.model), np.asarray(cm.q0, float))
    M = np.triu(M) + np.triu(M, 1).T
    w, V = np.linalg.eigh(M)
    if w[0] > SINGULAR_RATIO * max(w[-1], 0.0):
        return None
    v = V[:, 0] / np.max(np.abs(V[:, 0]))
    moving = [f"{cm.dof_names[k]} ({v[k]:+.2f})" for k in np.argsort(-np.abs(v)) if abs(v[k]) > 1e-3][:6]
    return (f"the mass matrix is singular at the start pose (smallest eigenvalue {w[0]:.2g}, largest {w[-1]:.2g}): "
            f"the motion {', '.join(moving)} moves no inertia (joints on one axis with no mass between them, or "
            "a link whose only inertia lies on its joint's axis); make a joint fixed or give the link between "
            "them an inertia")
