/*
 * FMU states: what fmi2GetFMUstate saves and fmi2SerializeFMUstate writes, one checked byte record
 * (little-endian, no pickle; fmu_mb.fmi.constants.STATE_HEAD):
 *
 *     magic "FMUMB\0", format, interface digest (32 bytes), phase, number of values, number of state values,
 *     start time, stop time (NaN: none), time, friction failures (the model's counter),
 *     every parameter value and every input value as set, then every input value in force (the inputs the
 *     state's outputs were computed with: one set after the last step is not yet; value-reference order,
 *     Integer/Boolean as float64),
 *     the model's record (mechanism: kernels.record), CRC-32 of everything before it.
 *
 * A record is checked in full before anything is overwritten: its framing (magic, format, digest, sizes,
 * checksum), its times and counters (finite, in order, within the limits), every value finite and in its
 * range (parameters; inputs need only be finite: a held trajectory input is checked with its trajectory),
 * its phase (a state saved after initialization, stepping or in Model Exchange's event or continuous-time mode,
 * restores into any phase and continues in the instance's interface: stepping, or the mode it was saved in (event
 * mode for a co-simulation state), FMPy resumes a run that way; one saved before initialization only into the
 * same phase; one saved after fmi2Terminate never), then the model's record. A refused state leaves the instance exactly as it was.
 * After a restore every output is evaluated again at the restored state and inputs: it reads what it read
 * when the state was saved.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define STATE_BLOB_MAGIC 0x464d554d42535441ULL

static const char *const PHASES[] = FMU_MB_PHASE_NAMES;

static uint32_t crc32_of(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void put(unsigned char **p, const void *v, size_t n) {
    memcpy(*p, v, n);           /* x86-64 and AArch64 (every target) are little-endian: the record's byte order */
    *p += n;
}

static void digest_bytes(unsigned char out[32]) {
    for (int i = 0; i < 32; ++i) {
        unsigned v;
        sscanf(FMU_MB_INTERFACE_DIGEST + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
}

static StateBlob *pack(Instance *s) {
    int64_t nrec = s->ready ? model_record_size(s) : 0, counter = 0;
    uint32_t nval = (uint32_t)(s->n_params + 2 * s->n_inputs), nstate = (uint32_t)nrec;
    size_t size = FMU_MB_STATE_HEAD_SIZE + 8 * ((size_t)nval + (size_t)nstate) + 4;
    StateBlob *b = malloc(sizeof *b + size);
    double *rec = malloc((size_t)nrec * 8 + 8);
    if (!b || !rec) {
        free(b);
        free(rec);
        return NULL;
    }
    if (nrec) model_write_record(s, rec, &counter);
    b->magic = STATE_BLOB_MAGIC;
    b->size = size;
    b->next = NULL;
    unsigned char *p = b->bytes, dig[32];
    uint16_t format = FMU_MB_STATE_FORMAT;
    uint8_t phase = (uint8_t)s->phase;
    double t_stop = s->has_stop ? s->t_stop : NAN;
    digest_bytes(dig);
    put(&p, FMU_MB_STATE_MAGIC, FMU_MB_STATE_MAGIC_SIZE);
    put(&p, &format, 2);
    put(&p, dig, 32);
    put(&p, &phase, 1);
    put(&p, &nval, 4);
    put(&p, &nstate, 4);
    put(&p, &s->t_start, 8);
    put(&p, &t_stop, 8);
    put(&p, &s->t, 8);
    put(&p, &counter, 8);
    for (int k = 0; k < s->n_params; ++k) put(&p, &s->values[s->params[k]], 8);
    for (int k = 0; k < s->n_inputs; ++k) put(&p, &s->values[s->inputs[k]], 8);
    for (int k = 0; k < s->n_inputs; ++k) put(&p, &s->held[k], 8);
    put(&p, rec, 8 * (size_t)nrec);
    free(rec);
    uint32_t crc = crc32_of(b->bytes, size - 4);
    put(&p, &crc, 4);
    return b;
}

typedef struct {
    uint8_t phase;
    uint32_t nval, nstate;
    double t_start, t_stop, t;
    int64_t counter;
    const unsigned char *values, *record;      /* unaligned: read with memcpy */
} Unpacked;

static double at(const unsigned char *p, size_t i) {
    double v;
    memcpy(&v, p + 8 * i, 8);
    return v;
}

/* The framing, times and counters of a record; 0 and why if any is wrong. */
static int unpack(const unsigned char *b, size_t size, Unpacked *u, char *why, size_t wlen) {
    char x1[32], x2[32];
    if (size < FMU_MB_STATE_HEAD_SIZE + 4) {
        snprintf(why, wlen, MSG_STATE_TOO_SHORT, (double)size);
        return 0;
    }
    if (memcmp(b, FMU_MB_STATE_MAGIC, FMU_MB_STATE_MAGIC_SIZE) != 0) {
        snprintf(why, wlen, MSG_STATE_BAD_MAGIC);
        return 0;
    }
    uint16_t format;
    memcpy(&format, b + FMU_MB_STATE_MAGIC_SIZE, 2);
    if (format != FMU_MB_STATE_FORMAT) {
        snprintf(why, wlen, MSG_STATE_FORMAT, (int)format, FMU_MB_STATE_FORMAT);
        return 0;
    }
    unsigned char dig[32];
    digest_bytes(dig);
    const unsigned char *p = b + FMU_MB_STATE_MAGIC_SIZE + 2;
    if (memcmp(p, dig, 32) != 0) {
        snprintf(why, wlen, MSG_STATE_OTHER_INTERFACE);
        return 0;
    }
    p += 32;
    memcpy(&u->phase, p, 1);
    memcpy(&u->nval, p + 1, 4);
    memcpy(&u->nstate, p + 5, 4);
    memcpy(&u->t_start, p + 9, 8);
    memcpy(&u->t_stop, p + 17, 8);
    memcpy(&u->t, p + 25, 8);
    memcpy(&u->counter, p + 33, 8);
    size_t expected = FMU_MB_STATE_HEAD_SIZE + 8 * ((size_t)u->nval + (size_t)u->nstate) + 4;
    if (size != expected) {
        snprintf(why, wlen, MSG_STATE_SIZE, (double)size, (double)expected);
        return 0;
    }
    uint32_t crc;
    memcpy(&crc, b + expected - 4, 4);
    if (crc != crc32_of(b, expected - 4)) {
        snprintf(why, wlen, MSG_STATE_CHECKSUM);
        return 0;
    }
    if (u->phase > FMU_MB_PHASE_CONTINUOUS) {
        snprintf(why, wlen, MSG_STATE_PHASE_CODE, (int)u->phase);
        return 0;
    }
    if (!(isfinite(u->t_start) && fabs(u->t_start) <= FMU_MB_TIME_LIMIT)) {
        snprintf(why, wlen, MSG_STATE_TIME_FIELD, "start time", fmu_repr(u->t_start, x1), FMU_MB_TIME_LIMIT);
        return 0;
    }
    if (!(isfinite(u->t) && fabs(u->t) <= FMU_MB_TIME_LIMIT)) {
        snprintf(why, wlen, MSG_STATE_TIME_FIELD, "time", fmu_repr(u->t, x1), FMU_MB_TIME_LIMIT);
        return 0;
    }
    if (u->t < u->t_start) {
        snprintf(why, wlen, MSG_STATE_TIME_BEFORE_START, fmu_repr(u->t, x1), fmu_repr(u->t_start, x2));
        return 0;
    }
    if (!(isnan(u->t_stop) || u->t_stop >= u->t_start)) {
        snprintf(why, wlen, MSG_STATE_STOP_BEFORE_START, fmu_repr(u->t_stop, x1), fmu_repr(u->t_start, x2));
        return 0;
    }
    if (!isnan(u->t_stop) && u->t > u->t_stop + 1e-9 * fmax(1.0, fabs(u->t_stop))) {
        snprintf(why, wlen, MSG_STATE_TIME_AFTER_STOP, fmu_repr(u->t, x1), fmu_repr(u->t_stop, x2));
        return 0;
    }
    if (u->counter < 0 || u->counter > FMU_MB_RECORD_MAX_COUNT) {
        snprintf(why, wlen, MSG_STATE_COUNTER, (double)u->counter, (double)FMU_MB_RECORD_MAX_COUNT);
        return 0;
    }
    u->values = b + FMU_MB_STATE_HEAD_SIZE;
    u->record = u->values + 8 * (size_t)u->nval;
    return 1;
}

/* The variable of saved value k: parameters, inputs as set, inputs in force. */
static int saved_variable(const Instance *s, uint32_t k) {
    if ((int)k < s->n_params) return s->params[k];
    return s->inputs[((int)k - s->n_params) % s->n_inputs];
}

/* A phase after initialization (stepping; Model Exchange's event and continuous-time modes). */
static int initialized(int phase) {
    return phase == FMU_MB_PHASE_STEPPING || phase == FMU_MB_PHASE_EVENT || phase == FMU_MB_PHASE_CONTINUOUS;
}

/* The saved values and phase against this instance and its variables; 0 and why. */
static int check_saved(Instance *s, const Unpacked *u, char *why, size_t wlen) {
    char a[32], unit[64];
    if ((int)u->nval != s->n_params + 2 * s->n_inputs) {
        snprintf(why, wlen, MSG_STATE_VALUE_COUNT, (int)u->nval, s->n_params + 2 * s->n_inputs);
        return 0;
    }
    if (u->phase == FMU_MB_PHASE_TERMINATED) {
        snprintf(why, wlen, MSG_STATE_TERMINATED);
        return 0;
    }
    if (u->phase == FMU_MB_PHASE_INSTANTIATED && u->nstate) {
        snprintf(why, wlen, MSG_STATE_INSTANTIATED_WITH_RECORD);
        return 0;
    }
    if (!initialized(u->phase) && u->phase != s->phase) {
        snprintf(why, wlen, MSG_STATE_OTHER_PHASE, PHASES[u->phase], PHASES[s->phase]);
        return 0;
    }
    for (uint32_t k = 0; k < u->nval; ++k) {
        int vr = saved_variable(s, k);
        const fmu_mb_var *v = &FMU_MB_VARS[vr];
        double x = at(u->values, k);
        const char *which = (int)k >= s->n_params + s->n_inputs ? MSG_SAVED_IN_FORCE : "";
        if (!isfinite(x)) snprintf(why, wlen, MSG_SAVED_NOT_FINITE, v->name, which, fmu_repr(x, a));
        else if (v->type != FMU_MB_TYPE_REAL && floor(x) != x)
            snprintf(why, wlen, MSG_SAVED_NOT_INTEGER, v->name, which, fmu_repr(x, a));
        else if (v->type == FMU_MB_TYPE_BOOLEAN && x != 0.0 && x != 1.0)
            snprintf(why, wlen, MSG_SAVED_NOT_BOOLEAN, v->name, which, fmu_repr(x, a));
        else if (v->causality == FMU_MB_CAUSALITY_PARAMETER && v->has_range && !(v->min <= x && x <= v->max))
            snprintf(why, wlen, MSG_SAVED_OUT_OF_RANGE, v->name, v->min, v->max, fmu_unit_suffix(v, unit), x);
        else if (v->fixed && x != v->start)
            snprintf(why, wlen, MSG_SAVED_FIXED_TRAJECTORY, v->name, which, fmu_repr(x, a));
        else continue;
        return 0;
    }
    return 1;
}

/* What an instance is, to go back to when a state does not fit. */
typedef struct {
    int phase, has_stop, had_model;
    double t_start, t_stop, t;
    double *record;
    int64_t nrec, counter;
} Kept;

static int keep(Instance *s, Kept *k) {
    memcpy(s->kept, s->values, (size_t)FMU_MB_NVARS * 8);
    memcpy(s->kept + FMU_MB_NVARS + 1, s->held, (size_t)s->n_inputs * 8);
    k->phase = s->phase;
    k->has_stop = s->has_stop;
    k->t_start = s->t_start;
    k->t_stop = s->t_stop;
    k->t = s->t;
    k->had_model = s->ready;
    k->nrec = s->ready ? model_record_size(s) : 0;
    k->record = malloc((size_t)k->nrec * 8 + 8);
    if (!k->record) return 0;
    if (k->nrec) model_write_record(s, k->record, &k->counter);
    return 1;
}

static void go_back(Instance *s, Kept *k) {
    char why[512];
    memcpy(s->values, s->kept, (size_t)FMU_MB_NVARS * 8);
    memcpy(s->held, s->kept + FMU_MB_NVARS + 1, (size_t)s->n_inputs * 8);
    s->phase = k->phase;
    s->has_stop = k->has_stop;
    s->t_start = k->t_start;
    s->t_stop = k->t_stop;
    s->t = k->t;
    if (!k->had_model) {
        s->ready = 0;
    } else if (fmu_ensure_built(s) && model_read_record(s, k->record, k->nrec, k->counter, why, sizeof why)) {
        model_restore_inputs(s);
        model_evaluate(s);
    }
}

static int set_state(Instance *s, const unsigned char *bytes, size_t size) {
    Unpacked u;
    char why[1024], msg[4096] = "";
    if (!unpack(bytes, size, &u, why, sizeof why) || !check_saved(s, &u, why, sizeof why)) {
        FMU_ERROR(s, MSG_STATE_REFUSED, s->call, why);
        return 0;
    }
    Kept k;
    double *record = malloc((size_t)u.nstate * 8 + 8);        /* (aligned for the kernels) */
    if (!record || !keep(s, &k)) {
        free(record);
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    memcpy(record, u.record, (size_t)u.nstate * 8);
    for (uint32_t i = 0; i < u.nval; ++i) {
        if ((int)i < s->n_params + s->n_inputs) s->values[saved_variable(s, i)] = at(u.values, i);
        else s->held[(int)i - s->n_params - s->n_inputs] = at(u.values, i);
    }
    s->t_start = u.t_start;
    s->has_stop = !isnan(u.t_stop);
    s->t_stop = u.t_stop;
    s->t = u.t;
    int problem = 0;
    if (u.nstate || initialized(u.phase)) {
        fmu_where where = {FMU_WHERE_OUTPUTS, NULL, 0.0, 0.0, ""};
        if (!fmu_ensure_built(s))
            problem = snprintf(msg, sizeof msg, MSG_STATE_PARAMETERS) > 0;
        else if (!model_read_record(s, record, u.nstate, u.counter, msg, sizeof msg))
            problem = 1;
        else if (!model_restore_inputs(s))
            problem = snprintf(msg, sizeof msg, MSG_STATE_TRAJECTORIES) > 0;
        else if (!model_evaluate(s))
            problem = snprintf(msg, sizeof msg, MSG_STATE_OUTPUTS) > 0;
        else
            problem = model_problem(s, &where, msg, sizeof msg);
    }
    free(record);
    if (problem) {
        go_back(s, &k);
        free(k.record);
        FMU_ERROR(s, MSG_STATE_REFUSED, s->call, msg);
        return 0;
    }
    free(k.record);
    /* a state saved after initialization continues in this instance's interface: stepping, or (Model
     * Exchange) the mode it was saved in, event mode for a co-simulation state */
    s->phase = !initialized(u.phase) ? u.phase : !s->me ? FMU_MB_PHASE_STEPPING
             : u.phase == FMU_MB_PHASE_STEPPING ? FMU_MB_PHASE_EVENT : u.phase;
    if (initialized(s->phase)) s->last_ok = s->t;
    s->dirty = 0;
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * The instance's states
 */
static StateBlob *blob_of(Instance *s, fmi2FMUstate st) {
    for (StateBlob *b = s->states; b; b = b->next)
        if ((void *)b == st && b->magic == STATE_BLOB_MAGIC) return b;
    return NULL;
}

static void drop(Instance *s, StateBlob *b) {
    StateBlob **pp = &s->states;
    while (*pp && *pp != b) pp = &(*pp)->next;
    if (*pp) *pp = b->next;
    b->magic = 0;
    free(b);
}

void fmu_free_states(Instance *s) {
    while (s->states) drop(s, s->states);
}

int fmu_get_state(Instance *s, fmi2FMUstate *state) {
    if (!state) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, "the FMUstate pointer");
        return 0;
    }
    StateBlob *old = *state ? blob_of(s, *state) : NULL;
    StateBlob *b = pack(s);
    if (!b) {
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    if (old) drop(s, old);                      /* FMI 2.0: an existing state of ours is overwritten */
    b->next = s->states;
    s->states = b;
    *state = b;
    return 1;
}

static StateBlob *known(Instance *s, fmi2FMUstate state) {
    StateBlob *b = state ? blob_of(s, state) : NULL;
    if (!b) FMU_ERROR(s, MSG_STATE_UNKNOWN, s->call, state ? "unknown" : "NULL");
    return b;
}

int fmu_set_state(Instance *s, fmi2FMUstate state) {
    StateBlob *b = known(s, state);
    return b && set_state(s, b->bytes, b->size);
}

int fmu_free_state(Instance *s, fmi2FMUstate *state) {
    if (!state || !*state) return 1;            /* nothing to free */
    StateBlob *b = known(s, *state);
    if (!b) return 0;
    drop(s, b);
    *state = NULL;
    return 1;
}

int fmu_state_size(Instance *s, fmi2FMUstate state, size_t *size) {
    if (!size) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, "the size pointer");
        return 0;
    }
    StateBlob *b = known(s, state);
    if (b) *size = b->size;
    return b != NULL;
}

int fmu_serialize_state(Instance *s, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    StateBlob *b = known(s, state);
    if (!b) return 0;
    if (!bytes || size != b->size) {
        FMU_ERROR(s, MSG_SERIALIZE_BUFFER, s->call, !bytes ? "the buffer is NULL" : "the buffer size differs from the "
                  "state's size", (double)b->size);
        return 0;
    }
    memcpy(bytes, b->bytes, size);
    return 1;
}

int fmu_deserialize_state(Instance *s, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state) {
    if (!state || (!bytes && size)) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, !state ? "the FMUstate pointer" : "the byte array");
        return 0;
    }
    if (size > (size_t)FMU_MB_MAX_STATE_BYTES) {
        FMU_ERROR(s, MSG_STATE_TOO_LARGE, s->call, (double)size);
        return 0;
    }
    Unpacked u;
    char why[512];
    if (!unpack((const unsigned char *)bytes, size, &u, why, sizeof why)) {
        FMU_ERROR(s, MSG_DESERIALIZE_REFUSED, s->call, why);
        return 0;
    }
    StateBlob *b = malloc(sizeof *b + size);
    if (!b) {
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    b->magic = STATE_BLOB_MAGIC;
    b->size = size;
    memcpy(b->bytes, bytes, size);
    b->next = s->states;
    s->states = b;
    *state = b;
    return 1;
}
