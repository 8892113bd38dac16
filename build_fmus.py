#!/usr/bin/env python3
"""Build FMI 2.0 co-simulation FMUs of the mechanisms in models/ (and the PD controller).

    python build_fmus.py                       # every model, into dist/
    python build_fmus.py --model five_axis     # a selection (or: python build_fmus.py five_axis crane)
    python build_fmus.py --out /tmp/fmus --no-controller --no-cross-check

The same as ``fmu-mb build`` (``python -m fmu_mb build``; fmu_mb.cli), with the same options;
``--help`` lists them. Each FMU is validated with FMPy (schema and consistency); a Markdown
table of its interface is written next to it (<model>.md). Both FMU kinds carry one binary: the
FMU core (fmu_mb/fmi/c) linked with the kernel library compiled ahead of time for the target
(fmu_mb.native; compiled once per core version: about 100 s on a 2-core machine), so they start without numba compiling
or loading anything; a pythonfmu FMU's binary also runs the model file's Python.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fmu_mb.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["build", *sys.argv[1:]]))
