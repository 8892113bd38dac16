"""Native FMUs (issue 13): the compiled kernels behind a C FMI 2.0 layer, no Python on the host.

What the pythonfmu FMU does, the native one must do bit for bit (it runs the same machine code
for the physics): the outputs over each paper's scenario, at the defaults and at every model's
most detailed options; FMU states, also across the two kinds (one interface, one record format).
The bad-input cases of tests/test_robustness.py run against both kinds. Here also: the binary
needs no Python (ldd, nm, objdump). The hosts it runs on (a plain C host, wine, qemu, libcosim):
tests/fmi/test_native_hosts.py.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import extract, read_model_description, simulate_fmu

from fmu_mb import registry
from tests.windows import MINGW

HERE = Path(__file__).resolve().parents[1]           # tests/
MODELS = registry.available()
#: the most detailed options of every model (its model file's MOST_DETAILED), as FMU parameters
DETAIL = {name: registry.as_fmu_parameters(name, registry.most_detailed(name)) for name in MODELS}
#: inputs that make each run move in its own way (the programmed mechanisms follow their paths)
DRIVES = {"five_axis": {"joint1.tau_drive": 2.0, "joint4.tau_drive": -0.5}, "crane": {"column.tau_drive": -400.0}}


def _outputs(md):
    return [v.name for v in md.modelVariables if v.causality == "output" and v.type == "Real"]


def _run(path, start, stop, step=0.01):
    md = read_model_description(str(path))
    res = simulate_fmu(str(path), stop_time=stop, output_interval=step, start_values=start, output=_outputs(md))
    return res, _outputs(md)


@pytest.mark.parametrize("detail", [False, True], ids=["defaults", "detail"])
@pytest.mark.parametrize("model", MODELS)
def test_outputs_equal_the_pythonfmu_fmu(fmus, native_fmus, model, detail):
    """Every Real output over the paper's scenario (the model's stop time, 10 ms communication
    steps), through FMPy: bit for bit the pythonfmu FMU's (same kernels, same order of operations)."""
    stop = float(read_model_description(str(fmus[model].path)).defaultExperiment.stopTime)
    start = {**DRIVES.get(model, {}), **(DETAIL[model] if detail else {})}
    if detail:
        stop = min(stop, 2.0)                       # (the detailed runs are the slow ones of the Python FMU)
    py, names = _run(fmus[model].path, start, stop)
    nat, _ = _run(native_fmus[model].path, start, stop)
    assert len(py) == len(nat) == round(stop / 0.01) + 1
    worst = max(float(np.max(np.abs(nat[n] - py[n]))) for n in names)
    assert worst == 0.0, worst


@pytest.mark.parametrize("model", MODELS)
def test_every_option_combination_equals_the_pythonfmu_fmu(extracted, extracted_native, model):
    """Every combination of the model's Choice/Flag options (191 in all), 0.2 s at 10 ms: every Real
    output of the native FMU equals the pythonfmu FMU's bit for bit."""
    from tests.test_robustness import option_combinations
    md = read_model_description(str(Path(extracted[model]) / "modelDescription.xml"))
    combos, n_enum = option_combinations(md)
    names = _outputs(md)
    differ = []
    for combo in combos[:n_enum]:
        start = {**DRIVES.get(model, {}), **combo}
        runs = [simulate_fmu(str(d[model]), stop_time=0.2, output_interval=0.01, start_values=start, output=names)
                for d in (extracted, extracted_native)]
        worst = max(float(np.max(np.abs(runs[0][n] - runs[1][n]))) for n in names)
        if not (len(runs[0]) == len(runs[1]) == 21 and worst == 0.0):
            differ.append((combo, worst))
    assert not differ, differ[:5]


#: trajectory inputs changed at the start and after 0.3 s (the built-in paths, whose tables are affine in
#: their parameters, and the mobile robot's steering, a TableTrajectory whose table is compiled into the
#: binary; mid-run only what lies ahead changes: a change of the path being followed is a jump that both
#: kinds refuse alike, tests/test_robustness.py). The first input is then set out of its range.
TRAJECTORY_CHANGES = {"crane": ({"lift.delta": 0.5, "ellipse.a": 2.9}, {}),
                      "manipulator": ({"rectangle.move_time": 0.8, "rectangle.stop_time": 0.2},
                                      {"rectangle.stop_time": 0.5}),
                      "rpsup": ({"rectangle.move_time": 1.5}, {"rectangle.stop_time": 0.3}),
                      "mobile_robot": ({"steering.ramp": 0.15, "steering.right": -0.35, "steering.t_right": 0.05,
                                        "steering.hold": 0.05}, {"steering.left": 0.6, "steering.t_left": 2.0})}


@pytest.mark.parametrize("model", list(TRAJECTORY_CHANGES))
def test_trajectory_inputs_change_the_native_fmus_paths_as_the_pythonfmu_fmus(fmus, native_fmus, model):
    """Programmed-trajectory inputs set before initialization and changed mid-run: the native FMU's
    segment tables (Model's + slope × change, fmi.native_fmu.trajectory_jacobians) move the mechanism as the
    pythonfmu FMU's (Python's segments) do, to 1e-12 relative over 1 s; an invalid value is refused by both
    with the same reason, the previous values kept."""
    first, later = TRAJECTORY_CHANGES[model]
    names = _outputs(read_model_description(str(fmus[model].path)))
    runs = {}
    for kind, built in (("python", fmus), ("native", native_fmus)):
        inst = _instance(built[model].path, kind).init(**{k.replace(".", "__"): v for k, v in first.items()})
        a, t = _steps(inst, 0.0, 30, 0.01, names)
        inst.set(**{k.replace(".", "__"): v for k, v in later.items()})
        b, t = _steps(inst, t, 70, 0.01, names)
        name = next(iter(first))
        inst.set(**{name.replace(".", "__"): -1.0 if name.rsplit(".", 1)[1] not in ("move_time", "ramp") else 0.0})
        with pytest.raises(Exception):
            inst.fmu.doStep(t, 0.01)
        runs[kind] = (np.vstack([a, b]), [m.split(": ", 1)[-1] for m in inst.errors()][-1:])
        inst.fmu.freeInstance()
    (py, py_err), (nat, nat_err) = runs["python"], runs["native"]
    scale = np.maximum(1.0, np.abs(py))
    assert np.max(np.abs(nat - py) / scale) <= 1e-12, np.max(np.abs(nat - py) / scale)
    assert not np.array_equal(py[:30], _steps(_instance(fmus[model].path, "d").init(), 0.0, 30, 0.01, names)[0])
    assert py_err and nat_err and py_err[0] == nat_err[0], (py_err, nat_err)      # names, reason, all of it


def test_count_and_value_options_are_baked_in_at_build_time(fmus, tmp_path):
    """fmu-mb build --kind native --option n_div=5 --option damping=2e-4: the crane's native FMU carries
    those values (its start values say so), runs them bit for bit as the pythonfmu FMU set to them does
    (flexible jib, LuGre), and refuses any other value of them with the build command to use."""
    from fmu_mb import cli
    assert cli.main(["build", "crane", "--kind", "native", "--option", "n_div=5", "--option", "model.damping=2e-4",
                     "--out", str(tmp_path), "--target", "linux64", "--no-cross-check"]) == 0
    path = tmp_path / "native" / "crane.fmu"
    v = {x.name: x for x in read_model_description(str(path)).modelVariables}
    assert int(v["model.n_div"].start) == 5 and float(v["model.damping"].start) == 2e-4
    start = {**DRIVES["crane"], "model.link": 1, "model.friction": 2}
    nat, names = _run(path, start, 0.5)
    py, _ = _run(fmus["crane"].path, {**start, "model.n_div": 5, "model.damping": 2e-4}, 0.5)
    assert max(float(np.max(np.abs(nat[n] - py[n]))) for n in names) == 0.0
    assert not np.array_equal(nat["jib.deflection[2]"], _run(fmus["crane"].path, start, 0.5)[0]["jib.deflection[2]"])
    inst = _instance(path, "baked")
    inst.fmu.setupExperiment(startTime=0.0)
    inst.fmu.enterInitializationMode()
    inst.set(**{"model__n_div": 3})
    with pytest.raises(Exception):
        inst.fmu.exitInitializationMode()
    assert any("built with model.n_div = 5 only" in m and "--option n_div=3" in m for m in inst.errors())
    inst.fmu.freeInstance()


def test_count_and_value_options_built_at_several_values_take_each_at_run_time(fmus, tmp_path):
    """--option n_div=2,5 --option support_z=1e7,1e6: the native crane carries a compiled mechanism (and its
    static start) per value combination; model.n_div/model.support_z take each of those values at run time,
    bit for bit the pythonfmu FMU set to them, and any other value is refused naming the values carried."""
    from fmu_mb import cli
    assert cli.main(["build", "crane", "--kind", "native", "--option", "n_div=2,5", "--option", "support_z=1e7,1e6",
                     "--out", str(tmp_path), "--target", "linux64", "--no-cross-check"]) == 0
    path = tmp_path / "native" / "crane.fmu"
    v = {x.name: x for x in read_model_description(str(path)).modelVariables}
    assert int(v["model.n_div"].start) == 2 and float(v["model.support_z"].start) == 1e7     # the first values
    with zipfile.ZipFile(path) as z:
        carried = json.loads(z.read("resources/variants.json"))
    assert len(carried["variants"]) == 96 * 4 and carried["carried_values"] == {"model.n_div": [2, 5],
                                                                                "model.support_z": [1e7, 1e6]}
    base = {**DRIVES["crane"], "model.link": 1, "model.friction": 2}          # flexible jib, LuGre, sprung base
    finals = []
    for n_div, s_z in ((5, 1e6), (2, 1e6), (5, 1e7)):
        start = {**base, "model.n_div": n_div, "model.support_z": s_z}
        nat, names = _run(path, start, 0.3)
        py, _ = _run(fmus["crane"].path, start, 0.3)
        assert max(float(np.max(np.abs(nat[n] - py[n]))) for n in names) == 0.0, (n_div, s_z)
        finals.append(tuple(float(nat[n][-1]) for n in names))
    assert len(set(finals)) == 3                                       # each value runs its own mechanism
    for name, value, carried in (("n_div", 3, "model.n_div = 2, 5 only"),
                                 ("support_z", 1e8, "model.support_z = 10000000.0, 1000000.0 N/m only")):
        inst = _instance(path, "set")
        inst.fmu.setupExperiment(startTime=0.0)
        inst.fmu.enterInitializationMode()
        inst.set(**{f"model__{name}": value})
        with pytest.raises(Exception):
            inst.fmu.exitInitializationMode()
        assert any(carried in m and f"--option {name}=...," in m for m in inst.errors()), inst.errors()
        inst.set(**{f"model__{name}": 5 if name == "n_div" else 1e6})        # a carried value: starts
        inst.fmu.exitInitializationMode()
        inst.fmu.doStep(0.0, 0.01)
        inst.fmu.freeInstance()


def test_out_of_range_option_codes_are_refused_with_the_python_fmus_words(fmus, native_fmus):
    """A Choice code or a Count outside its range: both kinds refuse at fmi2ExitInitializationMode with the
    same messages (the Choice's codes named, the Count's and Value's intervals), every offending parameter named."""
    errors = {}
    for kind, built in (("python", fmus), ("native", native_fmus)):
        inst = _instance(built["crane"].path, kind)
        inst.fmu.setupExperiment(startTime=0.0)
        inst.fmu.enterInitializationMode()
        inst.set(model__link=7, model__n_div=0, model__support_z=1e10)
        with pytest.raises(Exception):
            inst.fmu.exitInitializationMode()
        errors[kind] = [m.split("] ", 1)[-1] for m in inst.errors()]
        inst.fmu.freeInstance()
    assert "invalid parameter: parameter 'model.link' must be one of 0 = rigid, 1 = flexible (got 7)" in \
        errors["python"], errors
    assert "invalid parameter: parameter 'model.n_div' must be an integer in [1, 40] (got 0)" in errors["python"]
    assert "invalid parameter: parameter 'model.support_z' must be a finite number in [10000, 1e+09] N/m " \
        "(got 10000000000.0)" in errors["python"], errors
    assert errors["native"] == errors["python"]


def test_option_values_for_a_native_fmu_are_checked_at_build_time():
    from fmu_mb import registry
    from fmu_mb.fmi.native_fmu import MAX_VARIANTS, bake_options, carried_variants, carry_every_count
    crane = registry.load("crane")
    for options, why in (({"n_div": [2, 2]}, "given twice"), ({"n_div": [2.5]}, "not a whole number"),
                         ({"n_div": [0, 2]}, "n_div"), ({"link": ["flexible"]}, "Choice/Flag"),
                         ({"nope": 1}, "has no option 'nope'"), ({"n_div": []}, "no value")):
        with pytest.raises(ValueError, match=why):
            bake_options(crane, "crane", options)
    many = bake_options(crane, "crane", {"n_div": list(range(1, 41)), "damping": [0.0, 1e-4]})
    with pytest.raises(ValueError, match=f"exceed the {MAX_VARIANTS}"):
        carried_variants(many)
    two = carried_variants(bake_options(crane, "crane", {"n_div": [3, 4]}))
    assert len(two) == 2 * len(carried_variants(crane)) and {v.get("n_div", 3) for v in two} == {3, 4}
    # every Count value by default; a Count option given values keeps them; one that does not fit stays
    every = carried_variants(carry_every_count(crane, "crane", log=pytest.fail))
    assert len(every) == 40 * 96 and {v.get("n_div", 3) for v in every} == set(range(1, 41))
    assert carry_every_count(bake_options(crane, "crane", {"n_div": 5}), "crane", log=pytest.fail).grid == {}
    said = []
    wide = carry_every_count(bake_options(crane, "crane", {"damping": [0.0, 1e-4]}), "crane", log=said.append)
    assert set(wide.grid) == {"damping"} and len(carried_variants(wide)) == 2 * 96
    assert said == [f"model.n_div is carried at 3 only: each of its 40 values would make 7680 option combinations "
                    f"(at most {MAX_VARIANTS}); choose the values to carry with --option n_div=a,b,..."]


def test_the_binaries_need_no_python(native_fmus, tmp_path):
    """ldd: libc and libm only; no Python, numba or numpy symbol imported; only fmi2* exported. The
    win64 DLL (where built) imports KERNEL32 and msvcrt only."""
    d = Path(extract(str(native_fmus["crane"].path), str(tmp_path / "crane")))
    so = d / "binaries" / "linux64" / "crane.so"
    libs = [ln.split()[0] for ln in subprocess.run(["ldd", str(so)], capture_output=True, text=True,
                                                   check=True).stdout.splitlines() if ln.strip()]
    assert {Path(x).name.split(".so")[0] for x in libs} <= {"linux-vdso", "libm", "libc", "ld-linux-x86-64"}, libs
    nm = subprocess.run(["nm", "-D", str(so)], capture_output=True, text=True, check=True).stdout.splitlines()
    undefined = [ln.split()[-1] for ln in nm if " U " in ln or " w " in ln]
    assert not [s for s in undefined if "Py" in s or "numba" in s.lower() or "NRT" in s or "numpy" in s], undefined
    exported = [ln.split()[-1] for ln in nm if ln.split()[-2:-1] == ["T"]]
    assert all(s.startswith("fmi2") for s in exported) and len(set(exported)) == 44, exported   # FMI 2.0: CS + ME
    dll = d / "binaries" / "win64" / "crane.dll"
    if not dll.exists():
        assert not MINGW
        pytest.skip("no win64 binary: mingw-w64 is not installed (apt-get install gcc-mingw-w64-x86-64)")
    dump = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(dll)], capture_output=True, text=True,
                          check=True).stdout
    dlls = {ln.split(":")[1].strip() for ln in dump.splitlines() if "DLL Name:" in ln}
    assert dlls == {"KERNEL32.dll", "msvcrt.dll"}, dlls
    assert "python" not in dump.lower()


def _instance(path, name="inst"):
    from tests.fmu_host import Instance
    return Instance(path, name)


def _steps(inst, t, n, dt, names):
    out = []
    for _ in range(n):
        inst.fmu.doStep(t, dt)
        t += dt
        out.append(inst.get(*names))
    return np.array(out), t


@pytest.mark.parametrize("model", ["five_axis", "rpsup", "manipulator"])
def test_fmu_states_round_trip_and_cross_the_two_kinds(fmus, native_fmus, model):
    """A state serialized mid-run, deserialized into a fresh instance and continued gives the
    continued run's outputs bit for bit; a state of the pythonfmu FMU continues in the native FMU
    (and back) with the pythonfmu FMU's outputs."""
    start = DRIVES.get(model, {})
    md = read_model_description(str(fmus[model].path))
    names = _outputs(md)
    runs = {}
    for kind, built in (("python", fmus), ("native", native_fmus)):
        a = _instance(built[model].path, f"{kind}_a").init(**{k.replace(".", "__"): v for k, v in start.items()})
        _, t = _steps(a, 0.0, 15, 0.01, names)
        blob = a.fmu.serializeFMUstate(a.fmu.getFMUstate())
        cont, _ = _steps(a, t, 10, 0.01, names)
        runs[kind] = (blob, t, cont)
        a.fmu.terminate()
        a.fmu.freeInstance()
    for kind, built in (("python", fmus), ("native", native_fmus)):
        for source in ("python", "native"):
            blob, t, cont = runs[source]
            b = _instance(built[model].path, f"{kind}_from_{source}")
            b.fmu.setFMUstate(b.fmu.deSerializeFMUstate(blob))
            again, _ = _steps(b, t, 10, 0.01, names)
            assert np.array_equal(again, runs[kind][2]), (kind, source, np.max(np.abs(again - runs[kind][2])))
            assert np.array_equal(again, cont), (kind, source)
            b.fmu.terminate()
            b.fmu.freeInstance()


def test_a_table_trajectorys_own_check_refuses_as_in_the_pythonfmu_fmu(fmus, native_fmus):
    """The steering's check (the left turn after the right one: a return code of its compiled table
    function) refuses a change before initialization and mid-run with the Python FMU's words; the values
    in force stay and the run goes on as if nothing had been set."""
    names = _outputs(read_model_description(str(fmus["mobile_robot"].path)))
    said, runs = {}, {}
    for kind, built in (("python", fmus), ("native", native_fmus)):
        inst = _instance(built["mobile_robot"].path, kind)
        inst.fmu.setupExperiment(startTime=0.0)
        inst.fmu.enterInitializationMode()
        inst.set(steering__t_left=1.5)                     # < t_right + 2 ramp + hold = 4 s
        with pytest.raises(Exception):
            inst.fmu.exitInitializationMode()
        inst.set(steering__t_left=6.0)
        inst.fmu.exitInitializationMode()
        a, t = _steps(inst, 0.0, 20, 0.01, names)
        inst.set(steering__hold=5.5)                       # the left turn at 6 s would start inside the hold
        with pytest.raises(Exception):
            inst.fmu.doStep(t, 0.01)
        assert inst.get("steering.hold") == [1.0]
        b, _ = _steps(inst, t, 20, 0.01, names)
        said[kind] = [m.split(": ", 1)[-1] for m in inst.errors()]
        runs[kind] = np.vstack([a, b])
        inst.fmu.freeInstance()
    assert len(said["python"]) == 2 and said["python"] == said["native"], said
    assert "the left turn must start after the right turn ends" in said["native"][1]
    assert np.array_equal(runs["python"], runs["native"])


MOBILE_ROBOT_WITH = """
import numpy as np
from fmu_mb import registry
from fmu_mb.trajectories import Param, Trajectory

robot = registry.load("mobile_robot")
OPTIONS, FMU = robot.OPTIONS, robot.FMU


def allocating_table(v, time, par):
    d = np.zeros(1)                     # an allocation: numba's runtime, which a native FMU does not have
    d[0] = v[0]
    time[0, 0], time[0, 1], par[0, 3] = 1.0, 2.0, d[0]
    return 1 if d[0] == 0.005 else 0    # a check: the slopes of an affine table would not make it


class Allocating(robot.Steering):
    PARAMS = {"slide": Param("m", "slide", -0.01, 0.01)}
    KINDS = (0,)
    CHECKS = ("not 5 mm",)
    table_function = staticmethod(allocating_table)

    def __init__(self):
        self.slide, self.name = 0.002, "steering"


class Checked(Trajectory):            # a Python check of its own: not the C layer's
    PARAMS = {"slide": Param("m", "slide", -0.01, 0.01)}

    def __init__(self):
        self.slide, self.name = 0.002, "steering"

    def validate(self):
        super().validate()
        if self.slide == 0.005:
            raise ValueError("not 5 mm")

    def segments(self):
        return [(0, 1.0, 2.0, np.array([0.0, 0.0, 0.0, self.slide, 0.0, 0.0]))]


def unordered_table(v, time, par):        # no check of its own: the base checks catch t2 < t1
    for k in range(2):
        time[k, 0], time[k, 1], par[k, 3 - 3 * k] = v[k], v[k] + 0.5, 0.002
    return 0


class Unordered(robot.Steering):
    PARAMS = {"t1": Param("s", "first move", 0.0, 10.0), "t2": Param("s", "second move", 0.0, 10.0)}
    KINDS = (0, 0)
    CHECKS = ()
    table_function = staticmethod(unordered_table)

    def __init__(self):
        self.t1, self.t2, self.name = 1.0, 2.0, "steering"


def build(**options):
    mech = robot.build(**options)
    for c in mech.constraints:
        if getattr(c, "trajectory", None) is not None:
            c.trajectory = {TRAJECTORY}()
    return mech
"""


@pytest.mark.parametrize("trajectory", ["Allocating", "Checked"])
def test_trajectory_inputs_that_stay_python_are_refused_by_name(tmp_path, trajectory):
    """A trajectory whose table the native FMU cannot compute (a TableTrajectory whose function allocates;
    a Trajectory with a Python check of its own) keeps its built values: the build says so for the first,
    setting the input is refused with a message saying why, and the instance runs with the built path."""
    from fmu_mb.fmi.native_fmu import build_native_fmu
    path = tmp_path / f"robot_{trajectory.lower()}.py"
    path.write_text(MOBILE_ROBOT_WITH.replace("{TRAJECTORY}", trajectory))
    said = []
    built = build_native_fmu(str(path), tmp_path / "out", targets=["linux64"], log=said.append)
    if trajectory == "Allocating":
        assert any("steering' stay at their built values" in m and "NRT_MemInfo_alloc" in m for m in said), said
    robot = _instance(built.path, "steering")
    robot.fmu.setupExperiment(startTime=0.0)
    robot.fmu.enterInitializationMode()
    with pytest.raises(Exception):
        robot.set(steering__slide=0.004)
    assert any("follows the programmed trajectories it was built with" in m for m in robot.errors())
    assert robot.get("steering.slide") == [0.002]
    robot.fmu.exitInitializationMode()
    robot.fmu.doStep(0.0, 0.01)
    assert np.all(np.isfinite(robot.get(*_outputs(robot.md))))
    robot.fmu.freeInstance()


#: Count options at values away from the defaults, with the options they matter under (0.3 s at 10 ms)
COUNT_RUNS = [("crane", {"model.link": 1, "model.n_div": 1}), ("crane", {**DETAIL["crane"], "model.n_div": 17}),
              ("crane", {"model.link": 1, "model.n_div": 40, "column.tau_drive": -400.0}),
              ("crane", {"model.n_div": 29}),                                   # rigid jib: n_div changes nothing
              ("manipulator", {**DETAIL["manipulator"], "model.n_div": 20}),
              ("manipulator", {"model.link": 1, "model.n_div": 1, "model.armature": 0.5}),
              ("rpsup", {**DETAIL["rpsup"], "model.n_div": 1}), ("rpsup", {"model.coupler": 1, "model.n_div": 5})]


@pytest.mark.parametrize("model,start", COUNT_RUNS)
def test_every_count_value_runs_as_in_the_pythonfmu_fmu(fmus, native_fmus, model, start):
    """A native FMU built with the defaults carries every value of each Count option (crane n_div 1..40 at
    each of its 96 Choice/Flag combinations: 3840 combinations, the 1640 distinct mechanisms in one
    variants.arrays): any value runs bit for bit as the pythonfmu FMU set to it (to rounding where a
    Value option moves too: fmi.native_values), and the values change the motion."""
    with zipfile.ZipFile(native_fmus[model].path) as z:
        carried = json.loads(z.read("resources/variants.json"))
    o = registry.load(model).OPTIONS["n_div"]
    assert carried["carried_values"]["model.n_div"] == [o.default] + [n for n in range(o.min, o.max + 1)
                                                                      if n != o.default]
    assert len(set(carried["arrays_variant"])) < len(carried["variants"])          # shared mechanisms
    nat, names = _run(native_fmus[model].path, start, 0.3)
    py, _ = _run(fmus[model].path, start, 0.3)
    worst = max(float(np.max(np.abs(nat[n] - py[n])) / max(1.0, float(np.max(np.abs(py[n]))))) for n in names)
    moved = any(k.startswith("model.") and k != "model.n_div" and "armature" in k for k in start)
    assert worst <= (1e-12 if moved else 0.0), worst
    default = {k: v for k, v in start.items() if k != "model.n_div"}
    ref, _ = _run(fmus[model].path, default, 0.3)
    changed = any(not np.array_equal(ref[n], py[n]) for n in names)
    flexible = start.get("model.link", start.get("model.coupler", 0)) == 1
    assert changed == flexible, (changed, flexible)


def test_a_damaged_arrays_file_is_refused_with_a_message(extracted_native, tmp_path):
    """resources/variants.arrays truncated, or with its payload offsets past its end: fmi2Instantiate (which
    loads the first combination) returns NULL with a message naming the file, in a fresh process, never a
    signal (arrays.c checks every count, shape and offset against the file's size)."""
    import struct

    from tests.test_robustness import run_case
    src = Path(extracted_native["crane"])
    cut, bad = tmp_path / "cut", tmp_path / "bad"
    for d in (cut, bad):
        shutil.copytree(src, d)
    data = (src / "resources" / "variants.arrays").read_bytes()
    (cut / "resources" / "variants.arrays").write_bytes(data[:len(data) // 2])
    n_names, n_arrays, _ = struct.unpack_from("<3q", data, 80)
    raw = bytearray(data)
    for i in range(n_arrays):                          # every stored payload points past the end of the file
        at = 104 + 64 * n_names + 64 * i
        if struct.unpack_from("<q", raw, at)[0] in (0, 1):
            struct.pack_into("<q", raw, at + 48, len(data) + 8)
    (bad / "resources" / "variants.arrays").write_bytes(bytes(raw))
    for d in (cut, bad):
        rc, res, err = run_case("uri", dir=str(d), form="as_uri")
        assert rc == 0 and res is not None, err
        msgs = [m for s, _, m in res["messages"] if s >= 3]
        assert not res["instantiated"] and any("variants.arrays" in m and "truncated" in m for m in msgs), res


#: Value options at values the native FMU was not built with, with the most detailed options and statics
VALUE_RUNS = [("crane", {"model.support_z": 3e6}),
              ("crane", {"model.support_z": 2.5e8, "model.damping": 3e-3, **DETAIL["crane"], "init.static": True}),
              ("crane", {"model.damping": 0.0, "model.link": 1}),
              ("manipulator", {"model.armature": 0.5, "model.damping": 2e-3, **DETAIL["manipulator"]}),
              ("manipulator", {"model.armature": 2.0})]


@pytest.mark.parametrize("model,start", VALUE_RUNS)
def test_value_options_take_any_value_at_run_time(fmus, native_fmus, model, start):
    """The Value options whose compiled arrays are linear in them (crane: support_z, damping, with
    their product in the base damping; manipulator: armature, damping) take any value in range in the
    native FMU (fmi.native_values): every output over 1 s equals the pythonfmu FMU's at that value to
    rounding — 1e-11 of the largest magnitude of its vector (a joint moment's three components) plus
    1e-14 SI units (noise-level outputs: the moment about a joint axis, violations of 1e-7 m). Measured:
    manipulator bitwise, crane ≤ 1.5e-11 N·m on moments of 63 N·m, 3.4e-15 m on violations."""
    md = read_model_description(str(fmus[model].path))
    names = _outputs(md)
    with zipfile.ZipFile(native_fmus[model].path) as z:
        assert sorted(json.loads(z.read("resources/variants.json"))["run_time_values"]) == \
            {"crane": ["model.damping", "model.support_z"], "manipulator": ["model.armature", "model.damping"]}[model]
    start = {**DRIVES.get(model, {}), **start}
    nat, _ = _run(native_fmus[model].path, start, 1.0)
    py, _ = _run(fmus[model].path, start, 1.0)
    default, _ = _run(fmus[model].path, DRIVES.get(model, {}), 1.0)
    family = {}
    for n in names:
        key = n.split("[")[0]
        family[key] = max(family.get(key, 0.0), float(np.max(np.abs(py[n]))))
    for n in names:
        assert np.max(np.abs(nat[n] - py[n])) <= 1e-11 * family[n.split("[")[0]] + 1e-14, n
    assert any(not np.allclose(py[n], default[n], rtol=1e-6, atol=1e-9) for n in names)   # the value matters


#: static starts away from the built start values: other gravity, start coordinates, start times (a
#: programmed static start holds the path at t0), with the most detailed options
STATIC_STARTS = [("crane", {"gravity[3]": -9.7, **DETAIL["crane"]}, 0.0),
                 ("crane", {"column.q_start": 0.3, "model.link": 1}, 0.0),
                 ("crane", {}, 0.5),
                 ("rpsup", {"gravity[3]": -9.0, "model.coupler": 1, "model.base": 1}, 0.2),
                 ("manipulator", {"gravity[3]": -9.0, **DETAIL["manipulator"]}, 0.1),
                 ("manipulator", {}, 0.25)]


@pytest.mark.parametrize("model,start,t0", STATIC_STARTS)
def test_static_start_at_any_values_equals_the_pythonfmu_fmu(fmus, native_fmus, model, start, t0):
    """init.static solves the equilibrium at run time in both kinds by one kernel (kernels.statics):
    every output over 0.3 s bit for bit the pythonfmu FMU's, or both refuse with the same words."""
    md = read_model_description(str(fmus[model].path))
    names = _outputs(md)
    start = {"init.static": True, **{k: v for k, v in start.items() if k in {v.name for v in md.modelVariables}}}
    runs = []
    for built in (fmus, native_fmus):
        log = []
        try:
            runs.append(simulate_fmu(str(built[model].path), start_time=t0, stop_time=t0 + 0.3, output_interval=0.01,
                                     start_values=start, output=names,
                                     logger=lambda *a: log.append(a[-1].decode(errors="replace"))))
        except Exception:
            runs.append([m.split("] ", 1)[-1] for m in log if "init" in m or "motion" in m])
    py, nat = runs
    if isinstance(py, list) or isinstance(nat, list):
        assert isinstance(py, list) and isinstance(nat, list) and py, (model, start, t0)
        ascii_py = [m.replace("Φ", "Phi").replace("∇", "grad ") for m in py]
        assert ascii_py == nat
        return
    assert max(float(np.max(np.abs(nat[n] - py[n]))) for n in names) == 0.0


@pytest.mark.parametrize("model,start", [
    ("crane", {"model.link": 1, "solver.step_size": 1e-3, "gravity[3]": -9.0, "init.static": True}),
    ("crane", {"model.link": 1, "model.base": 0, "solver.step_size": 5e-4, "column.q_start": 0.2}),
    ("rpsup", {"model.coupler": 1, "solver.step_size": 2e-4, "gravity[3]": -8.0, "init.static": True}),
    ("manipulator", {"model.link": 1, "solver.step_size": 2e-4, "gravity[3]": -8.0})])
def test_rk4_limit_at_the_actual_start_refuses_as_the_pythonfmu_fmu(fmus, native_fmus, model, start):
    """RK4 above its stability limit at the start actually taken (other start values, gravity,
    statics): both kinds refuse with the same message and numbers (kernels.stability at run time)."""
    said = []
    for built in (fmus, native_fmus):
        log = []
        with pytest.raises(Exception):
            simulate_fmu(str(built[model].path), stop_time=0.01, output_interval=0.01,
                         start_values={"solver.integrator": 0, **start},
                         logger=lambda *a: log.append(a[-1].decode(errors="replace")))
        said.append([m for m in log if "stability limit of explicit RK4" in m])
    assert said[0] and said[0] == said[1]


def test_value_slopes_accept_affine_and_bilinear_arrays_only():
    """fmi.native_values: arrays affine in the options, with products of two, give slope and cross records
    that reproduce them at other values; a square root, a product of three or a changed integer array
    leaves the options at their built values (None)."""
    from types import SimpleNamespace

    from fmu_mb.fmi.native_values import value_slopes
    from fmu_mb.model.options import Value
    module = SimpleNamespace(OPTIONS={"a": Value(2.0, 0.0, 10.0), "b": Value(1e7, 1e4, 1e9), "c": Value(1.0, 0.5, 2.0)})

    def model(form):
        def records_of(v):
            a, b, c = (v.get(n, module.OPTIONS[n].default) for n in "abc")
            return {"model.k": np.array([b, 3.0]), "model.d": np.array([a * b, a]), "model.n": np.array([4], np.int64),
                    **form(a, b, c)}
        return records_of
    good = model(lambda a, b, c: {"model.m": np.array([c + 1.0])})
    base = good({})
    slopes = dict(value_slopes(["a", "b", "c"], module, {}, base, good))
    assert set(slopes) == {"slope.0.model.d", "slope.1.model.k", "slope.1.model.d", "slope.2.model.m",
                           "cross.0.1.model.d"}
    a, b = 7.5, 3e5                                     # the C layer's sum reproduces the arrays elsewhere
    d = base["model.d"] + (a - 2.0) * slopes["slope.0.model.d"] + (b - 1e7) * slopes["slope.1.model.d"] \
        + (a - 2.0) * (b - 1e7) * slopes["cross.0.1.model.d"]
    assert np.allclose(d, [a * b, a], rtol=1e-14)
    for form in (lambda a, b, c: {"model.m": np.array([np.sqrt(b)])},
                 lambda a, b, c: {"model.m": np.array([a * b * c])},
                 lambda a, b, c: {"model.m": np.array([1.0]), "model.n2": np.array([int(a)], np.int64)}):
        bad = model(form)
        assert value_slopes(["a", "b", "c"], module, {}, bad({}), bad) is None


def test_the_base_checks_of_a_compiled_table_name_the_trajectory_as_python_does(tmp_path):
    """A table function without checks of its own writing segments out of time order (t2 < t1): both
    kinds refuse with Trajectory.validate's words, the trajectory named; in order, both run alike."""
    from fmu_mb.fmi.builder import build_fmu
    from fmu_mb.fmi.native_fmu import build_native_fmu
    path = tmp_path / "robot_unordered.py"
    path.write_text(MOBILE_ROBOT_WITH.replace("{TRAJECTORY}", "Unordered"))
    built = {"python": build_fmu(str(path), tmp_path / "py"),
             "native": build_native_fmu(str(path), tmp_path / "native", targets=["linux64"])}
    said, runs = {}, {}
    for kind, b in built.items():
        inst = _instance(b.path, kind)
        inst.fmu.setupExperiment(startTime=0.0)
        inst.fmu.enterInitializationMode()
        inst.set(steering__t2=0.5)
        with pytest.raises(Exception):
            inst.fmu.exitInitializationMode()
        inst.set(steering__t2=0.6, steering__t1=0.1)
        inst.fmu.exitInitializationMode()
        runs[kind], _ = _steps(inst, 0.0, 80, 0.01, _outputs(inst.md))
        said[kind] = [m.split(": ", 1)[-1] for m in inst.errors()]
        inst.fmu.freeInstance()
    assert said["python"] == said["native"] and len(said["native"]) == 1, said
    assert "trajectory 'steering': segments must start in time order" in said["native"][0]
    assert np.array_equal(runs["python"], runs["native"])


def _python_only_table(v, time, par):
    return len(repr(object()))                  # a Python object numba cannot type


def _allocating_table(v, time, par):
    return int(np.zeros(3).sum())               # numba's runtime allocator


def test_table_functions_that_need_more_than_libm_are_refused_at_build_time(tmp_path):
    """fmu_mb.native.trajectory_code compiles a TableTrajectory's function for the binary only when its
    machine code calls nothing but libm: an allocation or a Python object is named in the refusal (the
    build then logs it and keeps the inputs fixed), the guide's example compiles."""
    import math
    from fmu_mb.codes import SegmentKind
    from fmu_mb.native.trajectory_code import table_ir, table_object
    from fmu_mb.trajectories import Param, TableTrajectory

    def table_class(fn):
        return type("T", (TableTrajectory,), {"PARAMS": {"a": Param("m", "a")}, "KINDS": (SegmentKind.QUINTIC,),
                                              "table_function": staticmethod(fn)})

    def fine(v, time, par):
        time[0, 1] = 1.0 + math.cos(v[0])
        return 0
    with pytest.raises(ValueError, match="does not compile with numba"):
        table_ir(table_class(_python_only_table), 0)
    with pytest.raises(ValueError, match="calls NRT_MemInfo_alloc"):
        table_ir(table_class(_allocating_table), 0)
    obj = tmp_path / "table.o"
    obj.write_bytes(table_object([table_ir(table_class(fine), 3)], "linux64"))
    symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout.split("\n")
    undefined = {line.split()[-1] for line in symbols if line.strip().startswith("U ")}
    assert any(line.endswith(" T fmu_mb_table_3") for line in symbols)
    assert undefined <= {"cos", "NRT_MemInfo_call_dtor"}, undefined          # libm, and runtime.c's release
