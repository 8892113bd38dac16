"""Redundant constraints and reaction solvability, paper 004 sections 2–3 (analysis API).

``analyse(sim)`` takes the constraint matrix C = [Φ_q; Ψ] of a simulator's last
evaluation and returns the ranks of Φ_q, Ψ and C, the degree of redundancy
p = m + h − r (eq. 7) and, for every constraint (kinematic pair), paper 004's test:
QR with column pivoting C E = Q R (eq. 21), Q^col = the last p columns of Q, and
B_X = C_Xᵀ Q_X^col (eq. 27); the reaction in pair X is uniquely determined iff B_X = 0.

The runtime (FMU outputs, :meth:`Simulator.uniqueness`) uses the equivalent
null-space form in the kernels (kernels.uniqueness.uniqueness: Q^col spans null(Cᵀ));
this module is the paper's procedure as printed, for reports and as a cross-check.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .codes import RowKind


@dataclass
class Solvability:
    rank_phi: int                 # rank Φ_q (holonomic rows)
    rank_psi: int                 # rank Ψ (first-order rows)
    rank: int                     # r = rank C
    rows: int                     # m + h
    redundancy: int               # p = m + h − r
    unique: dict                  # constraint name → True if B_X = 0
    b_norm: dict                  # constraint name → max |B_X|


def _rank(A: np.ndarray, tol: float) -> int:
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > tol * max(s[0], 1e-300)))


def analyse(sim, tol: float = 1e-9) -> Solvability:
    """Paper 004's analysis at ``sim``'s last evaluation (call ``sim.evaluate()`` first).
    tol: relative threshold for ranks (singular values) and for B_X = 0 (relative to max |C|)."""
    cm = sim.cm
    C = np.array(sim.data.con_C)
    kind = np.asarray(sim.model.con_kind)
    hol, first = kind != RowKind.VEL, kind == RowKind.VEL
    Q, R, _ = scipy.linalg.qr(C, pivoting=True, mode="full")
    diag = np.abs(np.diag(R))
    r = int(np.sum(diag > tol * diag[0])) if diag.size else 0
    p = C.shape[0] - r
    Qcol = Q[:, C.shape[0] - p:] if p else np.zeros((C.shape[0], 0))
    scale = max(np.abs(C).max(), 1.0)
    unique, bn = {}, {}
    for c in cm.constraints:
        B = C[c.rows].T @ Qcol[c.rows]
        bn[c.name] = float(np.abs(B).max()) if B.size else 0.0
        unique[c.name] = bn[c.name] <= tol * scale
    return Solvability(_rank(C[hol], tol), _rank(C[first], tol), r, C.shape[0], p, unique, bn)
