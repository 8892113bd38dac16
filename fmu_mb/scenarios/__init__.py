"""Reproductions of the papers' simulation runs: ``python -m fmu_mb.scenarios <name>``."""
SCENARIOS = ("five_axis",)
