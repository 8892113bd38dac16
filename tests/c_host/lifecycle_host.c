/* Heap blocks an FMU leaves behind, and heap calls its steady stepping makes: a plain C host run with
 * alloc_count.so preloaded. Usage: lifecycle_host BINARY RESOURCES_URI GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS
 * One cycle: fmi2Instantiate, setup, initialization, STEPS doSteps (input INPUT_VR set to 0.5 before each,
 * the Real outputs OUTPUT_VRS (comma-separated) read after it), a state saved, restored and freed, fmi2Terminate, fmi2FreeInstance. Prints
 * "warm LIVE" after the first cycle, "after LIVE" after CYCLES more, and "step CALLS" with the allocating
 * calls of the doStep/fmi2SetReal/fmi2GetReal loop of the last cycle. Linux (dlopen). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"   /* the FMI 2.0 standard's types (fmu_mb/fmi/c/fmi2) */

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env;
    if (status >= 2) fprintf(stderr, "[%s %d %s] %s\n", name, status, category, message);
}

#define FN(name) name##TYPE *name = (name##TYPE *)dlsym(lib, #name)

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: %s BINARY RESOURCES_URI GUID CYCLES STEPS DT INPUT_VR OUTPUT_VRS\n", argv[0]);
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
    FN(fmi2GetFMUstate);
    FN(fmi2SetFMUstate);
    FN(fmi2FreeFMUstate);
    FN(fmi2FreeInstance);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    int cycles = atoi(argv[4]), steps = atoi(argv[5]);
    double dt = atof(argv[6]), value = 0.5, out[4096];
    fmi2ValueReference in = (fmi2ValueReference)atoi(argv[7]), vrs[4096];
    int nout = 0;
    for (char *p = argv[8]; *p && nout < 4096; ++nout) {
        vrs[nout] = (fmi2ValueReference)strtoul(p, &p, 10);
        if (*p == ',') ++p;
    }
    long step_calls = 0, warm = 0;
    for (int c = 0; c <= cycles; ++c) {
        fmi2Component s = fmi2Instantiate("cycle", fmi2CoSimulation, argv[3], argv[2], &cb, fmi2False, fmi2False);
        if (!s || fmi2SetupExperiment(s, fmi2False, 0.0, 0.0, fmi2False, 0.0) > 1 || fmi2EnterInitializationMode(s) > 1 ||
            fmi2ExitInitializationMode(s) > 1) {
            fprintf(stderr, "cycle %d: the FMU did not start\n", c);
            return 4;
        }
        long before = calls();
        for (int k = 0; k < steps; ++k) {
            if (fmi2SetReal(s, &in, 1, &value) > 1 || fmi2DoStep(s, k * dt, dt, fmi2True) > 1) {
                fprintf(stderr, "cycle %d: step %d failed\n", c, k);
                return 4;
            }
            fmi2GetReal(s, vrs, (size_t)nout, out);
        }
        step_calls = calls() - before;
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
    printf("warm %ld\nafter %ld\nstep %ld\n", warm, after, step_calls);
    return 0;
}
