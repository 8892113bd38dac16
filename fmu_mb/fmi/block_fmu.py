"""The build of a signal block's FMU: an FMU core model without a mechanism (fmu_mb.fmi.binary.BLOCKS: the PD
controller, fmu_mb.fmi.controller; the excitation, fmu_mb.fmi.excitation) as a native FMI 2.0 co-simulation FMU
with no Python on the host."""
from __future__ import annotations

import os
import tempfile
import time
import zipfile
from pathlib import Path


def build_block_fmu(itf, model: str, description: str, out_dir="dist", targets=None, validate: bool = True):
    """Build ``<out_dir>/<itf.model>.fmu`` from the interface table ``itf`` and the core model ``model``
    (c/<model>.c) for ``targets`` (default: linux64, and win64 where mingw-w64 is installed); its BuildResult."""
    from ..native.library import TARGETS
    from .binary import link
    from .builder import VERSION, finish_build
    from .description import fmu_guid, interface_markdown, model_description
    from .interface import INTERFACE_FILE
    from .model_table import model_table_source
    from .native_fmu import FOLDERS, available_targets, check_targets

    t0 = time.perf_counter()
    targets = check_targets(targets or available_targets())
    name = itf.model
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"fmu_mb_{model}_") as tmp:
        tmp = Path(tmp)
        table = tmp / "model_table.c"
        table.write_text(model_table_source(itf, fmu_guid(itf), INTERFACE_FILE))
        binaries = {t: link(t, table, tmp / f"{name}.{TARGETS[t][2].rsplit('.', 1)[1]}", model, None)
                    for t in targets}
        xml = model_description(itf, description=description, version=VERSION, tool=f"fmu_mb {VERSION} (native)",
                                stop_time=10.0, comm_step=1e-3,
                                output_derivatives=False)
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
