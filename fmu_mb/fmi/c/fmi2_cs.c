/*
 * The FMI 2.0 API of an fmu_mb FMU common to both interfaces, and co-simulation's (Model Exchange's own functions:
 * fmi2_me.c): only the mapping of FMI calls onto the core (core.h).
 * Each function checks its component, its pointer arguments and the co-simulation state table (the phase
 * masks FMU_MB_MASK_* generated from fmu_mb.fmi.constants.CALLS) and converts FMI 2.0's Integer and Boolean
 * values; the core does the rest. No physics, no model knowledge.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api.h"

static int arrays_ok(Instance *s, size_t n, const void *vr, const void *v) {
    return api_arrays_ok(s, n, vr, v, "vr", "value");
}

FMI2_Export const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
FMI2_Export const char *fmi2GetVersion(void) { return fmi2Version; }

FMI2_Export fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                          const fmi2CallbackFunctions *cb, fmi2Boolean visible,
                                          fmi2Boolean loggingOn) {
    (void)visible;
    return fmu_instantiate(name, (int)type, guid, resources, 0, cb, loggingOn);
}

FMI2_Export void fmi2FreeInstance(fmi2Component c) {
    Instance *s = instance_of(c);
    if (!s) return;
    fmu_free_states(s);
    fmu_free(s);
}

FMI2_Export fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t n,
                                           const fmi2String categories[]) {
    BEGIN("fmi2SetDebugLogging");
    return STATUS(fmu_set_debug_logging(s, loggingOn, n, categories));
}

FMI2_Export fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDefined, fmi2Real tol, fmi2Real start,
                                           fmi2Boolean stopDefined, fmi2Real stop) {
    BEGIN_IN("fmi2SetupExperiment", fmi2SetupExperiment);
    return STATUS(fmu_setup_experiment(s, tolDefined, tol, start, stopDefined, stop));
}

FMI2_Export fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    BEGIN_IN("fmi2EnterInitializationMode", fmi2EnterInitializationMode);
    return STATUS(fmu_enter_initialization(s));
}

FMI2_Export fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    BEGIN_IN("fmi2ExitInitializationMode", fmi2ExitInitializationMode);
    return STATUS(fmu_exit_initialization(s));
}

FMI2_Export fmi2Status fmi2Terminate(fmi2Component c) {
    BEGIN_IN("fmi2Terminate", fmi2Terminate);
    return STATUS(fmu_terminate(s));
}

FMI2_Export fmi2Status fmi2Reset(fmi2Component c) {
    BEGIN("fmi2Reset");
    fmu_reset(s);
    return fmi2OK;
}

/* ------------------------------------------------------------------------------------------------
 * Variables
 */
FMI2_Export fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    BEGIN("fmi2GetReal");
    if (!arrays_ok(s, n, vr, v)) return fmi2Error;
    if (fmu_phase_allows(s, FMU_MB_MASK_fmi2Get, FMU_MB_HINT_fmi2Get) && fmu_get(s, vr, n, FMU_MB_TYPE_REAL, v))
        return fmi2OK;
    for (size_t k = 0; k < n; ++k) v[k] = 0.0;
    return fmi2Error;
}

/* Integer and Boolean values pass through the core as doubles, in chunks. */
#define CHUNK 256
#define GET_CONVERTED(fn, ctype, TYPE, conv)                                                           \
    FMI2_Export fmi2Status fn(fmi2Component c, const fmi2ValueReference vr[], size_t n, ctype v[]) {    \
        BEGIN(#fn);                                                                                    \
        if (!arrays_ok(s, n, vr, v)) return fmi2Error;                                                 \
        int ok = fmu_phase_allows(s, FMU_MB_MASK_fmi2Get, FMU_MB_HINT_fmi2Get);                        \
        double buf[CHUNK];                                                                             \
        for (size_t o = 0; ok && o < n; o += CHUNK) {                                                  \
            size_t m = n - o < CHUNK ? n - o : CHUNK;                                                  \
            ok = fmu_get(s, vr + o, m, TYPE, buf);                                                     \
            for (size_t k = 0; ok && k < m; ++k) {                                                     \
                double x = buf[k];                                                                     \
                v[o + k] = conv;                                                                       \
            }                                                                                          \
        }                                                                                              \
        if (!ok)                                                                                       \
            for (size_t k = 0; k < n; ++k) v[k] = 0;                                                   \
        return STATUS(ok);                                                                             \
    }
GET_CONVERTED(fmi2GetInteger, fmi2Integer, FMU_MB_TYPE_INTEGER,
              x > (double)INT_MAX ? INT_MAX : x < (double)INT_MIN ? INT_MIN : (fmi2Integer)x)
GET_CONVERTED(fmi2GetBoolean, fmi2Boolean, FMU_MB_TYPE_BOOLEAN, x != 0.0)

/* fmi2GetString/fmi2SetString: the FMUs have no String variables; an empty call in a phase allowing it is fine. */
static fmi2Status no_strings(Instance *s, size_t n, const void *vr, const void *v, int set) {
    if (!arrays_ok(s, n, vr, v) || !(set ? fmu_phase_allows(s, FMU_MB_MASK_fmi2Set, FMU_MB_HINT_fmi2Set)
                                         : fmu_phase_allows(s, FMU_MB_MASK_fmi2Get, FMU_MB_HINT_fmi2Get)))
        return fmi2Error;
    if (n) {
        FMU_ERROR(s, MSG_NO_STRINGS, s->call);
        return fmi2Error;
    }
    return fmi2OK;
}

FMI2_Export fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
    BEGIN("fmi2GetString");
    return no_strings(s, n, vr, v, 0);
}

FMI2_Export fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    BEGIN("fmi2SetReal");
    if (!arrays_ok(s, n, vr, v) || !fmu_phase_allows(s, FMU_MB_MASK_fmi2Set, FMU_MB_HINT_fmi2Set)) return fmi2Error;
    return STATUS(fmu_set(s, vr, n, FMU_MB_TYPE_REAL, v));
}

#define SET_CONVERTED(fn, ctype, TYPE, conv)                                                               \
    FMI2_Export fmi2Status fn(fmi2Component c, const fmi2ValueReference vr[], size_t n, const ctype v[]) { \
        BEGIN(#fn);                                                                                        \
        if (!arrays_ok(s, n, vr, v) || !fmu_phase_allows(s, FMU_MB_MASK_fmi2Set, FMU_MB_HINT_fmi2Set))     \
            return fmi2Error;                                                                              \
        int ok = 1;                                                                                        \
        double buf[CHUNK];                                                                                 \
        for (size_t o = 0; o < n; o += CHUNK) {                                                            \
            size_t m = n - o < CHUNK ? n - o : CHUNK;                                                      \
            for (size_t k = 0; k < m; ++k) buf[k] = conv;                                                  \
            ok &= fmu_set(s, vr + o, m, TYPE, buf);                                                        \
        }                                                                                                  \
        return STATUS(ok);                                                                                 \
    }
SET_CONVERTED(fmi2SetInteger, fmi2Integer, FMU_MB_TYPE_INTEGER, (double)v[o + k])
SET_CONVERTED(fmi2SetBoolean, fmi2Boolean, FMU_MB_TYPE_BOOLEAN, (v[o + k] ? 1.0 : 0.0))

FMI2_Export fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    BEGIN("fmi2SetString");
    return no_strings(s, n, vr, v, 1);
}

/* ------------------------------------------------------------------------------------------------
 * Stepping
 */
FMI2_Export fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real dt, fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    (void)noSetFMUStatePriorToCurrentPoint;
    BEGIN("fmi2DoStep");
    if (!fmu_interface_is(s, 0) || !fmu_phase_allows(s, FMU_MB_MASK_fmi2DoStep, FMU_MB_HINT_fmi2DoStep))
        return fmi2Error;
    return fmu_do_step(s, t, dt);
}

FMI2_Export fmi2Status fmi2CancelStep(fmi2Component c) {
    BEGIN("fmi2CancelStep");
    if (!fmu_interface_is(s, 0)) return fmi2Error;
    FMU_ERROR(s, MSG_NO_ASYNCHRONOUS_STEP, s->call);
    return fmi2Error;
}

/* ------------------------------------------------------------------------------------------------
 * FMU states
 */
FMI2_Export fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    BEGIN_IN("fmi2GetFMUstate", fmi2GetFMUstate);
    return STATUS(fmu_get_state(s, state));
}

FMI2_Export fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    BEGIN_IN("fmi2SetFMUstate", fmi2SetFMUstate);
    return STATUS(fmu_set_state(s, state));
}

FMI2_Export fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    BEGIN("fmi2FreeFMUstate");
    return STATUS(fmu_free_state(s, state));
}

FMI2_Export fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    BEGIN("fmi2SerializedFMUstateSize");
    return STATUS(fmu_state_size(s, state, size));
}

FMI2_Export fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    BEGIN("fmi2SerializeFMUstate");
    return STATUS(fmu_serialize_state(s, state, bytes, size));
}

FMI2_Export fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                               fmi2FMUstate *state) {
    BEGIN("fmi2DeSerializeFMUstate");
    return STATUS(fmu_deserialize_state(s, bytes, size, state));
}

/* ------------------------------------------------------------------------------------------------
 * Status inquiries: this FMU steps synchronously; fmi2LastSuccessfulTime and fmi2Terminated apply
 */
/* fmi2OK if `kind` is `offered` (-1: none) and the call may be answered; else the error or fmi2Discard. */
static fmi2Status inquiry(Instance *s, const void *value, fmi2StatusKind kind, int offered) {
    if (!fmu_interface_is(s, 0)) return fmi2Error;
    if (!fmu_phase_allows(s, FMU_MB_MASK_fmi2Status, FMU_MB_HINT_fmi2Status)) return fmi2Error;
    if (!value) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, "the value pointer");
        return fmi2Error;
    }
    if ((int)kind == offered) return fmi2OK;
    fmu_say(s, fmi2Discard, MSG_STATUS_UNAVAILABLE, s->call, (int)kind);
    return fmi2Discard;
}

#define UNAVAILABLE_STATUS(name, type)                                                     \
    FMI2_Export fmi2Status name(fmi2Component c, const fmi2StatusKind kind, type *value) { \
        BEGIN(#name);                                                                      \
        return inquiry(s, value, kind, -1);                                                \
    }
UNAVAILABLE_STATUS(fmi2GetStatus, fmi2Status)
UNAVAILABLE_STATUS(fmi2GetIntegerStatus, fmi2Integer)
UNAVAILABLE_STATUS(fmi2GetStringStatus, fmi2String)

FMI2_Export fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Real *value) {
    BEGIN("fmi2GetRealStatus");
    fmi2Status st = inquiry(s, value, kind, fmi2LastSuccessfulTime);
    if (st == fmi2OK) *value = s->last_ok;
    return st;
}

FMI2_Export fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Boolean *value) {
    BEGIN("fmi2GetBooleanStatus");
    fmi2Status st = inquiry(s, value, kind, fmi2Terminated);
    if (st == fmi2OK) *value = fmi2False;     /* the FMU never asks the master to end the simulation */
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Directional derivatives (both interfaces; a model without them refuses: providesDirectionalDerivative = false)
 */
FMI2_Export fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                                    size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                                    size_t nKnown, const fmi2Real dvKnown[], fmi2Real dvUnknown[]) {
    BEGIN("fmi2GetDirectionalDerivative");
    if (!fmu_has_directional_derivatives()) {
        FMU_ERROR(s, MSG_NO_DIRECTIONAL_DERIVATIVE, s->call);
        return fmi2Error;
    }
    if (!fmu_phase_allows(s, FMU_MB_MASK_fmi2GetDirectionalDerivative, FMU_MB_HINT_fmi2GetDirectionalDerivative) ||
        !arrays_ok(s, nUnknown, vUnknown_ref, dvUnknown) || !arrays_ok(s, nKnown, vKnown_ref, dvKnown))
        return fmi2Error;
    return STATUS(fmu_get_directional_derivative(s, vUnknown_ref, nUnknown, vKnown_ref, nKnown, dvKnown, dvUnknown));
}

/* ------------------------------------------------------------------------------------------------
 * Output derivatives (co-simulation; a model without them refuses: maxOutputDerivativeOrder = 0)
 */
FMI2_Export fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                                    const fmi2Integer order[], fmi2Real v[]) {
    BEGIN("fmi2GetRealOutputDerivatives");
    if (!fmu_interface_is(s, 0)) return fmi2Error;
    if (!fmu_has_output_derivatives()) {
        FMU_ERROR(s, MSG_NO_OUTPUT_DERIVATIVES, s->call);
        return fmi2Error;
    }
    if (!fmu_phase_allows(s, FMU_MB_MASK_fmi2GetRealOutputDerivatives, FMU_MB_HINT_fmi2GetRealOutputDerivatives) ||
        !arrays_ok(s, n, vr, v) || !api_arrays_ok(s, n, vr, order, "vr", "order"))
        return fmi2Error;
    return STATUS(fmu_get_output_derivatives(s, vr, n, order, v));
}

/* ------------------------------------------------------------------------------------------------
 * What this FMU does not offer (modelDescription: canInterpolateInputs = false)
 */

FMI2_Export fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                                   const fmi2Integer order[], const fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    BEGIN("fmi2SetRealInputDerivatives");
    if (!fmu_interface_is(s, 0)) return fmi2Error;
    FMU_ERROR(s, MSG_NO_INPUT_DERIVATIVES, s->call);
    return fmi2Error;
}
