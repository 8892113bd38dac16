/* The PD joint controller as an FMU model (model.h; its interface: fmu_mb.fmi.controller). Per channel i:
 *
 *     tau[i] = sat(tau_ff[i] + Kp[i]·(q_ref[i] − q[i]) + Kd[i]·(qd_ref[i] − qd[i]), ±tau_max[i])
 *
 * Stateless, with direct feedthrough: tau is evaluated from the current inputs whenever it is read (the
 * modelDescription lists those input dependencies). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

const int FMU_MB_FEEDTHROUGH = 1;

/* value references of every role per channel (the variables' aux) */
enum { KP, KD, TMAX, QREF, QDREF, TFF, Q, QD, TAU, N_ROLES };

static int slot_of(int role) {
    switch (role) {
    case FMU_MB_ROLE_GAIN_P: return KP;
    case FMU_MB_ROLE_GAIN_D: return KD;
    case FMU_MB_ROLE_TAU_MAX: return TMAX;
    case FMU_MB_ROLE_Q_REF: return QREF;
    case FMU_MB_ROLE_QD_REF: return QDREF;
    case FMU_MB_ROLE_TAU_FF: return TFF;
    case FMU_MB_ROLE_Q_MEASURED: return Q;
    case FMU_MB_ROLE_QD_MEASURED: return QD;
    case FMU_MB_ROLE_TAU_COMMAND: return TAU;
    default: return -1;
    }
}
typedef struct {
    int channels;
    int *vr[N_ROLES];
} Controller;

int model_create(Instance *s) {
    Controller *c = calloc(1, sizeof *c);
    if (!c) {
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    for (int i = 0; i < FMU_MB_NVARS; ++i)
        if (FMU_MB_VARS[i].role == FMU_MB_ROLE_TAU_COMMAND) c->channels++;
    for (int k = 0; k < N_ROLES; ++k) {
        c->vr[k] = calloc((size_t)c->channels + 1, sizeof(int));
        if (!c->vr[k]) {
            for (int j = 0; j <= k; ++j) free(c->vr[j]);
            free(c);
            FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
            return 0;
        }
    }
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        int k = slot_of(FMU_MB_VARS[i].role), ch = FMU_MB_VARS[i].aux;
        if (k >= 0 && k < N_ROLES && ch >= 0 && ch < c->channels) c->vr[k][ch] = i;
    }
    s->model = c;
    return 1;
}

void model_free(Instance *s) {
    Controller *c = s->model;
    if (!c) return;
    for (int k = 0; k < N_ROLES; ++k) free(c->vr[k]);
    free(c);
    s->model = NULL;
}

void model_reset(Instance *s) { (void)s; }

int model_build(Instance *s) { return fmu_check_parameters(s); }

int model_evaluate(Instance *s) {
    Controller *c = s->model;
    double *v = s->values;
    for (int i = 0; i < c->channels; ++i) {
        double u = v[c->vr[TFF][i]] + v[c->vr[KP][i]] * (v[c->vr[QREF][i]] - v[c->vr[Q][i]]) +
                   v[c->vr[KD][i]] * (v[c->vr[QDREF][i]] - v[c->vr[QD][i]]);
        double m = v[c->vr[TMAX][i]];
        v[c->vr[TAU][i]] = u > m ? m : u < -m ? -m : u;
    }
    return 1;
}

int model_restore_inputs(Instance *s) {
    (void)s;
    return 1;
}

/* The controller offers no directional derivatives (its modelDescription: providesDirectionalDerivative = false). */
int model_has_directional_derivatives(void) { return 0; }

int model_directional_derivative(Instance *s, const fmi2ValueReference unknown[], size_t nu,
                                 const fmi2ValueReference known[], size_t nk, const double dv[], double dz[],
                                 char *why, size_t len) {
    (void)s; (void)unknown; (void)nu; (void)known; (void)nk; (void)dv; (void)dz;
    snprintf(why, len, MSG_NO_DIRECTIONAL_DERIVATIVE, "fmi2GetDirectionalDerivative");
    return 0;
}

/* Inputs act at once anyway (FMU_MB_FEEDTHROUGH); the controller has no continuous states, so no Model Exchange
 * instance of it exists (fmi2Instantiate refuses one: FMU_MB_NSTATES = 0). */
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

int model_problem(Instance *s, const char *where, char *msg, size_t len) {
    char b[32];
    int bad = -1, nbad = 0;
    for (int k = 0; k < s->n_outputs; ++k)
        if (!isfinite(s->values[s->outputs[k]])) {
            if (bad < 0) bad = s->outputs[k];
            ++nbad;
        }
    if (bad < 0) return 0;
    snprintf(msg, len, MSG_OUTPUT_NOT_FINITE, where, FMU_MB_VARS[bad].name, fmu_repr(s->values[bad], b), nbad);
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
    snprintf(why, len, MSG_CONTROLLER_RECORD, (int)n);
    return 0;
}
