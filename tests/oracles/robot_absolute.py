"""Paper 004's robot written out in its own formulation, slow and independent of fmu_mb's kernels.

Absolute planar coordinates q_i = (x_i, y_i, φ_i) (eq. 28); revolute pairs
r_i + R_i s_i − r_j − R_j s_j = 0 with Γ = R_i s_i φ̇_i² − R_j s_j φ̇_j²; the translational
pair H as offset (Ωv)ᵀd = 0 and angle φ_1 − φ_6 = 0; the driving row vᵀd − d(t) = 0;
knife edges Ψ^K = [(R_i n)ᵀ, nᵀΩs] (eq. 30) with Γ^K = −(Ω R_i n)ᵀ ṙ_i φ̇_i (eq. 31).
Equations of motion eq. (11) with M = diag(m, m, J), F = 0, the redundant rows eliminated
as in section 4.4, integrated by scipy's RK45 (the paper used MATLAB's ode45).

Geometry and masses are read from models/mobile_robot.py (they are data, not code).
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from fmu_mb.algorithms import trajectory

OM = np.array([[0.0, -1.0], [1.0, 0.0]])
BODY = ("platform", "carrier_front", "carrier_rear", "rod_front", "rod_rear", "slider", "trolley")


def _R(p):
    c, s = np.cos(p), np.sin(p)
    return np.array([[c, -s], [s, c]])


class Robot:
    def __init__(self, model, eliminate=("C.y", "W4")):
        self.mod = model
        self.idx = {b: k for k, b in enumerate(BODY)}
        self.labels = ([f"{n}.{c}" for n, *_ in model.REVOLUTES for c in "xy"] + ["H.n", "H.rot", "drive"]
                       + [k[0] for k in model.KNIVES])
        self.keep = [k for k, lab in enumerate(self.labels) if lab not in eliminate]
        m = np.concatenate([[model.BODIES[b][0]] * 2 + [model.BODIES[b][1]] for b in BODY])
        self.M = np.diag(m)
        self.traj = model.Steering()

    def q0(self):
        q = np.concatenate([self.mod.Q0[b] for b in BODY]).astype(float)
        v = np.zeros(21)
        v[0::3] = self.mod.V0
        return q, v

    def terms(self, q, v, t):
        """(Φ over the holonomic rows, C (22 × 21), Γ (22,)) in the labels' order."""
        r = lambda b: q[3 * self.idx[b]:3 * self.idx[b] + 2]
        ph = lambda b: q[3 * self.idx[b] + 2]
        rd = lambda b: v[3 * self.idx[b]:3 * self.idx[b] + 2]
        phd = lambda b: v[3 * self.idx[b] + 2]
        blk = lambda b: slice(3 * self.idx[b], 3 * self.idx[b] + 3)
        Phi, C, G = [], [], []
        for _, i, si, j, sj in self.mod.REVOLUTES:
            si, sj = np.array(si), np.array(sj)
            Phi.extend(r(i) + _R(ph(i)) @ si - r(j) - _R(ph(j)) @ sj)
            rows = np.zeros((2, 21))
            rows[:, blk(i)] = np.column_stack([np.eye(2), OM @ _R(ph(i)) @ si])
            rows[:, blk(j)] = -np.column_stack([np.eye(2), OM @ _R(ph(j)) @ sj])
            C.extend(rows)
            G.extend(_R(ph(i)) @ si * phd(i) ** 2 - _R(ph(j)) @ sj * phd(j) ** 2)
        # H: body i = platform (axis u = y1 at P_i = (0, −ℓ)), body j = slider (P_j at its origin)
        i, j = "platform", "slider"
        si, sj, u = np.array([0.0, -self.mod.ROD]), np.zeros(2), np.array([0.0, 1.0])
        vv = _R(ph(i)) @ u
        d = r(j) + _R(ph(j)) @ sj - r(i) - _R(ph(i)) @ si
        dd = rd(j) + OM @ _R(ph(j)) @ sj * phd(j) - rd(i) - OM @ _R(ph(i)) @ si * phd(i)
        dq = -_R(ph(j)) @ sj * phd(j) ** 2 + _R(ph(i)) @ si * phd(i) ** 2
        g, gd, gdd = trajectory(self.traj, t)[:, 0]
        for kind, gvec in (("offset", OM @ vv), ("drive", vv)):
            row = np.zeros(21)
            # d/dq of gᵀd with g fixed in body i: ∂g/∂φ_i = Ω g
            row[blk(i)] = np.r_[-gvec, (OM @ gvec) @ d - gvec @ (OM @ _R(ph(i)) @ si)]
            row[blk(j)] = np.r_[gvec, gvec @ (OM @ _R(ph(j)) @ sj)]
            gam = -(-gvec @ d * phd(i) ** 2 + 2 * phd(i) * (OM @ gvec) @ dd + gvec @ dq)
            if kind == "offset":
                Phi.append(gvec @ d)
                C.append(row)
                G.append(gam)
                Phi.append(ph(i) - ph(j))
                rot = np.zeros(21)
                rot[3 * self.idx[i] + 2], rot[3 * self.idx[j] + 2] = 1.0, -1.0
                C.append(rot)
                G.append(0.0)
            else:
                Phi.append(gvec @ d - g)
                C.append(row)
                G.append(gam + gdd)
        for _, b, s, n in self.mod.KNIVES:
            s, n = np.array(s), np.array(n)
            row = np.zeros(21)
            row[blk(b)] = np.r_[_R(ph(b)) @ n, n @ OM @ s]
            C.append(row)
            G.append(-(OM @ _R(ph(b)) @ n) @ rd(b) * phd(b))
        return np.array(Phi), np.array(C), np.array(G)

    def accelerations(self, q, v, t):
        """q̈ and λ of eq. (11) with the eliminated rows removed (their λ = 0)."""
        _, C, G = self.terms(q, v, t)
        Ck, Gk = C[self.keep], G[self.keep]
        nk = len(self.keep)
        A = np.block([[self.M, Ck.T], [Ck, np.zeros((nk, nk))]])
        sol = np.linalg.solve(A, np.concatenate([np.zeros(21), Gk]))
        lam = np.zeros(C.shape[0])
        lam[self.keep] = sol[21:]
        return sol[:21], lam

    def simulate(self, times, rtol=1e-11, atol=1e-12):
        q0, v0 = self.q0()
        f = lambda t, x: np.r_[x[21:], self.accelerations(x[:21], x[21:], t)[0]]
        out = solve_ivp(f, (0.0, times[-1]), np.r_[q0, v0], t_eval=times, rtol=rtol, atol=atol, method="RK45",
                        max_step=0.05)
        return out.y.T
