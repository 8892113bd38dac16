"""Studies on Dask (fmu_mb.sweep, ``fmu-mb sweep``): issue #15's acceptance runs.

The runs execute in Dask worker processes (a LocalCluster, or a dask scheduler and worker started
here as separate processes); this test process only reads the results, so no FMU is loaded here.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fmpy import read_model_description

from fmu_mb.sweep import StudyError, load_study, run_study, study_from_dict
from fmu_mb.sweep.study import _tasks

ROOT = Path(__file__).resolve().parents[2]
DRIVES = [0.0, 0.5, 1.0, 2.0, 3.0]


def _study(fmu_path) -> dict:
    """15 runs that finish (friction law × joint-1 drive) and one that fails at its first doStep (an
    internal step limit the communication step exceeds)."""
    return {"fmu": str(fmu_path), "stop_time": 0.3, "step": 0.01,
            "outputs": ["joint1.q", "joint2.q", "joint1.tau_friction"],
            "metrics": ["max_abs(joint1.q)", "final(joint2.q)", "rms(joint1.tau_friction)"],
            "grid": {"model.friction": [0, 1, 2], "joint1.tau_drive": DRIVES},
            "runs": [{"solver.max_steps_per_call": 1}], "title": "five_axis test sweep"}


def _trajectories(folder: Path, table) -> dict:
    return {k: pd.read_parquet(folder / "runs" / f"{k}.parquet") for k in table["key"]}


@pytest.fixture(scope="module")
def local_sweep(fmus, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    study = study_from_dict(_study(fmus["five_axis"].path))
    table, executed = run_study(study, out, workers=2, progress=False)
    return study, out, table, executed


def test_a_16_run_sweep_on_a_local_cluster_gives_one_row_per_run(local_sweep):
    study, out, table, executed = local_sweep
    assert executed == 16 and len(table) == 16 and table["key"].is_unique
    for name in ("model.friction", "joint1.tau_drive", "solver.max_steps_per_call", *study.metrics):
        assert name in table.columns
    ok = table[table["status"] == "ok"]
    assert len(ok) == 15
    assert set(zip(ok["model.friction"], ok["joint1.tau_drive"])) == {(f, d) for f in (0, 1, 2) for d in DRIVES}
    assert np.all(np.isfinite(ok[study.metrics].to_numpy()))
    assert np.allclose(ok["t_end"], 0.3, rtol=0, atol=1e-12)
    # the physics shows in the table: no drive, no motion; a larger drive, a larger swing; friction brakes it
    rest = ok[ok["joint1.tau_drive"] == 0.0]
    assert np.all(rest["max_abs(joint1.q)"] == 0.0)
    free = ok[ok["model.friction"] == 0].sort_values("joint1.tau_drive")["max_abs(joint1.q)"].to_numpy()
    assert np.all(np.diff(free) > 0)
    braked = ok[(ok["model.friction"] > 0) & (ok["joint1.tau_drive"] == 3.0)]["max_abs(joint1.q)"]
    assert np.all(braked < free[-1])
    assert np.all(ok[ok["model.friction"] == 0]["rms(joint1.tau_friction)"] == 0.0)
    bad = table[table["status"] != "ok"].iloc[0]
    assert bad["status"] == "error" and bad["t_end"] == 0.0
    assert "max_steps_per_call" in bad["message"] and "fmi2DoStep" in bad["message"]
    assert np.isnan(bad["max_abs(joint1.q)"])
    # the files: the table twice, one trajectory and one row per run, the plot
    assert pd.read_parquet(out / "table.parquet").equals(table)
    assert (out / "table.csv").is_file() and (out / "summary.png").stat().st_size > 10_000
    traj = _trajectories(out, table)
    for key, frame in traj.items():
        if key in set(ok["key"]):
            assert len(frame) == 31 and list(frame.columns) == ["time", *study.outputs]


def test_a_rerun_does_no_work_and_returns_the_same_table(local_sweep):
    study, out, table, _ = local_sweep
    stamp = {f: f.stat().st_mtime_ns for f in (out / "runs").iterdir()}
    again, executed = run_study(study, out, workers=2, progress=False)
    assert executed == 0
    assert again.equals(table)
    assert {f: f.stat().st_mtime_ns for f in (out / "runs").iterdir()} == stamp
    # a study grown by one run does only that run
    grown = study_from_dict({**_study(study.fmu), "grid": {"model.friction": [0, 1, 2],
                                                           "joint1.tau_drive": DRIVES + [4.0]}})
    table2, executed = run_study(grown, out, workers=1, progress=False)
    assert executed == 3 and len(table2) == 19


def test_a_study_report_shows_its_runs_metrics_and_one_run(local_sweep, tmp_path):
    """fmu-mb report on the study folder: study.json names the model; the page lists every run, plots
    each metric against the varied start values and animates the first finished run."""
    from fmu_mb.report import write_report
    study, out, table, _ = local_sweep
    meta = json.loads((out / "study.json").read_text())
    assert meta["model"] == "five_axis" and meta["metrics"] == study.metrics
    page = write_report(out, tmp_path / "study.html", max_frames=10)
    text = page.read_text()
    assert all(k in text for k in table["key"]) and "five_axis test sweep" in text
    assert all(f'"text":"{m}"' in text for m in study.metrics)          # one figure per metric
    first = table[table["status"] == "ok"]["key"].iloc[0]
    assert f"Run {first}: Mechanism" in text and "five_axis: mechanism" in text


def test_reset_instances_give_the_bits_of_fresh_ones(local_sweep, tmp_path):
    """Runs on instances reused through fmi2Reset equal runs on fresh instances bitwise."""
    study, out, table, _ = local_sweep
    fresh, _ = run_study(study, tmp_path, workers=2, progress=False, reuse_instances=False)
    a, b = _trajectories(out, table), _trajectories(tmp_path, fresh)
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].equals(b[k]), k


def _start(cmd, log):
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                            env=dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False"))


def test_the_same_sweep_on_a_dask_scheduler_gives_identical_results(local_sweep, tmp_path):
    """A dask scheduler and a two-process dask worker started here on localhost (as on a cluster):
    ``--scheduler`` runs the study there, with the same table and the same trajectories, bit for bit."""
    study, out, table, _ = local_sweep
    bindir = Path(sys.executable).parent
    sched_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "w")
    procs = [_start([str(bindir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--no-dashboard", "--scheduler-file", str(sched_file)], log)]
    try:
        for _ in range(600):
            if sched_file.is_file() and sched_file.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        procs.append(_start([str(bindir / "dask"), "worker", address, "--nworkers", "2", "--nthreads", "1",
                             "--no-dashboard", "--local-directory", str(tmp_path / "work")], log))
        _write_toml(study, tmp_path / "study.toml")
        res = subprocess.run([sys.executable, "-m", "fmu_mb", "sweep", str(tmp_path / "study.toml"), "--out",
                              str(tmp_path / "remote"), "--scheduler", address, "--no-progress"],
                             cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        assert "16 run(s)" in res.stdout and "16 run now, 1 failed" in res.stdout
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()
    remote = pd.read_parquet(tmp_path / "remote" / "table.parquet")
    cols = ["key", "status", "message", "t_end", "model.friction", "joint1.tau_drive", *study.metrics]
    assert remote[cols].equals(table[cols])
    a, b = _trajectories(out, table), _trajectories(tmp_path / "remote", remote)
    for k in a:
        assert a[k].equals(b[k]), k


def _write_toml(study, path: Path) -> None:
    """The test's study as a TOML file (what a user would write)."""
    lines = [f'fmu = "{study.fmu}"', "stop_time = 0.3", "step = 0.01",
             "outputs = " + json.dumps(study.outputs), "metrics = " + json.dumps(study.metrics),
             "[grid]", '"model.friction" = [0, 1, 2]', '"joint1.tau_drive" = ' + json.dumps(DRIVES),
             "[[runs]]", '"solver.max_steps_per_call" = 1']
    path.write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------ study files
@pytest.mark.parametrize("entry, message", [
    ({"fmu": ""}, "'fmu'"),
    ({"grid": {"model.friction": []}}, "grid.'model.friction' must be a non-empty list"),
    ({"metrics": ["peak(joint1.q)"]}, "stat(variable)"),
    ({"colour": "red"}, "unknown entry colour"),
    ({"random": {"n": 0}}, "random.n must be a positive integer"),
    ({"random": {"n": 2, "gravity[3]": {"uniform": [1.0, -1.0]}}}, "needs a < b"),
    ({"stop_time": -1.0}, "stop_time must be a positive"),
    ({"plot": {"colour": "red"}}, "plot takes x"),
])
def test_bad_study_entries_are_refused_with_the_entry_named(entry, message):
    with pytest.raises(StudyError, match=None) as e:
        study_from_dict({"fmu": "five_axis", **entry}, "bad.toml")
    assert message in str(e.value) and "bad.toml" in str(e.value)


@pytest.mark.parametrize("entry, message", [
    ({"grid": {"joint9.tau_drive": [1.0]}}, "joint9.tau_drive: no such variable"),
    ({"runs": [{"joint1.q": 1.0}]}, "joint1.q: a output, only parameters and inputs take values"),
    ({"metrics": ["max(joint1.nothing)"]}, "joint1.nothing: no such variable"),
])
def test_names_unknown_to_the_fmu_are_refused_before_any_run(fmus, entry, message):
    study = study_from_dict({"fmu": str(fmus["five_axis"].path), **entry}, "bad.toml")
    md = read_model_description(str(fmus["five_axis"].path))
    with pytest.raises(StudyError) as e:
        _tasks(study, md, "0" * 64)
    assert message in str(e.value)


def test_random_samples_are_reproducible_and_in_range():
    d = {"fmu": "five_axis", "random": {"n": 50, "seed": 3, "joint1.tau_drive": {"uniform": [-1.0, 2.0]},
                                        "model.friction": {"choice": [0, 2]}}}
    a, b = study_from_dict(d).runs, study_from_dict(d).runs
    assert a == b and len(a) == 50
    assert all(-1.0 <= r["joint1.tau_drive"] < 2.0 and r["model.friction"] in (0, 2) for r in a)
    assert {r["model.friction"] for r in a} == {0, 2}


@pytest.mark.parametrize("name", ["crane_support_stiffness", "manipulator_variants"])
def test_the_paper_studies_name_only_variables_their_fmus_have(fmus, name):
    """studies/*.toml (paper 001 Fig. 8, paper 000's eight variants) are valid for today's FMUs."""
    study = load_study(ROOT / "studies" / f"{name}.toml")
    md = read_model_description(str(fmus[study.fmu].path))
    tasks = _tasks(study, md, "0" * 64)
    assert len(tasks) == {"crane_support_stiffness": 3, "manipulator_variants": 8}[name]
    assert len({t["key"] for t in tasks}) == len(tasks)


def test_cli_reports_a_bad_study_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('fmu = "five_axis"\nmetrics = ["peak(joint1.q)"]\n')
    r = subprocess.run([sys.executable, "-m", "fmu_mb", "sweep", str(bad)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "peak(joint1.q)" in r.stderr and "Traceback" not in r.stderr


def test_an_fmi3_fmu_sweeps_to_the_bits_of_its_fmi2_twin(native_fmus, fmi3_fmus, tmp_path):
    """The same study on the crane's FMI 3.0 and FMI 2.0 native FMUs (n_div, a structural parameter of the FMI 3.0
    FMU, set in configuration mode; the jib flexible; the friction law by its item's name; an element of an array
    set, gravity[3], and one read, jib.deflection[2]): every run's outputs are bitwise the same; a run whose n_div the FMU refuses fails with FMI 3.0's message, the others go on."""
    def study(fmu):
        return study_from_dict({
            "fmu": str(fmu), "stop_time": 0.1, "step": 0.01, "outputs": ["jib.q", "arm.q", "jib.deflection[2]"],
            "metrics": ["max_abs(jib.deflection[2])"],
            "grid": {"model.n_div": [2, 5], "model.friction": ["none", "lugre"]},
            "runs": [{"model.n_div": 99}], "parameters": {"model.link": 1, "gravity[3]": -9.0},
            "title": "crane, both FMI versions"})
    results = {}
    for version, fmus in ((2, native_fmus), (3, fmi3_fmus)):
        s = study(fmus["crane"].path)
        table, executed = run_study(s, tmp_path / str(version), workers=2, progress=False)
        assert executed == 5
        results[version] = (table, _trajectories(tmp_path / str(version), table))   # (keys hash the FMU too)
    (t2, r2), (t3, r3) = results[2], results[3]

    def by_values(table, runs):
        ok = table[table["status"] == "ok"]
        return {(int(n), str(f)): runs[k] for n, f, k in zip(ok["model.n_div"], ok["model.friction"], ok["key"])}
    a, b = by_values(t2, r2), by_values(t3, r3)
    assert len(a) == 4 and a.keys() == b.keys()
    for run in a:
        assert a[run].equals(b[run]), run
    assert t3[t3["status"] == "ok"]["max_abs(jib.deflection[2])"].min() > 0.0       # the flexible jib bends
    bad = t3[t3["status"] != "ok"].iloc[0]
    assert bad["status"] == "error" and "model.n_div" in bad["message"] and "fmi2" not in bad["message"]
