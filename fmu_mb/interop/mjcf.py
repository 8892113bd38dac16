"""MJCF import: a MuJoCo model file, compiled by MuJoCo's own compiler, into plain robot data.

    fmu-mb build robot.xml [--name NAME] [--flexible LINK=SPEC ...] [--passive JOINT ...] [--strict]

``mujoco.MjModel.from_xml_path`` resolves everything MJCF leaves implicit (includes, defaults,
inertias from geoms, ``fromto``, frames, ``ref``); this module reads its compiled arrays, which are
unambiguous, into RobotLink / RobotJoint (fmu_mb.model.robot) and CutJoint, the same data a URDF
becomes, so the model file, the options and the checks are the URDF path's. Mapping:

* the world body → a massless root link ``world`` welded to the ground; every body → a link whose
  frame is the body frame moved to its last joint's position (MuJoCo rotates a body about
  ``jnt_pos``): centre of mass and children are re-expressed there;
* ``hinge`` → revolute, ``slide`` → prismatic, ``ball`` → spherical (ZYX Euler coordinates ψ θ φ:
  singular at θ = ±90°, where MuJoCo's quaternion is not), ``free`` → free (world position and ZYX
  Euler angles of the body: x y z ψ θ φ); several joints in one body → a chain through massless
  intermediate links ``<body>_<joint>_frame``, in MuJoCo's order; hinge and slide coordinates are
  MuJoCo's minus the joint's ``ref``;
* ``armature`` → Joint.armature; ``damping``, ``stiffness``, ``springref`` → a passive spring-damper
  (Joint.spring, always on; on ball and free joints it acts on the Euler rates, which are MuJoCo's
  local angular velocity at the reference orientation only); ``frictionloss`` → a Coulomb friction of
  that size (FMU option ``model.friction`` = ``mjcf``, as URDF's ``<dynamics friction>``); a limited
  ``range`` of a hinge or slide → joint stops (``model.limits``, as URDF limits);
* actuators on a joint → that joint gets a drive input (``tau_drive``, the joint torque or force:
  MuJoCo's ``gear``·ctrl for a motor); other actuators' gains and biases (position and velocity
  servos) are the user's controller, not the plant's, and are not imported (one warning); joints
  without an actuator are passive;
* ``connect`` and ``weld`` equalities between bodies → cut joints (spherical, fixed: closed loops),
  holding the geometry of the reference pose ``qpos0``;
* everything else (geoms as contact shapes, contacts, tendons, sites, sensors, keyframes, other
  equalities) is ignored, with one summary warning.

Names are made distinct identifiers as for URDF (fmu_mb.interop.names); inertias that are not physical
are repaired or refused (``strict``) as for URDF.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.inertia import inertia_defect, nearest_physical_inertia
from ..model.constraints import CutJoint
from ..model.robot import RobotJoint, RobotLink
from ..registry import identifier
from .names import distinct_names
from .urdf_read import UrdfError

#: MuJoCo's joint types (mjtJoint) and the robot data's
_TYPES = {0: "free", 1: "ball", 2: "prismatic", 3: "revolute"}


class MjcfError(UrdfError):
    """An MJCF file that cannot be imported (one line: the file and what to fix)."""


def _mat(quat) -> np.ndarray:
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = np.asarray(quat, float) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def zyx(R) -> tuple:
    """(ψ, θ, φ) with R = Rz(ψ)·Ry(θ)·Rx(φ)."""
    R = np.asarray(R, float)
    return (float(np.arctan2(R[1, 0], R[0, 0])), float(-np.arcsin(np.clip(R[2, 0], -1.0, 1.0))),
            float(np.arctan2(R[2, 1], R[2, 2])))


def _tuple(a) -> tuple:
    a = np.asarray(a, float)
    return tuple(map(float, a)) if a.ndim == 1 else tuple(tuple(map(float, r)) for r in a)


def _compile(path: Path, warnings: list):
    """(mujoco, MjModel) of the file; the compiler's warnings go to ``warnings`` (not to stderr and
    MUJOCO_LOG.TXT in the working folder, where MuJoCo's default handler writes them)."""
    try:
        import mujoco
    except ImportError:
        raise MjcfError(f"{path}: MJCF import needs MuJoCo's compiler: pip install mujoco") from None
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda text: warnings.append(f"MuJoCo's compiler: {' '.join(text.split())}"))
    try:
        return mujoco, mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:         # MuJoCo's compiler: "Error: ... Element name 'x', id 3, line 12"
        raise MjcfError(f"{path}: MuJoCo's compiler refuses the file: {' '.join(str(exc).split())}") from None
    finally:
        mujoco.set_mju_user_warning(previous)


def read(path, strict: bool = False) -> dict:
    """dict(name, root, links, joints, cuts, warnings, link_ids, joint_ids) of the MJCF file at ``path``."""
    path = Path(path)
    if not path.is_file():
        raise MjcfError(f"{path}: no such MJCF file")
    warnings: list[str] = []
    mujoco, m = _compile(path, warnings)
    obj = mujoco.mjtObj

    def name(kind, i, fallback):
        n = mujoco.mj_id2name(m, kind, i)
        return n if n else fallback

    bodies = [name(obj.mjOBJ_BODY, b, f"body{b}") for b in range(m.nbody)]
    bodies[0] = "world"
    jnames = [name(obj.mjOBJ_JOINT, j, f"{bodies[m.jnt_bodyid[j]]}_joint{j}") for j in range(m.njnt)]
    actuated, not_motors, elsewhere, gears = set(), [], [], {}
    for a in range(m.nu):
        aname = name(obj.mjOBJ_ACTUATOR, a, f"actuator{a}")
        if m.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT:
            elsewhere.append(aname)
            continue
        j = int(m.actuator_trnid[a, 0])
        actuated.add(j)
        gears[jnames[j]] = float(m.actuator_gear[a, 0])
        motor = (m.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED and m.actuator_biastype[a] ==
                 mujoco.mjtBias.mjBIAS_NONE and m.actuator_dyntype[a] == mujoco.mjtDyn.mjDYN_NONE)
        if not motor:
            not_motors.append(aname)
    if not_motors:
        warnings.append(f"actuators {', '.join(not_motors)} are not joint motors: their joints get a torque input "
                        "(the drive), their gains, biases and dynamics are not imported")
    if elsewhere:
        warnings.append(f"actuators {', '.join(elsewhere)} act through a tendon, site or body, not a joint: not "
                        "imported")

    # raw link and joint names: bodies, the intermediate frames of bodies with several joints, joints
    raw_links, chains = ["world"], {}
    for b in range(1, m.nbody):
        js = list(range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b])) if m.body_jntnum[b] > 0 else []
        chains[b] = js
        raw_links += [f"{bodies[b]}_{jnames[j]}_frame" for j in js[:-1]] + [bodies[b]]
    fixed_names = [f"{bodies[b]}_weld" for b in range(1, m.nbody) if not chains[b]]
    raw_joints = [jnames[j] for b in range(1, m.nbody) for j in chains[b]] + fixed_names
    for kind, names_ in (("body", bodies), ("joint", jnames)):
        dup = sorted({n for n in names_ if names_.count(n) > 1})
        if dup:
            raise MjcfError(f"{path}: {kind} names {dup} occur twice")
    link_ids, joint_ids, renames = distinct_names(raw_links, raw_joints, "world")
    warnings = renames + warnings

    # kinematics at qpos0: body frames in the world, for equalities
    data = mujoco.MjData(m)
    mujoco.mj_kinematics(m, data)
    offset = {0: np.zeros(3)}                 # body b's link frame = body frame moved by offset[b] (body axes)
    links = [RobotLink(link_ids["world"])]
    joints = []
    for b in range(1, m.nbody):
        parent = int(m.body_parentid[b])
        plink = link_ids[bodies[parent]]
        pos = np.asarray(m.body_pos[b], float) - offset[parent]
        R = _mat(m.body_quat[b])
        js = chains[b]
        prev_p, prev_link = None, plink
        for k, j in enumerate(js):
            jtype = _TYPES[int(m.jnt_type[j])]
            p = np.zeros(3) if jtype == "free" else np.asarray(m.jnt_pos[j], float)
            last = k == len(js) - 1
            child_raw = bodies[b] if last else f"{bodies[b]}_{jnames[j]}_frame"
            if not last:
                links.append(RobotLink(link_ids[child_raw]))
            if jtype == "free":
                if parent != 0 or len(js) > 1:
                    raise MjcfError(f"{path}: body '{bodies[b]}': a free joint must be the only joint of a top-level "
                                    "body")
                origin, rot = np.zeros(3), np.eye(3)
                start = (*map(float, data.xpos[b]), *zyx(data.xmat[b].reshape(3, 3)))
            elif prev_p is None:
                origin, rot = pos + R @ p, R
                start = None
            else:
                origin, rot = p - prev_p, np.eye(3)
                start = None
            dof = int(m.jnt_dofadr[j])
            nd = {"free": 6, "ball": 3}.get(jtype, 1)
            damping = np.asarray(m.dof_damping[dof:dof + nd], float)
            armature = np.asarray(m.dof_armature[dof:dof + nd], float)
            stiffness = float(m.jnt_stiffness[j])
            lower = upper = None
            ref = 0.0
            if nd == 1:
                ref = float(m.qpos0[m.jnt_qposadr[j]])
                if m.jnt_limited[j]:
                    lower, upper = (float(v) - ref for v in m.jnt_range[j])
                    if not lower < upper:
                        raise MjcfError(f"{path}: joint '{jnames[j]}': range {tuple(m.jnt_range[j])} must have "
                                        "lower < upper")
                spring_ref = float(m.qpos_spring[m.jnt_qposadr[j]]) - ref
            else:
                if m.jnt_limited[j]:
                    warnings.append(f"joint '{jnames[j]}': the {jtype} joint's range (a cone) is not imported")
                spring_ref = 0.0
                if stiffness:
                    warnings.append(f"joint '{jnames[j]}': the {jtype} joint's stiffness is not imported")
                    stiffness = 0.0
            if not np.allclose(damping, damping[0]) or not np.allclose(armature, armature[0]):
                warnings.append(f"joint '{jnames[j]}': per-axis damping or armature differ; their mean is used")
            spring = (stiffness, float(damping.mean()), spring_ref) if stiffness or damping.any() else None
            frictionloss = float(m.dof_frictionloss[dof])
            if frictionloss and nd > 1:
                warnings.append(f"joint '{jnames[j]}': frictionloss of a {jtype} joint is not imported")
                frictionloss = 0.0
            joints.append(RobotJoint(
                joint_ids[jnames[j]], jtype, prev_link, link_ids[child_raw], origin=_tuple(origin),
                rotation=_tuple(rot), axis=_tuple(m.jnt_axis[j]) if nd == 1 else (0.0, 0.0, 1.0),
                lower=lower, upper=upper, friction=frictionloss, armature=float(armature.mean()), spring=spring,
                start=start if start is not None else ((0.0,) * nd if nd > 1 else None)))
            prev_p, prev_link = p, link_ids[child_raw]
        if not js:
            joints.append(RobotJoint(joint_ids[f"{bodies[b]}_weld"], "fixed", plink, link_ids[bodies[b]],
                                     origin=_tuple(pos), rotation=_tuple(R)))
            prev_p = np.zeros(3)
        offset[b] = prev_p
        mass = float(m.body_mass[b])
        Ri = _mat(m.body_iquat[b])
        J = Ri @ np.diag(np.asarray(m.body_inertia[b], float)) @ Ri.T
        defect = inertia_defect(mass, J)
        if defect:
            if strict:
                raise MjcfError(f"{path}: body '{bodies[b]}': {defect} (--strict refuses what would otherwise be "
                                "repaired)")
            fixed = nearest_physical_inertia(mass, J)
            warnings.append(f"body '{bodies[b]}': {defect.split(' (')[0]}; repaired to the nearest physical inertia")
            J = fixed
        links.append(RobotLink(link_ids[bodies[b]], mass, _tuple(np.asarray(m.body_ipos[b], float) - offset[b]),
                               _tuple(J)))
    actuated_ids = {joint_ids[jnames[j]] for j in actuated}
    passive = [jt.name for jt in joints if jt.type != "fixed" and jt.name not in actuated_ids]

    cuts, ignored = [], []
    for e in range(m.neq):
        ename = name(obj.mjOBJ_EQUALITY, e, f"equality{e}")
        etype = int(m.eq_type[e])
        if etype not in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD) or m.eq_objtype[e] != obj.mjOBJ_BODY:
            ignored.append(f"equality '{ename}'")
            continue
        if not m.eq_active0[e]:
            warnings.append(f"equality '{ename}' is inactive in the file: not imported")
            continue
        b1, b2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        frames = []
        for b in (b1, b2):
            Rw = data.xmat[b].reshape(3, 3)
            frames.append((Rw, np.asarray(data.xpos[b], float) + Rw @ offset[b]))     # the link frame in the world
        (R1, p1), (R2, p2) = frames
        if etype == mujoco.mjtEq.mjEQ_CONNECT:
            anchor = p1 - R1 @ offset[b1] + R1 @ np.asarray(m.eq_data[e, 0:3], float)   # world, at qpos0
            cuts.append(CutJoint(identifier(ename), "spherical", link_ids[bodies[b1]], link_ids[bodies[b2]],
                                 origin_a=_tuple(R1.T @ (anchor - p1)), origin_b=_tuple(R2.T @ (anchor - p2))))
        else:                                 # weld: the relative pose at qpos0, about body2's link frame
            cuts.append(CutJoint(identifier(ename), "fixed", link_ids[bodies[b1]], link_ids[bodies[b2]],
                                 origin_a=_tuple(R1.T @ (p2 - p1)), origin_b=(0.0, 0.0, 0.0),
                                 rotation_a=_tuple(R1.T @ R2), rotation_b=None))
    skipped = [f"{n} {what}" for n, what in ((m.ngeom, "geoms (contact shapes)"), (m.ntendon, "tendons"),
                                             (m.nsite, "sites"), (m.nsensor, "sensors"), (m.nkey, "keyframes"))
               if n] + ignored
    if skipped:
        warnings.append(f"not imported: {', '.join(skipped)} (fmu_mb models joints, inertias, drives and loops)")
    if gears:
        warnings.append("drive inputs are joint torques or forces: MuJoCo's motor ctrl times its gear ("
                        + ", ".join(f"{joint_ids[j]} ×{g:g}" for j, g in gears.items()) + ")")
    return dict(name=identifier(_model_name(path) or path.stem), root=link_ids["world"], links=links,
                joints=joints, cuts=cuts, passive=passive, gravity=_tuple(m.opt.gravity), warnings=warnings,
                link_ids=link_ids, joint_ids=joint_ids)


def _model_name(path: Path) -> str | None:
    """The ``<mujoco model="...">`` attribute (MuJoCo's compiled model keeps it only in its text)."""
    from lxml import etree
    try:
        for _, el in etree.iterparse(str(path), events=("start",)):
            return el.get("model")
    except etree.XMLSyntaxError:
        return None
    return None
