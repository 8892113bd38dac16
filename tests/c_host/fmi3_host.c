/* A plain C FMI 3.0 co-simulation host for fmu_mb's native FMI 3.0 FMUs: no Python, no environment.
 * Usage: fmi3_host BINARY RESOURCE_PATH TOKEN N DT OUT VRS [VR=VALUE | VR:e=VALUE | VR:i=VALUE | VR:c=VALUE ...]
 *   BINARY         binaries/<platform tuple>/<id>.so|.dll of an extracted FMU
 *   RESOURCE_PATH  the resources folder's path, with its trailing separator (FMI 3.0's resourcePath)
 *   N, DT          number and size of communication steps from t = 0 (at t_k = k DT, as FMPy steps)
 *   OUT            file receiving, after each step, the Float64 values of VRS (raw float64)
 *   VRS            comma-separated value references of Float64 variables to record, then "/NVALUES" if some are
 *                  arrays (their number of values; default: one per value reference)
 *   VR=V           Float64 values set in initialization mode (parameters, inputs)
 *   VR:e=V         Enumeration values set there (fmi3SetInt64); VR:i=V Int32 values (fmi3SetInt32)
 *   VR:c=V         structural parameters (Int32) set in configuration mode, before initialization
 * Exit status 0 on success, the failing call's name on stderr otherwise. Built for Linux (cc, and the AArch64
 * cross compiler, run under qemu) and Windows (mingw-w64, run under wine). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynload.h"

typedef void *inst_t;
typedef uint32_t vr_t;
typedef int status_t;
typedef void (*log_t)(void *, status_t, const char *, const char *);
typedef inst_t (*instantiate_t)(const char *, const char *, const char *, bool, bool, bool, bool, const vr_t *, size_t,
                                void *, log_t, void *);   /* (fmi3Boolean is C's bool) */
typedef status_t (*enter_t)(inst_t, bool, double, double, bool, double);
typedef status_t (*call_t)(inst_t);
typedef status_t (*get_t)(inst_t, const vr_t *, size_t, double *, size_t);
typedef status_t (*set_t)(inst_t, const vr_t *, size_t, const double *, size_t);
typedef status_t (*set64_t)(inst_t, const vr_t *, size_t, const int64_t *, size_t);
typedef status_t (*set32_t)(inst_t, const vr_t *, size_t, const int32_t *, size_t);
typedef status_t (*step_t)(inst_t, double, double, bool, bool *, bool *, bool *, double *);
typedef void (*free_t)(inst_t);

static void logger(void *env, status_t status, const char *category, const char *message) {
    (void)env;
    if (status >= 1) fprintf(stderr, "[%d %s] %s\n", status, category, message);
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
        fprintf(stderr, "usage: %s BINARY RESOURCE_PATH TOKEN N DT OUT VRS [VR=VALUE ...]\n", argv[0]);
        return 2;
    }
    void *lib = open_library(argv[1]);
    if (!lib) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 3;
    }
    instantiate_t instantiate = (instantiate_t)need(lib, "fmi3InstantiateCoSimulation");
    enter_t enter = (enter_t)need(lib, "fmi3EnterInitializationMode");
    call_t exit_init = (call_t)need(lib, "fmi3ExitInitializationMode"), terminate = (call_t)need(lib, "fmi3Terminate");
    get_t get = (get_t)need(lib, "fmi3GetFloat64");
    set_t set = (set_t)need(lib, "fmi3SetFloat64");
    set64_t set64 = (set64_t)need(lib, "fmi3SetInt64");
    set32_t set32 = (set32_t)need(lib, "fmi3SetInt32");
    step_t do_step = (step_t)need(lib, "fmi3DoStep");
    call_t enter_config = (call_t)need(lib, "fmi3EnterConfigurationMode");
    call_t exit_config = (call_t)need(lib, "fmi3ExitConfigurationMode");
    free_t free_instance = (free_t)need(lib, "fmi3FreeInstance");
    inst_t c = instantiate("host", argv[3], argv[2], false, false, false, false, NULL, 0, NULL, logger, NULL);
    if (!c) {
        fprintf(stderr, "fmi3InstantiateCoSimulation failed\n");
        return 4;
    }
    long n = atol(argv[4]);
    double dt = atof(argv[5]);
    for (int i = 8; i < argc; ++i) {           /* structural parameters: in configuration mode */
        char *end;
        vr_t vr = (vr_t)strtoul(argv[i], &end, 10);
        const char *eq = strchr(argv[i], '=');
        int32_t k = eq ? (int32_t)atof(eq + 1) : 0;
        if (end[0] != ':' || end[1] != 'c') continue;
        if (enter_config(c) > 1 || set32(c, &vr, 1, &k, 1) > 1 || exit_config(c) > 1) {
            fprintf(stderr, "configuring %s failed\n", argv[i]);
            return 4;
        }
    }
    if (enter(c, false, 0.0, 0.0, false, 0.0) > 1) {
        fprintf(stderr, "fmi3EnterInitializationMode failed\n");
        return 4;
    }
    for (int i = 8; i < argc; ++i) {
        char *end;
        vr_t vr = (vr_t)strtoul(argv[i], &end, 10);
        const char *eq = strchr(argv[i], '=');
        double v = eq ? atof(eq + 1) : 0.0;
        int64_t e = (int64_t)v;
        int32_t k = (int32_t)v;
        char kind = end[0] == ':' ? end[1] : 'f';
        if (kind == 'c') continue;
        status_t st = kind == 'e' ? set64(c, &vr, 1, &e, 1) : kind == 'i' ? set32(c, &vr, 1, &k, 1) : set(c, &vr, 1, &v, 1);
        if (st > 1) {
            fprintf(stderr, "setting %s failed\n", argv[i]);
            return 4;
        }
    }
    if (exit_init(c) > 1) {
        fprintf(stderr, "fmi3ExitInitializationMode failed\n");
        return 4;
    }
    static vr_t reals[65536];
    size_t nreal = 0;
    for (char *p = argv[7]; *p && nreal < 65536;) {
        reals[nreal++] = (vr_t)strtoul(p, &p, 10);
        if (*p == ',') ++p;
        if (*p == '/') break;
    }
    char *count = strchr(argv[7], '/');
    size_t nvalues = count ? (size_t)strtoul(count + 1, NULL, 10) : nreal;
    FILE *out = fopen(argv[6], "wb");
    if (!out) {
        fprintf(stderr, "cannot write %s\n", argv[6]);
        return 3;
    }
    double *vals = malloc(sizeof(double) * (nvalues + 1));
    for (long k = 0; k < n; ++k) {
        double t = (double)k * dt, next = (double)(k + 1) * dt, last = 0.0;      /* FMPy's time grid */
        bool event = false, stop = false, early = false;
        if (do_step(c, t, next - t, true, &event, &stop, &early, &last) > 1 || event || stop || early || last != next) {
            fprintf(stderr, "fmi3DoStep at step %ld failed (event %d, terminate %d, early %d, reached %.17g)\n", k,
                    event, stop, early, last);
            return 5;
        }
        if (get(c, reals, nreal, vals, nvalues) > 1) {
            fprintf(stderr, "fmi3GetFloat64 failed\n");
            return 5;
        }
        fwrite(vals, sizeof(double), nvalues, out);
    }
    fclose(out);
    terminate(c);
    free_instance(c);
    free(vals);
    printf("%zu\n", nvalues);
    return 0;
}
