/*
 * The FMI 3.0 API of an fmu_mb mechanism FMU (co-simulation and Model Exchange): only the mapping of FMI 3.0
 * calls onto the core (core.h), the third API file over the same units as fmi2_cs.c and fmi2_me.c.
 *
 *  - Types: Real variables are Float64, Count options and other Integers Int32, named options Enumerations
 *    (read and set as Int64, as FMI 3.0 says), Booleans Boolean; `time` is the independent variable, value
 *    reference FMU_MB_NVARS (after every variable of the interface table, whose value references are FMI 2.0's).
 *  - Arrays (fmu_mb.fmi.arrays3; the model table's FMU_MB_FMI3_*): a vector quantity is one variable at its first
 *    element's value reference, its values the interface variables of its elements, row-major; the value
 *    references of its other elements are no FMI 3.0 variables (refused, naming the array).
 *  - Logging: the core's messages go to the host's fmi3LogMessageCallback through an FMI 2.0 logger (logger3)
 *    that says them in FMI 3.0's words (fmu_mb.fmi.constants.FMI3_WORDS); no logMessage: no messages, no crash.
 *  - The state table is FMI 2.0's (fmu_mb.fmi.constants.CALLS3); fmi3EnterInitializationMode takes what
 *    fmi2SetupExperiment did. No event mode in co-simulation (hasEventMode = false), no early return (the step is
 *    synchronous and atomic: it never returns early, whatever earlyReturnAllowed says), no intermediate update,
 *    no clocks: each refused with a message naming why; output derivatives of order 1 (maxOutputDerivativeOrder = 1).
 *  - Structural parameters: the Count options (Int32 options without named values: model.n_div, the number of
 *    rigid finite elements of a flexible link, changes the mechanism's bodies and coordinates) are set in
 *    configuration mode only (fmi3EnterConfigurationMode right after instantiation, fmi3ExitConfigurationMode),
 *    as FMI 3.0 says; the core takes them like any option when the mechanism is built (initialization).
 *  - FMU states are the FMI 2.0 FMU's (state.c): a state serialized by one restores into the other.
 * No physics, no model knowledge.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "fmi3/fmi3Functions.h"

/* ------------------------------------------------------------------------------------------------
 * The host's logger
 */
typedef struct {
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    int configuring;        /* in configuration mode (only the phase `instantiated` enters it) */
} Host3;

static const char *const WORDS[][2] = FMU_MB_FMI3_WORDS;

/* `text` with FMI 2.0's names of functions and arguments in FMI 3.0's words, into out (truncated to size). */
static void in_fmi3_words(const char *text, char *out, size_t size) {
    size_t o = 0;
    while (*text && o + 1 < size) {
        const char *from = NULL, *to = NULL;
        for (int k = 0; k < FMU_MB_N_FMI3_WORDS && !from; ++k)
            if (!strncmp(text, WORDS[k][0], strlen(WORDS[k][0]))) from = WORDS[k][0], to = WORDS[k][1];
        if (!from && !strncmp(text, "fmi2", 4)) from = "fmi2", to = "fmi3";
        if (from) {
            for (const char *p = to; *p && o + 1 < size; ++p) out[o++] = *p;
            text += strlen(from);
        } else {
            out[o++] = *text++;
        }
    }
    out[o] = '\0';
}

/* The FMI 2.0 logger the core calls (the text as the format, '%' doubled, no arguments). */
static void logger3(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                    fmi2String message, ...) {
    const Host3 *h = (const Host3 *)env;
    char text[8193], out[8400];
    (void)instance;
    if (!h || !h->log) return;
    va_list ap;
    va_start(ap, message);
    vsnprintf(text, sizeof text, message, ap);
    va_end(ap);
    in_fmi3_words(text, out, sizeof out);
    h->log(h->env, (fmi3Status)status, category, out);
}

/* The core's callbacks for a host's logMessage: `h` is the instance's (freed with it). */
static fmi2CallbackFunctions callbacks3(Host3 *h) {
    fmi2CallbackFunctions cb;
    memset(&cb, 0, sizeof cb);
    cb.logger = logger3;
    cb.componentEnvironment = h;
    return cb;
}

/* ------------------------------------------------------------------------------------------------
 * The component check and the state table (api.h's, returning FMI 3.0 statuses)
 */
#define BEGIN3(name)                                  \
    Instance *s = instance_of((fmi2Component)instance); \
    if (!s) return fmi3Error;                         \
    s->call = name
#define CONFIGURING(s) (((Host3 *)(s)->cb.componentEnvironment)->configuring)
/* A call other than setting and reading variables is refused in configuration mode. */
static int not_configuring(Instance *s) {
    if (!CONFIGURING(s)) return 1;
    FMU_ERROR(s, MSG_FMI3_CONFIGURING, s->call);
    return 0;
}
#define BEGIN3_IN(name, mask)                                                             \
    BEGIN3(name);                                                                         \
    if (!not_configuring(s) || !fmu_phase_allows(s, FMU_MB_MASK_##mask, FMU_MB_HINT_##mask)) return fmi3Error
#define BEGIN3_ME(name, mask)                                                                             \
    BEGIN3(name);                                                                                         \
    if (!not_configuring(s) || !fmu_interface_is(s, 1) ||                                                 \
        !fmu_phase_allows(s, FMU_MB_MASK_##mask, FMU_MB_HINT_##mask))                                     \
        return fmi3Error
#define STATUS3(ok) ((ok) ? fmi3OK : fmi3Error)

FMI3_Export const char *fmi3GetVersion(void) { return fmi3Version; }

static fmi3Instance instantiate(fmi3String name, int type, fmi3String token, fmi3String resources, fmi3Boolean logging,
                                fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    Host3 *h = malloc(sizeof *h);
    if (!h) return NULL;
    h->env = env;
    h->log = log;
    h->configuring = 0;
    fmi2CallbackFunctions cb = callbacks3(h);
    Instance *s = fmu_instantiate(name, type, token, resources, 1, &cb, logging);
    if (!s) free(h);
    return s;
}

FMI3_Export fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                                      fmi3String resourcePath, fmi3Boolean visible,
                                                      fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
                                                      fmi3LogMessageCallback logMessage) {
    (void)visible;
    return instantiate(instanceName, fmi2ModelExchange, instantiationToken, resourcePath, loggingOn,
                       instanceEnvironment, logMessage);
}

FMI3_Export fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
    const fmi3ValueReference requiredIntermediateVariables[], size_t nRequiredIntermediateVariables,
    fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)visible; (void)earlyReturnAllowed; (void)requiredIntermediateVariables; (void)intermediateUpdate;
    Host3 h = {instanceEnvironment, logMessage, 0};
    fmi2CallbackFunctions cb = callbacks3(&h);
    const char *shown = instanceName && fmu_valid_utf8(instanceName) ? instanceName : "";
    if (eventModeUsed) {
        fmu_say_to(&cb, shown, fmi2Error, MSG_FMI3_NO_EVENT_MODE, "fmi3InstantiateCoSimulation");
        return NULL;
    }
    if (nRequiredIntermediateVariables) {
        fmu_say_to(&cb, shown, fmi2Error, MSG_FMI3_NO_INTERMEDIATE, "fmi3InstantiateCoSimulation",
                   (double)nRequiredIntermediateVariables);
        return NULL;
    }
    return instantiate(instanceName, fmi2CoSimulation, instantiationToken, resourcePath, loggingOn,
                       instanceEnvironment, logMessage);
}

FMI3_Export fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3ClockUpdateCallback clockUpdate, fmi3LockPreemptionCallback lockPreemption,
    fmi3UnlockPreemptionCallback unlockPreemption) {
    (void)instantiationToken; (void)resourcePath; (void)visible; (void)loggingOn; (void)clockUpdate;
    (void)lockPreemption; (void)unlockPreemption;
    Host3 h = {instanceEnvironment, logMessage, 0};
    fmi2CallbackFunctions cb = callbacks3(&h);
    fmu_say_to(&cb, instanceName && fmu_valid_utf8(instanceName) ? instanceName : "", fmi2Error,
               MSG_FMI3_NOT_SCHEDULED, "fmi3InstantiateScheduledExecution");
    return NULL;
}

FMI3_Export void fmi3FreeInstance(fmi3Instance instance) {
    Instance *s = instance_of((fmi2Component)instance);
    if (!s) return;
    void *host = s->cb.componentEnvironment;
    fmu_free_states(s);
    fmu_free(s);
    free(host);
}

FMI3_Export fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                                           const fmi3String categories[]) {
    BEGIN3("fmi3SetDebugLogging");
    return STATUS3(fmu_set_debug_logging(s, loggingOn, nCategories, categories));
}

FMI3_Export fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                                   fmi3Float64 tolerance, fmi3Float64 startTime,
                                                   fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    BEGIN3_IN("fmi3EnterInitializationMode", fmi3EnterInitializationMode);
    return STATUS3(fmu_setup_experiment(s, toleranceDefined, tolerance, startTime, stopTimeDefined, stopTime) &&
                   fmu_enter_initialization(s));
}

FMI3_Export fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
    BEGIN3_IN("fmi3ExitInitializationMode", fmi3ExitInitializationMode);
    return STATUS3(fmu_exit_initialization(s));
}

FMI3_Export fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
    BEGIN3_ME("fmi3EnterEventMode", fmi3EnterEventMode);
    return STATUS3(fmu_enter_event_mode(s));
}

FMI3_Export fmi3Status fmi3Terminate(fmi3Instance instance) {
    BEGIN3_IN("fmi3Terminate", fmi3Terminate);
    return STATUS3(fmu_terminate(s));
}

FMI3_Export fmi3Status fmi3Reset(fmi3Instance instance) {
    BEGIN3("fmi3Reset");
    CONFIGURING(s) = 0;
    fmu_reset(s);
    return fmi3OK;
}

/* ------------------------------------------------------------------------------------------------
 * Variables: scalars and arrays over the interface table's variables
 */
enum { F64, I32, I64, BOOL, NTYPES };
static const char *const TYPE_NAMES[NTYPES] = {"Float64", "Int32", "Int64 (an Enumeration)", "Boolean"};
static const int CORE_TYPE[NTYPES] = {FMU_MB_TYPE_REAL, FMU_MB_TYPE_INTEGER, FMU_MB_TYPE_INTEGER, FMU_MB_TYPE_BOOLEAN};
#define TIME_VR ((fmi3ValueReference)FMU_MB_NVARS)

static int type_of(fmi3ValueReference vr) {
    if (vr == TIME_VR) return F64;
    const fmu_mb_var *v = &FMU_MB_VARS[vr];
    if (v->type == FMU_MB_TYPE_REAL) return F64;
    if (v->type == FMU_MB_TYPE_BOOLEAN) return BOOL;
    return FMU_MB_ENUMERATED[vr] ? I64 : I32;
}

/* The FMI 3.0 name of the variable at vr (an array's: without its elements' index). */
static const char *name_of(fmi3ValueReference vr) {
    return vr == TIME_VR ? "time" : FMU_MB_FMI3_NAME[vr] ? FMU_MB_FMI3_NAME[vr] : FMU_MB_VARS[vr].name;
}

/* Values of the FMI 3.0 variable at vr (0: vr is an element of an array, or unknown). */
static size_t size_of(fmi3ValueReference vr) {
    if (vr == TIME_VR) return 1;
    return vr < TIME_VR ? (size_t)FMU_MB_FMI3_SIZE[vr] : 0;
}

/* Element e of the FMI 3.0 variable at vr: an interface variable's value reference (time: TIME_VR). */
static fmi2ValueReference element_of(fmi3ValueReference vr, size_t e) {
    return vr == TIME_VR ? (fmi2ValueReference)TIME_VR : FMU_MB_FMI3_ELEMENTS[FMU_MB_FMI3_FIRST[vr] + (int)e];
}

/* vr is an FMI 3.0 variable; otherwise an error naming the array it is an element of, or unknown. */
static int known_vr(Instance *s, fmi3ValueReference vr) {
    if (size_of(vr)) return 1;
    for (fmi3ValueReference a = 0; vr < TIME_VR && a < TIME_VR; ++a)
        for (int e = 1; e < FMU_MB_FMI3_SIZE[a]; ++e)
            if (element_of(a, (size_t)e) == vr) {
                FMU_ERROR(s, MSG_FMI3_VR_IN_ARRAY, s->call, vr, e + 1, name_of(a), a);
                return 0;
            }
    FMU_ERROR(s, MSG_VR_UNKNOWN, s->call, vr);
    return 0;
}

/* The element value references of a list of FMI 3.0 variables, CHUNK at a time. */
typedef struct {
    const fmi3ValueReference *vr;
    size_t nvr, k, e;       /* the variable and the element within it next */
} Elements;

/* The next (up to) `cap` element value references into out (and, if `of` is not NULL, the position in the list of
 * the variable each belongs to); how many (0: no more). */
static size_t next_elements_of(Elements *it, fmi2ValueReference out[], size_t of[], size_t cap) {
    size_t n = 0;
    while (n < cap && it->k < it->nvr) {
        if (of) of[n] = it->k;
        out[n++] = element_of(it->vr[it->k], it->e);
        if (++it->e >= size_of(it->vr[it->k])) it->e = 0, ++it->k;
    }
    return n;
}

static size_t next_elements(Elements *it, fmi2ValueReference out[], size_t cap) {
    return next_elements_of(it, out, NULL, cap);
}

/* The number of values of the variables vr[0..nvr), all known (0 and an error otherwise). */
static int count_values(Instance *s, const fmi3ValueReference vr[], size_t nvr, size_t *count) {
    size_t total = 0;
    for (size_t k = 0; k < nvr; ++k) {
        if (!known_vr(s, vr[k])) return 0;
        total += size_of(vr[k]);
    }
    *count = total;
    return 1;
}

static int arrays_ok(Instance *s, size_t n, const void *vr, const void *v) {
    return api_arrays_ok(s, n, vr, v, "valueReferences", "values");
}

/* The call's arrays, its value count and every value reference's type (`type`, or NTYPES: none of this FMU's). */
static int call_ok(Instance *s, const fmi3ValueReference vr[], size_t nvr, const void *values, size_t nvalues,
                   int type, const char *type_name) {
    size_t count = 0;
    if (!arrays_ok(s, nvr, vr, values) || !count_values(s, vr, nvr, &count)) return 0;
    for (size_t k = 0; k < nvr; ++k)
        if (type_of(vr[k]) != type) {
            FMU_ERROR(s, MSG_FMI3_VR_WRONG_TYPE, s->call, vr[k], name_of(vr[k]), TYPE_NAMES[type_of(vr[k])], type_name);
            return 0;
        }
    if (nvalues != count) {
        FMU_ERROR(s, MSG_FMI3_VALUE_COUNT, s->call, (double)nvalues, (double)nvr, (double)count);
        return 0;
    }
    return 1;
}

/* A Count option (an Int32 option without named values) is a structural parameter. */
static int is_structural(fmi3ValueReference vr) {
    return vr < TIME_VR && FMU_MB_VARS[vr].role == FMU_MB_ROLE_OPTION && FMU_MB_VARS[vr].type == FMU_MB_TYPE_INTEGER &&
           !FMU_MB_ENUMERATED[vr];
}

static int has_structural(void) {
    for (fmi3ValueReference vr = 0; vr < TIME_VR; ++vr)
        if (is_structural(vr)) return 1;
    return 0;
}

/* Structural parameters are set in configuration mode, and nothing else is set there. */
static int structure_ok(Instance *s, const fmi3ValueReference vr[], size_t nvr) {
    for (size_t k = 0; k < nvr; ++k) {
        if (CONFIGURING(s) && !is_structural(vr[k])) {
            FMU_ERROR(s, MSG_FMI3_NOT_STRUCTURAL, s->call, name_of(vr[k]));
            return 0;
        }
        if (!CONFIGURING(s) && is_structural(vr[k])) {
            FMU_ERROR(s, MSG_FMI3_STRUCTURAL_OUTSIDE, s->call, name_of(vr[k]));
            return 0;
        }
    }
    return 1;
}

#define CHUNK 256
/* Values pass through the core as doubles, the elements of the variables CHUNK at a time; time (TIME_VR) is the
 * instance's. */
#define GET3(fn, ctype, TYPE, conv)                                                                      \
    FMI3_Export fmi3Status fn(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, ctype v[], \
                              size_t nValues) {                                                          \
        BEGIN3(#fn);                                                                                     \
        if (!call_ok(s, vr, nvr, v, nValues, TYPE, TYPE_NAMES[TYPE])) return fmi3Error;                  \
        int ok = fmu_phase_allows(s, FMU_MB_MASK_fmi3Get, FMU_MB_HINT_fmi3Get);                          \
        double buf[CHUNK];                                                                               \
        fmi2ValueReference all[CHUNK], sub[CHUNK];                                                       \
        Elements it = {vr, nvr, 0, 0};                                                                   \
        size_t o = 0, m;                                                                                 \
        while (ok && (m = next_elements(&it, all, CHUNK)) > 0) {                                         \
            size_t n = 0;                                                                                \
            for (size_t k = 0; k < m; ++k)                                                               \
                if (all[k] != TIME_VR) sub[n++] = all[k];                                                \
            ok = fmu_get(s, sub, n, CORE_TYPE[TYPE], buf);                                               \
            for (size_t k = 0, j = 0; ok && k < m; ++k) {                                                \
                double x = all[k] == TIME_VR ? s->t : buf[j++];                                          \
                v[o++] = conv;                                                                           \
            }                                                                                            \
        }                                                                                                \
        if (!ok)                                                                                         \
            for (size_t k = 0; k < nValues; ++k) v[k] = 0;                                               \
        return STATUS3(ok);                                                                              \
    }
GET3(fmi3GetFloat64, fmi3Float64, F64, x)
GET3(fmi3GetInt32, fmi3Int32, I32, x > (double)INT_MAX ? INT_MAX : x < (double)INT_MIN ? INT_MIN : (fmi3Int32)x)
GET3(fmi3GetInt64, fmi3Int64, I64, (fmi3Int64)x)
GET3(fmi3GetBoolean, fmi3Boolean, BOOL, x != 0.0)

#define SET3(fn, ctype, TYPE, conv)                                                                           \
    FMI3_Export fmi3Status fn(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const ctype v[], \
                              size_t nValues) {                                                               \
        BEGIN3(#fn);                                                                                          \
        if (!call_ok(s, vr, nvr, v, nValues, TYPE, TYPE_NAMES[TYPE]) ||                                       \
            !fmu_phase_allows(s, FMU_MB_MASK_fmi3Set, FMU_MB_HINT_fmi3Set))                                   \
            return fmi3Error;                                                                                 \
        for (size_t k = 0; k < nvr; ++k)                                                                      \
            if (vr[k] == TIME_VR) {                                                                           \
                FMU_ERROR(s, MSG_FMI3_TIME_READ_ONLY, s->call, vr[k]);                                        \
                return fmi3Error;                                                                             \
            }                                                                                                 \
        if (!structure_ok(s, vr, nvr)) return fmi3Error;                                                      \
        int ok = 1;                                                                                           \
        double buf[CHUNK];                                                                                    \
        fmi2ValueReference all[CHUNK];                                                                        \
        Elements it = {vr, nvr, 0, 0};                                                                        \
        size_t o = 0, m;                                                                                      \
        while ((m = next_elements(&it, all, CHUNK)) > 0) {                                                    \
            for (size_t k = 0; k < m; ++k, ++o) buf[k] = conv;                                                \
            ok &= fmu_set(s, all, m, CORE_TYPE[TYPE], buf);                                                   \
        }                                                                                                     \
        return STATUS3(ok);                                                                                   \
    }
SET3(fmi3SetFloat64, fmi3Float64, F64, v[o])
SET3(fmi3SetInt32, fmi3Int32, I32, (double)v[o])
SET3(fmi3SetInt64, fmi3Int64, I64, (double)v[o])
SET3(fmi3SetBoolean, fmi3Boolean, BOOL, (v[o] ? 1.0 : 0.0))

/* The types this FMU has no variables of: an empty call in a phase allowing it is fine. */
static fmi3Status no_type(Instance *s, const fmi3ValueReference vr[], size_t nvr, const void *v, int set,
                          const char *type_name) {
    if (!arrays_ok(s, nvr, vr, v) || !(set ? fmu_phase_allows(s, FMU_MB_MASK_fmi3Set, FMU_MB_HINT_fmi3Set)
                                           : fmu_phase_allows(s, FMU_MB_MASK_fmi3Get, FMU_MB_HINT_fmi3Get)))
        return fmi3Error;
    if (!nvr) return fmi3OK;
    if (known_vr(s, vr[0]))
        FMU_ERROR(s, MSG_FMI3_VR_WRONG_TYPE, s->call, vr[0], name_of(vr[0]), TYPE_NAMES[type_of(vr[0])], type_name);
    return fmi3Error;
}

#define NO_GET(fn, ctype, name)                                                                            \
    FMI3_Export fmi3Status fn(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, ctype v[], \
                              size_t nValues) {                                                            \
        (void)nValues;                                                                                     \
        BEGIN3(#fn);                                                                                       \
        return no_type(s, vr, nvr, v, 0, name);                                                            \
    }
#define NO_SET(fn, ctype, name)                                                                                  \
    FMI3_Export fmi3Status fn(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const ctype v[], \
                              size_t nValues) {                                                                  \
        (void)nValues;                                                                                           \
        BEGIN3(#fn);                                                                                             \
        return no_type(s, vr, nvr, v, 1, name);                                                                  \
    }
NO_GET(fmi3GetFloat32, fmi3Float32, "Float32")
NO_GET(fmi3GetInt8, fmi3Int8, "Int8")
NO_GET(fmi3GetUInt8, fmi3UInt8, "UInt8")
NO_GET(fmi3GetInt16, fmi3Int16, "Int16")
NO_GET(fmi3GetUInt16, fmi3UInt16, "UInt16")
NO_GET(fmi3GetUInt32, fmi3UInt32, "UInt32")
NO_GET(fmi3GetUInt64, fmi3UInt64, "UInt64")
NO_GET(fmi3GetString, fmi3String, "String")
NO_SET(fmi3SetFloat32, fmi3Float32, "Float32")
NO_SET(fmi3SetInt8, fmi3Int8, "Int8")
NO_SET(fmi3SetUInt8, fmi3UInt8, "UInt8")
NO_SET(fmi3SetInt16, fmi3Int16, "Int16")
NO_SET(fmi3SetUInt16, fmi3UInt16, "UInt16")
NO_SET(fmi3SetUInt32, fmi3UInt32, "UInt32")
NO_SET(fmi3SetUInt64, fmi3UInt64, "UInt64")
NO_SET(fmi3SetString, fmi3String, "String")

FMI3_Export fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                     size_t valueSizes[], fmi3Binary v[], size_t nValues) {
    (void)valueSizes; (void)nValues;
    BEGIN3("fmi3GetBinary");
    return no_type(s, vr, nvr, v, 0, "Binary");
}

FMI3_Export fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                     const size_t valueSizes[], const fmi3Binary v[], size_t nValues) {
    (void)valueSizes; (void)nValues;
    BEGIN3("fmi3SetBinary");
    return no_type(s, vr, nvr, v, 1, "Binary");
}

/* ------------------------------------------------------------------------------------------------
 * Configuration mode: from the phase `instantiated`, for the structural parameters
 */
FMI3_Export fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
    BEGIN3("fmi3EnterConfigurationMode");
    if (!has_structural()) {
        FMU_ERROR(s, MSG_FMI3_NO_CONFIGURATION, s->call);
        return fmi3Error;
    }
    if (!not_configuring(s) || !fmu_phase_allows(s, FMU_MB_MASK_fmi3EnterConfigurationMode,
                                                 FMU_MB_HINT_fmi3EnterConfigurationMode))
        return fmi3Error;
    CONFIGURING(s) = 1;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
    BEGIN3("fmi3ExitConfigurationMode");
    if (!CONFIGURING(s)) {
        FMU_ERROR(s, MSG_FMI3_NOT_CONFIGURING, s->call);
        return fmi3Error;
    }
    CONFIGURING(s) = 0;
    return fmi3OK;
}

/* ------------------------------------------------------------------------------------------------
 * Clocks, per-element dependencies: none
 */
#define REFUSED(fn, msg, params)                     \
    FMI3_Export fmi3Status fn params {              \
        BEGIN3(#fn);                                 \
        FMU_ERROR(s, msg, s->call);                  \
        return fmi3Error;                            \
    }
REFUSED(fmi3GetClock, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, fmi3Clock v[]))
REFUSED(fmi3SetClock, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const fmi3Clock v[]))
REFUSED(fmi3GetIntervalDecimal, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 intervals[],
         fmi3IntervalQualifier qualifiers[]))
REFUSED(fmi3GetIntervalFraction, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, fmi3UInt64 counters[],
         fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[]))
REFUSED(fmi3GetShiftDecimal, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 shifts[]))
REFUSED(fmi3GetShiftFraction, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, fmi3UInt64 counters[],
         fmi3UInt64 resolutions[]))
REFUSED(fmi3SetIntervalDecimal, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 intervals[]))
REFUSED(fmi3SetIntervalFraction, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const fmi3UInt64 counters[],
         const fmi3UInt64 resolutions[]))
REFUSED(fmi3SetShiftDecimal, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 shifts[]))
REFUSED(fmi3SetShiftFraction, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, const fmi3UInt64 counters[],
         const fmi3UInt64 resolutions[]))
REFUSED(fmi3ActivateModelPartition, MSG_FMI3_NO_CLOCKS,
        (fmi3Instance instance, fmi3ValueReference clockReference, fmi3Float64 activationTime))
REFUSED(fmi3GetNumberOfVariableDependencies, MSG_FMI3_NO_PER_ELEMENT,
        (fmi3Instance instance, fmi3ValueReference valueReference, size_t *nDependencies))
REFUSED(fmi3GetVariableDependencies, MSG_FMI3_NO_PER_ELEMENT,
        (fmi3Instance instance, fmi3ValueReference dependent, size_t elementIndicesOfDependent[],
         fmi3ValueReference independents[], size_t elementIndicesOfIndependents[],
         fmi3DependencyKind dependencyKinds[], size_t nDependencies))
REFUSED(fmi3EnterStepMode, MSG_FMI3_NO_EVENT_STEP, (fmi3Instance instance))
REFUSED(fmi3EvaluateDiscreteStates, MSG_FMI3_NO_EVALUATE, (fmi3Instance instance))

/* ------------------------------------------------------------------------------------------------
 * FMU states (state.c's record: the FMI 2.0 FMU's)
 */
FMI3_Export fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    BEGIN3_IN("fmi3GetFMUState", fmi3GetFMUState);
    return STATUS3(fmu_get_state(s, (fmi2FMUstate *)FMUState));
}

FMI3_Export fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState) {
    BEGIN3_IN("fmi3SetFMUState", fmi3SetFMUState);
    return STATUS3(fmu_set_state(s, (fmi2FMUstate)FMUState));
}

FMI3_Export fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    BEGIN3("fmi3FreeFMUState");
    return STATUS3(fmu_free_state(s, (fmi2FMUstate *)FMUState));
}

FMI3_Export fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size) {
    BEGIN3("fmi3SerializedFMUStateSize");
    return STATUS3(fmu_state_size(s, (fmi2FMUstate)FMUState, size));
}

FMI3_Export fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[],
                                             size_t size) {
    BEGIN3("fmi3SerializeFMUState");
    return STATUS3(fmu_serialize_state(s, (fmi2FMUstate)FMUState, (fmi2Byte *)serializedState, size));
}

FMI3_Export fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                               fmi3FMUState *FMUState) {
    BEGIN3("fmi3DeserializeFMUState");
    return STATUS3(fmu_deserialize_state(s, (const fmi2Byte *)serializedState, size, (fmi2FMUstate *)FMUState));
}

/* ------------------------------------------------------------------------------------------------
 * Partial derivatives (both interfaces) over the elements of the variables: directional from the core, the known
 * elements and the unknown ones CHUNK at a time (the derivative is linear in the seed: the products of the known
 * chunks add up), adjoint as its transpose (one directional derivative per known element); no allocation
 */
static int derivative_call_ok(Instance *s, const fmi3ValueReference unknowns[], size_t nu,
                              const fmi3ValueReference knowns[], size_t nk, const fmi3Float64 seed[], size_t nseed,
                              const fmi3Float64 sensitivity[], size_t nsens, int adjoint) {
    if (!fmu_has_directional_derivatives()) {
        FMU_ERROR(s, MSG_NO_DIRECTIONAL_DERIVATIVE, s->call);
        return 0;
    }
    /* (the seed has an entry per known element and the sensitivity one per unknown; the adjoint's the other way) */
    const void *per_unknown = adjoint ? (const void *)seed : (const void *)sensitivity;
    const void *per_known = adjoint ? (const void *)sensitivity : (const void *)seed;
    size_t n_unknown = 0, n_known = 0;
    if (!fmu_phase_allows(s, FMU_MB_MASK_fmi3GetDirectionalDerivative, FMU_MB_HINT_fmi3GetDirectionalDerivative) ||
        !api_arrays_ok(s, nu, unknowns, per_unknown, "unknowns", adjoint ? "seed" : "sensitivity") ||
        !api_arrays_ok(s, nk, knowns, per_known, "knowns", adjoint ? "sensitivity" : "seed") ||
        !count_values(s, unknowns, nu, &n_unknown) || !count_values(s, knowns, nk, &n_known))
        return 0;
    size_t want_seed = adjoint ? n_unknown : n_known, want_sens = adjoint ? n_known : n_unknown;
    if (nseed != want_seed) {
        FMU_ERROR(s, MSG_FMI3_SEED_COUNT, s->call, "nSeed", (double)nseed, (double)(adjoint ? nu : nk),
                  adjoint ? "unknowns" : "knowns", (double)want_seed);
        return 0;
    }
    if (nsens != want_sens) {
        FMU_ERROR(s, MSG_FMI3_SEED_COUNT, s->call, "nSensitivity", (double)nsens, (double)(adjoint ? nk : nu),
                  adjoint ? "knowns" : "unknowns", (double)want_sens);
        return 0;
    }
    return 1;
}

FMI3_Export fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                                    size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                                    const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                                    size_t nSensitivity) {
    BEGIN3("fmi3GetDirectionalDerivative");
    if (!not_configuring(s)) return fmi3Error;
    if (!derivative_call_ok(s, unknowns, nUnknowns, knowns, nKnowns, seed, nSeed, sensitivity, nSensitivity, 0))
        return fmi3Error;
    fmi2ValueReference u[CHUNK], k[CHUNK];
    double part[CHUNK];
    for (size_t i = 0; i < nSensitivity; ++i) sensitivity[i] = 0.0;
    Elements known = {knowns, nKnowns, 0, 0};
    size_t mk, ko = 0;
    while ((mk = next_elements(&known, k, CHUNK)) > 0) {
        Elements unknown = {unknowns, nUnknowns, 0, 0};
        size_t mu, uo = 0;
        while ((mu = next_elements(&unknown, u, CHUNK)) > 0) {
            if (!fmu_get_directional_derivative(s, u, mu, k, mk, seed + ko, part)) {
                for (size_t i = 0; i < nSensitivity; ++i) sensitivity[i] = 0.0;
                return fmi3Error;
            }
            for (size_t i = 0; i < mu; ++i) sensitivity[uo + i] += part[i];
            uo += mu;
        }
        ko += mk;
    }
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                                size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                                const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                                size_t nSensitivity) {
    BEGIN3("fmi3GetAdjointDerivative");
    if (!not_configuring(s)) return fmi3Error;
    if (!derivative_call_ok(s, unknowns, nUnknowns, knowns, nKnowns, seed, nSeed, sensitivity, nSensitivity, 1))
        return fmi3Error;
    char a[32];
    for (size_t i = 0; i < nSeed; ++i)
        if (!isfinite(seed[i])) {
            FMU_ERROR(s, MSG_DD_SEED, s->call, (int)i, fmu_repr(seed[i], a));
            return fmi3Error;
        }
    const double one = 1.0;
    double column[CHUNK];
    fmi2ValueReference u[CHUNK], k;
    Elements known = {knowns, nKnowns, 0, 0};
    for (size_t j = 0; next_elements(&known, &k, 1) == 1; ++j) {   /* sensitivity_j = sum_i seed_i d u_i / d k_j */
        double sum = 0.0;
        Elements unknown = {unknowns, nUnknowns, 0, 0};
        size_t mu, uo = 0;
        while ((mu = next_elements(&unknown, u, CHUNK)) > 0) {
            if (!fmu_get_directional_derivative(s, u, mu, &k, 1, &one, column)) {
                for (size_t i = 0; i < nSensitivity; ++i) sensitivity[i] = 0.0;
                return fmi3Error;
            }
            for (size_t i = 0; i < mu; ++i) sum += seed[uo + i] * column[i];
            uo += mu;
        }
        sensitivity[j] = sum;
    }
    return fmi3OK;
}

/* ------------------------------------------------------------------------------------------------
 * Co-simulation
 */
/* The first time derivatives of Float64 outputs (arrays element-wise, each element with its variable's order),
 * CHUNK elements per evaluation of the core (maxOutputDerivativeOrder = 1). */
FMI3_Export fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                                size_t nValueReferences, const fmi3Int32 orders[],
                                                fmi3Float64 values[], size_t nValues) {
    BEGIN3("fmi3GetOutputDerivatives");
    if (!not_configuring(s) || !fmu_interface_is(s, 0)) return fmi3Error;
    if (!fmu_has_output_derivatives()) {
        FMU_ERROR(s, MSG_NO_OUTPUT_DERIVATIVES, s->call);
        return fmi3Error;
    }
    if (!fmu_phase_allows(s, FMU_MB_MASK_fmi3GetOutputDerivatives, FMU_MB_HINT_fmi3GetOutputDerivatives) ||
        !api_arrays_ok(s, nValueReferences, valueReferences, orders, "valueReferences", "orders") ||
        !call_ok(s, valueReferences, nValueReferences, values, nValues, F64, TYPE_NAMES[F64]))
        return fmi3Error;
    for (size_t k = 0; k < nValueReferences; ++k)
        if (valueReferences[k] == TIME_VR) {
            FMU_ERROR(s, MSG_OD_NOT_OUTPUT, s->call, "time");
            return fmi3Error;
        }
    fmi2ValueReference all[CHUNK];
    size_t of[CHUNK];
    int order[CHUNK], ok = 1;
    double buf[CHUNK];
    Elements it = {valueReferences, nValueReferences, 0, 0};
    size_t o = 0, m;
    while (ok && (m = next_elements_of(&it, all, of, CHUNK)) > 0) {
        for (size_t k = 0; k < m; ++k) order[k] = orders[of[k]];
        ok = fmu_get_output_derivatives(s, all, m, order, buf);
        for (size_t k = 0; ok && k < m; ++k) values[o++] = buf[k];
    }
    if (!ok)
        for (size_t k = 0; k < nValues; ++k) values[k] = 0.0;
    return STATUS3(ok);
}

FMI3_Export fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                                  fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                  fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                                  fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    (void)noSetFMUStatePriorToCurrentPoint;
    BEGIN3("fmi3DoStep");
    if (!not_configuring(s)) return fmi3Error;
    if (!fmu_interface_is(s, 0) || !fmu_phase_allows(s, FMU_MB_MASK_fmi3DoStep, FMU_MB_HINT_fmi3DoStep))
        return fmi3Error;
    const char *missing = !eventHandlingNeeded ? "eventHandlingNeeded" : !terminateSimulation ? "terminateSimulation"
                          : !earlyReturn ? "earlyReturn" : !lastSuccessfulTime ? "lastSuccessfulTime" : NULL;
    if (missing) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, missing);
        return fmi3Error;
    }
    fmi2Status st = fmu_do_step(s, currentCommunicationPoint, communicationStepSize);
    *eventHandlingNeeded = fmi3False;
    *terminateSimulation = fmi3False;
    *earlyReturn = fmi3False;                              /* the step is atomic: it never returns early */
    *lastSuccessfulTime = s->t;                            /* the step's end, or the time kept after a refused step */
    return (fmi3Status)st;
}

/* ------------------------------------------------------------------------------------------------
 * Model Exchange (exchange.c); no event indicators, no time events
 */
#define counted api_counted

FMI3_Export fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                                fmi3Boolean *terminateSimulation,
                                                fmi3Boolean *nominalsOfContinuousStatesChanged,
                                                fmi3Boolean *valuesOfContinuousStatesChanged,
                                                fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
    BEGIN3_ME("fmi3UpdateDiscreteStates", fmi3UpdateDiscreteStates);
    fmi2EventInfo info;
    if (!fmu_new_discrete_states(s, &info)) return fmi3Error;
    /* FMI 3.0: every argument is an output the host may pass as NULL where it does not need it */
    if (discreteStatesNeedUpdate) *discreteStatesNeedUpdate = info.newDiscreteStatesNeeded ? fmi3True : fmi3False;
    if (terminateSimulation) *terminateSimulation = info.terminateSimulation ? fmi3True : fmi3False;
    if (nominalsOfContinuousStatesChanged)
        *nominalsOfContinuousStatesChanged = info.nominalsOfContinuousStatesChanged ? fmi3True : fmi3False;
    if (valuesOfContinuousStatesChanged)
        *valuesOfContinuousStatesChanged = info.valuesOfContinuousStatesChanged ? fmi3True : fmi3False;
    if (nextEventTimeDefined) *nextEventTimeDefined = info.nextEventTimeDefined ? fmi3True : fmi3False;
    if (nextEventTime) *nextEventTime = info.nextEventTime;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
    BEGIN3_ME("fmi3EnterContinuousTimeMode", fmi3EnterContinuousTimeMode);
    return STATUS3(fmu_enter_continuous_time_mode(s));
}

FMI3_Export fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation) {
    (void)noSetFMUStatePriorToCurrentPoint;
    BEGIN3_ME("fmi3CompletedIntegratorStep", fmi3CompletedIntegratorStep);
    if (!enterEventMode || !terminateSimulation) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, !enterEventMode ? "enterEventMode" : "terminateSimulation");
        return fmi3Error;
    }
    int event = 0, stop = 0, ok = fmu_completed_integrator_step(s, &event, &stop);
    *enterEventMode = event ? fmi3True : fmi3False;
    *terminateSimulation = stop ? fmi3True : fmi3False;
    return STATUS3(ok);
}

FMI3_Export fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    BEGIN3_ME("fmi3SetTime", fmi3SetTime);
    return STATUS3(fmu_set_time(s, time));
}

FMI3_Export fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                               size_t nContinuousStates) {
    BEGIN3_ME("fmi3SetContinuousStates", fmi3SetContinuousStates);
    if (!counted(s, continuousStates, nContinuousStates, "continuousStates")) return fmi3Error;
    return STATUS3(fmu_set_states(s, continuousStates, nContinuousStates));
}

FMI3_Export fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                                         size_t nContinuousStates) {
    BEGIN3_ME("fmi3GetContinuousStateDerivatives", fmi3GetContinuousStateDerivatives);
    if (!counted(s, derivatives, nContinuousStates, "derivatives")) return fmi3Error;
    return (fmi3Status)fmu_get_derivatives(s, derivatives, nContinuousStates);
}

FMI3_Export fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                              size_t nEventIndicators) {
    BEGIN3_ME("fmi3GetEventIndicators", fmi3GetEventIndicators);
    if (!counted(s, eventIndicators, nEventIndicators, "eventIndicators")) return fmi3Error;
    return STATUS3(fmu_get_event_indicators(s, nEventIndicators));
}

FMI3_Export fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                               size_t nContinuousStates) {
    BEGIN3_ME("fmi3GetContinuousStates", fmi3GetContinuousStates);
    if (!counted(s, continuousStates, nContinuousStates, "continuousStates")) return fmi3Error;
    return STATUS3(fmu_get_states(s, continuousStates, nContinuousStates));
}

FMI3_Export fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                                         size_t nContinuousStates) {
    BEGIN3_ME("fmi3GetNominalsOfContinuousStates", fmi3GetNominalsOfContinuousStates);
    if (!counted(s, nominals, nContinuousStates, "nominals")) return fmi3Error;
    return STATUS3(fmu_get_nominals(s, nominals, nContinuousStates));
}

FMI3_Export fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    BEGIN3("fmi3GetNumberOfEventIndicators");
    if (!nEventIndicators) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, "nEventIndicators");
        return fmi3Error;
    }
    *nEventIndicators = 0;
    return fmi3OK;
}

FMI3_Export fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    BEGIN3("fmi3GetNumberOfContinuousStates");
    if (!nContinuousStates) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, "nContinuousStates");
        return fmi3Error;
    }
    *nContinuousStates = (size_t)FMU_MB_NSTATES;
    return fmi3OK;
}
