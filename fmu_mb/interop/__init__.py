"""Exchange with other multibody engines (tooling: no FMU carries it).

:mod:`fmu_mb.interop.pinocchio` builds the Pinocchio model of a mechanism description, the
reference the test suite and the benchmarks compare fmu_mb against; it needs the ``pin``
package (``pip install fmu_mb[test]``)."""
