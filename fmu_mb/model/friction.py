"""Joint friction descriptions (what a model file writes).

A friction description has two independent parts:

* the **law** giving the friction coefficient or force from the joint velocity
  (and, for Dahl and LuGre, an internal bristle state z integrated with the
  mechanism state);
* the **normal load** L that the coefficient multiplies, computed from the
  joint reaction wrench (paper 000 eq. (21), 001 eq. (13), 002 eq. (47)).

For a revolute joint L is an equivalent torque (N·m) and the friction torque is
t_f = coefficient · L; for a prismatic joint L is a force (N).

Sign at zero velocity: the Coulomb terms of :class:`CoulombViscous` and
:class:`Stribeck` need sgn(q̇). We use the regularised sign
sgn_ε(v) = v / sqrt(v² + ε²) with ε = ``v_eps`` (rad/s or m/s); it is exact to
within ε²/(2v²) for |v| ≫ ε, passes through zero and behaves like a stiff
viscous damper of slope k_c·L/ε around rest. The bristle models (Dahl, LuGre)
need no regularisation: their v·sgn(v) = |v| is continuous.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from ..codes import LawKind


def _positive(owner: str, name: str, value: float, allow_zero: bool = True) -> None:
    ok = math.isfinite(value) and (value >= 0.0 if allow_zero else value > 0.0)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{owner}: {name} must be finite and {bound} (got {value!r})")


# --------------------------------------------------------------------- normal load
@dataclass(frozen=True)
class Journal:
    """Journal-type normal load (paper 000 eq. (21), paper 001 eq. (13)).

    Revolute: L = f_n · d/2 with f_n the radial reaction force (component
    perpendicular to the joint axis) and d the journal diameter, m.
    Prismatic: L = f_n, the reaction force perpendicular to the sliding axis
    (``diameter`` is unused).
    """
    diameter: float = 0.0

    def validate(self, owner: str) -> None:
        _positive(owner, "Journal.diameter", self.diameter)


@dataclass(frozen=True)
class PinBearing:
    """Equivalent normal load of paper 002 eq. (47) from the full reaction wrench.

    R_n friction arm of the axial (thrust) face, R_p pin radius, R_b bending
    reaction arm (bearing span), all m.

    Revolute: L = R_p·(τ_r / R_b + f_r) + R_n·f_m   [N·m]
    Prismatic: L = τ_p / R_b + f_p + τ_m / R_n       [N]

    with τ_r, f_r the moment and force perpendicular to the axis (eqs. 39, 44)
    and f_m the force along it (eq. 46); for the prismatic joint τ_p, f_p are
    perpendicular moment and force and τ_m the moment about the axis. The
    revolute form as printed, τ_r/R_b + f_r·R_p + f_m·R_n, adds a force to two
    torques; we read it as the bending-moment couple τ_r/R_b acting on the pin
    radius like the radial force f_r, which restores units and reduces to the
    journal form (L = f_r·R_p) when τ_r = f_m = 0.
    """
    R_n: float
    R_p: float
    R_b: float

    def validate(self, owner: str) -> None:
        _positive(owner, "PinBearing.R_n", self.R_n, allow_zero=False)
        _positive(owner, "PinBearing.R_p", self.R_p, allow_zero=False)
        _positive(owner, "PinBearing.R_b", self.R_b, allow_zero=False)


@dataclass(frozen=True)
class FixedLoad:
    """A constant normal load, independent of the joint reaction: L = ``value`` (N·m for a
    revolute joint, N for a prismatic one). With ``CoulombViscous(k_c=1, k_v=c)`` it is the
    friction of URDF's ``<dynamics friction="F" damping="c"/>`` (F = value): a Coulomb torque of
    constant size, the papers' laws without their load dependence."""
    value: float

    def validate(self, owner: str) -> None:
        _positive(owner, "FixedLoad.value", self.value)


# --------------------------------------------------------------------- laws
@dataclass(frozen=True)
class CoulombViscous:
    """Coulomb–viscous friction, paper 002 eq. (42).

    t_f = k_c · L · sgn_ε(q̇) + k_v · q̇   (k_c dimensionless; k_v in N·m·s/rad or N·s/m)
    """
    k_c: float
    k_v: float = 0.0
    v_eps: float = 1e-3

    code = LawKind.COULOMB_VISCOUS
    n_states = 0

    def validate(self, owner: str) -> None:
        _positive(owner, "CoulombViscous.k_c", self.k_c)
        _positive(owner, "CoulombViscous.k_v", self.k_v)
        _positive(owner, "CoulombViscous.v_eps", self.v_eps, allow_zero=False)

    def params(self):
        return [self.k_c, self.k_v, 0.0, 1.0, 0.0, 0.0, 0.0, self.v_eps]


@dataclass(frozen=True)
class Stribeck:
    """Stribeck friction (Bo & Pavelescu), paper 002 eq. (52).

    t_f = [k_c·L + (k_s − k_c)·L·exp(−(q̇/v_s)²)]·sgn_ε(q̇) + k_v·q̇
    """
    k_c: float
    k_s: float
    v_s: float
    k_v: float = 0.0
    v_eps: float = 1e-3

    code = LawKind.STRIBECK
    n_states = 0

    def validate(self, owner: str) -> None:
        _positive(owner, "Stribeck.k_c", self.k_c)
        _positive(owner, "Stribeck.k_s", self.k_s)
        _positive(owner, "Stribeck.k_v", self.k_v)
        _positive(owner, "Stribeck.v_s", self.v_s, allow_zero=False)
        _positive(owner, "Stribeck.v_eps", self.v_eps, allow_zero=False)

    def params(self):
        return [self.k_c, self.k_v, self.k_s, self.v_s, 0.0, 0.0, 0.0, self.v_eps]


@dataclass(frozen=True)
class Dahl:
    """Dahl bristle friction, paper 001 eqs. (14)–(15).

    ż = q̇ · |1 − σ0·z·sgn(q̇)/μ_s|^γ · sgn(1 − σ0·z·sgn(q̇)/μ_s),   μ = σ0·z,
    t_f = μ · L.   σ0 in 1/rad (1/m), γ ∈ [1, 2].

    The paper prints (1 − σ0 z sgn q̇/μ_s)^γ; for non-integer γ the base can be
    negative, and we use the usual signed power, which keeps |σ0 z| ≤ μ_s
    attracting. sgn(0) = 0, so ż = 0 at rest without regularisation.
    """
    sigma0: float
    mu_s: float
    gamma: float = 1.0

    code = LawKind.DAHL
    n_states = 1

    def validate(self, owner: str) -> None:
        _positive(owner, "Dahl.sigma0", self.sigma0, allow_zero=False)
        _positive(owner, "Dahl.mu_s", self.mu_s, allow_zero=False)
        if not (1.0 <= self.gamma <= 2.0):
            raise ValueError(f"{owner}: Dahl.gamma must lie in [1, 2] (got {self.gamma!r})")

    def params(self):
        return [0.0, 0.0, self.mu_s, 1.0, self.sigma0, 0.0, self.gamma, 0.0]


@dataclass(frozen=True)
class LuGre:
    """LuGre friction, paper 000 eq. (22), paper 001 eqs. (14)–(15).

    g(q̇) = μ_k + (μ_s − μ_k)·exp(−(q̇/v_s)²),
    ż = q̇ − σ0·|q̇|·z / g(q̇),   μ = σ0·z + σ1·ż + σ2·q̇,   t_f = μ · L.
    σ0 in 1/rad, σ1 and σ2 in s/rad (per metre for prismatic joints).
    """
    sigma0: float
    sigma1: float
    sigma2: float
    mu_s: float
    mu_k: float
    v_s: float

    code = LawKind.LUGRE
    n_states = 1

    def validate(self, owner: str) -> None:
        _positive(owner, "LuGre.sigma0", self.sigma0, allow_zero=False)
        _positive(owner, "LuGre.sigma1", self.sigma1)
        _positive(owner, "LuGre.sigma2", self.sigma2)
        _positive(owner, "LuGre.mu_k", self.mu_k, allow_zero=False)
        _positive(owner, "LuGre.mu_s", self.mu_s, allow_zero=False)
        _positive(owner, "LuGre.v_s", self.v_s, allow_zero=False)
        if self.mu_s < self.mu_k:
            raise ValueError(f"{owner}: LuGre.mu_s ({self.mu_s}) must be >= mu_k ({self.mu_k})")

    def params(self):
        return [self.mu_k, 0.0, self.mu_s, self.v_s, self.sigma0, self.sigma1, self.sigma2, 0.0]


FrictionLaw = CoulombViscous | Stribeck | Dahl | LuGre
NormalLoad = Journal | PinBearing | FixedLoad

@dataclass(frozen=True)
class Friction:
    """Friction of one joint: a law and the normal-load form it multiplies."""
    law: FrictionLaw
    load: NormalLoad = Journal(0.0)

    def validate(self, owner: str) -> None:
        if not isinstance(self.law, (CoulombViscous, Stribeck, Dahl, LuGre)):
            raise TypeError(f"{owner}: friction law must be CoulombViscous, Stribeck, Dahl or LuGre, "
                            f"got {type(self.law).__name__}")
        if not isinstance(self.load, (Journal, PinBearing, FixedLoad)):
            raise TypeError(f"{owner}: friction load must be Journal, PinBearing or FixedLoad, "
                            f"got {type(self.load).__name__}")
        self.law.validate(owner)
        self.load.validate(owner)
