"""Energy bookkeeping: kinetic, potential (gravity + springs).

E_k = Σ ½ vᵀ I v (paper 000 eq. (10) in spatial form) + Σ ½ J_a q̇² of the drives' armature, E_p = −Σ m gᵀ r_C
(eq. (13) for an arbitrary gravity vector) + spring energies (eqs. (15.1),
(17.1)). Dissipated energy and input work are integrated with the state
(see fmu_mb.model.compiled), so that E_k + E_p + E_diss − W_in is conserved.
"""
from __future__ import annotations

from numba import njit

from .forces import elastic_energy
from .kinematics import forward_kinematics, point_position
from .spatial import kinetic_energy


@njit(cache=True, error_model="numpy")
def energies(m, d, q, v, out):
    """out[0] = kinetic, out[1] = gravitational, out[2] = elastic energy (J)."""
    forward_kinematics(m, d, q, v)
    nb, g, mass, com, Ic = m.nbody, m.gravity, m.body_mass, m.body_com, m.body_Ic
    w, vl, oR, op = d.w, d.vl, d.oR, d.op
    ek = 0.0
    eg = 0.0
    for i in range(nb):
        ek += kinetic_energy(mass, com, Ic, i, w[i, 0], w[i, 1], w[i, 2], vl[i, 0], vl[i, 1], vl[i, 2])
        if mass[i] != 0.0:
            x, y, z = point_position(oR, op, i, com[i, 0], com[i, 1], com[i, 2])
            eg -= mass[i] * (g[0] * x + g[1] * y + g[2] * z)
    for k in range(m.nv):
        ek += 0.5 * m.dof_armature[k] * v[k] * v[k]      # the drives' rotors (kernels.crba)
    out[0] = ek
    out[1] = eg
    out[2] = elastic_energy(m, d, q)
