/* The run source of a native FMU (source.h): the option combinations it carries in resources/variants.arrays
 * (fmu_mb.fmi.native_fmu; combinations with the same mechanism share a variant, fmu_mb.native.arrays).
 *
 * The model options select a combination: a Choice/Flag at any of its values, a Count/Value at a value it
 * was built at (the variant rows), or, for a Value whose arrays are affine in it (fmu_mb.fmi.native_values),
 * at any value: its slope records move every array. Trajectory tables of TableTrajectory classes come from
 * their compiled table functions (the model table's FMU_MB_TABLE_FN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

int source_open(Instance *s, void **source) {
    /* the first combination must load: a damaged FMU fails at fmi2Instantiate, not at the first step */
    char path[4200], err[512];
    snprintf(path, sizeof path, "%svariants.arrays", s->resources);
    fmu_mb_arrays *a = fmu_mb_arrays_load(path, FMU_MB_VARIANT_FILE[0], err, sizeof err);
    if (!a) {
        FMU_ERROR(s, MSG_VARIANTS_UNREADABLE, err);
        return 0;
    }
    fmu_mb_arrays_free(a);
    *source = NULL;
    return 1;
}

void source_close(Instance *s, void *source) {
    (void)s;
    (void)source;
}

/* Whether option o was built at value x. */
static int carried_value(int o, double x) {
    for (int k = 0; k < FMU_MB_NVARIANTS; ++k)
        if (FMU_MB_VARIANT_OPTIONS[k * FMU_MB_NOPTIONS + o] == x) return 1;
    return 0;
}

/* "1, 2, 5": the values option o was built at, in the order of the variants (truncated to fit). */
static void carried_values(int o, int integer, char *out, size_t size) {
    size_t len = 0;
    out[0] = 0;
    for (int k = 0; k < FMU_MB_NVARIANTS; ++k) {
        double x = FMU_MB_VARIANT_OPTIONS[k * FMU_MB_NOPTIONS + o];
        int seen = 0;
        for (int j = 0; j < k && !seen; ++j) seen = FMU_MB_VARIANT_OPTIONS[j * FMU_MB_NOPTIONS + o] == x;
        if (seen) continue;
        char item[32];
        if (integer) snprintf(item, sizeof item, "%.0f", x);
        else fmu_repr(x, item);
        int n = snprintf(out + len, size - len, "%s%s", len ? ", " : "", item);
        if (n < 0 || (size_t)n >= size - len) {        /* no room: end with an ellipsis */
            if (size > 4) strcpy(out + (len < size - 4 ? len : size - 4), "...");
            return;
        }
        len += (size_t)n;
    }
}

static const char *option_text(const fmu_mb_var *v, double x, char *buf) {
    if (v->type == FMU_MB_TYPE_INTEGER) snprintf(buf, 32, "%.0f", x);
    else fmu_repr(x, buf);
    return buf;
}

/* The option combination the option parameters select, or -1 (logged). */
static int select_variant(Instance *s) {
    double want[FMU_MB_MAX_OPTIONS];
    int n = 0;
    char buf[32], buf2[32], unit[64], list[256];
    for (int i = 0, o = 0; i < FMU_MB_NVARS && n < FMU_MB_MAX_OPTIONS; ++i) {
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->role != FMU_MB_ROLE_OPTION) continue;
        want[n++] = s->values[i];
        int values = FMU_MB_OPTION_VALUES[o++];
        if (values == FMU_MB_OPTION_CARRIED && !carried_value(o - 1, want[o - 1])) {
            carried_values(o - 1, v->type == FMU_MB_TYPE_INTEGER, list, sizeof list);
            option_text(v, want[o - 1], buf);
            FMU_ERROR(s, MSG_OPTION_NOT_CARRIED, v->name, buf, v->name, list, fmu_unit_suffix(v, unit), v->name + 6, buf);
            return -1;
        }
        if (values == FMU_MB_OPTION_BUILT && want[o - 1] != v->start) {
            option_text(v, want[o - 1], buf);
            option_text(v, v->start, buf2);
            FMU_ERROR(s, MSG_OPTION_NOT_BUILT, v->name, buf, v->name, buf2, fmu_unit_suffix(v, unit), v->name + 6, buf);
            return -1;
        }
    }
    for (int k = 0; k < FMU_MB_NVARIANTS; ++k) {
        int ok = 1;
        for (int o = 0; o < n && ok; ++o)
            ok = FMU_MB_OPTION_VALUES[o] == FMU_MB_OPTION_LINEAR || FMU_MB_VARIANT_OPTIONS[k * FMU_MB_NOPTIONS + o] == want[o];
        if (ok) return k;
    }
    FMU_ERROR(s, MSG_COMBINATION_NOT_CARRIED, FMU_MB_NVARIANTS);
    return -1;
}

/* Value options taken at run time: every record of the combination's arrays moves by Δᵢ·slope.<i>.<record> +
 * Δᵢ·Δⱼ·cross.<i>.<j>.<record>, Δ = value − built value (fmu_mb.fmi.native_values). */
static int apply_value_options(Instance *s, fmu_mb_arrays *a, int variant) {
    double dv[FMU_MB_MAX_OPTIONS];
    int n = 0;
    for (int i = 0; i < FMU_MB_NVARS && n < FMU_MB_MAX_OPTIONS; ++i)
        if (FMU_MB_VARS[i].role == FMU_MB_ROLE_OPTION) dv[n++] = s->values[i] - FMU_MB_VARS[i].start;
    for (int64_t k = 0; k < a->n; ++k) {
        fmu_mb_record *rec = &a->records[k];
        int i = -1, j = -1, used = 0;
        double w;
        if (sscanf(rec->name, "slope.%d.%n", &i, &used) == 1 && used > 0 && i >= 0 && i < n)
            w = dv[i];
        else if (sscanf(rec->name, "cross.%d.%d.%n", &i, &j, &used) == 2 && used > 0 && i >= 0 && i < n && j >= 0 &&
                 j < n)
            w = dv[i] * dv[j];
        else
            continue;
        fmu_mb_record *t = fmu_mb_arrays_find(a, rec->name + used);
        if (!t || t->kind != FMU_MB_ARRAYS_FLOAT64 || rec->kind != FMU_MB_ARRAYS_FLOAT64 || t->count != rec->count) {
            FMU_ERROR(s, MSG_VARIANT_SLOPES_DAMAGED, variant, rec->name, rec->name + used);
            return 0;
        }
        if (w == 0.0) continue;
        double *x = (double *)t->values;
        const double *d = (const double *)rec->values;
        for (int64_t m = 0; m < t->count; ++m) x[m] += w * d[m];
    }
    return 1;
}

fmu_mb_arrays *source_build(Instance *s, void *source, int64_t *token, char *what, size_t len) {
    (void)source;
    int k = select_variant(s);
    if (k < 0) return NULL;
    char path[4200], err[512];
    snprintf(path, sizeof path, "%svariants.arrays", s->resources);
    fmu_mb_arrays *a = fmu_mb_arrays_load(path, FMU_MB_VARIANT_FILE[k], err, sizeof err);
    if (!a) {
        FMU_ERROR(s, MSG_VARIANT_UNREADABLE, err);
        return NULL;
    }
    if (!apply_value_options(s, a, k)) {
        fmu_mb_arrays_free(a);
        return NULL;
    }
    snprintf(what, len, MSG_VARIANT_BUILT, k, FMU_MB_VARIANT_TEXT[k]);
    *token = k;
    return a;
}

int source_table(Instance *s, void *source, int64_t token, int64_t fn, const double *v, int64_t nv, double *time,
                 double *par, int64_t nseg, int64_t width, char *why, size_t len) {
    (void)s;
    (void)source;
    (void)token;
    (void)nv;
    if (fn < 0 || fn >= FMU_MB_NTABLES || FMU_MB_TABLE_NPARAMS[fn] > FMU_MB_TABLE_MAX_PARAMS) {
        snprintf(why, len, MSG_TABLE_MISSING, (int)fn);
        return 0;
    }
    int64_t code = 0;
    void *exc = NULL;
    int32_t st = FMU_MB_TABLE_FN[fn](&code, &exc, v, FMU_MB_TABLE_NPARAMS[fn], time, par, nseg, width);
    if (st == 0 && code == 0) return 1;
    if (st != 0) snprintf(why, len, MSG_TABLE_FAILED, (int)st);
    else if (code > 0 && code <= FMU_MB_TABLE_NCHECKS[fn]) snprintf(why, len, "%s", FMU_MB_TABLE_CHECKS[fn][code - 1]);
    else snprintf(why, len, MSG_TABLE_CHECK_FAILED, (int)code);
    return 0;
}
