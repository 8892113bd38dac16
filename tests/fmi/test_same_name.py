"""FMUs of one model name side by side in one process, and a model rebuilt under its name (issue 37).

Three URDF robots all named ``arm``: a one-joint arm, the same arm with a second joint (another
interface) and the one-joint arm with a heavier link (same interface, other parameters). Each FMU's
results in a fresh process are the reference; then, for both FMU kinds, all three are instantiated
in one FMPy process and stepped in turn, and each must give its own reference bit for bit. And the
notebook workflow: in one process, build ``arm`` from one file, simulate, rebuild it from another
file to the same path, simulate again: the new results, never the old model's."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.robot_files import arm_urdf

ROOT = Path(__file__).resolve().parents[2]
#: the three robots named "arm": one joint, two joints (another interface), one joint and a heavier link
ROBOTS = {"one": dict(joints=1), "two": dict(joints=2), "heavy": dict(joints=1, upper_mass=3.0)}

#: run FMUs given as [path, ...] in one process, all instantiated first, then stepped in turn; print outputs
RUN = r"""
import json, sys
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
fmus = []
for path in json.loads(sys.argv[1]):
    md = read_model_description(path)
    s = FMU2Slave(guid=md.guid, unzipDirectory=extract(path), modelIdentifier=md.coSimulation.modelIdentifier,
                  instanceName=path)
    s.instantiate()
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    refs = [v.valueReference for v in md.modelVariables if v.causality == "output" and v.type == "Real"]
    fmus.append((path, s, refs))
out = {p: [] for p, _, _ in fmus}
for k in range(20):
    for path, s, refs in fmus:
        s.doStep(k * 0.01, 0.01)
        out[path].append(s.getReal(refs))
for _, s, _ in fmus:
    s.terminate()
    s.freeInstance()
print(json.dumps(out))
"""


def _run(paths) -> dict:
    r = subprocess.run([sys.executable, "-c", RUN, json.dumps([str(p) for p in paths])], capture_output=True,
                       text=True, cwd="/tmp")
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    """{(robot, kind): FMU path}: the three ``arm`` FMUs of both kinds."""
    from fmu_mb.build import build, urdf_model
    base = tmp_path_factory.mktemp("same_name")
    fmus = {}
    for robot, fields in ROBOTS.items():
        urdf = base / f"{robot}.urdf"
        urdf.write_text(arm_urdf("arm", **fields))
        out = base / robot
        model = urdf_model(str(urdf), out, log=lambda *a: None)
        assert build([model], out, "both", ["linux64"], controller=False, log=lambda *a: None) == 0
        fmus[(robot, "python")], fmus[(robot, "native")] = out / "arm.fmu", out / "native" / "arm.fmu"
    return fmus


@pytest.mark.parametrize("kind", ["python", "native"])
def test_three_fmus_named_arm_run_in_one_process_each_with_its_own_results(arms, kind):
    paths = [arms[(robot, kind)] for robot in ROBOTS]
    alone = {str(p): _run([p])[str(p)] for p in paths}
    together = _run(paths)
    for p in map(str, paths):
        assert together[p] == alone[p], p
    one, two, heavy = (alone[str(p)] for p in paths)
    assert len(two[0]) > len(one[0]) and one[-1] != heavy[-1]            # they are different models


def test_a_model_rebuilt_under_its_name_runs_the_new_model_in_the_same_process(arms, tmp_path):
    """The notebook workflow, Python FMUs (built in-process, simulated by FMPy in the same process):
    arm from one.urdf, then rebuilt to the same path from heavy.urdf (a parameter changed), then
    from two.urdf (a joint added): each simulation gives that file's results."""
    script = r"""
import json, sys
from pathlib import Path
from fmpy import simulate_fmu
from fmu_mb.build import build, urdf_model
out, urdfs, results = Path(sys.argv[1]), json.loads(sys.argv[2]), {}
for urdf in urdfs:
    model = urdf_model(urdf, out, log=lambda *a: None)
    assert build([model], out, "python", controller=False, log=lambda *a: None) == 0
    r = simulate_fmu(str(out / "arm.fmu"), stop_time=0.2, output_interval=0.01)
    results[urdf] = [list(map(float, r[n])) for n in r.dtype.names[1:]]
print(json.dumps(results))
"""
    urdfs = [str(arms[("one", "python")].parents[1] / f"{robot}.urdf") for robot in ("one", "heavy", "two")]
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path / "dist"), json.dumps(urdfs)], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    rebuilt = json.loads(r.stdout.strip().splitlines()[-1])
    for robot, urdf in zip(("one", "heavy", "two"), urdfs):
        fresh = subprocess.run([sys.executable, "-c", "import json, sys; from fmpy import simulate_fmu; "
                                "r = simulate_fmu(sys.argv[1], stop_time=0.2, output_interval=0.01); "
                                "print(json.dumps([list(map(float, r[n])) for n in r.dtype.names[1:]]))",
                                str(arms[(robot, "python")])], capture_output=True, text=True, cwd="/tmp")
        assert fresh.returncode == 0, fresh.stderr[-2000:]
        assert rebuilt[urdf] == json.loads(fresh.stdout.strip().splitlines()[-1]), robot
