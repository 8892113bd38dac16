"""The FMI 3.0 arrays' rule (fmu_mb.fmi.arrays3) on hand-made interface tables: which indexed FMI 2.0 variables
become one array, in which order, and which stay scalars; the names of the elements; an FMPy result split into
element columns. (Through real FMUs: tests/fmi/test_fmi3.py.)"""
from __future__ import annotations

import numpy as np

from fmu_mb.fmi.arrays3 import array_description, element_names, fmi3_variables, flat_result
from fmu_mb.fmi.interface import Interface, Var


def _itf(*specs):
    itf = Interface("m")
    for name, unit, *rest in specs:
        source = rest[0] if rest else ("out", name)
        itf.add(Var(name, "Real", "output", "continuous", f"{name} of something", source, unit=unit))
    return itf


def _shapes(itf):
    return {w.name: (w.vr, w.shape, w.elements) for w in fmi3_variables(itf)}


def test_a_vector_of_one_unit_is_an_array_at_its_first_element():
    # S13.q and S13.qd interleaved, as a spherical joint's coordinates and rates are in the interface table
    itf = _itf(("t", "s"), ("S13.q[1]", "rad"), ("S13.qd[1]", "rad/s"), ("S13.q[2]", "rad"), ("S13.qd[2]", "rad/s"),
               ("S13.q[3]", "rad"), ("S13.qd[3]", "rad/s"), ("E.r[1]", "m"), ("E.r[2]", "m"), ("E.r[3]", "m"))
    got = _shapes(itf)
    assert got == {"t": (0, (), (0,)), "S13.q": (1, (3,), (1, 3, 5)), "S13.qd": (2, (3,), (2, 4, 6)),
                   "E.r": (7, (3,), (7, 8, 9))}
    assert [w.vr for w in fmi3_variables(itf)] == [0, 1, 2, 7]           # in value-reference order


def test_mixed_units_gaps_and_single_elements_stay_scalars():
    itf = _itf(("base.q[1]", "m"), ("base.q[2]", "rad"),          # a free joint: metres and radians
               ("x[1]", "m"), ("x[3]", "m"),                      # not the whole box 1..n
               ("y[1]", "m"),                                     # one element
               ("z[1]", "m"), ("z[2,1]", "m"))                    # ranks differ
    assert all(w.shape == () for w in fmi3_variables(itf))
    assert [w.name for w in fmi3_variables(itf)] == [v.name for v in itf.vars]


def test_a_matrix_is_row_major_and_state_derivatives_are_one_array():
    itf = _itf(("M[2,1]", "kg"), ("M[1,1]", "kg"), ("M[1,2]", "kg"), ("M[2,2]", "kg"),
               ("state[1]", None, ("state", 0)), ("state[2]", None, ("state", 1)),
               ("der(state[1])", None, ("state_der", 0)), ("der(state[2])", None, ("state_der", 1)))
    got = _shapes(itf)
    assert got["M"] == (0, (2, 2), (1, 2, 0, 3))                  # [1,1], [1,2], [2,1], [2,2]
    assert got["state"] == (4, (2,), (4, 5)) and got["der(state)"] == (6, (2,), (6, 7))
    assert element_names("M", (2, 2)) == ["M[1,1]", "M[1,2]", "M[2,1]", "M[2,2]"]
    assert element_names("der(state)", (2,)) == ["der(state[1])", "der(state[2])"]
    assert element_names("E.r", ()) == ["E.r"]


def test_different_ranges_keep_scalars():
    itf = _itf(("g[1]", "m/s2"), ("g[2]", "m/s2"))
    itf.vars[1].min, itf.vars[1].max = -1.0, 1.0
    assert [w.shape for w in fmi3_variables(itf)] == [(), ()]


def test_descriptions_list_what_differs():
    assert array_description(["position of point E, world x", "position of point E, world y",
                              "position of point E, world z"]) == "position of point E, world (x, y, z)"
    assert array_description(["a", "a"]) == "a"
    long = array_description(["state 1: the jib's angle in the default options", "state 2: the arm's rate of turn"])
    assert long.startswith("element 1: state 1: the jib's angle") and "interface.md" in long


def test_an_fmpy_result_splits_into_element_columns():
    r = np.zeros(2, dtype=[("time", float), ("E.r", float, (3,)), ("M", float, (2, 2)), ("ok", bool)])
    r["E.r"][1] = [1.0, 2.0, 3.0]
    r["M"][1] = [[1.0, 2.0], [3.0, 4.0]]
    f = flat_result(r)
    assert f.dtype.names == ("time", "E.r[1]", "E.r[2]", "E.r[3]", "M[1,1]", "M[1,2]", "M[2,1]", "M[2,2]", "ok")
    assert list(f[1])[1:8] == [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0] and f.dtype["ok"] == bool
    plain = np.zeros(1, dtype=[("time", float), ("q", float)])
    assert flat_result(plain) is plain


def test_every_array_has_a_description():
    itf = _itf(("E.r[1]", "m"), ("E.r[2]", "m"), ("R[1]", "1", ("point_R", "E", 0)), ("R[2]", "1", ("point_R", "E", 1)))
    itf.vars[2].description = "orientation of the link of point E: rotation matrix world ← link frame, row 1, column 1"
    got = {w.name: w.description for w in fmi3_variables(itf)}
    assert got == {"E.r": "(E.r[1], E.r[2]) of something",
                   "R": "orientation of the link of point E: rotation matrix world ← link frame (3 × 3, row-major)"}
