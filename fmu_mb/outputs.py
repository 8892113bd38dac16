"""The output catalogue: every quantity a mechanism reports, defined once.

Each :class:`Output` names its kernel code (codes.OutputKind; kernels.outputs computes it),
what it is about (its *subject*: a joint coordinate, a joint, a support, a point, a beam, a
constraint or the mechanism), its FMU variable name, type, unit and description, and how its
subject resolves to the kernel's spec row (``a, b, f``) in a compiled mechanism. The FMU
interface (fmi.interface) lists :func:`expand`; the FMU slave and the Simulator's accessors
make their spec rows with :func:`spec_row` — nothing else knows what a code's indices mean.

A variable's *source* is ``(key, subject, component)``: ``key`` the catalogue entry,
``subject`` a name (or a support number), ``component`` 0-based. Subjects absent with the
options an FMU was started with (a rigid beam, a removed constraint) resolve to index −1:
the kernel reads 0 for them (1 for a uniqueness flag).

Adding an output: a member of codes.OutputKind, its branch in kernels.outputs.fill_outputs
and one :class:`Output` here (section and resolver); tests/test_outputs.py checks that the
three agree.
"""
from __future__ import annotations

from typing import Callable

from .codes import JointType, OutputKind, RowKind
from .units import coordinate_units, force_unit

GREEK = {"psi": "ψ", "theta": "θ", "phi": "φ"}
AXES = "xyz"


class Output:
    """One catalogue entry (a plain class: typing's record types compile code at import, and this
    module is imported at every FMU start)."""
    __slots__ = ("key", "kind", "subject", "name", "type", "unit", "description", "resolve")

    def __init__(self, key: str, kind: OutputKind, subject: str, name: str, type: str, unit: str | None,
                 description: str, resolve: Callable):
        self.key = key                  # source tag of the FMU variable
        self.kind = kind
        self.subject = subject          # coordinate | joint | joint_axis | support | point | beam | constraint | mechanism
        #                                 | driven | driven_pair (the tau_drive inputs' coordinates: index, row·n + column)
        self.name = name                # variable name; {s}: subject, {i}: index suffix ([k] or "")
        self.type = type                # Real | Integer | Boolean
        self.unit = unit                # a unit, or a rule: "coordinate", "rate", "force", "row", "violation"
        self.description = description  # {s}, {c} (coordinate label), {axis}, {what} (torque/force) filled in
        self.resolve = resolve          # (cm, subject, component) -> (a, b, f)

    @property
    def variability(self) -> str:
        return "continuous" if self.type == "Real" else "discrete"

    def __repr__(self) -> str:
        return f"Output({self.key!r}, {self.kind!r})"


class OutputVar:
    """One FMU output variable of a mechanism (an expanded catalogue entry)."""
    __slots__ = ("name", "type", "variability", "description", "source", "unit")

    def __init__(self, name: str, type: str, variability: str, description: str, source: tuple, unit: str | None):
        self.name, self.type, self.variability = name, type, variability
        self.description, self.source, self.unit = description, source, unit     # source: (key, subject, component)

    def __repr__(self) -> str:
        return f"OutputVar({self.name!r}, {self.source!r})"


# ----------------------------------------------------------------------------- resolvers
_Z3 = (0.0, 0.0, 0.0)


def _coordinate(cm, joint, k):
    return cm.joint(joint).dofadr + k, 0, _Z3


def _joint_body(cm, joint, k):
    return cm.joint(joint).body, k, _Z3


def _joint_dof(cm, joint, k):
    return cm.joint(joint).dofadr, 0, _Z3


def _support(cm, s, k):
    n = cm.model.lsup_U.shape[0] or cm.model.sup_body.shape[0]      # linearized or exact: never both
    return (s if s < n else -1), k, _Z3


def _point(cm, name, k):
    body, pos = cm.points[name]
    return body, k, tuple(float(p) for p in pos)


def _beam(cm, name, k):
    info = next((b for b in cm.beams if b.name == name), None)
    if info is None:                                  # the link is rigid with these options
        return -1, k, _Z3
    return info.rfe_bodies[0], k, (float(info.rfe_bodies[-1]), float(info.length - info.rfe_start[-1]),
                                   float(info.length))


def _constraint_object(cm, name, k):
    return next((i for i, c in enumerate(cm.constraints) if c.name == name), -1), k, _Z3


def _constraint_row(cm, name, k):
    info = next((c for c in cm.constraints if c.name == name), None)
    return (info.rows[k] if info is not None else -1), 0, _Z3


def driven_coordinates(cm) -> list:
    """Coordinates of the actuated joints in the order of their tau_drive inputs (fmi.interface)."""
    return [j.dofadr + k for j in cm.joints if j.actuated for k in range(j.ndof)]


def _driven(cm, subject, k):
    return driven_coordinates(cm)[k], 0, _Z3


def _driven_pair(cm, subject, k):
    d = driven_coordinates(cm)
    return d[k // len(d)], d[k % len(d)], _Z3


def _none(cm, subject, k):
    return 0, 0, _Z3


# ----------------------------------------------------------------------------- the catalogue
_J = "of joint {s}"
CATALOGUE = (
    Output("q", OutputKind.Q, "coordinate", "{s}.q{i}", "Real", "coordinate", "{c} " + _J, _coordinate),
    Output("qd", OutputKind.QD, "coordinate", "{s}.qd{i}", "Real", "rate", "rate of {c} " + _J, _coordinate),
    Output("tau_required", OutputKind.TAU_REQUIRED, "coordinate", "{s}.tau_required{i}", "Real", "force",
           "generalized {what} on {c} " + _J + " that realises the programmed constraints (Φ_p,qᵀλ_p; feedforward "
           "for a controller)", _coordinate),
    Output("F", OutputKind.F, "joint", "{s}.F[{k}]", "Real", "N",
           "reaction force of joint {s} on its child, joint-frame {axis}", _joint_body),
    Output("M", OutputKind.M, "joint", "{s}.M[{k}]", "Real", "N.m",
           "reaction moment of joint {s} on its child about the joint origin, joint-frame {axis}", _joint_body),
    Output("F_normal", OutputKind.F_NORMAL, "joint_axis", "{s}.F_normal", "Real", "N",
           "normal (radial) reaction force of joint {s}: the reaction component perpendicular to its axis (paper "
           "000 eq. 21)", _joint_body),
    Output("friction_load", OutputKind.FRICTION_LOAD, "joint_axis", "{s}.friction_load", "Real", "force",
           "equivalent normal load L of joint {s} that its friction coefficient multiplies (journal: f_n·d/2; pin "
           "bearing: paper 002 eq. 47); 0 without friction", _joint_dof),
    Output("tau_friction", OutputKind.TAU_FRICTION, "joint_axis", "{s}.tau_friction", "Real", "force",
           "friction {what} of joint {s}, opposing its motion (applied as −tau_friction)", _joint_dof),
    Output("unique_joint", OutputKind.UNIQUE_JOINT, "joint", "{s}.unique", "Boolean", None,
           "true if the reaction of joint {s} is uniquely determined by the rigid model (paper 004 eqs. 21-27; "
           "false with redundant constraints that share its load)", _joint_body),
    Output("con_lambda", OutputKind.LAMBDA, "constraint", "{s}.force{i}", "Real", "row",
           "generalized force of constraint {s} (row {k}: its Lagrange multiplier)", _constraint_row),
    Output("con_force", OutputKind.CON_FORCE, "constraint", "{s}.F[{k}]", "Real", "N",
           "force of constraint {s} on its (first) link, {frame} {axis}", _constraint_object),
    Output("con_moment", OutputKind.CON_MOMENT, "constraint", "{s}.M[{k}]", "Real", "N.m",
           "moment of constraint {s} on its (first) link about its point, {frame} {axis}", _constraint_object),
    Output("con_violation", OutputKind.VIOLATION, "constraint", "{s}.violation", "Real", "violation",
           "violation of constraint {s}: norm of its position-level rows{first_order}", _constraint_object),
    Output("con_violation_angle", OutputKind.VIOLATION_ANGLE, "constraint", "{s}.violation_angle", "Real", "rad",
           "orientation violation of cut joint {s}", _constraint_object),
    Output("unique_con", OutputKind.UNIQUE_CONSTRAINT, "constraint", "{s}.unique", "Boolean", None,
           "true if the reaction of constraint {s} is uniquely determined (paper 004)", _constraint_object),
    Output("rank", OutputKind.RANK, "mechanism", "constraint.rank", "Integer", None,
           "rank of the constraint matrix C = [Φ_q; Ψ] (paper 004 eq. 33)", _none),
    Output("redundancy", OutputKind.REDUNDANCY, "mechanism", "constraint.redundancy", "Integer", None,
           "number of redundant constraint rows p = rows − rank (paper 004 eq. 7)", _none),
    Output("support", OutputKind.SUPPORT, "support", "support[{n}].F[{k}]", "Real", "N",
           "force of support {n} on the base, world {axis}{linearized}", _support),
    Output("point", OutputKind.POINT, "point", "{s}.r[{k}]", "Real", "m", "position of point {s}, world {axis}",
           _point),
    Output("point_v", OutputKind.POINT_VELOCITY, "point", "{s}.v[{k}]", "Real", "m/s",
           "velocity of point {s}, world {axis}", _point),
    Output("point_w", OutputKind.FRAME_ANGULAR_VELOCITY, "point", "{s}.w[{k}]", "Real", "rad/s",
           "angular velocity of the link of point {s}, world {axis}", _point),
    Output("point_R", OutputKind.FRAME_ROTATION, "point", "{s}.R[{k}]", "Real", "1",
           "orientation of the link of point {s}: rotation matrix world ← link frame, row {row}, column {col} "
           "(row-major)", _point),
    Output("mass_matrix", OutputKind.MASS_MATRIX, "driven_pair", "dynamics.M[{r},{c}]", "Real", "mass",
           "joint-space mass matrix M(q) (paper 000 eq. 26, armature included), row {r}: {row}, column {c}: {col} "
           "(the driven coordinates, in the order of the tau_drive inputs)", _driven_pair),
    Output("bias_force", OutputKind.BIAS_FORCE, "driven", "dynamics.tau_bias[{k}]", "Real", "force",
           "bias {what} C(q, q̇)q̇ + g(q) on {row}: Coriolis, centrifugal and gravity terms (Pinocchio's "
           "nonLinearEffects; computed torque: τ = M q̈ + tau_bias; springs, dampers, supports and friction not in "
           "it)", _driven),
    Output("gravity_force", OutputKind.GRAVITY_FORCE, "driven", "dynamics.tau_gravity[{k}]", "Real", "force",
           "gravity {what} g(q) on {row}: the {what} that holds the mechanism still against gravity (Pinocchio's "
           "computeGeneralizedGravity)", _driven),
    Output("deflection", OutputKind.DEFLECTION, "beam", "{s}.deflection[{k}]", "Real", "m",
           "tip deflection of link {s} from its undeformed shape, link-root frame {axis} (0 when rigid)", _beam),
    Output("kinetic", OutputKind.KINETIC, "mechanism", "energy.kinetic", "Real", "J", "kinetic energy", _none),
    Output("potential", OutputKind.POTENTIAL, "mechanism", "energy.potential", "Real", "J",
           "potential energy (gravity and springs)", _none),
    Output("dissipated", OutputKind.DISSIPATED, "mechanism", "energy.dissipated", "Real", "J",
           "energy dissipated by dampers and friction since the start", _none),
    Output("work_in", OutputKind.WORK_IN, "mechanism", "energy.work_in", "Real", "J",
           "work done by the driving inputs since the start", _none),
    Output("friction_iterations", OutputKind.FRICTION_ITERATIONS, "mechanism", "solver.friction_iterations",
           "Integer", None, "Newton iterations of the last friction/reaction loop solve", _none),
    Output("friction_failures", OutputKind.FRICTION_FAILURES, "mechanism", "solver.friction_failures", "Integer",
           None, "friction/reaction loop solves that did not converge since initialization (self-locking joints)",
           _none),
    Output("work_constraints", OutputKind.WORK_CONSTRAINTS, "mechanism", "energy.work_constraints", "Real", "J",
           "work done by the constraint forces since the start (programmed motion, Baumgarte terms)", _none),
    Output("repartitions", OutputKind.REPARTITIONS, "mechanism", "solver.repartitions", "Integer", None,
           "coordinate partitions chosen since initialization (paper 000 eq. 25; the first included)", _none),
)
BY_KEY = {o.key: o for o in CATALOGUE}


# ----------------------------------------------------------------------------- resolution
def spec_row(cm, source: tuple) -> tuple:
    """(kind, a, b, f) of the kernel's spec table for an output ``source`` = (key, subject,
    component) in the compiled mechanism ``cm``; KeyError for an unknown key or subject."""
    key, subject, k = source
    out = BY_KEY[key]                                    # KeyError: not in the catalogue
    a, b, f = out.resolve(cm, subject, k)
    return int(out.kind), int(a), int(b), f


def spec_table(cm, sources) -> tuple:
    """Arrays (kind, a, b, f) of :func:`spec_row` for every source (numpy, for the kernels)."""
    import numpy as np
    rows = [spec_row(cm, s) for s in sources]
    return (np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64),
            np.array([r[2] for r in rows], np.int64), np.array([r[3] for r in rows], float).reshape(-1, 3))


# ----------------------------------------------------------------------------- expansion
def coordinate_kind(cm, dof: int) -> str:
    """"rad" or "m": the kind of coordinate dof of the compiled mechanism cm."""
    return "rad" if cm.model.body_jtype[cm.model.dof_body[dof]] == JointType.REVOLUTE else "m"


def index_suffix(n: int, k: int) -> str:
    """"[k+1]" for an array of n > 1 elements, "" for a scalar."""
    return "" if n == 1 else f"[{k + 1}]"


def coordinate_label(j, k) -> str:
    """Name of coordinate k of joint info j for descriptions (ψ, θ, φ in Greek)."""
    c = j.coordinate_names[k].split(".")[-1]
    return GREEK.get(c, c)


def _var(out: Output, name: str, unit, description: str, subject, k) -> OutputVar:
    return OutputVar(name, out.type, out.variability, description, (out.key, subject, k), unit)


def _coordinate_vars(cm, keys) -> list:
    vs = []
    for j in cm.joints:
        for k in range(j.ndof):
            kind = coordinate_kind(cm, j.dofadr + k)
            pu, vu, _ = coordinate_units(kind)
            for key in keys:
                o = BY_KEY[key]
                unit = {"coordinate": pu, "rate": vu, "force": force_unit(kind)}[o.unit]
                what = "torque" if kind == "rad" else "force"
                vs.append(_var(o, o.name.format(s=j.name, i=index_suffix(j.ndof, k)), unit,
                               o.description.format(s=j.name, c=coordinate_label(j, k), what=what), j.name, k))
    return vs


def _vector_vars(o: Output, subject, name_args: dict, desc_args: dict) -> list:
    return [_var(o, o.name.format(k=k + 1, **name_args), o.unit,
                 o.description.format(axis=AXES[k], **desc_args), subject, k) for k in range(3)]


def _scalar(o: Output, subject=None, unit=None, **fmt) -> OutputVar:
    return _var(o, o.name.format(**fmt), unit if unit is not None else o.unit, o.description.format(**fmt), subject, 0)


def _dynamics_vars(cm) -> list:
    """The dynamics outputs (:func:`expand` with ``dynamics``): M at the driven coordinates (row-major), then the
    bias and gravity forces there."""
    driven = driven_coordinates(cm)
    label = {}
    for j in cm.joints:
        for k in range(j.ndof):
            label[j.dofadr + k] = f"{coordinate_label(j, k)} of joint {j.name}"
    kinds = [coordinate_kind(cm, d) for d in driven]
    vs = []
    o = BY_KEY["mass_matrix"]
    n = len(driven)
    for k in range(n * n):
        r, c = k // n, k % n
        unit = f"{force_unit(kinds[r])}.s2/{kinds[c]}"          # generalized force per acceleration
        vs.append(_var(o, o.name.format(r=r + 1, c=c + 1), unit,
                       o.description.format(r=r + 1, c=c + 1, row=label[driven[r]], col=label[driven[c]]), None, k))
    for key in ("bias_force", "gravity_force"):
        o = BY_KEY[key]
        for k, d in enumerate(driven):
            vs.append(_var(o, o.name.format(k=k + 1), force_unit(kinds[k]),
                           o.description.format(row=label[d], what="torque" if kinds[k] == "rad" else "force"),
                           None, k))
    return vs


def expand(cm, constraints=(), programmed: bool = False, dynamics: bool = False) -> list:
    """The output variables of the compiled mechanism ``cm`` in value-reference order.

    constraints: what the outputs need of every constraint of every option variant (objects with
    name, type, kinds (codes.RowKind of its rows), units (per coordinate row), violation_unit;
    fmi.interface.constraint_union); programmed: whether any is a programmed constraint. Order:
    coordinates (q, qd), tau_required, joint reactions, axis loads and friction, uniqueness and
    constraint reactions/violations, rank/redundancy, supports, points, beams, energies, solver
    counters, then the points' velocity, angular velocity and orientation (their link's frame: the tool
    frames a controller reads; stable: value references of existing outputs do not move), then with
    ``dynamics`` the mass matrix, bias and gravity forces at the driven coordinates (computed-torque control)."""
    has_con = bool(constraints)
    B = BY_KEY
    vs = _coordinate_vars(cm, ("q", "qd"))
    if programmed:
        vs += _coordinate_vars(cm, ("tau_required",))
    for j in cm.joints:
        if j.kind in ("free", "planar"):        # coordinates of a floating link, not a physical joint
            continue
        vs += _vector_vars(B["F"], j.name, dict(s=j.name), dict(s=j.name))
        vs += _vector_vars(B["M"], j.name, dict(s=j.name), dict(s=j.name))
    for j in cm.joints:
        if j.kind not in ("revolute", "prismatic"):
            continue
        kind = coordinate_kind(cm, j.dofadr)
        what = "torque" if kind == "rad" else "force"
        vs.append(_scalar(B["F_normal"], j.name, s=j.name))
        vs.append(_scalar(B["friction_load"], j.name, force_unit(kind), s=j.name))
        vs.append(_scalar(B["tau_friction"], j.name, force_unit(kind), s=j.name, what=what))
    if has_con:
        vs += [_scalar(B["unique_joint"], j.name, s=j.name) for j in cm.joints]
        for c in constraints:
            if all(k == RowKind.COORD for k in c.kinds):
                o = B["con_lambda"]
                vs += [_var(o, o.name.format(s=c.name, i=index_suffix(len(c.kinds), r)), u,
                            o.description.format(s=c.name, k=r + 1), c.name, r) for r, u in enumerate(c.units)]
            else:
                frame = "joint frame on its first link" if c.type == "CutJoint" else "world axes"
                vs += _vector_vars(B["con_force"], c.name, dict(s=c.name), dict(s=c.name, frame=frame))
                vs += _vector_vars(B["con_moment"], c.name, dict(s=c.name), dict(s=c.name, frame=frame))
            first = " (first-order rows: velocity residual)" if c.violation_unit == "m/s" else ""
            vs.append(_scalar(B["con_violation"], c.name, c.violation_unit, s=c.name, first_order=first))
            if RowKind.ORI in c.kinds:
                vs.append(_scalar(B["con_violation_angle"], c.name, s=c.name))
            vs.append(_scalar(B["unique_con"], c.name, s=c.name))
        vs += [_scalar(B["rank"]), _scalar(B["redundancy"])]
    linearized = cm.mechanism.support_model == "linearized"
    note = " (linearized support, paper 001 eqs. 3-4: −S·U·q_b − D·U·q̇_b)" if linearized else ""
    for s in range(len(cm.mechanism.supports)):
        vs += _vector_vars(B["support"], s, dict(n=s + 1), dict(n=s + 1, linearized=note))
    for name in cm.points:
        vs += _vector_vars(B["point"], name, dict(s=name), dict(s=name))
    for beam in (ln for ln in cm.mechanism.links if type(ln).__name__ == "Beam"):
        vs += _vector_vars(B["deflection"], beam.name, dict(s=beam.name), dict(s=beam.name))
    vs += [_scalar(B[k]) for k in ("kinetic", "potential", "dissipated", "work_in", "friction_iterations",
                                   "friction_failures")]
    if has_con:
        vs += [_scalar(B["work_constraints"]), _scalar(B["repartitions"])]
    for name in cm.points:                     # the tool frames' velocity and orientation (after the older outputs:
        vs += _vector_vars(B["point_v"], name, dict(s=name), dict(s=name))       # their value references stay)
        vs += _vector_vars(B["point_w"], name, dict(s=name), dict(s=name))
        o = B["point_R"]
        vs += [_var(o, o.name.format(s=name, k=k + 1), o.unit, o.description.format(s=name, row=k // 3 + 1,
                                                                                      col=k % 3 + 1), name, k)
               for k in range(9)]
    if dynamics:
        vs += _dynamics_vars(cm)
    return vs
