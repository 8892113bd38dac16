/* A plain C FMI 2.0 host for fmu_mb's native FMUs (co-simulation, or Model Exchange integrated by RK4 here): no
 * Python, no environment.
 * Usage: fmu_host [--me=NX,M] BINARY RESOURCES_URI GUID N DT OUT VRS [VR=VALUE | VR:i=VALUE ...]
 *   --me=NX,M  Model Exchange: NX continuous states, M classical RK4 steps per communication step (fmi2SetTime,
 *              fmi2SetContinuousStates, fmi2GetDerivatives; fmi2CompletedIntegratorStep after each)
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
typedef fmi2Status (*time_t_)(fmi2Component, double);
typedef fmi2Status (*states_t)(fmi2Component, double *, size_t);
typedef fmi2Status (*completed_t)(fmi2Component, int, int *, int *);

/* Model Exchange: the states from t over dt by m classical RK4 steps; 0 on failure. */
typedef struct {
    time_t_ set_time;
    states_t set_states, get_states, get_derivatives;
    completed_t completed;
    size_t nx;
    double *x, *y, *k[4];
} Me;

static int derivative(fmi2Component c, Me *me, double t, const double *x, double *dx) {
    return me->set_time(c, t) <= 1 && me->set_states(c, (double *)x, me->nx) <= 1 &&
           me->get_derivatives(c, dx, me->nx) <= 1;
}

static int rk4(fmi2Component c, Me *me, double t, double dt, long m) {
    double h = dt / (double)m;
    const double a[3] = {0.5, 0.5, 1.0};
    for (long s = 0; s < m; ++s, t += h) {
        if (!derivative(c, me, t, me->x, me->k[0])) return 0;
        for (int j = 0; j < 3; ++j) {
            for (size_t i = 0; i < me->nx; ++i) me->y[i] = me->x[i] + a[j] * h * me->k[j][i];
            if (!derivative(c, me, t + a[j] * h, me->y, me->k[j + 1])) return 0;
        }
        for (size_t i = 0; i < me->nx; ++i)
            me->x[i] += h / 6.0 * (me->k[0][i] + 2.0 * me->k[1][i] + 2.0 * me->k[2][i] + me->k[3][i]);
        int event = 0, stop = 0;
        if (me->set_time(c, t + h) > 1 || me->set_states(c, me->x, me->nx) > 1 || me->completed(c, 1, &event, &stop) > 1)
            return 0;
    }
    return 1;
}

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
    long nx = 0, m = 0;
    if (argc > 1 && strncmp(argv[1], "--me=", 5) == 0) {       /* Model Exchange */
        if (sscanf(argv[1] + 5, "%ld,%ld", &nx, &m) != 2 || nx <= 0 || m <= 0) {
            fprintf(stderr, "--me=NX,M: NX states, M RK4 steps per communication step\n");
            return 2;
        }
        ++argv;
        --argc;
    }
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
    Me me = {0};
    if (nx) {
        me.set_time = (time_t_)need(lib, "fmi2SetTime");
        me.set_states = (states_t)need(lib, "fmi2SetContinuousStates");
        me.get_states = (states_t)need(lib, "fmi2GetContinuousStates");
        me.get_derivatives = (states_t)need(lib, "fmi2GetDerivatives");
        me.completed = (completed_t)need(lib, "fmi2CompletedIntegratorStep");
        me.nx = (size_t)nx;
        me.x = calloc((size_t)nx, 8);
        me.y = calloc((size_t)nx, 8);
        for (int j = 0; j < 4; ++j) me.k[j] = calloc((size_t)nx, 8);
    }
    fmi2Component c = instantiate("host", nx ? 0 : 1, argv[3], argv[2], &cb, 0, 0);
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
    if (nx && (((call_t)need(lib, "fmi2EnterContinuousTimeMode"))(c) > 1 || me.get_states(c, me.x, me.nx) > 1)) {
        fprintf(stderr, "fmi2EnterContinuousTimeMode / fmi2GetContinuousStates failed\n");
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
        if (nx ? !rk4(c, &me, t, next - t, m) : do_step(c, t, next - t, 1) > 1) {
            fprintf(stderr, "%s at step %ld failed\n", nx ? "the Model Exchange RK4 step" : "fmi2DoStep", k);
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
