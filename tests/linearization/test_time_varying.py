"""Linear time-varying models along a run (fmu_mb.linearization.linearize_along, fmu-mb linearize --along).

The step maps sampled every dt along a run carry a small deviation of the start along the whole run: their
product is checked against the difference of two nonlinear runs (the deviation second order: it halves with the
deviation), and each sample is the model :func:`linearize` gives at that time.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.io

from fmu_mb.linearization import LinearizationError, linearize, linearize_along, save_along
from fmu_mb.model import compile_mechanism
from fmu_mb import registry
from fmu_mb.simulator import Simulator

DT = 0.05


def _history(t):
    """Drive torques of the five-axis tree, sampled every DT and held (what the step maps assume)."""
    s = np.floor(t / DT + 1e-9) * DT
    return [2.0 * np.cos(3 * s), 0.5, -np.sin(2 * s), -0.5, 0.3]


def _run(dq, stop):
    mech = registry.build_checked(registry.load_file(registry.locate("five_axis")[1], "five_axis"),
                                  registry.locate("five_axis")[1])
    cm = compile_mechanism(mech)
    sim = Simulator(cm, h=1e-3, method="rk4")
    sim.initialize(q=cm.q0 + dq, qd=cm.qd0, static=False)
    while sim.t < stop - 1e-12:
        sim.tau_drive[:] = 0.0
        sim.tau_drive[:5] = _history(sim.t)
        sim.step(min(1e-3, stop - sim.t))
    return sim.x[:10].copy()


def test_the_product_of_the_step_maps_carries_a_deviation_along_the_run():
    """Five-axis tree, a varying drive held every 50 ms, 0.5 s: Φ = A_9 … A_0 maps a 1e-6 rad deviation of joint
    2's start onto the nonlinear runs' difference to 1.2e-6 relative (second order: half at half the
    deviation); the frozen A changes along the run (by 0.1: the model is time-varying)."""
    times = np.arange(0.0, 0.5 + 1e-9, DT)
    models = linearize_along("five_axis", times=times, drive_history=_history, dt=DT)
    assert [m.t_op for m in models] == pytest.approx(times)
    assert np.max(np.abs(models[-1].A - models[0].A)) > 0.05
    phi = np.eye(10)
    for m in models[:-1]:
        phi = m.A @ phi
    base = _run(np.zeros(5), 0.5)
    errors = []
    for size in (1e-6, 5e-7):
        dq = np.zeros(5)
        dq[1] = size
        predicted = phi @ np.r_[dq, np.zeros(5)]
        errors.append(np.max(np.abs(_run(dq, 0.5) - base - predicted)) / np.max(np.abs(predicted)))
    assert errors[0] < 1e-5, errors
    assert errors[1] / errors[0] == pytest.approx(0.5, rel=0.1), errors


def test_each_sample_is_the_linearization_at_its_time_and_the_stack_is_saved(tmp_path):
    """The crane with a flexible jib along its programmed motion (the paper's lift and ellipse): each sample
    equals linearize(at=t); .mat holds A as n×n×N (MATLAB's layout of an LTV model) with the names and times."""
    opts = {"link": "flexible"}
    models = linearize_along("crane", opts, times=[0.5, 1.0])
    for m, t in zip(models, (0.5, 1.0)):
        one = linearize("crane", opts, at=t)
        assert one.states == m.states
        for k in "ABCD":
            assert np.allclose(getattr(m, k), getattr(one, k), rtol=0, atol=1e-12 * max(1.0, np.abs(getattr(one, k)).max()))
    assert np.max(np.abs(models[1].A - models[0].A)) > 0.0
    mat = scipy.io.loadmat(save_along(models, tmp_path / "ltv.mat"))
    n = models[0].A.shape[0]
    assert mat["A"].shape == (n, n, 2) and np.array_equal(mat["A"][:, :, 1], models[1].A)
    assert list(mat["t"].ravel()) == [0.5, 1.0] and mat["StateName"].shape == (n, 1)
    npz = np.load(save_along(models, tmp_path / "ltv.npz"))
    assert npz["B"].shape == (2,) + models[0].B.shape


def test_refusals_say_why(tmp_path):
    with pytest.raises(LinearizationError, match="increasing"):
        linearize_along("five_axis", times=[0.2, 0.1])
    models = linearize_along("five_axis", times=[0.0, 0.1])
    models[1].states = list(reversed(models[1].states))
    with pytest.raises(LinearizationError, match="state coordinates change along the run at t = 0.1 s"):
        save_along(models, tmp_path / "x.mat")


def test_command_line(tmp_path, capsys):
    from fmu_mb.cli import main
    out = tmp_path / "crane.mat"
    assert main(["linearize", "crane", "--set", "link=flexible", "--along", "0:1:0.5", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "t =      0.5 s: 32 states" in said and "3 samples" in said
    assert scipy.io.loadmat(out)["A"].shape == (32, 32, 3)
    for argv, words in ((["--along", "1:0:0.1"], "0 <= T0 <= T1"), (["--along", "x"], "--along wants T0:T1:DT"),
                        (["--along", "0:1:0.5", "--at", "start"], "--at and --report do not apply")):
        assert main(["linearize", "crane", *argv]) == 2
        assert words in capsys.readouterr().err
