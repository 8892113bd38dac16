"""Joints about a coordinate axis (Model.body_axis_k, body_rot_z): the kernels' shortcuts give the general path's bits.

The shortcuts leave out the products with the zeros of a unit axis e_k (kinematics: Rodrigues' rotation
and its placement, the velocity product c; ABA: U = I^A S, D, u, the joint acceleration) and, where the
local rotation is one about z, of that rotation (ABA: the inertia transform to the parent, the force and
motion transforms; kinematics: the velocity transform). A sum with an
exact zero term equals the sum without it, so the state derivative, reactions and placements must be the
same bits as the general path's, which the test forces by marking every axis general (-1).
"""
import dataclasses

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.kernels.constrained import constrained_derivative
from fmu_mb.kernels.dynamics import state_derivative
from fmu_mb.kernels.handles import data_struct, model_struct
from fmu_mb.model import Body, Joint, Mechanism, compile_mechanism
from fmu_mb.model.compiled import freeze
from fmu_mb.simulator import Simulator

MECHANISMS = ["five_axis", "crane", "manipulator", "rpsup", "three_loop", "mobile_robot"]


def _evaluate(cm, x, tau):
    sim = Simulator(cm, 1e-3, method="rk4", kernels="jit")
    m, d = model_struct(sim.model), data_struct(sim.data)
    f = np.zeros_like(x)
    if cm.model.nc:
        constrained_derivative(m, d, x, 0.01, tau, f)
    else:
        state_derivative(m, d, x, tau, f)
    return f, sim.data.fM.copy(), sim.data.fF.copy(), sim.data.oR.copy(), sim.data.lR.copy()


def test_the_axis_index_marks_exact_unit_axes_only():
    links = [Body(f"l{k}", mass=1.0, inertia=np.diag([0.1, 0.2, 0.3]), com=(0.05, 0.01, 0.0)) for k in range(5)]
    axes = [(0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 0, -1), (0.6, 0.8, 0)]
    joints = [Joint(f"j{k}", "revolute", "ground" if k == 0 else f"l{k - 1}", f"l{k}", axis=a, origin=(0.1, 0, 0))
              for k, a in enumerate(axes)]
    cm = compile_mechanism(Mechanism("axes", links, joints))
    assert cm.model.body_axis_k.tolist() == [2, 0, 1, -1, -1]
    assert cm.model.body_rot_z.tolist() == [1, 0, 0, 0, 0]


@pytest.mark.parametrize("name", MECHANISMS)
def test_unit_axis_shortcut_gives_the_general_paths_bits(name):
    cm = compile_mechanism(registry.build(name, **registry.most_detailed(name)))
    assert (cm.model.body_axis_k >= 0).any(), "the mechanism has no joint about a coordinate axis"
    assert cm.model.body_rot_z.any(), "the mechanism has no joint rotating about z"
    general = dataclasses.replace(cm, model=freeze(cm.model._replace(body_axis_k=np.full(cm.model.nbody, -1),
                                                                   body_rot_z=np.zeros(cm.model.nbody, np.int64))))
    rng = np.random.default_rng(7)
    nv = cm.nv
    for _ in range(3):
        x = np.zeros(cm.model.nx)
        x[:nv] = 0.3 * rng.standard_normal(nv)
        x[nv:2 * nv] = rng.standard_normal(nv)
        tau = rng.standard_normal(nv)
        for a, b in zip(_evaluate(cm, x, tau), _evaluate(general, x, tau)):
            assert np.isfinite(a).all()
            np.testing.assert_array_equal(a, b)
