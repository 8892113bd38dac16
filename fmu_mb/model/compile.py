"""Compile a :class:`~fmu_mb.model.description.Mechanism` into a constant ``Model``.

``compile_mechanism(mech)`` validates the description, expands joints and
flexible beams into elementary bodies (see :mod:`fmu_mb.model.compiled`) and
returns a :class:`CompiledMechanism`: the ``Model`` arrays plus the names and
index maps the simulator and the FMI layer need (which coordinate is which
joint, which body carries a point, where each rfe sits).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..codes import (
    FRICTION_ITERATIONS_DEFAULT,
    ITERATION_LIMIT,
    ROS2_GAMMA_DAMPED,
    SEGMENT_WIDTH,
    Formulation,
    Group,
    JointType,
    LoadKind,
    RowKind,
    SolverOption,
)
from . import friction as fr
from .compiled import Model, freeze
from .constraints import CutJoint
from .description import GROUND, Beam, Mechanism

_EX, _EY, _EZ = np.eye(3)


@dataclass
class JointInfo:
    name: str
    kind: str
    dofadr: int          # first coordinate index
    ndof: int
    body: int            # elementary body carrying the child link (reaction frame)
    actuated: bool
    coordinate_names: tuple
    friction: object     # Friction or None


@dataclass
class BeamInfo:
    name: str
    length: float
    rfe_bodies: list      # elementary body of each rfe
    rfe_start: np.ndarray  # x of each rfe frame origin along the undeformed beam, m
    sde_dofadr: list      # first coordinate (ψ) of each sde


@dataclass
class ConstraintInfo:
    name: str
    type: str             # class name: CutJoint, PointTrajectory, KnifeEdge, ...
    group: str
    rows: list            # row indices into the Model's con_* arrays
    labels: list          # row labels
    unit: str             # unit of the position-level violation
    body: int             # elementary body of link_a (reaction output), -1 ground
    frame_R: np.ndarray   # reaction output frame on link_a: rotation in the body frame
    frame_p: np.ndarray   # its origin in the body frame
    constraint: object


@dataclass
class CompiledMechanism:
    """A compiled mechanism: ``model`` arrays plus names and index maps."""
    name: str
    model: Model
    mechanism: Mechanism
    dof_names: list
    body_names: list
    joints: list = field(default_factory=list)       # JointInfo, in coordinate order
    beams: list = field(default_factory=list)        # BeamInfo of flexible beams
    points: dict = field(default_factory=dict)       # name -> (body, position in body frame)
    link_body: dict = field(default_factory=dict)    # link name -> body of its frame (rfe 0 for beams)
    actuated_dofs: np.ndarray = None
    q0: np.ndarray = None
    qd0: np.ndarray = None
    constraints: list = field(default_factory=list)   # ConstraintInfo
    row_labels: list = field(default_factory=list)
    trajectories: list = field(default_factory=list)  # Trajectory objects, index = con_traj

    @property
    def nc(self) -> int:
        return self.model.nc

    def constraint(self, name: str) -> ConstraintInfo:
        for c in self.constraints:
            if c.name == name:
                return c
        raise KeyError(f"no constraint named {name!r} in '{self.name}'")

    def row(self, label: str) -> int:
        """Index of the constraint row ``label`` (e.g. ``"C.y"``, ``"W4"``)."""
        try:
            return self.row_labels.index(label)
        except ValueError:
            raise KeyError(f"no constraint row {label!r} in '{self.name}'") from None

    @property
    def nv(self) -> int:
        return self.model.nv

    def joint(self, name: str) -> JointInfo:
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(f"no joint named {name!r} in '{self.name}'")

    def dof(self, name: str) -> int:
        """Index of coordinate ``name`` (e.g. ``"j1.q"``, ``"base.z"``, ``"arm.sde2.theta"``)."""
        try:
            return self.dof_names.index(name)
        except ValueError:
            raise KeyError(f"no coordinate named {name!r} in '{self.name}'; "
                           f"known: {', '.join(self.dof_names)}") from None


class _Builder:
    def __init__(self):
        self.parent, self.jtype, self.axis, self.R0, self.p0, self.dof = [], [], [], [], [], []
        self.mass, self.com, self.Ic, self.names = [], [], [], []
        self.dof_names, self.dof_k, self.dof_c, self.dof_qrest, self.dof_armature = [], [], [], [], []

    def body(self, name, parent, jtype, axis=_EZ, R0=None, p0=(0, 0, 0), dof_name=None,
             mass=0.0, com=(0, 0, 0), Ic=None, k=0.0, c=0.0, qrest=0.0, armature=0.0) -> int:
        self.names.append(name)
        self.parent.append(parent)
        self.jtype.append(jtype)
        self.axis.append(np.asarray(axis, float) / np.linalg.norm(axis))
        self.R0.append(np.eye(3) if R0 is None else np.asarray(R0, float))
        self.p0.append(np.asarray(p0, float))
        self.mass.append(float(mass))
        self.com.append(np.asarray(com, float))
        self.Ic.append(np.zeros((3, 3)) if Ic is None else np.asarray(Ic, float))
        if jtype == JointType.FIXED:
            self.dof.append(-1)
        else:
            self.dof.append(len(self.dof_names))
            self.dof_names.append(dof_name)
            self.dof_k.append(k)
            self.dof_c.append(c)
            self.dof_qrest.append(qrest)
            self.dof_armature.append(float(armature))
        return len(self.names) - 1


def _joint_chain(b: _Builder, joint, parent_body, R0, p0, mass_props):
    """Append the elementary bodies of one joint; the last one carries the child link."""
    m, com, Ic = mass_props
    n = joint.name
    kind = joint.kind
    if joint.spring is not None:
        ks, cs, rs = (np.broadcast_to(np.asarray(x, float), (joint.ndof,)) for x in joint.spring)
    else:
        ks = cs = rs = np.zeros(joint.ndof)
    arm = np.broadcast_to(np.asarray(joint.armature, float), (joint.ndof,))
    if kind == "fixed":
        return b.body(n, parent_body, JointType.FIXED, R0=R0, p0=p0, mass=m, com=com, Ic=Ic)
    if kind in ("revolute", "prismatic"):
        t = JointType.REVOLUTE if kind == "revolute" else JointType.PRISMATIC
        return b.body(n, parent_body, t, axis=joint.axis, R0=R0, p0=p0, dof_name=f"{n}.q",
                      mass=m, com=com, Ic=Ic, k=ks[0], c=cs[0], qrest=rs[0], armature=arm[0])
    if kind == "universal":
        a = b.body(f"{n}[1]", parent_body, JointType.REVOLUTE, axis=joint.axes[0], R0=R0, p0=p0,
                   dof_name=f"{n}.q1", k=ks[0], c=cs[0], qrest=rs[0], armature=arm[0])
        return b.body(n, a, JointType.REVOLUTE, axis=joint.axes[1], dof_name=f"{n}.q2", mass=m, com=com, Ic=Ic,
                      k=ks[1], c=cs[1], qrest=rs[1], armature=arm[1])
    if kind in ("spherical", "free", "planar"):
        steps = []
        if kind == "planar":
            steps = [(JointType.PRISMATIC, _EX, "x"), (JointType.PRISMATIC, _EY, "y"), (JointType.REVOLUTE, _EZ, "phi")]
        elif kind == "free":
            steps += [(JointType.PRISMATIC, _EX, "x"), (JointType.PRISMATIC, _EY, "y"), (JointType.PRISMATIC, _EZ, "z")]
        if kind != "planar":
            steps += [(JointType.REVOLUTE, _EZ, "psi"), (JointType.REVOLUTE, _EY, "theta"), (JointType.REVOLUTE, _EX, "phi")]
        cur = parent_body
        for s, (t, ax, cname) in enumerate(steps):
            last = s == len(steps) - 1
            cur = b.body(n if last else f"{n}[{cname}]", cur, t, axis=ax,
                         R0=R0 if s == 0 else None, p0=p0 if s == 0 else (0, 0, 0),
                         dof_name=f"{n}.{cname}",
                         mass=m if last else 0.0, com=com if last else (0, 0, 0), Ic=Ic if last else None,
                         k=ks[s], c=cs[s], qrest=rs[s], armature=arm[s])
        return cur
    raise AssertionError(kind)


def _axis_index(axis: np.ndarray) -> np.ndarray:
    """Per body: k where the joint axis is exactly e_k (Model.body_axis_k), else -1."""
    out = np.full(axis.shape[0], -1, np.int64)
    for k in range(3):
        out[(axis == np.eye(3)[k]).all(axis=1)] = k
    return out


def _rotation_about_z(jtype: np.ndarray, axis_k: np.ndarray, R0: np.ndarray) -> np.ndarray:
    """Per body (Model.body_rot_z): 1 where the local rotation is one about z (revolute about e_z, R0 = 1)."""
    eye = (R0 == np.eye(3)).all(axis=(1, 2))
    return ((jtype == JointType.REVOLUTE) & (axis_k == 2) & eye).astype(np.int64)


def compile_mechanism(mech: Mechanism, fric_tol=(1e-12, 1e-10),
                      fric_maxit: int = FRICTION_ITERATIONS_DEFAULT) -> CompiledMechanism:
    """Validate ``mech`` and compile it into flat arrays.

    fric_tol: (absolute N·m or N, relative) tolerance of the friction ↔ reaction
    loop; fric_maxit: the default cap on its Newton iterations, 0 to ITERATION_LIMIT (a run's is
    Data.solver_opt[SolverOption.FRICTION_ITERATIONS]; see :mod:`fmu_mb.kernels.dynamics`).
    """
    if not (isinstance(fric_maxit, (int, np.integer)) and 0 <= fric_maxit <= ITERATION_LIMIT):
        raise ValueError(f"fric_maxit must be an integer in [0, {ITERATION_LIMIT}] (got {fric_maxit!r})")
    mech.validate()
    b = _Builder()
    children = {}
    for j in mech.joints:
        children.setdefault(j.parent, []).append(j)
    link_body, joints, beams, anchors = {}, [], [], {}
    q0_parts, qd0_parts = [], []

    def attach(parent_name, origin):
        """(parent body, placement origin) for a joint/point at ``origin`` on ``parent_name``."""
        origin = np.asarray(origin, float)
        if parent_name == GROUND:
            return -1, origin
        link = mech.link(parent_name)
        if isinstance(link, Beam) and link.flexible:
            info = anchors[parent_name]
            x = float(origin[0])
            r = int(np.searchsorted(info.rfe_start, x, side="right") - 1)
            r = min(max(r, 0), len(info.rfe_start) - 1)
            return info.rfe_bodies[r], origin - np.array([info.rfe_start[r], 0.0, 0.0])
        return link_body[parent_name], origin

    def visit(parent_name):
        for j in children.get(parent_name, []):
            link = mech.link(j.child)
            pb, p0 = attach(parent_name, j.origin)
            R0 = j.placement_rotation()
            dofadr = len(b.dof_names)
            if isinstance(link, Beam) and link.flexible:
                lengths = link.rfe_lengths()
                mp0 = fr_segment(link, lengths[0])
                body0 = _joint_chain(b, j, pb, R0, p0, mp0)
                starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
                rfe_bodies, sde_adr = [body0], []
                s = link.sde_stiffness()
                prev = body0
                for r in range(1, len(lengths)):
                    sde_adr.append(len(b.dof_names))
                    mp = fr_segment(link, lengths[r])
                    za = b.body(f"{link.name}.sde{r}[psi]", prev, JointType.REVOLUTE, axis=_EZ,
                                p0=(lengths[r - 1], 0.0, 0.0), dof_name=f"{link.name}.sde{r}.psi",
                                k=s[0], c=link.damping * s[0])
                    ya = b.body(f"{link.name}.sde{r}[theta]", za, JointType.REVOLUTE, axis=_EY,
                                dof_name=f"{link.name}.sde{r}.theta", k=s[1], c=link.damping * s[1])
                    prev = b.body(f"{link.name}.rfe{r}", ya, JointType.REVOLUTE, axis=_EX,
                                  dof_name=f"{link.name}.sde{r}.phi", mass=mp[0], com=mp[1], Ic=mp[2],
                                  k=s[2], c=link.damping * s[2])
                    rfe_bodies.append(prev)
                info = BeamInfo(link.name, link.length, rfe_bodies, starts, sde_adr)
                anchors[link.name] = info
                beams.append(info)
                link_body[link.name] = body0
            else:
                body = _joint_chain(b, j, pb, R0, p0, link.mass_properties())
                link_body[link.name] = body
            # joint body for reactions: the body carrying the child link frame
            jb = link_body[link.name]
            joints.append(JointInfo(j.name, j.kind, dofadr, j.ndof, jb, bool(j.actuated),
                                    tuple(f"{j.name}.{c}" for c in j.coordinate_names), j.friction))
            q0_parts.append((dofadr, np.zeros(j.ndof) if j.q0 is None else np.atleast_1d(np.asarray(j.q0, float))))
            qd0_parts.append((dofadr, np.zeros(j.ndof) if j.qd0 is None else np.atleast_1d(np.asarray(j.qd0, float))))
            visit(link.name)

    visit(GROUND)
    nb, nv = len(b.names), len(b.dof_names)
    q0, qd0 = np.zeros(nv), np.zeros(nv)
    for adr, v in q0_parts:
        q0[adr:adr + len(v)] = v
    for adr, v in qd0_parts:
        qd0[adr:adr + len(v)] = v

    # ---------------------------------------------------------------- friction
    law = np.zeros(nv, np.int64)
    load = np.zeros(nv, np.int64)
    par = np.zeros((nv, 8))
    geom = np.zeros((nv, 3))
    zidx = -np.ones(nv, np.int64)
    nz = 0
    for ji in joints:
        if ji.friction is None:
            continue
        d = ji.dofadr
        f = ji.friction
        law[d] = f.law.code
        par[d] = f.law.params()
        if isinstance(f.load, fr.Journal):
            load[d] = LoadKind.JOURNAL
            geom[d] = (0.5 * f.load.diameter, 0.0, 0.0)
        elif isinstance(f.load, fr.FixedLoad):
            load[d] = LoadKind.FIXED
            geom[d] = (f.load.value, 0.0, 0.0)
        else:
            load[d] = LoadKind.PIN
            geom[d] = (f.load.R_n, f.load.R_p, f.load.R_b)
        if f.law.n_states:
            zidx[d] = nz
            nz += 1

    # ---------------------------------------------------------------- supports
    base_dof = -1
    base_K = np.zeros((6, 6))
    base_D = np.zeros((6, 6))
    sup_body, sup_point, sup_k, sup_d = [], [], [], []
    lsup_U, lsup_k, lsup_d = [], [], []
    if mech.supports and mech.support_model == "linearized":
        for s in mech.supports:
            jn = next(j for j in mech.joints if j.child == s.link)
            base_dof_s = next(ji.dofadr for ji in joints if ji.name == jn.name)
            if base_dof not in (-1, base_dof_s):
                raise ValueError("linearized supports must all act on the same free-joint link")
            base_dof = base_dof_s
            x, y, z = np.asarray(s.point, float)
            # paper 001: d = U q^(b), q^(b) = [x y z ψ θ φ]
            U = np.array([[1, 0, 0, -y, z, 0],
                          [0, 1, 0, x, 0, -z],
                          [0, 0, 1, 0, -x, y]], float)
            base_K += U.T @ np.diag(s.stiffness) @ U
            base_D += U.T @ np.diag(s.damping) @ U
            lsup_U.append(U)
            lsup_k.append(np.asarray(s.stiffness, float))
            lsup_d.append(np.asarray(s.damping, float))
    else:
        for s in mech.supports:
            bb, pos = attach(s.link, s.point)
            sup_body.append(bb)
            sup_point.append(pos)
            sup_k.append(np.asarray(s.stiffness, float))
            sup_d.append(np.asarray(s.damping, float))

    points = {}
    for p in mech.points:
        points[p.name] = attach(p.link, p.position)

    con = _compile_constraints(mech, attach, joints, list(b.dof_names))
    con["arrays"]["con_opt"][SolverOption.FRICTION_ITERATIONS] = fric_maxit
    bf = [(attach(f.link, f.point), np.asarray(f.direction, float) / np.linalg.norm(f.direction),
           attach(f.reaction_link, f.reaction_point) if f.reaction_link else (-1, np.zeros(3)))
          for f in mech.forces]

    stop = np.zeros((4, nv))
    stop[0], stop[1] = -np.inf, np.inf
    for ji, j in zip(joints, (mech.joint(ji.name) for ji in joints)):
        if j.stops is not None:
            for row, value in enumerate(j.stops):
                stop[row, ji.dofadr:ji.dofadr + ji.ndof] = np.broadcast_to(np.asarray(value, float), (ji.ndof,))
    i64 = lambda a: np.asarray(a, np.int64).reshape(-1)
    axis, R0 = np.array(b.axis).reshape(nb, 3), np.array(b.R0).reshape(nb, 3, 3)
    axis_k = _axis_index(axis)
    model = Model(
        nbody=nb, nv=nv, nz=nz, nx=2 * nv + nz + 3, nc=con["nc"],
        body_parent=i64(b.parent), body_jtype=i64(b.jtype), body_axis=axis, body_axis_k=axis_k,
        body_rot_z=_rotation_about_z(i64(b.jtype), axis_k, R0), body_R0=R0, body_p0=np.array(b.p0).reshape(nb, 3),
        body_dof=i64(b.dof), body_mass=np.array(b.mass, float),
        body_com=np.array(b.com).reshape(nb, 3), body_Ic=np.array(b.Ic).reshape(nb, 3, 3),
        dof_body=i64([b.dof.index(d) for d in range(nv)]),
        dof_k=np.array(b.dof_k, float).reshape(nv), dof_c=np.array(b.dof_c, float).reshape(nv),
        dof_qrest=np.array(b.dof_qrest, float).reshape(nv), dof_armature=np.array(b.dof_armature, float).reshape(nv),
        dof_lo=stop[0].copy(), dof_hi=stop[1].copy(), dof_stop_k=stop[2].copy(), dof_stop_c=stop[3].copy(),
        base_dof=i64([base_dof]), base_K=base_K, base_D=base_D,
        lsup_U=np.array(lsup_U, float).reshape(-1, 3, 6), lsup_k=np.array(lsup_k, float).reshape(-1, 3),
        lsup_d=np.array(lsup_d, float).reshape(-1, 3),
        sup_body=i64(sup_body), sup_point=np.array(sup_point, float).reshape(-1, 3),
        sup_anchor=np.zeros((len(sup_body), 3)),
        sup_k=np.array(sup_k, float).reshape(-1, 3), sup_d=np.array(sup_d, float).reshape(-1, 3),
        dof_fric_law=law, dof_fric_load=load, dof_fric_par=par, dof_fric_geom=geom, dof_fric_z=zidx,
        fric_dofs=np.flatnonzero(law).astype(np.int64),
        fric_tol=np.array(fric_tol, float),
        gravity=np.asarray(mech.gravity, float).copy(),
        bf_body=np.array([x[0][0] for x in bf], np.int64),
        bf_point=np.array([x[0][1] for x in bf], float).reshape(-1, 3),
        bf_dir=np.array([x[1] for x in bf], float).reshape(-1, 3),
        bf_rbody=np.array([x[2][0] for x in bf], np.int64),
        bf_rpoint=np.array([x[2][1] for x in bf], float).reshape(-1, 3),
        **con["arrays"],
    )
    cm = CompiledMechanism(
        name=mech.name, model=model, mechanism=mech, dof_names=list(b.dof_names), body_names=list(b.names),
        joints=joints, beams=beams, points=points, link_body=link_body,
        actuated_dofs=np.array([d for ji in joints if ji.actuated for d in range(ji.dofadr, ji.dofadr + ji.ndof)],
                               np.int64),
        q0=q0, qd0=qd0, constraints=con["infos"], row_labels=con["labels"], trajectories=con["trajectories"],
    )
    if len(sup_body):
        # supports are undeformed in the reference configuration q = 0 (paper 000: r_E0)
        oR, op = reference_placements(model)
        for s in range(len(sup_body)):
            bb = sup_body[s]
            model.sup_anchor[s] = op[bb] + oR[bb] @ model.sup_point[s]
    freeze(model)
    return cm


def reference_placements(model: Model):
    """World orientation (nbody, 3, 3) and origin (nbody, 3) of every body frame at q = 0: the
    joint frames composed along the tree (kernels.kinematics.forward_kinematics at q = 0, with
    its order of operations, so both give the same bits; no numba needed)."""
    nb, parent, R0, p0 = model.nbody, model.body_parent, model.body_R0, model.body_p0
    oR, op = np.empty((nb, 3, 3)), np.empty((nb, 3))
    for i in range(nb):
        p = parent[i]
        if p < 0:
            oR[i], op[i] = R0[i], p0[i]
            continue
        for r in range(3):
            for c in range(3):
                oR[i, r, c] = oR[p, r, 0] * R0[i, 0, c] + oR[p, r, 1] * R0[i, 1, c] + oR[p, r, 2] * R0[i, 2, c]
            op[i, r] = op[p, r] + oR[p, r, 0] * p0[i, 0] + oR[p, r, 1] * p0[i, 1] + oR[p, r, 2] * p0[i, 2]
    return oR, op


def fr_segment(beam: Beam, length: float):
    """Mass properties of one rigid finite element of ``beam``."""
    from .inertia import prism_segment
    return prism_segment(beam.density, beam.area, beam.Iy, beam.Iz, length)


def _compile_constraints(mech: Mechanism, attach, joints, dof_names) -> dict:
    """Constraint rows and trajectory segments as flat arrays (see MODEL_FIELDS)."""
    rows, objs, infos, trajs, labels = [], [], [], {}, []
    for ci, c in enumerate(mech.constraints):
        crow = c.rows()
        idx = list(range(len(rows), len(rows) + len(crow)))
        rows += crow
        objs += [ci] * len(crow)
        labels += [r.label for r in crow]
        for r in crow:
            if r.trajectory is not None and id(r.trajectory) not in trajs:
                trajs[id(r.trajectory)] = (len(trajs), r.trajectory)
        links = c.links()
        la = links[0] if links else None
        if la is None:
            body, fR, fp = -1, np.eye(3), np.zeros(3)
        else:
            origin = getattr(c, "origin_a", getattr(c, "point", getattr(c, "point_a", (0.0, 0.0, 0.0))))
            body, fp = attach(la, origin)
            rot = getattr(c, "rotation_a", None)
            fR = np.eye(3) if rot is None else np.asarray(rot, float)
            if not isinstance(c, CutJoint):
                fR = np.eye(3)
        unit = c.unit
        if crow and all(r.kind == RowKind.COORD for r in crow):
            j = next(j for j in joints if j.name == crow[0].dof[0])
            unit = "rad" if _dof_is_rotation(joints, j, crow[0].dof[1]) else "m"
        infos.append(ConstraintInfo(c.name, type(c).__name__, c.group, idx, [r.label for r in crow], unit,
                                    body, fR, np.asarray(fp, float), c))
    nc = len(rows)
    tlist = [t for _, t in sorted(trajs.values(), key=lambda x: x[0])]
    z3 = lambda: np.zeros((nc, 3))
    kind, group, obj = (np.zeros(nc, np.int64) for _ in range(3))
    ca, cb, side, dof, traj, rel, elim = (np.zeros(nc, np.int64) for _ in range(7))
    pa, pb, e, u, v, tdir = z3(), z3(), z3(), z3(), z3(), z3()
    for k, r in enumerate(rows):
        kind[k] = r.kind
        group[k] = Group[mech.constraints[objs[k]].group.upper()]
        obj[k] = objs[k]
        ba, pa[k] = attach(r.link_a, r.pa)
        bb, pb[k] = attach(r.link_b, r.pb)
        ca[k], cb[k] = ba, bb
        side[k] = r.side
        e[k], u[k], v[k] = r.e, r.u, r.v
        if r.kind == RowKind.ELLIPSE:               # frame axes and centre are world quantities
            pb[k] = r.pb
        dof[k] = -1
        if r.kind == RowKind.COORD:
            j = next(j for j in joints if j.name == r.dof[0])
            dof[k] = j.dofadr + r.dof[1]
        traj[k] = trajs[id(r.trajectory)][0] if r.trajectory is not None else -1
        tdir[k] = r.tdir
        rel[k] = int(r.relative)
        elim[k] = int(r.label in mech.solver.eliminate)
    # trajectory segments
    firsts, counts, sk, st, sp = [], [], [], [], []
    for t in tlist:
        kk, tt, pp = t.table()
        firsts.append(sum(counts))
        counts.append(kk.size)
        sk.append(kk)
        st.append(tt)
        sp.append(pp)
    seg_kind = np.concatenate(sk) if sk else np.zeros(0, np.int64)
    seg_time = np.concatenate(st) if st else np.zeros((0, 2))
    seg_par = np.concatenate(sp) if sp else np.zeros((0, SEGMENT_WIDTH))
    dep = []
    for name in mech.solver.dependent:
        if name not in dof_names:
            raise ValueError(f"Mechanism '{mech.name}': solver.dependent names unknown coordinate {name!r} "
                             f"(coordinates: {', '.join(dof_names)})")
        dep.append(dof_names.index(name))
    s = mech.solver
    opt = np.zeros(len(SolverOption))
    O = SolverOption
    opt[O.FORMULATION] = Formulation[s.formulation.upper()]
    opt[O.ALPHA], opt[O.BETA], opt[O.PROJECTION] = s.alpha, s.beta, float(s.projection)
    opt[O.PROJECTION_TOL], opt[O.RANK_TOL], opt[O.REPARTITION_RATIO] = s.projection_tol, s.rank_tol, s.repartition_ratio
    opt[O.ELIMINATED] = float(elim.sum())
    opt[O.ROS2_GAMMA] = ROS2_GAMMA_DAMPED        # the Simulator sets its method's γ
    opt[O.PROJECTION_ITERATIONS] = s.projection_iterations
    arrays = dict(
        con_kind=kind, con_group=group, con_obj=obj, con_a=ca, con_pa=pa, con_b=cb, con_pb=pb, con_side=side,
        con_e=e, con_u=u, con_v=v, con_dof=dof, con_traj=traj, con_tdir=tdir, con_rel=rel,
        con_elim=elim, dep_user=np.array(dep, np.int64), con_opt=opt,
        traj_first=np.array(firsts, np.int64), traj_count=np.array(counts, np.int64),
        seg_kind=np.asarray(seg_kind, np.int64), seg_time=np.asarray(seg_time, float).reshape(-1, 2),
        seg_par=np.asarray(seg_par, float).reshape(-1, SEGMENT_WIDTH),
        cobj_body=np.array([ci.body for ci in infos], np.int64),
        cobj_R=np.array([ci.frame_R for ci in infos], float).reshape(-1, 3, 3),
        cobj_p=np.array([ci.frame_p for ci in infos], float).reshape(-1, 3),
        cobj_frame=np.array([int(ci.type == "CutJoint") for ci in infos], np.int64),
    )
    return {"nc": nc, "arrays": arrays, "infos": infos, "labels": labels, "trajectories": tlist}


def _dof_is_rotation(joints, j, k) -> bool:
    if j.kind in ("revolute", "universal", "spherical"):
        return True
    if j.kind == "prismatic":
        return False
    names = {"free": ("x", "y", "z", "psi", "theta", "phi"), "planar": ("x", "y", "phi")}[j.kind]
    return names[k] in ("psi", "theta", "phi")
