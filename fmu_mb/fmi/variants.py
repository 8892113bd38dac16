"""The compiled arrays of one combination of model options, as both FMU kinds hand them to the FMU core.

:func:`variant_records` is the one place a mechanism becomes what the core runs (fmu_mb/fmi/c/mechanism.c
reads these records): the Model and a fresh Data (fmu_mb.native.field_schema order), the start state, the
coordinate of every start value and drive, the output table (fmu_mb.outputs.spec_table), the static problem
of init.static (fmu_mb.statics.start_problem) and the trajectory inputs. A native FMU computes it at build
time for every combination it carries (fmu_mb.fmi.native_fmu, resources/variants.arrays); a Python FMU's
slave computes it at run time for the options in force (fmu_mb.fmi.slave). Gravity, start values and
solver settings are parameters the core applies itself, so the records depend on the model options only.

Trajectory inputs (:func:`trajectory_records`): a native FMU stores the slopes of each affine segment table
(:func:`trajectory_jacobians`) or names a compiled table function (TableTrajectory); a Python FMU names its
own function for every trajectory with inputs, which computes the table in Python (tables ``"python"``).

Importable without numba.
"""
from __future__ import annotations

import copy

import numpy as np

from ..codes import GROUP_NAMES
from ..model import options as opt
from ..model.compile import compile_mechanism
from ..model.compiled import make_data, state_vector
from ..native import arrays, field_schema
from ..outputs import spec_table

#: a Python FMU computes every trajectory table in Python (variant_records' ``tables``)
PYTHON_TABLES = "python"


def option_codes(module, itf, variant: dict) -> list:
    """The values of the option parameters (in value-reference order) that select ``variant``."""
    options = getattr(module, "OPTIONS", {})
    out = []
    for v in itf.vars:
        if v.source[0] != "option":
            continue
        o = options[v.source[1]]
        val = variant.get(v.source[1], o.default)
        out.append(float(o.values.index(val)) if isinstance(o, opt.Choice) else float(val))
    return out


def probe_table(traj, values: dict | None = None):
    """(time, par) of a trajectory's segments with some parameters replaced (no validation: a probe)."""
    t = copy.deepcopy(traj)
    for k, v in (values or {}).items():
        object.__setattr__(t, k, float(v))
    _, time, par = t.table()
    return time, par


def trajectory_jacobians(traj, rng) -> dict | None:
    """{parameter: (d time, d par)} of a trajectory whose segment table is affine in its parameters and
    whose checks are the base class's (ranges, time order, durations: what the core checks), or None
    (its inputs stay fixed in a native FMU). The slopes come from unit steps (exact for the coefficients
    of the built-in paths: 1, 1/2, k) and are verified at random parameter values to 1e-9."""
    from ..trajectories.paths import Trajectory
    if type(traj).validate is not Trajectory.validate:
        return None
    params = traj.parameters()
    base_t, base_p = probe_table(traj)
    jac = {}
    for name, (v0, _) in params.items():
        t1, p1 = probe_table(traj, {name: v0 + 1.0})
        jac[name] = (t1 - base_t, p1 - base_p)
    for _ in range(3):
        values = {}
        for name, (v0, par) in params.items():
            span = max(1.0, abs(v0))
            values[name] = rng.uniform(max(par.min, v0 - span), min(par.max, v0 + span))
        try:
            t, p = probe_table(traj, values)
        except (ValueError, ArithmeticError):
            return None
        pred_t = base_t + sum(jac[n][0] * (values[n] - params[n][0]) for n in params)
        pred_p = base_p + sum(jac[n][1] * (values[n] - params[n][0]) for n in params)
        if t.shape != base_t.shape or not (np.allclose(t, pred_t, rtol=1e-9, atol=1e-9)
                                           and np.allclose(p, pred_p, rtol=1e-9, atol=1e-9)):
            return None
    return jac


def trajectory_records(itf, cm, tables) -> list:
    """Per trajectory input (interface order): its trajectory's index in the Model (-1: absent in this
    option combination, -2: fixed), its value in the Model's tables, the slopes of the whole segment
    table in it and its position in its trajectory's parameter vector; per trajectory its table function
    (-1: none, the slopes apply). ``tables``: a native FMU's fmu_mb.native.trajectory_code.TableSet (a
    TableTrajectory's compiled function; an affine path's slopes; anything else fixed), or
    :data:`PYTHON_TABLES` (function k: the Python FMU's table of trajectory k)."""
    tin = [v for v in itf.vars if v.source[0] == "traj"]
    nseg, width = cm.model.seg_time.shape[0], cm.model.seg_par.shape[1]
    index, slot = np.full(len(tin), -1, np.int64), np.zeros(len(tin), np.int64)
    table = np.full(len(cm.trajectories), -1, np.int64)
    p0 = np.zeros(len(tin))
    jt, jp = np.zeros((len(tin), max(nseg, 1), 2)), np.zeros((len(tin), max(nseg, 1), width))
    rng = np.random.default_rng(13)
    how = {}
    inputs_of = {}
    for v in tin:
        inputs_of.setdefault(v.source[1], set()).add(v.source[2])
    for k, traj in enumerate(cm.trajectories):
        if tables == PYTHON_TABLES:
            if traj.name in inputs_of:
                table[k] = k
            how[traj.name] = (k, "table", traj)
            continue
        t = tables.id_of(traj)
        if t is not None and inputs_of.get(traj.name) == set(traj.PARAMS):
            table[k] = t
            how[traj.name] = (k, "table", traj)
        elif getattr(traj, "CHECKS", ()):        # a table function with checks the slopes would skip
            how[traj.name] = (k, None, traj)
        else:
            how[traj.name] = (k, trajectory_jacobians(traj, rng), traj)
    for j, v in enumerate(tin):
        tname, pname = v.source[1], v.source[2]
        if tname not in how:
            continue
        k, jac, traj = how[tname]
        if jac is None:
            index[j] = -2
            continue
        index[j] = k
        p0[j] = float(getattr(traj, pname))
        if jac == "table":
            slot[j] = list(traj.PARAMS).index(pname)
            continue
        f, n = int(cm.model.traj_first[k]), int(cm.model.traj_count[k])
        jt[j, f:f + n], jp[j, f:f + n] = jac[pname]
    return [("fmu.traj_index", index), ("fmu.traj_p0", p0), ("fmu.traj_jt", jt), ("fmu.traj_jp", jp),
            ("fmu.traj_table", table), ("fmu.traj_slot", slot)]


def defaults(itf) -> dict:
    """{source: start value} of the interface's parameters."""
    return {tuple(v.source): float(v.start) for v in itf.vars if v.causality == "parameter"}


def mechanism_key(mech) -> bytes | None:
    """A digest equal for equal mechanism descriptions (their pickles), or None where the description
    does not pickle (a class of a model file loaded by path): then it is compiled on its own."""
    import hashlib
    import pickle
    try:
        return hashlib.sha256(pickle.dumps(mech, protocol=5)).digest()
    except Exception:                                    # noqa: BLE001 - any unpicklable part
        return None


def variant_records(module, itf, variant: dict, mech=None, tables=PYTHON_TABLES, cm=None) -> tuple[list, object]:
    """(records, compiled mechanism) of one combination of model options (``variant``; its mechanism
    ``mech`` if built already, or its compiled mechanism ``cm``) at the interface's default gravity (the core
    sets the parameters' own). ``tables``: see :func:`trajectory_records`. KeyError names a joint, point or
    force of the interface the mechanism lacks; ValueError comes from compiling it."""
    from ..statics import START_MAXIT, START_TOL, start_problem
    params = defaults(itf)
    gravity = tuple(params[("gravity", k)] for k in range(3))
    if cm is None or tuple(map(float, cm.mechanism.gravity)) != gravity:
        mech = module.build(**variant) if mech is None else mech
        mech.gravity = gravity
        cm = compile_mechanism(mech)
    m = cm.model

    def dof(joint, k=0):
        try:
            j = cm.joint(joint)
        except KeyError:
            return -1
        return j.dofadr + k if k < j.ndof else -1

    start = [v for v in itf.vars if v.source[0] in ("q_start", "qd_start")]
    start_dof = np.array([dof(*v.source[1:]) for v in start], np.int64)
    q0, qd0 = np.array(cm.q0), np.array(cm.qd0)
    for v, d in zip(start, start_dof):
        if d >= 0:
            (q0 if v.source[0] == "q_start" else qd0)[d] = float(v.start)
    fnames = [f.name for f in cm.mechanism.forces]
    drive_dof = np.array([dof(*v.source[1:]) for v in itf.vars if v.source[0] == "tau_drive"], np.int64)
    force_idx = np.array([fnames.index(v.source[1]) for v in itf.vars if v.source[0] == "body_force"], np.int64)
    outputs = itf.of("output")
    kind, a, b, f = spec_table(cm, [itf.vars[i].source for i in outputs])
    data = make_data(m)
    schema = field_schema()
    model_rec = arrays.schema_records("model", m, schema["model"])
    data_rec = arrays.schema_records("data", data, schema["data"])
    ms = cm.mechanism.solver
    problem = start_problem(cm)
    mask = np.array([int(g in ms.assemble) for g in GROUP_NAMES], np.int64)
    records = model_rec + data_rec + [
        ("fmu.x0", state_vector(m, q0, qd0)),
        ("fmu.start_dof", start_dof), ("fmu.drive_dof", drive_dof), ("fmu.force_idx", force_idx),
        ("fmu.out_vr", np.array(outputs, np.int64)), ("fmu.out_kind", kind), ("fmu.out_a", a), ("fmu.out_b", b),
        ("fmu.out_f", np.ascontiguousarray(f, float)),
        ("fmu.static_free", problem.free), ("fmu.static_rows", problem.rows), ("fmu.static_zero", problem.held_zero),
        ("fmu.static_opts", np.array([float(problem.relative), problem.rel_step, START_TOL, START_MAXIT], float)),
        ("fmu.assemble_mask", mask),
        ("fmu.flags", np.array([int(bool(ms.assemble) and m.nc > 0), int(bool(np.any(m.con_rel))),
                                int(problem.relative), int(m.nc > 0)], np.int64)),
    ] + trajectory_records(itf, cm, tables)
    return records, cm


def point_name(cm, constraint) -> str | None:
    """The named point a point constraint acts on (for messages), if there is one."""
    c = constraint.constraint
    point, link = getattr(c, "point", None), getattr(c, "link", None)
    if point is None or link not in cm.link_body:
        return None
    for pname, (body, pos) in cm.points.items():
        if body == cm.link_body[link] and np.allclose(pos, point, rtol=0, atol=1e-12):
            return pname
    return None


def violation_text(name: str, mechanisms) -> str | None:
    """'<group>|<type>|<point name>' of constraint ``name`` (the first of ``mechanisms`` that has it), for
    the core's violation messages."""
    for cm in mechanisms:
        for c in cm.constraints:
            if c.name == name:
                return f"{c.group}|{c.type}|{point_name(cm, c) or ''}"
    return None
