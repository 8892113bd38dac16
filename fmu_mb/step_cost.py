"""The worst-case work of a step, fixed at initialization (what a hardware-in-the-loop rig must budget for).

Every loop of the stepping path has a bound known when a run is set up, so the worst case of an internal step
and of a communication step is a constant of the mechanism, its option set and the solver settings:

* a step of the method: RK4 four evaluations of the dynamics (the whole pipeline: kinematics, mass matrix,
  forces, the constrained factorization, the friction loop), ROS2 two and ROS34PW2 four, plus one Rosenbrock
  stage matrix (formed and LU-factored) for either;
* a small-γ Rosenbrock step (ROS34PW2, the low-damping ROS2) that leaves a bristle outside its invariant set or
  is not finite is redone once by the damped ROS2 (kernels.linearly_implicit._guarded_steps): its worst case adds
  that step; the steps of the fallback window after it are single damped ROS2 steps, no dearer;
* a ROS34PW2 step of a mechanism with bristle states whose embedded bristle-error estimate is too large is
  redone by damped ROS2 substeps, halves halved again while their estimate is too large, down to h / 2**D
  (D = codes.BRISTLE_SUBSTEP_DEPTH): at most 2**(D+1) − 2 substeps, each two evaluations and one
  factorisation (dearer than the redo above, which it replaces);
* each evaluation of a constrained mechanism chooses the coordinate partition at most once (a pivoted
  factorization of C, kernels.partition) and of a mechanism with friction runs one friction ↔ reaction solve of
  at most N Newton iterations (N = solver.friction_iteration_limit; the round-off polish adds one), each a
  direction solve and at most 11 residual evaluations, plus 2 for the seed and 2 for the polish
  (kernels.dynamics);
* with solver.projection on, each step of a constrained mechanism ends in one projection of at most P
  position-Newton iterations (P = solver.projection_iteration_limit; kernels.projection);
* a communication step of length dt at internal step h takes ⌊dt/h⌋ full steps (round(dt/h) when within 1e-9)
  and at most one shorter remainder step, unguarded, of the method or the damped ROS2 (kernels.stepping), then
  one evaluation for the outputs.

Each unit above has a fixed operation count for a given mechanism (its loops run over the mechanism's sizes),
so these counts are the worst-case operation count of a step. The kernels count the units they do in
``Data.work`` (codes.Work); tests/test_step_cost.py checks the counts of runs at every mechanism's most
detailed options against these bounds and that each iteration bound is reached when it binds.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .codes import BRISTLE_SUBSTEP_DEPTH, Scheme, SolverOption, Work
from .kernels.stepping import full_steps
from .simulator import METHODS, Simulator

#: residual evaluations of one friction-loop solve besides those of its Newton iterations: 2 for the seed, 2
#: for the round-off polish; each Newton iteration at most HALVINGS (step halving down to λ = 2⁻¹⁰)
SEED_AND_POLISH_RESIDUALS = 4
HALVINGS = 11


@dataclass(frozen=True)
class StepCost:
    """Counts of the bounded units of work (the fields of codes.Work, lower case)."""
    steps: int = 0
    evaluations: int = 0
    partitions: int = 0
    stage_matrices: int = 0
    friction_solves: int = 0
    friction_iterations: int = 0
    friction_residuals: int = 0
    friction_most: int = 0
    projections: int = 0
    projection_iterations: int = 0
    projection_most: int = 0

    def work(self) -> np.ndarray:
        """The counts in codes.Work order (comparable with Data.work)."""
        return np.array([getattr(self, w.name.lower()) for w in Work], np.int64)

    @classmethod
    def of_work(cls, work) -> "StepCost":
        return cls(**{w.name.lower(): int(work[w]) for w in Work})

    def __add__(self, other: "StepCost") -> "StepCost":
        """Work of one after the other (the most of one solve is the larger)."""
        return StepCost(**{f.name: (max if f.name.endswith("_most") else int.__add__)(getattr(self, f.name),
                                                                                  getattr(other, f.name))
                           for f in fields(self)})

    def __mul__(self, n: int) -> "StepCost":
        """n of these one after the other."""
        if n <= 0:
            return StepCost()
        return StepCost(**{f.name: getattr(self, f.name) * (1 if f.name.endswith("_most") else n)
                           for f in fields(self)})

    def table(self) -> str:
        return "\n".join(f"  {f.name.replace('_', ' '):24s}{getattr(self, f.name):>10d}" for f in fields(self))


def _evaluations(sim: Simulator, n: int) -> StepCost:
    """n evaluations of the dynamics at the run's bounds."""
    m, o = sim.model, sim.data.solver_opt
    nf = m.fric_dofs.shape[0]
    cap = int(o[SolverOption.FRICTION_ITERATIONS])
    solves = n if nf else 0
    return StepCost(evaluations=n, partitions=n if m.nc else 0, friction_solves=solves,
                    friction_iterations=solves * (cap + 1),
                    friction_residuals=solves * (SEED_AND_POLISH_RESIDUALS + HALVINGS * cap),
                    friction_most=cap + 1 if solves else 0)


def _method_step(sim: Simulator, scheme: Scheme) -> StepCost:
    """One step of a scheme, its projection included."""
    n = {Scheme.RK4: 4, Scheme.ROS2: 2, Scheme.ROS34PW2: 4}[scheme]
    cost = StepCost(steps=1, stage_matrices=0 if scheme == Scheme.RK4 else 1) + _evaluations(sim, n)
    o = sim.data.solver_opt
    if sim.model.nc and o[SolverOption.PROJECTION] != 0.0:
        p = int(o[SolverOption.PROJECTION_ITERATIONS])
        cost = cost + StepCost(projections=1, projection_iterations=p, projection_most=p)
    return cost


def worst_step(sim: Simulator) -> StepCost:
    """The most work one internal step of ``sim`` (its method and the solver settings in force) can do."""
    method = METHODS[sim.method]
    cost = _method_step(sim, method.scheme)
    if method.scheme == Scheme.ROS34PW2 and sim.model.nz > 0:    # redone in damped substeps for the bristle error
        return cost + _method_step(sim, Scheme.ROS2) * (2 ** (BRISTLE_SUBSTEP_DEPTH + 1) - 2)
    guarded = method.scheme == Scheme.ROS34PW2 or (method.scheme == Scheme.ROS2 and method.gamma < 1.0)
    if guarded:                                   # redone by the damped ROS2
        cost = cost + _method_step(sim, Scheme.ROS2)
    return cost


def worst_communication_step(sim: Simulator, dt: float) -> StepCost:
    """The most work one communication step of length dt (s) can do: its full steps, a remainder step and the
    evaluation of the outputs at its end."""
    n = int(full_steps(float(dt), sim.h))
    cost = worst_step(sim) * n
    if dt - n * sim.h > 1e-9 * sim.h:             # the remainder: one unguarded step (kernels.stepping)
        cost = cost + _method_step(sim, METHODS[sim.method].scheme)
    return cost + _evaluations(sim, 1)
