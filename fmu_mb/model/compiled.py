"""Flat-array representation of a mechanism: ``Model`` (constant) and ``Data`` (work arrays).

Kernels only ever see these two named tuples of numpy arrays (Pinocchio's
Model/Data split; MuJoCo's ``<entity>_<attribute>`` naming).

The compiled tree consists of **elementary bodies**, each moved relative to its
parent by at most one coordinate: a fixed weld, a revolute about ``body_axis``
or a prismatic along it. Multi-DOF joints become chains of elementary bodies
with massless intermediates (spherical: Rz→Ry→Rx; universal: R→R; free:
Px→Py→Pz→Rz→Ry→Rx); a flexible beam becomes its rigid finite elements joined
by spherical spring-damping elements. Bodies are stored parents-first, so
forward passes run 0..nbody-1 and backward passes the other way.

Frames: body i's frame is the joint frame after the joint motion. ``body_R0``,
``body_p0`` place the joint frame in the parent body frame (rotation, origin).
Spatial vectors are split into an angular and a linear 3-vector; wrenches into
moment and force, all in body coordinates.

State vector ``x`` (length ``nx = 2·nv + nz + 3``):
    x[0:nv]           q, generalized coordinates (rad, m)
    x[nv:2nv]         q̇, generalized velocities
    x[2nv:2nv+nz]     bristle states z of Dahl/LuGre friction
    x[2nv+nz]         dissipated energy E_diss (J): dampers and friction
    x[2nv+nz+1]       work W_in (J) done by driving inputs
    x[2nv+nz+2]       work W_c (J) done by constraint forces (programmed motion, Baumgarte)
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

#: elementary joint types
FIXED, REVOLUTE, PRISMATIC = 0, 1, 2

MODEL_FIELDS = (
    "nbody",        # int  number of elementary bodies
    "nv",           # int  number of coordinates (= velocities; Euler-angle rates, no quaternions)
    "nz",           # int  number of friction (bristle) states
    "nx",           # int  state length 2·nv + nz + 3
    "nc",           # int  number of constraint rows
    "body_parent",  # (nbody,) int64  parent body, -1 = ground
    "body_jtype",   # (nbody,) int64  FIXED / REVOLUTE / PRISMATIC
    "body_axis",    # (nbody, 3)      unit axis in the joint frame
    "body_R0",      # (nbody, 3, 3)   joint frame orientation in the parent frame
    "body_p0",      # (nbody, 3)      joint frame origin in the parent frame, m
    "body_dof",     # (nbody,) int64  coordinate index, -1 for FIXED
    "body_mass",    # (nbody,)        kg
    "body_com",     # (nbody, 3)      centre of mass in body frame, m
    "body_Ic",      # (nbody, 3, 3)   inertia about the centre of mass, body axes, kg·m²
    "dof_body",     # (nv,) int64     body moved by each coordinate
    "dof_k",        # (nv,)           joint-space spring stiffness (RFEM sdes, joint springs)
    "dof_c",        # (nv,)           joint-space damping
    "dof_qrest",    # (nv,)           spring rest position
    "base_dof",     # (1,) int64      first coordinate of a linearized flexible base, -1 if none
    "base_K",       # (6, 6)          Σ Uᵀ S U of the linearized supports (paper 001)
    "base_D",       # (6, 6)          Σ Uᵀ D U
    "sup_body",     # (nsup,) int64   exact supports (paper 000 eq. 15): body
    "sup_point",    # (nsup, 3)       attachment point, body frame
    "sup_anchor",   # (nsup, 3)       undeformed world position r_E0
    "sup_k",        # (nsup, 3)       stiffness along world axes, N/m
    "sup_d",        # (nsup, 3)       damping, N·s/m
    "dof_fric_law",   # (nv,) int64   friction law code (fmu_mb.model.friction.LAW_*)
    "dof_fric_load",  # (nv,) int64   LOAD_JOURNAL / LOAD_PIN
    "dof_fric_par",   # (nv, 8)       law parameters (see kernels.friction)
    "dof_fric_geom",  # (nv, 3)       journal: (d/2, 0, 0); pin: (R_n, R_p, R_b)
    "dof_fric_z",     # (nv,) int64   index of the bristle state in z, -1 if none
    "fric_dofs",      # (nf,) int64   coordinates with friction
    "fric_tol",     # (2,)           fixed-point tolerance (absolute N·m, relative)
    "fric_maxit",   # (1,) int64     fixed-point iteration cap
    "gravity",      # (3,)           world gravity, m/s²
    # constraint rows (fmu_mb.model.constraints; kernels.constraints)
    "con_kind",     # (nc,) int64    POS / ORI / COORD / VEL / ELLIPSE
    "con_group",    # (nc,) int64    0 kinematic, 1 programmed, 2 base, 3 nonholonomic
    "con_obj",      # (nc,) int64    index of the constraint object the row belongs to
    "con_a",        # (nc,) int64    body a (-1 ground)
    "con_pa",       # (nc, 3)        point on a, body-a frame
    "con_b",        # (nc,) int64    body b (-1 ground)
    "con_pb",       # (nc, 3)        point on b, body-b frame (world for ground; ellipse centre)
    "con_side",     # (nc,) int64    frame the direction e is fixed in: 0 world, 1 a, 2 b
    "con_e",        # (nc, 3)        direction (POS, VEL); ellipse frame x axis
    "con_u",        # (nc, 3)        ORI: vector fixed in a; ellipse frame y axis
    "con_v",        # (nc, 3)        ORI: vector fixed in b
    "con_dof",      # (nc,) int64    COORD: coordinate index
    "con_traj",     # (nc,) int64    trajectory index, -1 none
    "con_tdir",     # (nc, 3)        g(t) = tdir·p̂(t) + con_off
    "con_rel",      # (nc,) int64    1: offset set at the start so that Φ(q0, t0) = 0
    "con_off",      # (nc,)          offset of g (written by Simulator.anchor_constraints)
    "con_elim",     # (nc,) int64    1: row eliminated as redundant by the user
    "dep_user",     # (ndep,) int64  user-chosen dependent coordinates (paper 001 eq. 11)
    "con_opt",      # (8,)           formulation (0 GPME, 1 Lagrange), α, β, projection, projection tol,
                    #                rank tol, repartition ratio, number of eliminated rows
    "traj_first",   # (ntraj,) int64 first segment of each trajectory
    "traj_count",   # (ntraj,) int64 number of segments
    "seg_kind",     # (nseg,) int64  trajectories.segments kinds
    "seg_time",     # (nseg, 2)      t0, t1
    "seg_par",      # (nseg, 8)      segment parameters
    "cobj_body",    # (nobj,) int64  per constraint object: body of link_a (reaction output), -1 ground
    "cobj_R",       # (nobj, 3, 3)   reaction output frame in that body frame (cut joints: J_a)
    "cobj_p",       # (nobj, 3)      its origin in the body frame
    "cobj_frame",   # (nobj,) int64  1: output in that frame's axes (cut joints); 0: world axes
    "bf_body",      # (nbf,) int64   body-force inputs: body
    "bf_point",     # (nbf, 3)       point of application, body frame
    "bf_dir",       # (nbf, 3)       unit direction, body frame
    "bf_rbody",     # (nbf,) int64   body receiving the opposite force, -1 none
    "bf_rpoint",    # (nbf, 3)       its point of application, that body's frame
)

DATA_FIELDS = (
    "oR", "op",          # (nbody,3,3), (nbody,3): world placement of body frames
    "lR", "lp",          # local placement in the parent frame
    "w", "vl",           # spatial velocity in body frame: angular, linear (of the frame origin)
    "cw", "cl",          # velocity-product acceleration v × S q̇
    "aw", "al",          # spatial acceleration (gravity folded in: ground accelerates at -g)
    "fM", "fF",          # wrench from parent across the joint, body frame: moment (at origin), force
    "extM", "extF",      # external wrench on the body (supports), body frame
    "IA", "Ia", "pA", "U", "D", "u",   # articulated-body algorithm work arrays
    "cm", "ch", "cJ",    # composite rigid body: mass, first moment, inertia about origin
    "M",                 # (nv, nv) joint-space mass matrix
    "tau", "qdd", "tau_pas", "tau_fric", "fric_load", "fric_coef", "fric_visc",
    "tau_drive", "zdot",
    "fric_iters", "fric_resid", "fric_fail",  # last loop solve: Newton iterations, residual; count of failed solves
    "fric_W0", "fric_S", "fric_dL", "fric_J", "fric_r", "fric_tf", "fric_dt",  # friction-loop Newton work arrays
    "power",             # (2,) dissipated power, input power
    "xs", "k1", "k2", "k3", "k4",  # integrator stage storage (nx,)
    "f6", "t6",          # (6,) scratch
    "r33",               # (3, 3) scratch
    "m66",               # (6, 6) scratch
    # constrained dynamics (kernels.constraints, kernels.constrained)
    "jaxis",             # (nbody, 3) world joint axis of every body
    "aw0", "al0",        # (nbody, 3) body accelerations at q̈ = 0 without gravity (γ terms)
    "con_phi", "con_phid",   # (nc,) Φ (holonomic rows) and Φ̇ (all rows)
    "con_C",             # (nc, nv) constraint matrix C = [Φ_q; Ψ]
    "con_gam",           # (nc,) right-hand side γ of C q̈ = γ, Baumgarte terms included
    "con_g",             # (nc, 3) g, ġ, g̈ of every row
    "con_wM", "con_wF",  # (nc, 3) world moment and force of the row's unit wrench on body a
    "con_wpa", "con_wpb",  # (nc, 3) world points where it acts on a and (negated) on b
    "traj_out",          # (3, 3) trajectory evaluation scratch
    "pka", "pkb",        # (5, 3) point kinematics scratch of the two sides of a row
    "lam", "lam_req",    # (nc,) multipliers; (nv,) C_pᵀλ_p: generalized forces of programmed rows
    "cp_rows", "cp_cols", "cp_rank", "cp_count", "cp_valid",   # partition: independent rows, dependent
                         # coordinates first; rank; repartitions so far; 1 if set
    "cp_null",           # (nc, nc) orthonormal basis of null(Cᵀ) in its first p columns
    "L", "Z",            # (nv, nv) Cholesky factor of M;  (nv, nc) M⁻¹ C_Iᵀ
    "A",                 # (nc, nc) Cholesky factor of C_I M⁻¹ C_Iᵀ
    "K", "kpiv",         # (nv, nv) LU of the GPME matrix [Dᵀ M; C_I]; pivots
    "Dm",                # (nv, nv) D = ∂q̇/∂q̇_i in its first nv − r columns
    "Cd", "cpiv",        # (nc, nc) LU of the dependent block C_I,d; pivots
    "cs1", "cs2",        # (nc, nv) scratch
    "bias", "fvec", "finc", "v1", "v2",   # (nv,): b(q, q̇), right-hand side, unit friction load, scratch
    "l1", "l2",          # (nc,) scratch
    "cextM", "cextF",    # (nbody, 3) constraint wrenches on bodies, body frame
    "bf_val",            # (nbf,) body-force input values, N (held over a step)
    "bf_power",          # (1,) power of the body forces, W (last passive_forces)
    "uq_obj", "uq_body",  # (nobj,), (nbody,) int64 reaction-uniqueness flags (kernels.constrained.uniqueness)
    "con_stats",         # (6,) rank, redundancy p, projection iterations, max |Φ| after projection,
                         #      dependent-block pivot ratio when partitioned, and now
)



class Model(namedtuple("ModelFields", MODEL_FIELDS)):
    """Constant arrays of a compiled mechanism (fields: MODEL_FIELDS). ``struct`` is the
    handle the jitted kernels take (kernels.handles); it views every array of this tuple."""

    @property
    def struct(self):
        s = self.__dict__.get("_struct")
        if s is None:
            from ..kernels.handles import model_struct
            s = self.__dict__["_struct"] = model_struct(self)
        return s


class Data(namedtuple("DataFields", DATA_FIELDS)):
    """Per-instance work arrays (fields: DATA_FIELDS); ``struct`` as for Model."""

    @property
    def struct(self):
        s = self.__dict__.get("_struct")
        if s is None:
            from ..kernels.handles import data_struct
            s = self.__dict__["_struct"] = data_struct(self)
        return s


def make_data(model: Model) -> Data:
    """Allocate the per-instance work arrays for ``model``."""
    nb, nv, nz, nx, nc = model.nbody, model.nv, model.nz, model.nx, model.nc
    nf = model.fric_dofs.shape[0]
    z = np.zeros
    return Data(
        oR=np.tile(np.eye(3), (nb, 1, 1)), op=z((nb, 3)),
        lR=np.tile(np.eye(3), (nb, 1, 1)), lp=z((nb, 3)),
        w=z((nb, 3)), vl=z((nb, 3)), cw=z((nb, 3)), cl=z((nb, 3)),
        aw=z((nb, 3)), al=z((nb, 3)), fM=z((nb, 3)), fF=z((nb, 3)),
        extM=z((nb, 3)), extF=z((nb, 3)),
        IA=z((nb, 6, 6)), Ia=z((nb, 6, 6)), pA=z((nb, 6)), U=z((nb, 6)), D=z(nb), u=z(nb),
        cm=z(nb), ch=z((nb, 3)), cJ=z((nb, 3, 3)),
        M=z((nv, nv)),
        tau=z(nv), qdd=z(nv), tau_pas=z(nv), tau_fric=z(nv), fric_load=z(nv),
        fric_coef=z(nv), fric_visc=z(nv), tau_drive=z(nv), zdot=z(nz),
        fric_iters=np.zeros(1, np.int64), fric_resid=z(1), fric_fail=np.zeros(1, np.int64),
        fric_W0=z((nf, 6)), fric_S=z((nf, 6, nf)), fric_dL=z((nf, 6)), fric_J=z((nf, nf)), fric_r=z(nf),
        fric_tf=z(nf), fric_dt=z(nf),
        power=z(2),
        xs=z(nx), k1=z(nx), k2=z(nx), k3=z(nx), k4=z(nx),
        f6=z(6), t6=z(6), r33=z((3, 3)), m66=z((6, 6)),
        jaxis=z((nb, 3)), aw0=z((nb, 3)), al0=z((nb, 3)),
        con_phi=z(nc), con_phid=z(nc), con_C=z((nc, nv)), con_gam=z(nc), con_g=z((nc, 3)),
        con_wM=z((nc, 3)), con_wF=z((nc, 3)), con_wpa=z((nc, 3)), con_wpb=z((nc, 3)),
        traj_out=z((3, 3)), pka=z((5, 3)), pkb=z((5, 3)), lam=z(nc), lam_req=z(nv),
        cp_rows=np.arange(nc, dtype=np.int64), cp_cols=np.arange(nv, dtype=np.int64),
        cp_rank=np.zeros(1, np.int64), cp_count=np.zeros(1, np.int64), cp_valid=np.zeros(1, np.int64),
        cp_null=z((nc, nc)), L=z((nv, nv)), Z=z((nv, nc)), A=z((nc, nc)), K=z((nv, nv)),
        kpiv=np.zeros(nv, np.int64), Dm=z((nv, nv)), Cd=z((nc, nc)), cpiv=np.zeros(nc, np.int64),
        cs1=z((nc, nv)), cs2=z((nc, nv)), bias=z(nv), fvec=z(nv), finc=z(nv), v1=z(nv), v2=z(nv), l1=z(nc), l2=z(nc),
        cextM=z((nb, 3)), cextF=z((nb, 3)), con_stats=z(6),
        uq_obj=np.ones(model.cobj_body.shape[0], np.int64), uq_body=np.ones(nb, np.int64),
        bf_val=z(model.bf_body.shape[0]), bf_power=z(1),
    )


def vector(name: str, x, n: int) -> np.ndarray:
    """``x`` as a contiguous float64 vector of length n; ValueError naming ``name`` otherwise."""
    a = np.ascontiguousarray(x, dtype=float)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    return a


def state_vector(model: Model, q, v, z=None, e_diss: float = 0.0, w_in: float = 0.0) -> np.ndarray:
    """Pack a state vector x (layout in the module docstring)."""
    x = np.zeros(model.nx)
    x[:model.nv] = vector("q", q, model.nv)
    x[model.nv:2 * model.nv] = vector("v", v, model.nv)
    if model.nz:
        x[2 * model.nv:2 * model.nv + model.nz] = 0.0 if z is None else vector("z", z, model.nz)
    x[-3] = e_diss
    x[-2] = w_in
    return x


def check_pair(model: Model, data: Data) -> None:
    """Raise if ``data`` was not made for ``model`` (Pinocchio's model/data check)."""
    if data.oR.shape[0] != model.nbody or data.M.shape[0] != model.nv or data.xs.shape[0] != model.nx:
        raise ValueError("Data does not match Model: make it with make_data(model)")
