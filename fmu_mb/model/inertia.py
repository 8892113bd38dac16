"""Rigid-body mass properties and the papers' pseudo-inertia matrix.

The papers (000 eq. (10), 001 eq. (16)) describe a body by its pseudo-inertia
matrix in the body frame,

    H = ∫ r̃ r̃ᵀ dm,   r̃ = [x, y, z, 1]ᵀ,

    H = [[h_(yz), h_xy,   h_xz,   h_x],
         [h_xy,   h_(xz), h_yz,   h_y],
         [h_xz,   h_yz,   h_(xy), h_z],
         [h_x,    h_y,    h_z,    m  ]],

with h_(yz) = ∫x² dm (moment of inertia with respect to the yz plane),
h_xy = ∫xy dm (product of inertia), h_x = ∫x dm = m·c_x (static moment).
The rotational inertia tensor about the frame origin is J_O = tr(Π)·1 − Π,
Π being the upper-left 3×3 block, and J_C = J_O − m(|c|²·1 − c cᵀ).
"""
from __future__ import annotations

import numpy as np


def pseudo_inertia(mass: float, com, inertia_com) -> np.ndarray:
    """Pseudo-inertia matrix H (paper 000, eq. (10)) of a body.

    mass: kg; com: (3,) centre of mass in the body frame, m;
    inertia_com: (3, 3) rotational inertia about the centre of mass, body axes, kg·m².
    Returns H (4, 4) in the body frame.
    """
    c = np.asarray(com, dtype=float)
    J_c = np.asarray(inertia_com, dtype=float)
    J_o = J_c + mass * (c @ c * np.eye(3) - np.outer(c, c))
    Pi = 0.5 * np.trace(J_o) * np.eye(3) - J_o
    H = np.zeros((4, 4))
    H[:3, :3] = Pi
    H[:3, 3] = mass * c
    H[3, :3] = mass * c
    H[3, 3] = mass
    return H


def from_pseudo_inertia(H) -> tuple[float, np.ndarray, np.ndarray]:
    """Inverse of :func:`pseudo_inertia`: returns (mass, com (3,), inertia about com (3, 3))."""
    H = np.asarray(H, dtype=float)
    if H.shape != (4, 4):
        raise ValueError(f"pseudo-inertia matrix must be 4x4, got shape {H.shape}")
    if not np.allclose(H, H.T, rtol=0.0, atol=1e-12 * max(1.0, np.abs(H).max())):
        raise ValueError("pseudo-inertia matrix must be symmetric")
    mass = float(H[3, 3])
    if not mass > 0.0:
        raise ValueError(f"pseudo-inertia matrix: mass H[3,3] must be > 0 (got {mass})")
    c = H[:3, 3] / mass
    Pi = H[:3, :3]
    J_o = np.trace(Pi) * np.eye(3) - Pi
    J_c = J_o - mass * (c @ c * np.eye(3) - np.outer(c, c))
    return mass, c, 0.5 * (J_c + J_c.T)


def inertia_defect(mass: float, inertia) -> str | None:
    """Why a rotational inertia about the centre of mass is not a physical body's, or None.

    A physical tensor is symmetric and positive semi-definite, its principal moments satisfy the
    triangle inequality (I_a + I_b ≥ I_c), and a massless body has none. Tolerances: 1e-12
    (symmetry, sign) and 1e-9 (triangle) relative to max(1, the largest entry).
    """
    J = np.asarray(inertia, dtype=float)
    if J.shape != (3, 3):
        return f"inertia must be a 3x3 matrix, got shape {J.shape}"
    if not np.all(np.isfinite(J)):
        return "inertia contains NaN or inf"
    scale = max(1.0, float(np.abs(J).max()))
    if not np.allclose(J, J.T, rtol=0.0, atol=1e-12 * scale):
        return "inertia must be symmetric"
    eig = np.linalg.eigvalsh(0.5 * (J + J.T))
    if eig[0] < -1e-12 * scale:
        return f"inertia must be positive semi-definite (smallest principal moment {eig[0]:.3e} kg·m²)"
    if eig[0] + eig[1] < eig[2] - 1e-9 * scale:
        return f"principal moments {eig} violate the triangle inequality I1 + I2 >= I3"
    if mass == 0.0 and np.abs(J).max() > 0.0:
        return "a massless body cannot have rotational inertia"
    return None


def check_inertia(owner: str, mass: float, inertia) -> None:
    """Raise ValueError naming ``owner`` if :func:`inertia_defect` finds one."""
    defect = inertia_defect(mass, inertia)
    if defect:
        raise ValueError(f"{owner}: {defect}")


def nearest_physical_inertia(mass: float, inertia) -> np.ndarray:
    """The physical inertia nearest to a symmetric, finite ``inertia`` (kg·m², about the centre of
    mass), the principal axes kept: negative principal moments become 0, then moments violating
    the triangle inequality I1 + I2 ≥ I3 (sorted) are projected onto its boundary, the Euclidean
    projection I1 += d, I2 += d, I3 −= d with d = (I3 − I1 − I2)/3; a massless body's moments
    are 0. Examples: [0.001, 0.001, 0.01] → [0.00367, 0.00367, 0.00733];
    [−2.5e-22, 3.4e-23, 3e-6] → [1e-6, 1e-6, 2e-6]. The result passes :func:`check_inertia`."""
    J = np.asarray(inertia, dtype=float)
    if mass == 0.0:
        return np.zeros((3, 3))
    eig, V = np.linalg.eigh(0.5 * (J + J.T))
    p = np.maximum(eig, 0.0)
    d = (p[2] - p[0] - p[1]) / 3.0
    if d > 0.0:
        p = p + np.array([d, d, -d])
    return (V * p) @ V.T


def prism_segment(density: float, area: float, Iy: float, Iz: float, length: float):
    """Mass properties of a straight prismatic beam segment along local +x.

    The segment occupies x ∈ [0, length]; density kg/m³, area m², Iy/Iz second
    moments of area of the cross-section about y/z, m⁴.
    Returns (mass, com (3,), inertia about com (3, 3)).
    """
    m = density * area * length
    Ixx = density * (Iy + Iz) * length
    Iyy = density * Iy * length + m * length**2 / 12.0
    Izz = density * Iz * length + m * length**2 / 12.0
    return m, np.array([0.5 * length, 0.0, 0.0]), np.diag([Ixx, Iyy, Izz])
