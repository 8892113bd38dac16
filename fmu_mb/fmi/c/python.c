/*
 * The run source of a Python FMU (source.h, Linux): the model file's Python builds the compiled arrays for
 * any parameter values and computes the trajectory tables; everything else (the FMI behaviour, the kernels)
 * is the core's, as in a native FMU.
 *
 * pythonfmu's wrapper (pythonfmu-export.so, shipped next to this binary and loaded with RTLD_DEEPBIND so that
 * its fmi2* symbols never resolve to ours) embeds the interpreter and instantiates the slave script's class
 * (fmu_mb.fmi.slave.MechanismSlave), which registers its build and table functions with the instance being
 * opened (fmu_mb_python_register, called from Python through ctypes while this thread opens it). The
 * wrapper's other FMI functions are never called. What this layer adds to the wrapper (measured problems of
 * pythonfmu 0.7):
 *
 *  1. Resource location: the wrapper only replaces "%20" and strips "file://"; it gets the folder the core
 *     decoded, as a path it cannot misread (a private symbolic link where the path contains "%20" or is not
 *     UTF-8).
 *  2. Clean exit: the wrapper finalizes Python from its library destructor, after its static
 *     std::shared_ptr<PyState> was destroyed by the exit handlers (valgrind: "invalid read ... in
 *     finalizePythonInterpreter, block free'd by __run_exit_handlers"), which corrupts glibc's free lists
 *     ("corrupted double-linked list" at exit). An atexit handler registered after loading the wrapper runs
 *     before that destructor and releases the PyState while it is alive.
 *  3. Plain C hosts: the wrapper needs libpython's symbols global ("undefined symbol: _Py_NoneStruct"); libpython
 *     is loaded with RTLD_GLOBAL unless the host provides Python, and PYTHONPATH points at the build
 *     environment's site-packages if unset. FMU_MB_LIBPYTHON overrides the library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"

#ifndef FMU_MB_LIBPYTHON
#define FMU_MB_LIBPYTHON "libpython3.so"
#endif
#ifndef FMU_MB_SITE
#define FMU_MB_SITE ""
#endif
#define EXPORT __attribute__((visibility("default")))

/* The slave's functions (fmu_mb.fmi.slave): 1, or 0 with the reason in text. build: the arrays of the model
 * options among `values` (every variable's value) as the bytes of an arrays file, valid until this thread's
 * next build, and a token naming that build; table: the rows of trajectory `fn` of build `token`. */
typedef int (*build_fn)(const double *values, int64_t n, const unsigned char **blob, int64_t *size, int64_t *token,
                        char *text, int64_t tlen);
typedef int (*table_fn)(int64_t token, int64_t fn, const double *v, int64_t nv, double *time, double *par,
                        int64_t nseg, int64_t width, char *why, int64_t wlen);

/* The slave of this binary in this process: started by the first instance, kept for every later one (it holds
 * no instance's state: the model file's Python and its builds), released at exit. One slave per process also
 * keeps pythonfmu's per-instantiation leaks (a sys.path entry, the class lookup's strings) from growing. */
typedef struct {
    fmi2Component wrapper;             /* pythonfmu's instance of the slave */
    fmi2CallbackFunctions callbacks;   /* given to the wrapper: its messages go to the instance it serves */
    build_fn build;
    table_fn table;
} PySource;

/* One instance's view of the slave. */
typedef struct {
    PySource *py;
} Opened;

static void *g_wrapper = NULL;
static char g_error[PATH_MAX + 256] = "";
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_start = PTHREAD_MUTEX_INITIALIZER;
static PySource *g_source = NULL;
static char g_alias[PATH_MAX] = "";                /* the link the slave was started through (removed at exit) */
static __thread PySource *g_opening = NULL;
static __thread Instance *g_serving = NULL;        /* the instance whose call runs the slave on this thread */

EXPORT int fmu_mb_python_register(build_fn build, table_fn table) {
    if (!g_opening || !build || !table) return 0;
    g_opening->build = build;
    g_opening->table = table;
    return 1;
}

static int python_available(void) { return dlsym(RTLD_DEFAULT, "Py_IsInitialized") != NULL; }

static void release_wrapper_python_state(void) {
    void (*fin)(void) = g_wrapper ? (void (*)(void))dlsym(g_wrapper, "finalizePythonInterpreter") : NULL;
    if (fin) fin();
}

static void load_wrapper_once(void) {
    if (!python_available()) {
        const char *lib = getenv("FMU_MB_LIBPYTHON");
        if (!lib || !*lib) lib = FMU_MB_LIBPYTHON;
        if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL) && !dlopen("libpython3.so", RTLD_NOW | RTLD_GLOBAL)) {
            snprintf(g_error, sizeof g_error, MSG_PYTHON_MISSING, lib, dlerror());
            return;
        }
        struct stat st;
        if (!getenv("PYTHONPATH") && FMU_MB_SITE[0] && stat(FMU_MB_SITE, &st) == 0) setenv("PYTHONPATH", FMU_MB_SITE, 0);
    }
    Dl_info info;
    if (!dladdr((void *)&fmu_mb_python_register, &info) || !info.dli_fname) {
        snprintf(g_error, sizeof g_error, MSG_BINARY_UNLOCATED);
        return;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0';
    else snprintf(path, sizeof path, ".");
    strncat(path, "/pythonfmu-export.so", sizeof path - strlen(path) - 1);
    void *w = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!w) {
        snprintf(g_error, sizeof g_error, MSG_WRAPPER_MISSING, path, dlerror());
        return;
    }
    g_wrapper = w;
    atexit(release_wrapper_python_state);      /* registered after the wrapper's static objects (point 2) */
}

static void *wrapped(const char *name) {
    pthread_once(&g_once, load_wrapper_once);
    return g_wrapper ? dlsym(g_wrapper, name) : NULL;
}

/* The logger the wrapper calls: the text as the format, no arguments. */
static void wrapper_logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                           fmi2String category, fmi2String message, ...) {
    (void)env;
    (void)instance;
    (void)category;
    if (g_serving) fmu_say(g_serving, status, MSG_PYTHON_SAYS, message ? message : "");
}

/* The resources folder as the wrapper can take it: the folder itself (no trailing separator), or a private
 * symbolic link to its FMU folder when the wrapper would misread it (it replaces "%20" by ' ' and needs
 * UTF-8). */
static int wrapper_path(Instance *s, const char *dir, char *alias, char *out, size_t size) {
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s", dir);
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') root[--n] = '\0';
    if (fmu_valid_utf8(root) && !strstr(root, "%20")) {
        snprintf(out, size, "%s", root);
        return 1;
    }
    char *slash = strrchr(root, '/');
    if (!slash || strcmp(slash, "/resources") != 0) {
        FMU_ERROR(s, MSG_RESOURCES_NOT_PASSABLE, root);
        return 0;
    }
    *slash = '\0';
    const char *bases[] = {getenv("TMPDIR"), "/tmp"};
    for (int i = 0; i < 2; ++i) {
        const char *b = bases[i];
        if (!b || !*b || !fmu_valid_utf8(b) || strstr(b, "%20")) continue;
        snprintf(alias, PATH_MAX, "%s/fmu_mb-XXXXXX", b);
        if (!mkdtemp(alias)) continue;
        char link[PATH_MAX + 8];
        snprintf(link, sizeof link, "%s/fmu", alias);
        if (symlink(root, link) == 0) {
            snprintf(out, size, "%s/resources", link);
            return 1;
        }
        rmdir(alias);
    }
    alias[0] = '\0';
    FMU_ERROR(s, MSG_RESOURCES_NO_ALIAS, root);
    return 0;
}

static void remove_alias(void) {
    if (!g_alias[0]) return;
    char link[PATH_MAX + 8];
    snprintf(link, sizeof link, "%s/fmu", g_alias);
    unlink(link);
    rmdir(g_alias);
    g_alias[0] = '\0';
}

typedef fmi2Component (*instantiate_t)(fmi2String, fmi2Type, fmi2String, fmi2String, const fmi2CallbackFunctions *,
                                       fmi2Boolean, fmi2Boolean);
typedef void (*free_t)(fmi2Component);

/* The slave of this binary, started (by pythonfmu's wrapper, from instance s's resources) unless it runs. */
static PySource *start_slave(Instance *s) {
    char pass[PATH_MAX + 64], probe[4200];
    struct stat st;
    if (g_source) return g_source;
    snprintf(probe, sizeof probe, "%sslavemodule.txt", s->resources);
    if (stat(probe, &st) != 0) {
        FMU_ERROR(s, MSG_RESOURCES_NO_SLAVE, s->resources);
        return NULL;
    }
    instantiate_t inst = (instantiate_t)wrapped("fmi2Instantiate");
    if (!inst) {
        FMU_ERROR(s, "%s", g_error[0] ? g_error : MSG_WRAPPER_INCOMPLETE);
        return NULL;
    }
    PySource *p = calloc(1, sizeof *p);
    if (!p) {
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return NULL;
    }
    if (!wrapper_path(s, s->resources, g_alias, pass, sizeof pass)) {
        free(p);
        return NULL;
    }
    if (g_alias[0]) atexit(remove_alias);     /* (the slave may import from its resources later) */
    p->callbacks = s->cb;
    p->callbacks.logger = wrapper_logger;
    p->callbacks.stepFinished = NULL;
    p->callbacks.componentEnvironment = p;
    PySource *outer = g_opening;
    Instance *served = g_serving;
    g_opening = p;
    g_serving = s;
    /* the wrapper gets loggingOn = true: the core filters */
    p->wrapper = inst(FMU_MB_MODEL_ID, fmi2CoSimulation, FMU_MB_GUID, pass, &p->callbacks, 0, 1);
    g_opening = outer;
    g_serving = served;
    if (!p->wrapper || !p->build || !p->table) {
        if (p->wrapper) {
            free_t fr = (free_t)wrapped("fmi2FreeInstance");
            if (fr) fr(p->wrapper);
        }
        FMU_ERROR(s, MSG_SLAVE_NOT_STARTED, p->wrapper ? "did not register its functions" : "could not be started");
        remove_alias();
        free(p);
        return NULL;
    }
    return g_source = p;
}

int source_open(Instance *s, void **source) {
    Opened *o = calloc(1, sizeof *o);
    if (!o) {
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    pthread_mutex_lock(&g_start);
    o->py = start_slave(s);
    pthread_mutex_unlock(&g_start);
    if (!o->py) {
        free(o);
        return 0;
    }
    *source = o;
    return 1;
}

void source_close(Instance *s, void *source) {
    (void)s;
    free(source);
}

fmu_mb_arrays *source_build(Instance *s, void *source, int64_t *token, char *what, size_t len) {
    Opened *o = source;
    const unsigned char *blob = NULL;
    int64_t size = 0;
    char text[2048] = "", err[512];
    Instance *served = g_serving;
    g_serving = s;
    int ok = o->py->build(s->values, FMU_MB_NVARS, &blob, &size, token, text, (int64_t)sizeof text);
    g_serving = served;
    if (!ok) {
        FMU_ERROR(s, MSG_PYTHON_BUILD_REFUSED, text[0] ? text : "(no reason given)");
        return NULL;
    }
    fmu_mb_arrays *a = fmu_mb_arrays_parse(blob, (size_t)size, 0, err, sizeof err);
    if (!a) {
        FMU_ERROR(s, MSG_PYTHON_BUILD_DAMAGED, err);
        return NULL;
    }
    snprintf(what, len, "%s", text);
    return a;
}

int source_table(Instance *s, void *source, int64_t token, int64_t fn, const double *v, int64_t nv, double *time,
                 double *par, int64_t nseg, int64_t width, char *why, size_t len) {
    Opened *o = source;
    Instance *served = g_serving;
    g_serving = s;
    int ok = o->py->table(token, fn, v, nv, time, par, nseg, width, why, (int64_t)len);
    g_serving = served;
    if (ok) return 1;
    if (!why[0]) snprintf(why, len, MSG_TABLE_CHECK_FAILED, 0);
    return 0;
}
