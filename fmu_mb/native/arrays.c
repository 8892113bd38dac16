/* Reader of fmu_mb's arrays file: see arrays.h and fmu_mb/native/arrays.py. Portable C99
 * (Linux, Windows): stdio and malloc only. Little-endian hosts (x86-64, AArch64). */
#include "arrays.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fmu_mb_arrays_free(fmu_mb_arrays *a) {
    if (!a) return;
    for (int64_t i = 0; i < a->n; i++) free(a->records[i].values);
    free(a->records);
    free(a);
}

#define HEADER FMU_MB_ARRAYS_HEADER         /* magic, version, digest, N, A, V (fmu_mb/native/arrays.py) */
#define ENTRY FMU_MB_ARRAYS_ENTRY
#define NAME FMU_MB_ARRAYS_NAME_BYTES
#define VALUE (2 + FMU_MB_ARRAYS_MAX_NDIM)         /* the value field of an entry */
/* Most values in one record (2 GiB of float64): larger is a damaged file. */
#define MAX_COUNT ((int64_t)1 << 28)

/* Where the bytes come from: a file or a buffer. */
typedef struct {
    FILE *f;
    const unsigned char *mem;
    int64_t size;
    const char *label;           /* for messages: the path, or "the arrays built in Python" */
} Source;

static int seek_read(Source *src, int64_t offset, void *out, size_t size) {
    if (offset < 0 || (int64_t)size < 0 || offset + (int64_t)size > src->size) return 0;
    if (src->mem) {
        memcpy(out, src->mem + offset, size);
        return 1;
    }
    if (offset > 0x7fffffffLL || fseek(src->f, (long)offset, SEEK_SET) != 0) return 0;
    return fread(out, 1, size, src->f) == size;
}

static fmu_mb_arrays *read_arrays(Source *src, int64_t variant, char *err, size_t errlen) {
    const char *path = src->label;
    char magic[8];
    int64_t head[5], version, n_names, n_arrays, n_variants, size = src->size, *row = NULL;
    char *names = NULL;
    fmu_mb_arrays *a = (fmu_mb_arrays *)calloc(1, sizeof *a);
    if (!a) goto oom;
    if (!seek_read(src, 0, magic, 8) || memcmp(magic, FMU_MB_ARRAYS_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s is not an fmu_mb arrays file", path);
        goto fail;
    }
    if (!seek_read(src, 8, &version, 8) || version != FMU_MB_ARRAYS_VERSION) {
        snprintf(err, errlen, "%s: unknown arrays file version", path);
        goto fail;
    }
    if (!seek_read(src, 16, a->digest, NAME) || !seek_read(src, 16 + NAME, head, 24)) {
        snprintf(err, errlen, "%s: truncated header", path);
        goto fail;
    }
    n_names = head[0];
    n_arrays = head[1];
    n_variants = head[2];
    if (n_names < 0 || n_names > 100000 || n_arrays < 0 || n_arrays > size / ENTRY || n_variants < 1 ||
        n_variants > size / 8 || HEADER + n_names * NAME + n_arrays * ENTRY + n_variants * n_names * 8 > size) {
        snprintf(err, errlen, "%s: truncated header", path);
        goto fail;
    }
    a->digest[NAME] = '\0';
    if (variant < 0 || variant >= n_variants) {
        snprintf(err, errlen, "%s holds %lld variants, not variant %lld", path, (long long)n_variants,
                 (long long)variant);
        goto fail;
    }
    names = (char *)malloc((size_t)(n_names ? n_names : 1) * NAME);
    row = (int64_t *)malloc((size_t)(n_names ? n_names : 1) * 8);
    a->records = (fmu_mb_record *)calloc((size_t)(n_names ? n_names : 1), sizeof(fmu_mb_record));
    if (!names || !row || !a->records) goto oom;
    if (!seek_read(src, HEADER, names, (size_t)n_names * NAME) ||
        !seek_read(src, HEADER + n_names * NAME + n_arrays * ENTRY + variant * n_names * 8, row, (size_t)n_names * 8))
        goto truncated;
    for (int64_t i = 0; i < n_names; i++) {
        int64_t e[ENTRY / 8];        /* kind, ndim, shape[MAX_NDIM], value, reserved */
        if (row[i] < 0) continue;
        fmu_mb_record *r = &a->records[a->n++];
        memcpy(r->name, names + NAME * i, NAME);
        r->name[NAME - 1] = '\0';
        if (row[i] >= n_arrays || !seek_read(src, HEADER + n_names * NAME + row[i] * ENTRY, e, sizeof e)) goto truncated;
        r->kind = e[0];
        r->ndim = e[1];
        r->count = 1;
        if (r->kind == FMU_MB_ARRAYS_SCALAR) {
            r->values = malloc(8);
            if (!r->values) goto oom;
            *(int64_t *)r->values = e[VALUE];
            continue;
        }
        if (r->kind < 0 || r->kind > FMU_MB_ARRAYS_ZEROS + FMU_MB_ARRAYS_INT64 || r->ndim < 0 ||
            r->ndim > FMU_MB_ARRAYS_MAX_NDIM) {
            snprintf(err, errlen, "%s: record %s has kind %lld, ndim %lld", path, r->name, (long long)r->kind,
                     (long long)r->ndim);
            goto fail;
        }
        for (int64_t k = 0; k < r->ndim; k++) {
            r->shape[k] = e[2 + k];
            if (r->shape[k] < 0 || r->shape[k] > MAX_COUNT || r->count * r->shape[k] > MAX_COUNT) goto truncated;
            r->count *= r->shape[k];
        }
        if (r->kind >= FMU_MB_ARRAYS_ZEROS) {        /* all zeros: no payload */
            r->kind -= FMU_MB_ARRAYS_ZEROS;
            r->values = calloc((size_t)(r->count ? r->count : 1), 8);
            if (!r->values) goto oom;
            continue;
        }
        r->values = malloc((size_t)(r->count ? r->count : 1) * 8);
        if (!r->values) goto oom;
        if (e[VALUE] < 0 || e[VALUE] + 8 * r->count > size || !seek_read(src, e[VALUE], r->values, (size_t)r->count * 8))
            goto truncated;
    }
    free(names);
    free(row);
    return a;
truncated:
    snprintf(err, errlen, "%s: truncated record", path);
    goto fail;
oom:
    snprintf(err, errlen, "out of memory reading %s", path);
fail:
    free(names);
    free(row);
    fmu_mb_arrays_free(a);
    return NULL;
}

fmu_mb_arrays *fmu_mb_arrays_load(const char *path, int64_t variant, char *err, size_t errlen) {
    Source src = {fopen(path, "rb"), NULL, 0, path};
    if (!src.f) {
        snprintf(err, errlen, "cannot open %s", path);
        return NULL;
    }
    if (fseek(src.f, 0, SEEK_END) != 0 || (src.size = (int64_t)ftell(src.f)) < 0) {
        snprintf(err, errlen, "cannot read %s", path);
        fclose(src.f);
        return NULL;
    }
    fmu_mb_arrays *a = read_arrays(&src, variant, err, errlen);
    fclose(src.f);
    return a;
}

fmu_mb_arrays *fmu_mb_arrays_parse(const unsigned char *bytes, size_t size, int64_t variant, char *err,
                                   size_t errlen) {
    Source src = {NULL, bytes, (int64_t)size, "the arrays built in Python"};
    if (!bytes) {
        snprintf(err, errlen, "no arrays given");
        return NULL;
    }
    return read_arrays(&src, variant, err, errlen);
}

fmu_mb_record *fmu_mb_arrays_find(fmu_mb_arrays *a, const char *name) {
    for (int64_t i = 0; i < a->n; i++)
        if (strcmp(a->records[i].name, name) == 0) return &a->records[i];
    return NULL;
}

int64_t *fmu_mb_arrays_block(fmu_mb_arrays *a, const char *prefix, int64_t *n) {
    size_t lp = strlen(prefix);
    int64_t len = FMU_MB_BLOCK_HEADER, k = FMU_MB_BLOCK_HEADER;
    int64_t *block;
    for (int64_t i = 0; i < a->n; i++)
        if (strncmp(a->records[i].name, prefix, lp) == 0)
            len += a->records[i].kind == FMU_MB_ARRAYS_SCALAR ? 1 : 1 + a->records[i].ndim;
    block = (int64_t *)calloc((size_t)len, 8);     /* (the header word 0: no struct kept yet) */
    if (!block) return NULL;
    for (int64_t i = 0; i < a->n; i++) {
        fmu_mb_record *r = &a->records[i];
        if (strncmp(r->name, prefix, lp) != 0) continue;
        if (r->kind == FMU_MB_ARRAYS_SCALAR) {
            block[k++] = *(int64_t *)r->values;
            continue;
        }
        block[k++] = (int64_t)(intptr_t)r->values;
        for (int64_t d = 0; d < r->ndim; d++) block[k++] = r->shape[d];
    }
    *n = len;
    return block;
}

int64_t *fmu_mb_arrays_complex_block(fmu_mb_arrays *a, const char *prefix, const char *complex_fields, void **arena,
                                     int64_t *n) {
    size_t lp = strlen(prefix), bytes = 16, nf = strlen(complex_fields);
    int64_t len = FMU_MB_BLOCK_HEADER, k = FMU_MB_BLOCK_HEADER, f = 0;
    for (int64_t i = 0; i < a->n; i++) {
        fmu_mb_record *r = &a->records[i];
        if (strncmp(r->name, prefix, lp) != 0) continue;
        len += r->kind == FMU_MB_ARRAYS_SCALAR ? 1 : 1 + r->ndim;
        if (r->kind != FMU_MB_ARRAYS_SCALAR) bytes += (size_t)r->count * 16 + 16;
    }
    int64_t *block = (int64_t *)calloc((size_t)len, 8);
    unsigned char *mem = (unsigned char *)calloc(bytes, 1);
    if (!block || !mem) {
        free(block);
        free(mem);
        return NULL;
    }
    size_t at = 0;
    for (int64_t i = 0; i < a->n; i++) {
        fmu_mb_record *r = &a->records[i];
        if (strncmp(r->name, prefix, lp) != 0) continue;
        int cplx = (size_t)f < nf && complex_fields[f] == '1';
        ++f;
        if (r->kind == FMU_MB_ARRAYS_SCALAR) {
            block[k++] = *(int64_t *)r->values;
            continue;
        }
        if ((size_t)f > nf || (cplx && r->kind != FMU_MB_ARRAYS_FLOAT64)) {     /* not this library's schema */
            free(block);
            free(mem);
            return NULL;
        }
        at = (at + 15) & ~(size_t)15;
        double *dst = (double *)(mem + at);
        if (cplx)                                         /* the values as real parts, imaginary parts 0 */
            for (int64_t j = 0; j < r->count; j++) dst[2 * j] = ((const double *)r->values)[j];
        else if (r->count)
            memcpy(dst, r->values, (size_t)r->count * 8);
        at += (size_t)r->count * (cplx ? 16 : 8);
        block[k++] = (int64_t)(intptr_t)dst;
        for (int64_t d = 0; d < r->ndim; d++) block[k++] = r->shape[d];
    }
    if ((size_t)f != nf) {
        free(block);
        free(mem);
        return NULL;
    }
    *arena = mem;
    *n = len;
    return block;
}
