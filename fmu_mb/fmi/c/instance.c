/* The FMU instance: life cycle, logging settings, variable access and stepping, over the model contract
 * (model.h). What every fmu_mb FMU does the same way:
 *
 *  - A refused call has no effect and answers fmi2Error with a logged message; errors and warnings always
 *    reach the host's logger, debug messages follow loggingOn / fmi2SetDebugLogging.
 *  - Parameters are checked at fmi2ExitInitializationMode (by the model, every offending one named); inputs
 *    that are NaN or infinite are refused and the previous value kept; outputs cannot be set.
 *  - fmi2DoStep: currentCommunicationPoint must equal the FMU's time; the step must be finite, > 0 and end
 *    before a defined stop time. A step whose result the model refuses (model_problem: non-finite outputs,
 *    a state beyond the FMU's limits, a constraint violated beyond its bound) is undone: fmi2Error, state
 *    and outputs of t kept. The same checks run at fmi2ExitInitializationMode, which can then be retried
 *    with other parameters.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const PHASES[] = FMU_MB_PHASE_NAMES;

int fmu_phase_allows(Instance *s, unsigned mask, const char *hint) {
    if ((mask >> s->phase) & 1u) return 1;
    FMU_ERROR(s, MSG_PHASE_REFUSED, s->call, PHASES[s->phase], s->me ? "Model Exchange" : "co-simulation",
              hint && *hint ? "; " : "", hint ? hint : "");
    return 0;
}

int fmu_interface_is(Instance *s, int me) {
    if (s->me == me) return 1;
    FMU_ERROR(s, MSG_OTHER_INTERFACE, s->call, me ? " Model Exchange" : " co-simulation",
              s->me ? "Model Exchange" : "co-simulation");
    return 0;
}

double fmu_param(const Instance *s, int role, int aux) {
    for (int i = 0; i < FMU_MB_NVARS; ++i)
        if (FMU_MB_VARS[i].role == role && (role != FMU_MB_ROLE_GRAVITY || FMU_MB_VARS[i].aux == aux))
            return s->values[i];
    return NAN;
}

int fmu_has_param(int role) {
    for (int i = 0; i < FMU_MB_NVARS; ++i)
        if (FMU_MB_VARS[i].role == role) return 1;
    return 0;
}

/* Parameter ranges and types, every offending parameter named: a model option in the words of
 * fmu_mb.model.options (a Choice names its codes, a Count its interval), any other parameter its range. */
int fmu_check_parameters(Instance *s) {
    int ok = 1;
    char c[32], unit[64];
    for (int k = 0; k < s->n_params; ++k) {
        int i = s->params[k];
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        double val = s->values[i];
        if (!v->has_range || (v->min <= val && val <= v->max)) continue;
        if (v->role == FMU_MB_ROLE_OPTION && v->type == FMU_MB_TYPE_INTEGER && v->extra)
            FMU_ERROR(s, MSG_PARAMETER_CHOICE, v->name, v->extra, val);
        else if (v->role == FMU_MB_ROLE_OPTION && v->type == FMU_MB_TYPE_INTEGER) {
            snprintf(c, sizeof c, "%.0f", val);         /* an Integer variable: a whole number, written as one */
            FMU_ERROR(s, MSG_PARAMETER_COUNT, v->name, v->min, v->max, c);
        }
        else if (v->role == FMU_MB_ROLE_OPTION)
            FMU_ERROR(s, MSG_PARAMETER_VALUE, v->name, v->min, v->max, fmu_unit_suffix(v, unit), fmu_repr(val, c));
        else
            FMU_ERROR(s, MSG_PARAMETER_RANGE, v->name, v->min, v->max, fmu_unit_suffix(v, unit), val);
        ok = 0;
    }
    return ok;
}

/* ------------------------------------------------------------------------------------------------
 * Life cycle
 */
static char *with_separator(const char *dir) {
    size_t n = strlen(dir);
    char *out = malloc(n + 2);
    if (!out) return NULL;
    strcpy(out, dir);
    if (n == 0 || (dir[n - 1] != '/' && dir[n - 1] != '\\')) strcpy(out + n, "/");
    return out;
}

/* `dir` (malloc'ed, with a trailing separator) if it holds this FMU's resource marker, else NULL. */
static char *our_resources(const char *dir) {
    char *d = with_separator(dir), probe[4200];
    if (!d) return NULL;
    snprintf(probe, sizeof probe, "%s%s", d, FMU_MB_RESOURCE_MARKER);
    FILE *f = fopen(probe, "rb");
    if (f) {
        fclose(f);
        return d;
    }
    free(d);
    return NULL;
}

#define PATH_BYTES 4096
/* fmuResourceLocation -> the resources folder, or NULL and why. The decoded URI is tried first (the
 * standard); a host that put a raw path into the URI without encoding it is understood where the decoded
 * form is not this FMU's resources but the raw one is. */
static char *resources_dir(const char *uri, char *why, size_t wsize) {
    char decoded[PATH_BYTES], raw[PATH_BYTES], reason[512] = "", raw_why[64];
    if (!uri || !*uri) {
        snprintf(why, wsize, MSG_RESOURCES_MISSING, uri ? "empty" : "NULL");
        return NULL;
    }
    char *found = NULL;
    int ok_dec = fmu_decode_file_uri(uri, decoded, sizeof decoded, 1, reason, sizeof reason);
    if (ok_dec) found = our_resources(decoded);
    if (!found && fmu_decode_file_uri(uri, raw, sizeof raw, 0, raw_why, sizeof raw_why)) found = our_resources(raw);
    if (found) return found;
    if (ok_dec)
        snprintf(why, wsize, MSG_RESOURCES_NOT_OURS, uri, decoded, FMU_MB_RESOURCE_MARKER);
    else
        snprintf(why, wsize, MSG_RESOURCES_UNUSABLE, uri, reason);
    return NULL;
}

static void reset_values(Instance *s) {
    for (int i = 0; i < FMU_MB_NVARS; ++i) s->values[i] = FMU_MB_VARS[i].start;
    for (int k = 0; k < s->n_outputs; ++k) s->values[s->outputs[k]] = 0.0;
    for (int k = 0; k < s->n_locals; ++k) s->values[s->locals[k]] = 0.0;
    for (int k = 0; k < s->n_inputs; ++k) s->held[k] = s->values[s->inputs[k]];
}

static void release(Instance *s) {
    s->magic = 0;
    free(s->name);
    free(s->resources);
    free(s->values);
    free(s->held);
    free(s->built);
    free(s->kept);
    free(s->params);
    free(s->inputs);
    free(s->outputs);
    free(s->locals);
    free(s);
}

/* An FMI 3.0 resourcePath (a folder path) -> the resources folder, or NULL and why. */
static char *resources_at(const char *path, char *why, size_t wsize) {
    if (!path) {
        snprintf(why, wsize, MSG_RESOURCES_PATH_MISSING);
        return NULL;
    }
    char *found = our_resources(path);
    if (!found) snprintf(why, wsize, MSG_RESOURCES_PATH_NOT_OURS, path, FMU_MB_RESOURCE_MARKER);
    return found;
}

Instance *fmu_instantiate(const char *name, int type, const char *guid, const char *resources_location, int is_path,
                          const fmi2CallbackFunctions *cb, int logging_on) {
    char why[2600];
    const char *shown = name && fmu_valid_utf8(name) ? name : "";
    if (!cb || !cb->logger) {
        fprintf(stderr, MSG_NO_LOGGER "\n", FMU_MB_MODEL_ID);
        return NULL;
    }
    if (!name || !*name) {
        fmu_say_to(cb, shown, fmi2Error, MSG_NAME_EMPTY);
        return NULL;
    }
    if (!fmu_valid_utf8(name)) {
        fmu_say_to(cb, shown, fmi2Error, MSG_NAME_NOT_UTF8);
        return NULL;
    }
    if (type != fmi2CoSimulation && type != fmi2ModelExchange) {
        fmu_say_to(cb, shown, fmi2Error, MSG_UNKNOWN_FMU_TYPE, type);
        return NULL;
    }
    if (type == fmi2ModelExchange && FMU_MB_NSTATES == 0) {
        fmu_say_to(cb, shown, fmi2Error, MSG_NOT_COSIMULATION, type);
        return NULL;
    }
    if (!guid || strcmp(guid, FMU_MB_GUID) != 0) {
        fmu_say_to(cb, shown, fmi2Error, MSG_GUID_MISMATCH, guid ? guid : "(NULL)", FMU_MB_GUID);
        return NULL;
    }
    char *resources = is_path ? resources_at(resources_location, why, sizeof why)
                              : resources_dir(resources_location, why, sizeof why);
    if (!resources) {
        fmu_say_to(cb, shown, fmi2Error, MSG_INSTANTIATE_REFUSED, why);
        return NULL;
    }
    Instance *s = calloc(1, sizeof *s);
    size_t n = (size_t)FMU_MB_NVARS + 1;
    if (s) {
        s->magic = INSTANCE_MAGIC;
        s->name = malloc(strlen(name) + 1);
        s->values = calloc(n, sizeof(double));
        s->held = calloc(n, sizeof(double));
        s->built = calloc(n, sizeof(double));
        s->kept = calloc(2 * n, sizeof(double));
        s->params = calloc(n, sizeof(int));
        s->inputs = calloc(n, sizeof(int));
        s->outputs = calloc(n, sizeof(int));
        s->locals = calloc(n, sizeof(int));
    }
    if (!s || !s->name || !s->values || !s->held || !s->built || !s->kept || !s->params || !s->inputs || !s->outputs ||
        !s->locals) {
        if (s) release(s);
        free(resources);
        fmu_say_to(cb, shown, fmi2Error, MSG_OUT_OF_MEMORY, "fmi2Instantiate");
        return NULL;
    }
    strcpy(s->name, name);
    s->resources = resources;
    s->cb = *cb;
    s->debug = logging_on != 0;
    s->call = "fmi2Instantiate";
    s->me = type == fmi2ModelExchange;
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        int c = FMU_MB_VARS[i].causality;
        if (c == FMU_MB_CAUSALITY_PARAMETER) s->params[s->n_params++] = i;
        else if (c == FMU_MB_CAUSALITY_INPUT) s->inputs[s->n_inputs++] = i;
        else if (c == FMU_MB_CAUSALITY_LOCAL) s->locals[s->n_locals++] = i;
        else s->outputs[s->n_outputs++] = i;
    }
    reset_values(s);
    if (!model_create(s)) {
        release(s);
        return NULL;
    }
    return s;
}

void fmu_free(Instance *s) {
    model_free(s);
    release(s);
}

void fmu_reset(Instance *s) {
    model_reset(s);
    s->ready = 0;
    s->phase = FMU_MB_PHASE_INSTANTIATED;
    s->t = s->t_start = s->last_ok = 0.0;
    s->has_stop = 0;
    reset_values(s);
}

int fmu_set_debug_logging(Instance *s, int on, size_t n, const char *const categories[]) {
    if (n && !categories) {
        FMU_ERROR(s, MSG_LOG_CATEGORIES_NULL, s->call, (double)n);
        return 0;
    }
    unsigned mask = 0;
    for (size_t i = 0; i < n; ++i) {
        int k = fmu_category_index(categories[i]);
        if (k < 0) {
            FMU_ERROR(s, MSG_LOG_CATEGORY_UNKNOWN, s->call, categories[i] ? categories[i] : "(NULL)", FMU_MB_LOG_CATEGORY_LIST);
            return 0;
        }
        mask |= 1u << k;
    }
    s->debug = on != 0;
    s->categories = mask;
    return 1;
}

int fmu_setup_experiment(Instance *s, int tol_defined, double tol, double start, int stop_defined, double stop) {
    char a[32], b[32];
    if (!(isfinite(start) && fabs(start) <= FMU_MB_TIME_LIMIT)) {
        FMU_ERROR(s, MSG_START_TIME, FMU_MB_TIME_LIMIT, fmu_repr(start, a));
        return 0;
    }
    if (stop_defined && (isnan(stop) || stop < start)) {
        FMU_ERROR(s, MSG_STOP_BEFORE_START, fmu_repr(stop, a), fmu_repr(start, b));
        return 0;
    }
    if (tol_defined && !(isfinite(tol) && tol > 0)) {
        FMU_ERROR(s, MSG_TOLERANCE, fmu_repr(tol, a));
        return 0;
    }
    s->t = s->t_start = start;
    s->has_stop = stop_defined && !isinf(stop);
    s->t_stop = s->has_stop ? stop : NAN;
    return 1;
}

int fmu_enter_initialization(Instance *s) {
    s->phase = FMU_MB_PHASE_INITIALIZATION;
    return 1;
}

int fmu_ensure_built(Instance *s) {
    int same = s->ready;
    for (int k = 0; same && k < s->n_params; ++k) same = s->built[k] == s->values[s->params[k]];
    if (same) return 1;
    s->ready = 0;
    if (!model_build(s)) return 0;
    for (int k = 0; k < s->n_params; ++k) s->built[k] = s->values[s->params[k]];
    s->ready = 1;
    if (!model_evaluate(s)) {
        s->ready = 0;
        return 0;
    }
    return 1;
}

int fmu_exit_initialization(Instance *s) {
    char msg[4096];
    if (!fmu_ensure_built(s)) return 0;
    if (s->me && (!model_take_inputs(s) || !model_evaluate(s))) {     /* inputs set since the build */
        s->ready = 0;
        return 0;
    }
    fmu_where where = {FMU_WHERE_AT, s->call, s->t, 0.0, ""};
    if (model_problem(s, &where, msg, sizeof msg)) {
        s->ready = 0;                          /* built again at the next attempt */
        FMU_ERROR(s, MSG_INIT_RESULT_REFUSED, msg);
        return 0;
    }
    s->phase = s->me ? FMU_MB_PHASE_EVENT : FMU_MB_PHASE_STEPPING;
    s->last_ok = s->t;
    s->dirty = 0;
    return 1;
}

int fmu_terminate(Instance *s) {
    s->phase = FMU_MB_PHASE_TERMINATED;
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * Stepping
 */
/* After a refused step: the inputs in force before it are in force again (the outputs kept were computed with
 * them); the inputs as set stay pending for the next step. */
static void back_to_held(Instance *s, const double *held_before) {
    if (!memcmp(held_before, s->held, (size_t)s->n_inputs * 8)) return;
    memcpy(s->held, held_before, (size_t)s->n_inputs * 8);
    model_restore_inputs(s);
}

fmi2Status fmu_do_step(Instance *s, double t, double dt) {
    char a[32], b[32], msg[4096];
    if (!(isfinite(dt) && dt > 0.0)) {
        FMU_ERROR(s, MSG_STEP_SIZE, fmu_repr(dt, a));
        return fmi2Error;
    }
    if (!isfinite(t) || fabs(t - s->t) > 1e-9 * fmax(1.0, fabs(s->t)) + 1e-12) {
        FMU_ERROR(s, MSG_STEP_NOT_CONTIGUOUS, fmu_repr(t, a), fmu_repr(s->t, b));
        return fmi2Error;
    }
    double end = t + dt;
    if (s->has_stop && end > s->t_stop + 1e-9 * fmax(1.0, fabs(s->t_stop))) {
        FMU_ERROR(s, MSG_STEP_AFTER_STOP, fmu_repr(end, a), fmu_repr(s->t_stop, b));
        return fmi2Error;
    }
    if (!(fabs(end) <= FMU_MB_TIME_LIMIT)) {
        FMU_ERROR(s, MSG_STEP_BEYOND_TIME_LIMIT, fmu_repr(end, a), FMU_MB_TIME_LIMIT);
        return fmi2Error;
    }
    double *held_before = s->kept + FMU_MB_NVARS + 1;
    for (int k = 0; k < s->n_outputs; ++k) s->kept[k] = s->values[s->outputs[k]];
    for (int k = 0; k < s->n_locals; ++k) s->kept[s->n_outputs + k] = s->values[s->locals[k]];
    memcpy(held_before, s->held, (size_t)s->n_inputs * 8);
    if (!model_step(s, t, dt)) {
        back_to_held(s, held_before);
        return fmi2Error;
    }
    s->t = end;
    fmu_where where = {FMU_WHERE_STEP, s->call, t, dt, ""};
    int problem = !model_evaluate(s) ? (snprintf(msg, sizeof msg, MSG_EVALUATION_FAILED, fmu_where_text(&where)), 1)
                                     : model_problem(s, &where, msg, sizeof msg);
    if (problem) {
        model_undo_step(s);
        for (int k = 0; k < s->n_outputs; ++k) s->values[s->outputs[k]] = s->kept[k];
        for (int k = 0; k < s->n_locals; ++k) s->values[s->locals[k]] = s->kept[s->n_outputs + k];
        s->t = t;
        FMU_ERROR(s, MSG_STEP_RESULT_REFUSED, msg, t);
        back_to_held(s, held_before);
        return fmi2Error;
    }
    s->last_ok = s->t;
    return model_step_accepted(s, t);
}

/* ------------------------------------------------------------------------------------------------
 * Variables
 */
static int check_vrs(Instance *s, const fmi2ValueReference vr[], size_t n, int type) {
    static const char *const names[] = {"Real", "Integer", "Boolean"};
    for (size_t k = 0; k < n; ++k) {
        if (vr[k] >= (fmi2ValueReference)FMU_MB_NVARS) {
            FMU_ERROR(s, MSG_VR_UNKNOWN, s->call, vr[k]);
            return 0;
        }
        const fmu_mb_var *v = &FMU_MB_VARS[vr[k]];
        if (v->type != type) {
            FMU_ERROR(s, MSG_VR_WRONG_TYPE, s->call, vr[k], v->name, names[v->type], names[type]);
            return 0;
        }
    }
    return 1;
}

int fmu_get(Instance *s, const fmi2ValueReference vr[], size_t n, int type, double out[]) {
    if (!check_vrs(s, vr, n, type)) return 0;
    int any_output = 0;
    for (size_t k = 0; k < n; ++k)
        any_output |= FMU_MB_VARS[vr[k]].causality == FMU_MB_CAUSALITY_OUTPUT ||
                      FMU_MB_VARS[vr[k]].causality == FMU_MB_CAUSALITY_LOCAL;
    if (any_output && s->phase == FMU_MB_PHASE_INITIALIZATION && !fmu_ensure_built(s)) return 0;
    if (any_output && FMU_MB_FEEDTHROUGH && s->ready && !model_evaluate(s)) return 0;
    if (any_output && s->me && s->ready && !fmu_evaluated(s)) return 0;
    for (size_t k = 0; k < n; ++k)
        if (!isfinite(s->values[vr[k]])) {
            char a[32];
            FMU_ERROR(s, MSG_VALUE_NOT_FINITE, s->call, FMU_MB_VARS[vr[k]].name, fmu_repr(s->values[vr[k]], a));
            return 0;
        }
    for (size_t k = 0; k < n; ++k) out[k] = s->values[vr[k]];
    return 1;
}

/* One value: outputs and fixed parameters refused, NaN refused, trajectory inputs this FMU cannot
 * change refused; the previous value kept. */
static int set_one(Instance *s, fmi2ValueReference vr, double x) {
    const fmu_mb_var *v = &FMU_MB_VARS[vr];
    char a[32], b[32];
    if (v->causality == FMU_MB_CAUSALITY_OUTPUT || v->causality == FMU_MB_CAUSALITY_LOCAL) {
        FMU_ERROR(s, MSG_SET_OUTPUT, s->call, v->name);
        return 0;
    }
    if (v->causality == FMU_MB_CAUSALITY_PARAMETER && s->phase != FMU_MB_PHASE_INSTANTIATED &&
        s->phase != FMU_MB_PHASE_INITIALIZATION) {
        FMU_ERROR(s, MSG_SET_FIXED_PARAMETER, s->call, v->name, PHASES[s->phase]);
        return 0;
    }
    if (!isfinite(x)) {
        FMU_ERROR(s, MSG_SET_NOT_FINITE, s->call, v->name, fmu_repr(x, a), fmu_repr(s->values[vr], b));
        return 0;
    }
    if (v->fixed && x != v->start) {
        FMU_ERROR(s, MSG_SET_FIXED_TRAJECTORY, s->call, v->name, fmu_repr(x, a), fmu_repr(s->values[vr], b));
        return 0;
    }
    s->values[vr] = x;
    if (FMU_MB_FEEDTHROUGH && v->causality == FMU_MB_CAUSALITY_INPUT)        /* in force at once */
        for (int k = 0; k < s->n_inputs; ++k)
            if (s->inputs[k] == (int)vr) s->held[k] = x;
    return 1;
}

int fmu_has_directional_derivatives(void) { return model_has_directional_derivatives(); }

int fmu_evaluated(Instance *s) {
    if (!s->dirty) return 1;
    if (!model_evaluate(s)) return 0;
    s->dirty = 0;
    return 1;
}

int fmu_get_directional_derivative(Instance *s, const fmi2ValueReference unknown[], size_t nu,
                                   const fmi2ValueReference known[], size_t nk, const double dv[], double dz[]) {
    char why[1200], a[32];
    if (!check_vrs(s, unknown, nu, FMU_MB_TYPE_REAL) || !check_vrs(s, known, nk, FMU_MB_TYPE_REAL)) return 0;
    for (size_t k = 0; k < nk; ++k)
        if (!isfinite(dv[k])) {
            FMU_ERROR(s, MSG_DD_SEED, s->call, (int)k, fmu_repr(dv[k], a));
            return 0;
        }
    if (s->phase == FMU_MB_PHASE_INITIALIZATION && !fmu_ensure_built(s)) return 0;
    if (!s->ready) {
        FMU_ERROR(s, MSG_DD_UNAVAILABLE, s->call);
        return 0;
    }
    if (s->me && !fmu_evaluated(s)) return 0;
    if (!model_directional_derivative(s, unknown, nu, known, nk, dv, dz, why, sizeof why)) {
        for (size_t k = 0; k < nu; ++k) dz[k] = 0.0;
        FMU_ERROR(s, "%s", why);
        return 0;
    }
    return 1;
}

int fmu_has_output_derivatives(void) { return model_has_output_derivatives(); }

int fmu_get_output_derivatives(Instance *s, const fmi2ValueReference vr[], size_t n, const int order[], double out[]) {
    char why[1200];
    if (!check_vrs(s, vr, n, FMU_MB_TYPE_REAL)) return 0;
    for (size_t k = 0; k < n; ++k) {
        const fmu_mb_var *v = &FMU_MB_VARS[vr[k]];
        if (v->causality != FMU_MB_CAUSALITY_OUTPUT) {
            FMU_ERROR(s, MSG_OD_NOT_OUTPUT, s->call, v->name);
            return 0;
        }
        if (order[k] != 1) {
            FMU_ERROR(s, MSG_OD_ORDER, s->call, (int)order[k], v->name);
            return 0;
        }
    }
    if (!s->ready) {
        FMU_ERROR(s, MSG_DD_UNAVAILABLE, s->call);
        return 0;
    }
    if (!model_output_derivatives(s, vr, n, out, why, sizeof why)) {
        for (size_t k = 0; k < n; ++k) out[k] = 0.0;
        FMU_ERROR(s, "%s", why);
        return 0;
    }
    return 1;
}

int fmu_set(Instance *s, const fmi2ValueReference vr[], size_t n, int type, const double in[]) {
    if (!check_vrs(s, vr, n, type)) return 0;
    int ok = 1, any_input = 0;
    for (size_t k = 0; k < n; ++k) {
        ok &= set_one(s, vr[k], in[k]);
        any_input |= FMU_MB_VARS[vr[k]].causality == FMU_MB_CAUSALITY_INPUT;
    }
    /* Model Exchange: the inputs act at once on the derivatives and outputs (no step holds them) */
    if (any_input && s->me && s->ready && s->phase != FMU_MB_PHASE_INITIALIZATION) {
        if (!model_take_inputs(s)) return 0;
        s->dirty = FMU_STALE;
    }
    return ok;
}
