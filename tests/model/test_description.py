"""Validation of mechanism descriptions: clear errors naming the object, field and range."""
import numpy as np
import pytest

from fmu_mb.model import (Beam, Body, CoulombViscous, Dahl, Friction, Joint, Journal, LuGre, Mechanism,
                          PinBearing, Point, Support, compile_mechanism)


def base():
    m = Mechanism("m")
    m.add(Body("a", 1.0, (0, 0, 0), np.eye(3) * 0.01), Joint("ja", "revolute", "ground", "a"))
    return m


@pytest.mark.parametrize("mutate,message", [
    (lambda m: setattr(m.links[0], "mass", -1.0), "Body 'a': mass must be a finite number >= 0"),
    (lambda m: setattr(m.links[0], "mass", float("nan")), "Body 'a': mass"),
    (lambda m: setattr(m.links[0], "inertia", np.diag([1.0, 1.0, 3.0])), "triangle inequality"),
    (lambda m: setattr(m.links[0], "inertia", np.diag([-1.0, 1.0, 1.0])), "positive semi-definite"),
    (lambda m: setattr(m.links[0], "com", (0, 0)), "com must be a 3-vector"),
    (lambda m: setattr(m.joints[0], "kind", "hinge"), "kind must be one of"),
    (lambda m: setattr(m.joints[0], "axis", (0, 0, 0)), "axis must be a non-zero 3-vector"),
    (lambda m: setattr(m.joints[0], "parent", "nowhere"), "parent 'nowhere' is not a link"),
    (lambda m: setattr(m.joints[0], "q0", (1.0, 2.0)), "q0 must hold 1 finite value"),
    (lambda m: setattr(m.joints[0], "rotation", np.diag([1.0, 1.0, -1.0])), "proper orthonormal"),
    (lambda m: setattr(m.joints[0], "armature", -0.1), "armature must be one finite value >= 0 or 1 of them"),
    (lambda m: setattr(m.joints[0], "armature", (0.1, 0.2)), "armature must be one finite value >= 0"),
    (lambda m: setattr(m.joints[0], "armature", float("nan")), "armature must be one finite value >= 0"),
    (lambda m: setattr(m, "gravity", (0, 0, float("inf"))), "gravity contains NaN or inf"),
    (lambda m: setattr(m, "support_model", "soft"), "support_model must be 'exact' or 'linearized'"),
    (lambda m: m.joints.append(Joint("jb", "revolute", "ground", "a")), "child of two joints"),
    (lambda m: m.links.append(Body("orphan", 1.0)), "not attached by any joint"),
    (lambda m: m.supports.append(Support("a", (0, 0, 0), (1, 1, -1))), "stiffness and damping must be >= 0"),
    (lambda m: m.points.append(Point("p", "ghost", (0, 0, 0))), "Point 'p': link 'ghost'"),
])
def test_bad_descriptions_are_rejected_with_a_message(mutate, message):
    m = base()
    mutate(m)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_mechanism(m)


@pytest.mark.parametrize("friction,message", [
    (Friction(CoulombViscous(k_c=-0.1)), "CoulombViscous.k_c must be finite and >= 0"),
    (Friction(Dahl(sigma0=100.0, mu_s=0.2, gamma=3.0)), "Dahl.gamma must lie in \\[1, 2\\]"),
    (Friction(LuGre(sigma0=1e3, sigma1=1, sigma2=0, mu_s=0.1, mu_k=0.2, v_s=0.01)), "mu_s .* must be >= mu_k"),
    (Friction(CoulombViscous(k_c=0.1), PinBearing(R_n=0.01, R_p=0.0, R_b=0.02)), "PinBearing.R_p must be finite and > 0"),
    (Friction(CoulombViscous(k_c=0.1), Journal(diameter=-1)), "Journal.diameter"),
])
def test_bad_friction_is_rejected(friction, message):
    m = base()
    m.joints[0].friction = friction
    with pytest.raises(ValueError, match=message):
        compile_mechanism(m)


def test_friction_on_a_spherical_joint_is_refused():
    m = Mechanism("m")
    m.add(Body("a", 1.0, (0, 0, 0), np.eye(3) * 0.01),
          Joint("ja", "spherical", "ground", "a", friction=Friction(CoulombViscous(k_c=0.1))))
    with pytest.raises(ValueError, match="revolute and prismatic joints only"):
        compile_mechanism(m)


def test_cycle_is_rejected():
    m = Mechanism("m")
    m.add(Body("a", 1.0), Joint("ja", "revolute", "b", "a"))
    m.add(Body("b", 1.0), Joint("jb", "revolute", "a", "b"))
    with pytest.raises(ValueError, match="cycle"):
        compile_mechanism(m)


def test_beam_attachment_outside_the_beam_is_rejected():
    m = Mechanism("m")
    m.add(Beam("arm", 1.0, 7800, 1e-4, 1e-9, 1e-9, 1e-9, 2e11, 8e10, n_div=4), Joint("j", "revolute", "ground", "arm"))
    m.add(Body("tip", 1.0), Joint("t", "fixed", "arm", "tip", origin=(1.5, 0, 0)))
    with pytest.raises(ValueError, match="outside beam 'arm'"):
        compile_mechanism(m)


def test_rfem_layout_follows_paper_001_eq7():
    """n_div sections → n_div + 1 rfes with half-length end elements; 3 coordinates per sde;
    a child at the tip attaches to the last rfe at its far end."""
    m = Mechanism("m")
    m.add(Beam("arm", 1.2, 7800, 1e-4, 1e-9, 2e-9, 3e-9, 2e11, 8e10, n_div=4), Joint("j", "revolute", "ground", "arm"))
    m.add(Body("tip", 1.0), Joint("t", "revolute", "arm", "tip", origin=(1.2, 0, 0)))
    cm = compile_mechanism(m)
    beam = cm.beams[0]
    assert np.allclose(np.diff(np.r_[beam.rfe_start, 1.2]), [0.15, 0.3, 0.3, 0.3, 0.15])
    assert cm.dof_names == ["j.q"] + [f"arm.sde{r}.{a}" for r in range(1, 5) for a in ("psi", "theta", "phi")] + ["t.q"]
    tip_body = cm.joint("t").body
    assert cm.model.body_parent[tip_body] == beam.rfe_bodies[-1]
    assert np.allclose(cm.model.body_p0[tip_body], [0.15, 0, 0])
    d = 1.2 / 4
    assert np.allclose(cm.model.dof_k[1:4], [2e11 * 2e-9 / d, 2e11 * 1e-9 / d, 8e10 * 3e-9 / d])
