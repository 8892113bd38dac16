"""Options a model file offers (its FMU parameters): rigid/flexible, friction law, rfe count.

A model file declares ``OPTIONS = {name: Choice(...) | Flag(...) | Count(...) | Value(...)}``
and ``build(**options)`` accepts them. The FMI layer turns each into a parameter
(Choice → Integer code, Flag → Boolean, Count → Integer, Value → Real) and checks
the range before building, so a bad value is reported with its name and range.
"""
from __future__ import annotations

from dataclasses import dataclass
import math


@dataclass(frozen=True)
class Choice:
    values: tuple
    default: str
    description: str = ""

    def check(self, name, value) -> str:
        if isinstance(value, (int,)) and not isinstance(value, bool) and 0 <= value < len(self.values):
            return self.values[value]
        if value in self.values:
            return value
        raise ValueError(f"parameter '{name}' must be one of {', '.join(f'{i} = {v}' for i, v in enumerate(self.values))} "
                         f"(got {_shown(value)})")


@dataclass(frozen=True)
class Flag:
    default: bool
    description: str = ""

    def check(self, name, value) -> bool:
        if isinstance(value, (bool, int)) and value in (0, 1, True, False):
            return bool(value)
        raise ValueError(f"parameter '{name}' must be true or false (got {_shown(value)})")


@dataclass(frozen=True)
class Count:
    default: int
    min: int
    max: int
    description: str = ""

    def check(self, name, value) -> int:
        if isinstance(value, bool) or not float(value).is_integer() or not (self.min <= value <= self.max):
            raise ValueError(f"parameter '{name}' must be an integer in [{self.min}, {self.max}] (got {_shown(value)})")
        return int(value)


@dataclass(frozen=True)
class Value:
    default: float
    min: float
    max: float
    unit: str = ""
    description: str = ""

    def check(self, name, value) -> float:
        v = float(value)
        if not (math.isfinite(v) and self.min <= v <= self.max):
            raise ValueError(f"parameter '{name}' must be a finite number in [{self.min:g}, {self.max:g}]"
                             f"{' ' + self.unit if self.unit else ''} (got {_shown(value)})")
        return v



def _shown(value) -> str:
    """repr of a value as the user typed it (numpy scalars from an FMU's value table as plain numbers)."""
    return repr(value.item() if hasattr(value, "item") and getattr(value, "ndim", 1) == 0 else value)


Option = Choice | Flag | Count | Value


@dataclass(frozen=True)
class Accuracy:
    """A measured limit of the integrators' accuracy over part of a Value option's range (a model file's
    ``ACCURACY`` tuple). Where the option's value is below ``below``, the motion stayed within ``bound`` of the
    converged one on the model's accuracy run only with the methods and internal steps of ``steps``
    ({method: largest step measured within the bound, s; 0 or absent: none measured within it}); ``measured``
    states what was measured there (quoted by the warning). At initialization an FMU whose solver.integrator is
    ``auto`` (the default) takes the method :func:`auto_method` chooses; where the method and step in force
    still fall outside a note that applies, it warns (fmi2Warning, once per option: the strictest note).
    """
    option: str
    below: float
    steps: dict
    measured: str
    bound: str = "1e-3 rad (m)"
    run: str = ""

    def step_for(self, method: str) -> float:
        """Largest internal step measured within the bound for ``method`` (0: none)."""
        return float(self.steps.get(method, 0.0))

    def applies(self, values: dict, options: dict) -> bool:
        """Whether the note covers these option ``values`` (the model's ``options``' defaults where not given)."""
        return options[self.option].check(self.option, values.get(self.option, options[self.option].default)) \
            < self.below

    def validate(self, options: dict, methods) -> None:
        o = options.get(self.option)
        if not isinstance(o, Value):
            raise ValueError(f"Accuracy: {self.option!r} is not a Value option of the model")
        if not (math.isfinite(self.below) and o.min < self.below <= o.max):
            raise ValueError(f"Accuracy({self.option!r}): below = {self.below!r} must lie in ({o.min:g}, {o.max:g}]")
        _check_steps(self, methods)


@dataclass(frozen=True)
class ChoiceAccuracy:
    """The same for one value of a Choice option: where option ``option`` is ``value``, only the methods and
    steps of ``steps`` were measured within ``bound`` of the converged motion on the model's accuracy run."""
    option: str
    value: str
    steps: dict
    measured: str
    bound: str = "1e-3 rad (m)"
    run: str = ""

    step_for = Accuracy.step_for

    def applies(self, values: dict, options: dict) -> bool:
        o = options[self.option]
        return o.check(self.option, values.get(self.option, o.default)) == self.value

    def validate(self, options: dict, methods) -> None:
        o = options.get(self.option)
        if not isinstance(o, Choice):
            raise ValueError(f"ChoiceAccuracy: {self.option!r} is not a Choice option of the model")
        if self.value not in o.values:
            raise ValueError(f"ChoiceAccuracy({self.option!r}): {self.value!r} is not one of {list(o.values)}")
        _check_steps(self, methods)


def _check_steps(note, methods) -> None:
    bad = [k for k, h in note.steps.items() if k not in methods or not (isinstance(h, (int, float)) and h >= 0)]
    if bad:
        raise ValueError(f"{type(note).__name__}({note.option!r}): steps must map methods of {list(methods)} to "
                         f"steps >= 0 s (bad: {bad})")


#: the order in which solver.integrator = auto tries the methods after the model's default: the cheaper step first
#: (two pipeline evaluations, the low-damping ROS2 before the damped one; then four: RK4 needs no factorization)
AUTO_ORDER = ("ros2_lowdamp", "ros2", "rk4", "ros34pw2")


def auto_method(module, values: dict, step: float | None = None) -> str:
    """The integrator an FMU of model file ``module`` runs with solver.integrator = auto, for option ``values``
    (the defaults where not given) at internal step ``step`` (default: the model's ``FMU['step_size']``): the
    model's default method (``FMU['method']``) if every accuracy note that applies allows it at that step, else
    the first of :data:`AUTO_ORDER` that all of them allow; the default where none does (the FMU then warns).
    The FMU core applies the same rule (fmu_mb/fmi/c/mechanism.c: auto_method)."""
    meta = getattr(module, "FMU", {})
    default = meta.get("method", "rk4")
    h = meta.get("step_size", 1e-3) if step is None else step
    options = getattr(module, "OPTIONS", {})
    notes = [a for a in getattr(module, "ACCURACY", ()) if a.applies(values, options)]
    for m in (default,) + AUTO_ORDER:
        if all(h <= a.step_for(m) * (1.0 + 1e-9) for a in notes):
            return m
    return default
