"""Energy bookkeeping: kinetic, potential (gravity + springs).

E_k = Σ ½ vᵀ I v (paper 000 eq. (10) in spatial form), E_p = −Σ m gᵀ r_C
(eq. (13) for an arbitrary gravity vector) + spring energies (eqs. (15.1),
(17.1)). Dissipated energy and input work are integrated with the state
(see fmu_mb.model.compiled), so that E_k + E_p + E_diss − W_in is conserved.
"""
from __future__ import annotations

from numba import njit

from .forces import elastic_energy
from .kinematics import forward_kinematics
from .spatial import kinetic_energy


@njit(cache=True)
def energies(model, data, q, v, out):
    """out[0] = kinetic, out[1] = gravitational, out[2] = elastic energy (J)."""
    forward_kinematics(model, data, q, v)
    ek = 0.0
    eg = 0.0
    g = model.gravity
    for i in range(model.nbody):
        ek += kinetic_energy(model, i, data.w[i], data.vl[i])
        m = model.body_mass[i]
        if m != 0.0:
            R = data.oR[i]
            c = model.body_com[i]
            for r in range(3):
                rc = data.op[i, r] + R[r, 0] * c[0] + R[r, 1] * c[1] + R[r, 2] * c[2]
                eg -= m * g[r] * rc
    out[0] = ek
    out[1] = eg
    out[2] = elastic_energy(model, data, q)
