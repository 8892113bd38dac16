/*
 * fmu_mb FMU binary (linux64): a thin FMI 2.0 layer in front of pythonfmu's wrapper.
 *
 * Why it exists (see fmu_mb/fmi/status.py):
 *   1. Status codes. pythonfmu's wrapper can only return fmi2OK, fmi2Discard
 *      (do_step returned False) or fmi2Fatal (a Python exception, after which the
 *      instance's Python objects are freed). The Python slave calls
 *      fmu_mb_report_status(status) while an FMI function runs; this layer
 *      returns the worse of that and the wrapper's status, so the host sees
 *      fmi2Warning / fmi2Error where FMI 2.0 asks for them.
 *   2. Plain C hosts. pythonfmu's wrapper needs libpython's symbols in the global
 *      namespace (otherwise: "undefined symbol: _Py_NoneStruct"). Before loading
 *      it, this layer dlopens libpython with RTLD_GLOBAL unless the host already
 *      provides Python (every Python host does). If it has to start Python itself
 *      and PYTHONPATH is unset, it points PYTHONPATH at the site-packages the FMU
 *      was built with (FMU_MB_SITE, when that directory exists), so numpy and
 *      numba are found without LD_PRELOAD or environment set-up.
 *
 *   3. Clean exit of C hosts. When pythonfmu starts Python itself it finalizes it
 *      from its library destructor, i.e. during _dl_fini, after other libraries
 *      (scipy's libgfortran, loaded by numba) have run their finalizers: the
 *      process then aborts at exit ("free(): corrupted unsorted chunks",
 *      measured with tests/c_host/host.c). When this layer had to load libpython,
 *      it registers an atexit handler, which glibc runs before _dl_fini, calling
 *      the wrapper's finalizePythonInterpreter() while every library is intact.
 *
 * The wrapper (pythonfmu-export.so, shipped next to this library) is loaded with
 * RTLD_DEEPBIND so that its own fmi2* symbols never resolve to the ones here.
 * Environment overrides: FMU_MB_LIBPYTHON (path of libpython to load).
 *
 * The FMI 2.0 C types are declared below from the standard's ABI.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated } fmi2StatusKind;
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...);
typedef struct {
    fmi2CallbackLogger logger;
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(fmi2ComponentEnvironment, fmi2Status);
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

#ifndef FMU_MB_LIBPYTHON
#define FMU_MB_LIBPYTHON "libpython3.so"
#endif
#ifndef FMU_MB_SITE
#define FMU_MB_SITE ""
#endif

#define EXPORT __attribute__((visibility("default")))

static void *g_wrapper = NULL;
static char g_error[PATH_MAX + 256] = "";
static __thread int g_reported = fmi2OK;

/* Called from Python (ctypes) while an FMI function runs: raise the status it returns. */
EXPORT void fmu_mb_report_status(int status) {
    if (status > g_reported) g_reported = status;
}

static int python_available(void) { return dlsym(RTLD_DEFAULT, "Py_IsInitialized") != NULL; }

static int g_started_python = 0;

static void finalize_python_before_dl_fini(void) {
    void (*fin)(void) = g_wrapper ? (void (*)(void))dlsym(g_wrapper, "finalizePythonInterpreter") : NULL;
    if (fin) fin();
}

static int load_wrapper(void) {
    if (g_wrapper) return 1;
    if (!python_available()) {
        const char *lib = getenv("FMU_MB_LIBPYTHON");
        if (!lib || !*lib) lib = FMU_MB_LIBPYTHON;
        if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL) && !dlopen("libpython3.so", RTLD_NOW | RTLD_GLOBAL)) {
            snprintf(g_error, sizeof g_error, "fmu_mb: cannot load libpython (%s): %s", lib, dlerror());
            return 0;
        }
        struct stat st;
        if (!getenv("PYTHONPATH") && FMU_MB_SITE[0] && stat(FMU_MB_SITE, &st) == 0) setenv("PYTHONPATH", FMU_MB_SITE, 0);
        g_started_python = 1;
    }
    Dl_info info;
    if (!dladdr((void *)&fmu_mb_report_status, &info) || !info.dli_fname) {
        snprintf(g_error, sizeof g_error, "fmu_mb: cannot locate the FMU binary directory");
        return 0;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0'; else snprintf(path, sizeof path, ".");
    strncat(path, "/pythonfmu-export.so", sizeof path - strlen(path) - 1);
    g_wrapper = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!g_wrapper) {
        snprintf(g_error, sizeof g_error, "fmu_mb: cannot load %s: %s", path, dlerror());
        return 0;
    }
    if (g_started_python) atexit(finalize_python_before_dl_fini);
    return 1;
}

static void *wrapped(const char *name) { return load_wrapper() ? dlsym(g_wrapper, name) : NULL; }

/* Forward an fmi2Status function; the result is the worse of the wrapper's and the reported status. */
#define FORWARD(name, params, args)                                               \
    EXPORT fmi2Status name params {                                               \
        typedef fmi2Status(*fn_t) params;                                         \
        static fn_t fn = NULL;                                                    \
        if (!fn) fn = (fn_t)wrapped(#name);                                       \
        if (!fn) return fmi2Error;                                                \
        g_reported = fmi2OK;                                                      \
        fmi2Status shim_status_ = fn args;                                        \
        int shim_reported_ = g_reported;                                          \
        g_reported = fmi2OK;                                                      \
        return (int)shim_status_ > shim_reported_ ? shim_status_                  \
                                                  : (fmi2Status)shim_reported_;   \
    }

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

EXPORT fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String guid,
                                     fmi2String resourceLocation, const fmi2CallbackFunctions *functions,
                                     fmi2Boolean visible, fmi2Boolean loggingOn) {
    typedef fmi2Component (*fn_t)(fmi2String, fmi2Type, fmi2String, fmi2String, const fmi2CallbackFunctions *,
                                  fmi2Boolean, fmi2Boolean);
    fn_t fn = (fn_t)wrapped("fmi2Instantiate");
    if (!fn) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, instanceName, fmi2Fatal, "logStatusFatal", "%s",
                              g_error[0] ? g_error : "fmu_mb: fmi2Instantiate not found in the wrapper");
        return NULL;
    }
    g_reported = fmi2OK;
    fmi2Component c = fn(instanceName, fmuType, guid, resourceLocation, functions, visible, loggingOn);
    g_reported = fmi2OK;
    return c;
}

EXPORT void fmi2FreeInstance(fmi2Component c) {
    typedef void (*fn_t)(fmi2Component);
    static fn_t fn = NULL;
    if (!fn) fn = (fn_t)wrapped("fmi2FreeInstance");
    if (fn && c) fn(c);
}

FORWARD(fmi2SetDebugLogging, (fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]), (c, on, n, cat))
FORWARD(fmi2SetupExperiment, (fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start, fmi2Boolean stopDef,
                              fmi2Real stop), (c, tolDef, tol, start, stopDef, stop))
FORWARD(fmi2EnterInitializationMode, (fmi2Component c), (c))
FORWARD(fmi2ExitInitializationMode, (fmi2Component c), (c))
FORWARD(fmi2Terminate, (fmi2Component c), (c))
FORWARD(fmi2Reset, (fmi2Component c), (c))
FORWARD(fmi2GetReal, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]), (c, vr, n, v))
FORWARD(fmi2GetInteger, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]), (c, vr, n, v))
FORWARD(fmi2GetBoolean, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]), (c, vr, n, v))
FORWARD(fmi2GetString, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]), (c, vr, n, v))
FORWARD(fmi2SetReal, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]), (c, vr, n, v))
FORWARD(fmi2SetInteger, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]),
        (c, vr, n, v))
FORWARD(fmi2SetBoolean, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]),
        (c, vr, n, v))
FORWARD(fmi2SetString, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]),
        (c, vr, n, v))
FORWARD(fmi2GetFMUstate, (fmi2Component c, fmi2FMUstate *s), (c, s))
FORWARD(fmi2SetFMUstate, (fmi2Component c, fmi2FMUstate s), (c, s))
FORWARD(fmi2FreeFMUstate, (fmi2Component c, fmi2FMUstate *s), (c, s))
FORWARD(fmi2SerializedFMUstateSize, (fmi2Component c, fmi2FMUstate s, size_t *n), (c, s, n))
FORWARD(fmi2SerializeFMUstate, (fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n), (c, s, b, n))
FORWARD(fmi2DeSerializeFMUstate, (fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s), (c, b, n, s))
FORWARD(fmi2GetDirectionalDerivative, (fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                       const fmi2ValueReference z[], size_t nz, const fmi2Real dv[], fmi2Real dz[]),
        (c, u, nu, z, nz, dv, dz))
FORWARD(fmi2SetRealInputDerivatives, (fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                      const fmi2Integer order[], const fmi2Real v[]), (c, vr, n, order, v))
FORWARD(fmi2GetRealOutputDerivatives, (fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], fmi2Real v[]), (c, vr, n, order, v))
FORWARD(fmi2DoStep, (fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior), (c, t, h, noSetPrior))
FORWARD(fmi2CancelStep, (fmi2Component c), (c))
FORWARD(fmi2GetStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Status *v), (c, k, v))
FORWARD(fmi2GetRealStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Real *v), (c, k, v))
FORWARD(fmi2GetIntegerStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Integer *v), (c, k, v))
FORWARD(fmi2GetBooleanStatus, (fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v), (c, k, v))
FORWARD(fmi2GetStringStatus, (fmi2Component c, const fmi2StatusKind k, fmi2String *v), (c, k, v))
