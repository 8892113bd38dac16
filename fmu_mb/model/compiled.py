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
from typing import NamedTuple

import numpy as np

from ..codes import SEGMENT_WIDTH, SolverOption, SolverStat, Work


class Field(NamedTuple):
    """One array (or scalar count) of Model or Data: the schema make_data, the JIT handles
    (kernels.handles) and the native kernel library (fmu_mb.native.library) all read."""
    name: str
    dtype: str          # "f8" | "i8" for arrays; "int" for a scalar count
    shape: tuple        # sizes by name (see sizes()) or number; () for a scalar
    doc: str
    init: str = "zeros"  # Data only: zeros | eye (3×3 per row) | ones | arange | copy:<Model field>


def _f(name, dtype, shape, doc, init="zeros"):
    return Field(name, dtype, tuple(shape) if isinstance(shape, (tuple, list)) else (shape,), doc, init)


#: constant arrays of a compiled mechanism (written by fmu_mb.model.compile only)
MODEL_SCHEMA = (
    _f("nbody", "int", (), "number of elementary bodies"),
    _f("nv", "int", (), "number of coordinates (= velocities; Euler-angle rates, no quaternions)"),
    _f("nz", "int", (), "number of friction (bristle) states"),
    _f("nx", "int", (), "state length 2·nv + nz + 3"),
    _f("nc", "int", (), "number of constraint rows"),
    _f("body_parent", "i8", "nbody", "parent body, -1 = ground"),
    _f("body_jtype", "i8", "nbody", "codes.JointType"),
    _f("body_axis", "f8", ("nbody", 3), "unit axis in the joint frame"),
    _f("body_axis_k", "i8", "nbody", "k where body_axis is exactly the unit vector e_k (Pinocchio's RX, RY, RZ "
       "joints: the kernels leave out the products with its zeros, the same bits), -1 otherwise"),
    _f("body_rot_z", "i8", "nbody", "1 where the local rotation lR is one about z (a revolute about e_z with "
       "body_R0 = 1, the DH convention's joints): kernels.spatial.add_inertia_to_parent_z"),
    _f("body_R0", "f8", ("nbody", 3, 3), "joint frame orientation in the parent frame"),
    _f("body_p0", "f8", ("nbody", 3), "joint frame origin in the parent frame, m"),
    _f("body_dof", "i8", "nbody", "coordinate index, -1 for FIXED"),
    _f("body_mass", "f8", "nbody", "kg"),
    _f("body_com", "f8", ("nbody", 3), "centre of mass in body frame, m"),
    _f("body_Ic", "f8", ("nbody", 3, 3), "inertia about the centre of mass, body axes, kg·m²"),
    _f("dof_body", "i8", "nv", "body moved by each coordinate"),
    _f("dof_k", "f8", "nv", "joint-space spring stiffness (RFEM sdes, joint springs)"),
    _f("dof_c", "f8", "nv", "joint-space damping"),
    _f("dof_qrest", "f8", "nv", "spring rest position"),
    _f("dof_armature", "f8", "nv", "reflected rotor inertia added to M's diagonal, kg·m² or kg"),
    _f("dof_lo", "f8", "nv", "lower joint stop, rad or m (−inf: none)"),
    _f("dof_hi", "f8", "nv", "upper joint stop, rad or m (+inf: none)"),
    _f("dof_stop_k", "f8", "nv", "joint stop stiffness beyond a stop, N·m/rad or N/m"),
    _f("dof_stop_c", "f8", "nv", "joint stop damping beyond a stop, N·m·s/rad or N·s/m"),
    _f("base_dof", "i8", 1, "first coordinate of a linearized flexible base, -1 if none"),
    _f("base_K", "f8", (6, 6), "Σ Uᵀ S U of the linearized supports (paper 001 eq. 4)"),
    _f("base_D", "f8", (6, 6), "Σ Uᵀ D U"),
    _f("lsup_U", "f8", ("nlsup", 3, 6), "linearized supports: d = U q_b, support displacement (paper 001 eq. 3)"),
    _f("lsup_k", "f8", ("nlsup", 3), "linearized supports: stiffness S along world axes, N/m"),
    _f("lsup_d", "f8", ("nlsup", 3), "linearized supports: damping D, N·s/m"),
    _f("sup_body", "i8", "nsup", "exact supports (paper 000 eq. 15): body"),
    _f("sup_point", "f8", ("nsup", 3), "attachment point, body frame"),
    _f("sup_anchor", "f8", ("nsup", 3), "undeformed world position r_E0"),
    _f("sup_k", "f8", ("nsup", 3), "stiffness along world axes, N/m"),
    _f("sup_d", "f8", ("nsup", 3), "damping, N·s/m"),
    _f("dof_fric_law", "i8", "nv", "codes.LawKind"),
    _f("dof_fric_load", "i8", "nv", "codes.LoadKind"),
    _f("dof_fric_par", "f8", ("nv", 8), "law parameters (see kernels.friction)"),
    _f("dof_fric_geom", "f8", ("nv", 3), "journal: (d/2, 0, 0); pin: (R_n, R_p, R_b)"),
    _f("dof_fric_z", "i8", "nv", "index of the bristle state in z, -1 if none"),
    _f("fric_dofs", "i8", "nf", "coordinates with friction"),
    _f("fric_tol", "f8", 2, "friction-loop tolerance (absolute N·m, relative)"),
    _f("gravity", "f8", 3, "world gravity, m/s²"),
    # constraint rows (fmu_mb.model.constraints; kernels.constraints)
    _f("con_kind", "i8", "nc", "codes.RowKind"),
    _f("con_group", "i8", "nc", "codes.Group"),
    _f("con_obj", "i8", "nc", "index of the constraint object the row belongs to"),
    _f("con_a", "i8", "nc", "body a (-1 ground)"),
    _f("con_pa", "f8", ("nc", 3), "point on a, body-a frame"),
    _f("con_b", "i8", "nc", "body b (-1 ground)"),
    _f("con_pb", "f8", ("nc", 3), "point on b, body-b frame (world for ground; ellipse centre)"),
    _f("con_side", "i8", "nc", "codes.RowSide: frame the direction e is fixed in"),
    _f("con_e", "f8", ("nc", 3), "direction (POS, VEL); ellipse frame x axis"),
    _f("con_u", "f8", ("nc", 3), "ORI: vector fixed in a; ellipse frame y axis"),
    _f("con_v", "f8", ("nc", 3), "ORI: vector fixed in b"),
    _f("con_dof", "i8", "nc", "COORD: coordinate index"),
    _f("con_traj", "i8", "nc", "trajectory index, -1 none"),
    _f("con_tdir", "f8", ("nc", 3), "g(t) = tdir·p̂(t) + offset (Data.con_off)"),
    _f("con_rel", "i8", "nc", "1: offset set at the start so that Φ(q0, t0) = 0"),
    _f("con_elim", "i8", "nc", "1: row eliminated as redundant by the user"),
    _f("dep_user", "i8", "ndep", "user-chosen dependent coordinates (paper 001 eq. 11)"),
    _f("con_opt", "f8", len(SolverOption), "the description's solver options (codes.SolverOption); "
       "a run's are Data.solver_opt"),
    _f("traj_first", "i8", "ntraj", "first segment of each trajectory"),
    _f("traj_count", "i8", "ntraj", "number of segments"),
    _f("seg_kind", "i8", "nseg", "the description's segments (codes.SegmentKind); a run's are Data.traj_*"),
    _f("seg_time", "f8", ("nseg", 2), "t0, t1"),
    _f("seg_par", "f8", ("nseg", SEGMENT_WIDTH), "segment parameters (trajectories.segments)"),
    _f("cobj_body", "i8", "nobj", "per constraint object: body of link_a (reaction output), -1 ground"),
    _f("cobj_R", "f8", ("nobj", 3, 3), "reaction output frame in that body frame (cut joints: J_a)"),
    _f("cobj_p", "f8", ("nobj", 3), "its origin in the body frame"),
    _f("cobj_frame", "i8", "nobj", "1: output in that frame's axes (cut joints); 0: world axes"),
    _f("bf_body", "i8", "nbf", "body-force inputs: body"),
    _f("bf_point", "f8", ("nbf", 3), "point of application, body frame"),
    _f("bf_dir", "f8", ("nbf", 3), "unit direction, body frame"),
    _f("bf_rbody", "i8", "nbf", "body receiving the opposite force, -1 none"),
    _f("bf_rpoint", "f8", ("nbf", 3), "its point of application, that body's frame"),
)

_V, _B3, _C = "nv", ("nbody", 3), "nc"
#: work arrays and everything a run writes
DATA_SCHEMA = (
    _f("oR", "f8", ("nbody", 3, 3), "world orientation of body frames", "eye"),
    _f("op", "f8", _B3, "world origin of body frames"),
    _f("lR", "f8", ("nbody", 3, 3), "local orientation in the parent frame", "eye"),
    _f("lp", "f8", _B3, "local origin in the parent frame"),
    _f("w", "f8", _B3, "angular velocity, body frame"),
    _f("vl", "f8", _B3, "linear velocity of the frame origin, body frame"),
    _f("cw", "f8", _B3, "velocity-product acceleration v × S q̇, angular"),
    _f("cl", "f8", _B3, "velocity-product acceleration, linear"),
    _f("aw", "f8", _B3, "spatial acceleration, angular (gravity folded in: ground accelerates at -g)"),
    _f("al", "f8", _B3, "spatial acceleration, linear"),
    _f("fM", "f8", _B3, "moment from the parent across the joint (at the origin), body frame"),
    _f("fF", "f8", _B3, "force from the parent across the joint, body frame"),
    _f("extM", "f8", _B3, "external moment on the body (supports), body frame"),
    _f("extF", "f8", _B3, "external force on the body, body frame"),
    _f("IA", "f8", ("nbody", 6, 6), "articulated-body inertia"),
    _f("Ia", "f8", ("nbody", 6, 6), "articulated inertia passed to the parent"),
    _f("pA", "f8", ("nbody", 6), "articulated bias force"),
    _f("U", "f8", ("nbody", 6), "ABA U = I^A S"),
    _f("D", "f8", "nbody", "ABA D = Sᵀ U"),
    _f("u", "f8", "nbody", "ABA u"),
    _f("cm", "f8", "nbody", "composite rigid body: mass"),
    _f("ch", "f8", _B3, "composite rigid body: first moment"),
    _f("cJ", "f8", ("nbody", 3, 3), "composite rigid body: inertia about the origin"),
    _f("M", "f8", (_V, _V), "joint-space mass matrix"),
    _f("tau", "f8", _V, "generalized force"),
    _f("qdd", "f8", _V, "accelerations"),
    _f("tau_pas", "f8", _V, "passive generalized forces (springs, dampers, supports)"),
    _f("tau_fric", "f8", _V, "friction torques/forces"),
    _f("fric_load", "f8", _V, "friction normal loads L"),
    _f("fric_coef", "f8", _V, "friction coefficient term"),
    _f("fric_visc", "f8", _V, "viscous friction term"),
    _f("tau_drive", "f8", _V, "driving forces (inputs, held over a step)"),
    _f("zdot", "f8", "nz", "bristle-state rates"),
    _f("fric_iters", "i8", 1, "Newton iterations of the last friction-loop solve"),
    _f("fric_resid", "f8", 1, "its residual"),
    _f("fric_fail", "i8", 1, "friction-loop solves that did not converge"),
    _f("work", "i8", len(Work), "units of bounded work done (codes.Work; kernels add, callers reset)"),
    _f("fric_W0", "f8", ("nf", 6), "friction-loop Newton work"),
    _f("fric_S", "f8", ("nf", 6, "nf"), "friction-loop Newton work"),
    _f("fric_dL", "f8", ("nf", 6), "friction-loop Newton work"),
    _f("fric_J", "f8", ("nf", "nf"), "friction-loop Newton work"),
    _f("fric_r", "f8", "nf", "friction-loop Newton work"),
    _f("fric_tf", "f8", "nf", "friction-loop Newton work"),
    _f("fric_dt", "f8", "nf", "friction-loop Newton work"),
    _f("fric_dqdd", "f8", ("nf", _V), "constrained solve: q̈ per unit friction torque of each friction joint"),
    _f("fric_dlam", "f8", ("nf", _C), "constrained solve: λ per unit friction torque of each friction joint"),
    _f("inc_x", "f8", (_V, "nf"), "constrained solve (saddle.solve_friction_increments): independent q̈ per unit "
       "friction torque of each friction joint, one column per joint"),
    _f("inc_q", "f8", (_V, "nf"), "the same: q̈ of every coordinate"),
    _f("inc_y", "f8", (_C, "nf"), "the same: multipliers of the independent rows, partition order"),
    _f("inc_a", "f8", ("nf", "nbody", 6), "constrained solve: body acceleration increments (angular, linear) per "
       "unit friction torque of each friction joint (rnea.reaction_increments)"),
    _f("inc_f", "f8", ("nf", "nbody", 6), "constrained solve: joint reaction increments (moment, force) likewise"),
    _f("inc_cM", "f8", ("nf", "nbody", 3), "constrained solve: constraint moment increments on the bodies likewise"),
    _f("inc_cF", "f8", ("nf", "nbody", 3), "constrained solve: constraint force increments on the bodies likewise"),
    _f("power", "f8", 2, "dissipated power, input power"),
    _f("xs", "f8", "nx", "integrator stage state"),
    _f("k1", "f8", "nx", "RK4 / ROS34PW2 stage"),
    _f("k2", "f8", "nx", "RK4 / ROS34PW2 stage"),
    _f("k3", "f8", "nx", "RK4 / ROS34PW2 stage"),
    _f("k4", "f8", "nx", "RK4 / ROS34PW2 stage"),
    # linearly implicit integrator (kernels.linearly_implicit): the stage matrix of a step and its parts
    _f("lin_W", "f8", ("nvc", "nvc"), "LU factors of the stage matrix [M + γh·D + (γh)²·K  C_Iᵀ; C_I  0]"),
    _f("lin_piv", "i8", "nvc", "its pivots"),
    _f("lin_M", "f8", (_V, _V), "M at the start of the step"),
    _f("lin_K", "f8", (_V, _V), "stiffness −∂Q/∂q of the stiff forces (springs, supports)"),
    _f("lin_C", "f8", (_C, _V), "the independent constraint rows C_I at the start of the step"),
    _f("lin_rs", "f8", _C, "1/(1 + 2αγh + b(γh)²) of each independent row (implicit Baumgarte terms)"),
    _f("lin_rb", "f8", _C, "b·γh of each independent row, b = β² (holonomic) or 0 (first order)"),
    _f("lin_G", "f8", ("nf", "nf"), "friction loop factor (I − diag(coef)·∂L/∂W·S)⁻¹ at the start of the step"),
    _f("lin_cz", "f8", "nf", "L·∂coef/∂z of each friction coordinate with a bristle state"),
    _f("lin_zz", "f8", "nz", "bristle state: 1/(1 − γh·∂ż/∂z)"),
    _f("lin_zv", "f8", "nz", "bristle state: γh·(∂ż/∂q̇)/(1 − γh·∂ż/∂z)"),
    _f("lin_b", "f8", "nvc", "stage right-hand side and solution"),
    _f("lin_f", "f8", "nx", "ROS34PW2 stage right-hand side f(stage state) + Σ c_ij k_j"),
    _f("lin_J", "f8", (3, _V), "point Jacobian of a support, world rows"),
    _f("lin_n", "i8", 1, "size of the factored stage matrix (nv + independent rows)"),
    _f("lin_redo", "i8", 1, "low-damping ROS2 / ROS34PW2 steps redone by the damped ROS2 since the run started"),
    _f("lin_split", "i8", 1, "damped ROS2 substeps tried for ROS34PW2 steps of too large a bristle error since the run started"),
    _f("lin_hold", "i8", 1, "steps the damped ROS2 still takes after a redone step (codes.ROS2_FALLBACK_TIME)"),
    _f("q_held", "i8", 1, "1 while a complex-step Jacobian's columns leave q as it was (kernels.jacobian): the "
       "evaluation keeps the position-only stages of the one before"),
    _f("lin_x0", "f8", "nx", "state at the start of a guarded step (for its redo)"),
    # what the outputs' evaluation leaves for the next step's first stage at the same state
    # (kernels.constrained.keep_outputs_work): its position-only work (key: q in fs_x, C, the rows' wrenches, the
    # partition) and, for RK4, its derivative (key: fs_x, the time, every input, the partition)
    _f("pk_held", "i8", 1, "1 while M, the constrained system's factors and the friction increments in Data are "
       "those of the key below (kernels.constrained: set by the outputs' evaluation, cleared by crba)"),
    _f("pk_hits", "i8", 1, "evaluations that reused them since the run started"),
    _f("pk_C", "f8", (_C, _V), "key: the constraint matrix C (q: fs_x)"),
    _f("pk_w", "f8", (_C, 12), "key: the rows' unit wrenches (con_wM, con_wF, con_wpa, con_wpb)"),
    _f("pk_rows", "i8", _C, "key: the partition's rows"),
    _f("pk_cols", "i8", _V, "key: the partition's columns"),
    _f("pk_stats", "f8", 3, "key: the partition's rank and pivot ratio when chosen (both keys); the pivot ratio at q"),
    _f("fs_held", "i8", 1, "1 while fs_xdot is the derivative at the key below (set by the outputs' evaluation)"),
    _f("fs_hits", "i8", 1, "first stages that reused it since the run started"),
    _f("fs_last", "i8", 1, "1 while the outputs' evaluation is still the last pass in Data (set by it, cleared by "
       "forward_kinematics): a linearly implicit step's first stage then reads its M, C, partition and friction "
       "loop"),
    _f("fs_xdot", "f8", "nx", "the derivative ẋ"),
    _f("fs_x", "f8", "nx", "key: the state x"),
    _f("fs_tau", "f8", _V, "key: the driving forces"),
    _f("fs_bf", "f8", "nbf", "key: the body-force inputs"),
    _f("fs_t", "f8", 1, "key: the time, s"),
    _f("fs_off", "f8", _C, "key: the rows' offsets (con_off)"),
    _f("fs_opt", "f8", len(SolverOption), "key: the solver options (solver_opt)"),
    _f("fs_tkind", "i8", "nseg", "key: the trajectory segments (traj_kind)"),
    _f("fs_ttime", "f8", ("nseg", 2), "key: their times (traj_time)"),
    _f("fs_tpar", "f8", ("nseg", SEGMENT_WIDTH), "key: their parameters (traj_par)"),
    # the dynamics outputs (kernels.rnea.bias_forces, kernels.outputs): their own inverse-dynamics pass
    _f("dyn_aw", "f8", _B3, "bias-force pass: body accelerations at q̈ = 0, angular"),
    _f("dyn_al", "f8", _B3, "bias-force pass: the same, linear"),
    _f("dyn_fM", "f8", _B3, "bias-force pass: joint moments"),
    _f("dyn_fF", "f8", _B3, "bias-force pass: joint forces"),
    _f("dyn_h", "f8", _V, "bias forces C(q, q̇) q̇ + g(q), N·m or N"),
    _f("dyn_g", "f8", _V, "gravity forces g(q), N·m or N"),
    _f("f6", "f8", 6, "scratch"),
    _f("m66", "f8", (6, 6), "scratch"),
    # constrained dynamics (kernels.constraints, partition, saddle, constrained, projection, uniqueness)
    _f("jaxis", "f8", _B3, "world joint axis of every body"),
    _f("aw0", "f8", _B3, "body accelerations at q̈ = 0 without gravity (γ terms), angular"),
    _f("al0", "f8", _B3, "the same, linear"),
    _f("con_phi", "f8", _C, "Φ (holonomic rows)"),
    _f("con_phid", "f8", _C, "Φ̇ (all rows)"),
    _f("con_C", "f8", (_C, _V), "constraint matrix C = [Φ_q; Ψ]"),
    _f("con_gam", "f8", _C, "right-hand side γ of C q̈ = γ, Baumgarte terms included"),
    _f("con_g", "f8", (_C, 3), "g, ġ, g̈ of every row"),
    _f("con_wM", "f8", (_C, 3), "world moment of the row's unit wrench on body a"),
    _f("con_wF", "f8", (_C, 3), "world force of the row's unit wrench on body a"),
    _f("con_wpa", "f8", (_C, 3), "world point where it acts on a"),
    _f("con_wpb", "f8", (_C, 3), "world point where it acts (negated) on b"),
    _f("traj_out", "f8", (3, 3), "trajectory evaluation scratch"),
    _f("traj_seed", "f8", 1, "imaginary step along time of a complex-step evaluation (kernels.jacobian."
       "directional_derivative's vt: the time derivative of the trajectories); never set in a real Data"),
    _f("pka", "f8", (5, 3), "point kinematics scratch, side a"),
    _f("pkb", "f8", (5, 3), "point kinematics scratch, side b"),
    _f("lam", "f8", _C, "multipliers λ"),
    _f("lam_req", "f8", _V, "C_pᵀλ_p: generalized forces of the programmed rows"),
    _f("cp_rows", "i8", _C, "partition: independent rows first", "arange"),
    _f("cp_cols", "i8", _V, "partition: dependent coordinates first", "arange"),
    _f("cp_rank", "i8", 1, "partition: rank"),
    _f("cp_count", "i8", 1, "partitions chosen so far"),
    _f("cp_valid", "i8", 1, "1 if a partition is set"),
    _f("cp_null", "f8", (_C, _C), "orthonormal basis of null(Cᵀ) in its first p columns"),
    _f("L", "f8", (_V, _V), "Cholesky factor of M (Lagrange) or of Dᵀ M D (GPME)"),
    _f("Z", "f8", (_V, _C), "M⁻¹ C_Iᵀ"),
    _f("A", "f8", (_C, _C), "Cholesky factor of C_I M⁻¹ C_Iᵀ"),
    _f("gpme_lu", "f8", (_V, _V), "GPME: Dᵀ M in its first nv − r rows"),
    _f("gpme_piv", "i8", _V, "scratch of the partition's column order"),
    _f("Dm", "f8", (_V, _V), "D = ∂q̇/∂q̇_i in its first nv − r columns"),
    _f("Cd", "f8", (_C, _C), "LU of the dependent block C_I,d"),
    _f("cpiv", "i8", _C, "its pivots"),
    _f("cs1", "f8", (_C, _V), "scratch"),
    _f("cs2", "f8", (_C, _V), "scratch"),
    _f("bias", "f8", _V, "b(q, q̇)"),
    _f("fvec", "f8", _V, "right-hand side"),
    _f("finc", "f8", _V, "unit friction load"),
    _f("v1", "f8", _V, "scratch"),
    _f("v2", "f8", _V, "scratch"),
    _f("l1", "f8", _C, "scratch"),
    _f("l2", "f8", _C, "scratch"),
    _f("cextM", "f8", _B3, "constraint moments on bodies, body frame"),
    _f("cextF", "f8", _B3, "constraint forces on bodies, body frame"),
    _f("con_stats", "f8", len(SolverStat), "solver statistics (codes.SolverStat)"),
    _f("uq_obj", "i8", "nobj", "reaction-uniqueness flag per constraint object", "ones"),
    _f("uq_body", "i8", "nbody", "reaction-uniqueness flag per body", "ones"),
    _f("bf_val", "f8", "nbf", "body-force input values, N (held over a step)"),
    _f("bf_power", "f8", 1, "power of the body forces, W (last passive_forces)"),
    # static equilibrium (kernels.statics)
    _f("st_A", "f8", ("nvc", "nvc"), "statics: Newton matrix [K  −C_fᵀ; C_f  0], then its QR factors"),
    _f("st_W", "f8", ("nvc", "nvc"), "statics: second factor of the least-squares step (linalg.lstsq)"),
    _f("st_b", "f8", "nvc", "statics: Newton right-hand side"),
    _f("st_x", "f8", "nvc", "statics: Newton step"),
    _f("st_t1", "f8", "nvc", "statics: Householder factors"),
    _f("st_t2", "f8", "nvc", "statics: Householder factors"),
    _f("st_perm", "i8", "nvc", "statics: column pivots"),
    _f("st_q", "f8", _V, "statics: perturbed or trial coordinates"),
    _f("st_f", "f8", _V, "statics: b − τ_pas − τ_held − Cᵀλ at the current coordinates (holding forces)"),
    _f("st_fp", "f8", _V, "statics: the same at a perturbed or trial configuration"),
    _f("st_fm", "f8", _V, "statics: the same at a perturbed configuration"),
    _f("st_zero", "f8", _V, "statics: zero rates and accelerations (never written)"),
    _f("st_tau", "f8", _V, "statics: driving forces held in the equilibrium, N or N·m"),
    _f("st_lam", "f8", _C, "statics: multipliers of the enforced rows (their order), N or N·m"),
    _f("st_info", "f8", 2, "statics: residual of the last solve, force scale"),
    # the RK4 stability limit at a state (kernels.stability)
    _f("ev_J", "f8", ("nx", "nx"), "stability: Jacobian ∂ẋ/∂x by central differences, then its Hessenberg form"),
    _f("ev_x", "f8", "nx", "stability: perturbed state"),
    _f("ev_fp", "f8", "nx", "stability: ẋ at x + δ"),
    _f("ev_fm", "f8", "nx", "stability: ẋ at x − δ"),
    _f("ev_re", "f8", "nx", "stability: eigenvalues, real parts, 1/s"),
    _f("ev_im", "f8", "nx", "stability: eigenvalues, imaginary parts, 1/s"),
    _f("ev_rows", "i8", _C, "stability: the coordinate partition kept across the perturbations (rows)"),
    _f("ev_cols", "i8", _V, "stability: the same, columns"),
    # the start of the last communication step (kernels.stepping: kept to undo it)
    _f("chk_x", "f8", "nx", "state"),
    _f("chk_rows", "i8", _C, "coordinate partition: rows"),
    _f("chk_cols", "i8", _V, "coordinate partition: columns"),
    _f("chk_count", "i8", 6, "partition rank, partition valid, partitions chosen, friction failures, friction "
       "iterations, damped steps still to take"),
    _f("chk_pivot", "f8", 1, "pivot ratio of the partition when chosen"),
    # what a run sets besides the state (the Model keeps the description's values)
    _f("con_off", "f8", _C, "offset of g(t) of every row (anchored at the start: relative rows)"),
    _f("solver_opt", "f8", len(SolverOption), "solver options in force (codes.SolverOption)", "copy:con_opt"),
    _f("traj_kind", "i8", "nseg", "trajectory segments in force (inputs change them)", "copy:seg_kind"),
    _f("traj_time", "f8", ("nseg", 2), "their t0, t1", "copy:seg_time"),
    _f("traj_par", "f8", ("nseg", SEGMENT_WIDTH), "their parameters", "copy:seg_par"),
)

MODEL_FIELDS = tuple(f.name for f in MODEL_SCHEMA)
#: the Data fields a run sets besides its state (offsets, solver options, trajectory inputs)
RUN_FIELDS = ("con_off", "solver_opt", "traj_kind", "traj_time", "traj_par")
DATA_FIELDS = tuple(f.name for f in DATA_SCHEMA)


class Model(namedtuple("ModelFields", MODEL_FIELDS)):
    """Constant arrays of a compiled mechanism (MODEL_SCHEMA). fmu_mb.model.compile makes them
    read-only: whatever a run changes lives in Data."""


class Data(namedtuple("DataFields", DATA_FIELDS)):
    """Per-instance work arrays and run settings (DATA_SCHEMA)."""


def sizes(model: Model) -> dict:
    """The named sizes the schema's shapes use."""
    return dict(nbody=model.nbody, nv=model.nv, nz=model.nz, nx=model.nx, nc=model.nc, nvc=model.nv + model.nc,
                nf=model.fric_dofs.shape[0], nsup=model.sup_body.shape[0], nlsup=model.lsup_U.shape[0],
                ndep=model.dep_user.shape[0], ntraj=model.traj_first.shape[0], nseg=model.seg_kind.shape[0],
                nobj=model.cobj_body.shape[0], nbf=model.bf_body.shape[0])


def shape_of(f: Field, n: dict) -> tuple:
    return tuple(n[s] if isinstance(s, str) else s for s in f.shape)


_DTYPES = {"f8": np.float64, "i8": np.int64}

#: float fields a complex-step Data keeps real: run settings, statistics and tolerances, which no
#: state or input perturbs (kernels.jacobian)
REAL_FIELDS = RUN_FIELDS + ("fric_resid", "con_stats", "chk_pivot", "pk_stats", "fs_t", "fs_off", "fs_opt", "fs_ttime",
                            "fs_tpar")


def make_data(model: Model, complex_step: bool = False) -> Data:
    """Allocate the per-instance work arrays for ``model`` (DATA_SCHEMA). ``complex_step``: the
    float arrays that carry state-dependent values are complex128 (kernels.jacobian runs the same
    kernels on it)."""
    n = sizes(model)
    out = {}
    for f in DATA_SCHEMA:
        shape, dtype = shape_of(f, n), _DTYPES[f.dtype]
        if complex_step and f.dtype == "f8" and f.name not in REAL_FIELDS:
            dtype = np.complex128
        if f.init.startswith("copy:"):
            a = np.array(getattr(model, f.init[5:]), dtype=dtype)       # a writable copy
        elif f.init == "eye":
            a = np.tile(np.eye(3, dtype=dtype), (shape[0], 1, 1))
        elif f.init == "ones":
            a = np.ones(shape, dtype)
        elif f.init == "arange":
            a = np.arange(shape[0], dtype=dtype)
        else:
            a = np.zeros(shape, dtype)
        if a.shape != shape:
            raise ValueError(f"Data field {f.name}: shape {a.shape}, the schema says {shape}")
        out[f.name] = a
    return Data(**out)


def copy_run_settings(src: Data, dst: Data) -> None:
    """Copy the RUN_FIELDS of one Data into another of the same Model."""
    for name in RUN_FIELDS:
        getattr(dst, name)[...] = getattr(src, name)


def check_model(model: Model) -> None:
    """Raise if a Model array's dtype or shape disagrees with MODEL_SCHEMA."""
    n = sizes(model)
    for f in MODEL_SCHEMA:
        v = getattr(model, f.name)
        if f.dtype == "int":
            if not isinstance(v, (int, np.integer)):
                raise TypeError(f"Model field {f.name} must be an int (got {type(v).__name__})")
            continue
        if not (isinstance(v, np.ndarray) and v.dtype == _DTYPES[f.dtype] and v.shape == shape_of(f, n)):
            raise ValueError(f"Model field {f.name}: {getattr(v, 'dtype', type(v))} {np.shape(v)}, the schema says "
                             f"{f.dtype} {shape_of(f, n)}")


def freeze(model: Model) -> Model:
    """``model`` with every array read-only (after check_model)."""
    check_model(model)
    for v in model:
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    return model


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


#: largest partition count a state record may hold (an FMU's Integer output solver.repartitions is 32-bit)
RECORD_MAX_COUNT = 2 ** 31 - 1


#: values of the state record besides x, the partition's rows and columns and the offsets: rank, valid flag,
#: pivot ratio, partition count, damped steps still to take (kernels.record)
RECORD_EXTRA = 5


def record_size(model: Model) -> int:
    """Length of the state record of a run (kernels.record: x, coordinate partition, offsets, counts)."""
    return int(model.nx) + 2 * int(model.nc) + int(model.nv) + RECORD_EXTRA


def check_pair(model: Model, data: Data) -> None:
    """Raise if ``data`` was not made for ``model`` (Pinocchio's model/data check)."""
    if data.oR.shape[0] != model.nbody or data.M.shape[0] != model.nv or data.xs.shape[0] != model.nx:
        raise ValueError("Data does not match Model: make it with make_data(model)")
