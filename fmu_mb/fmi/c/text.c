/* Message text of the FMU core: the host's logger, doubles as Python's repr() writes them, UTF-8 and
 * file URIs (RFC 3986 / RFC 8089). Portable C99 (Linux and Windows). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const char *const CATEGORIES[] = FMU_MB_LOG_CATEGORIES;

int fmu_category_index(const char *name) {
    for (int i = 0; name && i < FMU_MB_N_LOG_CATEGORIES; ++i)
        if (strcmp(name, CATEGORIES[i]) == 0) return i;
    return -1;
}

static const char *category_of(int status) {
    switch (status) {
    case fmi2Warning: return CATEGORIES[0];
    case fmi2Discard: return CATEGORIES[1];
    case fmi2Error: return CATEGORIES[2];
    case fmi2Fatal: return CATEGORIES[3];
    default: return CATEGORIES[4];
    }
}

/* Plain text to a host's logger: '%' doubled (the logger takes a format), the category never NULL. */
static void emit(const fmi2CallbackFunctions *cb, const char *instance, int status, const char *text) {
    char buf[8193];
    if (!cb || !cb->logger) return;
    size_t o = 0;
    for (const char *p = text; *p && o + 2 < sizeof buf; ++p) {
        buf[o++] = *p;
        if (*p == '%') buf[o++] = '%';
    }
    buf[o] = '\0';
    cb->logger(cb->componentEnvironment, instance ? instance : "", (fmi2Status)status, category_of(status), buf);
}

static void vsay(const fmi2CallbackFunctions *cb, const char *instance, int status, const char *fmt, va_list ap) {
    char text[4096], line[4200];
    vsnprintf(text, sizeof text, fmt, ap);
    snprintf(line, sizeof line, "[%s] %s", FMU_MB_MODEL_ID, text);
    emit(cb, instance, status, line);
}

void fmu_say(Instance *s, int status, const char *fmt, ...) {
    if (status < fmi2Warning) {                /* debug text (category logAll): loggingOn and the categories */
        if (!s->debug || (s->categories && !((s->categories >> 4) & 1u))) return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsay(&s->cb, s->name, status, fmt, ap);
    va_end(ap);
}

void fmu_say_to(const fmi2CallbackFunctions *cb, const char *instance, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay(cb, instance, status, fmt, ap);
    va_end(ap);
}

const char *fmu_where_text(fmu_where *w) {
    if (w->text[0]) return w->text;
    switch (w->kind) {
    case FMU_WHERE_AT: snprintf(w->text, sizeof w->text, MSG_WHERE_AT, w->call, w->t); break;
    case FMU_WHERE_STEP: snprintf(w->text, sizeof w->text, MSG_WHERE_STEP, w->call, w->t, w->dt); break;
    case FMU_WHERE_TIME: snprintf(w->text, sizeof w->text, MSG_WHERE_TIME, w->t); break;
    case FMU_WHERE_OUTPUTS: snprintf(w->text, sizeof w->text, "%s", MSG_WHERE_OUTPUTS); break;
    default: snprintf(w->text, sizeof w->text, "%s", w->call ? w->call : "");
    }
    return w->text;
}

const char *fmu_repr(double v, char *buf) {
    if (isnan(v)) return strcpy(buf, "nan");
    if (isinf(v)) return strcpy(buf, v > 0 ? "inf" : "-inf");
    if (v == floor(v) && fabs(v) < 1e16) {
        snprintf(buf, 32, "%.1f", v);
        return buf;
    }
    for (int p = 1; p <= 17; ++p) {
        snprintf(buf, 32, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    return buf;
}

const char *fmu_unit_suffix(const fmu_mb_var *v, char *buf) {
    if (v->unit && *v->unit) snprintf(buf, 64, " %s", v->unit);
    else buf[0] = '\0';
    return buf;
}

int fmu_valid_utf8(const char *p) {
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

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* ASCII case-insensitive: does s start with prefix? */
static int ci_prefix(const char *s, const char *prefix) {
    for (; *prefix; ++s, ++prefix)
        if (!*s || ((*s | 0x20) != (*prefix | 0x20))) return 0;
    return 1;
}

static int absolute_path(const char *p) {
#if defined(_WIN32)
    return p[0] == '/' || p[0] == '\\' || (p[0] && p[1] == ':');
#else
    return p[0] == '/';
#endif
}

/* file:///p, file://localhost/p, file:/p (any case of the scheme; on Windows file:///C:/p -> C:/p), or a
 * plain absolute path taken as it is. */
int fmu_decode_file_uri(const char *uri, char *out, size_t size, int decode, char *why, size_t wsize) {
    const char *p;
    if (!ci_prefix(uri, "file:")) {
        if (absolute_path(uri)) {
            if (strlen(uri) >= size) {
                snprintf(why, wsize, MSG_URI_TOO_LONG);
                return 0;
            }
            strcpy(out, uri);
            return 1;
        }
        snprintf(why, wsize, MSG_URI_NOT_FILE);
        return 0;
    }
    p = uri + 5;
    if (p[0] == '/' && p[1] == '/') {                          /* file://authority/path */
        p += 2;
        const char *slash = strchr(p, '/');
        size_t alen = slash ? (size_t)(slash - p) : strlen(p);
        if (alen && !(alen == 9 && ci_prefix(p, "localhost"))) {
            snprintf(why, wsize, MSG_URI_REMOTE_HOST, (int)(alen > 200 ? 200 : alen), p);
            return 0;
        }
        p += alen;
    }
    if (p[0] != '/') {
        snprintf(why, wsize, MSG_URI_NOT_ABSOLUTE);
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
                snprintf(why, wsize, MSG_URI_BAD_ESCAPE, (unsigned)((size_t)(p - uri) + i + 1));
                return 0;
            }
            c = (char)(hi * 16 + lo);
            if (c == '\0') {
                snprintf(why, wsize, MSG_URI_NUL);
                return 0;
            }
            i += 2;
        }
        if (o + 1 >= size) {
            snprintf(why, wsize, MSG_URI_TOO_LONG);
            return 0;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return 1;
}
