"""Soak (issue #10): a million doSteps of five_axis at 1 ms and 1e5 of the rpsup at 50 µs in one FMU instance
of each kind (the FMI 3.0 FMUs a tenth of that: the same core and state under another API), in a fresh host process
(tests.fmu_cases), against a direct run of the same length. A file of
its own so that the test suite's workers (pytest-xdist, one file per worker) run it beside
tests/test_robustness.py, whose fixtures and host it shares.
"""
from __future__ import annotations

import numpy as np
import pytest

from fmu_mb import registry
from fmu_mb.model.options import auto_method
from tests.test_robustness import _ok, extracted, run_case  # noqa: F401  (extracted: the fixture)


_DIRECT = {}


def _direct(model, n, dt, inputs, params):
    """The same run on the direct simulator, on the FMU's time grid t_k = k·dt (once per run: the FMU kinds
    compare with the same one)."""
    key = (model, n, dt, tuple(sorted(inputs.items())), tuple(sorted(params.items())))
    if key not in _DIRECT:
        _DIRECT[key] = _direct_run(model, n, dt, inputs, params)
    return _DIRECT[key]


def _direct_run(model, n, dt, inputs, params):
    from fmu_mb.model import compile_mechanism
    from fmu_mb.simulator import Simulator
    mod = registry.load(model)
    meta = getattr(mod, "FMU", {})
    options = {k.split(".", 1)[1]: mod.OPTIONS[k.split(".", 1)[1]].values[v] for k, v in params.items()}
    cm = compile_mechanism(mod.build(**options))
    sim = Simulator(cm, h=meta.get("step_size", 1e-3), method=auto_method(mod, options), assemble=False)
    sim.initialize(static=meta.get("static_start", False))
    for name, v in inputs.items():
        sim.tau_drive[cm.joint(name.split(".")[0]).dofadr] = v
    if dt == sim.h and not cm.trajectories:
        sim.step(n * dt)                              # one call: the same steps, time does not enter
    else:
        for k in range(n):
            sim.t = k * dt
            sim.step(dt)
    sim.t = n * dt
    sim.evaluate()
    return sim


@pytest.mark.parametrize("model,n,dt,inputs,params", [
    ("five_axis", 1_000_000, 1e-3, {"joint1.tau_drive": 1.0, "joint4.tau_drive": -0.5}, {"model.friction": 2}),
    ("rpsup", 100_000, 5e-5, {}, {}),
])
def test_soak(extracted, model, n, dt, inputs, params):
    """n doSteps in one instance (issue #10: 1e6 of five_axis at 1 ms, 1e5 of the rpsup): resident
    memory grows < 10 MB after the first tenth, and the final state equals a fresh direct run of
    the same length (no drift: bitwise, as the FMU runs the same kernels on the same time grid)."""
    if extracted.kind == "fmi3":
        n //= 10       # the FMI 3.0 API over the same core and state (the FMI 2.0 FMUs run the million)
    rc, res, err = run_case("soak", timeout=3600, dir=str(extracted[model]), n=n, dt=dt, inputs=inputs, params=params)
    _ok(rc, res, err)
    assert res["worst"] == 0 and res["steps"] == n
    rss = res["rss_kib"]
    assert len(rss) == 10 and rss[-1] - rss[0] < 10 * 1024, rss
    sim = _direct(model, n, dt, inputs, params)
    got = {k: float.fromhex(v) for k, v in res["outputs"].items()}
    for j in sim.cm.joints:
        for k in range(j.ndof):
            name = f"{j.name}.q" + (f"[{k + 1}]" if j.ndof > 1 else "")
            assert got[name] == sim.q[j.dofadr + k], name
            assert got[name.replace(".q", ".qd")] == sim.qd[j.dofadr + k], name
    assert np.isfinite(list(got.values())).all()
