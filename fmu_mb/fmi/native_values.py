"""Value options a native FMU takes at any value at run time: those its compiled arrays follow linearly.

A Value option (a stiffness, a damping ratio, an armature) rebuilds the model in Python. Where every
compiled array of every option combination is an affine function of the option values, with at most
products of two of them (the crane's base damping matrix is damping × stiffness), the build stores the
derivatives beside the arrays:

    A(v) = A(v₀) + Σᵢ Δᵢ Sᵢ + Σᵢ<ⱼ Δᵢ Δⱼ Sᵢⱼ,   Δᵢ = vᵢ − vᵢ,₀,

``slope.<i>.<record>`` = Sᵢ (from a build at one other value of option i), ``cross.<i>.<j>.<record>`` =
Sᵢⱼ (from a build with both moved), and the C layer adds them at fmi2ExitInitializationMode. The model
is verified at a third point, every option moved at once, to :data:`TOLERANCE` (relative, per entry):
integer arrays and shapes must not change at all. An option that fails (a Count, a stiffness entering a
square root, …) stays fixed at its built value(s), as before. The static start and the RK4 limit are
solved at run time from the arrays (kernels.statics, kernels.stability), so they follow. Results equal
the pythonfmu FMU's to rounding (the arrays differ in their last bits: A(v₀) + Δ S is not the float
the model file computes at v).
"""
from __future__ import annotations

import itertools

import numpy as np

from ..model import options as opt

#: largest relative difference, per array entry, between the model at the check point and its prediction
TOLERANCE = 1e-12
#: where in [min, max] the derivative and check builds are made (avoiding the built value)
FRACTIONS = (0.37, 0.71)


def candidates(module) -> list:
    """The Value options of ``module`` built at one value (not a value set: those carry their own arrays)."""
    grid = getattr(module, "grid", {})
    return [n for n, o in getattr(module, "OPTIONS", {}).items() if isinstance(o, opt.Value) and n not in grid]


def _points(o) -> tuple:
    """Two values in [min, max] different from the default (a derivative point and a check point)."""
    pts = [o.min + f * (o.max - o.min) for f in FRACTIONS]
    return tuple(p if p != o.default else 0.5 * (p + o.max) for p in pts)


def _difference(a: dict, b: dict) -> dict | None:
    """{record: b − a} of the float arrays that differ; None if anything else differs."""
    if a.keys() != b.keys():
        return None
    out = {}
    for name, x in a.items():
        y = b[name]
        if not isinstance(x, np.ndarray):
            if x != y:
                return None
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return None
        if x.dtype != np.float64:
            if not np.array_equal(x, y):
                return None
        elif not np.array_equal(x, y):
            out[name] = y - x
    return out


def value_slopes(names: list, module, variant: dict, base: dict, records_of) -> list | None:
    """The slope and cross records of one option combination ``variant`` whose records at the built
    values are ``base`` ({name: array}); ``records_of(variant)`` builds another. None if the model is
    not of the module doc's form in ``names``."""
    options = module.OPTIONS
    v0 = {n: options[n].default for n in names}
    p1 = {n: _points(options[n])[0] for n in names}
    p2 = {n: _points(options[n])[1] for n in names}
    slopes, out = {}, []
    for i, n in enumerate(names):
        d = _difference(base, records_of({**variant, n: p1[n]}))
        if d is None:
            return None
        slopes[i] = {r: x / (p1[n] - v0[n]) for r, x in d.items()}
        out += [(f"slope.{i}.{r}", s) for r, s in slopes[i].items()]
    cross = {}
    for i, j in itertools.combinations(range(len(names)), 2):
        a, b = names[i], names[j]
        d = _difference(base, records_of({**variant, a: p1[a], b: p1[b]}))
        if d is None:
            return None
        da, db = p1[a] - v0[a], p1[b] - v0[b]
        for r, x in d.items():
            rest = x - da * slopes[i].get(r, 0.0) - db * slopes[j].get(r, 0.0)
            scale = np.maximum(np.abs(base[r]), np.abs(base[r] + x))
            rest = np.where(np.abs(rest) <= TOLERANCE * scale, 0.0, rest)
            if np.any(rest):
                cross[(i, j, r)] = rest / (da * db)
                out.append((f"cross.{i}.{j}.{r}", cross[(i, j, r)]))
    # the check point: every option moved at once
    check = records_of({**variant, **p2})
    d = _difference(base, check)
    if d is None:
        return None
    dv = [p2[n] - v0[n] for n in names]
    for r in set(d) | {r for s in slopes.values() for r in s} | {k[2] for k in cross}:
        pred = base[r] + sum(dv[i] * slopes[i][r] for i in slopes if r in slopes[i])
        pred = pred + sum(dv[i] * dv[j] * c for (i, j, rr), c in cross.items() if rr == r)
        scale = np.maximum(np.maximum(np.abs(check[r]), np.abs(base[r])), 1e-300)
        if not np.all(np.abs(pred - check[r]) <= TOLERANCE * scale):
            return None
    return out
