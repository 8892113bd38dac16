/* What both fmu_mb FMU binaries share (the pythonfmu FMU's shim fmu_mb_shim.c and the native FMU's
 * fmi2_native.c): the FMI 2.0 C types from the standard's ABI, the log categories of the
 * modelDescription (fmu_mb.fmi.description.LOG_CATEGORIES), and the parsing of what a host passes in:
 * UTF-8 instance names and RFC 3986/8089 file URIs. Portable C99 (Linux and Windows). */
#ifndef FMU_MB_FMI2_COMMON_H
#define FMU_MB_FMI2_COMMON_H
#include <stdio.h>
#include <string.h>

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

/* Debug-log categories of the modelDescription, in bit order of fmi2SetDebugLogging's mask. */
static const char *const CATEGORIES[] = {"logStatusWarning", "logStatusDiscard", "logStatusError",
                                         "logStatusFatal", "logAll"};
#define N_CATEGORIES (sizeof CATEGORIES / sizeof CATEGORIES[0])

static inline const char *default_category(int status) {
    switch (status) {
    case fmi2Warning: return "logStatusWarning";
    case fmi2Discard: return "logStatusDiscard";
    case fmi2Error: return "logStatusError";
    case fmi2Fatal: return "logStatusFatal";
    default: return "logAll";
    }
}

static inline int category_index(const char *name) {
    for (size_t i = 0; name && i < N_CATEGORIES; ++i)
        if (strcmp(name, CATEGORIES[i]) == 0) return (int)i;
    return -1;
}

static inline int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static inline int valid_utf8(const char *p) {
    const unsigned char *s = (const unsigned char *)p;
    while (*s) {
        unsigned c = *s++;
        int more = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
        if (more < 0 || (more == 1 && c < 0xC2) || (c == 0xF4 && (*s > 0x8F)) || c > 0xF4) return 0;
        if (c == 0xE0 && *s < 0xA0) return 0;               /* overlong */
        if (c == 0xED && *s > 0x9F) return 0;               /* surrogates */
        if (c == 0xF0 && *s < 0x90) return 0;               /* overlong */
        for (int i = 0; i < more; ++i, ++s)
            if ((*s & 0xC0) != 0x80) return 0;
    }
    return 1;
}

/* ASCII case-insensitive: does s start with prefix? */
static inline int ci_prefix(const char *s, const char *prefix) {
    for (; *prefix; ++s, ++prefix)
        if (!*s || ((*s | 0x20) != (*prefix | 0x20))) return 0;
    return 1;
}

static inline int absolute_path(const char *p) {
#if defined(_WIN32)
    return p[0] == '/' || p[0] == '\\' || (p[0] && p[1] == ':');
#else
    return p[0] == '/';
#endif
}

/* The path of a file URI (file:///p, file://localhost/p, file:/p, any case of the scheme; %XX escapes
 * decoded when decode; on Windows file:///C:/p -> C:/p), or a plain absolute path taken as it is, into
 * out. Returns 0 and writes why on failure. */
static inline int decode_file_uri(const char *uri, char *out, size_t size, int decode, char *why, size_t wsize) {
    const char *p;
    if (!ci_prefix(uri, "file:")) {
        if (absolute_path(uri)) {
            if (strlen(uri) >= size) { snprintf(why, wsize, "the path is too long"); return 0; }
            strcpy(out, uri);
            return 1;
        }
        snprintf(why, wsize, "it is not a file URI (expected file:///absolute/path/to/resources)");
        return 0;
    }
    p = uri + 5;
    if (p[0] == '/' && p[1] == '/') {                          /* file://authority/path */
        p += 2;
        const char *slash = strchr(p, '/');
        size_t alen = slash ? (size_t)(slash - p) : strlen(p);
        if (alen && !(alen == 9 && ci_prefix(p, "localhost"))) {
            snprintf(why, wsize, "it names the host '%.*s'; only local files (file:///path) can be used",
                     (int)(alen > 200 ? 200 : alen), p);
            return 0;
        }
        p += alen;
    }
    if (p[0] != '/') {
        snprintf(why, wsize, "its path is not absolute");
        return 0;
    }
#if defined(_WIN32)
    if (p[1] && p[2] == ':') ++p;                              /* file:///C:/dir -> C:/dir */
#endif
    size_t o = 0;
    for (size_t i = 0; p[i]; ++i) {
        char c = p[i];
        if (decode && c == '%') {
            int hi = hexval(p[i + 1]), lo = hi < 0 ? -1 : hexval(p[i + 2]);
            if (hi < 0 || lo < 0) {
                snprintf(why, wsize, "it has a malformed percent-escape at character %u",
                         (unsigned)((size_t)(p - uri) + i + 1));
                return 0;
            }
            c = (char)(hi * 16 + lo);
            if (c == '\0') {
                snprintf(why, wsize, "it encodes a NUL character (%%00)");
                return 0;
            }
            i += 2;
        }
        if (o + 1 >= size) {
            snprintf(why, wsize, "the path is too long");
            return 0;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return 1;
}
#endif
