/* A plain C program stepping a mechanism with fmu_mb's native kernel library: no Python, no
 * environment. Usage: kernels_host LIBRARY ARRAYS ENTRY SCHEME N OUT
 *   LIBRARY  fmu_mb_kernels.so / .dll (fmu_mb.native.library)
 *   ARRAYS   arrays file (fmu_mb.native.arrays) with model.*, data.* and the records
 *            state.x, state.tau_drive, state.t, state.h (float64 arrays of one value for t, h)
 *   ENTRY    a step entry: advance_tree or advance_constrained (kernels.stepping)
 *   SCHEME   its integration scheme (fmu_mb.codes.Scheme)
 *   N        number of internal steps (one communication step of N h);  OUT  file receiving x after it
 * Exit status 0 on success; prints why otherwise. Built for Linux (gcc) and Windows (mingw-w64). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"

#include "dynload.h"

typedef int32_t (*advance_fn)(int64_t *, int64_t *, double *, int64_t, double, double *, int64_t, double, double,
                              int64_t, int64_t *);
typedef void (*release_fn)(int64_t *);

static fmu_mb_record *need(fmu_mb_arrays *a, const char *name) {
    fmu_mb_record *r = fmu_mb_arrays_find(a, name);
    if (!r || r->kind != FMU_MB_ARRAYS_FLOAT64) {
        fprintf(stderr, "arrays file has no float64 record %s\n", name);
        exit(3);
    }
    return r;
}

int main(int argc, char **argv) {
    char err[512], sym[128];
    if (argc != 7) {
        fprintf(stderr, "usage: %s LIBRARY ARRAYS ENTRY SCHEME N OUT\n", argv[0]);
        return 2;
    }
    void *lib = open_library(argv[1]);
    if (!lib) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 3;
    }
    snprintf(sym, sizeof sym, "fmu_mb_%s", argv[3]);
    advance_fn advance = (advance_fn)symbol(lib, sym);
    if (!advance) {
        fprintf(stderr, "%s exports no %s\n", argv[1], sym);
        return 3;
    }
    fmu_mb_arrays *a = fmu_mb_arrays_load(argv[2], 0, err, sizeof err);
    if (!a) {
        fprintf(stderr, "%s\n", err);
        return 3;
    }
    int64_t nm, nd, ok = 0;
    int64_t *mb = fmu_mb_arrays_block(a, "model.", &nm), *db = fmu_mb_arrays_block(a, "data.", &nd);
    fmu_mb_record *x = need(a, "state.x"), *tau = need(a, "state.tau_drive");
    double t = *(double *)need(a, "state.t")->values, h = *(double *)need(a, "state.h")->values;
    int64_t scheme = atoll(argv[4]), n = atoll(argv[5]);
    int32_t status = advance(mb, db, (double *)x->values, x->count, t, (double *)tau->values, tau->count, h,
                             (double)n * h, scheme, &ok);
    if (status != 0 || !ok) {
        fprintf(stderr, "%s returned status %d, ok %lld\n", sym, (int)status, (long long)ok);
        return 4;
    }
    FILE *out = fopen(argv[6], "wb");
    if (!out || fwrite(x->values, 8, (size_t)x->count, out) != (size_t)x->count) {
        fprintf(stderr, "cannot write %s\n", argv[6]);
        return 3;
    }
    fclose(out);
    printf("%s: %lld steps of %g s from t = %g, %lld states\n", sym, (long long)n, h, t, (long long)x->count);
    release_fn release = (release_fn)symbol(lib, "fmu_mb_release_block");
    if (release) {                                  /* the structs the kernels kept in the blocks */
        release(mb);
        release(db);
    }
    free(mb);
    free(db);
    fmu_mb_arrays_free(a);
    return 0;
}
