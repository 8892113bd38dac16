"""A Pinocchio model of an fmu_mb mechanism description, built independently of our compiler.

Each physical joint maps to the matching Pinocchio joint (spherical →
``JointModelSphericalZYX``, free → ``Translation`` + ``SphericalZYX`` composite,
universal → two ``RevoluteUnaligned`` in a composite), so the comparison also
checks our expansion of multi-DOF joints into elementary bodies. Flexible beams
are expanded here by the RFEM rules of paper 001 eq. (7) with SphericalZYX sdes.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from fmu_mb.model import GROUND, Beam, Mechanism
from fmu_mb.model.inertia import prism_segment


def _joint_model(j):
    if j.kind == "revolute":
        return pin.JointModelRevoluteUnaligned(np.asarray(j.axis, float) / np.linalg.norm(j.axis))
    if j.kind == "prismatic":
        return pin.JointModelPrismaticUnaligned(np.asarray(j.axis, float) / np.linalg.norm(j.axis))
    if j.kind == "spherical":
        return pin.JointModelSphericalZYX()
    if j.kind == "free":
        c = pin.JointModelComposite()
        c.addJoint(pin.JointModelTranslation())
        c.addJoint(pin.JointModelSphericalZYX())
        return c
    if j.kind == "universal":
        c = pin.JointModelComposite()
        a1, a2 = (np.asarray(a, float) / np.linalg.norm(a) for a in j.axes)
        c.addJoint(pin.JointModelRevoluteUnaligned(a1))
        c.addJoint(pin.JointModelRevoluteUnaligned(a2))
        return c
    raise ValueError(f"no Pinocchio equivalent for joint kind {j.kind!r}")


def to_pinocchio(mech: Mechanism):
    """Return (pin.Model, joint_ids) with joint_ids[name] = Pinocchio joint id.

    Joints are added in the same depth-first order fmu_mb uses, so coordinate
    vectors line up. Flexible beams add joints named '<beam>.sde<r>'."""
    model = pin.Model()
    model.gravity = pin.Motion(np.r_[np.asarray(mech.gravity, float), 0.0, 0.0, 0.0])
    children = {}
    for j in mech.joints:
        children.setdefault(j.parent, []).append(j)
    frame_of = {GROUND: (0, [0.0])}  # link -> (joint id of rfe 0 or link, rfe starts)
    rfe_joint = {}
    ids = {}

    def parent_joint(name, origin):
        origin = np.asarray(origin, float)
        if name == GROUND:
            return 0, origin
        jid, starts = frame_of[name]
        if len(starts) == 1:
            return jid, origin
        r = int(np.searchsorted(starts, origin[0], side="right") - 1)
        r = min(max(r, 0), len(starts) - 1)
        return rfe_joint[(name, r)], origin - np.array([starts[r], 0.0, 0.0])

    def visit(pname):
        for j in children.get(pname, []):
            link = mech.link(j.child)
            pid, origin = parent_joint(pname, j.origin)
            R0 = np.eye(3) if j.rotation is None else np.asarray(j.rotation, float)
            if j.kind == "fixed":
                # weld: append the link's inertia to the parent joint at the placement
                if isinstance(link, Beam) and link.flexible:
                    raise ValueError("to_pinocchio: a welded flexible beam needs a parent joint of its own")
                m, c, I = link.mass_properties()
                model.appendBodyToJoint(pid, pin.Inertia(float(m), np.asarray(c, float), np.asarray(I, float)),
                                        pin.SE3(R0, origin))
                if len(children.get(link.name, [])):
                    raise ValueError("to_pinocchio: welded links may not carry children")
                continue
            jid = model.addJoint(pid, _joint_model(j), pin.SE3(R0, origin), j.name)
            ids[j.name] = jid
            jm = model.joints[jid]
            model.armature[jm.idx_v:jm.idx_v + jm.nv] = np.broadcast_to(np.asarray(j.armature, float), (jm.nv,))
            if isinstance(link, Beam) and link.flexible:
                L = link.rfe_lengths()
                starts = np.concatenate([[0.0], np.cumsum(L)[:-1]])
                m, c, I = prism_segment(link.density, link.area, link.Iy, link.Iz, L[0])
                model.appendBodyToJoint(jid, pin.Inertia(m, c, I), pin.SE3.Identity())
                rfe_joint[(link.name, 0)] = jid
                prev = jid
                for r in range(1, len(L)):
                    sid = model.addJoint(prev, pin.JointModelSphericalZYX(),
                                         pin.SE3(np.eye(3), np.array([L[r - 1], 0.0, 0.0])), f"{link.name}.sde{r}")
                    m, c, I = prism_segment(link.density, link.area, link.Iy, link.Iz, L[r])
                    model.appendBodyToJoint(sid, pin.Inertia(m, c, I), pin.SE3.Identity())
                    rfe_joint[(link.name, r)] = sid
                    ids[f"{link.name}.sde{r}"] = sid
                    prev = sid
                frame_of[link.name] = (jid, starts)
            else:
                m, c, I = link.mass_properties()
                model.appendBodyToJoint(jid, pin.Inertia(float(m), np.asarray(c, float), np.asarray(I, float)),
                                        pin.SE3.Identity())
                frame_of[link.name] = (jid, [0.0])
            visit(link.name)

    visit(GROUND)
    return model, ids


def support_fext(mech: Mechanism, model, data, ids, q, v):
    """External forces of exact supports (paper 000 eq. 15) as Pinocchio fext, computed
    from Pinocchio's own kinematics: F = −S·(r − r_0) − D·ṙ at the attachment point."""
    pin.forwardKinematics(model, data, np.zeros(model.nq), np.zeros(model.nv))
    anchors = []
    child_joint = {j.child: j.name for j in mech.joints}
    for s in mech.supports:
        jid = ids[child_joint[s.link]]
        anchors.append(data.oMi[jid].act(np.asarray(s.point, float)))
    pin.forwardKinematics(model, data, q, v)
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for s, r0 in zip(mech.supports, anchors):
        jid = ids[child_joint[s.link]]
        M = data.oMi[jid]
        p_local = np.asarray(s.point, float)
        r = M.act(p_local)
        vloc = data.v[jid]
        rdot = M.rotation @ (vloc.linear + np.cross(vloc.angular, p_local))
        F = -np.asarray(s.stiffness) * (r - r0) - np.asarray(s.damping) * rdot
        F_loc = M.rotation.T @ F
        fext[jid] += pin.Force(F_loc, np.cross(p_local, F_loc))
    return fext
