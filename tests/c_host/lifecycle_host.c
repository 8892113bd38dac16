/* Heap blocks an FMU leaves behind, and heap calls its steady stepping and its refusals make: a plain C host run
 * with alloc_count.so preloaded, for FMI 2.0 and FMI 3.0 FMUs.
 * Usage: lifecycle_host BINARY RESOURCES GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS [me=NX] [thread] [fmi3=NVALUES]
 *                       [VR=V | VR:i=V | VR:e=V ...]
 *   RESOURCES  the resources folder: its file URI (FMI 2.0) or its path with the trailing separator (FMI 3.0)
 *   me=NX   Model Exchange with NX continuous states: each step is the input set, the time and the states set, the
 *           derivatives got, the outputs read, an explicit Euler update and the completed integrator step (default:
 *           co-simulation, the input set, the step and the outputs read)
 *   thread  the steps and the refused calls run in a thread started for them after the initialization (a rig's
 *           real-time thread stepping an FMU its main thread set up); counted from inside that thread
 *   fmi3=NVALUES  an FMI 3.0 FMU (fmi3Instantiate..., fmi3SetFloat64, fmi3DoStep, fmi3GetFloat64 of the outputs'
 *           NVALUES values: arrays count each element; fmi3GetContinuousStateDerivatives; after the initialization
 *           fmi3UpdateDiscreteStates before fmi3EnterContinuousTimeMode)
 *   VR=V    Real (Float64) start values, VR:i=V Integer (FMI 2.0 Enumeration) ones, VR:e=V FMI 3.0 Enumeration ones
 *           (fmi3SetInt64), set before the initialization (FMI 2.0) or in it (FMI 3.0)
 * One cycle: instantiate, start values, initialization, STEPS steps (input INPUT_VR set to 0.5 before each, the
 * Real outputs OUTPUT_VRS (comma-separated) read after it), then calls the FMU must refuse (a NaN input;
 * co-simulation: a step of negative size and one from the wrong time; Model Exchange: NaN states and a NaN time),
 * then two more steps, a state saved, restored and freed, terminate, free. Prints "warm LIVE" after the first
 * cycle, "after LIVE" after CYCLES more, "step CALLS" (heap and mmap calls of the steady steps of the last cycle),
 * "refused CALLS" (those of the refused calls and the steps after them), "refusals N" (refused calls that returned
 * an error status or worse), "steady_logs N" (logger calls during the steady steps) and "refused_logs N". Linux
 * (dlopen). */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"   /* the FMI 2.0 and 3.0 standards' types (fmu_mb/fmi/c/fmi2, fmi3) */
#include "fmi3FunctionTypes.h"

#define WARNING 1                   /* (status codes: the same in both versions) */
#define ERROR 3

static long log_calls;

static void logger2(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                    fmi2String message, ...) {
    (void)env, (void)name, (void)category, (void)message, (void)status;
    ++log_calls;                 /* (nothing printed: stdio would be the host's allocation, not the FMU's) */
}

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message) {
    (void)env, (void)status, (void)category, (void)message;
    ++log_calls;
}

#define MAXV 65536

/* The calls the steps make, looked up by their name in the FMU's version. */
enum { SET, STEP, GET, TIME, STATES, DERIVATIVES, COMPLETED, NCALLS };
static const char *const CALLS[2][NCALLS] = {
    {"fmi2SetReal", "fmi2DoStep", "fmi2GetReal", "fmi2SetTime", "fmi2SetContinuousStates", "fmi2GetDerivatives",
     "fmi2CompletedIntegratorStep"},
    {"fmi3SetFloat64", "fmi3DoStep", "fmi3GetFloat64", "fmi3SetTime", "fmi3SetContinuousStates",
     "fmi3GetContinuousStateDerivatives", "fmi3CompletedIntegratorStep"}};

/* What one cycle's stepping needs and what it counted. */
typedef struct {
    int v3;
    void *s;
    void *fn[NCALLS];
    long (*calls)(void);
    int steps;
    size_t nout, nvalues, nx;
    double dt, t, *x, *dx, *bad, *out;
    unsigned in, *vrs;
    long step_calls, refused_calls, refusals, steady_logs, refused_logs;
    int failed;
} Cycle;

#define CALL2(c, k, T) ((T *)(c)->fn[k])   /* the call k of the version with its standard type */
#define CALL3 CALL2

static int set_input(Cycle *c, double v) {
    return c->v3 ? (int)CALL3(c, SET, fmi3SetFloat64TYPE)(c->s, &c->in, 1, &v, 1)
                 : (int)CALL2(c, SET, fmi2SetRealTYPE)(c->s, &c->in, 1, &v);
}

static int do_step(Cycle *c, double t, double h) {
    if (!c->v3) return (int)CALL2(c, STEP, fmi2DoStepTYPE)(c->s, t, h, fmi2True);
    fmi3Boolean event, stop, early;
    fmi3Float64 reached;
    return (int)CALL3(c, STEP, fmi3DoStepTYPE)(c->s, t, h, fmi3True, &event, &stop, &early, &reached);
}

static void get_outputs(Cycle *c) {
    if (c->v3)
        CALL3(c, GET, fmi3GetFloat64TYPE)(c->s, c->vrs, c->nout, c->out, c->nvalues);
    else
        CALL2(c, GET, fmi2GetRealTYPE)(c->s, c->vrs, c->nout, c->out);
}

static int set_time(Cycle *c, double t) {
    return c->v3 ? (int)CALL3(c, TIME, fmi3SetTimeTYPE)(c->s, t) : (int)CALL2(c, TIME, fmi2SetTimeTYPE)(c->s, t);
}

static int set_states(Cycle *c, const double *x) {
    return c->v3 ? (int)CALL3(c, STATES, fmi3SetContinuousStatesTYPE)(c->s, x, c->nx)
                 : (int)CALL2(c, STATES, fmi2SetContinuousStatesTYPE)(c->s, x, c->nx);
}

static int get_derivatives(Cycle *c) {
    return c->v3 ? (int)CALL3(c, DERIVATIVES, fmi3GetContinuousStateDerivativesTYPE)(c->s, c->dx, c->nx)
                 : (int)CALL2(c, DERIVATIVES, fmi2GetDerivativesTYPE)(c->s, c->dx, c->nx);
}

static int completed(Cycle *c) {
    if (c->v3) {
        fmi3Boolean enter_event, terminate;
        return (int)CALL3(c, COMPLETED, fmi3CompletedIntegratorStepTYPE)(c->s, fmi3True, &enter_event, &terminate);
    }
    fmi2Boolean enter_event, terminate;
    return (int)CALL2(c, COMPLETED, fmi2CompletedIntegratorStepTYPE)(c->s, fmi2True, &enter_event, &terminate);
}

/* One step of the cycle (co-simulation or Model Exchange by explicit Euler); 0 on failure. */
static int step(Cycle *c) {
    if (set_input(c, 0.5) > WARNING) return 0;
    if (c->nx) {
        if (set_time(c, c->t) > WARNING || set_states(c, c->x) > WARNING || get_derivatives(c) > WARNING) return 0;
        get_outputs(c);
        for (size_t k = 0; k < c->nx; ++k) c->x[k] += c->dt * c->dx[k];
        if (completed(c) > WARNING) return 0;
    } else {
        if (do_step(c, c->t, c->dt) > WARNING) return 0;
        get_outputs(c);
    }
    c->t += c->dt;
    return 1;
}

/* The steady steps, the refused calls and two steps after them, counted. */
static void *run_steps(void *arg) {
    Cycle *c = (Cycle *)arg;
    long before = c->calls(), logs = log_calls;
    c->failed = 1;
    for (int k = 0; k < c->steps; ++k)
        if (!step(c)) return NULL;
    c->step_calls = c->calls() - before;
    c->steady_logs = log_calls - logs;
    before = c->calls();
    logs = log_calls;
    c->refusals = set_input(c, NAN) >= ERROR;
    if (c->nx) {
        c->refusals += set_states(c, c->bad) >= ERROR;
        c->refusals += set_time(c, NAN) >= ERROR;
    } else {
        c->refusals += do_step(c, c->t, -c->dt) >= ERROR;
        c->refusals += do_step(c, c->t + 1.0, c->dt) >= ERROR;
    }
    for (int k = 0; k < 2; ++k)
        if (!step(c)) return NULL;
    c->refused_calls = c->calls() - before;
    c->refused_logs = log_calls - logs;
    c->failed = 0;
    return NULL;
}

static unsigned real_vr[MAXV], int_vr[MAXV], enum_vr[MAXV];
static double real_v[MAXV];
static int int_v[MAXV];
static long long enum_v[MAXV];
static size_t nreal, nint, nenum;

/* A function of the FMU, looked up on the first call of the function using it (a failed dlsym leaves an error text
 * on the heap: looked up once, before the first cycle's count) */
#define FN2(name)                                                                                                    \
    static name##TYPE *name;                                                                                         \
    if (!resolved) name = (name##TYPE *)dlsym(lib, #name)
#define FN3 FN2

/* An FMI 2.0 instance instantiated, its start values set, initialized (and in continuous-time mode with its states
 * in cy->x for Model Exchange); NULL if any call failed. */
static void *start2(void *lib, Cycle *cy, const char *guid, const char *resources) {
    static int resolved;
    FN2(fmi2Instantiate);
    FN2(fmi2SetupExperiment);
    FN2(fmi2EnterInitializationMode);
    FN2(fmi2ExitInitializationMode);
    FN2(fmi2SetInteger);
    FN2(fmi2EnterContinuousTimeMode);
    FN2(fmi2GetContinuousStates);
    resolved = 1;
    static fmi2CallbackFunctions cb = {logger2, calloc, free, NULL, NULL};
    fmi2Component s = fmi2Instantiate("cycle", cy->nx ? fmi2ModelExchange : fmi2CoSimulation, guid, resources, &cb,
                                      fmi2False, fmi2False);
    if (!s || fmi2SetupExperiment(s, fmi2False, 0.0, 0.0, fmi2False, 0.0) > WARNING ||
        (nreal && CALL2(cy, SET, fmi2SetRealTYPE)(s, real_vr, nreal, real_v) > WARNING) ||
        (nint && fmi2SetInteger(s, int_vr, nint, int_v) > WARNING) || fmi2EnterInitializationMode(s) > WARNING ||
        fmi2ExitInitializationMode(s) > WARNING ||
        (cy->nx && (fmi2EnterContinuousTimeMode(s) > WARNING || fmi2GetContinuousStates(s, cy->x, cy->nx) > WARNING)))
        return NULL;
    return s;
}

/* The same for an FMI 3.0 instance (start values set in initialization mode; Model Exchange: the event mode left
 * by one fmi3UpdateDiscreteStates). */
static void *start3(void *lib, Cycle *cy, const char *token, const char *resources) {
    static int resolved;
    FN3(fmi3InstantiateCoSimulation);
    FN3(fmi3InstantiateModelExchange);
    FN3(fmi3EnterInitializationMode);
    FN3(fmi3ExitInitializationMode);
    FN3(fmi3SetInt64);
    FN3(fmi3UpdateDiscreteStates);
    FN3(fmi3EnterContinuousTimeMode);
    FN3(fmi3GetContinuousStates);
    resolved = 1;
    fmi3Instance s = cy->nx ? fmi3InstantiateModelExchange("cycle", token, resources, fmi3False, fmi3False, NULL,
                                                           logger3)
                            : fmi3InstantiateCoSimulation("cycle", token, resources, fmi3False, fmi3False, fmi3False,
                                                          fmi3False, NULL, 0, NULL, logger3, NULL);
    static fmi3Int64 enums[MAXV];
    for (size_t i = 0; i < nenum; ++i) enums[i] = (fmi3Int64)enum_v[i];
    fmi3Boolean update = fmi3True, stop, nominals, values, next_defined = fmi3False;
    fmi3Float64 next_time;
    if (!s || fmi3EnterInitializationMode(s, fmi3False, 0.0, 0.0, fmi3False, 0.0) > WARNING ||
        (nreal && CALL3(cy, SET, fmi3SetFloat64TYPE)(s, real_vr, nreal, real_v, nreal) > WARNING) ||
        (nenum && fmi3SetInt64(s, enum_vr, nenum, enums, nenum) > WARNING) || fmi3ExitInitializationMode(s) > WARNING ||
        (cy->nx && (fmi3UpdateDiscreteStates(s, &update, &stop, &nominals, &values, &next_defined,
                                             &next_time) > WARNING ||
                    fmi3EnterContinuousTimeMode(s) > WARNING || fmi3GetContinuousStates(s, cy->x, cy->nx) > WARNING)))
        return NULL;
    return s;
}

/* A state saved, restored and freed, then terminate and free; 0 if the state did not round-trip. The calls have the
 * same shape in both versions (an instance, a state that is a pointer, an int-sized status): one body for both. */
static int finish(void *lib, int v3, void *s) {
    static const char *const names[2][5] = {
        {"fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate", "fmi2Terminate", "fmi2FreeInstance"},
        {"fmi3GetFMUState", "fmi3SetFMUState", "fmi3FreeFMUState", "fmi3Terminate", "fmi3FreeInstance"}};
    static void *fn[2][5];
    for (int k = 0; k < 5; ++k)
        if (!fn[v3][k]) fn[v3][k] = dlsym(lib, names[v3][k]);
    int (*get_state)(void *, void **) = (int (*)(void *, void **))fn[v3][0];
    int (*set_state)(void *, void *) = (int (*)(void *, void *))fn[v3][1];
    int (*free_state)(void *, void **) = (int (*)(void *, void **))fn[v3][2];
    int (*terminate)(void *) = (int (*)(void *))fn[v3][3];
    void (*free_instance)(void *) = (void (*)(void *))fn[v3][4];
    void *st = NULL;
    int ok = get_state(s, &st) <= WARNING && set_state(s, st) <= WARNING && free_state(s, &st) <= WARNING;
    terminate(s);
    free_instance(s);
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: %s BINARY RESOURCES GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS [me=NX] [thread] "
                        "[fmi3=NVALUES] [VR=V | VR:i=V | VR:e=V ...]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    long (*live)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "alloc_live");
    long (*calls)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "alloc_calls");
    if (!lib || !live || !calls) {
        fprintf(stderr, "cannot load %s or the counter: %s\n", argv[1], dlerror());
        return 3;
    }
    int cycles = atoi(argv[4]), in_thread = 0;
    static double out[MAXV], x[MAXV], dx[MAXV], bad[MAXV];
    static unsigned vrs[MAXV];
    Cycle cy = {.calls = calls, .steps = atoi(argv[5]), .dt = atof(argv[6]), .x = x, .dx = dx, .bad = bad, .out = out,
                .in = (unsigned)atoi(argv[7]), .vrs = vrs};
    for (char *p = argv[8]; *p && cy.nout < MAXV; ++cy.nout) {
        vrs[cy.nout] = (unsigned)strtoul(p, &p, 10);
        if (*p == ',') ++p;
    }
    cy.nvalues = cy.nout;
    for (int a = 9; a < argc; ++a) {
        char *p;
        if (!strncmp(argv[a], "me=", 3)) {
            cy.nx = (size_t)atol(argv[a] + 3);
            continue;
        }
        if (!strncmp(argv[a], "fmi3=", 5)) {
            cy.v3 = 1;
            cy.nvalues = (size_t)strtoul(argv[a] + 5, NULL, 10);
            continue;
        }
        if (!strcmp(argv[a], "thread")) {
            in_thread = 1;
            continue;
        }
        unsigned long vr = strtoul(argv[a], &p, 10);
        if (!strncmp(p, ":i=", 3) && nint < MAXV) {
            int_vr[nint] = (unsigned)vr;
            int_v[nint++] = atoi(p + 3);
        } else if (!strncmp(p, ":e=", 3) && nenum < MAXV) {
            enum_vr[nenum] = (unsigned)vr;
            enum_v[nenum++] = atoll(p + 3);
        } else if (*p == '=' && nreal < MAXV) {
            real_vr[nreal] = (unsigned)vr;
            real_v[nreal++] = atof(p + 1);
        } else {
            fprintf(stderr, "bad argument %s\n", argv[a]);
            return 2;
        }
    }
    if (cy.nvalues > MAXV || cy.nx > MAXV || (nenum && !cy.v3)) {
        fprintf(stderr, "too many values, or VR:e= values for an FMI 2.0 FMU\n");
        return 2;
    }
    for (int k = 0; k < NCALLS; ++k) cy.fn[k] = dlsym(lib, CALLS[cy.v3][k]);
    if (!(cy.fn[SET] && cy.fn[STEP] && cy.fn[GET])) {
        fprintf(stderr, "no co-simulation interface of FMI %d\n", cy.v3 ? 3 : 2);
        return 3;
    }
    if (cy.nx && !(cy.fn[TIME] && cy.fn[STATES] && cy.fn[DERIVATIVES] && cy.fn[COMPLETED])) {
        fprintf(stderr, "no Model Exchange interface for %zu states\n", cy.nx);
        return 3;
    }
    for (size_t k = 0; k < cy.nx; ++k) bad[k] = NAN;
    long warm = 0;
    for (int c = 0; c <= cycles; ++c) {
        void *s = cy.v3 ? start3(lib, &cy, argv[3], argv[2]) : start2(lib, &cy, argv[3], argv[2]);
        if (!s) {
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
        if (!finish(lib, cy.v3, s)) {
            fprintf(stderr, "cycle %d: the state did not round-trip\n", c);
            return 4;
        }
        if (c == 0) warm = live();
    }
    long after = live();                 /* (before printf: stdout's buffer is a block of its own) */
    printf("warm %ld\nafter %ld\nstep %ld\nrefused %ld\nrefusals %ld\nsteady_logs %ld\nrefused_logs %ld\n", warm,
           after, cy.step_calls, cy.refused_calls, cy.refusals, cy.steady_logs, cy.refused_logs);
    return 0;
}
