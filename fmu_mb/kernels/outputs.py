"""All FMU outputs in one pass: evaluate the pipeline at the current state and gather.

``gather_outputs`` runs the staged pipeline (placements, q̈, reactions, friction)
at state x and writes every requested output into ``vals`` according to a spec
table — one row per output value reference — so a co-simulation step costs one
jitted call for its outputs instead of dozens of numpy operations.

Spec columns (int64 ``kind, a, b``; float64 ``f[3]``):

    Q q[a]          QD q̇[a]        F fF[a, b]      M fM[a, b]
    FN |fF[a]⊥axis| FL fric_load[a] TF tau_fric[a]
    SUP force of support a, world component b
    PT  world component b of point f (3-vector) on body a
    DEF tip deflection component b of a beam: a = first rfe body, f = (last rfe body,
        length of the last rfe, beam length); a = −1 for a beam compiled rigid
    EK, EP, ED, EW  kinetic, potential (gravity + springs), dissipated energy, input work
    IT  friction Newton iterations;  FF friction failures minus b
"""
from __future__ import annotations

import math

from numba import njit

from .system import derivative
from .forces import elastic_energy, support_force
from .kinematics import point_position
from .spatial import kinetic_energy

Q, QD, F, M, FN, FL, TF, SUP, PT, DEF, EK, EP, ED, EW, IT, FF = range(16)


@njit(cache=True, error_model="numpy")
def gather_outputs(m, d, x, time, tau_drive, xdot, vr, kind, a, b, f, vals):
    """Evaluate the pipeline at x, time ``time`` (driving forces tau_drive) and fill
    vals[vr[k]] for every spec row k."""
    derivative(m, d, x, time, tau_drive, xdot)
    nv, nb = m.nv, m.nbody
    fF, fM, oR, op, w, vl = d.fF, d.fM, d.oR, d.op, d.w, d.vl
    ax, load, tfric = m.body_axis, d.fric_load, d.tau_fric
    ek = 0.0
    ep = 0.0
    need_energy = False
    for k in range(kind.shape[0]):
        if kind[k] == EK or kind[k] == EP:
            need_energy = True
    if need_energy:
        mass, com, Ic, g = m.body_mass, m.body_com, m.body_Ic, m.gravity
        for i in range(nb):
            ek += kinetic_energy(mass, com, Ic, i, w[i, 0], w[i, 1], w[i, 2], vl[i, 0], vl[i, 1], vl[i, 2])
            if mass[i] != 0.0:
                px, py, pz = point_position(oR, op, i, com[i, 0], com[i, 1], com[i, 2])
                ep -= mass[i] * (g[0] * px + g[1] * py + g[2] * pz)
        ep += elastic_energy(m, d, x[0:nv])
    for k in range(kind.shape[0]):
        t = kind[k]
        i = a[k]
        j = b[k]
        if t == Q:
            v = x[i]
        elif t == QD:
            v = x[nv + i]
        elif t == F:
            v = fF[i, j]
        elif t == M:
            v = fM[i, j]
        elif t == FN:
            fm = fF[i, 0] * ax[i, 0] + fF[i, 1] * ax[i, 1] + fF[i, 2] * ax[i, 2]
            e0, e1, e2 = fF[i, 0] - fm * ax[i, 0], fF[i, 1] - fm * ax[i, 1], fF[i, 2] - fm * ax[i, 2]
            v = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        elif t == FL:
            v = load[i]
        elif t == TF:
            v = tfric[i]
        elif t == SUP:
            fx, fy, fz, _, _, _ = support_force(m.sup_body, m.sup_point, m.sup_anchor, m.sup_k, m.sup_d,
                                                oR, op, w, vl, i)
            v = fx if j == 0 else (fy if j == 1 else fz)
        elif t == PT:
            px, py, pz = point_position(oR, op, i, f[k, 0], f[k, 1], f[k, 2])
            v = px if j == 0 else (py if j == 1 else pz)
        elif t == DEF:
            if i < 0:
                v = 0.0
            else:
                last = int(f[k, 0])
                tx, ty, tz = point_position(oR, op, last, f[k, 1], 0.0, 0.0)
                dx, dy, dz = tx - op[i, 0], ty - op[i, 1], tz - op[i, 2]
                v = oR[i, 0, j] * dx + oR[i, 1, j] * dy + oR[i, 2, j] * dz - (f[k, 2] if j == 0 else 0.0)
        elif t == EK:
            v = ek
        elif t == EP:
            v = ep
        elif t == ED:
            v = x[x.shape[0] - 3]
        elif t == EW:
            v = x[x.shape[0] - 2]
        elif t == IT:
            v = float(d.fric_iters[0])
        else:
            v = float(d.fric_fail[0] - j)
        vals[vr[k]] = v
