"""The FMU interface table of a mechanism: every variable, in value-reference order.

One table drives both the runtime slave (what each value reference reads or
writes) and the generated modelDescription.xml, so the two cannot disagree.
Order (= value references, stable between builds of the same model):

1. parameters — model options (``model.<option>``), ``solver.*`` (with constraints also
   the Baumgarte ``solver.alpha``/``solver.beta`` and ``solver.projection``),
   ``gravity[1..3]``, ``init.static``, ``init.assemble``, initial joint coordinates
   ``<joint>.q_start`` / ``qd_start``;
2. inputs — driving torques/forces ``<joint>.tau_drive`` of actuated joints, and the
   programmed-trajectory parameters ``<trajectory>.<parameter>`` (e.g. ``lift.delta``,
   ``ellipse.a``, ``rectangle.width``);
3. outputs — ``<joint>.q``, ``<joint>.qd`` (every joint, the free base's six
   coordinates included), reactions ``<joint>.F[1..3]``, ``<joint>.M[1..3]`` (joint
   frame), ``<joint>.F_normal``, ``<joint>.friction_load``, ``<joint>.tau_friction``,
   with constraints ``<joint>.tau_required`` (generalized force of the programmed
   constraints, Φ_p,qᵀλ_p) and ``<joint>.unique`` (reaction uniquely determined, paper
   004); per constraint ``<c>.F[1..3]``/``<c>.M[1..3]`` (or ``<c>.force[k]`` for
   coordinate constraints), ``<c>.violation`` (``<c>.violation_angle`` for cut joints),
   ``<c>.unique``; ``constraint.rank``, ``constraint.redundancy``;
   ``support[k].F[1..3]``, ``<point>.r[1..3]``, ``<beam>.deflection[1..3]``,
   ``energy.*``, ``solver.friction_iterations``, ``solver.friction_failures``,
   ``solver.repartitions``;
4. parameters added since, last so that the value references of every earlier variable stay:
   ``solver.friction_iteration_limit`` and, with constraints, ``solver.projection_iteration_limit`` (the
   bounds of a step's loops, fmu_mb.step_cost).

Variables refer to the mechanism by name (joint, point, force, constraint, beam), never by
coordinate or body index: the option values an FMU is started with may change those
indices (a flexible link inserts its RFEM coordinates and bodies), and the slave resolves
every variable in the mechanism it builds (:func:`resolve`). Joints, points, forces and
supports must exist in every combination of the Choice/Flag options (the builder checks
all of them, :func:`check_variants`); constraints and trajectories are collected over all
combinations, so an FMU whose options remove a constraint (torque mode, a flexible base
instead of the fixed-base constraint) keeps the same variables: absent constraints read 0
(and unique), absent beams (a rigid link) a deflection of 0.

Multi-coordinate joints use structured array names (``base.q[1]`` … ``base.q[6]``),
with the coordinate's name (x, y, z, ψ, θ, φ) in the description.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

from ..codes import FRICTION_ITERATIONS_DEFAULT, ITERATION_LIMIT, RowKind
from ..model import options as opt
from ..model.compile import CompiledMechanism
from ..outputs import BY_KEY, coordinate_kind, coordinate_label, expand, index_suffix
from ..simulator import METHODS
from ..units import DISPLAY, coordinate_units, force_unit
from .constants import COORDINATE_LIMIT, RATE_LIMIT

#: solver.integrator's last value: the method chosen at initialization from the options in force
AUTO = "auto"

#: file name of the interface table in an FMU's resources (Interface.to_json; written by fmi.builder)
INTERFACE_FILE = "interface.json"
#: default of ``solver.max_violation`` where the model file's FMU dict gives none (m, rad, m/s)
MAX_VIOLATION = 1e-2


@dataclass
class Var:
    name: str
    type: str                      # "Real" | "Integer" | "Boolean"
    causality: str                 # "parameter" | "input" | "output"
    variability: str               # "fixed" | "continuous" | "discrete"
    description: str
    source: tuple                  # what the runtime reads/writes, see slave.MechanismSlave
    start: object = None
    unit: str | None = None
    min: float | None = None
    max: float | None = None
    depends: tuple = ()            # names of the inputs an output depends on directly (feedthrough)
    #: an Integer variable whose values are named: ((name, description), ...) for codes 0, 1, ...
    #: (an FMI 2.0 Enumeration in the modelDescription, set and read with fmi2Set/GetInteger)
    items: tuple = ()

    @property
    def initial(self) -> str | None:
        if self.causality == "parameter":
            return "exact"
        if self.causality in ("output", "local"):
            return "calculated"
        return None

    @property
    def display_unit(self) -> str | None:
        return DISPLAY.get(self.unit) if self.unit else None


def _sha256(vars_: list) -> str:
    import json
    return hashlib.sha256(json.dumps(vars_, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


@dataclass
class AccuracyNote:
    """A model file's opt.Accuracy or opt.ChoiceAccuracy as the FMU core checks it at initialization (model_table:
    FMU_MB_ACCURACY): the option's index among the option parameters, the range of its value [lo, hi) the note
    covers (a Value's: below ``below``; a Choice's: its code), the largest step measured within the bound per
    method (METHODS order; 0: none) and the text the warning quotes."""
    option: int
    lo: float
    hi: float
    steps: tuple
    text: str
    choice: str = ""


@dataclass
class Interface:
    model: str
    vars: list = field(default_factory=list)
    #: measured accuracy limits of the model's options (AccuracyNote; not part of the JSON table: only the
    #: core's initialization reads them, from the model table)
    accuracy: list = field(default_factory=list, compare=False)
    #: the model's default integrator (index in METHODS): what solver.integrator = auto takes unless a note forbids
    default_method: int = field(default=0, compare=False)

    def add(self, v: Var) -> Var:
        self.vars.append(v)
        return v

    def by_name(self) -> dict:
        return {v.name: i for i, v in enumerate(self.vars)}

    def of(self, causality: str) -> list:
        return [i for i, v in enumerate(self.vars) if v.causality == causality]

    def to_json(self) -> str:
        """The table as JSON (written into an FMU at build time: its slave reads it instead of
        deriving the interface again at every instantiation), with a SHA-256 of its variables."""
        import json
        from dataclasses import asdict
        vars_ = [asdict(v) for v in self.vars]
        return json.dumps({"format": 1, "model": self.model, "sha256": _sha256(vars_), "vars": vars_},
                          ensure_ascii=False, indent=0)

    @classmethod
    def from_json(cls, text: str) -> "Interface":
        """Inverse of :meth:`to_json`; ValueError if the text is not such a table or is damaged."""
        import json
        try:
            data = json.loads(text)
            ok = data.get("format") == 1 and data.get("sha256") == _sha256(data["vars"])
            itf = cls(data["model"], [Var(**{**v, "source": tuple(v["source"]), "depends": tuple(v["depends"]),
                                             "items": tuple(tuple(i) for i in v.get("items", ()))})
                                      for v in data["vars"]])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not an fmu_mb interface table ({exc})") from None
        if not ok:
            raise ValueError("the interface table is damaged (its checksum does not match its variables)")
        return itf

    def digest(self) -> str:
        """Hash of names, types and causalities: identifies the interface in saved states. A native FMU's
        continuous states (local: derived from the model's record, never saved as values) are left out, so FMU
        states cross between the Python and the native FMU of one model."""
        h = hashlib.sha256(self.model.encode())
        for v in self.vars:
            if v.causality == "local":
                continue
            items = ",".join(name for name, _ in v.items)
            h.update(f"{v.name}|{v.type}|{v.causality}|{items}\n".encode())
        return h.hexdigest()


@dataclass
class ConstraintSpec:
    """What the interface needs of one constraint (from the model file's descriptions)."""
    name: str
    type: str
    group: str
    kinds: tuple          # row kinds (codes.RowKind)
    units: tuple          # for coordinate rows: unit of each row's generalized force
    violation_unit: str


def option_variants(module) -> list:
    """Option dicts of every combination of the Choice/Flag options (the other options at their
    defaults): the defaults first, then each single non-default value, then the remaining
    combinations (so that variables first met in a combination come last)."""
    import itertools
    options = getattr(module, "OPTIONS", {})
    variants = [{}]
    for name, o in options.items():
        if isinstance(o, opt.Choice):
            variants += [{name: v} for v in o.values if v != o.default]
        elif isinstance(o, opt.Flag):
            variants.append({name: not o.default})
    axes = {name: (o.values if isinstance(o, opt.Choice) else (False, True))
            for name, o in options.items() if isinstance(o, (opt.Choice, opt.Flag))}
    default = {name: options[name].default for name in axes}
    seen = {tuple(sorted({**default, **v}.items())) for v in variants}
    for combo in itertools.product(*axes.values()):
        full = dict(zip(axes, combo))
        key = tuple(sorted(full.items()))
        if key not in seen:
            seen.add(key)
            variants.append({k: v for k, v in full.items() if v != default[k]})
    return variants


def variant_key(variant: dict) -> tuple:
    """A hashable name of an option combination."""
    return tuple(sorted(variant.items()))


def check_variants(module, itf: Interface, compiled: dict | None = None) -> list:
    """Problems (strings) of the interface in the builds of :func:`option_variants`: every joint,
    point, force and support it names must exist there with the same coordinates; constraints
    and beams may be absent (their outputs read 0). ``compiled``: {variant_key: compiled mechanism}, used
    where it has a combination and given every other one it compiles (a build compiles each once)."""
    from ..model.compile import compile_mechanism
    problems = []
    joints = {}
    for v in itf.vars:
        kind, *a = v.source
        subject = BY_KEY[kind].subject if v.causality == "output" else None
        if kind in ("q_start", "qd_start", "tau_drive") or subject == "coordinate":     # (joint, coordinate)
            joints[a[0]] = max(joints.get(a[0], 0), a[1] + 1)
        elif subject in ("joint", "joint_axis"):                 # the joint must exist (a fixed one too)
            joints.setdefault(a[0], 0)
    points = {v.source[1] for v in itf.vars if v.source[0] == "point"}
    forces = {v.source[1] for v in itf.vars if v.source[0] == "body_force"}
    supports = {v.source[1] for v in itf.vars if v.source[0] == "support"}
    for variant in option_variants(module):
        label = ", ".join(f"{k}={v}" for k, v in variant.items()) or "defaults"
        try:
            cm = None if compiled is None else compiled.get(variant_key(variant))
            if cm is None:
                cm = compile_mechanism(module.build(**variant))
                if compiled is not None:
                    compiled[variant_key(variant)] = cm
        except Exception as exc:  # noqa: BLE001 — a user's build() may raise anything: report it, per variant
            problems.append(f"options ({label}): the model does not compile: "
                            f"{'' if isinstance(exc, ValueError) else type(exc).__name__ + ': '}{exc}")
            continue
        have = {j.name: j for j in cm.joints}
        for name, n in joints.items():
            if name not in have:
                problems.append(f"options ({label}): joint '{name}' does not exist")
            elif have[name].ndof < n:
                problems.append(f"options ({label}): joint '{name}' has {have[name].ndof} coordinate(s), the "
                                f"interface {n}")
        problems += [f"options ({label}): point '{p}' does not exist" for p in sorted(points - set(cm.points))]
        fnames = {f.name for f in cm.mechanism.forces}
        problems += [f"options ({label}): force '{f}' does not exist" for f in sorted(forces - fnames)]
        if supports and max(supports) + 1 != len(cm.mechanism.supports):
            problems.append(f"options ({label}): {len(cm.mechanism.supports)} supports, the interface has "
                            f"{max(supports) + 1}")
    return problems


def constraint_union(module) -> tuple[list, list]:
    """(ConstraintSpec list, trajectory-parameter list [(trajectory, parameter, value, Param)]) over
    :func:`option_variants`, in order of first appearance."""
    specs, params, seen, seen_p = [], [], set(), set()
    for variant in option_variants(module):
        mech = module.build(**variant)
        joints = {j.name: j for j in mech.joints}
        for c in mech.constraints:
            rows = c.rows()
            for r in rows:
                t = r.trajectory
                if t is not None:
                    for pname, (val, par) in t.parameters().items():
                        if (t.name, pname) not in seen_p:
                            seen_p.add((t.name, pname))
                            params.append((t.name, pname, val, par))
            if c.name in seen:
                continue
            seen.add(c.name)
            units = []
            for r in rows:
                if r.kind == RowKind.COORD:
                    j = joints[r.dof[0]]
                    cname = j.coordinate_names[r.dof[1]]
                    rot = j.kind in ("revolute", "universal", "spherical") or cname in ("psi", "theta", "phi")
                    units.append("N.m" if rot else "N")
                else:
                    units.append("")
            vu = c.unit
            if rows and all(r.kind == RowKind.COORD for r in rows):
                vu = "rad" if units[0] == "N.m" else "m"
            specs.append(ConstraintSpec(c.name, type(c).__name__, c.group, tuple(r.kind for r in rows), tuple(units), vu))
    return specs, params


def dynamics_refusal(cm: CompiledMechanism, constraints) -> str | None:
    """Why a mechanism cannot have the dynamics outputs (mass matrix, bias and gravity forces at the driven
    coordinates), or None: they are the open tree's, which is the mechanism's own dynamics only when no kinematic
    loop or nonholonomic constraint makes its coordinates dependent (programmed motions and a fixed base leave the
    driven coordinates' dynamics as they are); and they need driven coordinates. ``constraints``: the
    ConstraintSpecs of every option combination (:func:`constraint_union`)."""
    loops = sorted({c.group for c in constraints if c.group in ("kinematic", "nonholonomic")})
    if loops:
        return (f"its {' and '.join(loops)} constraints make the tree's coordinates dependent, and the reduced "
                "dynamics of a closed or nonholonomic mechanism in its driven coordinates are not offered")
    if not any(j.actuated for j in cm.joints):
        return "it has no driven joint (no tau_drive input)"
    return None


def integrator_items(default: str) -> tuple:
    """(name, description) of solver.integrator's values: the methods (fmu_mb.simulator.METHODS), then ``auto``
    (the FMU's default: fmu_mb.model.options.auto_method)."""
    return tuple((name, meth.description) for name, meth in METHODS.items()) + (
        (AUTO, f"the model's default ({default}) unless the model's measured accuracy notes for the options in "
               f"force call for another method at the step in force (then the first of "
               f"{', '.join(opt.AUTO_ORDER)} they allow; the choice is logged at initialization)"),)


def build_interface(model_name: str, module, cm: CompiledMechanism, step_size: float = 1e-3,
                    static_start: bool = False, method: str = "rk4", dynamics: bool = False) -> Interface:
    """The interface of ``models/<model_name>.py`` (its module and its default compilation); ``dynamics``: with
    the mass matrix, bias and gravity forces at the driven coordinates as outputs (ValueError saying why where
    :func:`dynamics_refusal` refuses them)."""
    itf = Interface(model_name)
    options = getattr(module, "OPTIONS", {})
    cspecs, tparams = constraint_union(module)
    if dynamics:
        why = dynamics_refusal(cm, cspecs)
        if why:
            raise ValueError(f"{model_name}: no dynamics outputs: {why}")
    has_con = bool(cspecs)
    has_prog = any(c.group == "programmed" for c in cspecs)
    # ------------------------------------------------------------------ parameters
    for name, o in options.items():
        if isinstance(o, opt.Choice):
            itf.add(Var(f"model.{name}", "Integer", "parameter", "fixed",
                        f"{o.description} (" + ", ".join(f"{i} = {v}" for i, v in enumerate(o.values)) + ")",
                        ("option", name), start=o.values.index(o.default), min=0, max=len(o.values) - 1,
                        items=tuple((str(v), "") for v in o.values)))
        elif isinstance(o, opt.Flag):
            itf.add(Var(f"model.{name}", "Boolean", "parameter", "fixed", o.description, ("option", name),
                        start=bool(o.default)))
        elif isinstance(o, opt.Count):
            itf.add(Var(f"model.{name}", "Integer", "parameter", "fixed", o.description, ("option", name),
                        start=int(o.default), min=o.min, max=o.max))
        elif isinstance(o, opt.Value):
            itf.add(Var(f"model.{name}", "Real", "parameter", "fixed", o.description, ("option", name),
                        start=float(o.default), unit=o.unit or None, min=o.min, max=o.max))
        else:
            raise TypeError(f"models/{model_name}.py: option {name!r} must be Choice, Flag, Count or Value")
    itf.add(Var("solver.step_size", "Real", "parameter", "fixed",
                "internal fixed step of the integrator; communication steps of any length are integrated "
                "with it, the remainder of a step that is not a multiple of it by one shorter step",
                ("solver", "step_size"), start=float(step_size), unit="s", min=1e-9, max=1.0))
    itf.add(Var("solver.integrator", "Integer", "parameter", "fixed",
                "integration scheme: " + "; ".join(f"{i} = {name} ({text})" for i, (name, text)
                                                   in enumerate(integrator_items(method))),
                ("solver", "integrator"), start=len(METHODS), min=0, max=len(METHODS),
                items=integrator_items(method)))
    itf.default_method = list(METHODS).index(method)
    itf.add(Var("solver.max_steps_per_call", "Integer", "parameter", "fixed",
                "largest number of internal steps one fmi2DoStep may take; longer communication steps are "
                "refused with fmi2Error instead of blocking the host", ("solver", "max_steps_per_call"),
                start=1_000_000, min=1, max=2**31 - 1))
    for k, axis in enumerate("xyz"):
        itf.add(Var(f"gravity[{k + 1}]", "Real", "parameter", "fixed", f"gravitational acceleration, world {axis}",
                    ("gravity", k), start=float(cm.model.gravity[k]), unit="m/s2", min=-1e3, max=1e3))
    solver = cm.mechanism.solver
    hold = solver.static_hold
    groups = [g for g in solver.static_groups if any(c.group == g for c in cm.constraints)]
    names = {"kinematic": "loop-closure", "base": "fixed-base", "programmed": "programmed"}
    if not groups:
        how = "with the joint coordinates held at their start values"
    else:
        held = ("the joint coordinates held at their start values" if hold is None else
                f"{', '.join(h.removesuffix('.q') for h in hold)} held at their start values" if hold else
                "every coordinate free")
        how = f"with the {', '.join(names[g] for g in groups)} constraints enforced and {held}"
    itf.add(Var("init.static", "Boolean", "parameter", "fixed",
                "start from static equilibrium: solve the elastic coordinates (flexible base, RFEM sdes, joint "
                f"springs) for gravity {how} (papers 000, 001)",
                ("init", "static"), start=bool(static_start)))
    if has_con:
        solver = cm.mechanism.solver
        itf.add(Var("solver.alpha", "Real", "parameter", "fixed",
                    "Baumgarte stabilisation α of Φ̈ + 2αΦ̇ + β²Φ = 0 (paper 000 eqs. 33, 37)",
                    ("solver", "alpha"), start=float(solver.alpha), unit="1/s", min=0.0, max=1e6))
        itf.add(Var("solver.beta", "Real", "parameter", "fixed",
                    "Baumgarte stabilisation β of Φ̈ + 2αΦ̇ + β²Φ = 0 (paper 000 eqs. 33, 37)",
                    ("solver", "beta"), start=float(solver.beta), unit="1/s", min=0.0, max=1e6))
        itf.add(Var("solver.projection", "Boolean", "parameter", "fixed",
                    "after every step solve the holonomic constraints for the positions and project the "
                    "velocities (constraints held to round-off instead of only stabilised)",
                    ("solver", "projection"), start=bool(solver.projection)))
        itf.add(Var("solver.max_violation", "Real", "parameter", "fixed",
                    "largest constraint violation a step may leave (m; rad for orientation rows and angle "
                    "coordinates, m/s for first-order rows): a step leaving more (a programmed path out of reach "
                    "or too fast, a loop that cannot close) is undone and answered with fmi2Error naming the "
                    "constraint", ("solver", "max_violation"),
                    start=float(getattr(module, "FMU", {}).get("max_violation", MAX_VIOLATION)), unit="m",
                    min=1e-12, max=1e6))
        itf.add(Var("init.assemble", "Boolean", "parameter", "fixed",
                    "make the start state consistent with the constraint groups "
                    f"{', '.join(solver.assemble) or '(none)'} (loops closed, velocities projected)",
                    ("init", "assemble"), start=bool(solver.assemble)))
    for j in cm.joints:
        for k in range(j.ndof):
            d = j.dofadr + k
            pu, vu, _ = coordinate_units(coordinate_kind(cm, d))
            lab = coordinate_label(j, k)
            itf.add(Var(f"{j.name}.q_start{index_suffix(j.ndof, k)}", "Real", "parameter", "fixed",
                        f"initial {lab} of joint {j.name}", ("q_start", j.name, k), start=float(cm.q0[d]), unit=pu,
                        min=-COORDINATE_LIMIT, max=COORDINATE_LIMIT))
            itf.add(Var(f"{j.name}.qd_start{index_suffix(j.ndof, k)}", "Real", "parameter", "fixed",
                        f"initial rate of {lab} of joint {j.name}", ("qd_start", j.name, k), start=float(cm.qd0[d]),
                        unit=vu, min=-RATE_LIMIT, max=RATE_LIMIT))
    # ------------------------------------------------------------------ inputs
    for j in cm.joints:
        if not j.actuated:
            continue
        for k in range(j.ndof):
            d = j.dofadr + k
            itf.add(Var(f"{j.name}.tau_drive{index_suffix(j.ndof, k)}", "Real", "input", "continuous",
                        f"driving {'torque' if coordinate_kind(cm, d) == 'rad' else 'force'} on {coordinate_label(j, k)} of "
                        f"joint {j.name} (held constant over each communication step)",
                        ("tau_drive", j.name, k), start=0.0, unit=force_unit(coordinate_kind(cm, d))))
    for k, f in enumerate(cm.mechanism.forces):
        itf.add(Var(f"{f.name}.force", "Real", "input", "continuous",
                    f"magnitude of the force {f.name} fixed in link {f.link} (direction {tuple(f.direction)}, "
                    "link frame; held constant over each communication step)", ("body_force", f.name), start=0.0,
                    unit="N"))
    for tname, pname, val, par in tparams:
        itf.add(Var(f"{tname}.{pname}", "Real", "input", "continuous",
                    f"programmed trajectory '{tname}': {par.description} (takes effect at the next step)",
                    ("traj", tname, pname), start=float(val), unit=par.unit or None, min=par.min, max=par.max))
    # ------------------------------------------------------------------ outputs (fmu_mb.outputs)
    for o in expand(cm, cspecs, has_prog, dynamics):
        itf.add(Var(o.name, o.type, "output", o.variability, o.description, o.source, unit=o.unit))
    itf.accuracy = accuracy_notes(module, options)
    # ------------------------------------------------------------------ parameters added since (last: the value
    # references of every earlier variable stay)
    itf.add(Var("solver.friction_iteration_limit", "Integer", "parameter", "fixed",
                "most Newton iterations of the friction/reaction loop in one evaluation of the dynamics (each an "
                "n_f x n_f solve and at most 11 residual evaluations); a solve that reaches it without meeting the "
                "tolerance counts in solver.friction_failures. A bound of a step's worst-case cost (fmu_mb.step_cost); "
                "no effect on options without friction", ("solver", "friction_iterations"),
                start=FRICTION_ITERATIONS_DEFAULT, min=1, max=ITERATION_LIMIT))
    if has_con:
        solver = cm.mechanism.solver
        itf.add(Var("solver.projection_iteration_limit", "Integer", "parameter", "fixed",
                    "most position-Newton iterations of the projection after a step (each a pass of kinematics, "
                    "mass matrix and constraint terms and two factorizations); a projection that reaches it leaves "
                    "the violation it reached, checked against solver.max_violation. A bound of a step's "
                    "worst-case cost (fmu_mb.step_cost); used when solver.projection is on",
                    ("solver", "projection_iterations"), start=int(solver.projection_iterations), min=1,
                    max=ITERATION_LIMIT))
    return itf


#: the energy counters that end every state vector x (kernels.dynamics.write_state_derivative)
ENERGY_STATES = ("energy.dissipated", "energy.work_in", "energy.work_constraints")


def state_labels(cm: CompiledMechanism) -> list:
    """What each element of the state x of ``cm`` is, for descriptions: coordinates, rates, friction states,
    energy counters (the layout of fmu_mb.model.compiled)."""
    nv = cm.model.nv
    names = [f"coordinate {d}" for d in range(nv)]
    for j in cm.joints:
        for k in range(j.ndof):
            names[j.dofadr + k] = f"{j.name}.q{index_suffix(j.ndof, k)}"
    zjoint = {int(z): d for d, z in enumerate(cm.model.dof_fric_z) if z >= 0}
    friction = [f"friction state of {names[zjoint[k]].rsplit('.', 1)[0]}" if k in zjoint else f"friction state {k}"
                for k in range(cm.model.nz)]
    energies = [f"{e} (the counter integrated by the model)" for e in ENERGY_STATES]
    return names + [f"rate of {n}" for n in names] + friction + energies


def add_states(itf: Interface, n_states: int, labels: list) -> None:
    """Append the continuous states of a native FMU's Model Exchange interface: ``state[k]`` and
    ``der(state[k])`` (local, continuous; k = 1 … ``n_states``, the most any option combination the FMU
    carries has). Slot k holds element k of the state x of the combination in force (coordinates, rates,
    friction states), the last three slots its energy counters; slots a smaller combination does not use read
    0 and have derivative 0. ``labels``: what each element of x is in the default combination (descriptions)."""
    n_dyn = len(labels) - len(ENERGY_STATES)
    for k in range(n_states):
        label = (labels[n_dyn + k - (n_states - len(ENERGY_STATES))] if k >= n_states - len(ENERGY_STATES)
                 else labels[k] if k < n_dyn else "unused by the default options (0)")
        itf.add(Var(f"state[{k + 1}]", "Real", "local", "continuous",
                    f"continuous state {k + 1} (Model Exchange): {label} in the default options", ("state", k)))
    for k in range(n_states):
        itf.add(Var(f"der(state[{k + 1}])", "Real", "local", "continuous",
                    f"time derivative of state[{k + 1}]", ("state_der", k)))


def accuracy_notes(module, options: dict) -> list:
    """The model file's ``ACCURACY`` (opt.Accuracy, opt.ChoiceAccuracy) as AccuracyNotes; a Value option's strictest
    last (the core warns with the last note that applies)."""
    notes = []
    names = list(options)
    for a in sorted(getattr(module, "ACCURACY", ()),
                    key=lambda a: (a.option, -a.below if isinstance(a, opt.Accuracy) else 0.0)):
        a.validate(options, METHODS)
        within = ", ".join(f"{m} at solver.step_size <= {h:g} s" for m, h in a.steps.items() if h > 0)
        text = (f"{a.run + ': ' if a.run else ''}{a.measured}; within {a.bound} of the converged motion there: "
                f"{within or 'no method and step measured'}")
        if isinstance(a, opt.Accuracy):
            lo, hi, choice = -math.inf, float(a.below), ""
        else:
            code = options[a.option].values.index(a.value)
            lo, hi, choice = float(code), float(code + 1), f"{code} ({a.value})"
        notes.append(AccuracyNote(names.index(a.option), lo, hi, tuple(a.step_for(m) for m in METHODS), text,
                                  choice))
    return notes
