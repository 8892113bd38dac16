"""The many-right-hand-side forms (issue 40's speed work) take the one-at-a-time forms' operations in their
order: bit for bit the same results, checked against the one-at-a-time routine on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.kernels.constraints import constraint_wrenches_into
from fmu_mb.kernels.linalg import lu_factor, lu_solve, lu_solve_rows
from fmu_mb.kernels.rnea import reaction_increments, rnea_constrained
from fmu_mb.model import compile_mechanism
from fmu_mb.model.options import auto_method
from fmu_mb.simulator import Simulator


def test_lu_solve_rows_equals_lu_solve_column_by_column():
    rng = np.random.default_rng(7)
    n, ncol, nrow = 7, 5, 12
    A = np.zeros((9, 9))
    A[:n, :n] = rng.standard_normal((n, n))
    piv = np.zeros(9, np.int64)
    assert lu_factor(A, n, piv) > 0.0
    at = rng.permutation(nrow)[:n].astype(np.int64)        # the system's rows scattered in B, as GPME's D is
    B = rng.standard_normal((nrow, ncol))
    expect = B.copy()
    for j in range(ncol):
        x = np.zeros(9)
        x[:n] = B[at, j]
        lu_solve(A, n, piv, x)
        expect[at, j] = x[:n]
    lu_solve_rows(A, n, piv, B, at, ncol)
    assert np.array_equal(B, expect)


@pytest.mark.parametrize("name", ["rpsup", "manipulator"])
def test_reaction_increments_equal_one_linear_pass_per_lane(name):
    """Every lane's reaction increments at the friction joints' bodies equal rnea_constrained(full=False)'s."""
    options = registry.most_detailed(name)
    mod = registry.load(name)
    cm = compile_mechanism(mod.build(**options))
    sim = Simulator(cm, 1e-3, kernels="jit", method=auto_method(mod, options))
    sim.initialize(static=getattr(mod, "FMU", {}).get("static_start", False))
    sim.step(0.02)
    m, d, data = sim._m, sim._d, sim.data
    nf, nv, nc = cm.model.fric_dofs.shape[0], cm.model.nv, cm.model.nc
    rng = np.random.default_rng(3)
    data.fric_dqdd[:] = rng.standard_normal((nf, nv))
    data.fric_dlam[:] = rng.standard_normal((nf, nc))
    for j in range(nf):
        constraint_wrenches_into(m, d, data.fric_dlam[j], data.inc_cM[j], data.inc_cF[j])
    reaction_increments(m, d, data.fric_dqdd, data.inc_cM, data.inc_cF, nf)
    bodies = cm.model.dof_body[cm.model.fric_dofs]
    for j in range(nf):
        data.cextM[:] = data.inc_cM[j]
        data.cextF[:] = data.inc_cF[j]
        rnea_constrained(m, d, data.fric_dqdd[j].copy(), False)
        assert np.array_equal(data.inc_f[j, bodies, :3], data.fM[bodies])
        assert np.array_equal(data.inc_f[j, bodies, 3:], data.fF[bodies])
