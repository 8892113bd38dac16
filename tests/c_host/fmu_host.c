/* A plain C FMI 2.0 co-simulation host for fmu_mb's native FMUs: no Python, no environment.
 * Usage: fmu_host BINARY RESOURCES_URI GUID N DT OUT VRS [VR=VALUE | VR:i=VALUE ...]
 *   BINARY  binaries/linux64/<id>.so or binaries/win64/<id>.dll of an extracted FMU
 *   N, DT   number and size of communication steps from t = 0 (at t_k = k DT, as FMPy steps)
 *   OUT     file receiving, after each step, the Real values of VRS (raw float64)
 *   VRS     comma-separated value references of Real variables to record
 *   VR=V    Real values set before fmi2ExitInitializationMode (parameters, inputs)
 *   VR:i=V  Integer (and Enumeration) values set there, fmi2SetInteger
 * Exit status 0 on success, the failing call's name on stderr otherwise. Built for Linux (cc)
 * and Windows (mingw-w64, run under wine). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynload.h"

typedef void *fmi2Component;
typedef unsigned int fmi2ValueReference;
typedef int fmi2Status;
typedef void (*logger_t)(void *, const char *, int, const char *, const char *, ...);
typedef struct {
    logger_t logger;
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(void *, int);
    void *env;
} callbacks_t;
typedef fmi2Component (*instantiate_t)(const char *, int, const char *, const char *, const callbacks_t *, int, int);
typedef fmi2Status (*setup_t)(fmi2Component, int, double, double, int, double);
typedef fmi2Status (*call_t)(fmi2Component);
typedef fmi2Status (*real_t)(fmi2Component, const fmi2ValueReference *, size_t, double *);
typedef fmi2Status (*integer_t)(fmi2Component, const fmi2ValueReference *, size_t, const int *);
typedef fmi2Status (*step_t)(fmi2Component, double, double, int);
typedef void (*free_t)(fmi2Component);

static void logger(void *env, const char *name, int status, const char *category, const char *message, ...) {
    (void)env;
    if (status >= 1) fprintf(stderr, "[%s %d %s] %s\n", name, status, category, message);
}

static void *need(void *lib, const char *name) {
    void *f = symbol(lib, name);
    if (!f) {
        fprintf(stderr, "the binary exports no %s\n", name);
        exit(3);
    }
    return f;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: %s BINARY RESOURCES_URI GUID N DT OUT VRS [VR=VALUE ...]\n", argv[0]);
        return 2;
    }
    void *lib = open_library(argv[1]);
    if (!lib) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 3;
    }
    instantiate_t instantiate = (instantiate_t)need(lib, "fmi2Instantiate");
    setup_t setup = (setup_t)need(lib, "fmi2SetupExperiment");
    call_t enter = (call_t)need(lib, "fmi2EnterInitializationMode"), exit_init = (call_t)need(lib,
                                                                                            "fmi2ExitInitializationMode");
    call_t terminate = (call_t)need(lib, "fmi2Terminate");
    real_t set_real = (real_t)need(lib, "fmi2SetReal"), get_real = (real_t)need(lib, "fmi2GetReal");
    integer_t set_integer = (integer_t)need(lib, "fmi2SetInteger");
    step_t do_step = (step_t)need(lib, "fmi2DoStep");
    free_t free_instance = (free_t)need(lib, "fmi2FreeInstance");
    callbacks_t cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = instantiate("host", 1, argv[3], argv[2], &cb, 0, 0);
    if (!c) {
        fprintf(stderr, "fmi2Instantiate failed\n");
        return 4;
    }
    long n = atol(argv[4]);
    double dt = atof(argv[5]);
    if (setup(c, 0, 0.0, 0.0, 0, 0.0) > 1 || enter(c) > 1) {
        fprintf(stderr, "setup / enter initialization failed\n");
        return 4;
    }
    for (int i = 8; i < argc; ++i) {            /* VR=VALUE: fmi2SetReal; VR:i=VALUE: fmi2SetInteger */
        char *end;
        fmi2ValueReference vr = (fmi2ValueReference)strtoul(argv[i], &end, 10);
        const char *eq = strchr(argv[i], '=');
        double v = eq ? atof(eq + 1) : 0.0;
        int k = (int)v, integer = end[0] == ':' && end[1] == 'i';
        if (integer ? set_integer(c, &vr, 1, &k) > 1 : set_real(c, &vr, 1, (double *)&v) > 1) {
            fprintf(stderr, "fmi2Set%s %s failed\n", integer ? "Integer" : "Real", argv[i]);
            return 4;
        }
    }
    if (exit_init(c) > 1) {
        fprintf(stderr, "fmi2ExitInitializationMode failed\n");
        return 4;
    }
    static fmi2ValueReference reals[65536];
    int nreal = 0;
    for (char *p = argv[7]; *p && nreal < 65536;) {
        reals[nreal++] = (fmi2ValueReference)strtoul(p, &p, 10);
        if (*p == ',') ++p;
    }
    FILE *out = fopen(argv[6], "wb");
    if (!out) {
        fprintf(stderr, "cannot write %s\n", argv[6]);
        return 3;
    }
    double *vals = malloc(sizeof(double) * (size_t)(nreal + 1));
    for (long k = 0; k < n; ++k) {
        double t = (double)k * dt, next = (double)(k + 1) * dt;      /* FMPy's time grid */
        if (do_step(c, t, next - t, 1) > 1) {
            fprintf(stderr, "fmi2DoStep at step %ld failed\n", k);
            return 5;
        }
        if (get_real(c, reals, (size_t)nreal, vals) > 1) {
            fprintf(stderr, "fmi2GetReal failed\n");
            return 5;
        }
        fwrite(vals, sizeof(double), (size_t)nreal, out);
    }
    fclose(out);
    terminate(c);
    free_instance(c);
    free(vals);
    printf("%d\n", nreal);
    return 0;
}
