"""Paper 002's own solution of the three-loop mechanism, written out planar and slow.

Independent of fmu_mb's kernels: planar kinematics straight from Table 3, passive
velocities from the loop equations (eq. 61), accelerations from their time
derivative, and the cut forces from the three subsystems in the paper's order
(section 5.2): subsystem III = {1, 2, 3, 4} gives the forces of cuts 2 and 3
(eq. 62: the torque about every passive, frictionless joint of the inertial,
gravity and cut forces on the links beyond it vanishes), subsystem II = {1', 2'}
gives cut 1 (eq. 63), subsystem I = {1''} the driving torque (eq. 65, no friction).

Conventions as paper 002 eq. (26): l1 acts on link 1'' (−l1 on 2'), l2 on link 4
(−l2 on 2'), l3 on link 3 (−l3 on 4); world (inertial) axes.
"""
from __future__ import annotations

import numpy as np

V = {  # Table 3 vectors (x, y), m
    "r2_1": (0.0737, -0.0676), "r3_2": (-0.0451, -0.0217), "r3S_3": (-0.0375, 0.0249),
    "r4_1": (0.0368, -0.0338), "r4S_4": (-0.0457, -0.0306), "r2p_1p": (-0.0079, -0.0544),
    "r2pIIS_2p": (0.049, -0.01), "r2pIS_2p": (-0.049, 0.01), "r1ppS_1pp": (-0.0069, -0.0445)}
V = {k: np.array(v) for k, v in V.items()}
O1, O1P, O1PP = np.zeros(2), np.array([-0.05, 0.0]), np.array([-0.1, 0.0001])
LINKS = ("1", "2", "3", "4", "1p", "2p", "1pp")         # coordinate order = fmu_mb's (tree order)
COM = {"1": (0.0369, -0.0338), "2": (-0.0451, -0.0217), "3": (-0.0187, 0.0124), "4": (-0.0229, -0.0153),
       "1p": (-0.0039, -0.0272), "2p": (0.0, 0.0), "1pp": (-0.0034, -0.0222)}
COM = {k: np.array(v) for k, v in COM.items()}
MASS = {"1": 2.0, "2": 2.0, "3": 1.0, "4": 1.2, "1p": 1.2, "2p": 2.0, "1pp": 1.0}
IZZ = {"1": 0.04, "2": 0.04, "3": 0.01, "4": 0.02, "1p": 0.02, "2p": 0.04, "1pp": 0.01}
G = np.array([0.0, -9.8])
#: joints (coordinates) moving each link, base to tip
CHAIN = {"1": [0], "2": [0, 1], "3": [0, 1, 2], "4": [0, 3], "1p": [4], "2p": [4, 5], "1pp": [6]}
#: (ground pivot, [(link, vector in link frame), ...]) from the ground to each joint origin
ORIGIN_PATH = {"1": (O1, []), "2": (O1, [("1", "r2_1")]), "3": (O1, [("1", "r2_1"), ("2", "r3_2")]),
               "4": (O1, [("1", "r4_1")]), "1p": (O1P, []), "2p": (O1P, [("1p", "r2p_1p")]), "1pp": (O1PP, [])}


def _rot(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s], [s, c]])


def _perp(v):
    return np.array([-v[1], v[0]])


def point(q, qd, qdd, link, local):
    """Position, velocity, acceleration of a point fixed in ``link`` (local vector)."""
    base, path = ORIGIN_PATH[link]
    segs = [(ln, V[key]) for ln, key in path] + [(link, np.asarray(local, float))]
    p, v, a = base.copy(), np.zeros(2), np.zeros(2)
    for ln, vec in segs:
        th, om, al = (sum(x[j] for j in CHAIN[ln]) for x in (q, qd, qdd))
        w = _rot(th) @ vec
        p += w
        v += om * _perp(w)
        a += al * _perp(w) - om * om * w
    return p, v, a


def joint_origin(q, link):
    return point(q, np.zeros(7), np.zeros(7), link, (0.0, 0.0))[0]


CUTS = (("1pp", "r1ppS_1pp", "2p", "r2pIS_2p"), ("4", "r4S_4", "2p", "r2pIIS_2p"), ("3", "r3S_3", "4", "r4S_4"))


def closure(q, qd, qdd):
    """Loop residuals (position, velocity, acceleration) of the three cuts, (6,) each."""
    out = []
    for la, ka, lb, kb in CUTS:
        pa = point(q, qd, qdd, la, V[ka])
        pb = point(q, qd, qdd, lb, V[kb])
        out.append([pa[i] - pb[i] for i in range(3)])
    return [np.concatenate([o[i] for o in out]) for i in range(3)]


def motion(phi_active, rate, q_guess):
    """q, q̇, q̈ with the active angle and rate given (q̈_active = 0); passive angles by Newton."""
    q = np.array(q_guess, float)
    q[6] = phi_active
    for _ in range(50):
        r = closure(q, np.zeros(7), np.zeros(7))[0]
        J = np.zeros((6, 6))
        for j in range(6):
            dq = np.zeros(7)
            dq[j] = 1e-7
            J[:, j] = (closure(q + dq, np.zeros(7), np.zeros(7))[0] - closure(q - dq, np.zeros(7), np.zeros(7))[0]) / 2e-7
        step = np.linalg.solve(J, -r)
        q[:6] += step
        if np.abs(step).max() < 1e-15:
            break
    # eq. (61): the velocity residual is linear in q̇: J_p q̇_p = −J_a q̇_a
    def vres(x):
        qd = np.zeros(7)
        qd[:6], qd[6] = x, rate
        return closure(q, qd, np.zeros(7))[1]
    b = vres(np.zeros(6))
    Jv = np.array([vres(np.eye(6)[j]) - b for j in range(6)]).T
    qd = np.zeros(7)
    qd[:6], qd[6] = np.linalg.solve(Jv, -b), rate

    def ares(x):
        qdd = np.zeros(7)
        qdd[:6] = x
        return closure(q, qd, qdd)[2]
    b = ares(np.zeros(6))
    Ja = np.array([ares(np.eye(6)[j]) - b for j in range(6)]).T
    qdd = np.zeros(7)
    qdd[:6] = np.linalg.solve(Ja, -b)
    return q, qd, qdd


def _inertial_moment(q, qd, qdd, links, about):
    """z-moment about ``about`` of the inertia and gravity 'forces' m a − m g, I α of ``links``."""
    s = 0.0
    for ln in links:
        c, _, a = point(q, qd, qdd, ln, COM[ln])
        f = MASS[ln] * (a - G)
        r = c - about
        s += r[0] * f[1] - r[1] * f[0] + IZZ[ln] * sum(qdd[j] for j in CHAIN[ln])
    return s


def _moment(r, f):
    return r[0] * f[1] - r[1] * f[0]


def subsystems(q, qd, qdd):
    """(l1, l2, l3, τ_d) by the paper's subsystem order (eqs. 62, 63, 65; no friction)."""
    P = {key: point(q, qd, qdd, ln, V[key])[0] for ln, key, _, _ in CUTS}
    P["r2pIS_2p"] = point(q, qd, qdd, "2p", V["r2pIS_2p"])[0]
    P["r2pIIS_2p"] = point(q, qd, qdd, "2p", V["r2pIIS_2p"])[0]
    # subsystem III: passive joints 1, 2, 3, 4; cut forces l2 on 4 at 4S, l3 on 3 at 3S and −l3 on 4 at 4S.
    # For each joint u: Σ moments of cut forces on the subtree = inertial moment of the subtree.
    sub = {"1": ("1", "2", "3", "4"), "2": ("2", "3"), "3": ("3",), "4": ("4",)}
    A, b = np.zeros((4, 4)), np.zeros(4)
    for row, u in enumerate(("1", "2", "3", "4")):
        O = joint_origin(q, u)
        on = set(sub[u])
        # unknowns x = [l2x, l2y, l3x, l3y]
        if "4" in on:      # l2 on 4 at 4S, −l3 on 4 at 4S
            r = P["r4S_4"] - O
            A[row, 0:2] += [-r[1], r[0]]
            A[row, 2:4] -= [-r[1], r[0]]
        if "3" in on:      # l3 on 3 at 3S
            r = P["r3S_3"] - O
            A[row, 2:4] += [-r[1], r[0]]
        b[row] = _inertial_moment(q, qd, qdd, sub[u], O)
    l2x, l2y, l3x, l3y = np.linalg.solve(A, b)
    l2, l3 = np.array([l2x, l2y]), np.array([l3x, l3y])
    # subsystem II: passive joints 1', 2'; on 2': −l2 at 2'IIS and −l1 at 2'IS
    sub2 = {"1p": ("1p", "2p"), "2p": ("2p",)}
    A2, b2 = np.zeros((2, 2)), np.zeros(2)
    for row, u in enumerate(("1p", "2p")):
        O = joint_origin(q, u)
        r1 = P["r2pIS_2p"] - O
        A2[row] = [r1[1], -r1[0]]               # moment of −l1
        b2[row] = _inertial_moment(q, qd, qdd, sub2[u], O) - _moment(P["r2pIIS_2p"] - O, -l2)
    l1 = np.linalg.solve(A2, b2)
    # subsystem I: active joint 1'': τ_d + moment of l1 at 1''S = inertial moment
    O = joint_origin(q, "1pp")
    tau = _inertial_moment(q, qd, qdd, ("1pp",), O) - _moment(P["r1ppS_1pp"] - O, l1)
    return l1, l2, l3, tau
