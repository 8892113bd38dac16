/* A minimal plain-C FMI 2.0 co-simulation host (tests/test_fmu.py::test_plain_c_host).
 *
 * usage: host <unzipped FMU dir> <model identifier> <input name vr> <output vr> <steps> <h> <guid>
 * Loads binaries/linux64/<id>.so with dlopen (no libpython preloaded, no PYTHONPATH),
 * runs <steps> steps of <h> s with input vr = 1.0 and prints "t value" after each 10 steps,
 * then "STATUS ok" or the failing call. Exit code 0 on success.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *Comp;
typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(void *, int);
    void *componentEnvironment;
} Callbacks;

static void logger(void *env, const char *inst, int status, const char *cat, const char *msg, ...) {
    va_list ap;
    va_start(ap, msg);
    printf("LOG[%d] %s: ", status, cat ? cat : "");
    vprintf(msg, ap);
    printf("\n");
    va_end(ap);
}

typedef Comp (*inst_t)(const char *, int, const char *, const char *, const Callbacks *, int, int);
typedef int (*setup_t)(Comp, int, double, double, int, double);
typedef int (*call_t)(Comp);
typedef int (*setr_t)(Comp, const unsigned *, size_t, const double *);
typedef int (*getr_t)(Comp, const unsigned *, size_t, double *);
typedef int (*step_t)(Comp, double, double, int);
typedef void (*free_t)(Comp);

#define SYM(type, name) type name = (type)dlsym(lib, #name); if (!name) { printf("missing %s\n", #name); return 2; }

int main(int argc, char **argv) {
    if (argc < 8) { fprintf(stderr, "usage\n"); return 2; }
    char path[4096], uri[4200];
    snprintf(path, sizeof path, "%s/binaries/linux64/%s.so", argv[1], argv[2]);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { printf("dlopen failed: %s\n", dlerror()); return 3; }
    SYM(inst_t, fmi2Instantiate)
    SYM(setup_t, fmi2SetupExperiment)
    SYM(call_t, fmi2EnterInitializationMode)
    SYM(call_t, fmi2ExitInitializationMode)
    SYM(setr_t, fmi2SetReal)
    SYM(getr_t, fmi2GetReal)
    SYM(step_t, fmi2DoStep)
    SYM(call_t, fmi2Terminate)
    SYM(free_t, fmi2FreeInstance)
    Callbacks cb = {logger, calloc, free, NULL, NULL};
    snprintf(uri, sizeof uri, "file://%s/resources", argv[1]);
    Comp c = fmi2Instantiate("chost", 1, argv[7], uri, &cb, 0, 1);
    if (!c) { printf("STATUS instantiate failed\n"); return 4; }
    unsigned in = (unsigned)atoi(argv[3]), out = (unsigned)atoi(argv[4]);
    int steps = atoi(argv[5]);
    double h = atof(argv[6]), one = 1.0, v = 0.0, nan = 0.0 / 0.0;
    if (fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0) || fmi2EnterInitializationMode(c) ||
        fmi2ExitInitializationMode(c)) { printf("STATUS init failed\n"); return 5; }
    if (fmi2SetReal(c, &in, 1, &one)) { printf("STATUS setReal failed\n"); return 6; }
    for (int k = 0; k < steps; ++k) {
        int s = fmi2DoStep(c, k * h, h, 1);
        if (s) { printf("STATUS doStep returned %d\n", s); return 7; }
        if ((k + 1) % 10 == 0) { fmi2GetReal(c, &out, 1, &v); printf("%.6f %.17g\n", (k + 1) * h, v); }
    }
    /* a NaN input must come back as fmi2Error (3) through this plain C host too */
    printf("NAN_STATUS %d\n", fmi2SetReal(c, &in, 1, &nan));
    fmi2Terminate(c);
    fmi2FreeInstance(c);
    printf("STATUS ok\n");
    return 0;
}
