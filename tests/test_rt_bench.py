"""fmu-mb rt-bench (issue 40): a native FMU stepped by the C harness at a fixed rate or back to back, its step-time
distribution and overruns reported; what it cannot measure refused with a message. Only properties of the harness
are asserted (ordering of the statistics, the pacing's lower bound, overrun counting), no speed."""
from __future__ import annotations

import json
import sys

import pytest

from fmu_mb import cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="rt-bench runs on Linux")


def _bench(capsys, *argv):
    code = cli.main(["rt-bench", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_back_to_back_steps_report_an_ordered_distribution(native_fmus, capsys, tmp_path):
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, native_fmus["five_axis"].path, "--rate", 0, "--steps", 3000, "--json", report)
    assert code == 0, err
    r = json.loads(report.read_text())
    assert r["steps"] == 3000 and r["status"] == 0 and r["overruns"] == 0
    assert 0 < r["min_ns"] <= r["median_ns"] <= r["p99_ns"] <= r["p9999_ns"] <= r["max_ns"]
    assert r["min_ns"] <= r["mean_ns"] <= r["max_ns"]
    assert "median" in out and "p99.99" in out and "scheduling:" in out and "memory locked:" in out


def test_back_to_back_steps_take_the_communication_step_asked_for(native_fmus, capsys, tmp_path):
    """--step 0.01: each fmi2DoStep advances 10 ms (a master's step), and the real-time factor is read against it."""
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, native_fmus["five_axis"].path, "--rate", 0, "--step", 0.01, "--steps", 200,
                            "--json", report)
    assert code == 0, err
    r = json.loads(report.read_text())
    assert r["communication_step_s"] == 0.01 and r["steps"] == 200 and r["status"] == 0
    assert "back to back (communication step 10 ms)" in out
    assert f"real time × {0.01 / (r['median_ns'] * 1e-9):.0f} at the median" in out


def test_a_fixed_rate_paces_the_steps_and_counts_overruns(native_fmus, capsys, tmp_path):
    """At 2 kHz, 400 steps take at least 0.2 s (each waits for its period's start); at 1 MHz (a 1 µs period, far
    shorter than any step of the five-axis tree) every step overruns."""
    fmu = native_fmus["five_axis"].path
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, fmu, "--rate", 2000, "--steps", 400, "--json", report)
    assert code == 0, err
    r = json.loads(report.read_text())
    assert r["communication_step_s"] == 0.0005 and r["wall_s"] >= 0.2 * 0.999
    code, out, err = _bench(capsys, fmu, "--rate", 1e6, "--steps", 200, "--json", report)
    assert code == 0, err
    assert json.loads(report.read_text())["overruns"] == 200 and "overruns (steps longer than the period): 200" in out


def test_start_values_reach_the_fmu_and_a_failing_step_stops_the_run(native_fmus, capsys, tmp_path):
    """--set values are the FMU's start values: a drive of 1e12 N·m tears the crane off its programmed path in the
    first step, the FMU refuses the step (keeping its state), and rt-bench reports the step it timed, the FMU's
    message, and exits 1; an FMU that does not initialize (a drive of 1e300: infinite reactions) is an error."""
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, native_fmus["crane"].path, "--rate", 0, "--steps", 100, "--set",
                            "column.tau_drive=1e12", "model.friction=dahl", "--json", report)
    r = json.loads(report.read_text())
    assert code == 1 and r["status"] >= 3 and r["steps"] == 1, (out, err)
    assert "STOPPED" in out and "fmi2DoStep from t = 0 s" in out and "kept" in out
    assert r["start"] == {"column.tau_drive": 1e12, "model.friction": 1}
    code, out, err = _bench(capsys, native_fmus["crane"].path, "--steps", 10, "--set", "column.tau_drive=1e300")
    assert code == 1 and "fmi2ExitInitializationMode" in err and "did not initialize" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_varied_inputs_are_written_before_every_step(native_fmus, capsys, tmp_path):
    """--vary column.tau_drive=1e12: the input is V0 + A·sin(2π·t) at each step's start, so the first step (t = 0)
    drives 0 N·m and runs, and the second (6.3e9 N·m at t = 1 ms) tears the crane off its programmed path: the FMU
    refuses it and rt-bench stops after 2 steps. Held at its start value (no --vary) the same input runs every
    step."""
    fmu = native_fmus["crane"].path
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 50, "--vary", "column.tau_drive=1e12", "--json",
                            report)
    r = json.loads(report.read_text())
    assert code == 1 and r["steps"] == 2 and r["status"] >= 3 and r["varied_inputs"] == 1, (out, err)
    assert r["vary"] == {"column.tau_drive": 1e12}
    assert "inputs written before every step" in out and "fmi2DoStep from t = 0.001 s" in out, out
    code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 50, "--json", report)
    r = json.loads(report.read_text())
    assert code == 0 and r["steps"] == 50 and r["varied_inputs"] == 0, (out, err)
    assert "inputs written" not in out


def test_an_fmi3_fmu_is_stepped_through_the_fmi3_calls(fmi3_fmus, capsys, tmp_path):
    """The FMI 3.0 FMU: fmi3DoStep and one fmi3GetFloat64 of every output (arrays whole) per step; its structural
    model.n_div set in configuration mode (a value out of range: the FMU's refusal, quoted, and no run), its
    Enumeration options, inputs and arrays (gravity, one element NaN: refused by name) in initialization mode, a varied drive written with fmi3SetFloat64 (1e12 N·m:
    refused at the second step, as through FMI 2.0)."""
    fmu = fmi3_fmus["crane"].path
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 300, "--set", "model.link=flexible", "model.n_div=3",
                            "--json", report)
    r = json.loads(report.read_text())
    assert code == 0 and r["steps"] == 300 and r["status"] == 0 and r["fmi_version"] == 3, (out, err)
    assert "step time (fmi3DoStep + every Float64 output)" in out
    code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 10, "--set", "model.n_div=0")
    assert code == 1 and "must be an integer in [1, 40] (got 0)" in err and "did not initialize" in err, err
    code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 10, "--set", "gravity=0 0 nan")   # an array
    assert code == 1 and "'gravity[3]' = nan refused" in err and "did not initialize" in err, err
    code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 10, "--set", "gravity=0 0 -9.7")
    assert code == 0, err
    code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 50, "--vary", "column.tau_drive=1e12", "--json",
                            report)
    r = json.loads(report.read_text())
    assert code == 1 and r["steps"] == 2 and "fmi3DoStep from t = 0.001 s" in out, (out, err)


ME_CASES = [(2, "five_axis", ["--vary", "joint1.tau_drive=2", "joint3.tau_drive=0.5"]),
            (3, "five_axis", ["--vary", "joint1.tau_drive=2", "joint3.tau_drive=0.5"]),
            (2, "three_loop", ["--vary", "joint1pp.tau_drive=0.5", "--set", "model.friction=stribeck",
                               "solver.integrator=rk4", "solver.projection=0"])]


@pytest.mark.parametrize("version, model, argv", ME_CASES, ids=[f"fmi{v}-{m}" for v, m, _ in ME_CASES])
def test_model_exchange_is_integrated_by_the_harness_as_a_rig_does(native_fmus, fmi3_fmus, capsys, tmp_path, version,
                                                                   model, argv):
    """--me rk4: the harness integrates the FMU's Model Exchange interface with the classical RK4 at the period,
    setting time and states at each stage. The co-simulation step of the five-axis tree is RK4 at 1 ms too, and
    that of three_loop with RK4 set and its projection off, so both interfaces must end on the same outputs, bit
    for bit (2000 steps, drives written every step: a wrong stage state or weight, an input written after the first
    stage, or derivatives that differ from the co-simulation stage's would show; three_loop's closed loops and
    Stribeck friction take the constrained derivative and its reuse of the outputs' evaluation). Explicit Euler is
    another method and ends elsewhere (measured: 0.14 N on a reaction force of 16 N of five_axis, 2e-4 on three_loop,
    whose crank is programmed). The outputs are read from the report (hexadecimal: exact)."""
    fmu = (fmi3_fmus if version == 3 else native_fmus)[model].path
    reports = {}
    for me in (None, "rk4", "euler"):
        report = tmp_path / f"{me}.json"
        code, out, err = _bench(capsys, fmu, "--rate", 0, "--steps", 2000, *argv, *(["--me", me] if me else []),
                                "--json", report)
        assert code == 0, err
        reports[me] = json.loads(report.read_text())
        assert reports[me]["model_exchange"] == {None: 0, "rk4": 4, "euler": 1}[me]
        if me:
            calls = "GetContinuousStateDerivatives" if version == 3 else "GetDerivatives"
            assert f"step time ({me}: {reports[me]['model_exchange']} × (SetTime + SetContinuousStates + {calls})" \
                   in out, out
    cs, rk4, euler = (reports[k]["outputs"] for k in (None, "rk4", "euler"))
    assert len(cs) > 20 and max(abs(v) for v in cs) > 1.0
    assert rk4 == cs
    assert 0.0 < max(abs(a - b) for a, b in zip(euler, cs)) < 1.0


def test_model_exchange_of_a_stiff_option_set_stops_with_the_fmus_message(native_fmus, capsys, tmp_path):
    """The crane with its flexible jib, LuGre and the sprung base has modes no explicit 1 ms step follows: the
    rig's Euler blows up within a few steps, the FMU refuses the state set or the step completed (keeping the
    last good one), and rt-bench stops with its message, a hint at why, and exit status 1."""
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, native_fmus["crane"].path, "--rate", 0, "--steps", 1000, "--me", "euler",
                            "--set", "model.link=flexible", "model.friction=lugre", "model.base=flexible", "--json",
                            report)
    r = json.loads(report.read_text())
    assert code == 1 and r["status"] >= 3 and 1 <= r["steps"] < 1000 and r["outputs"] == [], (out, err)
    assert "STOPPED" in out and "[crane] fmi2" in out and "kept" in out, out
    assert "the rig's explicit euler at 1 ms" in out


def test_an_unknown_rig_solver_is_refused_with_the_choices(native_fmus, capsys):
    with pytest.raises(SystemExit) as stop:
        _bench(capsys, native_fmus["five_axis"].path, "--me", "ode45")
    assert stop.value.code == 2 and "invalid choice: 'ode45' (choose from 'euler', 'rk4')" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["python FMU", "no file", "not an FMU", "zero steps", "negative rate", "bad cpu",
                                  "unknown variable", "step with a rate", "vary a parameter", "vary an output",
                                  "vary without amplitude", "vary by nan", "vary unknown", "me of a python FMU"])
def test_what_rt_bench_cannot_do_is_refused_in_one_line(fmus, native_fmus, capsys, tmp_path, case):
    native = native_fmus["five_axis"].path
    junk = tmp_path / "junk.fmu"
    junk.write_text("not a zip")
    argv, expect = {
        "python FMU": ([fmus["five_axis"].path], "is a Python FMU"),
        "no file": ([tmp_path / "none.fmu"], "no such file"),
        "not an FMU": ([junk], "cannot read the model description"),
        "zero steps": ([native, "--steps", 0], "--steps must be at least 1"),
        "negative rate": ([native, "--rate", -5], "--rate must be"),
        "bad cpu": ([native, "--cpu", 999], "--cpu: this machine has CPUs"),
        "unknown variable": ([native, "--set", "joint9.tau_drive=1"], "not a variable of five_axis"),
        "step with a rate": ([native, "--rate", 500, "--step", 0.01], "--step sets the communication step"),
        "vary a parameter": ([native, "--vary", "model.friction=1"], "writes Real inputs during the run"),
        "vary an output": ([native, "--vary", "joint1.q=1"], "(joint1.q is an output)"),
        "vary without amplitude": ([native, "--vary", "joint1.tau_drive"], "expected NAME=AMPLITUDE"),
        "vary by nan": ([native, "--vary", "joint1.tau_drive=nan"], "must be a finite number"),
        "vary unknown": ([native, "--vary", "joint9.tau_drive=1"], "not a variable of five_axis"),
        "me of a python FMU": ([fmus["five_axis"].path, "--me", "rk4"], "this one offers no Model Exchange"),
    }[case]
    code, out, err = _bench(capsys, *argv)
    assert code == 2 and expect in err and len(err.strip().splitlines()) == 1, err


def test_the_baseline_is_the_same_loop_with_a_step_of_fixed_work(native_fmus, capsys, tmp_path):
    """--baseline: the harness's spin mode (a fixed recurrence instead of the FMU) calibrated to the FMU's median
    step. The spin's median grows with its iterations (4× the work: 2.5-6× the median; a check that the work is
    not folded away by the compiler, which a recurrence with a fixed point at its start was), and the CLI reports
    the baseline's distribution beside the FMU's."""
    from fmu_mb import rtbench
    small, large = (rtbench.spin(n, 400, 0.0)["median_ns"] for n in (5000, 20000))
    assert small > 1000 and 2.5 * small <= large <= 6.0 * small, (small, large)
    report = tmp_path / "r.json"
    code, out, err = _bench(capsys, native_fmus["five_axis"].path, "--rate", 0, "--steps", 2000, "--baseline",
                            "--json", report)
    assert code == 0, err
    r = json.loads(report.read_text())
    b = r["baseline"]
    assert b["steps"] == 2000 and b["status"] == 0 and b["spin_iterations"] >= 1
    assert 0 < b["min_ns"] <= b["median_ns"] <= b["p99_ns"] <= b["max_ns"]
    assert 0.3 * r["median_ns"] <= b["median_ns"] <= 3.0 * r["median_ns"]        # calibrated to the FMU's step
    assert "platform baseline (the same loop, each step" in out and "worst / median" in out
