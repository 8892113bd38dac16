"""Systems of FMUs (fmu_mb.system) and their SSP files (fmu_mb.ssp, fmu-mb ssp), issue 41: the quick start's closed
loop as an .ssp validates against SSP 1.0 and runs in FMPy's SSP support and in OSP libcosim to the Python master's
plant outputs (the demo's) within 1e-9 over 2 s; another mechanism's loop the same way; the signal blocks the loop
needs (the excitation, the controller's enable time)."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu
from lxml import etree

from fmu_mb import cli
from fmu_mb.fmi.controller import build_controller_fmu
from fmu_mb.fmi.excitation import build_excitation_fmu
from fmu_mb.fmi.native_fmu import build_native_fmu
from fmu_mb.ssp import fmpy_parameter_set, validate_ssp, write_ssp
from fmu_mb.system import CRANE_JOINTS, crane_closed_loop, mechanism_closed_loop, run

T = 2.0                 # s, the acceptance run
TOL = 1e-9              # relative to each output's largest magnitude (at least 1)


def _quiet(*_):
    pass


@pytest.fixture(scope="module")
def blocks(tmp_path_factory):
    """A folder with the signal blocks (linux64)."""
    out = tmp_path_factory.mktemp("blocks")
    build_controller_fmu(out, targets=["linux64"])
    build_excitation_fmu(out, targets=["linux64"])
    return out


def _mechanism(name, blocks):
    """The native FMU of ``name`` as fmu-mb ssp builds it (Integer options: libcosim sees no Enumeration)."""
    return build_native_fmu(name, blocks, ["linux64"], enumerations=False, every_count=False, log=_quiet).path


@pytest.fixture(scope="module")
def crane_loop(blocks):
    """(system, .ssp, the Python master's run over T) of the quick start's closed loop."""
    crane = _mechanism("crane", blocks)
    system = crane_closed_loop(blocks, stop_time=T, crane_fmu=crane)
    ssp = write_ssp(system, blocks / "crane_closed_loop.ssp")
    return system, ssp, run(system)


@pytest.fixture(scope="module")
def three_loop(blocks):
    return _mechanism("three_loop", blocks)


def _plant_outputs(system):
    return [v for v, kind in system.connectors("plant").items() if kind == "output"]


def _fmpy(system, ssp):
    from fmpy.ssp.simulation import simulate_ssp
    return simulate_ssp(str(ssp), stop_time=system.stop_time, step_size=system.step,
                        parameter_set=fmpy_parameter_set(ssp))


def _libcosim(system, ssp, names):
    """{name: values after each step} of the plant in libcosim, its step from the .ssp's OSP annotation."""
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    log_output_level(CosimLogLevel.ERROR)
    ex = CosimExecution.from_ssp_file(str(ssp))
    observer = CosimObserver.create_last_value()
    ex.add_observer(observer)
    plant = ex.slave_index_from_instance_name("plant")
    vr = {(v.name.decode() if isinstance(v.name, bytes) else v.name): v.reference for v in ex.slave_variables(plant)}
    refs = [vr[n] for n in names]
    steps = int(round(system.stop_time / system.step))
    values = np.zeros((steps, len(names)))
    for k in range(steps):
        assert ex.step(), f"libcosim's step {k} failed"
        values[k] = observer.last_real_values(plant, refs)
    return {n: values[:, i] for i, n in enumerate(names)}


def _worst(ours, theirs, names, steps):
    """Largest deviation over ``steps`` exchanges relative to each output's largest magnitude (at least 1)."""
    return max(np.abs(ours[n][1:steps + 1] - theirs[n][:steps]).max() / max(1.0, np.abs(ours[n]).max())
               for n in names)


# ------------------------------------------------------------------------------------------------ the file
def test_the_ssp_validates_and_holds_the_loop(crane_loop, tmp_path):
    """SSP 1.0 schemas (FMPy's copies): the .ssd and every .ssv; FMPy reads it (validating too); four components,
    each FMU once in resources/, one parameter set per component with the FMU's types, the exchange step in
    libcosim's annotation. A broken file is reported with its line."""
    system, ssp, _ = crane_loop
    assert validate_ssp(ssp) == []
    from fmpy.ssp.ssd import read_ssd
    ssd = read_ssd(str(ssp))                                     # validates against SystemStructureDescription.xsd
    assert [e.name for e in ssd.system.elements] == ["reference", "excitation", "controller", "plant"]
    assert len(ssd.system.connections) == len(system.connections) == 20
    with zipfile.ZipFile(ssp) as z:
        names = set(z.namelist())
        root = etree.fromstring(z.read("SystemStructure.ssd"))
        plant = etree.fromstring(z.read("resources/plant.ssv"))
    assert {"resources/crane.fmu", "resources/pd_controller.fmu", "resources/excitation.fmu"} <= names
    assert sum(n.endswith(".fmu") for n in names) == 3           # reference and plant share crane.fmu
    ns = {"ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
          "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
          "osp": "http://opensimulationplatform.com/SSP/OSPAnnotations"}
    step = root.find("ssd:DefaultExperiment//osp:FixedStepAlgorithm", ns)
    assert float(step.get("baseStepSize")) == system.step and \
        float(root.find("ssd:DefaultExperiment", ns).get("stopTime")) == T
    typed = {p.get("name"): (p[0].tag.split("}")[1], p[0].get("value")) for p in plant.iterfind(".//ssv:Parameter", ns)}
    assert typed == {"model.mode": ("Integer", "1"), "model.link": ("Integer", "1"), "model.friction": ("Integer", "2")}
    broken = tmp_path / "broken.ssp"
    with zipfile.ZipFile(ssp) as z, zipfile.ZipFile(broken, "w") as w:
        for n in z.namelist():
            data = z.read(n)
            w.writestr(n, data.replace(b' endConnector="tau_ff[1]"', b"") if n.endswith(".ssd") else data)
    problems = validate_ssp(broken)
    assert len(problems) == 1 and "endConnector" in problems[0] and "line" in problems[0], problems


def test_a_component_variable_the_fmu_lacks_is_refused(blocks, crane_loop, tmp_path):
    from dataclasses import replace

    from fmu_mb.system import Connection
    system, _, _ = crane_loop
    bad = replace(system, connections=[*system.connections, Connection("plant.jib.q_typo", "controller.q[4]")])
    with pytest.raises(ValueError, match=r"crane.fmu \(component plant\) has no variable 'jib.q_typo'"):
        write_ssp(bad, tmp_path / "bad.ssp")
    assert not list(tmp_path.iterdir())                          # no file, not even a part


# ------------------------------------------------------------------------------------------------ the runs
def test_the_python_master_closes_the_loop(crane_loop):
    """The run is the demo's closed loop (not a trivial one): the pulse turns the column, the plant follows the
    reference within a few mrad, and the first exchanges carry no drive (t_enable)."""
    system, _, ours = crane_loop
    plant, ref = ours["plant"], ours["reference"]
    assert abs(ref["column.q"][-1] - ref["column.q"][0]) > 0.1                       # rad: the pulse turned it
    err = max(np.abs(plant[f"{j}.q"] - ref[f"{j}.q"]).max() for j in CRANE_JOINTS)
    assert 1e-4 < err < 1e-2, err
    assert all(plant[f"{j}.tau_drive"][k] == 0.0 for j in CRANE_JOINTS for k in (1, 2, 3))
    assert all(plant[f"{j}.tau_drive"][4] != 0.0 for j in CRANE_JOINTS)
    assert ours["reference"]["column.tau_drive"][1] == 0.0 and ours["reference"]["column.tau_drive"][2] == -4000.0


def test_fmpy_runs_the_ssp_to_the_python_masters_plant_outputs(crane_loop):
    system, ssp, ours = crane_loop
    res = _fmpy(system, ssp)
    names = _plant_outputs(system)
    steps = int(round(T / system.step))
    assert len(res) >= steps
    worst = _worst(ours["plant"], {n: res[f"plant.{n}"] for n in names}, names, steps)
    print(f"FMPy's SSP master vs the Python master, {len(names)} plant outputs over {T} s: {worst:.1e}")
    assert worst <= TOL


def test_libcosim_runs_the_ssp_to_the_python_masters_plant_outputs(crane_loop):
    system, ssp, ours = crane_loop
    names = _plant_outputs(system)
    theirs = _libcosim(system, ssp, names)
    worst = _worst(ours["plant"], theirs, names, int(round(T / system.step)))
    print(f"libcosim vs the Python master, {len(names)} plant outputs over {T} s: {worst:.1e}")
    assert worst <= TOL


def test_the_demo_is_the_python_master_on_this_system(crane_loop, blocks, tmp_path):
    """fmu_mb.demo.crane runs this system: its CSV holds the same plant outputs (10 significant digits)."""
    import pandas as pd

    from fmu_mb import demo
    system, _, ours = crane_loop
    demo.crane(blocks, tmp_path, T=0.5, report=False)
    frame = pd.read_csv(tmp_path / "crane_closed_loop.csv")
    k = np.rint(frame["time"].to_numpy() / system.step).astype(int)
    for n in _plant_outputs(system):
        np.testing.assert_allclose(frame[n].to_numpy(), ours["plant"][n][k], rtol=1e-9, atol=1e-12, err_msg=n)


def test_another_mechanisms_loop_runs_the_same_in_every_master(blocks, three_loop):
    """three_loop (paper 003's closed-loop mechanism) in the same structure: reference in programmed mode, PD
    controller, plant in torque mode; the plant follows and FMPy and libcosim agree with the Python master."""
    fmu = three_loop
    system = mechanism_closed_loop("three_loop", fmu, blocks, stop_time=1.0, omega=20.0)
    ssp = write_ssp(system, blocks / "three_loop_closed_loop.ssp")
    assert validate_ssp(ssp) == []
    ours = run(system)
    joints = [c.end.split(".")[1] for c in system.connections if c.end.endswith(".tau_drive")]
    assert joints and all(f"controller.tau_ff[{i + 1}]" in {c.end for c in system.connections}
                          for i in range(len(joints)))
    for j in joints:           # (joint1pp: the reference moves 0.1 m; ω = 10, 20, 40 rad/s give 13, 9.0, 5.1 mm)
        e = ours["plant"][f"{j}.q"] - ours["reference"][f"{j}.q"]
        span = np.ptp(ours["reference"][f"{j}.q"])
        print(f"three_loop under the PD controller: {j} moves {span:.3g}, largest error {np.abs(e).max():.2e}, "
              f"at the end {e[-1]:.1e}")
        assert span > 0.05 and np.abs(e).max() < 0.15 * span and abs(e[-1]) < 0.02 * span
    names = _plant_outputs(system)
    steps = int(round(system.stop_time / system.step))
    res = _fmpy(system, ssp)
    assert _worst(ours["plant"], {n: res[f"plant.{n}"] for n in names}, names, steps) <= TOL
    assert _worst(ours["plant"], _libcosim(system, ssp, names), names, steps) <= TOL


# ------------------------------------------------------------------------------------------------ the command
def test_ssp_command_refuses_what_it_cannot_build(capsys):
    """A mechanism without a programmed mode, an unknown model and a malformed value: exit 2 with the reason, before
    anything is built."""
    assert cli.main(["ssp", "five_axis"]) == 2
    assert "five_axis has no programmed mode" in capsys.readouterr().err
    assert cli.main(["ssp", "no_such_model"]) == 2
    assert "no model named 'no_such_model'" in capsys.readouterr().err
    assert cli.main(["ssp", "crane", "--set", "model.n_div=two"]) == 2
    assert "'two' is not a whole number" in capsys.readouterr().err


def test_mechanism_closed_loop_names_what_is_missing(blocks):
    with pytest.raises(ValueError, match="five_axis has no programmed mode"):
        mechanism_closed_loop("five_axis", blocks / "pd_controller.fmu", blocks)


# ------------------------------------------------------------------------------------------------ the blocks
def test_excitation_adds_its_pulse_from_start_for_duration(blocks):
    """y = u + amplitude on [start, start + duration), u otherwise; the default (amplitude 0) passes u through and
    its duration outlasts any run (a step)."""
    fmu = str(blocks / "excitation.fmu")
    assert read_model_description(fmu).coSimulation is not None
    res = simulate_fmu(fmu, stop_time=1.0, output_interval=0.1, output=["y[1]", "y[2]"],
                       start_values={"amplitude[1]": -4000.0, "start[1]": 0.25, "duration[1]": 0.5,
                                     "u[1]": 3.0, "u[2]": -2.0, "amplitude[2]": 1.5, "start[2]": 0.55})
    t = np.round(res["time"], 9)
    np.testing.assert_array_equal(res["y[1]"], np.where((t >= 0.25) & (t < 0.75), -3997.0, 3.0))
    np.testing.assert_array_equal(res["y[2]"], np.where(t >= 0.55, -0.5, -2.0))


def test_controller_drives_are_off_before_t_enable(blocks):
    fmu = str(blocks / "pd_controller.fmu")
    res = simulate_fmu(fmu, stop_time=0.5, output_interval=0.1, output=["tau[1]"],
                       start_values={"t_enable": 0.25, "tau_ff[1]": 3.0, "q_ref[1]": 0.1, "Kp[1]": 100.0})
    t = np.round(res["time"], 9)
    np.testing.assert_array_equal(res["tau[1]"], np.where(t >= 0.25, 13.0, 0.0))


def test_a_boolean_parameter_reaches_every_master(blocks, three_loop):
    """A Boolean parameter (the plant's solver.projection = false) is an ssv:Boolean "false"; the Python master and
    FMPy (through fmpy_parameter_set: fmpy.ssp would turn the text "false" into true) run the plant without
    projection, which differs from the default run."""
    base = mechanism_closed_loop("three_loop", three_loop, blocks, stop_time=0.3, omega=20.0)
    system = mechanism_closed_loop("three_loop", three_loop, blocks, stop_time=0.3, omega=20.0,
                                   plant_options={"solver.projection": False})
    ssp = write_ssp(system, blocks / "three_loop_no_projection.ssp")
    with zipfile.ZipFile(ssp) as z:
        assert b'<ssv:Boolean value="false"/>' in z.read("resources/plant.ssv")
    values = {p.name: p.value for p in fmpy_parameter_set(ssp).parameters}
    assert values["plant.solver.projection"] == 0.0
    ours, default = run(system), run(base)
    names = _plant_outputs(system)
    assert any(not np.array_equal(ours["plant"][n], default["plant"][n]) for n in names)
    steps = int(round(system.stop_time / system.step))
    res = _fmpy(system, ssp)
    assert _worst(ours["plant"], {n: res[f"plant.{n}"] for n in names}, names, steps) <= TOL
