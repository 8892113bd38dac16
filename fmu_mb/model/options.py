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
    states what was measured there (quoted by the warning). An FMU whose option, method and step fall outside
    those measurements warns at initialization (fmi2Warning, once per option: the strictest note that applies).
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

    def validate(self, options: dict, methods) -> None:
        o = options.get(self.option)
        if not isinstance(o, Value):
            raise ValueError(f"Accuracy: {self.option!r} is not a Value option of the model")
        if not (math.isfinite(self.below) and o.min < self.below <= o.max):
            raise ValueError(f"Accuracy({self.option!r}): below = {self.below!r} must lie in ({o.min:g}, {o.max:g}]")
        bad = [k for k, h in self.steps.items() if k not in methods or not (isinstance(h, (int, float)) and h >= 0)]
        if bad:
            raise ValueError(f"Accuracy({self.option!r}): steps must map methods of {list(methods)} to steps >= 0 s "
                             f"(bad: {bad})")
