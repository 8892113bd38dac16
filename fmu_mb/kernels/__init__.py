"""numba kernels: free functions ``f(model, data, ...)`` on the flat arrays of
:mod:`fmu_mb.model.compiled`. One algorithm per module; nothing allocates."""
