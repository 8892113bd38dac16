"""FMI cross-check artifacts (fmu_mb.crosscheck) of every FMU the build produces.

The folders are written once for the session's FMUs (conftest ``fmus``) and checked as the FMI
cross-check checks them: FMPy's vendor-repository validator, then a re-run as ``python -m
fmpy.cross_check`` runs the FMU (``_ref.opt`` and ``_in.csv`` read with fmpy.util,
``simulate_fmu(validate=False)``), compared with ``fmpy.cross_check.validate_result`` and with a
tight tolerance of our own, max |y − y_ref| ≤ 1e-9 · (1 + range of y_ref) (crosscheck.TIGHT). The
same FMU on the same machine must repeat its reference essentially bitwise: its internal step is
fixed (no error control), its kernels are deterministic compiled code and the CSV holds every
value round-trip exact, so anything above round-off is a defect (an input applied differently, a
state carried over, a nondeterministic kernel). The reference itself is made in a fresh Python
(the FMU's own core); the re-run here shares the test process's core: a bitwise match also says
the two agree.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.cross_check import validate_result
from fmpy.cross_check.validate_vendor_repo import validate_test_fmu
from fmpy.util import read_csv, read_ref_opt_file

from fmu_mb import __version__, cli, registry
from fmu_mb.crosscheck import (
    MAX_OUTPUTS,
    SCENARIOS,
    TIGHT,
    Pulse,
    Scenario,
    deviation,
    generic_scenario,
    model_folder,
    reproduce,
    write_artifacts,
)

ROOT = Path(__file__).resolve().parents[1]
NAMES = registry.available() + ["pd_controller", "excitation"]
# fmpy.cross_check.validate_signal imports scipy.ndimage.filters (deprecated namespace)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def folders(fmus, tmp_path_factory):
    """{name: cross-check folder} of every session FMU, under one root."""
    root = tmp_path_factory.mktemp("xc")
    return {name: write_artifacts(fmus[name].path, root) for name in NAMES}


def test_every_model_has_a_scenario():
    assert set(SCENARIOS) == set(NAMES)


def test_folders_follow_the_layout_and_pass_fmpys_vendor_repo_validator(folders):
    for name, folder in folders.items():
        assert folder == model_folder(folder.parents[6], name)
        assert folder.parts[-7:] == ("fmus", "2.0", "cs", "linux64", "fmu_mb", __version__, name)
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            [f"{name}.fmu", f"{name}_in.csv", f"{name}_ref.csv", f"{name}_ref.opt", "ReadMe.md"])
        assert validate_test_fmu(str(folder)) == [], name


@pytest.mark.parametrize("name", NAMES)
def test_the_importers_run_repeats_the_reference(folders, name):
    result, reference, opt = reproduce(folders[name])
    assert validate_result(result, reference, opt["StartTime"], opt["StopTime"]) is None
    worst = deviation(result, reference)
    assert max(worst.values()) <= TIGHT, worst


def test_csv_files_follow_the_rules(folders):
    for name, folder in folders.items():
        md = read_model_description(str(folder / f"{name}.fmu"))
        kinds = {v.name: v.causality for v in md.modelVariables}
        opt = read_ref_opt_file(str(folder / f"{name}_ref.opt"))
        ref = read_csv(str(folder / f"{name}_ref.csv"))
        names = ref.dtype.names
        assert names[0] == "time" and 1 <= len(names) - 1 <= MAX_OUTPUTS
        assert all(kinds[n] == "output" for n in names[1:])
        assert (folder / f"{name}_ref.csv").read_text().startswith('"time",')        # quoted names
        t = ref["time"]
        assert t[0] == opt["StartTime"] == 0.0 and np.all(np.diff(t) > 0)
        assert abs(t[-1] - opt["StopTime"]) < 1e-9 and opt["StopTime"] == float(md.defaultExperiment.stopTime)
        assert np.median(np.diff(t)) == pytest.approx(opt["StepSize"], rel=1e-9)
        assert len(t) <= 1002 and all(np.all(np.isfinite(ref[n])) for n in names)
        inputs = [v for v in md.modelVariables if v.causality == "input"]
        sig = read_csv(str(folder / f"{name}_in.csv"))
        assert list(sig.dtype.names) == ["time"] + [v.name for v in inputs]     # every input, as the rules ask
        assert sig["time"][0] == 0.0 and sig["time"][-1] == opt["StopTime"] and np.all(np.diff(sig["time"]) >= 0)
        for v in inputs:
            if v.name not in SCENARIOS[name].inputs:
                assert np.all(sig[v.name] == float(v.start)), v.name        # held at its start value
        for p in folder.iterdir():
            assert p.stat().st_size <= (10e6 if p.suffix == ".fmu" else 1e6), p
        text = (folder / "ReadMe.md").read_text()
        for part in ("## Scenario", "## Outputs", "fmpy.simulate_fmu", "## Comparison", "## Platform requirement",
                     "StepSize", "CPython 3.", *names[1:]):
            assert part in text, (name, part)


def test_a_discontinuous_input_is_two_rows_and_fmpy_ends_a_step_there(folders):
    pulse = SCENARIOS["crane"].inputs["column.tau_drive"]
    assert pulse == Pulse(-4000.0, 0.0, 0.1)
    folder = folders["crane"]
    sig = read_csv(str(folder / "crane_in.csv"))
    rows = sig["column.tau_drive"][sig["time"] == 0.1]
    assert list(rows) == [-4000.0, 0.0] and sig["column.tau_drive"][0] == -4000.0
    t = read_csv(str(folder / "crane_ref.csv"))["time"]
    opt = read_ref_opt_file(str(folder / "crane_ref.opt"))
    assert opt["StepSize"] == 0.008 and 0.1 in t     # 0.1 is no multiple of the step: FMPy ended one there
    assert len(t) == round(opt["StopTime"] / opt["StepSize"]) + 2


def test_a_perturbed_reference_fails_both_checks(folders, tmp_path):
    """One column of the reference moved: FMPy's criterion fails for a shift of 30 % of the range
    over the middle half of the run; the tight check fails for 1e-6 of the range, which FMPy's band
    lets pass."""
    folder = tmp_path / "crane"
    shutil.copytree(folders["crane"], folder)
    ref_csv = folder / "crane_ref.csv"
    text = ref_csv.read_text()
    original = read_csv(str(ref_csv))
    for shift, fmpy_fails in ((0.3, True), (1e-6, False)):
        lines = text.splitlines()
        n = len(lines) - 1
        span = np.ptp(original["column.qd"])
        for i in range(1 + n // 4, 1 + 3 * n // 4):
            cells = lines[i].split(",")
            cells[2] = repr(float(cells[2]) + float(shift * span))             # column 2: column.qd
            lines[i] = ",".join(cells)
        ref_csv.write_text("\n".join(lines) + "\n")
        result, reference, opt = reproduce(folder)
        problem = validate_result(result, reference, opt["StartTime"], opt["StopTime"])
        assert (problem is not None) == fmpy_fails, problem
        if fmpy_fails:
            assert "column.qd" in problem
        worst = deviation(result, reference)
        assert worst["column.qd"] > TIGHT and max(v for k, v in worst.items() if k != "column.qd") <= TIGHT


def test_names_that_are_no_variables_are_refused(fmus, tmp_path):
    fmu = fmus["five_axis"].path
    cases = [(Scenario("x", ("joint1.q", "joint1.angle")), "output 'joint1.angle' is not a variable of five_axis "
              "(close: joint1.q"),
             (Scenario("x", ("joint1.q",), {"joint1.q": Pulse(1.0, 0.0, 1.0)}), "input 'joint1.q' is not an input"),
             (Scenario("x", ("joint1.q",) * 11), "11 outputs; the cross-check rules allow 1 to 10"),
             (Scenario("x", ()), "0 outputs")]
    for scenario, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
            write_artifacts(fmu, tmp_path, scenario)
    assert not (tmp_path / "fmus").exists()                 # refused before anything is written


def test_generic_scenario_of_an_unknown_model(fmus):
    md = read_model_description(str(fmus["three_loop"].path))
    s = generic_scenario(md)
    assert s.outputs == ("joint1.q", "joint1.qd", "joint2.q", "joint2.qd", "joint3.q", "joint3.qd", "joint4.q",
                         "joint4.qd", "energy.kinetic", "energy.potential") and not s.inputs
    md = read_model_description(str(fmus["pd_controller"].path))
    assert generic_scenario(md).outputs == tuple(f"tau[{i}]" for i in range(1, 7))


def test_build_cross_check_option(fmus, monkeypatch, tmp_path, capsys):
    """``fmu-mb build ... --cross-check DIR`` writes the folder of every FMU built (here the
    session's, handed out by a stand-in builder), one line each; without it they go to
    OUT/cross-check; --no-cross-check with a DIR and a file as DIR are refused."""
    from fmu_mb.fmi import builder, controller, excitation
    monkeypatch.setattr(builder, "build_fmu", lambda name, out, enumerations=True, dynamics=False: fmus[name])
    monkeypatch.setattr(controller, "build_controller_fmu", lambda out: fmus["pd_controller"])
    monkeypatch.setattr(excitation, "build_excitation_fmu", lambda out: fmus["excitation"])
    assert cli.main(["build", "three_loop", "--out", str(tmp_path), "--cross-check", str(tmp_path / "xc")]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("cross-check: ")]
    assert len(lines) == 3
    # rows of a 10 s run at FMPy's step: DefaultExperiment stepSize doubled while the run takes more than 1000 steps
    # (three_loop's 2.5 ms to 10 ms: 1000 steps; the blocks' 1 ms to 16 ms: 625), and the start
    rows = {"three_loop": 1001, "pd_controller": 626, "excitation": 626}
    for line, name in zip(lines, ("three_loop", "pd_controller", "excitation")):
        folder = model_folder(tmp_path / "xc", name)
        assert line.startswith(f"cross-check: {folder}  {rows[name]} rows  ") and line.endswith(" s")
        assert validate_test_fmu(str(folder)) == []
    assert cli.main(["build", "three_loop", "--out", str(tmp_path / "d")]) == 0        # on by default
    assert validate_test_fmu(str(model_folder(tmp_path / "d" / "cross-check", "three_loop"))) == []
    assert cli.main(["build", "three_loop", "--no-cross-check", "--cross-check", str(tmp_path)]) == 2
    capsys.readouterr()
    (tmp_path / "file").write_text("")
    assert cli.main(["build", "three_loop", "--cross-check", str(tmp_path / "file")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fmu-mb: error: --cross-check: {tmp_path / 'file'} exists and is not a folder"]
    r = subprocess.run([sys.executable, "build_fmus.py", "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "--cross-check DIR" in r.stdout


@pytest.mark.parametrize("kind", ["cs", "me"])
@pytest.mark.parametrize("name", ["five_axis", "crane"])
def test_fmi3_folders_follow_the_3_0_layout_and_repeat_their_reference(fmi3_fmus, tmp_path, name, kind):
    """An FMI 3.0 FMU's folders, fmus/3.0/cs|me/x86_64-linux/fmu_mb/<version>/<model>: FMPy's validator finds no
    problem; the reference (co-simulation, or Model Exchange under FMPy's CVODE at the folder's RelTol) is repeated
    bitwise by the importer's run; the ReadMe names the interface and says the FMU needs no Python."""
    folder = write_artifacts(fmi3_fmus[name].path, tmp_path, fmi_type=kind)
    assert folder == model_folder(tmp_path, name, "3.0", kind)
    assert folder.relative_to(tmp_path).parts[:4] == ("fmus", "3.0", kind, "x86_64-linux")
    assert validate_test_fmu(str(folder)) == []
    result, reference, opt = reproduce(folder)
    assert opt["RelTol"] == (1e-6 if kind == "me" else 1e-4)
    assert all(v == 0.0 for v in deviation(result, reference).values()), deviation(result, reference)
    readme = (folder / "ReadMe.md").read_text()
    assert f"FMI 3.0 {'Model Exchange' if kind == 'me' else 'co-simulation'}, x86_64-linux." in readme
    assert "no Python" in readme and "pythonfmu" not in readme
    with pytest.raises(ValueError, match="has no xx interface"):
        write_artifacts(fmi3_fmus[name].path, tmp_path, fmi_type="xx")
