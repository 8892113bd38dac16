/* What every signal block (a stateless FMU core model without a mechanism: controller.c, excitation.c) does alike:
 * the model.h functions of a model with no state, no step of its own, no Model Exchange and no directional
 * derivatives, and the table of its channels' value references. A block file defines FMU_MB_FEEDTHROUGH,
 * model_create, model_free and model_evaluate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "block.h"

int block_channels(Instance *s, int (*slot_of)(int role), int n_roles, int output_role, int *channels, int **vr) {
    *channels = 0;
    for (int i = 0; i < FMU_MB_NVARS; ++i)
        if (FMU_MB_VARS[i].role == output_role) ++*channels;
    for (int k = 0; k < n_roles; ++k) {
        vr[k] = calloc((size_t)*channels + 1, sizeof(int));
        if (!vr[k]) {
            for (int j = 0; j < k; ++j) free(vr[j]);
            FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
            return 0;
        }
    }
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        int k = slot_of(FMU_MB_VARS[i].role), ch = FMU_MB_VARS[i].aux;
        if (k >= 0 && k < n_roles && ch >= 0 && ch < *channels) vr[k][ch] = i;
    }
    return 1;
}

void model_reset(Instance *s) { (void)s; }

int model_build(Instance *s) { return fmu_check_parameters(s); }

int model_restore_inputs(Instance *s) {
    (void)s;
    return 1;
}

/* No directional derivatives (the modelDescription: providesDirectionalDerivative = false). */
int model_has_directional_derivatives(void) { return 0; }

int model_directional_derivative(Instance *s, const fmi2ValueReference unknown[], size_t nu,
                                 const fmi2ValueReference known[], size_t nk, const double dv[], double dz[],
                                 char *why, size_t len) {
    (void)s; (void)unknown; (void)nu; (void)known; (void)nk; (void)dv; (void)dz;
    snprintf(why, len, MSG_NO_DIRECTIONAL_DERIVATIVE, "fmi2GetDirectionalDerivative");
    return 0;
}

/* No output derivatives (the modelDescription: maxOutputDerivativeOrder = 0). */
int model_has_output_derivatives(void) { return 0; }

int model_output_derivatives(Instance *s, const fmi2ValueReference vr[], size_t n, double dz[], char *why,
                             size_t len) {
    (void)vr; (void)n; (void)dz;
    snprintf(why, len, MSG_NO_OUTPUT_DERIVATIVES, s->call);
    return 0;
}

/* Inputs act at once (FMU_MB_FEEDTHROUGH); no continuous states, so no Model Exchange instance of a block exists
 * (fmi2Instantiate refuses one: FMU_MB_NSTATES = 0). */
int model_take_inputs(Instance *s) {
    (void)s;
    return 1;
}

int model_step(Instance *s, double t, double dt) {
    (void)s;
    (void)t;
    (void)dt;
    return 1;
}

fmi2Status model_step_accepted(Instance *s, double t) {
    (void)s;
    (void)t;
    return fmi2OK;
}

void model_undo_step(Instance *s) { (void)s; }

int model_problem(Instance *s, fmu_where *where, char *msg, size_t len) {
    char b[32];
    int bad = -1, nbad = 0;
    for (int k = 0; k < s->n_outputs; ++k)
        if (!isfinite(s->values[s->outputs[k]])) {
            if (bad < 0) bad = s->outputs[k];
            ++nbad;
        }
    if (bad < 0) return 0;
    snprintf(msg, len, MSG_OUTPUT_NOT_FINITE, fmu_where_text(where), FMU_MB_VARS[bad].name,
             fmu_repr(s->values[bad], b), nbad);
    return 1;
}

int64_t model_record_size(const Instance *s) {
    (void)s;
    return 0;
}

void model_write_record(const Instance *s, double *record, int64_t *counter) {
    (void)s;
    (void)record;
    *counter = 0;
}

int model_read_record(Instance *s, const double *record, int64_t n, int64_t counter, char *why, size_t len) {
    (void)s;
    (void)record;
    (void)counter;
    if (n == 0) return 1;
    snprintf(why, len, MSG_BLOCK_RECORD, (int)n);
    return 0;
}
