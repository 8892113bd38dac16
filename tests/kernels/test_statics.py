"""Static equilibrium for initial conditions (papers 000 and 001 start from statics)."""
import numpy as np
import pytest

from fmu_mb.model import Body, Joint, Mechanism, Support, compile_mechanism
from fmu_mb.statics import elastic_coordinates, static_equilibrium


def platform(support_model="exact"):
    """A 100 kg platform, centre of mass on the vertical axis, on four identical supports:
    it must sink by M g / (4 s_z) without tilting."""
    m = Mechanism("platform", gravity=(0, 0, -9.81), support_model=support_model)
    m.add(Body("base", 100.0, (0, 0, 0.2), np.diag([5.0, 8.0, 10.0])), Joint("b", "free", "ground", "base"))
    for x, y in ((0.5, 0.4), (-0.5, 0.4), (-0.5, -0.4), (0.5, -0.4)):
        m.supports.append(Support("base", (x, y, 0.0), (1e5, 1e5, 2e6)))
    return m


@pytest.mark.parametrize("support_model", ["exact", "linearized"])
def test_platform_sinks_by_weight_over_stiffness(support_model):
    cm = compile_mechanism(platform(support_model))
    sol = static_equilibrium(cm, tol=1e-10)
    assert list(sol.free) == list(range(6))
    z = sol.q[2]
    assert z == pytest.approx(-100.0 * 9.81 / (4 * 2e6), rel=1e-9)
    assert np.max(np.abs(np.delete(sol.q, 2))) < 1e-12
    assert sol.residual <= 1e-10


def test_held_coordinates_report_holding_torque():
    """A horizontal arm on a base on springs: the base settles (and tilts), the arm angle
    is held and the holding torque equals the gravity moment of the arm about its joint."""
    m = platform()
    m.add(Body("arm", 10.0, (0.6, 0, 0), np.diag([0.01, 0.5, 0.5])),
          Joint("shoulder", "revolute", "base", "arm", origin=(0, 0, 0.5), axis=(0, 1, 0)))
    cm = compile_mechanism(m)
    sol = static_equilibrium(cm, tol=1e-9)
    assert 6 not in sol.free and np.all(np.abs(sol.holding[sol.free]) <= 1e-9)
    theta = sol.q[4]                                  # base pitch about y from the arm's moment
    assert theta > 0.0
    # the drive must hold the arm against gravity's moment about +y (which is positive:
    # rotating +x about +y lowers it): −m g · horizontal lever arm
    lever = 0.6 * np.cos(theta)
    assert sol.holding[6] == pytest.approx(-10.0 * 9.81 * lever, rel=1e-6)


def test_elastic_coordinates_of_a_rigid_arm_are_empty():
    m = Mechanism("arm", gravity=(0, 0, -9.81))
    m.add(Body("l", 1.0, (0.5, 0, 0), np.diag([0.01, 0.1, 0.1])), Joint("j", "revolute", "ground", "l", axis=(0, 1, 0)))
    cm = compile_mechanism(m)
    assert elastic_coordinates(cm).size == 0
    sol = static_equilibrium(cm)
    assert sol.holding[0] == pytest.approx(-9.81 * 0.5)


def test_every_model_variant_starts_from_statics():
    """init.static (Simulator.initialize(static=True)) succeeds for every rigid/flexible/mode
    variant of every model: loop-closure and fixed-base constraints hold at the start (≤ 1e-10),
    and the manipulator's programmed start (statics with E held on its path) is at rest
    (|q̈| ≤ 1e-5; a start with the joints held left the RFEM link at |q̈| ≈ 2e5)."""
    import itertools

    from fmu_mb import registry
    from fmu_mb.model.options import Choice
    from fmu_mb.simulator import Simulator
    for name in registry.available():
        mod = registry.load(name)
        choices = {k: v.values for k, v in getattr(mod, "OPTIONS", {}).items()
                   if isinstance(v, Choice) and k in ("base", "link", "coupler", "mode")}
        for values in itertools.product(*choices.values()):
            opts = dict(zip(choices, values))
            cm = compile_mechanism(mod.build(**opts))
            sim = Simulator(cm, mod.FMU["step_size"])
            sim.initialize(static=True)
            sim.evaluate()
            for c in cm.constraints:
                if c.group in ("kinematic", "base"):
                    assert sim.violation(c.name) <= 1e-10, (name, opts, c.name)
            if name == "manipulator" and opts["mode"] == "programmed":
                assert np.abs(sim.qdd).max() <= 1e-5, opts
