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

fmu_mb_arrays *fmu_mb_arrays_load(const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    char magic[8];
    int64_t version, n;
    fmu_mb_arrays *a = NULL;
    if (!f) {
        snprintf(err, errlen, "cannot open %s", path);
        return NULL;
    }
    a = (fmu_mb_arrays *)calloc(1, sizeof *a);
    if (!a) goto oom;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "FMUMBARR", 8) != 0) {
        snprintf(err, errlen, "%s is not an fmu_mb arrays file", path);
        goto fail;
    }
    if (!read_i64(f, &version) || version != 1) {
        snprintf(err, errlen, "%s: unknown arrays file version", path);
        goto fail;
    }
    if (fread(a->digest, 1, 64, f) != 64 || !read_i64(f, &n) || n < 0 || n > 100000) {
        snprintf(err, errlen, "%s: truncated header", path);
        goto fail;
    }
    a->digest[64] = '\0';
    a->records = (fmu_mb_record *)calloc((size_t)(n ? n : 1), sizeof(fmu_mb_record));
    if (!a->records) goto oom;
    a->n = n;
    for (int64_t i = 0; i < n; i++) {
        fmu_mb_record *r = &a->records[i];
        if (fread(r->name, 1, 64, f) != 64 || !read_i64(f, &r->kind) || !read_i64(f, &r->ndim)) goto truncated;
        r->name[63] = '\0';
        if (r->kind == 2) {
            r->count = 1;
        } else if ((r->kind == 0 || r->kind == 1) && r->ndim >= 0 && r->ndim <= 4) {
            r->count = 1;
            for (int64_t k = 0; k < r->ndim; k++) {
                if (!read_i64(f, &r->shape[k]) || r->shape[k] < 0 || r->shape[k] > (int64_t)1 << 32) goto truncated;
                r->count *= r->shape[k];
            }
        } else {
            snprintf(err, errlen, "%s: record %s has kind %lld, ndim %lld", path, r->name, (long long)r->kind,
                     (long long)r->ndim);
            goto fail;
        }
        r->values = malloc((size_t)(r->count ? r->count : 1) * 8);
        if (!r->values) goto oom;
        if ((int64_t)fread(r->values, 8, (size_t)r->count, f) != r->count) goto truncated;
    }
    fclose(f);
    return a;
truncated:
    snprintf(err, errlen, "%s: truncated record", path);
    goto fail;
oom:
    snprintf(err, errlen, "out of memory reading %s", path);
fail:
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
