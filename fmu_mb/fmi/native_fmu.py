"""Native FMUs: the kernel library and a C FMI 2.0 layer in one binary, no Python on the host.

    binaries/linux64/<model>.so, binaries/win64/<model>.dll (an AArch64 FMU: its .so in linux64)
        fmu_mb/fmi/shim/fmi2_native.c (the FMI 2.0 co-simulation layer: state machine, checks,
        logging, FMU states), the generated model table (fmu_mb_model.c: every variable of the
        interface table with its role, range and start; the option combinations carried), the
        arrays-file reader (arrays.c) and the kernel library's object code (fmu_mb.native.library:
        the numba-compiled kernels emitted by LLVM for the target), linked by the system's C
        compiler (mingw-w64 for win64): libc and libm only.
    resources/variants.arrays
        per combination of the model's Choice/Flag options and the Count/Value values built
        (:func:`carried_variants`; every value of a Count option by default, :func:`carry_every_count`)
        the compiled Model and a fresh Data (fmu_mb.native.arrays: one variant per distinct mechanism,
        distinct payloads stored once) plus what the FMU needs at fmi2ExitInitializationMode: the start
        state, the coordinate of every start value and drive, the output table
        (fmu_mb.outputs.spec_table), the static-equilibrium problem of init.static
        (fmu_mb.statics.start_problem; solved at run time by the kernel the Python FMU calls), and the
        slopes of the segment tables in the trajectory inputs.

The modelDescription.xml is the pythonfmu FMU's (same interface table, same GUID: an FMU state of
one kind restores into the other). What stays Python and is therefore fixed at build time, each
refused with a message naming it when set otherwise: the values of Count options not carried (every
value of its range is, unless the combinations would exceed :data:`MAX_VARIANTS` or ``options`` names
the values), the Value options the compiled arrays do not follow linearly (the built values,
``options``: one or several per option, a compiled mechanism per combination; the linear ones take any
value at run time, fmi.native_values), inputs of trajectory classes with their own checks or
with segment tables that are not affine in their parameters (:func:`trajectory_jacobians`; the
built-in paths are affine: their inputs work) unless the class computes its table in a function
numba compiles (fmu_mb.trajectories.TableTrajectory: fmu_mb.native.trajectory_code links it into the
binary, the mobile robot's steering is one).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from .. import registry
from ..codes import GROUP_NAMES, SolverOption, SolverStat
from ..model import options as opt
from ..model.compile import compile_mechanism
from ..model.compiled import state_vector
from ..native import arrays, field_schema
from ..native.library import RUNTIME_C, TARGETS, TOOLS, cached, is_elf
from ..native.trajectory_code import C_PARAMS, TableSet, table_object
from ..outputs import spec_table
from ..sources import this_core_digest

SHIM = Path(__file__).resolve().parent / "shim"
LAYER_C = SHIM / "fmi2_native.c"
NATIVE = Path(__file__).resolve().parents[1] / "native"
ARRAYS_C = NATIVE / "arrays.c"

# variable roles of the model table (fmi2_native.h: enum fmu_mb_role)
ROLES = {("option",): 1, ("solver", "step_size"): 2, ("solver", "integrator"): 3,
         ("solver", "max_steps_per_call"): 4, ("gravity",): 5, ("init", "static"): 6, ("solver", "alpha"): 7,
         ("solver", "beta"): 8, ("solver", "projection"): 9, ("solver", "max_violation"): 10,
         ("init", "assemble"): 11, ("q_start",): 12, ("qd_start",): 13, ("tau_drive",): 20, ("body_force",): 21,
         ("traj",): 22}
ROLE_OUTPUT, ROLE_VIOLATION = 30, 31
TYPES = {"Real": 0, "Integer": 1, "Boolean": 2}
CAUSALITIES = {"parameter": 0, "input": 1, "output": 2}
GROUP_CODES = {g: i for i, g in enumerate(GROUP_NAMES)}


def _role(source) -> int:
    kind = source[0]
    if kind in ("option", "gravity", "q_start", "qd_start", "tau_drive", "body_force", "traj"):
        return ROLES[(kind,)]
    return ROLES[tuple(source[:2])]


# ----------------------------------------------------------------------------- variants
def _option_codes(module, itf, variant: dict) -> list:
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


def _table(traj, values: dict | None = None):
    """(time, par) of a trajectory's segments with some parameters replaced (no validation: a probe)."""
    import copy
    t = copy.deepcopy(traj)
    for k, v in (values or {}).items():
        object.__setattr__(t, k, float(v))
    _, time, par = t.table()
    return time, par


def trajectory_jacobians(traj, rng) -> dict | None:
    """{parameter: (d time, d par)} of a trajectory whose segment table is affine in its parameters and
    whose checks are the base class's (ranges, time order, durations: what the C layer checks), or None
    (its inputs stay fixed in a native FMU). The slopes come from unit steps (exact for the coefficients
    of the built-in paths: 1, 1/2, k) and are verified at random parameter values to 1e-9."""
    from ..trajectories.paths import Trajectory
    if type(traj).validate is not Trajectory.validate:
        return None
    params = traj.parameters()
    base_t, base_p = _table(traj)
    jac = {}
    for name, (v0, _) in params.items():
        t1, p1 = _table(traj, {name: v0 + 1.0})
        jac[name] = (t1 - base_t, p1 - base_p)
    for _ in range(3):
        values = {}
        for name, (v0, par) in params.items():
            span = max(1.0, abs(v0))
            values[name] = rng.uniform(max(par.min, v0 - span), min(par.max, v0 + span))
        try:
            t, p = _table(traj, values)
        except (ValueError, ArithmeticError):
            return None
        pred_t = base_t + sum(jac[n][0] * (values[n] - params[n][0]) for n in params)
        pred_p = base_p + sum(jac[n][1] * (values[n] - params[n][0]) for n in params)
        if t.shape != base_t.shape or not (np.allclose(t, pred_t, rtol=1e-9, atol=1e-9)
                                           and np.allclose(p, pred_p, rtol=1e-9, atol=1e-9)):
            return None
    return jac


def _trajectory_records(itf, cm, tables: TableSet) -> list:
    """Per trajectory input (interface order): its trajectory's index in the Model (-1: absent in this
    option combination, -2: fixed), its value in the Model's tables, the slopes of the whole segment
    table in it (trajectory_jacobians) and its position in its trajectory's parameter vector; per
    trajectory its compiled table function (``tables``; -1: none, the slopes apply). A trajectory
    with a table function (TableTrajectory) has zero slopes; one with neither is fixed."""
    tin = [v for v in itf.vars if v.source[0] == "traj"]
    nseg, width = cm.model.seg_time.shape[0], cm.model.seg_par.shape[1]
    index, slot = np.full(len(tin), -1, np.int64), np.zeros(len(tin), np.int64)
    table = np.full(len(cm.trajectories), -1, np.int64)
    p0 = np.zeros(len(tin))
    jt, jp = np.zeros((len(tin), max(nseg, 1), 2)), np.zeros((len(tin), max(nseg, 1), width))
    rng = np.random.default_rng(13)
    jacs = {}
    inputs_of = {}
    for v in tin:
        inputs_of.setdefault(v.source[1], set()).add(v.source[2])
    for k, traj in enumerate(cm.trajectories):
        t = tables.id_of(traj)
        if t is not None and inputs_of.get(traj.name) == set(traj.PARAMS):
            table[k] = t
            jacs[traj.name] = (k, "table", traj)
        elif getattr(traj, "CHECKS", ()):        # a table function with checks the slopes would skip
            jacs[traj.name] = (k, None, traj)
        else:
            jacs[traj.name] = (k, trajectory_jacobians(traj, rng), traj)
    for j, v in enumerate(tin):
        tname, pname = v.source[1], v.source[2]
        if tname not in jacs:
            continue
        k, jac, traj = jacs[tname]
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


def _defaults(itf) -> dict:
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


def variant_records(module, itf, variant: dict, mech=None, tables: TableSet | None = None) -> tuple[list, dict]:
    """(arrays-file records, facts for the model table) of one option combination (its mechanism
    ``mech`` if built already) at the interface's default parameter values; the order of operations
    is MechanismSlave._build's. The records are a function of the mechanism alone (and of ``tables``,
    the FMU's compiled trajectory tables, numbering the classes they meet)."""
    from ..simulator import Simulator
    from ..statics import START_MAXIT, START_TOL, start_problem
    defaults = _defaults(itf)
    mech = module.build(**variant) if mech is None else mech
    mech.gravity = tuple(defaults[("gravity", k)] for k in range(3))
    cm = compile_mechanism(mech)
    m = cm.model
    solver = {}
    if ("solver", "alpha") in defaults:
        solver = dict(alpha=defaults[("solver", "alpha")], beta=defaults[("solver", "beta")],
                      projection=bool(defaults[("solver", "projection")]))

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

    sim = Simulator(cm, step_size=defaults[("solver", "step_size")], assemble=False, kernels="auto", **solver)
    schema = field_schema()
    model_rec = arrays.schema_records("model", sim.model, schema["model"])
    data_rec = [(n, v.copy() if isinstance(v, np.ndarray) else v)
                for n, v in arrays.schema_records("data", sim.data, schema["data"])]
    # the static start (init.static): the problem Simulator.initialize solves, by the same kernel at run time
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
    ] + _trajectory_records(itf, cm, TableSet() if tables is None else tables)
    facts = {"constraints": {c.name: c for c in cm.constraints}, "cm": cm,
             "traj_index": dict(records)["fmu.traj_index"]}
    return records, facts


# ----------------------------------------------------------------------------- C model table
def c_string(text: str) -> str:
    """A C string literal of ``text`` (UTF-8; every byte outside printable ASCII as an octal escape)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= byte < 127 and ch != "?":
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _num(x) -> str:
    if x is None:
        return "0.0"
    x = float(x)
    if math.isinf(x):
        return "HUGE_VAL" if x > 0 else "-HUGE_VAL"
    return repr(x) if math.isfinite(x) else "NAN"


def model_table_source(itf, guid: str, variant_rows: list, violation_info: dict, options_text: list,
                       fixed_options: list, fixed_inputs: set = frozenset(), arrays_variant=None,
                       table_classes=()) -> str:
    """C source of the model table (shim/fmi2_native.h's declarations) for one FMU. ``fixed_options``: per
    option parameter 0 for a Choice/Flag (every value carried), 1 for a Count/Value built at one value,
    2 for one built at several (the values in the variant rows), 3 for a Value taken at any value (slope
    records, fmi.native_values). ``arrays_variant``: per row its variant of resources/variants.arrays
    (default: its own). ``table_classes``: the TableTrajectory classes of the compiled table functions."""
    lines = ["/* generated by fmu_mb.fmi.native_fmu from the FMU's interface table: do not edit */",
             "#include <math.h>", "#include \"fmi2_native.h\"", "",
             f"const char FMU_MB_MODEL_ID[] = {c_string(itf.model)};",
             f"const char FMU_MB_GUID[] = {c_string(guid)};",
             f"const char FMU_MB_INTERFACE_DIGEST[] = {c_string(itf.digest())};",
             f"const int FMU_MB_NVARS = {len(itf.vars)};",
             "const fmu_mb_var FMU_MB_VARS[] = {"]
    counters: dict = {}
    out_index = 0
    for v in itf.vars:
        if v.causality == "output":
            role = ROLE_VIOLATION if v.source[0] in ("con_violation", "con_violation_angle") else ROLE_OUTPUT
            aux = out_index
            out_index += 1
        else:
            role = _role(v.source)
            key = "start" if role in (12, 13) else role
            aux = v.source[1] if role == 5 else counters.get(key, 0)
            if role != 5:
                counters[key] = aux + 1
        has_range = v.min is not None and v.type != "Boolean"
        start = 0.0 if v.start is None else float(v.start)
        extra = "NULL"
        if role == ROLE_VIOLATION:
            info = violation_info.get(v.source[1])
            extra = c_string(info) if info else "NULL"
        elif v.name in fixed_inputs:
            extra = c_string("fixed")
        elif v.source[0] == "option" and v.items:     # a Choice: its codes as the Python check names them
            extra = c_string(", ".join(f"{i} = {item[0]}" for i, item in enumerate(v.items)))
        lines.append(f"    {{{c_string(v.name)}, {TYPES[v.type]}, {CAUSALITIES[v.causality]}, {role}, {aux}, "
                     f"{_num(start)}, {_num(v.min if has_range else 0)}, {_num(v.max if has_range else 0)}, "
                     f"{int(has_range)}, {c_string(v.unit or '')}, {extra}}},")
    lines.append("};")
    n_opt = sum(1 for v in itf.vars if v.source[0] == "option")
    lines.append(f"const int FMU_MB_NOPTIONS = {n_opt};")
    lines.append("const int FMU_MB_OPTION_FIXED[] = {" + ", ".join(str(int(x)) for x in fixed_options or [0]) + "};")
    lines.append(f"const int FMU_MB_NVARIANTS = {len(variant_rows)};")
    flat = [x for row in variant_rows for x in row] or [0.0]
    lines.append("const double FMU_MB_VARIANT_OPTIONS[] = {" + ", ".join(_num(x) for x in flat) + "};")
    lines.append("const char *const FMU_MB_VARIANT_TEXT[] = {" + ", ".join(c_string(t) for t in options_text) +
                 "};")
    files = list(range(len(variant_rows))) if arrays_variant is None else arrays_variant
    lines.append("const int FMU_MB_VARIANT_FILE[] = {" + ", ".join(str(int(k)) for k in files or [0]) + "};")
    from ..simulator import METHODS
    kern = {"rk4": 0, "ros2": 1, "ros3": 2}
    lines.append("const int FMU_MB_METHOD_KERNEL[] = {" + ", ".join(str(kern[m.kernel]) for m in METHODS.values())
                 + "};")
    lines.append("const double FMU_MB_METHOD_GAMMA[] = {" + ", ".join(_num(m.gamma) for m in METHODS.values())
                 + "};")
    lines.append("const char *const FMU_MB_METHOD_NAME[] = {" + ", ".join(c_string(n) for n in METHODS) + "};")
    lines.append(f"const int FMU_MB_NMETHODS = {len(METHODS)};")
    lines.append(f"const int FMU_MB_SLOT[] = {{{SolverOption.ALPHA}, {SolverOption.BETA}, {SolverOption.PROJECTION},"
                 f" {SolverOption.ROS2_GAMMA}, {SolverStat.PIVOT_RATIO_CHOSEN}, {SolverStat.PIVOT_RATIO},"
                 f" {SolverStat.RANK}, {SolverStat.PROJECTION_RESIDUAL}, {SolverOption.PROJECTION_TOL}}};")
    lines += table_source(table_classes)
    return "\n".join(lines) + "\n"


def table_source(classes) -> list:
    """C lines of the model table declaring the compiled table functions of ``classes`` (in order) and
    their check messages (shim/fmi2_native.h: FMU_MB_TABLE_*), fmu_mb.native.trajectory_code."""
    lines = [f"extern int32_t fmu_mb_table_{i}(int64_t *code, void **exc, {C_PARAMS});" for i in range(len(classes))]
    lines.append(f"const int FMU_MB_NTABLES = {len(classes)};")
    lines.append("const fmu_mb_table_fn FMU_MB_TABLE_FN[] = {"
                 + (", ".join(f"fmu_mb_table_{i}" for i in range(len(classes))) or "NULL") + "};")
    lines.append("const int FMU_MB_TABLE_NPARAMS[] = {"
                 + (", ".join(str(len(c.PARAMS)) for c in classes) or "0") + "};")
    lines.append("const int FMU_MB_TABLE_NCHECKS[] = {"
                 + (", ".join(str(len(c.CHECKS)) for c in classes) or "0") + "};")
    for i, c in enumerate(classes):
        lines.append(f"static const char *const table_checks_{i}[] = {{"
                     + (", ".join(c_string(m) for m in c.CHECKS) or "NULL") + "};")
    lines.append("const char *const *const FMU_MB_TABLE_CHECKS[] = {"
                 + (", ".join(f"table_checks_{i}" for i in range(len(classes))) or "NULL") + "};")
    return lines


def _violation_text(name: str, facts_list) -> str | None:
    """'<group>|<type>|<point name>' of constraint ``name`` for the FMU's violation messages."""
    from .slave import MechanismSlave
    for facts in facts_list:
        info = facts["constraints"].get(name)
        if info is None:
            continue

        class _Probe:              # MechanismSlave._point_name needs only self._sim.cm
            _sim = type("S", (), {"cm": facts["cm"]})
        point = MechanismSlave._point_name(_Probe(), info) or ""
        return f"{info.group}|{info.type}|{point}"
    return None


# ----------------------------------------------------------------------------- linking
def link(target: str, kernels: Path, table_c: Path, dest: Path, extra_objects=()) -> Path:
    """Compile the FMI layer and the model table and link them with the kernel objects (and
    ``extra_objects``: the FMU's compiled trajectory tables) into ``dest``."""
    triple, cc, _ = TARGETS[target]
    if shutil.which(cc) is None:
        raise RuntimeError(f"the {target} binary needs the C compiler {cc} (Debian: {TOOLS[target][1]})")
    cmd = [cc, "-shared", "-O2", "-std=c99", "-Wall", "-Werror", "-o", str(dest), str(LAYER_C), str(table_c),
           str(ARRAYS_C), str(kernels / "fmu_mb_kernels.o"), str(kernels / "fmu_mb_kernels_shim.c"),
           str(RUNTIME_C), *map(str, extra_objects), "-I", str(SHIM), "-I", str(NATIVE), "-I", str(kernels)]
    if is_elf(target):
        vs = dest.with_suffix(".map")
        vs.write_text("{ global: fmi2*; local: *; };\n")
        cmd += ["-fPIC", "-fvisibility=hidden", f"-Wl,--version-script={vs}", "-Wl,-Bsymbolic", "-lm"]
    else:
        cmd += ["-static-libgcc", "-D__USE_MINGW_ANSI_STDIO=1", "-lm"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"linking the native FMU binary for {target} failed:\n{' '.join(cmd)}\n{run.stderr}")
    return dest


def available_targets() -> list:
    """linux64, and win64 where mingw-w64 is installed (linux-aarch64 only when asked for: :data:`FOLDERS`)."""
    return [t for t in ("linux64", "win64") if shutil.which(TARGETS[t][1])]


#: target -> folder under binaries/. FMI 2.0 names no AArch64 platform; importers on AArch64 Linux (FMPy,
#: the FMI Library) load binaries/linux64, so an AArch64 FMU holds its library there, without the x86-64 one
FOLDERS = {"linux64": "linux64", "win64": "win64", "linux-aarch64": "linux64"}


def check_targets(targets) -> list:
    """``targets`` checked: known, and at most one of them in each binaries/ folder (ValueError says why)."""
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise ValueError(f"unknown native targets {unknown} (targets: {', '.join(TARGETS)})")
    if "linux64" in targets and "linux-aarch64" in targets:
        raise ValueError("linux64 and linux-aarch64 cannot share one FMU: FMI 2.0 has no folder for AArch64 and its "
                         "importers load binaries/linux64 there; build the AArch64 FMU on its own "
                         "(--target linux-aarch64 [win64]; fmu-mb build puts it in OUT/native-aarch64/)")
    return list(targets)


class _Baked:
    """A model module whose Count/Value options are fixed at other values: its ``build`` passes them,
    its ``OPTIONS`` declare them as defaults (the FMU's start values), everything else is the module's.
    ``grid``: {option: every value the FMU carries} for options built at several values."""

    def __init__(self, module, values: dict, grid: dict | None = None):
        self._module, self._values, self.grid = module, values, grid or {}
        self.OPTIONS = {k: (replace(o, default=values[k]) if k in values else o)
                        for k, o in getattr(module, "OPTIONS", {}).items()}

    def build(self, **kwargs):
        return self._module.build(**{**self._values, **kwargs})

    def __getattr__(self, name):
        return getattr(self._module, name)


#: more compiled mechanisms than this in one native FMU is refused (size and build time grow with it)
MAX_VARIANTS = 4000


def bake_options(module, model: str, options: dict) -> object:
    """``module`` with the Count/Value ``options`` ({name: value or list of values}) as its defaults
    (checked; ValueError says why): a native FMU carries these values instead of the model file's. An
    option given several values is carried at each of them (the first is the FMU's start value): its
    parameter then takes any of those values at run time."""
    known = getattr(module, "OPTIONS", {})
    values, grid = {}, {}
    for name, given in (options or {}).items():
        o = known.get(name)
        if o is None:
            raise ValueError(f"model '{model}' has no option {name!r} (options: {', '.join(known) or 'none'})")
        if isinstance(o, (opt.Choice, opt.Flag)):
            raise ValueError(f"option {name!r} of '{model}' is a Choice/Flag: a native FMU carries every value, "
                             f"set model.{name} at run time instead")
        listed = list(given) if isinstance(given, (list, tuple)) else [given]
        if not listed:
            raise ValueError(f"option {name!r}: no value given")
        checked = []
        for value in listed:
            if isinstance(o, opt.Count) and float(value) != int(float(value)):
                raise ValueError(f"option {name!r} of '{model}' counts: {value!r} is not a whole number")
            v = o.check(name, int(float(value)) if isinstance(o, opt.Count) else float(value))
            if v in checked:
                raise ValueError(f"option {name!r}: the value {v!r} is given twice")
            checked.append(v)
        values[name] = checked[0]
        if len(checked) > 1:
            grid[name] = checked
    return _Baked(module, values, grid) if values else module


def carry_every_count(module, model: str, log=print) -> object:
    """``module`` carrying every value of each Count option that no value was chosen for (its default
    first), in declaration order as long as the option combinations stay within :data:`MAX_VARIANTS`;
    a Count option that does not fit stays at its default (logged with what to do instead)."""
    from .interface import option_variants
    options = getattr(module, "OPTIONS", {})
    baked = isinstance(module, _Baked)
    grid, values = (dict(module.grid), dict(module._values)) if baked else ({}, {})
    rows = len(option_variants(module)) * math.prod(len(v) for v in grid.values())
    added = {}
    for name, o in options.items():
        if not isinstance(o, opt.Count) or name in values:
            continue
        every = [o.default] + [n for n in range(o.min, o.max + 1) if n != o.default]
        if rows * len(every) > MAX_VARIANTS:
            log(f"model.{name} is carried at {o.default} only: each of its {len(every)} values would make "
                f"{rows * len(every)} option combinations (at most {MAX_VARIANTS}); choose the values to carry "
                f"with --option {name}=a,b,...")
            continue
        rows *= len(every)
        added[name] = every
    if not added:
        return module
    return _Baked(module._module if baked else module, {**values, **{n: v[0] for n, v in added.items()}},
                  {**grid, **added})


def carried_variants(module) -> list:
    """Option dicts of every mechanism a native FMU of ``module`` carries: each combination of the
    Choice/Flag options (fmi.interface.option_variants) at each combination of the values of the
    options built at several values (:func:`bake_options`)."""
    import itertools
    from .interface import option_variants
    grid = getattr(module, "grid", {})
    base = option_variants(module)
    if not grid:
        return base
    defaults = {name: getattr(module, "OPTIONS")[name].default for name in grid}
    out = []
    for combo in itertools.product(*grid.values()):
        extra = {n: v for n, v in zip(grid, combo) if v != defaults[n]}
        out += [{**variant, **extra} for variant in base]
    if len(out) > MAX_VARIANTS:
        raise ValueError(f"{len(out)} option combinations (Choice/Flag combinations x the values of "
                         f"{', '.join(grid)}) exceed the {MAX_VARIANTS} one native FMU carries: give fewer values")
    return out


def _run_time_values(module, itf, variants, all_records, keys, tables, log) -> list:
    """The Value options this FMU takes at any value (fmi.native_values): their slope records appended
    to every combination's records (in place), their names returned; [] when some combination's arrays
    do not follow them linearly. ``keys``: the mechanism key of each combination (a build with moved
    values giving the same mechanism is not compiled again)."""
    from .native_values import candidates, value_slopes
    names = candidates(module)
    if not names:
        return []
    order = [v.source[1] for v in itf.vars if v.source[0] == "option"]
    index = {n: order.index(n) for n in names}

    extra, started = [], time.perf_counter()
    for n, (variant, records, key) in enumerate(zip(variants, all_records, keys)):
        base = dict(records)

        def records_of(moved):
            mech = module.build(**moved)
            if key is not None and mechanism_key(mech) == key:
                return base
            return dict(variant_records(module, itf, moved, mech, tables)[0])
        if n and n % 200 == 0:
            log(f"  linearity of {', '.join(names)}: {n}/{len(variants)} mechanisms "
                f"({time.perf_counter() - started:.0f} s)")
        try:
            slopes = value_slopes(names, module, variant, base, records_of)
        except Exception as exc:                        # the model file fails at a check value: keep them fixed
            log(f"options {', '.join(names)} stay at their built values ({exc})")
            return []
        if slopes is None:
            log(f"options {', '.join(names)} stay at their built values (the compiled arrays of "
                f"{variant or 'the defaults'} are not linear in them)")
            return []
        extra.append(slopes)
    for records, slopes in zip(all_records, extra):     # option numbers of the model table
        for name, values in slopes:
            kind, rest = name.split(".", 1)
            if kind == "slope":
                i, rec = rest.split(".", 1)
                records.append((f"slope.{index[names[int(i)]]}.{rec}", values))
            else:
                i, j, rec = rest.split(".", 2)
                records.append((f"cross.{index[names[int(i)]]}.{index[names[int(j)]]}.{rec}", values))
    return names


def build_native_fmu(model: str, out_dir="dist/native", targets=None, validate: bool = True,
                     enumerations: bool = True, options: dict | None = None, every_count: bool = True,
                     log=print):
    """Build ``<out_dir>/<model>.fmu``, the native FMU of ``models/<model>.py`` (or a model file's
    path), for ``targets`` (default: linux64, and win64 where mingw-w64 is installed; linux-aarch64 in
    place of linux64, :data:`FOLDERS`);
    ``enumerations=False``: named options as Integers (OSP libcosim, as fmi.builder.build_fmu);
    ``options``: values of Count/Value options to carry instead of the model file's defaults
    ({"n_div": 5, "damping": 1.2e-3}, or several: {"n_div": [1, 2, 5]}; these options rebuild the model in
    Python, so a native FMU carries a compiled mechanism per value and takes only those at run time);
    ``every_count``: the Count options not in ``options`` are carried at every value of their range
    (:func:`carry_every_count`; False: at their defaults)."""
    from .builder import VERSION, finish_build
    from .description import fmu_guid, interface_markdown, model_description
    from .interface import build_interface, check_variants
    t0 = time.perf_counter()
    targets = check_targets(targets or available_targets())
    model, model_file = registry.locate(model)
    module = bake_options(registry.load_file(model_file, model), model, options)
    if every_count:
        module = carry_every_count(module, model, log)
    meta = getattr(module, "FMU", {})
    cm = compile_mechanism(registry.build_checked(module, model_file))
    itf = build_interface(model, module, cm, meta.get("step_size", 1e-3), meta.get("static_start", False),
                          meta.get("method", "rk4"))
    problems = check_variants(module, itf)
    if problems:
        raise ValueError(f"{model_file}: its options build mechanisms the FMU interface cannot describe:\n  "
                         + "\n  ".join(problems[:20]))
    variants = carried_variants(module)
    objects = cached(targets, log)
    digest = this_core_digest()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"fmu_mb_native_{model}_") as tmp:
        tmp = Path(tmp)
        # combinations building the same mechanism share its compiled arrays (a rigid jib at every n_div)
        rows, texts, file_of, index, unique = [], [], [], {}, []
        for variant in variants:
            mech = module.build(**variant)
            key = mechanism_key(mech)
            k = index.get(key) if key is not None else None
            if k is None:
                k = len(unique)
                if key is not None:
                    index[key] = k
                unique.append((variant, mech, key))
            file_of.append(k)
            rows.append(_option_codes(module, itf, variant))
            texts.append(", ".join(f"model.{n} = {v}" for n, v in variant.items()) or "the defaults")
        if len(variants) > 100:
            log(f"{model}: {len(variants)} option combinations, {len(unique)} distinct mechanisms")
        all_records, facts_list, tables = [], [], TableSet(log)
        for variant, mech, _ in unique:
            records, facts = variant_records(module, itf, variant, mech, tables)
            all_records.append(records)
            facts_list.append(facts)
        run_time = _run_time_values(module, itf, [u[0] for u in unique], all_records, [u[2] for u in unique],
                                    tables, log)
        pack = arrays.write_variants(tmp / "variants.arrays", all_records, digest)
        violation = {v.source[1]: _violation_text(v.source[1], facts_list) for v in itf.vars
                     if v.source[0] in ("con_violation", "con_violation_angle")}
        guid = fmu_guid(itf)
        table = tmp / "fmu_mb_model.c"
        options = getattr(module, "OPTIONS", {})
        grid = getattr(module, "grid", {})
        fixed = [0 if isinstance(options[v.source[1]], (opt.Choice, opt.Flag)) else 2 if v.source[1] in grid
                 else 3 if v.source[1] in run_time else 1 for v in itf.vars if v.source[0] == "option"]
        tin = [v.name for v in itf.vars if v.source[0] == "traj"]
        fixed_inputs = {tin[j] for facts in facts_list for j in np.flatnonzero(facts["traj_index"] == -2)}
        table.write_text(model_table_source(itf, guid, rows, violation, texts, fixed, fixed_inputs, file_of,
                                            tables.classes))
        binaries = {}
        for target in targets:
            ext = TARGETS[target][2].rsplit(".", 1)[1]
            extra = []
            if tables.irs:
                extra.append(tmp / f"trajectory_tables_{target}.o")
                extra[-1].write_bytes(table_object(tables.irs, target))
            binaries[target] = link(target, objects[target], table, tmp / f"{model}.{ext}", extra)
        description = (module.__doc__ or model).strip().splitlines()[0]
        xml = model_description(itf, description=description, version=VERSION, tool=f"fmu_mb {VERSION} (native)",
                                stop_time=meta.get("stop_time", 10.0), comm_step=meta.get("step_size", 1e-3),
                                enumerations=enumerations)
        doc = interface_markdown(itf, f"{model}.fmu (native) — interface")
        fmu = out_dir / f"{model}.fmu"
        part = out_dir / f".{model}.fmu.part"
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("modelDescription.xml", xml)
            for target, path in binaries.items():
                z.write(path, f"binaries/{FOLDERS[target]}/{path.name}")
            z.write(pack, "resources/variants.arrays")
            z.writestr("resources/variants.json", json.dumps(
                {"core_digest": digest, "variants": texts, "arrays_variant": file_of,
                 "carried_values": {f"model.{n}": v for n, v in grid.items()},
                 "run_time_values": [f"model.{n}" for n in run_time]}, indent=1))
            z.writestr("documentation/interface.md", doc)
        os.replace(part, fmu)
    return finish_build(fmu, doc, len(itf.vars), t0, validate)
