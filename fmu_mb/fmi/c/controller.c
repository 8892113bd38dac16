/* The PD joint controller as an FMU model (model.h; its interface: fmu_mb.fmi.controller). Per channel i:
 *
 *     tau[i] = sat(tau_ff[i] + Kp[i]·(q_ref[i] − q[i]) + Kd[i]·(qd_ref[i] − qd[i]), ±tau_max[i])   (t ≥ t_enable)
 *     tau[i] = 0                                                                                 (t < t_enable)
 *
 * Stateless, with direct feedthrough: tau is evaluated from the current inputs and time whenever it is read (the
 * modelDescription lists those input dependencies). */
#include <stdlib.h>

#include "block.h"

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
    int enable;             /* value reference of t_enable, or -1 */
    int *vr[N_ROLES];
} Controller;

int model_create(Instance *s) {
    Controller *c = calloc(1, sizeof *c);
    if (!c) {
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    if (!block_channels(s, slot_of, N_ROLES, FMU_MB_ROLE_TAU_COMMAND, &c->channels, c->vr)) {
        free(c);
        return 0;
    }
    c->enable = -1;
    for (int i = 0; i < FMU_MB_NVARS; ++i)
        if (FMU_MB_VARS[i].role == FMU_MB_ROLE_ENABLE_TIME) c->enable = i;
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

int model_evaluate(Instance *s) {
    Controller *c = s->model;
    double *v = s->values;
    int off = c->enable >= 0 && s->t < v[c->enable];
    for (int i = 0; i < c->channels; ++i) {
        if (off) {
            v[c->vr[TAU][i]] = 0.0;
            continue;
        }
        double u = v[c->vr[TFF][i]] + v[c->vr[KP][i]] * (v[c->vr[QREF][i]] - v[c->vr[Q][i]]) +
                   v[c->vr[KD][i]] * (v[c->vr[QDREF][i]] - v[c->vr[QD][i]]);
        double m = v[c->vr[TMAX][i]];
        v[c->vr[TAU][i]] = u > m ? m : u < -m ? -m : u;
    }
    return 1;
}
