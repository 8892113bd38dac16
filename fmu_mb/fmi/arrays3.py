"""The FMI 3.0 variables of a native mechanism FMU over its interface table: which indexed FMI 2.0 variables become
one FMI 3.0 array, and which stay scalars.

**The rule.** The interface table names the elements of a vector quantity ``x[1]`` … ``x[n]`` (a matrix
``x[1,1]`` … ``x[n,m]``, row-major; a state derivative ``der(state[k])``). In FMI 3.0 they are one array ``x`` with
``<Dimension>``s (fixed sizes) when every element has the same type, causality, variability, unit, range and
named values, and the indices fill the whole box 1…n (× 1…m); otherwise (a free joint's ``base.q[1]`` … ``[6]``:
metres and radians) each element stays a scalar with its FMI 2.0 name. So a point's position ``E.r``, a joint's
reaction ``P21.F`` and ``P21.M``, a support's force ``support[1].F``, the gravity vector, a spherical joint's
angles, the mass matrix ``dynamics.M`` (n × n), a link's orientation ``E.R`` (its nine elements, the rotation
matrix row-major) and the continuous states ``state`` and ``der(state)`` are arrays; names without an index are
scalars. An array's elements keep their FMI 2.0 names (:func:`element_names`: ``E.r[2]``, ``dynamics.M[1,2]``,
``der(state[3])``), so results of both versions read alike.

Value references: an array takes the value reference of its first element (the FMI 2.0 FMU's numbering: one
numbering for both versions; FMU states cross between them), the other elements' value references are not FMI 3.0
variables. The sizes are constant: the continuous state vector keeps the size of the largest option combination
the FMU carries (its size depends on Choice options too, which FMI 3.0 cannot make structural: a ``<Dimension>``
names a UInt64 structural parameter), as in the FMI 2.0 FMU.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:                      # (the naming rule imports nothing else: FMU hosts in tests use it)
    from .interface import Interface

_INDEXED = re.compile(r"^(?P<base>.+?)\[(?P<index>\d+(?:,\d+)*)\](?P<tail>\)?)$")


@dataclass(frozen=True)
class Variable3:
    """One FMI 3.0 variable: its name, value reference (its first element's), shape (``()``: a scalar) and the
    interface table's variables that are its elements (value references, row-major)."""
    name: str
    vr: int
    shape: tuple
    elements: tuple
    description: str

    @property
    def size(self) -> int:
        return len(self.elements)


def _same_kind(itf: Interface, vrs: list) -> bool:
    first = itf.vars[vrs[0]]

    def key(v):
        return (v.type, v.causality, v.variability, v.unit, v.min, v.max, v.items, v.initial, v.source[0])
    return all(key(itf.vars[vr]) == key(first) for vr in vrs)


def fmi3_variables(itf: Interface) -> list:
    """The FMI 3.0 variables of ``itf`` (Variable3) in the order of their value references (:mod:`the rule
    <fmu_mb.fmi.arrays3>`)."""
    groups: dict = {}
    for vr, v in enumerate(itf.vars):
        m = _INDEXED.match(v.name)
        if m:
            key = m["base"] + m["tail"]
            groups.setdefault(key, []).append((tuple(int(i) for i in m["index"].split(",")), vr))
    arrays = {}
    for key, items in groups.items():
        ranks = {len(i) for i, _ in items}
        if len(ranks) != 1:
            continue
        shape = tuple(max(i[d] for i, _ in items) for d in range(ranks.pop()))
        count = 1
        for n in shape:
            count *= n
        by_index = dict(items)
        if len(items) < 2 or len(by_index) != len(items) or count != len(items):
            continue                                               # not the whole box 1..n (x 1..m)
        vrs = [vr for _, vr in sorted(items)]                      # row-major
        if not _same_kind(itf, vrs):
            continue
        name = key[:-1] + ")" if key.endswith(")") else key
        arrays[min(vrs)] = Variable3(name, min(vrs), shape, tuple(vrs),
                                     description(itf.vars[vrs[0]], [itf.vars[vr].description for vr in vrs]))
    inside = {vr for a in arrays.values() for vr in a.elements}
    out = []
    for vr, v in enumerate(itf.vars):
        if vr in arrays:
            out.append(arrays[vr])
        elif vr not in inside:
            out.append(Variable3(v.name, vr, (), (vr,), v.description))
    return out


#: descriptions of arrays whose elements' descriptions do not list well (by the interface source of their elements)
WHOLE = {
    "state": "continuous states (Model Exchange): element k holds element k of the state x of the option combination "
             "in force (coordinates, rates, friction states), the last three its energy counters; elements a smaller "
             "combination does not use read 0 (each element's meaning in the default options: "
             "documentation/interface.md, state[k])",
    "state_der": "time derivatives of the continuous states (state)",
}


def description(first, texts: list) -> str:
    """The description of an array with element descriptions ``texts`` (``first``: its first element)."""
    if first.source[0] in WHOLE:
        return WHOLE[first.source[0]]
    if first.source[0] == "point_R":
        return first.description.split(", row 1, column 1")[0] + " (3 × 3, row-major)"
    return array_description(texts)


def element_names(name: str, shape: tuple) -> list:
    """The names of the elements of FMI 3.0 array ``name`` of ``shape``, row-major: the FMI 2.0 FMU's names
    (``E.r`` (3,): ``E.r[1]`` …; ``dynamics.M`` (2, 2): ``dynamics.M[1,1]``, ``dynamics.M[1,2]`` …;
    ``der(state)``: ``der(state[1])`` …); ``[name]`` for a scalar."""
    if not shape:
        return [name]
    der = name.startswith("der(") and name.endswith(")")
    base = name[4:-1] if der else name
    out = []
    for index in itertools.product(*(range(1, n + 1) for n in shape)):
        element = f"{base}[{','.join(map(str, index))}]"
        out.append(f"der({element})" if der else element)
    return out


def array_description(texts: list) -> str:
    """One description for an array from its elements' (they differ in an axis or an index): the words they all
    start and end with, the differing words between listed in parentheses — "position of point E, world (x, y,
    z)"; where those differ in more than two words, the first element's description and a pointer to the
    others."""
    if len(set(texts)) == 1:
        return texts[0]
    words = [t.split(" ") for t in texts]
    shortest = min(map(len, words))
    a = 0
    while a < shortest - 1 and all(w[a] == words[0][a] for w in words):
        a += 1
    b = 0
    while b < shortest - a - 1 and all(w[len(w) - 1 - b] == words[0][len(words[0]) - 1 - b] for w in words):
        b += 1
    middles = [w[a:len(w) - b] for w in words]
    if max(map(len, middles)) > 2:
        return f"element 1: {texts[0]} (every element: documentation/interface.md)"
    return " ".join(words[0][:a] + [f"({', '.join(' '.join(m) for m in middles)})"] +
                    (words[0][len(words[0]) - b:] if b else []))


def flat_result(result):
    """An FMPy result (a structured NumPy array) with each array column of an FMI 3.0 FMU split into a column per
    element named as :func:`element_names` (FMI 2.0's names); a result without arrays as it is."""
    import numpy as np
    fields = [(n, result.dtype[n]) for n in result.dtype.names]
    if not any(dt.shape for _, dt in fields):
        return result
    names, dtypes, columns = [], [], []
    for n, dt in fields:
        column = result[n]
        if dt.shape:
            flat = column.reshape(len(result), -1)
            for k, element in enumerate(element_names(n, dt.shape)):
                names.append(element)
                dtypes.append(dt.base)
                columns.append(flat[:, k])
        else:
            names.append(n)
            dtypes.append(dt)
            columns.append(column)
    out = np.empty(len(result), dtype=list(zip(names, dtypes)))
    for n, c in zip(names, columns):
        out[n] = c
    return out


def arrays_markdown(itf: "Interface") -> str:
    """The FMI 3.0 arrays of ``itf`` as a Markdown section for an FMI 3.0 FMU's documentation/interface.md (whose
    table lists every element by its FMI 2.0 name and value reference)."""
    arrays = [w for w in fmi3_variables(itf) if w.shape]
    lines = ["", "## FMI 3.0 arrays", "",
             f"In FMI 3.0 the {len(arrays)} vector quantities below are arrays (fmu_mb.fmi.arrays3): one variable at "
             "the value reference of its first element, its values its elements' in the order given (row-major). "
             "The value references of the other elements are no FMI 3.0 variables; every variable not listed is "
             "a scalar of the name and value reference in the table above.", "",
             "| value reference | array | dimensions | elements |", "|---:|---|---|---|"]
    for w in arrays:
        names = [itf.vars[e].name for e in w.elements]
        shown = ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]}, …, {names[-1]}"
        lines.append(f"| {w.vr} | `{w.name}` | {' × '.join(map(str, w.shape))} | {shown} |")
    return "\n".join(lines) + "\n"
