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
