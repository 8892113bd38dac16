/* A closed loop in plain C, as on a hardware-in-the-loop rig: a native fmu_mb FMU (the plant) stepped at a
 * fixed rate, a PD law computed in C between its steps. No Python, no FMI library: the binary is loaded
 * with dlopen (LoadLibrary on Windows) and called through the FMI 2.0 co-simulation functions.
 * The guide docs/closed-loops.md builds and runs it; docs/native-fmus.md runs it on Windows and AArch64.
 *
 *   pd_loop BINARY RESOURCES_URI GUID Q_VRS QD_VRS TAU_VRS KP KD Q_REF STEPS DT
 *
 *   BINARY         binaries/<platform>/<model>.so|.dll of the extracted FMU
 *   RESOURCES_URI  file:// URI of its resources folder
 *   Q_VRS ...      comma-separated value references of the joint angles, rates and drive torques
 *   KP, KD         comma-separated gains per joint (N·m/rad, N·m·s/rad)
 *   Q_REF          the set point of every joint (rad); STEPS steps of DT seconds from t = 0
 *
 * Prints the joint angles at the end; exit status 0, or the failing FMI call on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <windows.h>
#define open_library(path) ((void *)LoadLibraryA(path))
#define symbol(lib, name) ((void *)GetProcAddress((HMODULE)(lib), name))
#else
#include <dlfcn.h>
#define open_library(path) dlopen(path, RTLD_NOW | RTLD_LOCAL)
#define symbol(lib, name) dlsym(lib, name)
#endif

#define MAX_JOINTS 64

typedef void *fmi2Component;
typedef unsigned int fmi2ValueReference;
typedef int fmi2Status;                                /* 0 OK, 1 warning, 2 discard, 3 error, 4 fatal */
typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(void *, int);
    void *env;
} fmi2CallbackFunctions;

static void logger(void *env, const char *instance, int status, const char *category, const char *message, ...) {
    (void)env;
    if (status > 0) fprintf(stderr, "[%s] %s: %s\n", instance, category, message);   /* the FMU's own message */
}

static int parse_list(const char *text, double *out) {         /* "1,2.5,3" -> out, count */
    int n = 0;
    for (char *p = (char *)text; *p && n < MAX_JOINTS;) {
        out[n++] = strtod(p, &p);
        if (*p == ',') ++p;
    }
    return n;
}

static void *need(void *lib, const char *name) {
    void *f = symbol(lib, name);
    if (!f) {
        fprintf(stderr, "the FMU binary exports no %s\n", name);
        exit(3);
    }
    return f;
}

int main(int argc, char **argv) {
    if (argc != 12) {
        fprintf(stderr, "usage: %s BINARY RESOURCES_URI GUID Q_VRS QD_VRS TAU_VRS KP KD Q_REF STEPS DT\n", argv[0]);
        return 2;
    }
    void *lib = open_library(argv[1]);
    if (!lib) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 3;
    }
    fmi2Component (*instantiate)(const char *, int, const char *, const char *, const fmi2CallbackFunctions *, int,
                                 int) = need(lib, "fmi2Instantiate");
    fmi2Status (*setup)(fmi2Component, int, double, double, int, double) = need(lib, "fmi2SetupExperiment");
    fmi2Status (*enter_init)(fmi2Component) = need(lib, "fmi2EnterInitializationMode");
    fmi2Status (*exit_init)(fmi2Component) = need(lib, "fmi2ExitInitializationMode");
    fmi2Status (*get_real)(fmi2Component, const fmi2ValueReference *, size_t, double *) = need(lib, "fmi2GetReal");
    fmi2Status (*set_real)(fmi2Component, const fmi2ValueReference *, size_t, const double *) =
        need(lib, "fmi2SetReal");
    fmi2Status (*do_step)(fmi2Component, double, double, int) = need(lib, "fmi2DoStep");
    fmi2Status (*terminate)(fmi2Component) = need(lib, "fmi2Terminate");
    void (*free_instance)(fmi2Component) = need(lib, "fmi2FreeInstance");

    double v[MAX_JOINTS], kp[MAX_JOINTS], kd[MAX_JOINTS];
    fmi2ValueReference q_vr[MAX_JOINTS], qd_vr[MAX_JOINTS], tau_vr[MAX_JOINTS];
    int n = parse_list(argv[4], v);
    for (int i = 0; i < n; ++i) q_vr[i] = (fmi2ValueReference)v[i];
    parse_list(argv[5], v);
    for (int i = 0; i < n; ++i) qd_vr[i] = (fmi2ValueReference)v[i];
    parse_list(argv[6], v);
    for (int i = 0; i < n; ++i) tau_vr[i] = (fmi2ValueReference)v[i];
    if (parse_list(argv[7], kp) != n || parse_list(argv[8], kd) != n) {
        fprintf(stderr, "KP and KD need one gain per joint (%d)\n", n);
        return 2;
    }
    double q_ref = atof(argv[9]), dt = atof(argv[11]);
    long steps = atol(argv[10]);

    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    fmi2Component plant = instantiate("plant", 1 /* fmi2CoSimulation */, argv[3], argv[2], &callbacks, 0, 0);
    if (!plant || setup(plant, 0, 0.0, 0.0, 0, 0.0) > 1 || enter_init(plant) > 1 || exit_init(plant) > 1) {
        fprintf(stderr, "the FMU did not initialize\n");
        return 4;
    }
    double q[MAX_JOINTS], qd[MAX_JOINTS], tau[MAX_JOINTS];
    for (long k = 0; k < steps; ++k) {                     /* the rig's fixed-rate loop */
        if (get_real(plant, q_vr, (size_t)n, q) > 1 || get_real(plant, qd_vr, (size_t)n, qd) > 1) return 5;
        for (int i = 0; i < n; ++i) tau[i] = kp[i] * (q_ref - q[i]) - kd[i] * qd[i];
        if (set_real(plant, tau_vr, (size_t)n, tau) > 1) return 5;
        if (do_step(plant, (double)k * dt, dt, 1) > 1) {  /* fmi2Error: the message came through logger */
            fprintf(stderr, "fmi2DoStep failed at t = %g s\n", (double)k * dt);
            return 5;
        }
    }
    get_real(plant, q_vr, (size_t)n, q);
    printf("joint angles after %g s:", (double)steps * dt);
    for (int i = 0; i < n; ++i) printf(" %.17g", q[i]);
    printf("\n");
    terminate(plant);
    free_instance(plant);
    return 0;
}
