"""Joint friction: laws, bristle dynamics and normal loads from the reaction wrench.

Every friction torque/force has the form  t_f = coef(q̇, z) · L + visc(q̇),
where L is the equivalent normal load from the joint reaction (see
:mod:`fmu_mb.model.friction`). ``friction_laws`` evaluates coef, visc and the
bristle rates ż once per state (they do not depend on the reaction);
``normal_loads`` evaluates L from the current reaction wrenches, once per
fixed-point iteration (kernels.dynamics).

Parameter slots of ``Model.dof_fric_par[d]`` (8 values):
    Coulomb–viscous (002 eq. 42): k_c, k_v, -, -, -, -, -, v_eps
    Stribeck (002 eq. 52):        k_c, k_v, k_s, v_s, -, -, -, v_eps
    Dahl (001 eqs. 14–15):        -, -, μ_s, -, σ0, -, γ, -
    LuGre (000 eq. 22):           μ_k, -, μ_s, v_s, σ0, σ1, σ2, -
"""
from __future__ import annotations

from numba import njit

from ..codes import JointType, LawKind, LoadKind
from .scalar import absval, exp, lesser, sqrt


@njit(cache=True, error_model="numpy", inline="always")
def reg_sign(v, eps):
    """Regularised sign v / sqrt(v² + ε²)."""
    return v / sqrt(v * v + eps * eps)


@njit(cache=True, error_model="numpy")
def law(code, par, k, v, z):
    """(coef, visc, zdot) of coordinate k (parameters par[k]) for velocity v, bristle state z."""
    if code == LawKind.COULOMB_VISCOUS:
        return par[k, 0] * reg_sign(v, par[k, 7]), par[k, 1] * v, 0.0
    if code == LawKind.STRIBECK:
        r = v / par[k, 3]
        mag = par[k, 0] + (par[k, 2] - par[k, 0]) * exp(-r * r)
        return mag * reg_sign(v, par[k, 7]), par[k, 1] * v, 0.0
    if code == LawKind.DAHL:
        sgn = 1.0 if v.real > 0.0 else (-1.0 if v.real < 0.0 else 0.0)
        base = 1.0 - par[k, 4] * z * sgn / par[k, 2]
        mag = absval(base) ** par[k, 6]
        zd = v * (mag if base.real >= 0.0 else -mag)
        return par[k, 4] * z, 0.0, zd
    if code == LawKind.LUGRE:
        r = v / par[k, 3]
        g = par[k, 0] + (par[k, 2] - par[k, 0]) * exp(-r * r)
        zd = v - par[k, 4] * absval(v) * z / g
        return par[k, 4] * z + par[k, 5] * zd + par[k, 6] * v, 0.0, zd
    return 0.0, 0.0, 0.0


@njit(cache=True, error_model="numpy")
def law_slopes(code, par, k, v, z, vb):
    """Partial derivatives of :func:`law` at (v, z), for the linearly implicit integrator
    (kernels.linearly_implicit): (∂coef/∂v, ∂visc/∂v, ∂coef/∂z, ∂ż/∂v, ∂ż/∂z).

    Exact where the law is smooth. Dahl's sgn(v) and LuGre's |v| have a kink at v = 0 where the
    two sides' ∂ż/∂v differ by orders of magnitude (LuGre: 1 ∓ σ0·z/g, ≈ 0 on the side the bristle
    is deflected to, ≈ 2 on the other). When the step is predicted to cross it (``vb``, the
    velocity the step heads for, v + h·q̈, has the other sign), the smaller of the two sides'
    slopes is taken, and ∂ż/∂z with |v|. Measured: the slope of the side being left made a
    breaking-away manipulator joint stick (creeping at −1e-4 m/s against a push, 0.1 rad off a
    fine-step run at h = 1 ms; 0.013 with this rule), the slope of the side being entered made the
    near-stuck crane column chatter at ~50 Hz (3 % of the dissipated energy lost over 20 s; the
    secant between them, 3 %; this rule, 0.6 %). A Rosenbrock-W method keeps its order with any
    such choice."""
    if code == LawKind.COULOMB_VISCOUS or code == LawKind.STRIBECK:
        eps = par[k, 7]
        den = sqrt(v * v + eps * eps)
        sg = v / den
        dsg = eps * eps / (den * den * den)
        if code == LawKind.COULOMB_VISCOUS:
            return par[k, 0] * dsg, par[k, 1], 0.0, 0.0, 0.0
        r = v / par[k, 3]
        e = exp(-r * r)
        mag = par[k, 0] + (par[k, 2] - par[k, 0]) * e
        dmag = (par[k, 2] - par[k, 0]) * e * (-2.0 * r / par[k, 3])
        return dmag * sg + mag * dsg, par[k, 1], 0.0, 0.0, 0.0
    cross = v.real * vb.real < 0.0
    if code == LawKind.DAHL:
        sgn = 1.0 if v.real > 0.0 else (-1.0 if v.real < 0.0 else (1.0 if vb.real >= 0.0 else -1.0))
        s0, mu, gam = par[k, 4], par[k, 2], par[k, 6]
        base = 1.0 - s0 * z * sgn / mu
        mag = absval(base) ** gam
        dzd_dz = 0.0
        if base.real != 0.0:
            dzd_dz = -absval(v) * gam * absval(base) ** (gam - 1.0) * s0 / mu
        dzd_dv = mag if base.real >= 0.0 else -mag
        if cross:                                   # the other side: sgn → −sgn
            other = 1.0 + s0 * z * sgn / mu
            dzd_dv = lesser(dzd_dv, absval(other) ** gam if other.real >= 0.0 else -absval(other) ** gam)
        return 0.0, 0.0, s0, dzd_dv, dzd_dz
    if code == LawKind.LUGRE:
        s0, s1, s2, vs = par[k, 4], par[k, 5], par[k, 6], par[k, 3]
        r = v / vs
        e = exp(-r * r)
        g = par[k, 0] + (par[k, 2] - par[k, 0]) * e
        dg = (par[k, 2] - par[k, 0]) * e * (-2.0 * r / vs)
        av = absval(v)
        sv = 1.0 if v.real > 0.0 else (-1.0 if v.real < 0.0 else (1.0 if vb.real >= 0.0 else -1.0))
        dzd_dz = -s0 * av / g
        dzd_dv = 1.0 - s0 * z * (sv * g - av * dg) / (g * g)
        if cross:                                   # the other side: sv → −sv
            dzd_dv = lesser(dzd_dv, 1.0 + s0 * z * (sv * g - av * dg) / (g * g))
        return s1 * dzd_dv + s2, 0.0, s0 + s1 * dzd_dz, dzd_dv, dzd_dz
    return 0.0, 0.0, 0.0, 0.0, 0.0


@njit(cache=True, error_model="numpy")
def friction_laws(m, d, v, z):
    """d.fric_coef, d.fric_visc, d.zdot for velocities v and bristle states z (at the coordinates with a law,
    m.fric_dofs: the others' coefficients stay the zeros Data starts with)."""
    fd, code, zidx, par = m.fric_dofs, m.dof_fric_law, m.dof_fric_z, m.dof_fric_par
    coef, visc, zdot = d.fric_coef, d.fric_visc, d.zdot
    for t in range(fd.shape[0]):
        k = fd[t]
        zi = zidx[k]
        c, vis, zd = law(code[k], par, k, v[k], z[zi] if zi >= 0 else 0.0)
        coef[k] = c
        visc[k] = vis
        if zi >= 0:
            zdot[zi] = zd


@njit(cache=True, error_model="numpy")
def joint_load(load_kind, geom, k, revolute, a0, a1, a2, fM, fF, b):
    """Equivalent normal load L of coordinate k from the reaction (fM[b], fF[b]) of its
    joint body b, in the joint frame (axis a).

    Journal (000 eq. 21, 001 eq. 13): revolute L = f_r·d/2, prismatic L = f_r.
    Pin (002 eq. 47): revolute L = R_p(τ_r/R_b + f_r) + R_n f_m,
    prismatic L = τ_p/R_b + f_p + τ_m/R_n. Fixed: L = geom[k, 0].
    """
    if load_kind == LoadKind.FIXED:
        return geom[k, 0]
    fm = fF[b, 0] * a0 + fF[b, 1] * a1 + fF[b, 2] * a2
    fx, fy, fz = fF[b, 0] - fm * a0, fF[b, 1] - fm * a1, fF[b, 2] - fm * a2
    fr = sqrt(fx * fx + fy * fy + fz * fz)
    if load_kind == LoadKind.JOURNAL:
        return fr * geom[k, 0] if revolute else fr
    tm = fM[b, 0] * a0 + fM[b, 1] * a1 + fM[b, 2] * a2
    mx, my, mz = fM[b, 0] - tm * a0, fM[b, 1] - tm * a1, fM[b, 2] - tm * a2
    tr = sqrt(mx * mx + my * my + mz * mz)
    if revolute:
        return geom[k, 1] * (tr / geom[k, 2] + fr) + geom[k, 0] * absval(fm)
    return tr / geom[k, 2] + fr + absval(tm) / geom[k, 0]


@njit(cache=True, error_model="numpy", inline="always")
def _norm_perp(x, y, z, a0, a1, a2):
    """(|x − (x·a)a|, unit vector of that component, x·a)."""
    p = x * a0 + y * a1 + z * a2
    px, py, pz = x - p * a0, y - p * a1, z - p * a2
    n = sqrt(px * px + py * py + pz * pz)
    if n.real > 0.0:
        return n, px / n, py / n, pz / n, p
    return 0.0, 0.0, 0.0, 0.0, p


@njit(cache=True, error_model="numpy")
def load_and_gradient(load_kind, geom, k, revolute, a0, a1, a2, W, i, dL, j):
    """Equivalent normal load L of coordinate k from the wrench W[i] = (moment, force)
    in its joint frame, and ∂L/∂W into the row dL[j] (6,). Same law as
    :func:`joint_load`; where a norm is zero its gradient is taken as zero."""
    for r in range(6):
        dL[j, r] = 0.0
    if load_kind == LoadKind.FIXED:
        return geom[k, 0]
    fr, ux, uy, uz, fm = _norm_perp(W[i, 3], W[i, 4], W[i, 5], a0, a1, a2)
    if load_kind == LoadKind.JOURNAL:
        c = geom[k, 0] if revolute else 1.0
        dL[j, 3], dL[j, 4], dL[j, 5] = c * ux, c * uy, c * uz
        return c * fr
    tr, vx, vy, vz, tm = _norm_perp(W[i, 0], W[i, 1], W[i, 2], a0, a1, a2)
    if revolute:
        Rn, Rp, Rb = geom[k, 0], geom[k, 1], geom[k, 2]
        sm = 1.0 if fm.real > 0.0 else (-1.0 if fm.real < 0.0 else 0.0)
        dL[j, 0], dL[j, 1], dL[j, 2] = Rp / Rb * vx, Rp / Rb * vy, Rp / Rb * vz
        dL[j, 3] = Rp * ux + Rn * sm * a0
        dL[j, 4] = Rp * uy + Rn * sm * a1
        dL[j, 5] = Rp * uz + Rn * sm * a2
        return Rp * (tr / Rb + fr) + Rn * absval(fm)
    Rn, Rb = geom[k, 0], geom[k, 2]
    st = 1.0 if tm.real > 0.0 else (-1.0 if tm.real < 0.0 else 0.0)
    dL[j, 0] = vx / Rb + st * a0 / Rn
    dL[j, 1] = vy / Rb + st * a1 / Rn
    dL[j, 2] = vz / Rb + st * a2 / Rn
    dL[j, 3], dL[j, 4], dL[j, 5] = ux, uy, uz
    return tr / Rb + fr + absval(tm) / Rn


@njit(cache=True, error_model="numpy")
def normal_loads(m, d):
    """d.fric_load from the current reaction wrenches d.fM/fF."""
    nv, code, kind, geom, dof_body, jtype, ax = (m.nv, m.dof_fric_law, m.dof_fric_load, m.dof_fric_geom,
                                                 m.dof_body, m.body_jtype, m.body_axis)
    load, fM, fF = d.fric_load, d.fM, d.fF
    for k in range(nv):
        if code[k] == 0:
            load[k] = 0.0
        else:
            b = dof_body[k]
            load[k] = joint_load(kind[k], geom, k, jtype[b] == JointType.REVOLUTE, ax[b, 0], ax[b, 1], ax[b, 2], fM, fF, b)
