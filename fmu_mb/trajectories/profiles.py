"""Scalar motion profiles with exact first and second derivatives.

The quintic rest-to-rest profile of paper 000 eq. (28) and paper 001 eq. (22):

    s(τ) = 10 τ³ − 15 τ⁴ + 6 τ⁵,   τ = (t − t_s) / Δt ∈ [0, 1],

so that a coordinate moves from s_s to s_s + Δs with zero velocity and
acceleration at both ends: x(t) = s_s + Δs·s(τ), ẋ = Δs·s'(τ)/Δt,
ẍ = Δs·s''(τ)/Δt². Outside [0, 1] the profile is held at its end values.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", inline="always")
def quintic(tau):
    """(s, ds/dτ, d²s/dτ²) of the rest-to-rest quintic at τ, clamped outside [0, 1]."""
    if tau <= 0.0:
        return 0.0, 0.0, 0.0
    if tau >= 1.0:
        return 1.0, 0.0, 0.0
    t2 = tau * tau
    t3 = t2 * tau
    return (t3 * (10.0 - 15.0 * tau + 6.0 * t2),
            t2 * (30.0 - 60.0 * tau + 30.0 * t2),
            tau * (60.0 - 180.0 * tau + 120.0 * t2))
