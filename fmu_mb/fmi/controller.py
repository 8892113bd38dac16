"""A PD joint controller as an FMU (for closed-loop demos and tests of the mechanism FMUs): its interface and
its build; the FMU core computes it (fmu_mb/fmi/c/controller.c).

Per channel i:  tau[i] = sat(tau_ff[i] + Kp[i]·(q_ref[i] − q[i]) + Kd[i]·(qd_ref[i] − qd[i]), ±tau_max[i]).

Stateless, with direct feedthrough: tau is evaluated from the current inputs
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
    return itf


def build_controller_fmu(out_dir="dist", channels: int = CHANNELS, targets=None, validate: bool = True):
    """Build ``<out_dir>/pd_controller.fmu``: this controller as a native FMU (the FMU core with its model
    c/controller.c, fmi.binary; no Python on the host) for ``targets`` (default: linux64, and win64 where
    mingw-w64 is installed)."""
    import os
    import tempfile
    import time
    import zipfile
    from pathlib import Path

    from ..native.library import TARGETS
    from .binary import link
    from .builder import VERSION, finish_build
    from .description import fmu_guid, interface_markdown, model_description
    from .interface import INTERFACE_FILE
    from .model_table import model_table_source
    from .native_fmu import FOLDERS, available_targets, check_targets

    t0 = time.perf_counter()
    targets = check_targets(targets or available_targets())
    itf = controller_interface(channels)
    name = itf.model
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fmu_mb_controller_") as tmp:
        tmp = Path(tmp)
        table = tmp / "model_table.c"
        table.write_text(model_table_source(itf, fmu_guid(itf), INTERFACE_FILE))
        binaries = {t: link(t, table, tmp / f"{name}.{TARGETS[t][2].rsplit('.', 1)[1]}", "controller", None)
                    for t in targets}
        xml = model_description(itf, description=f"PD joint controller, {channels} channels (fmu_mb)",
                                version=VERSION, tool=f"fmu_mb {VERSION} (native)", stop_time=10.0, comm_step=1e-3)
        doc = interface_markdown(itf, f"{name}.fmu — interface")
        fmu, part = out_dir / f"{name}.fmu", out_dir / f".{name}.fmu.part"
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("modelDescription.xml", xml)
            for target, path in binaries.items():
                z.write(path, f"binaries/{FOLDERS[target]}/{path.name}")
            z.writestr(f"resources/{INTERFACE_FILE}", itf.to_json())
            z.writestr("documentation/interface.md", doc)
        os.replace(part, fmu)
    return finish_build(fmu, doc, len(itf.vars), t0, validate)
