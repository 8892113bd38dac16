"""The state derivative of any compiled mechanism: tree or constrained.

``derivative(m, d, x, t, tau_drive, xdot)`` dispatches on the number of constraint
rows: the articulated-body pipeline with the friction loop (kernels.dynamics) for
trees, the partitioned GPME / Lagrange solve (kernels.constrained) otherwise. It
compiles both; the simulator calls one family directly (see kernels.integrators on
compile time).
"""
from __future__ import annotations

from numba import njit

from .constrained import constrained_derivative
from .dynamics import state_derivative


@njit(cache=True, error_model="numpy")
def derivative(m, d, x, t, tau_drive, xdot):
    """xdot = f(x, t) for driving generalized forces tau_drive (nv,) held constant."""
    if m.nc > 0:
        constrained_derivative(m, d, x, t, tau_drive, xdot)
    else:
        state_derivative(m, d, x, tau_drive, xdot)
