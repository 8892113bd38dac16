"""fmu_mb: multibody mechanisms as FMI units (2.0 and 3.0, co-simulation and Model Exchange), with a numba-jitted core.

Layers (one-way): ``fmu_mb.model`` (descriptions → compiled arrays) →
``fmu_mb.kernels`` (jitted algorithms) → ``fmu_mb.simulator`` → ``fmu_mb.fmi``.
"""
__version__ = "0.1.0"
