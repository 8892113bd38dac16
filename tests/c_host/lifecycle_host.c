/* Heap blocks an FMU leaves behind, and heap calls its steady stepping and its refusals make: a plain C host run
 * with alloc_count.so preloaded.
 * Usage: lifecycle_host BINARY RESOURCES_URI GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS [me=NX] [thread]
 *                       [VR=V | VR:i=V ...]
 *   me=NX   Model Exchange with NX continuous states: each step is fmi2SetReal (the input), fmi2SetTime,
 *           fmi2SetContinuousStates, fmi2GetDerivatives, the Real outputs read, an explicit Euler update and
 *           fmi2CompletedIntegratorStep (default: co-simulation, fmi2SetReal + fmi2DoStep + the outputs read)
 *   thread  the steps and the refused calls run in a thread started for them after the initialization (a rig's
 *           real-time thread stepping an FMU its main thread set up); counted from inside that thread
 *   VR=V    Real start values, VR:i=V Integer (Enumeration) ones, set before fmi2EnterInitializationMode
 * One cycle: fmi2Instantiate, setup, start values, initialization, STEPS steps (input INPUT_VR set to 0.5 before
 * each, the Real outputs OUTPUT_VRS (comma-separated) read after it), then calls the FMU must refuse (a NaN input;
 * co-simulation: a step of negative size and one from the wrong time; Model Exchange: NaN states and a NaN time),
 * then two more steps, a state saved, restored and freed, fmi2Terminate, fmi2FreeInstance. Prints "warm LIVE"
 * after the first cycle, "after LIVE" after CYCLES more, "step CALLS" (heap and mmap calls of the steady steps of
 * the last cycle), "refused CALLS" (those of the refused calls and the steps after them), "refusals N" (refused
 * calls that returned fmi2Error or worse), "steady_logs N" (logger calls during the steady steps) and
 * "refused_logs N". Linux (dlopen). */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"   /* the FMI 2.0 standard's types (fmu_mb/fmi/c/fmi2) */

static long log_calls;

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env;
    (void)name;
    (void)category;
    (void)message;
    (void)status;
    ++log_calls;                 /* (nothing printed: stdio would be the host's allocation, not the FMU's) */
}

#define FN(name) name##TYPE *name = (name##TYPE *)dlsym(lib, #name)
#define MAXV 4096

/* What one cycle's stepping needs and what it counted. */
typedef struct {
    fmi2Component s;
    fmi2SetRealTYPE *set_real;
    fmi2DoStepTYPE *do_step;
    fmi2GetRealTYPE *get_real;
    fmi2SetTimeTYPE *set_time;
    fmi2SetContinuousStatesTYPE *set_states;
    fmi2GetDerivativesTYPE *get_derivatives;
    fmi2CompletedIntegratorStepTYPE *completed;
    long (*calls)(void);
    int steps, nout;
    size_t nx;
    double dt, t, *x, *dx, *bad, *out;
    fmi2ValueReference in, *vrs;
    long step_calls, refused_calls, refusals, steady_logs, refused_logs;
    int failed;
} Cycle;

/* One step of the cycle (co-simulation or Model Exchange by explicit Euler); 0 on failure. */
static int step(Cycle *c) {
    double value = 0.5;
    fmi2Boolean enter_event, terminate;
    if (c->set_real(c->s, &c->in, 1, &value) > 1) return 0;
    if (c->nx) {
        if (c->set_time(c->s, c->t) > 1 || c->set_states(c->s, c->x, c->nx) > 1 ||
            c->get_derivatives(c->s, c->dx, c->nx) > 1)
            return 0;
        c->get_real(c->s, c->vrs, (size_t)c->nout, c->out);
        for (size_t k = 0; k < c->nx; ++k) c->x[k] += c->dt * c->dx[k];
        if (c->completed(c->s, fmi2True, &enter_event, &terminate) > 1) return 0;
    } else {
        if (c->do_step(c->s, c->t, c->dt, fmi2True) > 1) return 0;
        c->get_real(c->s, c->vrs, (size_t)c->nout, c->out);
    }
    c->t += c->dt;
    return 1;
}

/* The steady steps, the refused calls and two steps after them, counted. */
static void *run_steps(void *arg) {
    Cycle *c = (Cycle *)arg;
    double nan_value = NAN;
    long before = c->calls(), logs = log_calls;
    c->failed = 1;
    for (int k = 0; k < c->steps; ++k)
        if (!step(c)) return NULL;
    c->step_calls = c->calls() - before;
    c->steady_logs = log_calls - logs;
    before = c->calls();
    logs = log_calls;
    c->refusals = c->set_real(c->s, &c->in, 1, &nan_value) >= fmi2Error;
    if (c->nx) {
        c->refusals += c->set_states(c->s, c->bad, c->nx) >= fmi2Error;
        c->refusals += c->set_time(c->s, NAN) >= fmi2Error;
    } else {
        c->refusals += c->do_step(c->s, c->t, -c->dt, fmi2True) >= fmi2Error;
        c->refusals += c->do_step(c->s, c->t + 1.0, c->dt, fmi2True) >= fmi2Error;
    }
    for (int k = 0; k < 2; ++k)
        if (!step(c)) return NULL;
    c->refused_calls = c->calls() - before;
    c->refused_logs = log_calls - logs;
    c->failed = 0;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: %s BINARY RESOURCES_URI GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS [me=NX] [thread] "
                        "[VR=V | VR:i=V ...]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    long (*live)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "alloc_live");
    long (*calls)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "alloc_calls");
    if (!lib || !live || !calls) {
        fprintf(stderr, "cannot load %s or the counter: %s\n", argv[1], dlerror());
        return 3;
    }
    FN(fmi2Instantiate);
    FN(fmi2SetupExperiment);
    FN(fmi2EnterInitializationMode);
    FN(fmi2ExitInitializationMode);
    FN(fmi2Terminate);
    FN(fmi2DoStep);
    FN(fmi2GetReal);
    FN(fmi2SetReal);
    FN(fmi2SetInteger);
    FN(fmi2GetFMUstate);
    FN(fmi2SetFMUstate);
    FN(fmi2FreeFMUstate);
    FN(fmi2FreeInstance);
    FN(fmi2EnterContinuousTimeMode);
    FN(fmi2SetTime);
    FN(fmi2SetContinuousStates);
    FN(fmi2GetContinuousStates);
    FN(fmi2GetDerivatives);
    FN(fmi2CompletedIntegratorStep);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    int cycles = atoi(argv[4]), in_thread = 0;
    static double out[MAXV], x[MAXV], dx[MAXV], bad[MAXV];
    static fmi2ValueReference vrs[MAXV], real_vr[MAXV], int_vr[MAXV];
    static double real_v[MAXV];
    static fmi2Integer int_v[MAXV];
    Cycle cy = {.set_real = fmi2SetReal, .do_step = fmi2DoStep, .get_real = fmi2GetReal, .set_time = fmi2SetTime,
                .set_states = fmi2SetContinuousStates, .get_derivatives = fmi2GetDerivatives,
                .completed = fmi2CompletedIntegratorStep, .calls = calls, .steps = atoi(argv[5]), .dt = atof(argv[6]),
                .x = x, .dx = dx, .bad = bad, .out = out, .in = (fmi2ValueReference)atoi(argv[7]), .vrs = vrs};
    for (char *p = argv[8]; *p && cy.nout < MAXV; ++cy.nout) {
        vrs[cy.nout] = (fmi2ValueReference)strtoul(p, &p, 10);
        if (*p == ',') ++p;
    }
    size_t nreal = 0, nint = 0;
    for (int a = 9; a < argc; ++a) {
        if (!strncmp(argv[a], "me=", 3)) {
            cy.nx = (size_t)atol(argv[a] + 3);
            continue;
        }
        if (!strcmp(argv[a], "thread")) {
            in_thread = 1;
            continue;
        }
        char *p;
        unsigned long vr = strtoul(argv[a], &p, 10);
        if (!strncmp(p, ":i=", 3) && nint < MAXV) {
            int_vr[nint] = (fmi2ValueReference)vr;
            int_v[nint++] = atoi(p + 3);
        } else if (*p == '=' && nreal < MAXV) {
            real_vr[nreal] = (fmi2ValueReference)vr;
            real_v[nreal++] = atof(p + 1);
        } else {
            fprintf(stderr, "bad argument %s\n", argv[a]);
            return 2;
        }
    }
    size_t nx = cy.nx;
    if (nx > MAXV || (nx && !(fmi2SetTime && fmi2SetContinuousStates && fmi2GetDerivatives))) {
        fprintf(stderr, "no Model Exchange interface for %zu states\n", nx);
        return 3;
    }
    for (size_t k = 0; k < nx; ++k) bad[k] = NAN;
    long warm = 0;
    for (int c = 0; c <= cycles; ++c) {
        fmi2Component s = fmi2Instantiate("cycle", nx ? fmi2ModelExchange : fmi2CoSimulation, argv[3], argv[2], &cb,
                                          fmi2False, fmi2False);
        if (!s || fmi2SetupExperiment(s, fmi2False, 0.0, 0.0, fmi2False, 0.0) > 1 ||
            (nreal && fmi2SetReal(s, real_vr, nreal, real_v) > 1) ||
            (nint && fmi2SetInteger(s, int_vr, nint, int_v) > 1) || fmi2EnterInitializationMode(s) > 1 ||
            fmi2ExitInitializationMode(s) > 1 ||
            (nx && (fmi2EnterContinuousTimeMode(s) > 1 || fmi2GetContinuousStates(s, x, nx) > 1))) {
            fprintf(stderr, "cycle %d: the FMU did not start\n", c);
            return 4;
        }
        cy.s = s;
        cy.t = 0.0;
        if (in_thread) {
            pthread_t th;
            if (pthread_create(&th, NULL, run_steps, &cy) || pthread_join(th, NULL)) {
                fprintf(stderr, "cycle %d: no thread\n", c);
                return 4;
            }
        } else {
            run_steps(&cy);
        }
        if (cy.failed) {
            fprintf(stderr, "cycle %d: a step failed at t = %g\n", c, cy.t);
            return 4;
        }
        fmi2FMUstate st = NULL;
        if (fmi2GetFMUstate(s, &st) > 1 || fmi2SetFMUstate(s, st) > 1 || fmi2FreeFMUstate(s, &st) > 1) {
            fprintf(stderr, "cycle %d: the state did not round-trip\n", c);
            return 4;
        }
        fmi2Terminate(s);
        fmi2FreeInstance(s);
        if (c == 0) warm = live();
    }
    long after = live();                 /* (before printf: stdout's buffer is a block of its own) */
    printf("warm %ld\nafter %ld\nstep %ld\nrefused %ld\nrefusals %ld\nsteady_logs %ld\nrefused_logs %ld\n", warm,
           after, cy.step_calls, cy.refused_calls, cy.refusals, cy.steady_logs, cy.refused_logs);
    return 0;
}
