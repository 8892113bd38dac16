/* What the FMI API files (fmi2_cs.c, fmi2_me.c) share: the component check and the state table's guard. */
#ifndef FMU_MB_API_H
#define FMU_MB_API_H
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
#endif
