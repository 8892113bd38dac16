"""``python -m fmu_mb ...``: the ``fmu-mb`` command line (fmu_mb.cli)."""
import sys

from fmu_mb.cli import main

if __name__ == "__main__":
    sys.exit(main())
