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

import math

from numba import njit

from ..model.compiled import REVOLUTE
from ..model.friction import LAW_COULOMB_VISCOUS, LAW_DAHL, LAW_LUGRE, LAW_STRIBECK, LOAD_JOURNAL


@njit(cache=True)
def reg_sign(v, eps):
    """Regularised sign v / sqrt(v² + ε²)."""
    return v / math.sqrt(v * v + eps * eps)


@njit(cache=True)
def law(code, par, v, z):
    """(coef, visc, zdot) of one joint for velocity v and bristle state z."""
    if code == LAW_COULOMB_VISCOUS:
        return par[0] * reg_sign(v, par[7]), par[1] * v, 0.0
    if code == LAW_STRIBECK:
        r = v / par[3]
        mag = par[0] + (par[2] - par[0]) * math.exp(-r * r)
        return mag * reg_sign(v, par[7]), par[1] * v, 0.0
    if code == LAW_DAHL:
        sgn = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
        base = 1.0 - par[4] * z * sgn / par[2]
        gam = par[6]
        mag = abs(base) ** gam
        zd = v * (mag if base >= 0.0 else -mag)
        return par[4] * z, 0.0, zd
    if code == LAW_LUGRE:
        r = v / par[3]
        g = par[0] + (par[2] - par[0]) * math.exp(-r * r)
        zd = v - par[4] * abs(v) * z / g
        return par[4] * z + par[5] * zd + par[6] * v, 0.0, zd
    return 0.0, 0.0, 0.0


@njit(cache=True)
def friction_laws(model, data, v, z):
    """data.fric_coef, data.fric_visc, data.zdot for velocities v and bristle states z."""
    for d in range(model.nv):
        code = model.dof_fric_law[d]
        if code == 0:
            data.fric_coef[d] = 0.0
            data.fric_visc[d] = 0.0
            continue
        zi = model.dof_fric_z[d]
        zv = z[zi] if zi >= 0 else 0.0
        c, vis, zd = law(code, model.dof_fric_par[d], v[d], zv)
        data.fric_coef[d] = c
        data.fric_visc[d] = vis
        if zi >= 0:
            data.zdot[zi] = zd


@njit(cache=True)
def joint_load(model, d, M, F):
    """Equivalent normal load L of coordinate d from its joint's reaction (M, F) in the joint frame.

    Journal (000 eq. 21, 001 eq. 13): revolute L = f_r·d/2, prismatic L = f_r.
    Pin (002 eq. 47): revolute L = R_p(τ_r/R_b + f_r) + R_n f_m,
    prismatic L = τ_p/R_b + f_p + τ_m/R_n.
    """
    b = model.dof_body[d]
    a = model.body_axis[b]
    fm = F[0] * a[0] + F[1] * a[1] + F[2] * a[2]
    fx, fy, fz = F[0] - fm * a[0], F[1] - fm * a[1], F[2] - fm * a[2]
    fr = math.sqrt(fx * fx + fy * fy + fz * fz)
    g = model.dof_fric_geom[d]
    if model.dof_fric_load[d] == LOAD_JOURNAL:
        if model.body_jtype[b] == REVOLUTE:
            return fr * g[0]
        return fr
    tm = M[0] * a[0] + M[1] * a[1] + M[2] * a[2]
    mx, my, mz = M[0] - tm * a[0], M[1] - tm * a[1], M[2] - tm * a[2]
    tr = math.sqrt(mx * mx + my * my + mz * mz)
    if model.body_jtype[b] == REVOLUTE:
        return g[1] * (tr / g[2] + fr) + g[0] * abs(fm)
    return tr / g[2] + fr + abs(tm) / g[0]


@njit(cache=True)
def normal_loads(model, data):
    """data.fric_load from the current reaction wrenches data.fM/fF."""
    for d in range(model.nv):
        if model.dof_fric_law[d] == 0:
            data.fric_load[d] = 0.0
            continue
        b = model.dof_body[d]
        data.fric_load[d] = joint_load(model, d, data.fM[b], data.fF[b])
