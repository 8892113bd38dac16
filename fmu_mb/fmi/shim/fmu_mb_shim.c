/*
 * fmu_mb FMU binary (linux64): the FMI 2.0 co-simulation layer in front of pythonfmu's wrapper.
 *
 * pythonfmu's wrapper (pythonfmu-export.so, shipped next to this library and loaded with
 * RTLD_DEEPBIND so that its fmi2* symbols never resolve to ours) runs the Python slave. Every
 * FMI call of the host lands here first. What this layer adds, each a measured problem of the
 * wrapper (pythonfmu 0.7):
 *
 *  1. Resource location. The wrapper only replaces "%20" and strips "file://": any other
 *     percent-escape (FMPy encodes non-ASCII letters, '+', '#', ';', '%'), "file:/path" or an
 *     empty/garbage URI leaves it without its slave script, and it then calls a NULL Python
 *     object (segmentation fault in fmi2Instantiate). Here the URI is decoded as RFC 3986 and
 *     RFC 8089 say (file:///p, file://localhost/p, file:/p; %XX escapes), checked to be this
 *     FMU's resources folder, and handed to the wrapper as a plain path it cannot misread (a
 *     private symbolic link where the path itself contains "%20" or is not UTF-8). Anything
 *     unusable: NULL with a logged message.
 *  2. Status codes. The wrapper returns only fmi2OK, fmi2Discard or fmi2Fatal. The Python
 *     slave reports fmi2Warning/fmi2Error through fmu_mb_report_status while a call runs; the
 *     host gets the worse of that and the wrapper's status.
 *  3. Logging. The wrapper drops every message when loggingOn is false, and passes message
 *     text as the logger's printf format (a '%' in a path then makes a formatting host read
 *     garbage arguments). Here warnings and errors always reach the host's logger (FMI 2.0:
 *     loggingOn switches debug logging only), debug messages follow loggingOn and
 *     fmi2SetDebugLogging's categories, '%' is escaped, and the category is never NULL.
 *  4. The state machine and arguments. Functions the wrapper answers itself (status
 *     inquiries, derivatives, cancel) follow FMI 2.0's co-simulation state table here, with
 *     the phase the Python slave reports (fmu_mb_report_phase); NULL arrays, NULL or unknown
 *     fmi2FMUstate handles, and a serialization buffer of the wrong size are refused with
 *     fmi2Error instead of dereferenced. The GUID and fmuType are checked at instantiation.
 *  5. Clean exit. The wrapper finalizes from its library destructor, after its static
 *     std::shared_ptr<PyState> was already destroyed by the exit handlers: it then decrements
 *     a count inside freed heap memory (valgrind: "invalid read ... in finalizePythonInterpreter,
 *     block free'd by __run_exit_handlers"), which corrupts glibc's free lists whenever that
 *     chunk sits in a bin ("corrupted double-linked list" / "free(): corrupted unsorted chunks"
 *     at exit, seemingly at random: it depends on the process's allocation history). This layer
 *     registers an atexit handler after loading the wrapper, so it runs before that static
 *     destructor and releases the PyState while it is alive. (When this layer starts Python
 *     itself, the same handler finalizes Python before _dl_fini, while every library is intact.)
 *  6. Plain C hosts. The wrapper needs libpython's symbols global ("undefined symbol:
 *     _Py_NoneStruct"); this layer dlopens libpython with RTLD_GLOBAL unless the host already
 *     provides Python, and points PYTHONPATH at the build environment's site-packages if unset.
 *
 * One fmu_mb instance (struct Shim) wraps one wrapper component. The instance a call is for is
 * kept in a thread-local pointer while the call runs, so the Python slave's reports reach it
 * from any host thread. Environment overrides: FMU_MB_LIBPYTHON (path of libpython to load).
 * The FMI 2.0 C types, log categories and URI parsing are shared with the native FMUs (fmi2_common.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmi2_common.h"

#ifndef FMU_MB_LIBPYTHON
#define FMU_MB_LIBPYTHON "libpython3.so"
#endif
#ifndef FMU_MB_SITE
#define FMU_MB_SITE ""
#endif
#ifndef FMU_MB_ID
#error FMU_MB_ID (the model identifier) must be defined
#endif
#ifndef FMU_MB_GUID
#error FMU_MB_GUID (the guid of modelDescription.xml) must be defined
#endif

#define EXPORT __attribute__((visibility("default")))
#define SHIM_MAGIC 0x424d554d46ul   /* "FMUMB" */
#define MAX_VALUES (1u << 24)        /* longest value-reference array accepted in one call */

/* Phases, as the Python slave reports them (fmu_mb.fmi.table_slave). */
enum { INSTANTIATED, INITIALIZATION, STEPPING, TERMINATED };
static const char *const PHASE_NAMES[] = {"instantiated", "initialization mode", "stepping", "terminated"};
#define IN(mask, phase) (((mask) >> (phase)) & 1u)
#define M_INST (1u << INSTANTIATED)
#define M_INIT (1u << INITIALIZATION)
#define M_STEP (1u << STEPPING)
#define M_TERM (1u << TERMINATED)

typedef struct Shim {
    unsigned long magic;
    fmi2Component inner;              /* the wrapper's component */
    fmi2CallbackFunctions host;       /* the host's callbacks */
    fmi2CallbackFunctions mine;       /* given to the wrapper: our logger, environment = this */
    char *name;
    int debug;                        /* debug logging on (loggingOn, fmi2SetDebugLogging) */
    unsigned categories;              /* enabled debug categories (bit i: CATEGORIES[i]); 0: all */
    int phase;                        /* reported by the slave */
    double time;                      /* FMU time, reported by the slave */
    double last_ok;                   /* end of the last successful fmi2DoStep */
    int reported;                     /* worst status the slave reported during the current call */
    void **states;                    /* fmi2FMUstate handles handed out and not freed */
    size_t n_states, cap_states;
    char alias[PATH_MAX];             /* private directory of a symbolic link to the FMU ("" if none) */
    pthread_mutex_t lock;             /* one call at a time per instance (recursive: a host's logger may call back) */
} Shim;

static void *g_wrapper = NULL;
static char g_error[PATH_MAX + 256] = "";
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static __thread Shim *g_current = NULL;

/* ------------------------------------------------------------------------------------------------
 * Logging
 */
/* Send `text` (plain text, not a format) to a host logger: '%' doubled, category never NULL. */
static void emit(const fmi2CallbackFunctions *cb, const char *instance, int status, const char *category,
                 const char *text) {
    if (!cb || !cb->logger) return;
    if (!text) text = "";
    if (!category || !*category || category_index(category) < 0) category = default_category(status);
    size_t n = strlen(text), pct = 0;
    for (size_t i = 0; i < n; ++i) pct += text[i] == '%';
    char *buf = malloc(n + pct + 1);
    if (!buf) {
        cb->logger(cb->componentEnvironment, instance ? instance : "", (fmi2Status)status, category, "%s",
                   "(out of memory formatting a log message)");
        return;
    }
    char *o = buf;
    for (size_t i = 0; i < n; ++i) {
        *o++ = text[i];
        if (text[i] == '%') *o++ = '%';
    }
    *o = '\0';
    cb->logger(cb->componentEnvironment, instance ? instance : "", (fmi2Status)status, category, buf);
    free(buf);
}

static void shim_log(Shim *s, int status, const char *category, const char *text) {
    if (status < fmi2Warning) {               /* debug message: loggingOn and the categories decide */
        if (!s->debug) return;
        int k = category_index(category && *category ? category : "logAll");
        if (s->categories && (k < 0 || !((s->categories >> k) & 1u))) return;
    }
    emit(&s->host, s->name, status, category, text);
}

static void shim_error(Shim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void shim_error(Shim *s, const char *fmt, ...) {
    char buf[PATH_MAX * 2 + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    shim_log(s, fmi2Error, "logStatusError", buf);
}

/* The logger the wrapper calls: it passes the text as the format, with no arguments. */
static void wrapper_logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                           fmi2String category, fmi2String message, ...) {
    (void)instance;
    Shim *s = env;
    if (s && s->magic == SHIM_MAGIC)
        shim_log(s, status, category && category_index(category) >= 0 ? category : default_category(status),
                 message);
}

/* ------------------------------------------------------------------------------------------------
 * Reports from the Python slave (ctypes, fmu_mb.fmi.status), for the instance whose call runs
 */
EXPORT void fmu_mb_report_status(int status) {
    if (g_current && status > g_current->reported) g_current->reported = status;
}

EXPORT void fmu_mb_report_phase(int phase, double time) {
    if (g_current && phase >= INSTANTIATED && phase <= TERMINATED) {
        g_current->phase = phase;
        g_current->time = time;
    }
}

EXPORT void fmu_mb_log(int status, const char *category, const char *message) {
    if (g_current) shim_log(g_current, status, category, message);
}

/* ------------------------------------------------------------------------------------------------
 * Loading pythonfmu's wrapper (and Python, for hosts without it)
 */
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
            snprintf(g_error, sizeof g_error, "fmu_mb: cannot load libpython (%s): %s", lib, dlerror());
            return;
        }
        struct stat st;
        if (!getenv("PYTHONPATH") && FMU_MB_SITE[0] && stat(FMU_MB_SITE, &st) == 0) setenv("PYTHONPATH", FMU_MB_SITE, 0);
    }
    Dl_info info;
    if (!dladdr((void *)&fmu_mb_report_status, &info) || !info.dli_fname) {
        snprintf(g_error, sizeof g_error, "fmu_mb: cannot locate the FMU binary directory");
        return;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0'; else snprintf(path, sizeof path, ".");
    strncat(path, "/pythonfmu-export.so", sizeof path - strlen(path) - 1);
    void *w = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!w) {
        snprintf(g_error, sizeof g_error, "fmu_mb: cannot load %s: %s", path, dlerror());
        return;
    }
    g_wrapper = w;
    /* registered after the wrapper's static objects, so it runs before their destructors (point 5) */
    atexit(release_wrapper_python_state);
}

static void *wrapped(const char *name) {
    pthread_once(&g_once, load_wrapper_once);
    return g_wrapper ? dlsym(g_wrapper, name) : NULL;
}

#define WRAPPED(type, name) ((type)wrapped(#name))

/* ------------------------------------------------------------------------------------------------
 * Calls
 */
static Shim *shim_of(fmi2Component c) {
    Shim *s = c;
    return (s && s->magic == SHIM_MAGIC) ? s : NULL;
}

typedef struct { Shim *prev; int reported; } Call;

/* A call into the wrapper: FMI 2.0 lets a host call one instance from one thread at a time only;
 * a host that does not is serialized here instead of interleaving inside the slave. */
static Call begin(Shim *s) {
    pthread_mutex_lock(&s->lock);
    Call k = {g_current, s->reported};
    g_current = s;
    s->reported = fmi2OK;
    return k;
}

static fmi2Status finish(Shim *s, Call k, fmi2Status wrapper_status) {
    int r = s->reported;
    s->reported = k.reported;
    g_current = k.prev;
    pthread_mutex_unlock(&s->lock);
    return (int)wrapper_status > r ? wrapper_status : (fmi2Status)r;
}

/* fmi2Error unless the current phase is in `mask` (FMI 2.0 co-simulation state table). */
static int allowed(Shim *s, unsigned mask, const char *fn) {
    if (IN(mask, s->phase)) return 1;
    shim_error(s, "%s is not allowed in %s (FMI 2.0 co-simulation state table)", fn, PHASE_NAMES[s->phase]);
    return 0;
}

static int arrays_ok(Shim *s, const char *fn, size_t n, const void *a, const char *an, const void *b,
                     const char *bn) {
    if (n > MAX_VALUES) {
        shim_error(s, "%s: nvr = %zu is larger than any call of this FMU needs (at most %u)", fn, n, MAX_VALUES);
        return 0;
    }
    if (n && (!a || (bn && !b))) {
        shim_error(s, "%s: %s is NULL with nvr = %zu", fn, !a ? an : bn, n);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * Resource location (RFC 3986 / RFC 8089 file URIs)
 */
/* A directory that holds this FMU's slave script; canonical path into out. */
static int is_our_resources(const char *path, char *out) {
    char canon[PATH_MAX], probe[PATH_MAX + 64];
    struct stat st;
    if (!realpath(path, canon) || stat(canon, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    snprintf(probe, sizeof probe, "%s/fmu_mb_slave_%s.py", canon, FMU_MB_ID);
    if (stat(probe, &st) != 0) return 0;
    snprintf(probe, sizeof probe, "%s/slavemodule.txt", canon);
    if (stat(probe, &st) != 0) return 0;
    strcpy(out, canon);
    return 1;
}

/* resourceLocation -> the resources directory (canonical) in out; 0 and a message on failure.
 * The decoded URI is tried first (the standard); a host that put a raw path into the URI
 * without encoding it is understood where the decoded form is no directory but the raw one is. */
static int resolve_resources(const char *uri, char *out, char *why, size_t wsize) {
    char decoded[PATH_MAX], raw[PATH_MAX], reason[PATH_MAX + 128] = "";
    if (!uri || !*uri) {
        snprintf(why, wsize, "fmuResourceLocation is %s; the host must pass the URI of the FMU's resources "
                 "folder (file:///path/to/resources)", uri ? "empty" : "NULL");
        return 0;
    }
    int ok_dec = decode_file_uri(uri, decoded, sizeof decoded, 1, reason, sizeof reason);
    if (ok_dec && is_our_resources(decoded, out)) return 1;
    char raw_why[64];
    if (decode_file_uri(uri, raw, sizeof raw, 0, raw_why, sizeof raw_why) && is_our_resources(raw, out)) return 1;
    if (ok_dec)
        snprintf(why, wsize, "fmuResourceLocation '%.1024s' is not the resources folder of this FMU ('%.1024s' "
                 "holds no fmu_mb_slave_%s.py)", uri, decoded, FMU_MB_ID);
    else
        snprintf(why, wsize, "fmuResourceLocation '%.1024s' cannot be used: %s", uri, reason);
    return 0;
}

/* The path handed to the wrapper: `dir` itself, or a private symbolic link to its FMU folder when
 * the wrapper would misread it (it replaces "%20" by ' ' and needs UTF-8). */
static int wrapper_path(Shim *s, const char *dir, char *out, size_t size) {
    if (valid_utf8(dir) && !strstr(dir, "%20")) {
        snprintf(out, size, "%s", dir);
        return 1;
    }
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s", dir);
    char *slash = strrchr(root, '/');
    if (!slash || strcmp(slash, "/resources") != 0) {
        shim_error(s, "fmi2Instantiate: the resources folder '%s' cannot be passed on (not named resources)", dir);
        return 0;
    }
    *slash = '\0';
    const char *bases[] = {getenv("TMPDIR"), "/tmp"};
    for (int i = 0; i < 2; ++i) {
        const char *b = bases[i];
        if (!b || !*b || !valid_utf8(b) || strstr(b, "%20")) continue;
        snprintf(s->alias, sizeof s->alias, "%s/fmu_mb-XXXXXX", b);
        if (!mkdtemp(s->alias)) continue;
        char link[PATH_MAX + 8];
        snprintf(link, sizeof link, "%s/fmu", s->alias);
        if (symlink(root, link) == 0) {
            snprintf(out, size, "%s/resources", link);
            return 1;
        }
        rmdir(s->alias);
    }
    s->alias[0] = '\0';
    shim_error(s, "fmi2Instantiate: the FMU folder '%s' has a name the Python wrapper cannot take, and no "
               "temporary link to it could be made", root);
    return 0;
}

static void remove_alias(Shim *s) {
    if (!s->alias[0]) return;
    char link[PATH_MAX + 8];
    snprintf(link, sizeof link, "%s/fmu", s->alias);
    unlink(link);
    rmdir(s->alias);
    s->alias[0] = '\0';
}

/* ------------------------------------------------------------------------------------------------
 * Life cycle
 */
EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

static void free_shim(Shim *s) {
    remove_alias(s);
    s->magic = 0;
    pthread_mutex_destroy(&s->lock);
    free(s->states);
    free(s->name);
    free(s);
}

EXPORT fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String guid,
                                     fmi2String resourceLocation, const fmi2CallbackFunctions *functions,
                                     fmi2Boolean visible, fmi2Boolean loggingOn) {
    char why[PATH_MAX * 2 + 256], dir[PATH_MAX], pass[PATH_MAX + 64];
    const char *name = instanceName ? instanceName : "";
    if (!functions || !functions->logger) {
        fprintf(stderr, "fmu_mb (%s): fmi2Instantiate: the host passed no logger callback; instantiation refused\n",
                FMU_MB_ID);
        return NULL;
    }
#define REFUSE(...) do { snprintf(why, sizeof why, __VA_ARGS__); \
        emit(functions, valid_utf8(name) ? name : "", fmi2Error, "logStatusError", why); return NULL; } while (0)
    if (!instanceName || !*instanceName) REFUSE("fmi2Instantiate: instanceName must be a non-empty string");
    if (!valid_utf8(instanceName)) REFUSE("fmi2Instantiate: instanceName is not valid UTF-8");
    if (fmuType != fmi2CoSimulation)
        REFUSE("fmi2Instantiate: this FMU implements co-simulation only (fmuType = %d)", (int)fmuType);
    if (!guid || strcmp(guid, FMU_MB_GUID) != 0)
        REFUSE("fmi2Instantiate: GUID '%.200s' does not match this FMU's %s (the modelDescription.xml the host "
               "read belongs to another FMU or another build of it)", guid ? guid : "(NULL)", FMU_MB_GUID);
    if (!resolve_resources(resourceLocation, dir, why, sizeof why)) {
        char msg[sizeof why + 32];
        snprintf(msg, sizeof msg, "fmi2Instantiate: %s", why);
        emit(functions, name, fmi2Error, "logStatusError", msg);
        return NULL;
    }
#undef REFUSE
    Shim *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name))) {
        free(s);
        emit(functions, name, fmi2Error, "logStatusError", "fmi2Instantiate: out of memory");
        return NULL;
    }
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    s->magic = SHIM_MAGIC;
    s->host = *functions;
    s->mine = *functions;
    s->mine.logger = wrapper_logger;
    s->mine.stepFinished = NULL;
    s->mine.componentEnvironment = s;
    s->debug = loggingOn != 0;
    if (!wrapper_path(s, dir, pass, sizeof pass)) {
        free_shim(s);
        return NULL;
    }
    typedef fmi2Component (*fn_t)(fmi2String, fmi2Type, fmi2String, fmi2String, const fmi2CallbackFunctions *,
                                  fmi2Boolean, fmi2Boolean);
    fn_t fn = WRAPPED(fn_t, fmi2Instantiate);
    if (!fn) {
        shim_error(s, "%s", g_error[0] ? g_error : "fmu_mb: fmi2Instantiate not found in pythonfmu's wrapper");
        free_shim(s);
        return NULL;
    }
    Call k = begin(s);
    /* the wrapper gets loggingOn = true: this layer filters (point 3) */
    s->inner = fn(name, fmi2CoSimulation, guid, pass, &s->mine, visible, 1);
    fmi2Status st = finish(s, k, s->inner ? fmi2OK : fmi2Error);
    if (s->inner && st >= fmi2Error) {              /* the slave could not set itself up (message logged) */
        typedef void (*free_t)(fmi2Component);
        free_t fr = WRAPPED(free_t, fmi2FreeInstance);
        if (fr) fr(s->inner);
        s->inner = NULL;
    }
    if (!s->inner) {
        free_shim(s);
        return NULL;
    }
    return s;
}

static void forget_state(Shim *s, size_t i) { s->states[i] = s->states[--s->n_states]; }

static long find_state(Shim *s, fmi2FMUstate st) {
    for (size_t i = 0; st && i < s->n_states; ++i)
        if (s->states[i] == st) return (long)i;
    return -1;
}

EXPORT void fmi2FreeInstance(fmi2Component c) {
    Shim *s = shim_of(c);
    if (!s) return;
    typedef fmi2Status (*fs_t)(fmi2Component, fmi2FMUstate *);
    typedef void (*free_t)(fmi2Component);
    fs_t fs = WRAPPED(fs_t, fmi2FreeFMUstate);
    free_t fr = WRAPPED(free_t, fmi2FreeInstance);
    Call k = begin(s);
    while (fs && s->n_states) {                     /* states belong to the instance: freed with it */
        fmi2FMUstate st = s->states[s->n_states - 1];
        fs(s->inner, &st);
        s->n_states--;
    }
    if (fr && s->inner) fr(s->inner);
    finish(s, k, fmi2OK);
    free_shim(s);
}

EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t n, const fmi2String cat[]) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    if (n && !cat) {
        shim_error(s, "fmi2SetDebugLogging: categories is NULL with nCategories = %zu", n);
        return fmi2Error;
    }
    unsigned mask = 0;
    for (size_t i = 0; i < n; ++i) {
        int k = category_index(cat[i]);
        if (k < 0) {
            shim_error(s, "fmi2SetDebugLogging: unknown log category '%.200s' (this FMU has logStatusWarning, "
                       "logStatusDiscard, logStatusError, logStatusFatal, logAll)", cat[i] ? cat[i] : "(NULL)");
            return fmi2Error;
        }
        mask |= 1u << k;
    }
    s->debug = loggingOn != 0;
    s->categories = mask;
    return fmi2OK;
}

/* Forward a call to the wrapper: the worse of its status and the slave's reported one. */
#define FORWARD(name, params, args)                                               \
    EXPORT fmi2Status name params {                                               \
        Shim *s = shim_of(c);                                                     \
        if (!s) return fmi2Error;                                                 \
        typedef fmi2Status(*fn_t) params;                                         \
        fn_t fn = WRAPPED(fn_t, name);                                            \
        if (!fn) { shim_error(s, "%s: %s", #name, g_error); return fmi2Error; }   \
        CHECKS                                                                    \
        Call k_ = begin(s);                                                       \
        fmi2Component c_outer_ = c;                                               \
        c = s->inner;                                                             \
        fmi2Status st_ = fn args;                                                 \
        c = c_outer_;                                                             \
        (void)c;                                                                  \
        return finish(s, k_, st_);                                                \
    }

#define CHECKS
FORWARD(fmi2SetupExperiment, (fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start, fmi2Boolean stopDef,
                              fmi2Real stop), (c, tolDef, tol, start, stopDef, stop))
FORWARD(fmi2EnterInitializationMode, (fmi2Component c), (c))
FORWARD(fmi2ExitInitializationMode, (fmi2Component c), (c))
FORWARD(fmi2Terminate, (fmi2Component c), (c))
FORWARD(fmi2Reset, (fmi2Component c), (c))
#undef CHECKS

#define CHECKS if (!arrays_ok(s, __func__, n, vr, "vr", v, "value")) return fmi2Error;
FORWARD(fmi2GetReal, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]), (c, vr, n, v))
FORWARD(fmi2GetInteger, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]), (c, vr, n, v))
FORWARD(fmi2GetBoolean, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]), (c, vr, n, v))
FORWARD(fmi2GetString, (fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]), (c, vr, n, v))
FORWARD(fmi2SetReal, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]), (c, vr, n, v))
FORWARD(fmi2SetInteger, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]),
        (c, vr, n, v))
FORWARD(fmi2SetBoolean, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]),
        (c, vr, n, v))
#undef CHECKS

/* fmi2SetString: the wrapper turns every string into a Python str before the slave can refuse it. */
#define CHECKS                                                                                      \
    if (!arrays_ok(s, __func__, n, vr, "vr", v, "value")) return fmi2Error;                        \
    for (size_t i = 0; i < n; ++i)                                                                  \
        if (!v[i] || !valid_utf8(v[i])) {                                                           \
            shim_error(s, "fmi2SetString: value %zu is %s", i, v[i] ? "not valid UTF-8" : "NULL"); \
            return fmi2Error;                                                                       \
        }
FORWARD(fmi2SetString, (fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]),
        (c, vr, n, v))
#undef CHECKS


/* ------------------------------------------------------------------------------------------------
 * FMU states: handles are the wrapper's (Python bytes objects); this layer keeps the list of
 * those it handed out, so that a NULL, freed or foreign handle is refused, not dereferenced.
 */
static int remember_state(Shim *s, fmi2FMUstate st) {
    if (s->n_states == s->cap_states) {
        size_t cap = s->cap_states ? 2 * s->cap_states : 8;
        void **p = realloc(s->states, cap * sizeof *p);
        if (!p) return 0;
        s->states = p;
        s->cap_states = cap;
    }
    s->states[s->n_states++] = st;
    return 1;
}

typedef fmi2Status (*state_fn_t)(fmi2Component, fmi2FMUstate *);

static void drop_new_state(Shim *s, fmi2FMUstate st) {
    state_fn_t fs = WRAPPED(state_fn_t, fmi2FreeFMUstate);
    if (fs && st) fs(s->inner, &st);
}

static int known_state(Shim *s, fmi2FMUstate st, const char *fn) {
    if (find_state(s, st) >= 0) return 1;
    shim_error(s, "%s: %s FMU state (not one this instance handed out, or already freed)", fn,
               st ? "unknown" : "NULL");
    return 0;
}

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    if (!state) { shim_error(s, "fmi2GetFMUstate: FMUstate pointer is NULL"); return fmi2Error; }
    state_fn_t fn = WRAPPED(state_fn_t, fmi2GetFMUstate);
    if (!fn) { shim_error(s, "fmi2GetFMUstate: %s", g_error); return fmi2Error; }
    fmi2FMUstate old = *state, fresh = NULL;
    Call k = begin(s);
    fmi2Status st = finish(s, k, fn(s->inner, &fresh));
    if (st >= fmi2Error || !fresh) {
        drop_new_state(s, fresh);
        return st >= fmi2Error ? st : fmi2Error;
    }
    if (!remember_state(s, fresh)) {
        drop_new_state(s, fresh);
        shim_error(s, "fmi2GetFMUstate: out of memory");
        return fmi2Error;
    }
    long i = find_state(s, old);     /* FMI 2.0: a non-NULL *FMUstate of ours is replaced ("updated") */
    if (i >= 0 && old != fresh) {
        forget_state(s, (size_t)i);
        drop_new_state(s, old);
    }
    *state = fresh;
    return st;
}

EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    if (!known_state(s, state, "fmi2SetFMUstate")) return fmi2Error;
    typedef fmi2Status (*fn_t)(fmi2Component, fmi2FMUstate);
    fn_t fn = WRAPPED(fn_t, fmi2SetFMUstate);
    if (!fn) { shim_error(s, "fmi2SetFMUstate: %s", g_error); return fmi2Error; }
    Call k = begin(s);
    fmi2Status st = finish(s, k, fn(s->inner, state));
    if (st <= fmi2Warning) s->last_ok = s->time;
    return st;
}

EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    if (!state || !*state) return fmi2OK;            /* nothing to free */
    long i = find_state(s, *state);
    if (i < 0) { known_state(s, *state, "fmi2FreeFMUstate"); return fmi2Error; }
    state_fn_t fn = WRAPPED(state_fn_t, fmi2FreeFMUstate);
    if (!fn) { shim_error(s, "fmi2FreeFMUstate: %s", g_error); return fmi2Error; }
    Call k = begin(s);
    fmi2Status st = finish(s, k, fn(s->inner, state));
    forget_state(s, (size_t)i);
    *state = NULL;
    return st;
}

EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    if (!size) { shim_error(s, "fmi2SerializedFMUstateSize: size pointer is NULL"); return fmi2Error; }
    if (!known_state(s, state, "fmi2SerializedFMUstateSize")) return fmi2Error;
    typedef fmi2Status (*fn_t)(fmi2Component, fmi2FMUstate, size_t *);
    fn_t fn = WRAPPED(fn_t, fmi2SerializedFMUstateSize);
    if (!fn) { shim_error(s, "fmi2SerializedFMUstateSize: %s", g_error); return fmi2Error; }
    Call k = begin(s);
    return finish(s, k, fn(s->inner, state, size));
}

EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    if (!known_state(s, state, "fmi2SerializeFMUstate")) return fmi2Error;
    size_t need = 0;
    fmi2Status st = fmi2SerializedFMUstateSize(c, state, &need);
    if (st >= fmi2Error) return st;
    if (size != need || !bytes) {
        shim_error(s, "fmi2SerializeFMUstate: %s (the state needs exactly %zu bytes, fmi2SerializedFMUstateSize)",
                   !bytes ? "the buffer is NULL" : "the buffer size differs from the state's size", need);
        return fmi2Error;
    }
    typedef fmi2Status (*fn_t)(fmi2Component, fmi2FMUstate, fmi2Byte[], size_t);
    fn_t fn = WRAPPED(fn_t, fmi2SerializeFMUstate);
    if (!fn) { shim_error(s, "fmi2SerializeFMUstate: %s", g_error); return fmi2Error; }
    Call k = begin(s);
    return finish(s, k, fn(s->inner, state, bytes, size));
}

EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                          fmi2FMUstate *state) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    if (!state || (!bytes && size)) {
        shim_error(s, "fmi2DeSerializeFMUstate: %s is NULL", !state ? "the FMUstate pointer" : "the byte array");
        return fmi2Error;
    }
    if (size > ((size_t)1 << 31)) {
        shim_error(s, "fmi2DeSerializeFMUstate: size %zu is larger than any state of this FMU", size);
        return fmi2Error;
    }
    typedef fmi2Status (*fn_t)(fmi2Component, const fmi2Byte[], size_t, fmi2FMUstate *);
    fn_t fn = WRAPPED(fn_t, fmi2DeSerializeFMUstate);
    if (!fn) { shim_error(s, "fmi2DeSerializeFMUstate: %s", g_error); return fmi2Error; }
    fmi2FMUstate fresh = NULL;
    static const fmi2Byte empty[1] = {0};
    Call k = begin(s);
    fmi2Status st = finish(s, k, fn(s->inner, bytes ? bytes : empty, size, &fresh));
    if (st >= fmi2Error || !fresh || !remember_state(s, fresh)) {   /* the slave checked the record */
        drop_new_state(s, fresh);
        return st >= fmi2Error ? st : fmi2Error;
    }
    *state = fresh;
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Stepping and status inquiries
 */
EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    typedef fmi2Status (*fn_t)(fmi2Component, fmi2Real, fmi2Real, fmi2Boolean);
    fn_t fn = WRAPPED(fn_t, fmi2DoStep);
    if (!fn) { shim_error(s, "fmi2DoStep: %s", g_error); return fmi2Error; }
    Call k = begin(s);
    fmi2Status st = finish(s, k, fn(s->inner, t, h, noSetPrior));
    if (st <= fmi2Warning) s->last_ok = s->time;
    return st;
}

EXPORT fmi2Status fmi2CancelStep(fmi2Component c) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    shim_error(s, "fmi2CancelStep: there is no asynchronous step to cancel (canRunAsynchronuously = false)");
    return fmi2Error;
}

static fmi2Status status_inquiry(Shim *s, const void *value, const char *fn) {
    if (!allowed(s, M_STEP | M_TERM, fn)) return fmi2Error;
    if (!value) { shim_error(s, "%s: value pointer is NULL", fn); return fmi2Error; }
    return fmi2OK;
}

static fmi2Status not_available(Shim *s, const char *fn, int kind) {
    char buf[300];
    snprintf(buf, sizeof buf, "%s: status kind %d is not available (this FMU steps synchronously: only "
             "fmi2GetRealStatus(fmi2LastSuccessfulTime) and fmi2GetBooleanStatus(fmi2Terminated) apply)", fn, kind);
    shim_log(s, fmi2Discard, "logStatusDiscard", buf);
    return fmi2Discard;
}

/* Status inquiries with no kind this FMU has: allowed while stepping or terminated, then fmi2Discard. */
#define UNAVAILABLE_STATUS(name, type)                                              \
    EXPORT fmi2Status name(fmi2Component c, const fmi2StatusKind kind, type *value) { \
        Shim *s = shim_of(c);                                                         \
        if (!s) return fmi2Error;                                                     \
        fmi2Status st = status_inquiry(s, value, #name);                              \
        return st != fmi2OK ? st : not_available(s, #name, (int)kind);               \
    }

UNAVAILABLE_STATUS(fmi2GetStatus, fmi2Status)
UNAVAILABLE_STATUS(fmi2GetIntegerStatus, fmi2Integer)
UNAVAILABLE_STATUS(fmi2GetStringStatus, fmi2String)

EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Real *value) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    fmi2Status st = status_inquiry(s, value, "fmi2GetRealStatus");
    if (st != fmi2OK) return st;
    if (kind != fmi2LastSuccessfulTime) return not_available(s, "fmi2GetRealStatus", (int)kind);
    *value = s->last_ok;
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Boolean *value) {
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    fmi2Status st = status_inquiry(s, value, "fmi2GetBooleanStatus");
    if (st != fmi2OK) return st;
    if (kind != fmi2Terminated) return not_available(s, "fmi2GetBooleanStatus", (int)kind);
    *value = 0;                               /* the slave never asks the master to end the simulation */
    return fmi2OK;
}

/* ------------------------------------------------------------------------------------------------
 * Capabilities this FMU does not offer (modelDescription: providesDirectionalDerivative = false,
 * canInterpolateInputs = false, maxOutputDerivativeOrder = 0)
 */
EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                               const fmi2ValueReference z[], size_t nz, const fmi2Real dv[],
                                               fmi2Real dz[]) {
    (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz;
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    shim_error(s, "fmi2GetDirectionalDerivative is not supported by this FMU (providesDirectionalDerivative = "
               "false)");
    return fmi2Error;
}

EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                              const fmi2Integer order[], const fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    shim_error(s, "fmi2SetRealInputDerivatives is not supported by this FMU (canInterpolateInputs = false: "
               "inputs are held constant over each communication step)");
    return fmi2Error;
}

EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                               const fmi2Integer order[], fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    Shim *s = shim_of(c);
    if (!s) return fmi2Error;
    shim_error(s, "fmi2GetRealOutputDerivatives is not supported by this FMU (maxOutputDerivativeOrder = 0)");
    return fmi2Error;
}
