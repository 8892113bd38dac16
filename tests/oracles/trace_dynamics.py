"""Slow, direct transcription of paper 000 eqs. (10)–(14) and (26): homogeneous
transforms T^(l)(q), their partial derivatives T_v, T_vw, pseudo-inertia matrices H.

    E_k = ½ Σ_l tr(Ṫ_l H_l Ṫ_lᵀ),       Ṫ = Σ_v T_v q̇_v,   T̈ = Σ T_v q̈_v + Σ T_vw q̇_v q̇_w   (10, 12)
    m_ij = Σ_l tr(T_i^l H_l T_j^lᵀ)                                               (26)
    E_p = Σ_l −m_l gᵀ J T_l r̃_C^l,   g_i = ∂E_p/∂q_i = Σ_l −m_l gᵀ J T_i^l r̃_C^l       (13, 14)

Applying Lagrange's equations to (10) gives the velocity term
    c_i = Σ_l Σ_{m,n} tr(T_i^l H_l T_mn^lᵀ) q̇_m q̇_n,
so that M q̈ + c + g = Q. Paper 000 eq. (26) prints the velocity term as
h_i = Σ tr(T_m H T_mnᵀ) q̇_m q̇_n + 2 Σ tr(T_m H T_inᵀ) q̇_m q̇_n: these are the
velocity terms of ∂Ė_k/∂q̇_i (eq. (11.1)) with the first trace's free index
printed as m instead of i; the second sum equals ∂E_k/∂q_i and is cancelled in
the GPME (9.1) by the −2 ∂E_k/∂q_i term of R₁ (see :meth:`TraceModel.gpme_terms`
and tests/test_paper000_trace.py).

Each body transform is a product of factors, as in paper 001 eq. (12): constant
placements and one-coordinate motions exp(Ξ q) with a constant 4×4 generator Ξ.
∂/∂q_v replaces the factor of q_v by Ξ·exp(Ξ q_v). O(n⁴) and slow on purpose.
Gravity: the papers write m g j₂ T r̃_C (000: g along −y) or m g J₃ T r̃_C (001:
−z); with a gravity vector g this is −m gᵀ J T r̃_C.
"""
from __future__ import annotations

import numpy as np

from fmu_mb.model import GROUND, Beam, Mechanism
from fmu_mb.model.inertia import prism_segment, pseudo_inertia


def _gen_rot(a):
    G = np.zeros((4, 4))
    G[:3, :3] = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return G


def _gen_trans(a):
    G = np.zeros((4, 4))
    G[:3, 3] = a
    return G


def _exp(G, q):
    """exp(G q) for a unit rotation or translation generator."""
    if np.any(G[:3, :3]):
        K = G[:3, :3]
        T = np.eye(4)
        T[:3, :3] = np.eye(3) + np.sin(q) * K + (1 - np.cos(q)) * K @ K
        return T
    T = np.eye(4)
    T[:3, 3] = G[:3, 3] * q
    return T


def _placement(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


class TraceModel:
    """Bodies as factor lists built directly from a Mechanism description (rigid links,
    and flexible beams expanded by paper 001 eq. (7))."""

    def __init__(self, mech: Mechanism):
        self.g = np.asarray(mech.gravity, float)
        self.bodies = []   # (factors, H, mass, com)
        self.n = 0
        children = {}
        for j in mech.joints:
            children.setdefault(j.parent, []).append(j)
        frames = {GROUND: ([], [0.0])}

        def motion_factors(j):
            ex, ey, ez = np.eye(3)
            if j.kind == "revolute":
                return [_gen_rot(np.asarray(j.axis, float) / np.linalg.norm(j.axis))]
            if j.kind == "prismatic":
                return [_gen_trans(np.asarray(j.axis, float) / np.linalg.norm(j.axis))]
            if j.kind == "spherical":
                return [_gen_rot(ez), _gen_rot(ey), _gen_rot(ex)]
            if j.kind == "free":
                return [_gen_trans(ex), _gen_trans(ey), _gen_trans(ez), _gen_rot(ez), _gen_rot(ey), _gen_rot(ex)]
            if j.kind == "universal":
                return [_gen_rot(np.asarray(a, float) / np.linalg.norm(a)) for a in j.axes]
            if j.kind == "fixed":
                return []
            raise ValueError(j.kind)

        def visit(pname):
            for j in children.get(pname, []):
                pf, starts = frames[pname]
                origin = np.asarray(j.origin, float)
                if len(starts) > 1:
                    r = int(np.searchsorted(starts, origin[0], side="right") - 1)
                    r = min(max(r, 0), len(starts) - 1)
                    pf = pf[r]
                    origin = origin - np.array([starts[r], 0, 0])
                R0 = np.eye(3) if j.rotation is None else np.asarray(j.rotation, float)
                f = list(pf) + [("const", _placement(R0, origin))]
                for G in motion_factors(j):
                    f.append(("q", G, self.n))
                    self.n += 1
                link = mech.link(j.child)
                if isinstance(link, Beam) and link.flexible:
                    L = link.rfe_lengths()
                    rfe_factors = []
                    for r in range(len(L)):
                        if r > 0:
                            f = list(f) + [("const", _placement(np.eye(3), np.array([L[r - 1], 0, 0])))]
                            for G in (_gen_rot(np.eye(3)[2]), _gen_rot(np.eye(3)[1]), _gen_rot(np.eye(3)[0])):
                                f.append(("q", G, self.n))
                                self.n += 1
                        m, c, I = prism_segment(link.density, link.area, link.Iy, link.Iz, L[r])
                        self.bodies.append((list(f), pseudo_inertia(m, c, I), m, c))
                        rfe_factors.append(list(f))
                    frames[link.name] = (rfe_factors, np.concatenate([[0.0], np.cumsum(L)[:-1]]))
                else:
                    m, c, I = link.mass_properties()
                    self.bodies.append((list(f), pseudo_inertia(m, c, I), m, np.asarray(c, float)))
                    frames[link.name] = (f, [0.0])
                visit(link.name)

        visit(GROUND)

    @staticmethod
    def _product(factors, q, d1=-1, d2=-1):
        """T, or ∂T/∂q_d1, or ∂²T/∂q_d1∂q_d2 (zero if the body does not depend on them)."""
        T = np.eye(4)
        used = set()
        for fac in factors:
            if fac[0] == "const":
                T = T @ fac[1]
                continue
            _, G, k = fac
            E = _exp(G, q[k])
            n = (k == d1) + (k == d2)
            if n:
                used.add(k)
            for _ in range(n):
                E = G @ E
            T = T @ E
        for d in (d1, d2):
            if d >= 0 and d not in used:
                return np.zeros((4, 4))
        return T

    def mass_matrix(self, q):
        n = self.n
        M = np.zeros((n, n))
        for factors, H, _, _ in self.bodies:
            Tv = [self._product(factors, q, v) for v in range(n)]
            for i in range(n):
                for j in range(n):
                    M[i, j] += np.trace(Tv[i] @ H @ Tv[j].T)
        return M

    def velocity_terms(self, q, qd):
        """c_i = Σ_l tr(T_i H (Σ_mn T_mn q̇_m q̇_n)ᵀ): Lagrange's equations applied to eq. (10)."""
        n = self.n
        c = np.zeros(n)
        for factors, H, _, _ in self.bodies:
            Tv = [self._product(factors, q, v) for v in range(n)]
            Tdd = sum(self._product(factors, q, m, k) * qd[m] * qd[k] for m in range(n) for k in range(n))
            for i in range(n):
                c[i] += np.trace(Tv[i] @ H @ Tdd.T)
        return c

    def gpme_terms(self, q, qd, printed_index=False):
        """The two sums of paper 000 eq. (26)'s h_i, term by term:
        first_i = Σ tr(T_i H T_mnᵀ) q̇_m q̇_n (``printed_index``: T_m as printed),
        second_i = Σ tr(T_m H T_inᵀ) q̇_m q̇_n."""
        n = self.n
        first = np.zeros(n)
        second = np.zeros(n)
        for factors, H, _, _ in self.bodies:
            Tv = [self._product(factors, q, v) for v in range(n)]
            Tvw = [[self._product(factors, q, v, w) for w in range(n)] for v in range(n)]
            for i in range(n):
                for m in range(n):
                    for k in range(n):
                        w = qd[m] * qd[k]
                        first[i] += np.trace(Tv[m if printed_index else i] @ H @ Tvw[m][k].T) * w
                        second[i] += np.trace(Tv[m] @ H @ Tvw[i][k].T) * w
        return first, second

    def gravity_terms(self, q):
        n = self.n
        g = np.zeros(n)
        for factors, _, m, com in self.bodies:
            rc = np.r_[com, 1.0]
            for i in range(n):
                g[i] -= m * self.g @ (self._product(factors, q, i) @ rc)[:3]
        return g

    def kinetic_energy(self, q, qd):
        E = 0.0
        for factors, H, _, _ in self.bodies:
            Td = sum(self._product(factors, q, v) * qd[v] for v in range(self.n))
            E += 0.5 * np.trace(Td @ H @ Td.T)
        return E
