"""Turning a model file's option values into description parts (used by ``models/*.py``).

A model file states the domain of each option once, in its ``OPTIONS`` dict
(:mod:`fmu_mb.model.options`). Its ``build()`` checks the values it was given against
those entries with :func:`check_choices`, and maps the friction option to a joint's
:class:`~fmu_mb.model.friction.Friction` with :func:`friction_choice`. Both raise
``ValueError`` naming the model, the option, the allowed values and the value given.

Description layer only: nothing here runs a kernel.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from .friction import Friction
from .options import Choice, Option

__all__ = ["check_choices", "friction_choice", "one_of"]


def one_of(values) -> str:
    """``'a'``, ``'a' or 'b'``, ``'a', 'b' or 'c'``: the allowed values for an error message."""
    items = [repr(v) for v in values]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} or {items[-1]}"


def check_choices(model: str, options: Mapping[str, Option], **values) -> None:
    """Check each ``name=value`` against the :class:`Choice` ``options[name]`` of model ``model``.

    build() takes the option values themselves (the strings of ``Choice.values``; the FMU
    layer has already turned integer codes into them with ``Choice.check``). ValueError, e.g.
    ``rpsup: base must be 'rigid' or 'flexible' (got 'soft')``; a name that is not a Choice of
    ``options`` is an error of the model file (KeyError / TypeError)."""
    for name, value in values.items():
        if name not in options:
            raise KeyError(f"{model}: no option named {name!r} in OPTIONS (options: {', '.join(options)})")
        choice = options[name]
        if not isinstance(choice, Choice):
            raise TypeError(f"{model}: option {name!r} is a {type(choice).__name__}, not a Choice")
        if not isinstance(value, str) or value not in choice.values:
            raise ValueError(f"{model}: {name} must be {one_of(choice.values)} (got {value!r})")


def friction_choice(model: str, kind: str, laws: Mapping[str, object | Callable[[], object]],
                    bearing=None, *, option: str = "friction") -> Friction | None:
    """The friction of one joint for the option value ``kind``.

    ``"none"`` gives None (an ideal joint). Any other value must be a key of ``laws``; its
    entry is the friction law (CoulombViscous, Stribeck, Dahl, LuGre) or a callable of no
    arguments returning it (a law built per joint, or only when chosen). The result is
    ``Friction(law, bearing)``, ``bearing`` the joint's normal-load model (Journal, PinBearing;
    None: Friction's default). Per-joint data (journal diameters, per-joint laws) are the
    caller's: it passes that joint's law and bearing. Allowed values: ``"none"`` and the keys
    of ``laws``; anything else raises ValueError naming ``model``, ``option`` and them, e.g.
    ``crane: friction must be 'none', 'dahl' or 'lugre' (got 'coulomb')``."""
    if kind == "none":
        return None
    if not isinstance(kind, str) or kind not in laws:
        raise ValueError(f"{model}: {option} must be {one_of(('none', *laws))} (got {kind!r})")
    law = laws[kind]
    if callable(law):
        law = law()
    return Friction(law) if bearing is None else Friction(law, bearing)
