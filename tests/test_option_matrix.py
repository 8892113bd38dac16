"""Every option combination of every mechanism, at every value of its Count options, runs 1 s at the FMU's
defaults (issue 40): the method, internal step and start (init.static) of the model file's FMU table, the
drives at zero (torque mode: the mechanism released from its start; programmed mode: the paper's path), 10 ms
communication steps, every state finite at the end and no step refused. (Measured on the 2-core AMD EPYC host:
the file alone 280 s, both cores, 247 s of it the crane's flexible jibs of 20 to 40 elements, against 85 s at
0.25 s; in the whole suite's run, beside the other worker, the crane took 487 s; the crane alone 237 s
at 5169eba, whose Cholesky lanes sped up its long jibs.)

The kernels are the ones both FMU kinds run (the FMU core calls the same functions; tests/test_robustness.py
runs every Choice/Flag combination and the ends of the Count ranges through both FMU kinds for 1 s too). The
combinations are run once per distinct compiled mechanism: a Count option that only acts with another option
(the RFEM sections of a rigid link) gives the same Model arrays, hence the same run. Parallel, one process
per core.

What this guards: the manipulator with the flexible link, LuGre and torque mode at n_div 9-14 failed within
20 ms at the default ROS34PW2 (and ROS2 with the low-damping γ) before a redone step was followed by
ROS2_FALLBACK_TIME of damped steps (kernels.linearly_implicit._guarded_steps); the RPSUP with flexible base and
coupler and LuGre released at n_div 5 failed (at 0.08 s on an AMD EPYC host) before a ROS34PW2 step with a large
bristle-error estimate was redone in damped substeps.
"""
from __future__ import annotations

import hashlib
import itertools
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.model import compile_mechanism
from fmu_mb.model import options as opt
from fmu_mb.model.options import auto_method

MODELS = registry.available()
SECONDS, COMM = 1.0, 0.01


def every_combination(name: str) -> list:
    """Every combination of the model's Choice, Flag and Count options (Count: every value of its range)."""
    axes = {}
    for key, o in getattr(registry.load(name), "OPTIONS", {}).items():
        if isinstance(o, opt.Choice):
            axes[key] = list(o.values)
        elif isinstance(o, opt.Flag):
            axes[key] = [False, True]
        elif isinstance(o, opt.Count):
            axes[key] = list(range(o.min, o.max + 1))
    return [dict(zip(axes, c)) for c in itertools.product(*axes.values())]


def _digest(cm) -> str:
    h = hashlib.sha1()
    for field in cm.model._fields:
        h.update(field.encode())
        h.update(np.ascontiguousarray(getattr(cm.model, field)).tobytes())
    return h.hexdigest()


def distinct_combinations(name: str) -> tuple[list, int]:
    """(one combination per distinct compiled mechanism, the largest mechanisms first; number of combinations)."""
    mod = registry.load(name)
    seen, out = set(), []
    combos = every_combination(name)
    for combo in combos:
        cm = compile_mechanism(mod.build(**combo))
        d = _digest(cm)
        if d not in seen:
            seen.add(d)
            out.append((cm.model.nx, combo))
    out.sort(key=lambda c: -c[0])          # the costliest first: the pool's two workers end together
    return [c for _, c in out], len(combos)


def run_one(args) -> tuple:
    """(combo, None) if ``SECONDS`` at the FMU defaults ran to a finite state, else (combo, what went wrong)."""
    name, combo = args
    from fmu_mb.simulator import Simulator
    mod = registry.load(name)
    meta = getattr(mod, "FMU", {})
    try:
        cm = compile_mechanism(mod.build(**combo))
        sim = Simulator(cm, meta.get("step_size", 1e-3), method=auto_method(mod, combo))
        sim.initialize(static=meta.get("static_start", False))
        for _ in range(int(round(SECONDS / COMM))):
            sim.step(COMM)
    except Exception as e:                                  # (SimulationError: a step refused)
        return combo, f"{type(e).__name__}: {e}"
    return combo, None if np.isfinite(sim.x).all() else "non-finite state"


@pytest.mark.parametrize("model", MODELS)
def test_every_option_combination_at_every_count_value_runs_at_the_defaults(model):
    combos, total = distinct_combinations(model)
    assert total >= len(combos) >= 1
    # one combination per integrator first, here: the JIT kernels each method needs are compiled once and cached
    # before the pool's processes start (on a cold cache each of them compiled the same kernels at once)
    mod = registry.load(model)
    first = {}
    for k, c in enumerate(combos):
        first.setdefault(auto_method(mod, c), k)
    warm = {k: run_one((model, combos[k])) for k in first.values()}
    rest = [k for k in range(len(combos)) if k not in warm]
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        pooled = dict(zip(rest, pool.map(run_one, [(model, combos[k]) for k in rest], chunksize=4)))
    results = [warm[k] if k in warm else pooled[k] for k in range(len(combos))]
    failed = [(c, why) for c, why in results if why is not None]
    assert not failed, f"{len(failed)} of {len(combos)} distinct combinations ({total} in all) fail: {failed[:3]}"
