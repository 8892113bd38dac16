"""fmu_mb: multibody mechanisms as FMI 2.0 co-simulation units, with a numba-jitted core.

Layers (one-way): ``fmu_mb.model`` (descriptions → compiled arrays) →
``fmu_mb.kernels`` (jitted algorithms) → ``fmu_mb.simulator`` → ``fmu_mb.fmi``.
"""
__version__ = "0.1.0"
