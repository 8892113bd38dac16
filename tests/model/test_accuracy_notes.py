"""A model file's ACCURACY (fmu_mb.model.options.Accuracy, ChoiceAccuracy): checked against its options and the
methods when the interface is built, ordered per option with the strictest last (the FMU core warns at
initialization with the strictest note that applies), and the rule of solver.integrator = auto
(options.auto_method; tests/test_robustness.py runs the crane's and rpsup's notes through both FMU kinds)."""
from __future__ import annotations

import types

import pytest

from fmu_mb import registry
from fmu_mb.fmi.interface import accuracy_notes
from fmu_mb.model.options import AUTO_ORDER, Accuracy, Choice, ChoiceAccuracy, Value, auto_method
from fmu_mb.simulator import METHODS

OPTIONS = {"damping": Value(1e-4, 0.0, 1e-2, "s"), "link": Choice(("rigid", "flexible"), "rigid")}


def _notes(*acc):
    return accuracy_notes(types.SimpleNamespace(ACCURACY=acc), OPTIONS)


def test_notes_are_checked():
    with pytest.raises(ValueError, match="not a Value option"):
        _notes(Accuracy("link", 1.0, {}, ""))
    with pytest.raises(ValueError, match="must lie in"):
        _notes(Accuracy("damping", 0.0, {}, ""))                       # nothing lies below the range's minimum
    with pytest.raises(ValueError, match="steps must map methods"):
        _notes(Accuracy("damping", 1e-5, {"euler": 1e-3}, ""))
    with pytest.raises(ValueError, match="steps must map methods"):
        _notes(Accuracy("damping", 1e-5, {"rk4": -1.0}, ""))
    with pytest.raises(ValueError, match="not a Choice option"):
        _notes(ChoiceAccuracy("damping", "rigid", {}, ""))
    with pytest.raises(ValueError, match="is not one of"):
        _notes(ChoiceAccuracy("link", "soft", {}, ""))


def test_notes_carry_a_step_per_method_and_say_what_is_accurate():
    n = _notes(Accuracy("damping", 1e-6, {"rk4": 1e-5}, "undamped", run="the run"),
               Accuracy("damping", 1e-4, {"rk4": 1e-4, "ros34pw2": 1e-3}, "lightly damped"))
    assert [x.hi for x in n] == [1e-4, 1e-6] and n[0].lo == -float("inf")    # strictest last
    assert n[0].option == 0 and n[0].steps == tuple({"rk4": 1e-4, "ros34pw2": 1e-3}.get(m, 0.0) for m in METHODS)
    assert n[1].text == ("the run: undamped; within 1e-3 rad (m) of the converged motion there: rk4 at "
                         "solver.step_size <= 1e-05 s")


def test_the_crane_default_is_inside_its_measurements():
    """At the FMU's defaults (method, step, damping, support stiffness) no note of the crane applies."""
    mod = registry.load("crane")
    notes = accuracy_notes(mod, mod.OPTIONS)
    names = list(mod.OPTIONS)
    method = list(METHODS).index(mod.FMU["method"])
    for n in notes:
        default = mod.OPTIONS[names[n.option]].default
        assert not n.lo <= default < n.hi or mod.FMU["step_size"] <= n.steps[method]
    assert {names[n.option] for n in notes} == {"damping", "support_z"}


def test_a_choice_note_covers_its_value_code():
    n = _notes(ChoiceAccuracy("link", "flexible", {"ros34pw2": 1e-3}, "stick-slip"))
    assert (n[0].option, n[0].lo, n[0].hi, n[0].choice) == (1, 1.0, 2.0, "1 (flexible)")


def test_auto_takes_the_default_unless_a_note_excludes_it_then_the_first_allowed():
    """options.auto_method (the core's rule): the model's default method where every applicable note allows it at
    the step, else the first of AUTO_ORDER all allow, else the default (the FMU then warns)."""
    assert sorted(AUTO_ORDER) == sorted(METHODS)
    crane, rpsup = registry.load("crane"), registry.load("rpsup")
    assert auto_method(crane, {}) == crane.FMU["method"] == "ros2_lowdamp"
    assert auto_method(crane, {"damping": 1.2e-4}) == "ros2"          # (1.5e-4 note: ros2 at 1 ms measured within)
    assert auto_method(crane, {"damping": 5e-5}) == "ros34pw2"        # (1e-4 note: ros2 damps the vibration away)
    assert auto_method(crane, {"damping": 0.0}) == "ros2_lowdamp"     # nothing at 1 ms: the default, and a warning
    assert auto_method(crane, {"damping": 0.0}, 1e-4) == "rk4"
    assert auto_method(crane, {"support_z": 1e4}) == "ros34pw2"
    assert auto_method(rpsup, {}) == "ros2_lowdamp"
    assert auto_method(rpsup, {"friction": "lugre"}) == auto_method(rpsup, {"friction": 1}) == "ros34pw2"
    assert auto_method(rpsup, {"friction": "lugre"}, 2.5e-4) == "ros2_lowdamp"
    assert auto_method(registry.load("five_axis"), {"friction": "stribeck"}) == "rk4"
