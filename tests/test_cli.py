"""The command line ``fmu-mb`` (fmu_mb.cli; ``python -m fmu_mb``, ``build_fmus.py``).

Every command runs in a subprocess (``sys.executable -m fmu_mb``) on the session's FMUs
(conftest ``fmus``/``extracted``); only ``simulate <model name>`` builds one, into its own cache.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu
from fmpy.util import read_csv

from fmu_mb import cli
from fmu_mb.sources import TOOLING, core_digest

ROOT = Path(__file__).resolve().parents[1]


def run(*args, env=None, timeout=900):
    return subprocess.run([sys.executable, "-m", "fmu_mb", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env)


def torque_csv(path: Path, t_end=0.3) -> Path:
    """Drive torques of the five joints: smooth, different per joint, a kink at t = 0.1."""
    t = np.linspace(0.0, t_end, 31)
    lines = ["time," + ",".join(f"joint{j}.tau_drive" for j in range(1, 6))]
    for ti in t:
        lines.append(",".join([repr(float(ti))] + [repr(float(3.0 * np.sin(7 * ti + j) + (j - 3) * max(ti - 0.1, 0)))
                                                   for j in range(1, 6)]))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_info_lists_every_variable_of_the_model_description(fmus):
    for name in ("five_axis", "pd_controller"):
        path = fmus[name].path
        r = run("info", path)
        assert r.returncode == 0, r.stderr
        md = read_model_description(str(path))
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in r.stdout.splitlines()
                if re.match(r"^\| \d+ \|", line)]
        listed = {(int(c[0]), c[1].strip("`"), c[2], c[4], c[5]) for c in rows}
        expected = {(v.valueReference, v.name, v.causality, v.type, v.unit or "") for v in md.modelVariables}
        assert len(rows) == len(md.modelVariables) and listed == expected
        for text in (md.modelName, md.guid, f"FMI version:        {md.fmiVersion}", md.generationTool, "linux64"):
            assert text in r.stdout
        # the same renderer as the build's interface table
        assert r.stdout.split("\n# ", 1)[1] == fmus[name].doc.read_text()[2:]


def test_simulate_with_input_csv_equals_fmpy_directly(fmus, tmp_path):
    fmu = fmus["five_axis"].path
    inp = torque_csv(tmp_path / "in.csv")
    out, png = tmp_path / "out.csv", tmp_path / "out.png"
    r = run("simulate", fmu, "--input", inp, "--stop-time", 0.3, "--set", "model.friction=coulomb_viscous",
            "init.static=true", "--csv", out, "--plot", png)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and png.stat().st_size > 10_000
    got = read_csv(out)
    md = read_model_description(str(fmu))
    ref = simulate_fmu(str(fmu), stop_time=0.3, output_interval=float(md.defaultExperiment.stepSize),
                       input=read_csv(inp), start_values={"model.friction": 1, "init.static": True})
    outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    assert list(got.dtype.names) == list(ref.dtype.names)       # FMPy's order: by type, then value reference
    assert sorted(got.dtype.names) == sorted(["time"] + outputs)
    assert len(got) == len(ref) == 301
    for n in got.dtype.names:
        assert np.max(np.abs(got[n] - ref[n])) <= 1e-12, n
    assert np.max(np.abs(got["joint1.q"])) > 1e-3                      # the torques moved it


def test_simulate_a_model_by_name_builds_once_and_reuses_the_fmu(fmus, tmp_path):
    from fmu_mb.native import cache_root
    env = dict(os.environ, FMU_MB_CACHE=str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()                # a fresh FMU cache; the session's kernel library (not compiled again)
    (tmp_path / "cache" / "kernel-library").symlink_to(cache_root() / "kernel-library", target_is_directory=True)
    inp = torque_csv(tmp_path / "in.csv", 0.2)
    outputs = "joint1.q,joint3.qd,joint2.F[3],energy.kinetic"
    runs = [run("simulate", "five_axis", "--input", inp, "--stop-time", 0.2, "--step", 0.002, "--outputs", outputs,
                "--csv", tmp_path / f"out{k}.csv", env=env) for k in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert "building the FMU" in runs[0].stdout and "cached FMU" in runs[1].stdout
    assert len(list((tmp_path / "cache" / "cli-fmus").glob("five_axis-*/five_axis.fmu"))) == 1
    ref = simulate_fmu(str(fmus["five_axis"].path), stop_time=0.2, output_interval=0.002, input=read_csv(inp),
                       output=outputs.split(","))
    for k in range(2):
        got = read_csv(tmp_path / f"out{k}.csv")
        assert len(got) == len(ref) == 101
        for n in ref.dtype.names:
            assert np.max(np.abs(got[n] - ref[n])) <= 1e-12, n


def test_simulate_prints_final_values_and_runs_the_compiled_kernels(fmus):
    """Without --csv/--plot it prints the final values; the FMU's debug log shows that the trimmed core it
    carries (no tooling) builds the mechanism in a fresh process, stepped by the kernels of its binary."""
    r = run("simulate", fmus["five_axis"].path, "--stop-time", 0.05, "--outputs", "joint1.q,joint2.F[3]",
            "--debug-logging")
    assert r.returncode == 0, r.stderr
    assert "kernels: compiled library (rk4), built by the model file's Python for model.friction = none" in r.stdout
    assert re.search(r"^  joint2\.F\[3\]\s+\S+ N$", r.stdout, re.M)


@pytest.mark.parametrize("case", ["unknown --set name", "output --set", "bad --set value", "--set without =",
                                  "missing FMU", "unknown model", "missing input", "malformed CSV", "ragged CSV",
                                  "empty CSV", "unknown CSV column", "unknown output", "not an FMU",
                                  "failing FMU", "info of a missing FMU", "demo without FMUs", "--option twice",
                                  "--option not a number", "--option with python FMUs", "--option value set wrong",
                                  "--dynamics without model names", "--dynamics on a closed loop"])
def test_errors_are_one_line_without_traceback(fmus, tmp_path, case):
    fmu = fmus["five_axis"].path
    bad = tmp_path / "bad.csv"
    bad.write_text({"malformed CSV": "time,joint1.tau_drive\n0,1\n0.1,abc\n",
                    "ragged CSV": "time,joint1.tau_drive\n0,1\n0.1,1,2\n", "empty CSV": "",
                    "unknown CSV column": "time,joint1.tau\n0,1\n"}.get(case, "x"))
    args, expect, code = {
        "unknown --set name": (["simulate", fmu, "--set", "joint1.tau=1"], "close matches: ", 2),
        "output --set": (["simulate", fmu, "--set", "joint1.q=1"], "output", 2),
        "bad --set value": (["simulate", fmu, "--set", "model.friction=1.5"], "not one of none (0), coulomb_viscous (1)", 2),
        "--set without =": (["simulate", fmu, "--set", "model.friction"], "NAME=VALUE", 2),
        "missing FMU": (["simulate", tmp_path / "none.fmu"], "no such FMU", 2),
        "unknown model": (["simulate", "five_axes"], "close matches: five_axis", 2),
        "missing input": (["simulate", fmu, "--input", tmp_path / "none.csv"], "no such input file", 2),
        "malformed CSV": (["simulate", fmu, "--input", bad], "line 3", 2),
        "ragged CSV": (["simulate", fmu, "--input", bad], "line 3 has 3 values", 2),
        "empty CSV": (["simulate", fmu, "--input", bad], "no header", 2),
        "unknown CSV column": (["simulate", fmu, "--input", bad], "joint1.tau_drive", 2),
        "unknown output": (["simulate", fmu, "--outputs", "joint1.q,joint9.q"], "joint9.q", 2),
        "not an FMU": (["simulate", bad], "cannot read the model description", 2),
        "failing FMU": (["simulate", fmu, "--stop-time", 0.01, "--set", "solver.step_size=5"],
                        ("fmi2ExitInitializationMode failed with status 3 (error): [five_axis] invalid parameter: "
                         "parameter 'solver.step_size' must lie in"), 1),
        "info of a missing FMU": (["info", tmp_path / "none.fmu"], "no such FMU", 2),
        "demo without FMUs": (["demo", "--fmus", tmp_path, "--out", tmp_path / "demo"], "fmu-mb build", 1),
        "--option twice": (["build", "crane", "--kind", "native", "--option", "n_div=2", "--option", "n_div=3"],
                           "list its values in one --option n_div=A,B", 2),
        "--option not a number": (["build", "crane", "--kind", "native", "--option", "n_div=2,x"], "NAME=VALUE", 2),
        "--option with python FMUs": (["build", "crane", "--option", "n_div=2"], "--kind native", 2),
        "--dynamics without model names": (["build", "--dynamics"], "name the models", 2),
        "--dynamics on a closed loop": (["build", "rpsup", "--dynamics", "--no-controller", "--out", tmp_path],
                                        "rpsup: no dynamics outputs: its kinematic constraints", 1),
        "--option value set wrong": (["build", "crane", "--kind", "native", "--out", tmp_path, "--option",
                                      "n_div=2,2"], "given twice", 1),
    }[case]
    r = run(*args)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fmu-mb: error: ") and expect in lines[0], r.stderr


def test_build_help_and_build_fmus_py():
    for cmd in ([sys.executable, "-m", "fmu_mb", "build", "--help"], [sys.executable, "build_fmus.py", "--help"]):
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        for option in ("MODEL", "--model", "--out", "--no-controller", "--kind", "five_axis"):
            assert option in r.stdout
    for cmd in ([sys.executable, "-m", "fmu_mb", "build", "no_such_model"],
                [sys.executable, "build_fmus.py", "--model", "no_such_model"]):
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and "unknown model(s) 'no_such_model' (choose from crane, five_axis" in r.stderr
    r = run("--help")
    assert r.returncode == 0 and all(c in r.stdout for c in ("build", "simulate", "info", "scenario", "demo", "sweep", "report"))


def test_build_arguments_reach_the_builder(monkeypatch, tmp_path):
    """``build`` does what build_fmus.py did: the models named (positional or --model, default
    all), --model-file, --out, --no-controller, --integer-options; --dynamics."""
    from fmu_mb.fmi import builder, controller, excitation
    calls = []

    def fake(name):
        def f(*a, **k):
            calls.append((name, a, k))
            return builder.BuildResult(tmp_path / "x.fmu", tmp_path / "x.md", 1024, 3, 0.1, [])
        return f
    monkeypatch.setattr(builder, "build_fmu", fake("fmu"))
    monkeypatch.setattr(controller, "build_controller_fmu", fake("controller"))
    monkeypatch.setattr(excitation, "build_excitation_fmu", fake("excitation"))
    assert cli.main(["build", "crane", "--model", "five_axis", "--out", str(tmp_path), "--no-cross-check"]) == 0
    assert calls == [("fmu", ("crane", str(tmp_path)), {"enumerations": True, "dynamics": False}),
                     ("fmu", ("five_axis", str(tmp_path)), {"enumerations": True, "dynamics": False}),
                     ("controller", (str(tmp_path),), {}), ("excitation", (str(tmp_path),), {})]
    calls.clear()
    assert cli.main(["build", "crane", "--no-controller", "--integer-options", "--no-cross-check"]) == 0
    assert calls == [("fmu", ("crane", "dist"), {"enumerations": False, "dynamics": False})]
    calls.clear()
    arm = str(ROOT / "examples" / "two_link_arm.py")
    assert cli.main(["build", "--model-file", arm, "--no-controller", "--no-cross-check", "--dynamics"]) == 0
    assert calls == [("fmu", (arm, "dist"), {"enumerations": True, "dynamics": True})]
    calls.clear()
    assert cli.main(["build", "--no-controller", "--no-cross-check"]) == 0
    from fmu_mb import registry
    assert [c[0] for c in calls] == ["fmu"] * len(registry.available())
    assert [c[1][0] for c in calls] == registry.available() and calls[0][1][1] == "dist"


def test_build_fmi_versions_reach_the_native_builder(monkeypatch, tmp_path, capsys):
    """--fmi 2 3 builds each model's native FMUs for both versions in one call (OUT/native/ and OUT/fmi3/, FMI 3.0
    with every platform its compilers allow); --fmi 3 alone only OUT/fmi3/; with Python FMUs only it is refused (they
    are FMI 2.0)."""
    from fmu_mb.fmi import builder, controller, excitation, native_fmu
    calls = []

    def fake_native(model, outs, targets, **k):
        calls.append((model, {v: str(o) for v, o in outs.items()}, targets))
        return {v: builder.BuildResult(Path(o) / f"{model}.fmu", Path(o) / "x.md", 1024, 3, 0.1, [])
                for v, o in outs.items()}
    monkeypatch.setattr(native_fmu, "build_native_fmus", fake_native)
    for module, function in ((controller, "build_controller_fmu"), (excitation, "build_excitation_fmu")):
        monkeypatch.setattr(module, function,
                            lambda *a, **k: builder.BuildResult(tmp_path / "b.fmu", tmp_path / "b.md", 1, 1, 0.1, []))
    out = str(tmp_path)
    assert cli.main(["build", "crane", "--kind", "native", "--fmi", "2", "3", "--out", out, "--no-cross-check"]) == 0
    assert calls == [("crane", {2: f"{out}/native", 3: f"{out}/fmi3"}, None)]
    assert "native FMI 3.0 FMUs for linux64" in capsys.readouterr().out
    calls.clear()
    assert cli.main(["build", "crane", "--kind", "native", "--fmi", "3", "--out", out, "--no-cross-check"]) == 0
    assert calls == [("crane", {3: f"{out}/fmi3"}, None)]
    assert cli.main(["build", "crane", "--fmi", "3", "--no-cross-check"]) == 2
    assert "--fmi 3 builds native FMUs (pythonfmu writes FMI 2.0 only)" in capsys.readouterr().err


def test_build_demo_runs_the_demo_as_soon_as_its_fmus_exist(tmp_path, monkeypatch, capsys):
    """fmu-mb build --demo (the README's first run): crane.fmu and the signal blocks are built first, the demo
    then runs in its own process while the other models build, its lines relayed with "demo:", and the build
    ends with every FMU and the demo's files; the rest builds at a lower priority (os.nice, here recorded)."""
    monkeypatch.chdir(tmp_path)
    niced = []
    monkeypatch.setattr(os, "nice", niced.append)
    assert cli.main(["build", "five_axis", "crane", "--demo", "--out", "dist", "--no-cross-check"]) == 0
    out = capsys.readouterr().out
    started = out.index("running python -m fmu_mb.demo")
    assert out.index("dist/crane.fmu") < started < out.index("dist/five_axis.fmu"), out
    assert "demo:   plot: results/demo/crane_closed_loop.png" in out, out
    assert (tmp_path / "results" / "demo" / "crane_closed_loop.png").stat().st_size > 1000
    assert all((tmp_path / "dist" / f"{m}.fmu").is_file() for m in ("crane", "five_axis", "pd_controller", "excitation"))
    assert niced == [5]


@pytest.mark.parametrize("argv", [["crane", "--kind", "native"], ["five_axis"], ["crane", "--no-controller"]])
def test_build_demo_refuses_a_build_without_the_demo_fmus(argv, capsys):
    assert cli.main(["build", *argv, "--demo"]) == 2
    assert "--demo runs the crane closed loop on Python FMUs" in capsys.readouterr().err


def test_scenario_and_demo_delegate(monkeypatch):
    import fmu_mb.demo
    import fmu_mb.scenarios.__main__ as scenarios_main
    seen = []
    monkeypatch.setattr(scenarios_main, "main", lambda argv: seen.append(("scenario", argv)) or 0)
    monkeypatch.setattr(fmu_mb.demo, "main", lambda argv: seen.append(("demo", argv)) or 0)
    assert cli.main(["scenario", "crane", "--out", "/tmp/x"]) == 0
    assert cli.main(["scenario", "rpsup"]) == 0
    assert cli.main(["demo", "--time", "2"]) == 0
    assert cli.main(["demo", "five_axis"]) == 0
    assert seen == [("scenario", ["crane", "--out", "/tmp/x"]), ("scenario", ["rpsup"]),
                    ("demo", ["crane", "--fmus", "dist", "--out", "results/demo", "--time", "2.0"]),
                    ("demo", ["five_axis", "--fmus", "dist", "--out", "results/demo"])]


def test_fmus_carry_no_tooling_and_a_consistent_core_digest(extracted):
    for name, folder in extracted.items():
        core = folder / "resources" / "fmu_mb"
        if name in ("pd_controller", "excitation"):          # the FMU core alone: no Python at all
            assert not (folder / "resources" / "fmu_mb").exists()
            continue
        assert (core / "fmi" / "slave.py").is_file()
        for t in TOOLING:
            assert not (core / t).exists(), f"{name}: resources/fmu_mb/{t}"
        assert not list(core.rglob("scenarios")) and not list(core.rglob("cli.py")) and not list(core.rglob("demo.py"))
        script, = [f.read_text() for f in (folder / "resources").glob(f"fmu_mb_slave_{name}_*.py")]
        digest = re.search(r'^CORE_DIGEST = "([0-9a-f]{64})"$', script, re.M).group(1)
        assert digest == core_digest(core) == core_digest()       # what it carries is what it names
        assert not (core / "native" / "lib").exists() and not (core / "fmi" / "c").exists()   # (in the binary)


def test_python_dash_m_and_the_console_script_are_the_same_command():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^\[project\.scripts\]\nfmu-mb = "fmu_mb\.cli:main"$', text, re.M)
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("fmu-mb ")


def test_variable_lists_keep_commas_inside_brackets():
    """--outputs/--inputs lists: "dynamics.M[1,2]" is one name (the matrix outputs of --dynamics FMUs)."""
    from fmu_mb.runs import split_names
    assert split_names("dynamics.M[1,2], arm.q ,tip.R[3],dynamics.M[2,1],") == [
        "dynamics.M[1,2]", "arm.q", "tip.R[3]", "dynamics.M[2,1]"]
    assert split_names(" , ") == []


def test_compile_prepares_the_kernels_and_names_what_failed(capsys):
    """``fmu-mb compile native``: the kernel library the suite's native FMUs link (compiled here if no test did
    yet, else found in seconds), ready; an unknown part refused in one line (exit 2); a part that fails named with
    the end of its error (exit 1 from the CLI). (The JIT parts are the suite's own simulations and Jacobians, run
    in a process of their own; compiling them here cold would cost the suite 12 minutes.)"""
    from fmu_mb import precompile
    r = run("compile", "native")
    assert r.returncode == 0, r.stderr
    assert [line.split(":")[0].strip() for line in r.stdout.splitlines()[1:]] == ["native"], r.stdout
    r = run("compile", "simulation", "kinematics")
    assert r.returncode == 2 and r.stderr.strip() == ("fmu-mb: error: unknown part 'kinematics': choose from "
                                                      "simulation, linearization, native"), r.stderr
    with pytest.raises(RuntimeError, match=r"compiling failed: no_such_part: .*AttributeError: module "
                                           r"'fmu_mb.precompile' has no attribute 'no_such_part'"):
        precompile.run(("no_such_part",), log=print)
    assert "no_such_part: failed after" in capsys.readouterr().out
