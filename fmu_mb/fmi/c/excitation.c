/* The excitation as an FMU model (model.h; its interface: fmu_mb.fmi.excitation): a rectangular pulse added to a
 * signal, per channel i,
 *
 *     y[i] = u[i] + amplitude[i]   for start[i] ≤ t < start[i] + duration[i],   y[i] = u[i] otherwise
 *
 * (a step where duration[i] outlasts the run): a test signal injected into a connection of a system, such as a
 * drive torque pulse on a feed-forward path. Stateless, with direct feedthrough: y is evaluated from the current
 * inputs and time whenever it is read. */
#include <stdlib.h>

#include "block.h"

const int FMU_MB_FEEDTHROUGH = 1;

enum { AMP, START, DURATION, IN, OUT, N_ROLES };

static int slot_of(int role) {
    switch (role) {
    case FMU_MB_ROLE_AMPLITUDE: return AMP;
    case FMU_MB_ROLE_PULSE_START: return START;
    case FMU_MB_ROLE_PULSE_DURATION: return DURATION;
    case FMU_MB_ROLE_SIGNAL_IN: return IN;
    case FMU_MB_ROLE_SIGNAL_OUT: return OUT;
    default: return -1;
    }
}

typedef struct {
    int channels;
    int *vr[N_ROLES];
} Excitation;

int model_create(Instance *s) {
    Excitation *e = calloc(1, sizeof *e);
    if (!e) {
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    if (!block_channels(s, slot_of, N_ROLES, FMU_MB_ROLE_SIGNAL_OUT, &e->channels, e->vr)) {
        free(e);
        return 0;
    }
    s->model = e;
    return 1;
}

void model_free(Instance *s) {
    Excitation *e = s->model;
    if (!e) return;
    for (int k = 0; k < N_ROLES; ++k) free(e->vr[k]);
    free(e);
    s->model = NULL;
}

int model_evaluate(Instance *s) {
    Excitation *e = s->model;
    double *v = s->values;
    for (int i = 0; i < e->channels; ++i) {
        double t0 = v[e->vr[START][i]], on = s->t >= t0 && s->t < t0 + v[e->vr[DURATION][i]];
        v[e->vr[OUT][i]] = v[e->vr[IN][i]] + (on ? v[e->vr[AMP][i]] : 0.0);
    }
    return 1;
}
