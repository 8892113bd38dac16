"""Every integer code of the compiled arrays, defined once (no numpy, no numba).

The description layer writes these codes into the Model arrays (fmu_mb.model.compile),
the kernels branch on them (numba folds an ``IntEnum`` member to its constant) and the FMI
layer builds its output table from them before any kernel is loaded. A code's meaning is
the docstring of its member's enum; nothing else defines a number for it.
"""
from __future__ import annotations

from enum import IntEnum


class JointType(IntEnum):
    """Motion of an elementary body relative to its parent (``Model.body_jtype``)."""
    FIXED = 0
    REVOLUTE = 1        # about body_axis
    PRISMATIC = 2       # along body_axis


class LawKind(IntEnum):
    """Friction law of a coordinate (``Model.dof_fric_law``; fmu_mb.model.friction, kernels.friction)."""
    NONE = 0
    COULOMB_VISCOUS = 1     # paper 002 eq. 42
    STRIBECK = 2            # paper 002 eq. 52
    DAHL = 3                # paper 001 eqs. 21-22
    LUGRE = 4               # paper 000 eqs. 22-24


class LoadKind(IntEnum):
    """Normal-load form the friction coefficient multiplies (``Model.dof_fric_load``)."""
    JOURNAL = 0         # f_n·d/2 (paper 000 eq. 21)
    PIN = 1             # pin bearing (paper 002 eq. 47)
    FIXED = 2           # a constant load, independent of the reaction (URDF <dynamics friction>)


class RowKind(IntEnum):
    """Kind of a constraint row (``Model.con_kind``; kernels.constraints)."""
    POS = 0             # e·(r_b − r_a) = g(t)
    ORI = 1             # u_a·v_b = 0 (orientation of a cut joint)
    COORD = 2           # q[dof] = g(t)
    VEL = 3             # e·v = 0, first order (nonholonomic knife edge)
    ELLIPSE = 4         # point on an ellipse (paper 001 eq. 17)


class RowSide(IntEnum):
    """Frame a row's direction e is fixed in (``Model.con_side``)."""
    WORLD = 0
    A = 1
    B = 2


class Group(IntEnum):
    """Constraint group of a row (``Model.con_group``); names as in the descriptions."""
    KINEMATIC = 0       # loop closures
    PROGRAMMED = 1      # programmed motion (papers 000, 001)
    BASE = 2            # a fixed base instead of supports
    NONHOLONOMIC = 3    # first-order rows

    @property
    def label(self) -> str:
        return self.name.lower()


#: group names of the descriptions, in code order
GROUP_NAMES = tuple(g.label for g in Group)


class Formulation(IntEnum):
    """Constrained equations (``SolverOption.FORMULATION``)."""
    GPME = 0            # reduced, coordinate partitioning (paper 000 eqs. 25-26, 33, 37)
    LAGRANGE = 1        # multipliers, index-1 (paper 004 eq. 13)


class SegmentKind(IntEnum):
    """Trajectory segment kinds (fmu_mb.trajectories.segments; parameter row of SEGMENT_WIDTH)."""
    QUINTIC = 0
    ELLIPSE = 1
    LINEAR = 2


#: width of a trajectory segment's parameter row
SEGMENT_WIDTH = 8


#: the two γ that make ROS2 L-stable, R(∞) = 0 (kernels.linearly_implicit): 1 + 1/√2 (Verwer et al.
#: 1999; positive intermediate stage, strongest damping) and 1 − 1/√2 (1150× less damping of oscillations)
ROS2_GAMMA_DAMPED = 1.0 + 0.5 ** 0.5
ROS2_GAMMA_LOW_DAMPING = 1.0 - 0.5 ** 0.5
#: after a step of a small-γ method is redone by the damped ROS2, the steps of the next this many seconds are
#: taken by the damped ROS2 too (kernels.linearly_implicit._guarded_steps)
ROS2_FALLBACK_TIME = 0.0025
#: a ROS34PW2 step whose embedded local-error estimate of a bristle state exceeds this fraction of the bound of
#: its law's invariant set is redone as two half steps, down to h / 2**BRISTLE_SUBSTEP_DEPTH
#: (kernels.linearly_implicit._guarded_steps)
BRISTLE_STEP_TOLERANCE = 0.1
BRISTLE_SUBSTEP_DEPTH = 3
#: defaults and largest allowed caps of the two iterative loops a step may run (a bound fixed at initialization:
#: fmu_mb.step_cost): the friction ↔ reaction Newton loop (kernels.dynamics) and the projection's position Newton
#: (kernels.projection)
FRICTION_ITERATIONS_DEFAULT = 30
PROJECTION_ITERATIONS_DEFAULT = 25
ITERATION_LIMIT = 100


class Scheme(IntEnum):
    """Integration scheme a communication step runs (kernels.stepping.advance_*): the method of a Simulator
    or an FMU's solver.integrator (fmu_mb.simulator.METHODS; the low-damping ROS2 is ROS2 with its γ)."""
    RK4 = 0             # classical Runge-Kutta (kernels.integrators)
    ROS2 = 1            # Rosenbrock-W, order 2 (kernels.linearly_implicit)
    ROS34PW2 = 2        # Rosenbrock-W, order 3


class RecordCheck(IntEnum):
    """Why a state record is refused (kernels.record.read_record); OK: it was written."""
    OK = 0
    NOT_FINITE = 1          # value info[0] is NaN or infinite
    COORDINATE = 2          # coordinate info[0] beyond the coordinate limit
    RATE = 3                # rate of coordinate info[0] beyond the rate limit
    COUNT = 4               # the partition count is not a count
    PARTITION = 5           # rows or columns are not a permutation
    RANK = 6                # the rank or the valid flag is out of range
    FALLBACK = 7            # the count of damped steps still to take is not a count


class SolverOption(IntEnum):
    """Slots of the solver options ``solver_opt`` (Model's defaults, Data's in force)."""
    FORMULATION = 0         # Formulation code
    ALPHA = 1               # Baumgarte α, 1/s (paper 000 eqs. 33, 37)
    BETA = 2                # Baumgarte β, 1/s
    PROJECTION = 3          # 1: project positions and velocities after every step
    PROJECTION_TOL = 4      # Newton tolerance of the position projection
    RANK_TOL = 5            # relative pivot tolerance of the rank decision
    REPARTITION_RATIO = 6   # repartition when the pivot ratio drops below this share of the chosen one
    ELIMINATED = 7          # number of rows eliminated by the user (0: minimum-norm multipliers)
    ROS2_GAMMA = 8          # γ of the ROS2 step (kernels.linearly_implicit), set by the integrator choice
    FRICTION_ITERATIONS = 9  # cap on the Newton iterations of one friction-loop solve (kernels.dynamics)
    PROJECTION_ITERATIONS = 10  # cap on the position-Newton iterations of a projection after a step


class Work(IntEnum):
    """Slots of ``Data.work``: counts of the bounded units of work the kernels did (kernels add, callers reset;
    fmu_mb.step_cost bounds them per step)."""
    STEPS = 0               # internal steps begun (a redone step counts twice, a remainder step once)
    EVALUATIONS = 1         # state-derivative evaluations (the whole pipeline)
    PARTITIONS = 2          # coordinate partitions chosen (pivoted factorization of C)
    STAGE_MATRICES = 3      # Rosenbrock stage matrices formed and factored
    FRICTION_SOLVES = 4     # friction-loop solves (one per evaluation with friction)
    FRICTION_ITERATIONS = 5  # Newton iterations in them (a direction solve each; the round-off polish counts)
    FRICTION_RESIDUALS = 6  # residual evaluations in them (seed, halving, polish)
    FRICTION_MOST = 7       # most Newton iterations one friction-loop solve took
    PROJECTIONS = 8         # projections after a step
    PROJECTION_ITERATIONS = 9  # position-Newton iterations in them (a factorization each)
    PROJECTION_MOST = 10    # most position-Newton iterations one projection took


class SolverStat(IntEnum):
    """Slots of the constraint-solver statistics ``Data.con_stats`` (written by the kernels)."""
    RANK = 0                # rank of C at the last partition
    REDUNDANCY = 1          # rows − rank
    PROJECTION_ITERATIONS = 2
    PROJECTION_RESIDUAL = 3  # max |Φ| after the last projection
    PIVOT_RATIO_CHOSEN = 4   # dependent-block pivot ratio when the partition was chosen
    PIVOT_RATIO = 5          # the same ratio now (0: C singular)


class OutputKind(IntEnum):
    """Output kinds of the FMU output table (fmu_mb.outputs, filled by kernels.outputs)."""
    Q = 0               # coordinate
    QD = 1              # rate
    F = 2               # joint reaction force, joint frame
    M = 3               # joint reaction moment, joint frame
    F_NORMAL = 4        # reaction perpendicular to a joint axis
    FRICTION_LOAD = 5   # friction normal load L
    TAU_FRICTION = 6    # friction torque/force
    SUPPORT = 7         # force of a base support (exact or linearized), world
    POINT = 8           # world position of a point
    DEFLECTION = 9      # beam tip deflection, beam-root frame
    KINETIC = 10
    POTENTIAL = 11
    DISSIPATED = 12
    WORK_IN = 13
    FRICTION_ITERATIONS = 14
    FRICTION_FAILURES = 15
    TAU_REQUIRED = 16   # C_pᵀλ_p at a coordinate
    LAMBDA = 17         # multiplier of one row (coordinate constraints)
    CON_FORCE = 18      # force of a constraint object on its link
    CON_MOMENT = 19
    VIOLATION = 20
    VIOLATION_ANGLE = 21
    UNIQUE_JOINT = 22
    UNIQUE_CONSTRAINT = 23
    RANK = 24
    REDUNDANCY = 25
    REPARTITIONS = 26
    WORK_CONSTRAINTS = 27
    POINT_VELOCITY = 28         # world velocity of a point
    FRAME_ROTATION = 29         # entry of the rotation matrix world ← frame of a point's link (row-major)
    FRAME_ANGULAR_VELOCITY = 30  # world angular velocity of a point's link
    MASS_MATRIX = 31            # entry of the joint-space mass matrix M(q) (rows, columns: driven coordinates)
    BIAS_FORCE = 32             # C(q, q̇) q̇ + g(q) at a driven coordinate
    GRAVITY_FORCE = 33          # g(q) at a driven coordinate
