/* What the FMI API files (fmi2_cs.c, fmi2_me.c) share: the component check and the state table's guard. */
#ifndef FMU_MB_API_H
#define FMU_MB_API_H
#include <string.h>

#include "core.h"

static inline Instance *instance_of(fmi2Component c) {
    Instance *s = (Instance *)c;
    return (s && s->magic == INSTANCE_MAGIC) ? s : NULL;
}

/* The instance of c, serving `name`, in a phase of the call `mask` allows (logged otherwise). */
#define BEGIN(name)                               \
    Instance *s = instance_of(c);                 \
    if (!s) return fmi2Error;                     \
    s->call = name
#define BEGIN_IN(name, mask)                                                              \
    BEGIN(name);                                                                          \
    if (!fmu_phase_allows(s, FMU_MB_MASK_##mask, FMU_MB_HINT_##mask)) return fmi2Error
/* The same for a Model Exchange function: refused first in a co-simulation instance. */
#define BEGIN_ME(name, mask)                                                              \
    BEGIN(name);                                                                          \
    if (!fmu_interface_is(s, 1) || !fmu_phase_allows(s, FMU_MB_MASK_##mask, FMU_MB_HINT_##mask)) return fmi2Error
#define STATUS(ok) ((ok) ? fmi2OK : fmi2Error)

/* A get/set call's arrays: at most FMU_MB_MAX_VALUES, and non-NULL when n > 0 (named as the API names them). */
static inline int api_arrays_ok(Instance *s, size_t n, const void *vr, const void *v, const char *vr_name,
                                const char *v_name) {
    if (n > FMU_MB_MAX_VALUES) {
        FMU_ERROR(s, MSG_TOO_MANY_VALUES, s->call, (double)n, FMU_MB_MAX_VALUES);
        return 0;
    }
    if (n && (!vr || !v)) {
        FMU_ERROR(s, MSG_NULL_ARRAY, s->call, !vr ? vr_name : v_name, (double)n);
        return 0;
    }
    return 1;
}

/* A Model Exchange array argument of n values: non-NULL when n > 0. */
static inline int api_counted(Instance *s, const void *array, size_t n, const char *name) {
    if (n && !array) {
        FMU_ERROR(s, MSG_ME_NULL_ARRAY, s->call, name, strcmp(name, "eventIndicators") ? "nx" : "ni", (double)n);
        return 0;
    }
    return 1;
}
#endif
