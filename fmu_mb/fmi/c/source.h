/* Where a mechanism's compiled arrays come from: the option combinations a native FMU carries in
 * resources/variants.arrays (variants.c), or the model file's Python, which builds them for any parameter
 * values (python.c: a Python FMU, pythonfmu's wrapper running its slave). Either gives the records of
 * fmu_mb.fmi.variants.variant_records for the model options in force. */
#ifndef FMU_MB_SOURCE_H
#define FMU_MB_SOURCE_H
#include "arrays.h"
#include "core.h"

/* Per-instance data of the source (python.c starts the model file's Python here); 0: refused, logged. */
int source_open(Instance *s, void **source);
void source_close(Instance *s, void *source);
/* The compiled arrays for the current (checked) parameter values, a token naming this build (what
 * source_table needs of it) and a description for the debug log; NULL: refused, every reason logged. */
fmu_mb_arrays *source_build(Instance *s, void *source, int64_t *token, char *what, size_t len);
/* Rows of trajectory table function `fn` of build `token` for the parameter vector v (time and par zeroed
 * first); 0 and why (the trajectory's own words) when the values are refused. */
int source_table(Instance *s, void *source, int64_t token, int64_t fn, const double *v, int64_t nv, double *time,
                 double *par, int64_t nseg, int64_t width, char *why, size_t len);
#endif
