"""Reproductions of the papers' simulation runs: ``python -m fmu_mb.scenarios <name>``."""
SCENARIOS = ("five_axis", "three_loop", "crane", "manipulator", "rpsup", "mobile_robot")
