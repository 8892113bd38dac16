/* Reader of fmu_mb's arrays file: see arrays.h and fmu_mb/native/arrays.py. Portable C99
 * (Linux, Windows): stdio and malloc only. Little-endian hosts (x86-64, AArch64). */
#include "arrays.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_i64(FILE *f, int64_t *v) { return fread(v, 8, 1, f) == 1; }

void fmu_mb_arrays_free(fmu_mb_arrays *a) {
    if (!a) return;
    for (int64_t i = 0; i < a->n; i++) free(a->records[i].values);
    free(a->records);
    free(a);
}

/* Header size: magic, version, digest, N, A, V (fmu_mb/native/arrays.py). */
#define HEADER (8 + 8 + 64 + 3 * 8)
#define ENTRY 64
/* Most values in one record (2 GiB of float64): larger is a damaged file. */
#define MAX_COUNT ((int64_t)1 << 28)

static int seek_read(FILE *f, int64_t offset, void *out, size_t size) {
    if (offset < 0 || offset > 0x7fffffffLL || fseek(f, (long)offset, SEEK_SET) != 0) return 0;
    return fread(out, 1, size, f) == size;
}

fmu_mb_arrays *fmu_mb_arrays_load(const char *path, int64_t variant, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    char magic[8];
    int64_t version, n_names, n_arrays, n_variants, size, *row = NULL;
    char *names = NULL;
    fmu_mb_arrays *a = NULL;
    if (!f) {
        snprintf(err, errlen, "cannot open %s", path);
        return NULL;
    }
    a = (fmu_mb_arrays *)calloc(1, sizeof *a);
    if (!a) goto oom;
    if (fseek(f, 0, SEEK_END) != 0 || (size = (int64_t)ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot read %s", path);
        goto fail;
    }
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "FMUMBARR", 8) != 0) {
        snprintf(err, errlen, "%s is not an fmu_mb arrays file", path);
        goto fail;
    }
    if (!read_i64(f, &version) || version != 2) {
        snprintf(err, errlen, "%s: unknown arrays file version", path);
        goto fail;
    }
    if (fread(a->digest, 1, 64, f) != 64 || !read_i64(f, &n_names) || !read_i64(f, &n_arrays) ||
        !read_i64(f, &n_variants) || n_names < 0 || n_names > 100000 || n_arrays < 0 || n_arrays > size / ENTRY ||
        n_variants < 1 || n_variants > size / 8 ||
        HEADER + n_names * 64 + n_arrays * ENTRY + n_variants * n_names * 8 > size) {
        snprintf(err, errlen, "%s: truncated header", path);
        goto fail;
    }
    a->digest[64] = '\0';
    if (variant < 0 || variant >= n_variants) {
        snprintf(err, errlen, "%s holds %lld variants, not variant %lld", path, (long long)n_variants,
                 (long long)variant);
        goto fail;
    }
    names = (char *)malloc((size_t)(n_names ? n_names : 1) * 64);
    row = (int64_t *)malloc((size_t)(n_names ? n_names : 1) * 8);
    a->records = (fmu_mb_record *)calloc((size_t)(n_names ? n_names : 1), sizeof(fmu_mb_record));
    if (!names || !row || !a->records) goto oom;
    if (fread(names, 64, (size_t)n_names, f) != (size_t)n_names ||
        !seek_read(f, HEADER + n_names * 64 + n_arrays * ENTRY + variant * n_names * 8, row, (size_t)n_names * 8))
        goto truncated;
    for (int64_t i = 0; i < n_names; i++) {
        int64_t e[8];
        if (row[i] < 0) continue;
        fmu_mb_record *r = &a->records[a->n++];
        memcpy(r->name, names + 64 * i, 64);
        r->name[63] = '\0';
        if (row[i] >= n_arrays || !seek_read(f, HEADER + n_names * 64 + row[i] * ENTRY, e, sizeof e)) goto truncated;
        r->kind = e[0];
        r->ndim = e[1];
        r->count = 1;
        if (r->kind == 2) {
            r->values = malloc(8);
            if (!r->values) goto oom;
            *(int64_t *)r->values = e[6];
            continue;
        }
        if (r->kind < 0 || r->kind > 4 || r->ndim < 0 || r->ndim > 4) {
            snprintf(err, errlen, "%s: record %s has kind %lld, ndim %lld", path, r->name, (long long)r->kind,
                     (long long)r->ndim);
            goto fail;
        }
        for (int64_t k = 0; k < r->ndim; k++) {
            r->shape[k] = e[2 + k];
            if (r->shape[k] < 0 || r->shape[k] > MAX_COUNT || r->count * r->shape[k] > MAX_COUNT) goto truncated;
            r->count *= r->shape[k];
        }
        if (r->kind >= 3) {                          /* all zeros: no payload */
            r->kind -= 3;
            r->values = calloc((size_t)(r->count ? r->count : 1), 8);
            if (!r->values) goto oom;
            continue;
        }
        r->values = malloc((size_t)(r->count ? r->count : 1) * 8);
        if (!r->values) goto oom;
        if (e[6] < 0 || e[6] + 8 * r->count > size || !seek_read(f, e[6], r->values, (size_t)r->count * 8))
            goto truncated;
    }
    free(names);
    free(row);
    fclose(f);
    return a;
truncated:
    snprintf(err, errlen, "%s: truncated record", path);
    goto fail;
oom:
    snprintf(err, errlen, "out of memory reading %s", path);
fail:
    free(names);
    free(row);
    fclose(f);
    fmu_mb_arrays_free(a);
    return NULL;
}

fmu_mb_record *fmu_mb_arrays_find(fmu_mb_arrays *a, const char *name) {
    for (int64_t i = 0; i < a->n; i++)
        if (strcmp(a->records[i].name, name) == 0) return &a->records[i];
    return NULL;
}

int64_t *fmu_mb_arrays_block(fmu_mb_arrays *a, const char *prefix, int64_t *n) {
    size_t lp = strlen(prefix);
    int64_t len = 0, k = 0;
    int64_t *block;
    for (int64_t i = 0; i < a->n; i++)
        if (strncmp(a->records[i].name, prefix, lp) == 0)
            len += a->records[i].kind == 2 ? 1 : 1 + a->records[i].ndim;
    block = (int64_t *)malloc((size_t)(len ? len : 1) * 8);
    if (!block) return NULL;
    for (int64_t i = 0; i < a->n; i++) {
        fmu_mb_record *r = &a->records[i];
        if (strncmp(r->name, prefix, lp) != 0) continue;
        if (r->kind == 2) {
            block[k++] = *(int64_t *)r->values;
            continue;
        }
        block[k++] = (int64_t)(intptr_t)r->values;
        for (int64_t d = 0; d < r->ndim; d++) block[k++] = r->shape[d];
    }
    *n = len;
    return block;
}
