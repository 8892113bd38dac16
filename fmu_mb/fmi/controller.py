"""A PD joint controller as an FMU (for closed-loop demos and tests of the mechanism FMUs): its interface and
its build; the FMU core computes it (fmu_mb/fmi/c/controller.c).

Per channel i:  tau[i] = sat(tau_ff[i] + Kp[i]·(q_ref[i] − q[i]) + Kd[i]·(qd_ref[i] − qd[i]), ±tau_max[i])
from t = t_enable on, and 0 before it (the drives enabled once the master's exchanges carry measurements: a
system run by masters that start their connections differently, fmu_mb.system, sets it after the first
exchanges).

Stateless, with direct feedthrough: tau is evaluated from the current inputs and time
whenever it is read, and the model description lists those input dependencies.
Channels are rad / N·m (for prismatic joints read m / N). The number of
channels is fixed when the FMU is built (default 6); unused channels output 0.
"""
from __future__ import annotations

from .interface import Interface, Var

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
    itf.add(Var("t_enable", "Real", "parameter", "fixed", "time the drives are enabled: every tau is 0 before it",
                ("t_enable",), start=0.0, unit="s", min=-1e9, max=1e9))     # last: earlier value references stay
    return itf


def build_controller_fmu(out_dir="dist", channels: int = CHANNELS, targets=None, validate: bool = True):
    """Build ``<out_dir>/pd_controller.fmu``: this controller as a native FMU (the FMU core with its model
    c/controller.c, fmi.block_fmu; no Python on the host) for ``targets`` (default: linux64, and win64 where
    mingw-w64 is installed)."""
    from .block_fmu import build_block_fmu
    return build_block_fmu(controller_interface(channels), "controller",
                           f"PD joint controller, {channels} channels (fmu_mb)", out_dir, targets, validate)
