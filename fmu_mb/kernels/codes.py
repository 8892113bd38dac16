"""Output codes of the spec table that kernels.outputs fills (meaning of each in its
docstring). Plain integers, importable without numba (the FMU slave builds its table
from them before any kernel runs)."""
(Q, QD, F, M, FN, FL, TF, SUP, PT, DEF, EK, EP, ED, EW, IT, FF,
 TRQ, LAM, CF, CMO, CV, CVA, UQJ, UQC, RANK, RED, REP, EC) = range(28)
