"""Heap use of the FMU binaries, counted by a preloaded allocator (tests/c_host/alloc_count.c: malloc and its
kin, mmap, munmap) in a plain C host (tests/c_host/lifecycle_host.c, FMI 2.0 and 3.0): an instance's life cycle
leaves no block behind, and steady stepping (co-simulation: fmi2SetReal, fmi2DoStep, fmi2GetReal; Model Exchange:
fmi2SetReal, fmi2SetTime, fmi2SetContinuousStates, fmi2GetDerivatives, fmi2GetReal, fmi2CompletedIntegratorStep; and
their FMI 3.0 counterparts) calls none of them and no logger, for every mechanism at its most detailed options; nor
do the calls the FMU refuses (a NaN input, a negative or non-contiguous step, NaN states or time: each logged) and
the steps after them (issue 40)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description

from fmu_mb import registry
from tests.fmi.test_native_fmu import DETAIL

HOST_DIR = Path(__file__).resolve().parents[1] / "c_host"
FMI2 = Path(__file__).resolve().parents[2] / "fmu_mb" / "fmi" / "c" / "fmi2"
CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or CC is None,
                                reason="the allocation counter preloads a glibc shared object (Linux, cc)")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    out = tmp_path_factory.mktemp("alloc")
    counter, host = out / "alloc_count.so", out / "lifecycle_host"
    for cmd in ([CC, "-O2", "-shared", "-fPIC", "-o", str(counter), str(HOST_DIR / "alloc_count.c")],
                [CC, "-O2", "-std=gnu11", "-Wall", "-Werror", "-I", str(FMI2), "-I", str(FMI2.with_name("fmi3")),
                 "-o", str(host), str(HOST_DIR / "lifecycle_host.c"), "-ldl", "-lm", "-lpthread"]):
        subprocess.run(cmd, check=True)
    return counter, host


def _run(host, folder, model, cycles=40, steps=50, me=False, detail=False, dt=1e-3, thread=False):
    counter, program = host
    md = read_model_description(str(Path(folder) / "modelDescription.xml"))
    reals = [v for v in md.modelVariables if v.type == "Real"]
    inp = next(v for v in reals if v.causality == "input")
    outs = ",".join(str(v.valueReference) for v in reals if v.causality == "output")
    binary = Path(folder) / "binaries" / "linux64" / f"{md.coSimulation.modelIdentifier}.so"
    by_name = {v.name: v for v in md.modelVariables}
    start = [f"{by_name[n].valueReference}:i={int(v)}" for n, v in (DETAIL.get(model, {}) if detail else {}).items()]
    nx = sum(v.name.startswith("state[") for v in md.modelVariables)
    r = subprocess.run([str(program), str(binary), (Path(folder) / "resources").as_uri(), md.guid, str(cycles),
                        str(steps), repr(dt), str(inp.valueReference), outs] + ([f"me={nx}"] if me else []) + (["thread"] if thread else []) + start,
                       capture_output=True, text=True,
                       env={**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD")},
                            "LD_PRELOAD": str(counter)}, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    return dict((k, int(v)) for k, v in (line.split() for line in r.stdout.splitlines()))


@pytest.mark.parametrize("kind", ["python", "native"])
@pytest.mark.parametrize("model", ["five_axis", "rpsup", "pd_controller", "excitation"])
def test_instances_leave_no_heap_block_and_steady_steps_allocate_nothing(host, extracted_python, extracted_native,
                                                                         kind, model):
    """40 life cycles after a first one (which starts Python in a Python FMU and fills the kernels' box pool)
    leave the number of live heap blocks exactly as it was; 50 steps with an input set and every
    Real output read before each make no allocating call."""
    folder = (extracted_native if kind == "native" else extracted_python)[model]
    got = _run(host, folder, model)
    print(f"{kind} {model}: live blocks after one cycle {got['warm']}, after 40 more {got['after']}; "
          f"allocating calls in 50 steady steps: {got['step']}")
    assert got["after"] == got["warm"], got
    assert got["step"] == 0, got


@pytest.mark.parametrize("thread", [False, True], ids=["same-thread", "rt-thread"])
@pytest.mark.parametrize("interface", ["cs", "me"])
@pytest.mark.parametrize("model", registry.available())
def test_native_steps_and_refusals_at_the_most_detailed_options_allocate_nothing(host, extracted_native, model,
                                                                                interface, thread):
    """Every mechanism's native FMU at its most detailed options, through co-simulation and Model Exchange: 10
    life cycles after the first leave no heap block; 200 steady steps (every Real output read after each) make no
    heap, mmap or munmap call and no logger call; the refused calls after them (a NaN input; a step of negative
    size and one from the wrong time, or NaN states and a NaN time) each answer fmi2Error with a logged message,
    and they and the two steps after them make no heap, mmap or munmap call either. rt-thread: the steps and the
    refusals run in a thread started after the initialization, as a rig's real-time thread steps an FMU its main
    thread set up (the kernels' boxes come from runtime.c's process-wide pool: a per-thread cache made 4 heap
    calls on the thread's first step, measured on the crane)."""
    me = interface == "me"        # (the host's explicit Euler needs 1e-5 s on the stiff flexible links and bristles)
    got = _run(host, extracted_native[model], model, cycles=10, steps=200, me=me, detail=True, dt=1e-5 if me else 1e-3,
               thread=thread)
    print(f"native {model} {interface}: {got}")
    assert got["warm"] > 0                  # the counter sees the instance's blocks
    assert got["after"] == got["warm"], got
    assert got["step"] == 0 and got["steady_logs"] == 0, got
    assert got["refusals"] == 3 and got["refused_logs"] >= 3, got
    assert got["refused"] == 0, got


@pytest.mark.parametrize("interface", ["cs", "me"])
@pytest.mark.parametrize("model", registry.available())
def test_fmi3_steps_and_refusals_at_the_most_detailed_options_allocate_nothing(host, extracted_fmi3, model,
                                                                              interface):
    """The FMI 3.0 FMU of every mechanism at its most detailed options, through co-simulation (fmi3SetFloat64,
    fmi3DoStep, fmi3GetFloat64 of every output, arrays whole) and Model Exchange (fmi3SetTime,
    fmi3SetContinuousStates, fmi3GetContinuousStateDerivatives, fmi3CompletedIntegratorStep), stepped in a thread
    started after the initialization (the rig's case): as the FMI 2.0 test above — 10 life cycles after the first
    leave no heap block, 200 steady steps make no heap, mmap or munmap call and no logger call, the refused calls
    each answer fmi3Error with a logged message, and they and the two steps after them allocate nothing."""
    counter, program = host
    folder = Path(extracted_fmi3[model])
    md = read_model_description(str(folder / "modelDescription.xml"))
    floats = [v for v in md.modelVariables if v.type == "Float64"]
    inp = next(v for v in floats if v.causality == "input")
    outputs = [v for v in floats if v.causality == "output"]
    nvalues = sum(int(np.prod([int(d.start) for d in v.dimensions])) if v.dimensions else 1 for v in outputs)
    state = next(v for v in md.modelVariables if v.name == "state")
    nx = int(state.dimensions[0].start)
    by_name = {v.name: v for v in md.modelVariables}
    start = [f"{by_name[n].valueReference}:e={int(v)}" for n, v in DETAIL.get(model, {}).items()]
    binary = folder / "binaries" / "x86_64-linux" / f"{md.coSimulation.modelIdentifier}.so"
    me = interface == "me"
    r = subprocess.run([str(program), str(binary), str(folder / "resources") + "/", md.guid, "10", "200",
                        repr(1e-5 if me else 1e-3), str(inp.valueReference),
                        ",".join(str(v.valueReference) for v in outputs), f"fmi3={nvalues}"]
                       + ([f"me={nx}"] if me else []) + ["thread"] + start,
                       capture_output=True, text=True,
                       env={**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_PRELOAD")},
                            "LD_PRELOAD": str(counter)}, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    got = dict((k, int(v)) for k, v in (line.split() for line in r.stdout.splitlines()))
    print(f"fmi3 {model} {interface}: {got}")
    assert got["warm"] > 0
    assert got["after"] == got["warm"], got
    assert got["step"] == 0 and got["steady_logs"] == 0, got
    assert got["refusals"] == 3 and got["refused_logs"] >= 3, got
    assert got["refused"] == 0, got
