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


@njit(cache=True, error_model="numpy", inline="always")
def reg_sign(v, eps):
    """Regularised sign v / sqrt(v² + ε²)."""
    return v / math.sqrt(v * v + eps * eps)


@njit(cache=True, error_model="numpy", inline="always")
def law(code, par, k, v, z):
    """(coef, visc, zdot) of coordinate k (parameters par[k]) for velocity v, bristle state z."""
    if code == LAW_COULOMB_VISCOUS:
        return par[k, 0] * reg_sign(v, par[k, 7]), par[k, 1] * v, 0.0
    if code == LAW_STRIBECK:
        r = v / par[k, 3]
        mag = par[k, 0] + (par[k, 2] - par[k, 0]) * math.exp(-r * r)
        return mag * reg_sign(v, par[k, 7]), par[k, 1] * v, 0.0
    if code == LAW_DAHL:
        sgn = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
        base = 1.0 - par[k, 4] * z * sgn / par[k, 2]
        mag = abs(base) ** par[k, 6]
        zd = v * (mag if base >= 0.0 else -mag)
        return par[k, 4] * z, 0.0, zd
    if code == LAW_LUGRE:
        r = v / par[k, 3]
        g = par[k, 0] + (par[k, 2] - par[k, 0]) * math.exp(-r * r)
        zd = v - par[k, 4] * abs(v) * z / g
        return par[k, 4] * z + par[k, 5] * zd + par[k, 6] * v, 0.0, zd
    return 0.0, 0.0, 0.0


@njit(cache=True, error_model="numpy", inline="always")
def friction_laws(m, d, v, z):
    """d.fric_coef, d.fric_visc, d.zdot for velocities v and bristle states z."""
    nv, code, zidx, par = m.nv, m.dof_fric_law, m.dof_fric_z, m.dof_fric_par
    coef, visc, zdot = d.fric_coef, d.fric_visc, d.zdot
    for k in range(nv):
        if code[k] == 0:
            coef[k] = 0.0
            visc[k] = 0.0
            continue
        zi = zidx[k]
        c, vis, zd = law(code[k], par, k, v[k], z[zi] if zi >= 0 else 0.0)
        coef[k] = c
        visc[k] = vis
        if zi >= 0:
            zdot[zi] = zd


@njit(cache=True, error_model="numpy", inline="always")
def joint_load(load_kind, geom, k, revolute, a0, a1, a2, fM, fF, b):
    """Equivalent normal load L of coordinate k from the reaction (fM[b], fF[b]) of its
    joint body b, in the joint frame (axis a).

    Journal (000 eq. 21, 001 eq. 13): revolute L = f_r·d/2, prismatic L = f_r.
    Pin (002 eq. 47): revolute L = R_p(τ_r/R_b + f_r) + R_n f_m,
    prismatic L = τ_p/R_b + f_p + τ_m/R_n.
    """
    fm = fF[b, 0] * a0 + fF[b, 1] * a1 + fF[b, 2] * a2
    fx, fy, fz = fF[b, 0] - fm * a0, fF[b, 1] - fm * a1, fF[b, 2] - fm * a2
    fr = math.sqrt(fx * fx + fy * fy + fz * fz)
    if load_kind == LOAD_JOURNAL:
        return fr * geom[k, 0] if revolute else fr
    tm = fM[b, 0] * a0 + fM[b, 1] * a1 + fM[b, 2] * a2
    mx, my, mz = fM[b, 0] - tm * a0, fM[b, 1] - tm * a1, fM[b, 2] - tm * a2
    tr = math.sqrt(mx * mx + my * my + mz * mz)
    if revolute:
        return geom[k, 1] * (tr / geom[k, 2] + fr) + geom[k, 0] * abs(fm)
    return tr / geom[k, 2] + fr + abs(tm) / geom[k, 0]


@njit(cache=True, error_model="numpy", inline="always")
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
            load[k] = joint_load(kind[k], geom, k, jtype[b] == REVOLUTE, ax[b, 0], ax[b, 1], ax[b, 2], fM, fF, b)
