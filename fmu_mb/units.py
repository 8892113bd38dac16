"""SI units of the FMU variables, for ``UnitDefinitions`` (FMI 2.0 section 2.2.2).

Each unit: exponents of the SI base units (kg, m, s, rad) and optional display
units (factor: display = factor · SI value).
"""
from __future__ import annotations

RAD_TO_DEG = 57.29577951308232

#: name -> (base-unit exponents, display units {name: factor})
UNITS = {
    "m": ({"m": 1}, {"mm": 1000.0}),
    "rad": ({"rad": 1}, {"deg": RAD_TO_DEG}),
    "s": ({"s": 1}, {}),
    "kg": ({"kg": 1}, {}),
    "kg.m2": ({"kg": 1, "m": 2}, {}),
    "m/s": ({"m": 1, "s": -1}, {}),
    "rad/s": ({"rad": 1, "s": -1}, {"deg/s": RAD_TO_DEG}),
    "m/s2": ({"m": 1, "s": -2}, {}),
    "rad/s2": ({"rad": 1, "s": -2}, {"deg/s2": RAD_TO_DEG}),
    "N": ({"kg": 1, "m": 1, "s": -2}, {}),
    "N.m": ({"kg": 1, "m": 2, "s": -2}, {}),
    "J": ({"kg": 1, "m": 2, "s": -2}, {}),
    "N.m/rad": ({"kg": 1, "m": 2, "s": -2, "rad": -1}, {}),
    "N.m.s/rad": ({"kg": 1, "m": 2, "s": -1, "rad": -1}, {}),
    "N/m": ({"kg": 1, "s": -2}, {}),
    "N.s/m": ({"kg": 1, "s": -1}, {}),
    "1/s": ({"s": -1}, {}),
    "1/s2": ({"s": -2}, {}),
    "N.m.s2/rad": ({"kg": 1, "m": 2, "rad": -1}, {}),     # mass-matrix entries: generalized force per
    "N.m.s2/m": ({"kg": 1, "m": 1}, {}),                  # acceleration of the column's coordinate
    "N.s2/rad": ({"kg": 1, "m": 1, "rad": -1}, {}),
    "N.s2/m": ({"kg": 1}, {}),
    "1": ({}, {}),                  # dimensionless (rotation-matrix entries)
}

#: display unit people expect for a unit (FMI displayUnit attribute)
DISPLAY = {"rad": "deg", "rad/s": "deg/s", "rad/s2": "deg/s2"}


def coordinate_units(kind: str) -> tuple[str, str, str]:
    """(position, velocity, acceleration) units of a coordinate: 'rad' or 'm' based."""
    if kind == "rad":
        return "rad", "rad/s", "rad/s2"
    return "m", "m/s", "m/s2"


def force_unit(kind: str) -> str:
    """Generalized force unit of a coordinate."""
    return "N.m" if kind == "rad" else "N"
