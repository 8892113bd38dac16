"""A user's own model files: the authoring guide (docs/mechanisms.md), its worked example
(examples/two_link_arm.py) and broken files, built with ``fmu-mb build path/to/file.py``."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fmu_mb.model import Mechanism

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "mechanisms.md"
EXAMPLE = ROOT / "examples" / "two_link_arm.py"


def build(path, out, *extra):
    return subprocess.run([sys.executable, "-m", "fmu_mb", "build", str(path), "--out", str(out), "--no-controller",
                           "--no-cross-check", *extra], capture_output=True, text=True, cwd=ROOT)


def test_every_code_block_of_the_guide_runs():
    """The guide's Python blocks, in order, in one namespace (they build a mechanism, compile it and
    declare options): a renamed class or argument fails here."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert len(blocks) >= 6
    ns = {}
    exec(compile("\n".join(blocks), str(GUIDE), "exec"), ns)  # noqa: S102 — our own documentation
    assert isinstance(ns["mech"], Mechanism) and ns["cm"].model.nc == 1
    assert set(ns["OPTIONS"]) == {"forearm", "n_div", "gripper"}


@pytest.fixture(scope="module")
def example_fmu(tmp_path_factory):
    out = tmp_path_factory.mktemp("user")
    r = build(EXAMPLE, out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "valid" in r.stdout
    return out / "two_link_arm.fmu"


def test_worked_example_sags_as_a_cantilever_under_its_own_weight(example_fmu):
    """Held by its drives with the forearm horizontal (init.static), the RFEM forearm's tip
    deflection through the FMU converges to beam theory w·L⁴/(8EI) as n_div grows: measured
    −12.5 % (2 sections), −1.4 % (6), −0.13 % (20), the 1/n² of the method."""
    from fmpy import simulate_fmu
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import two_link_arm as arm
    finally:
        sys.path.pop(0)
    area, second, _ = arm.tube()
    w = arm.ALUMINIUM["density"] * area * 9.81
    theory = w * arm.FOREARM_LENGTH ** 4 / (8.0 * arm.ALUMINIUM["E"] * second)
    err = {}
    for n in (2, 6, 20):
        r = simulate_fmu(str(example_fmu), stop_time=0.01, start_values={"model.n_div": n})
        err[n] = -r["forearm.deflection[3]"][0] / theory - 1.0
    assert abs(err[6]) < 0.02 and abs(err[20]) < 0.002
    assert 6.0 < err[2] / err[6] < 12.0 and 8.0 < err[6] / err[20] < 14.0     # (6/2)² = 9, (20/6)² = 11.1
    assert abs(-r["forearm.deflection[1]"][0]) < 1e-3 * theory                   # no axial sag


def test_worked_example_runs_every_option_in_fmpy(example_fmu):
    """1 s with the elbow driven (1 N·m) for each option combination: finite, and the drive's work
    goes into the arm (energy balance: E − E0 + dissipated − work in within 1e-3 of the work)."""
    from fmpy import simulate_fmu
    for forearm in (0, 1):
        for friction in (0, 1):
            r = simulate_fmu(str(example_fmu), stop_time=1.0, start_values={
                "model.forearm": forearm, "model.friction": friction, "elbow.tau_drive": 1.0})
            for name in r.dtype.names:
                assert np.all(np.isfinite(r[name])), (forearm, friction, name)
            assert abs(r["elbow.q"][-1] - r["elbow.q"][0]) > 0.01


BROKEN = {
    "wrong inertia": ('mech.add(Body("upper", 2.0, (0.2, 0, 0), np.diag([1.0, 0.1, 0.1])), '
                      'Joint("shoulder", "revolute", "ground", "upper"))', r"Body 'upper'.*triangle inequality"),
    "unknown joint type": ('mech.add(Body("upper", 2.0, (0.2, 0, 0), np.diag([1e-3, 0.03, 0.03])), '
                           'Joint("shoulder", "hinge", "ground", "upper"))', r"Joint 'shoulder'.*kind must be one of"),
    "typo in the code": ('mech.add(Body("upper", 2.0, (0.2, 0, 0), np.diag([1e-3, 0.03, 0.03])), '
                         'Joint("shoulder", "revolute", "ground", "upper", axis=(0, 1, 0), q0=[undefined_name]))',
                         r"broken\.py:9: build\(\) failed: NameError"),
    "loop that does not close": ('mech.add(Body("crank", 1.0, (0.1, 0, 0), np.diag([1e-4, 3e-3, 3e-3])), '
                                 'Joint("A", "revolute", "ground", "crank", q0=[1.2], actuated=True))\n'
                                 '    mech.add(Body("rocker", 1.0, (0.2, 0, 0), np.diag([1e-4, 0.013, 0.013])), '
                                 'Joint("D", "revolute", "ground", "rocker", origin=(1.0, 0, 0), q0=[2.0]))\n'
                                 '    mech.constraints.append(CutJoint("C", "revolute", "crank", "rocker", '
                                 'origin_a=(0.2, 0, 0), origin_b=(0.4, 0, 0), planar=True))',
                                 r"could not be solved.*'C' \(CutJoint"),
}
TEMPLATE = '''"""A broken model: {case}."""
import numpy as np
from fmu_mb.model import Body, Joint, Mechanism
from fmu_mb.model.constraints import CutJoint


def build():
    mech = Mechanism("broken", gravity=(0.0, 0.0, -9.81))
    {line}
    return mech
'''


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_user_file_gets_one_line_naming_the_object_and_field(tmp_path, case):
    line, expect = BROKEN[case]
    path = tmp_path / "broken.py"
    path.write_text(TEMPLATE.format(case=case, line=line))
    r = build(path, tmp_path / "dist")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert re.search(expect, r.stderr), r.stderr


def test_file_level_mistakes_are_usage_errors(tmp_path):
    """A syntax error names the file and line; a missing file and a file name that is no
    identifier are refused before anything is built."""
    bad = tmp_path / "syntax.py"
    bad.write_text("def build(:\n    pass\n")
    r = build(bad, tmp_path / "d")
    assert r.returncode == 1 and re.search(r"syntax\.py:1: the model file does not import: SyntaxError", r.stderr)
    r = build(tmp_path / "missing.py", tmp_path / "d")
    assert r.returncode == 2 and "missing.py: no such file" in r.stderr
    dashed = tmp_path / "my-arm.py"
    dashed.write_text(EXAMPLE.read_text())
    r = build(dashed, tmp_path / "d")
    assert r.returncode == 1 and "must be an identifier" in r.stderr and "my_arm.py" in r.stderr
