"""The kernel entry points the simulator calls from Python, with their argument types.

Every entry is ``function(model, data, *args)`` of a kernels module. Both kernel
backends serve exactly this table (fmu_mb.backend): the JIT backend calls the numba
dispatchers, the native backend the same functions compiled ahead of time with these
types (fmu_mb.native.library). Types are numba signature strings; every array is
C-contiguous. Importable without numba.
"""
from __future__ import annotations

import re
from typing import NamedTuple


class Entry(NamedTuple):
    module: str          # fmu_mb.kernels.<module>
    function: str
    args: tuple          # argument types after (model, data)
    result: str


def array_type(t: str):
    """(element code "f8" | "i8" | "c16", number of dimensions) of an array argument type such as "f8[:, ::1]";
    None for a scalar type ("f8", "i8", "b1") and for "datac" (a complex-step Data: its address block)."""
    m = re.fullmatch(r"(f8|i8|c16)\[(.*)\]", t)
    return None if m is None else (m.group(1), len(m.group(2).split(",")))


_X = ("f8[::1]", "f8", "f8[::1]", "f8")                 # x, t, tau_drive, h (internal step)
_GATHER = ("f8[::1]", "f8", "f8[::1]", "f8[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "i8[::1]", "f8[:, ::1]",
           "f8[::1]")                                      # x, t, tau_drive, xdot, vr, kind, a, b, f, vals

ENTRIES = {
    "forward_kinematics": Entry("kinematics", "forward_kinematics", ("f8[::1]", "f8[::1]"), "void"),
    "world_point": Entry("kinematics", "world_point", ("i8", "f8", "f8", "f8"), "UniTuple(f8, 3)"),
    "passive_forces": Entry("forces", "passive_forces", ("f8[::1]", "f8[::1]"), "f8"),
    "support_forces": Entry("forces", "support_forces", ("f8[:, ::1]",), "void"),
    "rnea": Entry("rnea", "rnea", ("f8[::1]", "b1"), "void"),
    "crba": Entry("crba", "crba", (), "void"),
    "energies": Entry("energy", "energies", ("f8[::1]", "f8[::1]", "f8[::1]"), "void"),
    "constraint_terms": Entry("constraints", "constraint_terms", ("f8[::1]", "f8[::1]", "f8"), "void"),
    "anchor_offsets": Entry("constraints", "anchor_offsets", ("f8[::1]", "f8[::1]", "f8"), "void"),
    "project": Entry("projection", "project", ("f8[::1]", "f8", "i8[::1]"), "i8"),
    "state_jacobian": Entry("stability", "jacobian", ("f8[::1]", "f8", "f8[::1]", "f8"), "i8"),
    "rk4_step_limit": Entry("stability", "rk4_step_limit", ("f8[::1]", "f8", "f8[::1]", "f8", "f8[::1]"), "i8"),
    "holding_force": Entry("statics", "holding_force", ("f8[::1]", "f8[::1]"), "void"),
    "static_equilibrium": Entry("statics", "static_equilibrium", ("f8[::1]", "f8", "i8[::1]", "i8[::1]", "i8[::1]",
                                                                  "f8", "i8", "f8", "b1"), "i8"),
    "uniqueness": Entry("uniqueness", "uniqueness", ("i8[::1]", "i8[::1]"), "void"),
    "advance_tree": Entry("stepping", "advance_tree", _X + ("f8", "i8"), "i8"),
    "advance_constrained": Entry("stepping", "advance_constrained", _X + ("f8", "i8"), "i8"),
    "rollback": Entry("stepping", "rollback", ("f8[::1]",), "void"),
    "write_record": Entry("record", "write_record", ("f8[::1]", "f8[::1]"), "void"),
    "read_record": Entry("record", "read_record", ("f8[::1]", "f8[::1]", "f8", "f8", "f8[::1]"), "i8"),
    "gather_outputs_tree": Entry("outputs", "gather_outputs_tree", _GATHER, "void"),
    "gather_outputs_constrained": Entry("outputs", "gather_outputs_constrained", _GATHER, "void"),
    "fill_outputs": Entry("outputs", "fill_outputs", ("f8[::1]",) + _GATHER[4:], "void"),
    "derivative_tree": Entry("outputs", "derivative_tree", _GATHER[:4], "void"),          # x, t, tau_drive, xdot
    "derivative_constrained": Entry("outputs", "derivative_constrained", _GATHER[:4], "void"),
    # fmi2GetDirectionalDerivative: the complex-step Data (compiled.make_data(model, complex_step=True)), then
    # x, t, the direction along time vt, tau, the direction (vx, vtau, vbf), the output table, complex work vectors
    # xc, tc, fc, yc, and dxdot, dy (fmi3GetOutputDerivatives too: vx = ẋ, vt = 1)
    "directional_derivative": Entry("jacobian", "directional_derivative",
                                    ("datac", "f8[::1]", "f8", "f8", "f8[::1]", "f8[::1]", "f8[::1]", "f8[::1]")
                                    + _GATHER[4:9] + ("c16[::1]",) * 4 + ("f8[::1]", "f8[::1]"), "void"),
}
