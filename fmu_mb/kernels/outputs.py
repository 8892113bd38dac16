"""All FMU outputs in one pass: evaluate the pipeline at the current state and gather.

``gather_outputs_tree`` / ``gather_outputs_constrained`` (picked by the number of
constraint rows, see kernels.integrators on why there are two) run the staged pipeline
(placements, q̈, reactions, friction, constraint forces) at state x and write every requested
output into ``vals`` according to a spec table — one row per output value reference — so a
co-simulation step costs one jitted call for its outputs. ``fill_outputs`` writes the table
from the last evaluation without evaluating again. ``derivative_tree`` / ``derivative_constrained``
evaluate ẋ alone, for a Model Exchange host's derivative calls (fmi2GetDerivatives): an integrator
stage's derivative, the same bits as the gather's ẋ, without what only the outputs read.

Spec columns: int64 ``kind`` (codes.OutputKind), ``a``, ``b``, float64 ``f[3]``; what a and b
index for each kind is written by its resolver in fmu_mb.outputs (the output catalogue), the one
place that makes spec rows. An index a = −1 marks a subject absent with the options an FMU was
started with (a rigid beam, a constraint the options remove): those outputs read 0 (uniqueness
flags 1).
"""
from __future__ import annotations

import math

from numba import njit

from .constrained import constrained_derivative, constrained_stage_derivative, derivative_kept
from .crba import crba
from .dynamics import stage_derivative, state_derivative
from .forces import elastic_energy, support_force
from .kinematics import point_position, point_velocity
from .rnea import bias_forces
from .spatial import kinetic_energy
from .scalar import asin, lesser, sqrt
from .uniqueness import uniqueness

from ..codes import OutputKind as O
from ..codes import RowKind


@njit(cache=True, error_model="numpy")
def gather_outputs_tree(m, d, x, time, tau_drive, xdot, vr, kind, a, b, f, vals):
    """Evaluate the pipeline of a mechanism without constraint rows at x (driving forces
    tau_drive) and fill vals[vr[k]] for every spec row k."""
    state_derivative(m, d, x, tau_drive, xdot)
    fill_outputs(m, d, x, vr, kind, a, b, f, vals)


@njit(cache=True, error_model="numpy")
def gather_outputs_constrained(m, d, x, time, tau_drive, xdot, vr, kind, a, b, f, vals):
    """The same for a constrained mechanism at time ``time``, with the reaction-uniqueness
    test (paper 004) when a uniqueness flag is among the outputs."""
    constrained_derivative(m, d, x, time, tau_drive, xdot)
    for k in range(kind.shape[0]):
        if kind[k] == O.UNIQUE_JOINT or kind[k] == O.UNIQUE_CONSTRAINT:
            uniqueness(m, d, d.uq_obj, d.uq_body)
            break
    fill_outputs(m, d, x, vr, kind, a, b, f, vals)


@njit(cache=True, error_model="numpy")
def derivative_tree(m, d, x, time, tau_drive, xdot):
    """ẋ at x of a mechanism without constraint rows, as :func:`gather_outputs_tree` evaluates it (the same
    bits), without the outputs: dynamics.stage_derivative (a frictionless tree's joint reactions left out). A
    Model Exchange FMU answers fmi2GetDerivatives with it and evaluates the outputs only when they are read."""
    stage_derivative(m, d, x, tau_drive, xdot)


@njit(cache=True, error_model="numpy")
def derivative_constrained(m, d, x, time, tau_drive, xdot):
    """The same for a constrained mechanism: constrained.constrained_stage_derivative (no last reaction
    pass), or the outputs' own ẋ when their evaluation was at exactly this state, time and inputs
    (constrained.derivative_kept: the next step's first stage of a host that read the outputs)."""
    if not derivative_kept(m, d, x, time, tau_drive, xdot):
        constrained_stage_derivative(m, d, x, time, tau_drive, xdot)


@njit(cache=True, error_model="numpy")
def fill_outputs(m, d, x, vr, kind, a, b, f, vals):
    """vals[vr[k]] for every spec row k, from the pipeline's last evaluation at x (no evaluation:
    the Simulator's accessors read the last one with it)."""
    nv, nb = m.nv, m.nbody
    fF, fM, oR, op, w, vl = d.fF, d.fM, d.oR, d.op, d.w, d.vl
    ax, load, tfric = m.body_axis, d.fric_load, d.tau_fric
    ek = 0.0
    ep = 0.0
    need_energy = False
    for k in range(kind.shape[0]):
        if kind[k] == O.KINETIC or kind[k] == O.POTENTIAL:
            need_energy = True
    dynamics_outputs(m, d, kind)
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
        if t == O.Q:
            v = x[i]
        elif t == O.QD:
            v = x[nv + i]
        elif t == O.F:
            v = fF[i, j]
        elif t == O.M:
            v = fM[i, j]
        elif t == O.F_NORMAL:
            fm = fF[i, 0] * ax[i, 0] + fF[i, 1] * ax[i, 1] + fF[i, 2] * ax[i, 2]
            e0, e1, e2 = fF[i, 0] - fm * ax[i, 0], fF[i, 1] - fm * ax[i, 1], fF[i, 2] - fm * ax[i, 2]
            v = sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        elif t == O.FRICTION_LOAD:
            v = load[i]
        elif t == O.TAU_FRICTION:
            v = tfric[i]
        elif t == O.SUPPORT:
            if i < 0:
                v = 0.0
            elif m.lsup_U.shape[0] > 0:           # the linearized supports of a flexible base (paper 001)
                v = base_support_force(m, x, i, j)
            else:                                 # exact supports (paper 000 eq. 15)
                fx, fy, fz, _, _, _ = support_force(m.sup_body, m.sup_point, m.sup_anchor, m.sup_k, m.sup_d,
                                                    oR, op, w, vl, i)
                v = fx if j == 0 else (fy if j == 1 else fz)
        elif t == O.POINT:
            px, py, pz = point_position(oR, op, i, f[k, 0], f[k, 1], f[k, 2])
            v = px if j == 0 else (py if j == 1 else pz)
        elif t == O.POINT_VELOCITY:
            px, py, pz = point_velocity(oR, w, vl, i, f[k, 0], f[k, 1], f[k, 2])
            v = px if j == 0 else (py if j == 1 else pz)
        elif t == O.FRAME_ROTATION:
            v = oR[i, j // 3, j % 3]
        elif t == O.FRAME_ANGULAR_VELOCITY:
            v = oR[i, j, 0] * w[i, 0] + oR[i, j, 1] * w[i, 1] + oR[i, j, 2] * w[i, 2]
        elif t == O.DEFLECTION:
            v = beam_deflection(oR, op, i, int(f[k, 0]), f[k, 1], f[k, 2], j) if i >= 0 else 0.0
        elif t == O.KINETIC:
            v = ek
        elif t == O.POTENTIAL:
            v = ep
        elif t == O.DISSIPATED:
            v = x[x.shape[0] - 3]
        elif t == O.WORK_IN:
            v = x[x.shape[0] - 2]
        elif t == O.FRICTION_ITERATIONS:
            v = float(d.fric_iters[0])
        elif t == O.FRICTION_FAILURES:
            v = float(d.fric_fail[0])
        elif t == O.TAU_REQUIRED:
            v = d.lam_req[i]
        elif t == O.LAMBDA:
            v = d.lam[i] if i >= 0 else 0.0
        elif t == O.CON_FORCE or t == O.CON_MOMENT:
            v = constraint_wrench_component(m, d, i, j, t == O.CON_MOMENT) if i >= 0 else 0.0
        elif t == O.VIOLATION or t == O.VIOLATION_ANGLE:
            v = constraint_violation(m, d, i, t == O.VIOLATION_ANGLE) if i >= 0 else 0.0
        elif t == O.UNIQUE_JOINT:
            v = float(d.uq_body[i]) if m.nc > 0 else 1.0
        elif t == O.UNIQUE_CONSTRAINT:
            v = float(d.uq_obj[i]) if i >= 0 else 1.0
        elif t == O.RANK:
            v = float(d.cp_rank[0])
        elif t == O.REDUNDANCY:
            v = float(m.nc - d.cp_rank[0])
        elif t == O.REPARTITIONS:
            v = float(d.cp_count[0])
        elif t == O.WORK_CONSTRAINTS:
            v = x[x.shape[0] - 1]
        elif t == O.MASS_MATRIX:
            v = d.M[i, j]
        elif t == O.BIAS_FORCE:
            v = d.dyn_h[i]
        elif t == O.GRAVITY_FORCE:
            v = d.dyn_g[i]
        else:                           # an unknown kind: fmu_mb.outputs never writes one
            v = math.nan
        vals[vr[k]] = v


@njit(cache=True, error_model="numpy")
def dynamics_outputs(m, d, kind):
    """What the dynamics outputs among ``kind`` read, after forward_kinematics at the state: d.M (crba: at the same
    q it is the matrix a constrained evaluation formed), d.dyn_h and d.dyn_g (kernels.rnea.bias_forces). Each only
    if asked for: an FMU without these outputs pays nothing."""
    mass = bias = gravity = False
    for k in range(kind.shape[0]):
        t = kind[k]
        mass = mass or t == O.MASS_MATRIX
        bias = bias or t == O.BIAS_FORCE
        gravity = gravity or t == O.GRAVITY_FORCE
    if mass:
        crba(m, d)
    if bias:
        bias_forces(m, d, True, d.dyn_h)
    if gravity:
        bias_forces(m, d, False, d.dyn_g)


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
            if kd == RowKind.ORI:
                s += phi[k] * phi[k]
            continue
        if kd == RowKind.ORI:
            continue
        if kd == RowKind.VEL:
            v = phid[k]
        elif kd == RowKind.ELLIPSE:
            g = sqrt(wF[k, 0] * wF[k, 0] + wF[k, 1] * wF[k, 1] + wF[k, 2] * wF[k, 2])
            v = phi[k] / g if g.real > 0.0 else phi[k]
        else:
            v = phi[k]
        s += v * v
    s = sqrt(s)
    if angle:
        return asin(lesser(1.0, s))
    return s


@njit(cache=True, error_model="numpy")
def beam_deflection(oR, op, first, last, tip, length, c):
    """Component c of a beam's tip deflection from its undeformed (straight) shape, in the frame of
    its first rigid finite element (body ``first``): the tip is the point ``tip`` along x of the last
    element (body ``last``); undeformed, it lies at (length, 0, 0). Needs forward kinematics."""
    tx, ty, tz = point_position(oR, op, last, tip, 0.0, 0.0)
    dx, dy, dz = tx - op[first, 0], ty - op[first, 1], tz - op[first, 2]
    return oR[first, 0, c] * dx + oR[first, 1, c] * dy + oR[first, 2, c] * dz - (length if c == 0 else 0.0)


@njit(cache=True, error_model="numpy")
def base_support_force(m, x, s, c):
    """World component c of the force linearized support s exerts on the base (paper 001 eqs. 3-4):
    f = −(S U q_b + D U q̇_b), U mapping the base coordinates q_b = (x, y, z, ψ, θ, φ) to the
    support point's displacement; Σ_s Uᵀ f is the base's generalized support force."""
    b, nv, U = m.base_dof[0], m.nv, m.lsup_U
    if b < 0:
        return 0.0
    dq = 0.0
    dv = 0.0
    for r in range(6):
        dq += U[s, c, r] * x[b + r]
        dv += U[s, c, r] * x[nv + b + r]
    return -m.lsup_k[s, c] * dq - m.lsup_d[s, c] * dv
