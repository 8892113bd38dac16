"""A PD joint controller as an FMU (for closed-loop demos and tests of the mechanism FMUs).

Per channel i:  tau[i] = sat(tau_ff[i] + Kp[i]·(q_ref[i] − q[i]) + Kd[i]·(qd_ref[i] − qd[i]), ±tau_max[i]).

Stateless, with direct feedthrough: tau is evaluated from the current inputs
whenever it is read, and the model description lists those input dependencies.
Channels are rad / N·m (for prismatic joints read m / N). The number of
channels is fixed when the FMU is built (default 6); unused channels output 0.
"""
from __future__ import annotations

import numpy as np

from .interface import Interface, Var
from .table_slave import TableSlave

CHANNELS = 6


def controller_interface(n: int = CHANNELS) -> Interface:
    itf = Interface("pd_controller")
    for i in range(1, n + 1):
        itf.add(Var(f"Kp[{i}]", "Real", "parameter", "fixed", f"proportional gain of channel {i}", ("Kp", i - 1),
                    start=100.0, unit="N.m/rad", min=0.0, max=1e9))
        itf.add(Var(f"Kd[{i}]", "Real", "parameter", "fixed", f"derivative gain of channel {i}", ("Kd", i - 1),
                    start=10.0, unit="N.m.s/rad", min=0.0, max=1e9))
        itf.add(Var(f"tau_max[{i}]", "Real", "parameter", "fixed", f"saturation of channel {i}'s output",
                    ("tau_max", i - 1), start=1e6, unit="N.m", min=0.0, max=1e12))
    for key, unit, what in (("q_ref", "rad", "reference position"), ("qd_ref", "rad/s", "reference rate"),
                            ("tau_ff", "N.m", "feedforward"), ("q", "rad", "measured position"),
                            ("qd", "rad/s", "measured rate")):
        for i in range(1, n + 1):
            itf.add(Var(f"{key}[{i}]", "Real", "input", "continuous", f"{what} of channel {i}", (key, i - 1),
                        start=0.0, unit=unit))
    for i in range(1, n + 1):
        itf.add(Var(f"tau[{i}]", "Real", "output", "continuous",
                    f"command of channel {i}: sat(tau_ff + Kp (q_ref - q) + Kd (qd_ref - qd), ±tau_max)",
                    ("tau", i - 1), unit="N.m",
                    depends=tuple(f"{k}[{i}]" for k in ("q_ref", "qd_ref", "tau_ff", "q", "qd"))))
    return itf


class PDControllerSlave(TableSlave):
    CHANNELS = CHANNELS
    FEEDTHROUGH = True

    def _make_interface(self):
        self.description = "PD joint controller (fmu_mb)"
        itf = controller_interface(self.CHANNELS)
        names = itf.by_name()
        n = self.CHANNELS
        self._idx = {k: np.array([names[f"{k}[{i}]"] for i in range(1, n + 1)])
                     for k in ("Kp", "Kd", "tau_max", "q_ref", "qd_ref", "tau_ff", "q", "qd", "tau")}
        return itf

    def _build(self) -> bool:
        errors = [why for i in self._params if (why := self._out_of_range(self._itf.vars[i], self._values[i]))]
        for why in errors:
            self._error(f"invalid parameter: {why}")
        return not errors

    def _advance(self, t, h) -> bool:
        return True

    def _refresh(self) -> None:
        v, i = self._values, self._idx
        u = v[i["tau_ff"]] + v[i["Kp"]] * (v[i["q_ref"]] - v[i["q"]]) + v[i["Kd"]] * (v[i["qd_ref"]] - v[i["qd"]])
        v[i["tau"]] = np.clip(u, -v[i["tau_max"]], v[i["tau_max"]])

    def _state(self):
        return np.zeros(0), 0

    def _restore(self, x, counter) -> None:
        if x.size:
            raise ValueError(f"it holds {x.size} state values; the controller is stateless")
