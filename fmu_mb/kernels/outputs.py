"""All FMU outputs in one pass: evaluate the pipeline at the current state and gather.

``gather_outputs_tree`` / ``gather_outputs_constrained`` (picked by the number of
constraint rows, see kernels.integrators on why there are two) run the staged pipeline
(placements, q̈, reactions, friction, constraint forces) at state x and write every requested output into ``vals`` according to a spec
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
    TRQ C_pᵀλ_p at coordinate a (tau_required);  LAM λ of constraint row a (−1: absent → 0)
    CF, CMO  component b of the force / moment of constraint object a on its link (cut joints:
        in the joint frame on link a, about its origin; others: world axes about the point);
        a = −1 (constraint absent with these options) → 0
    CV  violation of constraint object a (norm of its position-type rows; ellipse rows
        |Φ|/|∇Φ|; first-order rows their velocity residual);  CVA orientation violation, rad
    UQJ reaction of body a uniquely determined (1/0);  UQC same for constraint object a (−1 → 1)
    RANK rank of C;  RED redundancy p;  REP partitions chosen;  EC work of the constraint forces
"""
from __future__ import annotations

import math

from numba import njit

from .constrained import constrained_derivative, uniqueness
from .dynamics import state_derivative
from .forces import elastic_energy, support_force
from .kinematics import point_position
from .spatial import kinetic_energy

from .codes import (CF, CMO, CV, CVA, DEF, EC, ED, EK, EP, EW, F, FF, FL, FN, IT, LAM, PT, QD, RANK, RED, REP,
                    SUP, TF, TRQ, UQC, UQJ, M, Q)


@njit(cache=True, error_model="numpy")
def gather_outputs_tree(m, d, x, time, tau_drive, xdot, vr, kind, a, b, f, vals):
    """Evaluate the pipeline of a mechanism without constraint rows at x (driving forces
    tau_drive) and fill vals[vr[k]] for every spec row k."""
    state_derivative(m, d, x, tau_drive, xdot)
    _fill(m, d, x, vr, kind, a, b, f, vals)


@njit(cache=True, error_model="numpy")
def gather_outputs_constrained(m, d, x, time, tau_drive, xdot, vr, kind, a, b, f, vals):
    """The same for a constrained mechanism at time ``time``, with the reaction-uniqueness
    test (paper 004) when a uniqueness flag is among the outputs."""
    constrained_derivative(m, d, x, time, tau_drive, xdot)
    for k in range(kind.shape[0]):
        if kind[k] == UQJ or kind[k] == UQC:
            uniqueness(m, d, d.uq_obj, d.uq_body)
            break
    _fill(m, d, x, vr, kind, a, b, f, vals)


@njit(cache=True, error_model="numpy")
def _fill(m, d, x, vr, kind, a, b, f, vals):
    """vals[vr[k]] for every spec row k, from the pipeline's last evaluation at x."""
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
        elif t == FF:
            v = float(d.fric_fail[0] - j)
        elif t == TRQ:
            v = d.lam_req[i]
        elif t == LAM:
            v = d.lam[i] if i >= 0 else 0.0
        elif t == CF or t == CMO:
            v = constraint_wrench_component(m, d, i, j, t == CMO) if i >= 0 else 0.0
        elif t == CV or t == CVA:
            v = constraint_violation(m, d, i, t == CVA) if i >= 0 else 0.0
        elif t == UQJ:
            v = float(d.uq_body[i]) if m.nc > 0 else 1.0
        elif t == UQC:
            v = float(d.uq_obj[i]) if i >= 0 else 1.0
        elif t == RANK:
            v = float(d.cp_rank[0])
        elif t == RED:
            v = float(m.nc - d.cp_rank[0])
        elif t == REP:
            v = float(d.cp_count[0])
        else:
            v = x[x.shape[0] - 1]
        vals[vr[k]] = v


@njit(cache=True, error_model="numpy")
def constraint_wrench_component(m, d, o, c, moment):
    """Component c of the force (moment=False) or moment of constraint object o on its link."""
    nc, obj, oR, op = m.nc, m.con_obj, d.oR, d.op
    lam, wM, wF, wpa = d.lam, d.con_wM, d.con_wF, d.con_wpa
    b = m.cobj_body[o]
    fp = m.cobj_p
    if b >= 0:
        P0 = op[b, 0] + oR[b, 0, 0] * fp[o, 0] + oR[b, 0, 1] * fp[o, 1] + oR[b, 0, 2] * fp[o, 2]
        P1 = op[b, 1] + oR[b, 1, 0] * fp[o, 0] + oR[b, 1, 1] * fp[o, 1] + oR[b, 1, 2] * fp[o, 2]
        P2 = op[b, 2] + oR[b, 2, 0] * fp[o, 0] + oR[b, 2, 1] * fp[o, 1] + oR[b, 2, 2] * fp[o, 2]
    else:
        P0, P1, P2 = fp[o, 0], fp[o, 1], fp[o, 2]
    F0 = F1 = F2 = M0 = M1 = M2 = 0.0
    for k in range(nc):
        if obj[k] != o:
            continue
        L = lam[k]
        f0, f1, f2 = L * wF[k, 0], L * wF[k, 1], L * wF[k, 2]
        r0, r1, r2 = wpa[k, 0] - P0, wpa[k, 1] - P1, wpa[k, 2] - P2
        F0 += f0
        F1 += f1
        F2 += f2
        M0 += L * wM[k, 0] + r1 * f2 - r2 * f1
        M1 += L * wM[k, 1] + r2 * f0 - r0 * f2
        M2 += L * wM[k, 2] + r0 * f1 - r1 * f0
    V0, V1, V2 = (M0, M1, M2) if moment else (F0, F1, F2)
    if m.cobj_frame[o] == 0 or b < 0:
        return V0 if c == 0 else (V1 if c == 1 else V2)
    # axis c of the constraint frame in the world: oR[b] · cobj_R[o][:, c]
    R = m.cobj_R
    e0 = oR[b, 0, 0] * R[o, 0, c] + oR[b, 0, 1] * R[o, 1, c] + oR[b, 0, 2] * R[o, 2, c]
    e1 = oR[b, 1, 0] * R[o, 0, c] + oR[b, 1, 1] * R[o, 1, c] + oR[b, 1, 2] * R[o, 2, c]
    e2 = oR[b, 2, 0] * R[o, 0, c] + oR[b, 2, 1] * R[o, 1, c] + oR[b, 2, 2] * R[o, 2, c]
    return e0 * V0 + e1 * V1 + e2 * V2


@njit(cache=True, error_model="numpy")
def constraint_violation(m, d, o, angle):
    """Position-level violation of constraint object o (angle=True: its orientation rows, rad)."""
    nc, obj, kind, phi, phid, wF = m.nc, m.con_obj, m.con_kind, d.con_phi, d.con_phid, d.con_wF
    s = 0.0
    for k in range(nc):
        if obj[k] != o:
            continue
        kd = kind[k]
        if angle:
            if kd == 1:
                s += phi[k] * phi[k]
            continue
        if kd == 1:
            continue
        if kd == 3:
            v = phid[k]
        elif kd == 4:
            g = math.sqrt(wF[k, 0] * wF[k, 0] + wF[k, 1] * wF[k, 1] + wF[k, 2] * wF[k, 2])
            v = phi[k] / g if g > 0.0 else phi[k]
        else:
            v = phi[k]
        s += v * v
    s = math.sqrt(s)
    if angle:
        return math.asin(min(1.0, s))
    return s
