/* Heap blocks an FMU leaves behind, and heap calls its steady stepping and its refusals make: a plain C host run
 * with alloc_count.so preloaded.
 * Usage: lifecycle_host BINARY RESOURCES_URI GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS [me=NX] [VR=V | VR:i=V ...]
 *   me=NX   Model Exchange with NX continuous states: each step is fmi2SetReal (the input), fmi2SetTime,
 *           fmi2SetContinuousStates, fmi2GetDerivatives, the Real outputs read, an explicit Euler update and
 *           fmi2CompletedIntegratorStep (default: co-simulation, fmi2SetReal + fmi2DoStep + the outputs read)
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

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: %s BINARY RESOURCES_URI GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS [me=NX] "
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
    int cycles = atoi(argv[4]), steps = atoi(argv[5]);
    double dt = atof(argv[6]), value = 0.5, nan_value = NAN, out[MAXV];
    fmi2ValueReference in = (fmi2ValueReference)atoi(argv[7]), vrs[MAXV];
    int nout = 0;
    for (char *p = argv[8]; *p && nout < MAXV; ++nout) {
        vrs[nout] = (fmi2ValueReference)strtoul(p, &p, 10);
        if (*p == ',') ++p;
    }
    size_t nx = 0;
    fmi2ValueReference real_vr[MAXV], int_vr[MAXV];
    double real_v[MAXV];
    fmi2Integer int_v[MAXV];
    size_t nreal = 0, nint = 0;
    for (int a = 9; a < argc; ++a) {
        if (!strncmp(argv[a], "me=", 3)) {
            nx = (size_t)atol(argv[a] + 3);
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
    if (nx > MAXV || (nx && !(fmi2SetTime && fmi2SetContinuousStates && fmi2GetDerivatives))) {
        fprintf(stderr, "no Model Exchange interface for %zu states\n", nx);
        return 3;
    }
    double x[MAXV], dx[MAXV], bad[MAXV];
    for (size_t k = 0; k < nx; ++k) bad[k] = NAN;
    long step_calls = 0, refused_calls = 0, warm = 0, refusals = 0, steady_logs = 0, refused_logs = 0;
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
        double t = 0.0;
        fmi2Boolean enter_event, terminate;
#define STEP()                                                                                                   \
    do {                                                                                                         \
        if (fmi2SetReal(s, &in, 1, &value) > 1) goto failed;                                                     \
        if (nx) {                                                                                                \
            if (fmi2SetTime(s, t) > 1 || fmi2SetContinuousStates(s, x, nx) > 1 || fmi2GetDerivatives(s, dx, nx) > 1) \
                goto failed;                                                                                     \
            fmi2GetReal(s, vrs, (size_t)nout, out);                                                              \
            for (size_t k = 0; k < nx; ++k) x[k] += dt * dx[k];                                                  \
            if (fmi2CompletedIntegratorStep(s, fmi2True, &enter_event, &terminate) > 1) goto failed;             \
        } else {                                                                                                 \
            if (fmi2DoStep(s, t, dt, fmi2True) > 1) goto failed;                                                 \
            fmi2GetReal(s, vrs, (size_t)nout, out);                                                              \
        }                                                                                                        \
        t += dt;                                                                                                 \
    } while (0)
        long before = calls(), logs = log_calls;
        for (int k = 0; k < steps; ++k) STEP();
        step_calls = calls() - before;
        steady_logs = log_calls - logs;
        before = calls();
        logs = log_calls;
        refusals = 0;
        refusals += fmi2SetReal(s, &in, 1, &nan_value) >= fmi2Error;
        if (nx) {
            refusals += fmi2SetContinuousStates(s, bad, nx) >= fmi2Error;
            refusals += fmi2SetTime(s, NAN) >= fmi2Error;
        } else {
            refusals += fmi2DoStep(s, t, -dt, fmi2True) >= fmi2Error;
            refusals += fmi2DoStep(s, t + 1.0, dt, fmi2True) >= fmi2Error;
        }
        for (int k = 0; k < 2; ++k) STEP();
        refused_calls = calls() - before;
        refused_logs = log_calls - logs;
        fmi2FMUstate st = NULL;
        if (fmi2GetFMUstate(s, &st) > 1 || fmi2SetFMUstate(s, st) > 1 || fmi2FreeFMUstate(s, &st) > 1) {
            fprintf(stderr, "cycle %d: the state did not round-trip\n", c);
            return 4;
        }
        fmi2Terminate(s);
        fmi2FreeInstance(s);
        if (c == 0) warm = live();
        continue;
    failed:
        fprintf(stderr, "cycle %d: a step failed at t = %g\n", c, t);
        return 4;
    }
    long after = live();                 /* (before printf: stdout's buffer is a block of its own) */
    printf("warm %ld\nafter %ld\nstep %ld\nrefused %ld\nrefusals %ld\nsteady_logs %ld\nrefused_logs %ld\n", warm,
           after, step_calls, refused_calls, refusals, steady_logs, refused_logs);
    return 0;
}
