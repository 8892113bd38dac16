"""FMI 3.0 native FMUs (issue 41): the same core under a third API file (fmu_mb/fmi/c/fmi3.c), one FMU holding every
platform's binary, co-simulation and Model Exchange.

What FMI 3.0 must not change is checked bitwise against the FMI 2.0 FMU of the same build (the conftest's
native_builds compile both from the same model table and kernel objects): co-simulation outputs, Model Exchange
under CVODE, FMU states crossing between the two. What FMI 3.0 adds is checked through its API in fresh host
processes (tests/fmi3_cases.py): its types (Float64, Int32, Enumerations as Int64, time as the independent
variable), adjoint derivatives, its instantiation arguments, and every class of bad call, refused with a message in
FMI 3.0's words and with nothing lost.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu

from fmu_mb import registry
from fmu_mb.fmi.arrays3 import element_names, flat_result
from fmu_mb.fmi.description3 import PLATFORMS
from fmu_mb.fmi.native_fmu import available_targets, check_targets
from tests.fmi.test_model_exchange import RUNS as ME_RUNS
from tests.fmi.test_native_fmu import DETAIL, DRIVES

MODELS = registry.available()
ROOT = Path(__file__).resolve().parents[2]


def run_case(name, **args):
    """(return code, result, stderr) of one tests/fmi3_cases.py case in a fresh process."""
    r = subprocess.run([sys.executable, "-m", "tests.fmi3_cases", name, json.dumps(args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=1200)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    return r.returncode, (json.loads(lines[-1][7:]) if lines else None), r.stderr[-3000:]


def run_cases(cases):
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(lambda c: run_case(c[0], **c[1]), cases))


@pytest.fixture(scope="module")
def extracted3(fmi3_fmus, native_fmus, tmp_path_factory):
    """{model: (FMI 2.0 folder, FMI 3.0 folder)} of every mechanism's native FMUs, extracted."""
    root = tmp_path_factory.mktemp("fmi3_extracted")
    out = {}
    for m in MODELS:
        for v, built in ((2, native_fmus[m]), (3, fmi3_fmus[m])):
            shutil.unpack_archive(str(built.path), str(root / f"{m}{v}"), "zip")
        out[m] = (str(root / f"{m}2"), str(root / f"{m}3"))
    return out


def test_fmi3_fmus_validate_and_hold_every_platform(fmi3_fmus, native_fmus):
    """FMPy validates every FMI 3.0 FMU (its schema, ModelStructure, start values, units) with no problem; one FMU
    holds a binary per platform tuple whose compiler is installed; the interface is the FMI 2.0 FMU's (token and
    description: the model file's; its vectors as arrays whose elements are the FMI 2.0 variables of those names,
    each array at its first element's value reference, fmu_mb.fmi.arrays3), with FMI 3.0 types and time as the
    independent variable after them; no text in it speaks of FMI 2.0 functions."""
    folders = {PLATFORMS[t] for t in available_targets(3)}
    assert "x86_64-linux" in folders
    for m in MODELS:
        path = fmi3_fmus[m].path
        assert fmi3_fmus[m].problems == [], (m, fmi3_fmus[m].problems)
        with zipfile.ZipFile(path) as z:
            held = {n.split("/")[1] for n in z.namelist() if n.startswith("binaries/")}
            xml = z.read("modelDescription.xml").decode()
        assert held == folders, (m, held)
        assert "fmi2" not in xml, m
        md3, md2 = read_model_description(str(path)), read_model_description(str(native_fmus[m].path))
        assert md3.fmiVersion == "3.0" and md3.guid == md2.guid
        assert md3.description == md2.description == registry.load(m).__doc__.strip().splitlines()[0]
        assert md3.modelExchange and md3.coSimulation
        two = {v.name: (v.valueReference, v.causality) for v in md2.modelVariables}
        three = {v.name: (v.valueReference, v.causality) for v in md3.modelVariables}
        assert three.pop("time") == (len(two), "independent")
        structural = {n for n, (_, c) in three.items() if c == "structuralParameter"}
        assert structural == ({"model.n_div"} if "model.n_div" in two else set()), m   # the Count options
        # arrays: their elements are the FMI 2.0 variables of those names (same causality), the array at its first
        # element's value reference; every FMI 2.0 variable is an FMI 3.0 variable or an element of one
        elements = {}
        for v in md3.modelVariables[1:]:
            names = element_names(v.name, v.shape or ())
            assert two[names[0]][0] == v.valueReference, (m, v.name)
            elements.update({n: "parameter" if n in structural else v.causality for n in names})
        assert elements == {n: c for n, (_, c) in two.items()}, m
        arrays = {v.name: v.shape for v in md3.modelVariables if v.shape}
        assert arrays["gravity"] == (3,) and arrays["state"] == arrays["der(state)"] == (md3.numberOfContinuousStates,)
        assert any(n.endswith(".F") and shape == (3,) for n, shape in arrays.items()), m      # joint reactions
        if m == "crane":     # a free joint's coordinates (metres and radians) stay scalars with their FMI 2.0 names
            assert "base.q[4]" in three and "base.q" not in arrays
        types = {v.name: v.type for v in md3.modelVariables}
        assert types["solver.integrator"] == "Enumeration" and types["solver.step_size"] == "Float64"
        assert types["solver.max_steps_per_call"] == "Int32"


def test_fmi3_targets():
    """FMI 3.0 puts linux64 and linux-aarch64 in one FMU (a folder per platform tuple); FMI 2.0 cannot."""
    assert check_targets(["linux64", "linux-aarch64", "win64"], 3) == ["linux64", "linux-aarch64", "win64"]
    with pytest.raises(ValueError, match="cannot share one FMU"):
        check_targets(["linux64", "linux-aarch64"], 2)
    assert PLATFORMS == {"linux64": "x86_64-linux", "win64": "x86_64-windows", "linux-aarch64": "aarch64-linux"}


def _start(model, detail):
    return {**DRIVES.get(model, {}), **(DETAIL[model] if detail else {})}


@pytest.mark.parametrize("detail", [False, True], ids=["defaults", "detail"])
@pytest.mark.parametrize("model", MODELS)
def test_cosimulation_outputs_bitwise_equal_fmi2(native_fmus, fmi3_fmus, model, detail):
    """FMPy runs both FMUs' co-simulation interfaces (0.5 s, 10 ms steps, the quick start's drives, the defaults and
    the most detailed options): every output equals the FMI 2.0 FMU's bit for bit."""
    kw = dict(stop_time=0.5, output_interval=0.01, start_values=_start(model, detail))
    r2 = simulate_fmu(str(native_fmus[model].path), **kw)
    r3 = flat_result(simulate_fmu(str(fmi3_fmus[model].path), **kw))        # (arrays element-wise)
    names = [n for n in r2.dtype.names if n != "time"]
    assert len(names) > 10 and set(names) == set(r3.dtype.names) - {"time"}
    assert len(r2) == len(r3) == 51
    differ = [n for n in names if not np.array_equal(r2[n], r3[n])]
    assert not differ, differ[:5]
    assert max(float(np.ptp(r2[n])) for n in names if r2.dtype[n].kind == "f") > 1e-3       # (the run moves)


@pytest.mark.parametrize("detail", [False, True], ids=["defaults", "detail"])
@pytest.mark.parametrize("model", MODELS)
def test_model_exchange_under_cvode_equals_fmi2(native_fmus, fmi3_fmus, model, detail):
    """FMPy's CVODE on both FMUs' Model Exchange interfaces (0.1 s, at the tolerances of
    tests/fmi/test_model_exchange.py): every Float64 output agrees to 1e-9 (relative to max(1, |value|); the same
    derivatives from the same code: measured bitwise)."""
    _, _, rtol, interval = ME_RUNS[model]["detail" if detail else "defaults"]
    kw = dict(fmi_type="ModelExchange", stop_time=0.1, output_interval=interval, relative_tolerance=rtol,
              start_values=_start(model, detail))
    r2 = simulate_fmu(str(native_fmus[model].path), **kw)
    r3 = flat_result(simulate_fmu(str(fmi3_fmus[model].path), **kw))
    names = [n for n in r2.dtype.names if n != "time" and r2.dtype[n].kind == "f"]
    assert len(r2) == len(r3) and names
    worst = max(float(np.max(np.abs(r2[n] - r3[n]) / np.maximum(1.0, np.abs(r2[n])))) for n in names)
    assert worst <= 1e-9, worst


def _message_ok(said, fmi3_name=True):
    return said and all("fmi2" not in m and m.startswith("[") for m in said) and \
        (not fmi3_name or any("fmi3" in m for m in said))


@pytest.mark.parametrize("model", MODELS)
def test_bad_fmi3_calls_are_refused_with_a_message_and_lose_nothing(extracted3, model):
    """In fresh host processes (FMPy's FMI 3.0 layer): calls out of the state table's order, wrong types (an Int32
    read as Float64, an Enumeration as Int32), unknown value references, a value count that does not match, time
    set, types the FMU has none of, configuration mode, NaN inputs, steps that are not contiguous, negative or
    past the stop time, a parameter set while stepping, forged and truncated FMU states, Model Exchange calls on a
    co-simulation instance and the reverse, output derivatives, step mode, NULL output arguments; instantiation
    with a wrong token, a foreign or NULL resourcePath, event mode, intermediate variables, scheduled execution.
    Each answers fmi3Error (or no instance) with a message in FMI 3.0's words; outputs, time and states stay bitwise
    as they were and the next good step works (its lastSuccessfulTime its end, no early return). Options set as
    Int64 (an Enumeration) and Int32 read back; a parameter out of range is refused at fmi3ExitInitializationMode
    and initialization succeeds once it is set back; an instance without a logger refuses quietly, no crash."""
    md = read_model_description(extracted3[model][1])
    inputs = [v.name for v in md.modelVariables if v.causality == "input" and v.type == "Float64"]
    integrator = next(v for v in md.modelVariables if v.name == "solver.integrator")
    items = [i.name for i in md.typeDefinitions[[t.name for t in md.typeDefinitions].index(integrator.declaredType.name)].items]
    common = dict(dir=extracted3[model][1], int_name="solver.max_steps_per_call", real_param="solver.step_size",
                  bad_value=5.0)
    results = run_cases([("refusals", dict(common, input_name=inputs[0], enum_name="solver.integrator")),
                         ("parameters", dict(common, enum_name="solver.integrator", enum_code=items.index("rk4"))),
                         ("instantiation", dict(dir=extracted3[model][1])),
                         ("model_exchange", dict(dir=extracted3[model][1]))])
    for rc, res, err in results:
        assert rc == 0 and res is not None, err
    refusals, parameters, instantiation, me = (r[1] for r in results)
    for label, c in {**refusals["cases"], **me["cases"]}.items():
        assert c["status"] == 3 and _message_ok(c["messages"]), (label, c)
    assert refusals["kept"] and me["kept"]
    assert refusals["status_after"] == 0 and refusals["last_successful"] == pytest.approx(refusals["t_expected"])
    assert refusals["early"] is False and refusals["n_states"] == me["nx"] > 0
    assert me["derivatives_status"] == 0
    assert parameters["enum_back"] == items.index("rk4") and parameters["int_back"] > 0
    assert parameters["bad"]["status"] == 3 and "solver.step_size" in parameters["bad"]["messages"][0]
    assert parameters["retried"]["status"] == 0
    for label, c in instantiation["cases"].items():
        if label == "no_logger":
            assert c == {"made": True, "status": 3}
        else:
            assert not c["made"] and _message_ok(c["messages"]), (label, c)


@pytest.mark.parametrize("model", ["five_axis", "rpsup"])
def test_every_fmi3_function_survives_null_arguments_and_odd_counts_in_every_phase(extracted3, model):
    """The FMI 3.0 half of the robustness suite's raw calls (tests/fmu_cases.py raw_calls for FMI 2.0): every fmi3
    function, co-simulation and Model Exchange, in every phase, with NULL arrays and out arguments, counts up to
    2⁶⁴ − 1, NaN times, out-of-range value references and a zeroed buffer for an FMU state (tests/fmi3_cases.py
    fuzz; a tree and a closed loop). No call crashes the host; every fmi3Error is explained in the log; a NULL
    instance is refused by every function."""
    results = run_cases([("fuzz", dict(dir=extracted3[model][1], me=me)) for me in (False, True)])
    for me, (rc, res, err) in zip((False, True), results):
        assert rc == 0 and res is not None, (f"{'ME' if me else 'CS'}: the host died (return code {rc})", err)
        assert res["calls"] > 6000, res["calls"]
        assert res["silent"] == [] and res["odd_status"] == [] and res["null_accepted"] == [], res


@pytest.mark.parametrize("model", MODELS)
def test_directional_and_adjoint_derivatives_through_fmi3(extracted3, model):
    """fmi3GetDirectionalDerivative of the state derivatives equals central differences through the FMI 3.0 API
    (Richardson-extrapolated) to 1e-6 of each block's largest entry (A: by the states, B: by the drive inputs), off
    the start; fmi3GetAdjointDerivative equals the transpose of the directional derivatives to 1e-12."""
    rc, res, err = run_case("derivatives", dir=extracted3[model][1], start=DRIVES.get(model, {}))
    assert rc == 0 and res is not None, err
    assert res["statuses"] == [0]
    for block, (rel, scale) in res["blocks"].items():
        assert rel <= 1e-6, (block, rel, scale)
    assert res["blocks"]["A"][1] > 0
    assert res["adjoint"][0] <= 1e-12, res["adjoint"]


@pytest.mark.parametrize("model", MODELS)
def test_fmu_states_cross_between_fmi2_and_fmi3(extracted3, model):
    """A state the FMI 2.0 FMU serialized (at the most detailed options, driven) restores into the FMI 3.0 FMU and
    the reverse: outputs bitwise equal at once and after 30 more steps of both."""
    rc, res, err = run_case("state_crossing", dir2=extracted3[model][0], dir3=extracted3[model][1],
                            start=_start(model, True))
    assert rc == 0 and res is not None, err
    assert res["same_now"] and res["same_after"] and res["same_back"], res


def test_resource_paths_with_special_characters(fmi3_fmus, tmp_path):
    """The FMI 3.0 FMU extracted under the folder names of the FMI 2.0 URI cases (tests/test_robustness.py
    DIR_NAMES: non-ASCII, space, + # ; %, a literal %41 or %20, non-UTF-8 bytes): instantiates with its
    resourcePath as the bytes of the path (FMI 3.0 passes a path, not a URI: nothing is decoded), with and without
    the trailing separator, initializes and steps."""
    from tests.test_robustness import DIR_NAMES
    dirs = []
    for k, name in enumerate(DIR_NAMES):
        d = tmp_path / f"{k}" / name / "five_axis"
        shutil.unpack_archive(str(fmi3_fmus["five_axis"].path), str(d), "zip")
        dirs.append(str(d))
    rc, res, err = run_case("resource_paths", dirs=dirs)
    assert rc == 0 and res is not None, err
    assert len(res) == 2 * len(DIR_NAMES)
    bad = [r for r in res if not (r["instantiated"] and r["init"] == 0 and r["steps"] == [0, 0] and r["finite"])]
    assert not bad, bad[:3]


# ------------------------------------------------------------------------------------------ structural parameters
@pytest.mark.parametrize("model,value", [("crane", 7), ("manipulator", 10)])
def test_n_div_set_in_configuration_mode_runs_as_the_fmu_built_at_that_n_div(extracted3, tmp_path, model, value):
    """model.n_div (a Count option: the flexible link's rigid finite elements, its bodies and coordinates) is a
    structural parameter of the FMI 3.0 FMU, set in configuration mode only. Set there to a value the FMU carries,
    the flexible link's run (20 steps of 10 ms) equals bit for bit the run of an FMU built with that n_div as its
    only value. Misuse is refused with a message in FMI 3.0's words (set outside configuration mode, another
    variable set in it, initialization, a step or an FMU state while in it, entering twice or after instantiation,
    leaving without entering); a value outside n_div's range is refused when the mechanism is built; an FMU
    without structural parameters (five_axis) refuses configuration mode."""
    from fmu_mb.fmi.native_fmu import build_native_fmus
    built = build_native_fmus(model, {3: tmp_path}, ["linux64"], options={"n_div": value}, every_count=False,
                              log=lambda *a: None)[3]
    shutil.unpack_archive(str(built.path), str(tmp_path / "x"), "zip")
    md = read_model_description(extracted3[model][1])
    var = {v.name: v for v in md.modelVariables}
    assert var["model.n_div"].causality == "structuralParameter" and var["model.n_div"].type == "Int32"
    assert all(v.causality != "structuralParameter" for v in md.modelVariables if v.name != "model.n_div")
    link = {t.name: t for t in md.typeDefinitions}[var["model.link"].declaredType.name]
    enums = {"model.link": [i.name for i in link.items].index("flexible")}
    (rc1, configured, e1), (rc2, reference, e2), (rc3, none, e3) = run_cases([
        ("configuration", dict(dir=extracted3[model][1], structural="model.n_div", real_param="solver.step_size",
                               value=value, bad_value=int(var["model.n_div"].max) + 1, enums=enums)),
        ("run_built", dict(dir=str(tmp_path / "x"), enums=enums)),
        ("no_structure", dict(dir=extracted3["five_axis"][1]))])
    assert rc1 == rc2 == rc3 == 0 and configured and reference and none, e1 + e2 + e3
    for label, c in configured["cases"].items():
        assert c["status"] == 3 and _message_ok(c["messages"], fmi3_name=False), (label, c)
    said = {k: c["messages"][0] for k, c in configured["cases"].items()}
    assert "model.n_div is a structural parameter" in said["structural_outside"]
    assert "only structural parameters" in said["other_parameter"] and "solver.step_size" in said["other_parameter"]
    assert "fmi3ExitConfigurationMode first" in said["initialize_while_configuring"]
    assert configured["back"] == value and configured["run"] == reference
    assert configured["bad"]["status"] == 3 and "model.n_div" in configured["bad"]["messages"][0]
    assert none["status"] == 3 and "no structural parameters" in none["messages"][0]


# ------------------------------------------------------------------------------------------ one FMU, three platforms
#: the runs: five_axis at its drives; the crane away from its defaults through an Enumeration and an Int32 (another
#: compiled mechanism); the mobile robot's compiled steering table
PLATFORM_RUNS = [("five_axis", {}), ("crane", {"model.link": 1, "model.n_div": 7, "model.friction": 2}),
                 ("mobile_robot", {"steering.right": -0.3, "steering.t_right": 0.1, "steering.ramp": 0.2})]


@pytest.mark.parametrize("platform", ["x86_64-linux", "x86_64-windows", "aarch64-linux"])
@pytest.mark.parametrize("model,options", PLATFORM_RUNS)
def test_one_fmi3_fmu_runs_on_every_platform(native_fmus, fmi3_fmus, tmp_path, wine_prefix, model, options, platform):
    """tests/c_host/fmi3_host.c (the FMI 3.0 co-simulation calls, nothing else; built with cc, mingw-w64 and the
    AArch64 cross compiler) runs the one FMI 3.0 FMU's binary of each platform for 50 steps of 10 ms, with an empty
    environment on x86-64 Linux, under wine 8 and under qemu-aarch64: every Float64 output after each step equals
    FMPy's run of the FMI 2.0 FMU bitwise on Linux and AArch64 (same IR, glibc's libm), within 1e-11 relative under
    wine (msvcrt's libm rounds exp/sin/cos differently in the last bit; tests/fmi/test_native_hosts.py)."""
    from tests.fmi.test_native_hosts import AARCH64_CC, AARCH64_MISSING, AARCH64_SYSROOT, QEMU, _compile
    from tests.windows import MINGW, MISSING, WINE, run_wine
    if platform == "x86_64-windows" and not (MINGW and WINE):
        pytest.skip(MISSING)
    if platform == "aarch64-linux" and not (AARCH64_CC and QEMU and AARCH64_SYSROOT.is_dir()):
        pytest.skip(AARCH64_MISSING)
    folder = tmp_path / model
    shutil.unpack_archive(str(fmi3_fmus[model].path), str(folder), "zip")
    md = read_model_description(str(folder / "modelDescription.xml"))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    kind = {v.name: "structural" if v.causality == "structuralParameter" else v.type for v in md.modelVariables}
    outputs = [v for v in md.modelVariables if v.causality == "output" and v.type == "Float64"]
    names = [n for v in outputs for n in element_names(v.name, v.shape or ())]      # (the FMI 2.0 names)
    ext = "dll" if platform == "x86_64-windows" else "so"
    binary = folder / "binaries" / platform / f"{model}.{ext}"
    assert binary.is_file(), sorted(p.name for p in (folder / "binaries").iterdir())
    res = str(folder / "resources") + "/"
    if platform == "x86_64-windows":
        res = "Z:" + res.replace("/", "\\")
    start = {**DRIVES.get(model, {}), **options}
    args = [str(binary), res, md.guid, "50", "0.01", str(tmp_path / "out.bin"),
            ",".join(str(v.valueReference) for v in outputs) + f"/{len(names)}"]
    args += [f"{vr[k]}{ {'Float64': '', 'Enumeration': ':e', 'Int32': ':i', 'structural': ':c'}[kind[k]] }={v!r}"
             for k, v in start.items()]
    source = Path(__file__).resolve().parents[1] / "c_host" / "fmi3_host.c"
    if platform == "x86_64-linux":
        host = _compile(shutil.which("cc") or "gcc", source, tmp_path / "host", ["-ldl"])
        run = subprocess.run([str(host), *args], capture_output=True, text=True, env={}, timeout=300)
    elif platform == "x86_64-windows":
        host = _compile(MINGW, source, tmp_path / "host.exe", ["-static-libgcc"])
        run = run_wine(wine_prefix, [host, *args])
    else:
        host = _compile(AARCH64_CC, source, tmp_path / "host", ["-ldl"])
        run = subprocess.run([QEMU, "-L", str(AARCH64_SYSROOT), str(host), *args], capture_output=True, text=True,
                             env={}, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    got = np.fromfile(tmp_path / "out.bin").reshape(50, len(names))
    ref = simulate_fmu(str(native_fmus[model].path), stop_time=0.5, output_interval=0.01, start_values=start,
                       output=names)
    want = np.array([[row[n] for n in names] for row in ref[1:]])
    rel = np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)), axis=0)
    k = int(np.argmax(rel))
    print(f"{model} on {platform}: worst {rel[k]:.2e} relative in {names[k]}")
    if platform == "x86_64-windows":
        assert rel[k] <= 1e-11, (names[k], rel[k])
    else:
        assert np.array_equal(got, want), (names[k], rel[k])


def test_simulate_and_report_take_an_fmi3_fmu(native_fmus, fmi3_fmus, tmp_path):
    """fmu-mb simulate (a fresh process, as a user runs it) runs the FMI 3.0 FMU (its structural n_div set in
    configuration mode, the jib flexible) to the FMI 2.0 FMU's CSV values bit for bit, and fmu-mb report draws the
    run."""
    import pandas as pd

    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "fmu_mb", *args], cwd=ROOT, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    sets = ["model.link=1", "model.n_div=5", "column.tau_drive=-400"]
    for version, fmus in ((2, native_fmus), (3, fmi3_fmus)):
        cli("simulate", str(fmus["crane"].path), "--stop-time", "0.2", "--step", "0.01", "--set", *sets,
            "--csv", str(tmp_path / f"run{version}.csv"))
    a, b = pd.read_csv(tmp_path / "run2.csv"), pd.read_csv(tmp_path / "run3.csv")      # (Boolean columns too)
    assert set(a.columns) == set(b.columns) and len(a) == len(b) == 21 and len(a.columns) > 100   # (arrays split)
    assert a.equals(b[list(a.columns)]) and np.ptp(a["jib.deflection[2]"]) > 0
    cli("report", str(tmp_path / "run3.csv"), "--out", str(tmp_path / "run3.html"))
    assert (tmp_path / "run3.html").stat().st_size > 100_000
