"""The seams between the layers: the Model/Data schema, the output catalogue, the Simulator's
state, the codes, and the import structure (models → compiled arrays → kernels → simulator →
FMI, one way)."""
from __future__ import annotations

import ast
import zipfile
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from fmu_mb import codes, registry
from fmu_mb.model.compile import compile_mechanism
from fmu_mb.model.compiled import (DATA_SCHEMA, MODEL_SCHEMA, RUN_FIELDS, Data, Model, make_data, shape_of, sizes)
from fmu_mb.outputs import BY_KEY, CATALOGUE, expand, spec_row
from fmu_mb.simulator import Simulator

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fmu_mb"
MODELS = registry.available()


# ----------------------------------------------------------------------------- schema
@pytest.mark.parametrize("name", MODELS)
def test_model_and_data_follow_the_schema(name):
    """Every Model array has the schema's dtype and shape (compile checks it) and is read-only;
    make_data allocates every Data field with the schema's shape, run settings copied."""
    cm = compile_mechanism(registry.build(name))
    m, n = cm.model, sizes(cm.model)
    assert Model._fields == tuple(f.name for f in MODEL_SCHEMA)
    assert Data._fields == tuple(f.name for f in DATA_SCHEMA)
    for f in MODEL_SCHEMA:
        v = getattr(m, f.name)
        if f.dtype == "int":
            assert isinstance(v, int), f.name
        else:
            assert v.shape == shape_of(f, n) and not v.flags.writeable, f.name
    d = make_data(m)
    for f in DATA_SCHEMA:
        v = getattr(d, f.name)
        assert v.shape == shape_of(f, n) and v.dtype == {"f8": np.float64, "i8": np.int64}[f.dtype], f.name
        assert v.flags.writeable and v.flags.c_contiguous, f.name
    assert np.array_equal(d.solver_opt, m.con_opt) and np.array_equal(d.traj_par, m.seg_par)
    assert not np.shares_memory(d.solver_opt, m.con_opt)
    with pytest.raises(ValueError, match="read-only"):
        m.body_mass[0] = 1.0


def test_a_run_leaves_the_model_unchanged():
    """Trajectory inputs, solver options, anchoring and stepping write Data only (RUN_FIELDS):
    two simulators of one compiled mechanism do not see each other's settings."""
    cm = compile_mechanism(registry.build("crane"))
    before = {f: np.array(getattr(cm.model, f), copy=True) for f in cm.model._fields}
    a = Simulator(cm, h=1e-4, alpha=7.0)
    b = Simulator(cm, h=1e-4)
    a.set_trajectory("lift", delta=0.5)
    a.step(0.01)
    for f, v in before.items():
        assert np.array_equal(np.asarray(getattr(cm.model, f)), v), f
    assert a.data.solver_opt[codes.SolverOption.ALPHA] == 7.0
    assert b.data.solver_opt[codes.SolverOption.ALPHA] == cm.model.con_opt[codes.SolverOption.ALPHA] != 7.0
    assert not np.array_equal(a.data.traj_par, b.data.traj_par)
    assert set(RUN_FIELDS) <= set(Data._fields)


# ----------------------------------------------------------------------------- catalogue
def test_catalogue_covers_every_output_kind():
    """Every kernel output kind has a catalogue entry, each with a type, a unit rule or none, a
    description and a resolver; keys are unique."""
    kinds = {o.kind for o in CATALOGUE}
    assert kinds == set(codes.OutputKind)
    assert len(BY_KEY) == len(CATALOGUE)
    for o in CATALOGUE:
        assert o.type in ("Real", "Integer", "Boolean") and o.description and callable(o.resolve), o.key
        assert (o.unit is None) == (o.type != "Real"), o.key


@pytest.mark.parametrize("name", MODELS)
def test_kernel_fills_every_catalogue_output(name):
    """fill_outputs answers every source of the mechanism's expansion with a finite value (an
    unknown kind would read NaN), and an unknown source is refused, not mapped to something."""
    from fmu_mb.fmi.interface import constraint_union
    module = registry.load(name)
    cm = compile_mechanism(module.build())
    sim = Simulator(cm, h=1e-4)
    sim.step(1e-3)
    sim.evaluate()
    cons, _ = constraint_union(module)
    sources = [v.source for v in expand(cm, cons, any(c.group == "programmed" for c in cons))]
    vals = sim.read(sources)
    assert np.all(np.isfinite(vals)), [s for s, v in zip(sources, vals) if not np.isfinite(v)]
    with pytest.raises(KeyError):
        spec_row(cm, ("no_such_output", None, 0))


def test_fmu_outputs_are_the_catalogue_expansion(fmus):
    """The outputs of every built FMU's modelDescription are, in order, with type and unit, the
    catalogue's expansion of its default mechanism."""
    from fmu_mb.fmi.interface import build_interface
    for name in MODELS:
        with zipfile.ZipFile(fmus[name].path) as z:
            root = etree.fromstring(z.read("modelDescription.xml"))
        xml = [(v.get("name"), v[0].tag, v[0].get("unit")) for v in root.iter("ScalarVariable")
               if v.get("causality") == "output"]
        module = registry.load(name)
        cm = compile_mechanism(module.build())
        itf = build_interface(name, module, cm)
        from fmu_mb.fmi.interface import constraint_union
        cspecs, _ = constraint_union(module)
        expanded = [(o.name, o.type, o.unit) for o in expand(cm, cspecs, any(c.group == "programmed" for c in cspecs))]
        assert xml == expanded, name
        assert [v.name for v in itf.vars if v.causality == "output"] == [e[0] for e in expanded]


def test_crane_support_forces_balance_its_weight():
    """Paper 001's eight linearized supports (eqs. 3-4) report their forces: at the static start of
    the torque-driven crane (no programmed constraint carries load, the joints held by their
    drives), the supports carry the whole weight — Σf = −m·g and Σ r×f = −Σ m_i r_i×g (Newton-Euler
    of the mechanism at rest, independent of the support model's code)."""
    module = registry.load("crane")
    cm = compile_mechanism(module.build(mode="torque"))
    sim = Simulator(cm, h=1e-4)
    sim.initialize(static=True)
    f = sim.support_forces()
    assert f.shape == (8, 3)
    sim.k.forward_kinematics(sim._m, sim._d, sim.q, sim.qd)
    d, m = sim.data, cm.model
    g = np.array(m.gravity)
    mass = m.body_mass.sum()
    com = np.array([d.op[i] + d.oR[i] @ m.body_com[i] for i in range(m.nbody)])
    W = mass * g
    assert np.allclose(f.sum(0), -W, rtol=0, atol=1e-9 * np.abs(W).max())
    base = cm.joint("base")
    pts = np.array([d.op[base.body] + d.oR[base.body] @ np.asarray(s.point, float) for s in cm.mechanism.supports])
    moment = np.cross(pts, f).sum(0) + sum(np.cross(com[i], m.body_mass[i] * g) for i in range(m.nbody))
    # the linearized supports keep their reference lever arms (U at q_b = 0), so the moment balance
    # holds to first order only: |ΣM| ≤ W·(|δ| + L·|θ|) for the base displacement δ and rotation θ
    # (measured: 0.255 N·m = W·δ_y); a misplaced or mis-signed support force would leave O(W·L) = 2e4 N·m
    qb = sim.q[base.dofadr:base.dofadr + 6]
    L = max(np.linalg.norm(s.point) for s in cm.mechanism.supports)
    bound = np.abs(W).max() * (np.linalg.norm(qb[:3]) + L * np.linalg.norm(qb[3:]))
    assert 0 < bound < 1e-3 * np.abs(W).max() * L
    assert np.abs(moment).max() <= 1.05 * bound


# ----------------------------------------------------------------------------- simulator state
@pytest.mark.parametrize("name", ["three_loop", "mobile_robot", "five_axis"])
def test_simulator_state_round_trip(name):
    """state_record → steps → restore_record → the same steps again: bit for bit; a bad record is
    refused before anything is written."""
    cm = compile_mechanism(registry.build(name))
    sim = Simulator(cm, h=1e-3)
    sim.step(0.01)
    rec, fails = sim.state_record()
    t = sim.t
    sim.step(0.02)
    x1 = sim.x.copy()
    sim.restore_record(rec, fails, t)
    sim.step(0.02)
    assert np.array_equal(sim.x, x1)
    keep = sim.x.copy()
    for bad, why in ((rec[:-1], "state values"), (np.where(np.arange(rec.size) == 0, np.nan, rec), "nan"),
                     (np.where(np.arange(rec.size) == rec.size - 2, -1.0, rec), "partition count"),
                     (np.concatenate([rec[:-1], [0.5]]), "damped ROS2 steps")):
        with pytest.raises(ValueError, match=why):
            sim.restore_record(bad, fails, t)
        assert np.array_equal(sim.x, keep)
    with pytest.raises(ValueError, match="friction-failure"):
        sim.restore_record(rec, -1, t)


# ----------------------------------------------------------------------------- codes and imports
def _module_constants(path: Path) -> dict:
    out = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign):
            for tgt in node.targets:
                names = [e.id for e in tgt.elts] if isinstance(tgt, ast.Tuple) else \
                    [tgt.id] if isinstance(tgt, ast.Name) else []
                if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "range" or \
                        isinstance(node.value, (ast.Constant, ast.Tuple)) and all(
                            isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool)
                            for e in (node.value.elts if isinstance(node.value, ast.Tuple) else [node.value])):
                    out.update({n: path for n in names if n.isupper()})
    return out


def test_integer_codes_are_defined_once():
    """No module outside fmu_mb/codes.py defines the name of a code, and no name of an integer
    constant is defined in two modules (ELLIPSE was 1 in one module and 4 in another)."""
    code_names = {m.name for e in vars(codes).values() if isinstance(e, type) and issubclass(e, int)
                  and e.__module__ == codes.__name__ for m in e}
    seen = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        if f.name == "codes.py" and f.parent == PACKAGE:
            continue
        for name, path in _module_constants(f).items():
            assert name not in code_names, f"{path}: {name} is a code of fmu_mb.codes"
            assert name not in seen, f"{name} defined in {seen[name]} and {path}"
            seen[name] = path


def _imports(path: Path, package_root: Path) -> set:
    """fmu_mb modules imported anywhere in ``path`` (function bodies included)."""
    rel = path.relative_to(package_root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    pkg = parts if path.name == "__init__.py" else parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("fmu_mb"):
                out.add(mod)
                out.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("fmu_mb"))
    return out


def _module_of(name: str, modules: set) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def test_models_are_descriptions_only():
    """Model files import the description layer only: no kernels, statics or simulator."""
    for f in sorted((ROOT / "models").glob("*.py")):
        bad = [m for m in _imports(f, PACKAGE) if m.split(".")[1:2] and m.split(".")[1] in
               ("kernels", "statics", "simulator", "backend", "algorithms", "fmi", "native", "scenarios")]
        assert not bad, f"{f.name} imports {bad}"


def test_package_has_no_import_cycle():
    """The import graph of fmu_mb's modules (every import, lazy ones included) has no cycle."""
    files = {".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): f
             for f in PACKAGE.rglob("*.py") if "__pycache__" not in f.parts}
    mods = set(files)
    graph = {m: {t for i in _imports(f, PACKAGE) if (t := _module_of(i, mods)) and t != m
                 and not m.startswith(t + ".")} for m, f in files.items()}
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in graph[m]:
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


# ----------------------------------------------------------------------------- interface in the FMU
def test_interface_table_is_written_into_the_fmu(fmus):
    """The builder writes the interface table into the FMU (resources/interface.json), so the slave
    reads it instead of deriving it at every instantiation; the table round-trips exactly and a
    damaged one is refused."""
    from fmu_mb.fmi.interface import INTERFACE_FILE, Interface, build_interface
    for name in MODELS:
        module = registry.load(name)
        itf = build_interface(name, module, compile_mechanism(module.build()),
                              getattr(module, "FMU", {}).get("step_size", 1e-3),
                              getattr(module, "FMU", {}).get("static_start", False),
                              getattr(module, "FMU", {}).get("method", "rk4"))
        with zipfile.ZipFile(fmus[name].path) as z:
            text = z.read(f"resources/{INTERFACE_FILE}").decode()
        loaded = Interface.from_json(text)
        assert loaded == itf and loaded.digest() == itf.digest(), name
    for bad in (text.replace('"unit": "N"', '"unit": "kN"', 1), text[:-20], "{}"):
        with pytest.raises(ValueError, match="interface table"):
            Interface.from_json(bad)
