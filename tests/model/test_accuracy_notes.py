"""A model file's ACCURACY (fmu_mb.model.options.Accuracy): checked against its options and the methods when the
interface is built, ordered per option with the strictest last (the FMU core warns at initialization with the
strictest note that applies; tests/test_robustness.py runs the crane's through both FMU kinds)."""
from __future__ import annotations

import types

import pytest

from fmu_mb import registry
from fmu_mb.fmi.interface import accuracy_notes
from fmu_mb.model.options import Accuracy, Choice, Value
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


def test_notes_carry_a_step_per_method_and_say_what_is_accurate():
    n = _notes(Accuracy("damping", 1e-6, {"rk4": 1e-5}, "undamped", run="the run"),
               Accuracy("damping", 1e-4, {"rk4": 1e-4, "ros34pw2": 1e-3}, "lightly damped"))
    assert [x.below for x in n] == [1e-4, 1e-6]                          # strictest last
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
        assert not default < n.below or mod.FMU["step_size"] <= n.steps[method]
    assert {names[n.option] for n in notes} == {"damping", "support_z"}
