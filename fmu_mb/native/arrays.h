/* Reader of fmu_mb's arrays file (fmu_mb/native/arrays.py documents the layout): the compiled
 * arrays of a mechanism, and the int64 address blocks the kernel library takes, without Python. */
#ifndef FMU_MB_ARRAYS_H
#define FMU_MB_ARRAYS_H
#include <stddef.h>
#include <stdint.h>

#include "fmu_mb_constants.h"   /* the layout's numbers, from fmu_mb.native.arrays (fmu_mb.fmi.constants) */

typedef struct {
    char name[FMU_MB_ARRAYS_NAME_BYTES];
    int64_t kind;        /* FMU_MB_ARRAYS_FLOAT64 / _INT64 array, _SCALAR int64 (the file's zero arrays as arrays) */
    int64_t ndim;
    int64_t shape[FMU_MB_ARRAYS_MAX_NDIM];
    int64_t count;       /* number of values */
    void *values;        /* 8-byte aligned; the scalar's value for kind 2 */
} fmu_mb_record;

typedef struct {
    char digest[FMU_MB_ARRAYS_NAME_BYTES + 1];
    int64_t n;
    fmu_mb_record *records;
} fmu_mb_arrays;

/* Load variant number `variant` of a file (0 for a file of one); NULL on failure with a message in err
 * (errlen bytes). Every record gets its own copy of its values (the caller may write them). */
fmu_mb_arrays *fmu_mb_arrays_load(const char *path, int64_t variant, char *err, size_t errlen);
/* The same from the bytes of such a file (a Python FMU's arrays, built at run time; the bytes are copied). */
fmu_mb_arrays *fmu_mb_arrays_parse(const unsigned char *bytes, size_t size, int64_t variant, char *err,
                                   size_t errlen);
/* The record called name, or NULL. */
fmu_mb_record *fmu_mb_arrays_find(fmu_mb_arrays *a, const char *name);
/* The address block of the consecutive records whose names start with prefix ("model.", "data."): a header word
 * (0: the kernels keep the block's struct there on its first use), then per record its address and shape, a scalar
 * its value. malloc'ed: release it (the kernel library's fmu_mb_release_block), then free it; *n its length. */
int64_t *fmu_mb_arrays_block(fmu_mb_arrays *a, const char *prefix, int64_t *n);
/* The same block over copies of the records (a complex-step Data: the fields flagged '1' in complex_fields, one
 * character per record in order, as complex128 with the values as real parts; the others copied as they are), in
 * one allocation returned in *arena (free it and the block); NULL if the records do not fit the flags. */
int64_t *fmu_mb_arrays_complex_block(fmu_mb_arrays *a, const char *prefix, const char *complex_fields, void **arena,
                                     int64_t *n);
void fmu_mb_arrays_free(fmu_mb_arrays *a);
#endif
