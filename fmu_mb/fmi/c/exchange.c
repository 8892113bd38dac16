/*
 * Model Exchange in the FMU core: the host's integrator owns time and the continuous states; the model evaluates
 * the derivatives and outputs at what the host set (model.h: model_set_states, model_evaluate). What a Model
 * Exchange instance does the same way as a co-simulation one: a refused call has no effect and answers
 * fmi2Error with a logged message (a state or time that is not finite or beyond the FMU's limits, a wrong array
 * length). A state slot the option combination in force does not use keeps what the host sets (an integrator
 * perturbs every state to form its Jacobian) and has derivative 0.
 *
 *  - Inputs act at once (fmu_set: model_take_inputs); outputs and derivatives are evaluated when read after
 *    time, states or inputs changed (s->dirty). fmi2GetDerivatives evaluates the derivatives alone (an
 *    integrator's stages read nothing else; the same bits as the outputs' evaluation), the outputs (and
 *    fmi2CompletedIntegratorStep's checks) the whole pipeline.
 *  - Derivatives that are not finite answer fmi2Discard (FMI 2.0: the integrator may retry with a smaller step).
 *  - fmi2CompletedIntegratorStep refuses an accepted step whose result the co-simulation step would refuse
 *    (model_problem: non-finite outputs, a state beyond the FMU's limits, a constraint violated beyond
 *    solver.max_violation).
 *  - No event indicators and no time events: event mode asks for nothing. Constrained mechanisms are integrated
 *    with the Baumgarte-stabilized constraint equations (solver.alpha, solver.beta) of the derivative kernel.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

static int count_ok(Instance *s, size_t nx) {
    if (nx == (size_t)FMU_MB_NSTATES) return 1;
    FMU_ERROR(s, MSG_ME_STATE_COUNT, s->call, (double)nx, FMU_MB_NSTATES);
    return 0;
}

int fmu_set_time(Instance *s, double t) {
    char a[32], b[32];
    if (!(isfinite(t) && fabs(t) <= FMU_MB_TIME_LIMIT)) {
        FMU_ERROR(s, MSG_ME_TIME, FMU_MB_TIME_LIMIT, fmu_repr(t, a), fmu_repr(s->t, b));
        return 0;
    }
    if (t != s->t) s->dirty = FMU_STALE;
    s->t = t;
    return 1;
}

int fmu_set_states(Instance *s, const double x[], size_t nx) {
    char why[1200];
    if (!count_ok(s, nx)) return 0;
    if (!model_set_states(s, x, why, sizeof why)) {
        FMU_ERROR(s, "%s", why);
        return 0;
    }
    s->dirty = FMU_STALE;
    return 1;
}

int fmu_get_states(Instance *s, double x[], size_t nx) {
    if (!count_ok(s, nx)) return 0;
    if (s->phase == FMU_MB_PHASE_INITIALIZATION && !fmu_ensure_built(s)) return 0;
    model_get_states(s, x);
    return 1;
}

int fmu_get_nominals(Instance *s, double x[], size_t nx) {
    if (!count_ok(s, nx)) return 0;
    for (size_t k = 0; k < nx; ++k) x[k] = 1.0;       /* states in m, rad, m/s, rad/s, J: of order 1 */
    return 1;
}

fmi2Status fmu_get_derivatives(Instance *s, double dx[], size_t nx) {
    char a[32], name[64];
    if (!count_ok(s, nx)) return fmi2Error;
    if (s->dirty == FMU_STALE) {                 /* the derivatives alone: the outputs when they are read */
        if (!model_derivatives(s)) return fmi2Error;
        s->dirty = FMU_DERIVATIVES_FRESH;
    }
    int bad = model_get_derivatives(s, dx);
    if (bad < 0) return fmi2OK;
    int nbad = 0;
    for (size_t k = 0; k < nx; ++k) nbad += !isfinite(dx[k]);
    snprintf(name, sizeof name, "state[%d]", bad + 1);
    fmu_say(s, fmi2Discard, MSG_ME_DERIVATIVE_NOT_FINITE, s->call, s->t, name, fmu_repr(dx[bad], a), nbad);
    return fmi2Discard;
}

int fmu_get_event_indicators(Instance *s, size_t ni) {
    if (ni == 0) return 1;
    FMU_ERROR(s, MSG_ME_INDICATOR_COUNT, s->call, (double)ni);
    return 0;
}

int fmu_completed_integrator_step(Instance *s, int *enter_event_mode, int *terminate) {
    char msg[4096];
    *enter_event_mode = 0;
    *terminate = 0;
    if (!fmu_evaluated(s)) return 0;
    fmu_where where = {FMU_WHERE_AT, s->call, s->t, 0.0, ""};
    if (model_problem(s, &where, msg, sizeof msg)) {
        FMU_ERROR(s, MSG_ME_RESULT_REFUSED, msg);
        return 0;
    }
    s->last_ok = s->t;
    return 1;
}

int fmu_new_discrete_states(Instance *s, fmi2EventInfo *info) {
    (void)s;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    return 1;
}

int fmu_enter_event_mode(Instance *s) {
    s->phase = FMU_MB_PHASE_EVENT;
    return 1;
}

int fmu_enter_continuous_time_mode(Instance *s) {
    s->phase = FMU_MB_PHASE_CONTINUOUS;
    return 1;
}
