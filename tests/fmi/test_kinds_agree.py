"""A Python FMU and a native FMU of one model are the same FMU core (fmu_mb/fmi/c) over the same kernels: every
robustness case (tests/fmu_cases.py, each in a fresh host process) gets the same statuses, the same values and
the same words from both — except where only the native FMU offers something: directional derivatives (a Python
FMU's number of states is not fixed: it offers neither Model Exchange nor them), checked apart in
tests/fmi/test_model_exchange.py."""
from __future__ import annotations

import pytest

from tests.test_robustness import FORGED, NON_FINITE, RAW, UNREACHABLE, run_cases

PHASES = ("instantiated", "initialization", "stepping", "terminated")


def _cases(model: str) -> list:
    cases = [("state_table", dict(phase=p)) for p in PHASES]
    cases += [("raw_calls", dict(which=w)) for w in RAW if model == "five_axis"]
    cases += [("forged_state", dict(field=f, inputs={"joint1.tau_drive": 1.0})) for f in FORGED if model == "five_axis"]
    if model in NON_FINITE:
        cases.append(("bad_input", dict(values=NON_FINITE[model])))
    cases += [("bad_input", dict(values=values, steps=2, dt=0.01)) for m, values in UNREACHABLE.values() if m == model]
    cases += [("bad_setup", dict(start=1.0, stop=0.5)), ("bad_setup", dict(then_step=[0.05, 0.1])),
              ("restore_fuzz", dict(seed=7, n=120))]
    return cases


@pytest.mark.parametrize("model", ["five_axis", "manipulator", "crane"])
def test_both_kinds_answer_every_case_alike(extracted_python, extracted_native, model):
    """Every case's result (statuses, every message, the outputs' bits where a case records them) is the
    same from the Python FMU and the native FMU."""
    cases = _cases(model)
    runs = run_cases([(name, dict(dir=str(kind[model]), **args)) for kind in (extracted_python, extracted_native)
                      for name, args in cases])
    python, native = runs[:len(cases)], runs[len(cases):]
    differ = []
    for (name, args), (rc_p, res_p, err_p), (rc_n, res_n, err_n) in zip(cases, python, native):
        assert rc_p == 0 and rc_n == 0 and res_p is not None and res_n is not None, (name, args, err_p, err_n)
        if name == "state_table":                    # (the native FMU's own capability)
            assert res_p.pop("fmi2GetDirectionalDerivative")[0] == 3
            res_n.pop("fmi2GetDirectionalDerivative")
        if res_p != res_n:
            differ.append(f"{name} {args}:\n  python {res_p}\n  native {res_n}")
    assert not differ, f"{len(differ)} of {len(cases)} cases differ:\n" + "\n".join(differ[:5])
    messages = sum(len(str(res)) for _, res, _ in python)
    print(f"{model}: {len(cases)} cases, {messages} characters of results, identical in both kinds")
