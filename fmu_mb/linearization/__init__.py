"""Linear models of a mechanism: ``linearize(model, ...)`` → :class:`LinearModel`.

At an operating point — the static equilibrium (drive torques holding the joints), the start of a
run, a state of a run at time t, or a state the user gives — the pipeline's exact Jacobians
(complex step, kernels.jacobian) give A, B, C, D in the mechanism's independent coordinates
(coordinates.py), in continuous time or as the co-simulation FMU's own step map at a sample time.
Inputs are the FMU's drive inputs ``<joint>.tau_drive``, outputs any of its Real outputs (default:
the actuated joints' ``.q`` and ``.qd``); names and units are the FMU's.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .. import registry
from ..codes import Scheme
from ..model import Mechanism, compile_mechanism
from ..model.options import auto_method
from ..outputs import coordinate_kind, expand, index_suffix
from ..simulator import METHODS, Simulator
from ..units import force_unit
from .coordinates import StateCoordinates, state_coordinates
from .jacobians import ComplexStep
from .model import LinearModel, Mode

__all__ = ["linearize", "linearize_along", "save_along", "drive_inputs", "default_outputs", "LinearModel", "Mode",
           "OPERATING_POINTS", "LinearizationError"]

#: the operating points :func:`linearize` knows (``at``); a number is a time of a run
OPERATING_POINTS = ("equilibrium", "start", "state")


class LinearizationError(ValueError):
    """A linearization that cannot be done as asked (the message says why and what to do)."""


def _setup(model, options: dict, method: str | None, step_size: float | None):
    if isinstance(model, Mechanism):
        if options:
            raise LinearizationError("options are for a model file's build(); a Mechanism is already built")
        name, mech, meta, module = model.name, model, {}, None
    else:
        name, path = registry.locate(model)
        module = registry.load_file(path, name)
        known = getattr(module, "OPTIONS", None)
        if known is not None:                          # the ranges an FMU's parameters enforce
            for key, value in options.items():
                if key not in known:
                    raise LinearizationError(f"'{name}' has no option {key!r} (options: {', '.join(known) or 'none'})")
                try:
                    options[key] = known[key].check(key, value)
                except (ValueError, TypeError) as exc:
                    raise LinearizationError(str(exc)) from None
        mech = registry.build_checked(module, path, **options)
        meta = getattr(module, "FMU", {})
    cm = compile_mechanism(mech)
    h = float(step_size or meta.get("step_size", 1e-3))
    method = method or (auto_method(module, options, h) if module is not None else meta.get("method", "rk4"))
    return name, cm, Simulator(cm, h=h, method=method), bool(meta.get("static_start", False))


def drive_inputs(cm) -> list:
    """(name, unit, coordinate) of every drive input, named as the FMU names them (fmi.interface)."""
    out = []
    for j in cm.joints:
        if j.actuated:
            for k in range(j.ndof):
                d = j.dofadr + k
                out.append((f"{j.name}.tau_drive{index_suffix(j.ndof, k)}", force_unit(coordinate_kind(cm, d)), d))
    return out


def _inputs(cm, names):
    drive = drive_inputs(cm)
    by = {n: (n, u, d) for n, u, d in drive}
    if names is None:
        chosen = drive
    else:
        bad = [n for n in names if n not in by]
        if bad:
            raise LinearizationError(f"not a drive input of '{cm.name}': {', '.join(bad)} (drive inputs: "
                                     f"{', '.join(by) or 'none'})")
        chosen = [by[n] for n in names]
    return [c[0] for c in chosen], [c[1] for c in chosen], np.array([c[2] for c in chosen], np.int64)


def default_outputs(cm) -> list:
    """The outputs of a linear model when none are chosen: the actuated joints' q and qd."""
    act = {j.name for j in cm.joints if j.actuated}
    return [v.name for v in expand(cm) if v.type == "Real" and v.source[0] in ("q", "qd") and v.source[1] in act]


def _outputs(cm, names):
    real = {v.name: v for v in expand(cm) if v.type == "Real"}
    if names is None:
        names = default_outputs(cm)
    bad = [n for n in names if n not in real]
    if bad:
        raise LinearizationError(f"not a Real output of '{cm.name}': {', '.join(bad)} (see fmu-mb info or the "
                                 "mechanism's reference page for its outputs)")
    return list(names), [real[n].unit or "" for n in names], [real[n].source for n in names]


def _by_name(cm, values, what: str) -> np.ndarray:
    """A coordinate vector from an array (nv,) or a mapping coordinate name -> value (others 0)."""
    nv = cm.model.nv
    if isinstance(values, dict):
        out = np.zeros(nv)
        for k, v in values.items():
            out[cm.dof(k)] = float(v)
        return out
    a = np.asarray(values, dtype=float).reshape(-1)
    if a.shape != (nv,):
        raise LinearizationError(f"{what} needs {nv} values ({', '.join(cm.dof_names)}), got {a.size}")
    return a


def linearize(model, options: dict | None = None, *, at="equilibrium", q=None, qd=None, drive=None,
              inputs=None, outputs=None, dt: float | None = None, method: str | None = None,
              step_size: float | None = None, drive_history=None) -> LinearModel:
    """The linear model of ``model`` (a name in models/, a model file, or a Mechanism) built with ``options``.

    at: ``"equilibrium"`` — static equilibrium from q (default the start configuration): the elastic
        coordinates (base on supports, RFEM sdes, joint springs) settle, the joints are held and
        the drive inputs take the holding torques (an unactuated joint that needs a holding force
        is an error: there is no equilibrium there); ``"start"`` — the FMU's start (its static start
        where it has one); ``"state"`` — the state q, qd (arrays or {coordinate: value}; missing:
        the start's); a number t — the state a run from the start reaches at t s, driven by
        ``drive_history`` (a function t -> drive values, the chosen inputs' order) or ``drive``.
    drive: the drive inputs at the operating point ({input name: value} or values in the order of
        ``inputs``; equilibrium: added to the holding torques).
    inputs / outputs: FMU input and output names (defaults: every drive input; the actuated joints'
        q and qd).
    dt: None for continuous time, else the sample time of the discrete-time model: the step map of
        one co-simulation step of dt (the FMU's integrator ``method`` at its ``step_size``, the drive
        held over the step).
    """
    options = dict(options or {})
    name, cm, sim, static_start = _setup(model, options, method, step_size)
    in_names, in_units, in_dofs = _inputs(cm, inputs)
    out_names, out_units, sources = _outputs(cm, outputs)
    u = _drive(in_names, in_dofs, drive, dt)

    if isinstance(at, str) and at not in OPERATING_POINTS:
        raise LinearizationError(f"at must be one of {', '.join(OPERATING_POINTS)} or a time in s (got {at!r})")
    t = 0.0
    cs = ComplexStep(sim)
    if at == "equilibrium":
        what = _equilibrium(cm, sim, cs, q, in_dofs, u)
    elif at == "state":
        q0 = cm.q0 if q is None else _by_name(cm, q, "q")
        qd0 = cm.qd0 if qd is None else _by_name(cm, qd, "qd")
        sim.initialize(q=q0, qd=qd0, static=False)
        what = "a given state"
    else:
        sim.initialize(static=static_start)
        what = "the start" + (" (static equilibrium)" if static_start else "")
        if not isinstance(at, str):
            t = float(at)
            if not (math.isfinite(t) and t >= 0):
                raise LinearizationError(f"at: a time must be ≥ 0 s (got {at!r})")
            _run_to(sim, cm, t, in_dofs, u, drive_history)
            what = f"the state at t = {t:g} s of a run from the start"
    if not (isinstance(at, str) and at == "equilibrium"):
        sim.tau_drive[:] = 0.0
        sim.tau_drive[in_dofs] = u
    return _linear_model(name, cm, sim, cs, options, in_names, in_units, in_dofs, out_names, out_units, sources, dt,
                         what)


def _drive(in_names, in_dofs, drive, dt) -> np.ndarray:
    """The drive inputs' values (``drive``: {input: value} or values in the inputs' order), checked with ``dt``."""
    u = np.zeros(len(in_dofs))
    if drive is not None:
        if isinstance(drive, dict):
            bad = [k for k in drive if k not in in_names]
            if bad:
                raise LinearizationError(f"drive: {', '.join(bad)} not among the inputs ({', '.join(in_names)})")
            for k, v in drive.items():
                u[in_names.index(k)] = float(v)
        else:
            u = np.asarray(drive, dtype=float).reshape(-1)
            if u.shape != in_dofs.shape:
                raise LinearizationError(f"drive needs {in_dofs.size} values ({', '.join(in_names)}), got {u.size}")
    if not np.all(np.isfinite(u)):
        raise LinearizationError("drive values must be finite")
    if dt is not None and not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
        raise LinearizationError(f"the sample time dt must be a number > 0 s (got {dt!r})")

    return u


def linearize_along(model, options: dict | None = None, *, times, drive=None, drive_history=None, inputs=None,
                    outputs=None, dt: float | None = None, method: str | None = None,
                    step_size: float | None = None) -> list:
    """A linear time-varying model: the linear models of ``model`` along one run from the FMU's start, one
    per time in ``times`` (s, increasing, ≥ 0) — what :func:`linearize` gives at ``at=t`` for each, from a
    single run. The run follows the model's programmed motions (the papers' scenarios: trajectories are part
    of the model) with the drive inputs at ``drive`` or following ``drive_history`` (t -> values). With
    ``dt``, each is the step map of the co-simulation step of dt from its time: sampled every dt, their
    product carries a small deviation along the run. Arguments otherwise as :func:`linearize`.
    :func:`save_along` writes them as one file."""
    options = dict(options or {})
    name, cm, sim, static_start = _setup(model, options, method, step_size)
    in_names, in_units, in_dofs = _inputs(cm, inputs)
    out_names, out_units, sources = _outputs(cm, outputs)
    u = _drive(in_names, in_dofs, drive, dt)
    times = np.asarray(times, dtype=float).reshape(-1)
    if times.size == 0 or not np.all(np.isfinite(times)) or times[0] < 0 or np.any(np.diff(times) <= 0):
        raise LinearizationError("times must be increasing, finite and ≥ 0 s")
    sim.initialize(static=static_start)
    cs = ComplexStep(sim)
    models = []
    for t in times:
        _run_to(sim, cm, float(t), in_dofs, u, drive_history)
        sim.tau_drive[:] = 0.0
        sim.tau_drive[in_dofs] = u
        models.append(_linear_model(name, cm, sim, cs, options, in_names, in_units, in_dofs, out_names, out_units,
                                    sources, dt, f"the state at t = {t:g} s of a run from the start"))
    return models


def save_along(models: list, path) -> Path:
    """Write the models of :func:`linearize_along` as one ``.mat`` (A, B, C, D as n×n×N arrays, MATLAB's
    layout of a linear time-varying model; ``t`` the times) or ``.npz`` (N×n×n), with the names, units and
    operating points. Refused when the state coordinates change along the run (a constrained mechanism's
    partition switched): the message names the time; save those models one by one."""
    path = Path(path)
    first = models[0]
    for m in models[1:]:
        if m.states != first.states or m.A.shape != first.A.shape:
            raise LinearizationError(f"the state coordinates change along the run at t = {m.t_op:g} s "
                                     f"({', '.join(m.states)} instead of {', '.join(first.states)}): "
                                     "save the models one by one (LinearModel.save)")
    stack = {k: np.stack([getattr(m, k) for m in models]) for k in ("A", "B", "C", "D", "x_op", "u_op", "y_op")}
    names = dict(StateName=first.states, StateUnit=first.state_units, InputName=first.inputs,
                 InputUnit=first.input_units, OutputName=first.outputs, OutputUnit=first.output_units)
    info = dict(mechanism=first.mechanism, coordinates=first.coordinates,
                options=", ".join(f"{k}={v}" for k, v in first.options.items()))
    data = dict(t=np.array([m.t_op for m in models]), Ts=0.0 if first.dt is None else float(first.dt))
    if path.suffix == ".mat":
        import scipy.io
        mats = {k: np.moveaxis(v, 0, -1) for k, v in stack.items()}          # n×n×N
        cells = {k: np.array(v, dtype=object).reshape(-1, 1) for k, v in names.items()}
        scipy.io.savemat(path, {**mats, **data, **cells, **info}, oned_as="column")
    elif path.suffix == ".npz":
        np.savez(path, **stack, **data, **{k: np.array(v, dtype=str) for k, v in names.items()},
                 **{k: np.array(v) for k, v in info.items()})
    else:
        raise LinearizationError(f"{path}: a linear time-varying model is saved as .mat or .npz")
    return path


def _equilibrium(cm, sim, cs, q, in_dofs, u) -> str:
    """Static equilibrium: the elastic coordinates settle with the joints held (the FMU's static start,
    statics module), then the drive inputs that hold it: the reduced accelerations are affine in the drive,
    a + B_r u, so u solves B_r u = −a in the least-squares sense; a residual left means a coordinate the
    inputs cannot hold (refused, naming it). ``u`` (the user's drive) is added on top."""
    q0 = cm.q0 if q is None else _by_name(cm, q, "q")
    sim.initialize(q=q0, qd=np.zeros(cm.model.nv), static=True)
    sim.tau_drive[:] = 0.0
    x, t = sim.x.copy(), sim.t
    xdot = sim.evaluate().copy()
    coords = state_coordinates(sim, cs, x, t)
    _, B, _, _ = cs.continuous(x, t, sim.tau_drive, inputs=in_dofs)
    nv = cm.model.nv
    rates = [i for i, r in enumerate(coords.rows) if nv <= r < 2 * nv]
    a = xdot[coords.rows[rates]]
    Br = B[coords.rows[rates]]
    hold = np.linalg.lstsq(Br, -a, rcond=None)[0] if in_dofs.size else np.zeros(0)
    left = a + Br @ hold
    scale = max(1.0, float(np.max(np.abs(a)))) if a.size else 1.0
    bad = np.flatnonzero(np.abs(left) > 1e-8 * scale)
    if bad.size:
        said = ", ".join(f"{coords.names[rates[i]].removesuffix('_dot')} ({left[i]:.3g} {coords.units[rates[i]]}/s)"
                         for i in bad)
        raise LinearizationError(f"no static equilibrium with these inputs: {said} accelerate whatever the drive; "
                                 "add their inputs, or linearize at='state' or at a time of a run")
    sim.tau_drive[in_dofs] = hold + u
    return "static equilibrium (drive inputs at the holding torques)"


def _run_to(sim, cm, t_end: float, in_dofs, u, history) -> None:
    h_comm = max(sim.h, 1e-3)
    while sim.t < t_end - 1e-12:
        if history is not None:
            vals = np.asarray(history(sim.t), dtype=float).reshape(-1)
            if vals.shape != in_dofs.shape or not np.all(np.isfinite(vals)):
                raise LinearizationError(f"drive_history({sim.t:g}) must give {in_dofs.size} finite values")
        else:
            vals = u
        sim.tau_drive[:] = 0.0
        sim.tau_drive[in_dofs] = vals
        sim.step(min(h_comm, t_end - sim.t))
    if history is not None:
        u[:] = np.asarray(history(sim.t), dtype=float).reshape(-1)


def _linear_model(name, cm, sim, cs, options, in_names, in_units, in_dofs, out_names, out_units, sources, dt,
                  what) -> LinearModel:
    m = cm.model
    nv, nz = m.nv, m.nz
    n = 2 * nv + nz
    x, t, tau = sim.x.copy(), sim.t, sim.tau_drive.copy()
    xdot = sim.evaluate().copy()                     # the pipeline at x (also the partition there)
    coords: StateCoordinates = state_coordinates(sim, cs, x, t)
    A, B, C, D = cs.continuous(x, t, tau, sources, in_dofs)
    y = sim.read(sources) if sources else np.zeros(0)
    rows, T = coords.rows, coords.T
    if dt is None:
        Ar, Br = A[rows][:, :n] @ T, B[rows]
    else:
        scheme = Scheme(METHODS[sim.method].scheme)
        Ad, Bd = cs.step(x, t, tau, sim.h, float(dt), scheme, in_dofs)
        Ar, Br = Ad[rows][:, :n] @ T, Bd[rows]
    Cr, Dr = C[:, :n] @ T, D
    npos = int(np.sum(rows < nv))
    return LinearModel(Ar, Br, Cr, Dr, None if dt is None else float(dt), coords.names, coords.units,
                       in_names, in_units, out_names, out_units, x[rows], tau[in_dofs], y, xdot[rows], t, name,
                       options, what, coords.note, npos, T[:nv, :npos].copy(), list(cm.dof_names))
