/* lifecycle_host.c for FMI 3.0: heap blocks an FMI 3.0 FMU leaves behind, and heap calls its steady stepping and its
 * refusals make, in a plain C host run with alloc_count.so preloaded.
 * Usage: lifecycle3_host BINARY RESOURCE_PATH TOKEN CYCLES STEPS DT INPUT_VR OUTPUT_VRS/NVALUES [me=NX] [thread]
 *                        [VR=V | VR:e=V ...]
 *   RESOURCE_PATH  the resources folder's path with its trailing separator (FMI 3.0's resourcePath)
 *   OUTPUT_VRS/NVALUES  comma-separated value references of the Float64 outputs, then the number of their values
 *                  (arrays count each element)
 *   me=NX   Model Exchange with NX continuous states: each step is fmi3SetFloat64 (the input), fmi3SetTime,
 *           fmi3SetContinuousStates, fmi3GetContinuousStateDerivatives, the outputs read, an explicit Euler update and
 *           fmi3CompletedIntegratorStep (default: co-simulation, fmi3SetFloat64 + fmi3DoStep + the outputs read)
 *   thread  the steps and the refused calls run in a thread started for them after the initialization (a rig's
 *           real-time thread stepping an FMU its main thread set up); counted from inside that thread
 *   VR=V    Float64 start values, VR:e=V Enumeration ones (fmi3SetInt64), set in initialization mode
 * One cycle: instantiate, initialization (start values set in it), in Model Exchange fmi3UpdateDiscreteStates and
 * fmi3EnterContinuousTimeMode, STEPS steps (input INPUT_VR set to 0.5 before each, the outputs read after it), then
 * calls the FMU must refuse (a NaN input; co-simulation: a step of negative size and one from the wrong time; Model
 * Exchange: NaN states and a NaN time), two more steps, a state saved, restored and freed, fmi3Terminate,
 * fmi3FreeInstance. Prints what lifecycle_host.c prints: "warm", "after", "step", "refused", "refusals",
 * "steady_logs", "refused_logs". Linux (dlopen). */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3FunctionTypes.h"   /* the FMI 3.0 standard's types (fmu_mb/fmi/c/fmi3) */

static long log_calls;

static void logger(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message) {
    (void)env;
    (void)status;
    (void)category;
    (void)message;
    ++log_calls;                 /* (nothing printed: stdio would be the host's allocation, not the FMU's) */
}

#define FN(name) name##TYPE *name = (name##TYPE *)dlsym(lib, #name)
#define MAXV 65536

/* What one cycle's stepping needs and what it counted. */
typedef struct {
    fmi3Instance s;
    fmi3SetFloat64TYPE *set_real;
    fmi3DoStepTYPE *do_step;
    fmi3GetFloat64TYPE *get_real;
    fmi3SetTimeTYPE *set_time;
    fmi3SetContinuousStatesTYPE *set_states;
    fmi3GetContinuousStateDerivativesTYPE *get_derivatives;
    fmi3CompletedIntegratorStepTYPE *completed;
    long (*calls)(void);
    int steps;
    size_t nout, nvalues, nx;
    double dt, t, *x, *dx, *bad, *out;
    fmi3ValueReference in, *vrs;
    long step_calls, refused_calls, refusals, steady_logs, refused_logs;
    int failed;
} Cycle;

/* One step of the cycle (co-simulation or Model Exchange by explicit Euler); 0 on failure. */
static int step(Cycle *c) {
    double value = 0.5;
    if (c->set_real(c->s, &c->in, 1, &value, 1) > fmi3Warning) return 0;
    if (c->nx) {
        fmi3Boolean enter_event, terminate;
        if (c->set_time(c->s, c->t) > fmi3Warning || c->set_states(c->s, c->x, c->nx) > fmi3Warning ||
            c->get_derivatives(c->s, c->dx, c->nx) > fmi3Warning)
            return 0;
        c->get_real(c->s, c->vrs, c->nout, c->out, c->nvalues);
        for (size_t k = 0; k < c->nx; ++k) c->x[k] += c->dt * c->dx[k];
        if (c->completed(c->s, fmi3True, &enter_event, &terminate) > fmi3Warning) return 0;
    } else {
        fmi3Boolean event, stop, early;
        fmi3Float64 reached;
        if (c->do_step(c->s, c->t, c->dt, fmi3True, &event, &stop, &early, &reached) > fmi3Warning) return 0;
        c->get_real(c->s, c->vrs, c->nout, c->out, c->nvalues);
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
    c->refusals = c->set_real(c->s, &c->in, 1, &nan_value, 1) >= fmi3Error;
    if (c->nx) {
        c->refusals += c->set_states(c->s, c->bad, c->nx) >= fmi3Error;
        c->refusals += c->set_time(c->s, NAN) >= fmi3Error;
    } else {
        fmi3Boolean event, stop, early;
        fmi3Float64 reached;
        c->refusals += c->do_step(c->s, c->t, -c->dt, fmi3True, &event, &stop, &early, &reached) >= fmi3Error;
        c->refusals += c->do_step(c->s, c->t + 1.0, c->dt, fmi3True, &event, &stop, &early, &reached) >= fmi3Error;
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
        fprintf(stderr, "usage: %s BINARY RESOURCE_PATH TOKEN CYCLES STEPS DT INPUT_VR OUTPUT_VRS/NVALUES [me=NX] "
                        "[thread] [VR=V | VR:e=V ...]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    long (*live)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "alloc_live");
    long (*calls)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "alloc_calls");
    if (!lib || !live || !calls) {
        fprintf(stderr, "cannot load %s or the counter: %s\n", argv[1], dlerror());
        return 3;
    }
    FN(fmi3InstantiateCoSimulation);
    FN(fmi3InstantiateModelExchange);
    FN(fmi3EnterInitializationMode);
    FN(fmi3ExitInitializationMode);
    FN(fmi3Terminate);
    FN(fmi3DoStep);
    FN(fmi3GetFloat64);
    FN(fmi3SetFloat64);
    FN(fmi3SetInt64);
    FN(fmi3GetFMUState);
    FN(fmi3SetFMUState);
    FN(fmi3FreeFMUState);
    FN(fmi3FreeInstance);
    FN(fmi3UpdateDiscreteStates);
    FN(fmi3EnterContinuousTimeMode);
    FN(fmi3SetTime);
    FN(fmi3SetContinuousStates);
    FN(fmi3GetContinuousStates);
    FN(fmi3GetContinuousStateDerivatives);
    FN(fmi3CompletedIntegratorStep);
    int cycles = atoi(argv[4]), in_thread = 0;
    static double out[MAXV], x[MAXV], dx[MAXV], bad[MAXV];
    static fmi3ValueReference vrs[MAXV], real_vr[MAXV], enum_vr[MAXV];
    static double real_v[MAXV];
    static fmi3Int64 enum_v[MAXV];
    Cycle cy = {.set_real = fmi3SetFloat64, .do_step = fmi3DoStep, .get_real = fmi3GetFloat64, .set_time = fmi3SetTime,
                .set_states = fmi3SetContinuousStates, .get_derivatives = fmi3GetContinuousStateDerivatives,
                .completed = fmi3CompletedIntegratorStep, .calls = calls, .steps = atoi(argv[5]), .dt = atof(argv[6]),
                .x = x, .dx = dx, .bad = bad, .out = out, .in = (fmi3ValueReference)atoi(argv[7]), .vrs = vrs};
    char *p = argv[8];
    while (*p && *p != '/' && cy.nout < MAXV) {
        vrs[cy.nout++] = (fmi3ValueReference)strtoul(p, &p, 10);
        if (*p == ',') ++p;
    }
    cy.nvalues = *p == '/' ? (size_t)strtoul(p + 1, NULL, 10) : cy.nout;
    if (cy.nvalues > MAXV) {
        fprintf(stderr, "too many output values: %zu\n", cy.nvalues);
        return 2;
    }
    size_t nreal = 0, nenum = 0;
    for (int a = 9; a < argc; ++a) {
        if (!strncmp(argv[a], "me=", 3)) {
            cy.nx = (size_t)atol(argv[a] + 3);
            continue;
        }
        if (!strcmp(argv[a], "thread")) {
            in_thread = 1;
            continue;
        }
        unsigned long vr = strtoul(argv[a], &p, 10);
        if (!strncmp(p, ":e=", 3) && nenum < MAXV) {
            enum_vr[nenum] = (fmi3ValueReference)vr;
            enum_v[nenum++] = atoll(p + 3);
        } else if (*p == '=' && nreal < MAXV) {
            real_vr[nreal] = (fmi3ValueReference)vr;
            real_v[nreal++] = atof(p + 1);
        } else {
            fprintf(stderr, "bad argument %s\n", argv[a]);
            return 2;
        }
    }
    size_t nx = cy.nx;
    if (nx > MAXV || (nx && !(fmi3InstantiateModelExchange && fmi3SetContinuousStates &&
                              fmi3GetContinuousStateDerivatives))) {
        fprintf(stderr, "no Model Exchange interface for %zu states\n", nx);
        return 3;
    }
    for (size_t k = 0; k < nx; ++k) bad[k] = NAN;
    long warm = 0;
    for (int c = 0; c <= cycles; ++c) {
        fmi3Instance s = nx ? fmi3InstantiateModelExchange("cycle", argv[3], argv[2], fmi3False, fmi3False, NULL, logger)
                            : fmi3InstantiateCoSimulation("cycle", argv[3], argv[2], fmi3False, fmi3False, fmi3False,
                                                          fmi3False, NULL, 0, NULL, logger, NULL);
        fmi3Boolean need_update = fmi3True, stop, nominals, values, next_defined = fmi3False;
        fmi3Float64 next_time;
        if (!s || fmi3EnterInitializationMode(s, fmi3False, 0.0, 0.0, fmi3False, 0.0) > fmi3Warning ||
            (nreal && fmi3SetFloat64(s, real_vr, nreal, real_v, nreal) > fmi3Warning) ||
            (nenum && fmi3SetInt64(s, enum_vr, nenum, enum_v, nenum) > fmi3Warning) ||
            fmi3ExitInitializationMode(s) > fmi3Warning ||
            (nx && (fmi3UpdateDiscreteStates(s, &need_update, &stop, &nominals, &values, &next_defined,
                                             &next_time) > fmi3Warning ||
                    fmi3EnterContinuousTimeMode(s) > fmi3Warning || fmi3GetContinuousStates(s, x, nx) > fmi3Warning))) {
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
        fmi3FMUState st = NULL;
        if (fmi3GetFMUState(s, &st) > fmi3Warning || fmi3SetFMUState(s, st) > fmi3Warning ||
            fmi3FreeFMUState(s, &st) > fmi3Warning) {
            fprintf(stderr, "cycle %d: the state did not round-trip\n", c);
            return 4;
        }
        fmi3Terminate(s);
        fmi3FreeInstance(s);
        if (c == 0) warm = live();
    }
    long after = live();                 /* (before printf: stdout's buffer is a block of its own) */
    printf("warm %ld\nafter %ld\nstep %ld\nrefused %ld\nrefusals %ld\nsteady_logs %ld\nrefused_logs %ld\n", warm,
           after, cy.step_calls, cy.refused_calls, cy.refusals, cy.steady_logs, cy.refused_logs);
    return 0;
}
