/*
 * The FMI 2.0 co-simulation layer of a native fmu_mb FMU: no Python on the host.
 *
 * Linked by fmu_mb.fmi.native_fmu with the FMU's generated model table (fmi2_native.h), the arrays-file
 * reader (arrays.c) and the numba-compiled kernel library (fmu_mb.native.library). It behaves as the
 * Python FMU's slave does (fmu_mb/fmi/table_slave.py, fmu_mb/fmi/slave.py, fmu_mb/simulator.py), with
 * the same checks, statuses and messages:
 *
 *  - FMI 2.0's co-simulation state table: fmi2SetupExperiment and fmi2EnterInitializationMode only when
 *    instantiated; fmi2Get* from initialization mode on; parameters only before
 *    fmi2ExitInitializationMode; fmi2DoStep and fmi2Terminate only while stepping. A refused call has
 *    no effect and answers fmi2Error with a logged message. Errors and warnings always reach the
 *    host's logger; debug messages follow loggingOn / fmi2SetDebugLogging.
 *  - Parameters are checked at fmi2ExitInitializationMode (every offending one named with its range).
 *    The model options select one of the option combinations the FMU carries (a variant of
 *    resources/variants.arrays: compiled Model, fresh Data, start state, output table; fmu_mb.fmi.native_fmu,
 *    fmu_mb.native.arrays: combinations with the same mechanism share a variant); the Data
 *    is loaded per instance, so instances share nothing and may step in parallel threads.
 *  - Programmed-trajectory inputs: segment tables recomputed from slopes the build stored (affine paths)
 *    and checked as Trajectory.validate checks, before initialization and at every step they changed.
 *  - Start: coordinates and rates from the start values, with init.static the static equilibrium from
 *    them (kernel static_equilibrium, the problem fmu_mb.statics.start_problem stored per combination),
 *    relative constraints anchored, constraint groups assembled (kernels project, anchor_offsets), as
 *    Simulator.initialize; RK4 refused above its stability limit.
 *  - fmi2DoStep integrates [t, t + h] at the fixed internal step: floor(h / step) steps by the
 *    kernel family's steps entry, a remainder by one shorter step (Simulator.step). A step giving
 *    non-finite states or outputs, or a constraint violation above solver.max_violation, is undone
 *    (fmi2Error; state and outputs of t kept). No allocation per step.
 *  - FMU states: the byte record of fmu_mb/fmi/state.py (magic, version, interface digest, phase,
 *    times, parameter and input values, simulator state, CRC-32), checked in full before anything is
 *    overwritten; a record of the Python FMU of the same interface restores here and vice versa.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "fmi2_common.h"
#include "fmi2_native.h"
#include "fmu_mb_kernels.h"

#if defined(_WIN32)
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif


enum { INSTANTIATED, INITIALIZATION, STEPPING, TERMINATED };
static const char *const PHASES[] = {"instantiated", "initialization mode", "stepping", "terminated"};
#define TIME_LIMIT 2e9
#define COORDINATE_LIMIT 1e6
#define RATE_LIMIT 1e6
#define INSTANCE_MAGIC 0x464d554d424e4154ULL
#define STATE_MAGIC 0x464d554d42535441ULL
enum { S_ALPHA, S_BETA, S_PROJECTION, S_GAMMA, S_PIVOT_CHOSEN, S_PIVOT, S_RANK, S_PROJ_RESIDUAL, S_PROJ_TOL };

typedef int32_t (*steps_fn)(const int64_t *, const int64_t *, double *, int64_t, double, double *, int64_t, double,
                            int64_t, int64_t *);
typedef int32_t (*step_fn)(const int64_t *, const int64_t *, double *, int64_t, double, double *, int64_t, double,
                           int64_t *);
typedef int32_t (*gather_fn)(const int64_t *, const int64_t *, double *, int64_t, double, double *, int64_t, double *,
                             int64_t, int64_t *, int64_t, int64_t *, int64_t, int64_t *, int64_t, int64_t *, int64_t,
                             double *, int64_t, int64_t, double *, int64_t, int64_t *);

/* the kernels by family (0 tree, 1 constrained) and method kernel (0 rk4, 1 ros2, 2 ros3) */
static const steps_fn STEPS[2][3] = {
    {fmu_mb_rk4_steps_tree, fmu_mb_ros2_steps_tree, fmu_mb_ros3_steps_tree},
    {fmu_mb_rk4_steps_constrained, fmu_mb_ros2_steps_constrained, fmu_mb_ros3_steps_constrained}};
static const step_fn STEP[2][3] = {
    {fmu_mb_rk4_step_tree, fmu_mb_ros2_step_tree, fmu_mb_ros3_step_tree},
    {fmu_mb_rk4_step_constrained, fmu_mb_ros2_step_constrained, fmu_mb_ros3_step_constrained}};
static const gather_fn GATHER[2] = {fmu_mb_gather_outputs_tree, fmu_mb_gather_outputs_constrained};

/* One loaded option combination: its arrays and the views the layer uses. */
typedef struct {
    int index;
    fmu_mb_arrays *arr;
    int64_t *mb, *db;
    int64_t nv, nc, nx, nbf, nout;
    int family;
    double *x0, *static_opts, *static_info, *out_f, *gravity, *solver_opt, *con_stats, *con_off, *bf;
    int64_t *start_dof, *drive_dof, *force_idx, *out_vr, *out_kind, *out_a, *out_b, *assemble_mask, *flags;
    int64_t *cp_rows, *cp_cols, *cp_rank, *cp_valid, *cp_count, *fric_fail, *fric_iters, *lin_redo;
    int64_t n_start, n_drive, n_force, n_groups, n_free, n_rows, n_zero;
    int64_t *static_free, *static_rows, *static_zero;
    /* trajectory inputs (fmu_mb.fmi.native_fmu.trajectory_jacobians): tables = base + slopes * (value - p0),
     * or, for a trajectory k with traj_table[k] >= 0, FMU_MB_TABLE_FN[traj_table[k]] of its inputs (each input
     * j at position traj_slot[j] of the function's parameter vector) */
    int64_t n_tin, nseg, width, ntraj;
    int64_t *traj_index, *traj_first, *traj_count, *seg_kind, *traj_table, *traj_slot;
    double *traj_p0, *traj_jt, *traj_jp, *seg_time, *seg_par, *traj_time, *traj_par, *tt, *tp;
    /* run buffers (allocated once per load) */
    double *x, *tau, *xdot, *x_cp, *out_cp, *rec_cp;
    int64_t *rows_cp, *cols_cp;
    double pivot_cp;
    int64_t rank_cp, valid_cp, count_cp, fail_cp, iters_cp;
} Run;

typedef struct StateBlob {
    uint64_t magic;
    size_t size;
    struct StateBlob *next;
    unsigned char bytes[];
} StateBlob;

typedef struct {
    uint64_t magic;
    char *name;
    char *resources;                    /* directory of resources/, with a trailing separator */
    fmi2CallbackFunctions cb;
    int debug;
    unsigned categories;
    int phase;
    double t, t0, t_stop, last_ok;
    int has_stop;
    double *values, *values_before, *built;
    int ready;
    Run *run;
    int method_kernel;
    double h, max_violation;
    int64_t max_steps;
    StateBlob *states;
    double *traj_applied;               /* trajectory input values in force (interface order) */
    int n_traj;
    int n_params, n_inputs, n_outputs;
    int *params, *inputs, *outputs, *violations, n_violations;
} Instance;

/* ------------------------------------------------------------------------------------------------
 * Logging
 */
/* Send plain text to the host's logger: '%' doubled (the logger takes a format), category never NULL. */
static void emit(const fmi2CallbackFunctions *cb, const char *instance, int status, const char *text) {
    char buf[4096 * 2 + 1];
    if (!cb || !cb->logger) return;
    size_t o = 0;
    for (const char *p = text; *p && o + 2 < sizeof buf; ++p) {
        buf[o++] = *p;
        if (*p == '%') buf[o++] = '%';
    }
    buf[o] = '\0';
    cb->logger(cb->componentEnvironment, instance ? instance : "", (fmi2Status)status, default_category(status), buf);
}

#if defined(__GNUC__) && defined(_WIN32)
#define PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))      /* __USE_MINGW_ANSI_STDIO: C99 formats */
#elif defined(__GNUC__)
#define PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF(a, b)
#endif

static void say(Instance *s, int status, const char *fmt, ...) PRINTF(3, 4);
static void say(Instance *s, int status, const char *fmt, ...) {
    char text[4096], line[4200];
    if (status < fmi2Warning) {
        if (!s->debug) return;
        if (s->categories && !((s->categories >> 4) & 1u)) return;      /* debug text: category logAll */
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "[%s] %s", FMU_MB_MODEL_ID, text);
    emit(&s->cb, s->name, status, line);
}
#define ERROR(s, ...) say((s), fmi2Error, __VA_ARGS__)

/* A double as the Python FMU prints it with repr(): shortest text that reads back the same. */
static const char *repr(double v, char *buf) {
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

/* ------------------------------------------------------------------------------------------------
 * Instances and calls
 */
static Instance *instance_of(fmi2Component c) {
    Instance *s = (Instance *)c;
    return (s && s->magic == INSTANCE_MAGIC) ? s : NULL;
}

static int phase_is(Instance *s, unsigned allowed, const char *what, const char *hint) {
    if ((allowed >> s->phase) & 1u) return 1;
    ERROR(s, "%s is not allowed in %s (FMI 2.0 co-simulation state table)%s%s", what, PHASES[s->phase],
          hint ? "; " : "", hint ? hint : "");
    return 0;
}
#define P_INST (1u << INSTANTIATED)
#define P_INIT (1u << INITIALIZATION)
#define P_STEP (1u << STEPPING)
#define P_TERM (1u << TERMINATED)

static const char *unit_suffix(const fmu_mb_var *v, char *buf) {
    if (v->unit && *v->unit) snprintf(buf, 64, " %s", v->unit);
    else buf[0] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------------------------------
 * Option combinations (variant FMU_MB_VARIANT_FILE[k] of resources/variants.arrays)
 */
static double *f8(fmu_mb_arrays *a, const char *name, int64_t *count, char *err) {
    fmu_mb_record *r = fmu_mb_arrays_find(a, name);
    if (!r || r->kind != 0) {
        if (!err[0]) snprintf(err, 256, "record %s missing", name);
        return NULL;
    }
    if (count) *count = r->count;
    return (double *)r->values;
}

static int64_t *i8(fmu_mb_arrays *a, const char *name, int64_t *count, char *err) {
    fmu_mb_record *r = fmu_mb_arrays_find(a, name);
    if (!r || r->kind != 1) {
        if (!err[0]) snprintf(err, 256, "record %s missing", name);
        return NULL;
    }
    if (count) *count = r->count;
    return (int64_t *)r->values;
}

static int64_t scalar(fmu_mb_arrays *a, const char *name, char *err) {
    fmu_mb_record *r = fmu_mb_arrays_find(a, name);
    if (!r || r->kind != 2) {
        if (!err[0]) snprintf(err, 256, "record %s missing", name);
        return 0;
    }
    return *(int64_t *)r->values;
}

static void free_run(Run *r) {
    if (!r) return;
    free(r->mb);
    free(r->db);
    free(r->x);
    free(r->tau);
    free(r->xdot);
    free(r->x_cp);
    free(r->out_cp);
    free(r->rec_cp);
    free(r->rows_cp);
    free(r->cols_cp);
    free(r->tt);
    free(r->tp);
    if (r->arr) fmu_mb_arrays_free(r->arr);
    free(r);
}

/* Load option combination k: its compiled Model and a fresh Data. */
static Run *load_run(Instance *s, int k) {
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%svariants.arrays", s->resources);
    Run *r = calloc(1, sizeof *r);
    if (!r) {
        ERROR(s, "out of memory loading %s", path);
        return NULL;
    }
    r->index = k;
    r->arr = fmu_mb_arrays_load(path, FMU_MB_VARIANT_FILE[k], err, sizeof err);
    if (!r->arr) {
        ERROR(s, "cannot load the compiled mechanism: %s", err);
        free_run(r);
        return NULL;
    }
    fmu_mb_arrays *a = r->arr;
    int64_t n;
    err[0] = '\0';
    r->nv = scalar(a, "model.nv", err);
    r->nc = scalar(a, "model.nc", err);
    r->nx = scalar(a, "model.nx", err);
    r->family = r->nc > 0;
    r->mb = fmu_mb_arrays_block(a, "model.", &n);
    r->db = fmu_mb_arrays_block(a, "data.", &n);
#define DATA(field) ("data." field)
    r->solver_opt = f8(a, DATA("solver_opt"), NULL, err);
    r->con_stats = f8(a, DATA("con_stats"), NULL, err);
    r->con_off = f8(a, DATA("con_off"), NULL, err);
    r->cp_rows = i8(a, DATA("cp_rows"), NULL, err);
    r->cp_cols = i8(a, DATA("cp_cols"), NULL, err);
    r->cp_rank = i8(a, DATA("cp_rank"), NULL, err);
    r->cp_valid = i8(a, DATA("cp_valid"), NULL, err);
    r->cp_count = i8(a, DATA("cp_count"), NULL, err);
    r->fric_fail = i8(a, DATA("fric_fail"), NULL, err);
    r->fric_iters = i8(a, DATA("fric_iters"), NULL, err);
    r->lin_redo = i8(a, DATA("lin_redo"), NULL, err);
    r->bf = f8(a, DATA("bf_val"), &r->nbf, err);
    r->traj_time = f8(a, DATA("traj_time"), NULL, err);
    r->traj_par = f8(a, DATA("traj_par"), NULL, err);
#undef DATA
    r->gravity = f8(a, "model.gravity", NULL, err);
    r->x0 = f8(a, "fmu.x0", &n, err);
    r->static_info = f8(a, "data.st_info", NULL, err);
    r->static_free = i8(a, "fmu.static_free", &r->n_free, err);
    r->static_rows = i8(a, "fmu.static_rows", &r->n_rows, err);
    r->static_zero = i8(a, "fmu.static_zero", &r->n_zero, err);
    r->static_opts = f8(a, "fmu.static_opts", NULL, err);
    r->start_dof = i8(a, "fmu.start_dof", &r->n_start, err);
    r->drive_dof = i8(a, "fmu.drive_dof", &r->n_drive, err);
    r->force_idx = i8(a, "fmu.force_idx", &r->n_force, err);
    r->out_vr = i8(a, "fmu.out_vr", &r->nout, err);
    r->out_kind = i8(a, "fmu.out_kind", NULL, err);
    r->out_a = i8(a, "fmu.out_a", NULL, err);
    r->out_b = i8(a, "fmu.out_b", NULL, err);
    r->out_f = f8(a, "fmu.out_f", NULL, err);
    r->assemble_mask = i8(a, "fmu.assemble_mask", &r->n_groups, err);
    r->flags = i8(a, "fmu.flags", NULL, err);
    r->traj_index = i8(a, "fmu.traj_index", &r->n_tin, err);
    r->traj_p0 = f8(a, "fmu.traj_p0", NULL, err);
    r->traj_jt = f8(a, "fmu.traj_jt", NULL, err);
    r->traj_jp = f8(a, "fmu.traj_jp", NULL, err);
    r->traj_first = i8(a, "model.traj_first", &r->ntraj, err);
    r->traj_count = i8(a, "model.traj_count", NULL, err);
    int64_t n_table = 0, n_slot = 0;
    r->traj_table = i8(a, "fmu.traj_table", &n_table, err);
    r->traj_slot = i8(a, "fmu.traj_slot", &n_slot, err);
    r->seg_kind = i8(a, "model.seg_kind", &r->nseg, err);
    r->seg_time = f8(a, "model.seg_time", NULL, err);
    r->seg_par = f8(a, "model.seg_par", &r->width, err);
    if (r->nseg) r->width /= r->nseg;
    if (!err[0] && (!r->mb || !r->db)) snprintf(err, sizeof err, "no Model/Data records");
    if (!err[0] && (n != r->nx || r->nout != s->n_outputs)) snprintf(err, sizeof err, "sizes do not match the model "
                                                                     "table (nx %lld, outputs %lld)", (long long)n,
                                                                     (long long)r->nout);
    if (!err[0] && (n_table != r->ntraj || n_slot != r->n_tin))
        snprintf(err, sizeof err, "trajectory records of %lld/%lld entries (expected %lld/%lld)", (long long)n_table,
                 (long long)n_slot, (long long)r->ntraj, (long long)r->n_tin);
    for (int64_t k = 0; k < r->ntraj && !err[0]; ++k)
        if (r->traj_table[k] < -1 || r->traj_table[k] >= FMU_MB_NTABLES)
            snprintf(err, sizeof err, "trajectory %lld has table function %lld (this binary has %d)", (long long)k,
                     (long long)r->traj_table[k], FMU_MB_NTABLES);
        else if (r->traj_table[k] >= 0 && FMU_MB_TABLE_NPARAMS[r->traj_table[k]] > FMU_MB_TABLE_MAX_PARAMS)
            snprintf(err, sizeof err, "table function %lld takes %d parameters (at most %d)",
                     (long long)r->traj_table[k], FMU_MB_TABLE_NPARAMS[r->traj_table[k]], FMU_MB_TABLE_MAX_PARAMS);
    for (int64_t j = 0; j < r->n_tin && !err[0]; ++j) {
        int64_t k = r->traj_index[j];
        if (k >= r->ntraj || (k >= 0 && r->traj_table[k] >= 0 &&
                              (r->traj_slot[j] < 0 || r->traj_slot[j] >= FMU_MB_TABLE_NPARAMS[r->traj_table[k]])))
            snprintf(err, sizeof err, "trajectory input %lld: trajectory %lld, slot %lld out of range", (long long)j,
                     (long long)k, (long long)r->traj_slot[j]);
    }
    if (err[0]) {
        ERROR(s, "the compiled mechanism %s is damaged: %s", path, err);
        free_run(r);
        return NULL;
    }
    int64_t nc = r->nc > 0 ? r->nc : 1, nrec = r->nx + 2 * r->nc + r->nv + 4;
    r->x = calloc((size_t)r->nx, 8);
    r->tau = calloc((size_t)r->nv + 1, 8);
    r->xdot = calloc((size_t)r->nx, 8);
    r->x_cp = calloc((size_t)r->nx, 8);
    r->out_cp = calloc((size_t)s->n_outputs + 1, 8);
    r->rec_cp = calloc((size_t)nrec, 8);
    r->rows_cp = calloc((size_t)nc, 8);
    r->tt = calloc((size_t)(2 * r->nseg + 1), 8);
    r->tp = calloc((size_t)(r->width * r->nseg + 1), 8);
    r->cols_cp = calloc((size_t)r->nv + 1, 8);
    if (!r->x || !r->tau || !r->xdot || !r->x_cp || !r->out_cp || !r->rec_cp || !r->rows_cp || !r->cols_cp || !r->tt ||
        !r->tp) {
        ERROR(s, "out of memory loading %s", path);
        free_run(r);
        return NULL;
    }
    return r;
}

/* ------------------------------------------------------------------------------------------------
 * The simulator (fmu_mb/simulator.py) over the kernel library
 */
static int gather(Instance *s, Run *r) {
    int64_t res = 0;
    int32_t st = GATHER[r->family](r->mb, r->db, r->x, r->nx, s->t, r->tau, r->nv, r->xdot, r->nx, r->out_vr, r->nout,
                                   r->out_kind, r->nout, r->out_a, r->nout, r->out_b, r->nout, r->out_f, r->nout, 3,
                                   s->values, FMU_MB_NVARS, &res);
    return st == 0;
}

static void checkpoint(Run *r, double *values, int n_outputs, const int *outputs) {
    memcpy(r->x_cp, r->x, (size_t)r->nx * 8);
    if (r->nc) memcpy(r->rows_cp, r->cp_rows, (size_t)r->nc * 8);
    memcpy(r->cols_cp, r->cp_cols, (size_t)r->nv * 8);
    r->rank_cp = r->cp_rank[0];
    r->valid_cp = r->cp_valid[0];
    r->pivot_cp = r->con_stats[FMU_MB_SLOT[S_PIVOT_CHOSEN]];
    r->count_cp = r->cp_count[0];
    r->fail_cp = r->fric_fail[0];
    r->iters_cp = r->fric_iters[0];
    for (int i = 0; i < n_outputs; ++i) r->out_cp[i] = values[outputs[i]];
}

static void rollback(Run *r, double *values, int n_outputs, const int *outputs) {
    memcpy(r->x, r->x_cp, (size_t)r->nx * 8);
    if (r->nc) memcpy(r->cp_rows, r->rows_cp, (size_t)r->nc * 8);
    memcpy(r->cp_cols, r->cols_cp, (size_t)r->nv * 8);
    r->cp_rank[0] = r->rank_cp;
    r->cp_valid[0] = r->valid_cp;
    r->con_stats[FMU_MB_SLOT[S_PIVOT_CHOSEN]] = r->pivot_cp;
    r->cp_count[0] = r->count_cp;
    r->fric_fail[0] = r->fail_cp;
    r->fric_iters[0] = r->iters_cp;
    if (values)
        for (int i = 0; i < n_outputs; ++i) values[outputs[i]] = r->out_cp[i];
}

static void anchor(Run *r, double t) {
    if (!r->nc) return;
    int64_t res;
    if (r->flags[1]) fmu_mb_anchor_offsets(r->mb, r->db, r->x, r->nv, r->x + r->nv, r->nv, t, &res);
    r->cp_valid[0] = 0;
}

static void hold_inputs(Instance *s, Run *r) {
    int di = 0, fi = 0;
    memset(r->tau, 0, (size_t)r->nv * 8);
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->role == R_TAU_DRIVE) {
            int64_t d = r->drive_dof[di++];
            if (d >= 0) r->tau[d] = s->values[i];
        } else if (v->role == R_BODY_FORCE) {
            int64_t k = r->force_idx[fi++];
            if (k >= 0 && k < r->nbf) r->bf[k] = s->values[i];
        }
    }
}

/* The trajectory input values are those in force. */
static void keep_trajectory_inputs(Instance *s) {
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        if (FMU_MB_VARS[i].role == R_TRAJ) s->traj_applied[FMU_MB_VARS[i].aux] = s->values[i];
    }
}

/* The name of trajectory k: its inputs' names up to the last dot. */
static const char *trajectory_name(const Run *r, int64_t k, char *buf, size_t len) {
    snprintf(buf, len, "%lld", (long long)k);
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        const char *dot = strrchr(v->name, '.');
        if (v->role == R_TRAJ && v->aux < r->n_tin && r->traj_index[v->aux] == k && dot) {
            snprintf(buf, len, "%.*s", (int)(dot - v->name), v->name);
            break;
        }
    }
    return buf;
}

/* Rows of trajectory k from its compiled table function (TableTrajectory.segments): the function's
 * parameter vector from the trajectory's inputs, its rows zeroed and rewritten in r->tt / r->tp. 0 with
 * the reason in why (the trajectory's check message, as Python words it) when the function refuses. */
static int table_rows(Instance *s, Run *r, int64_t k, char *why, size_t len) {
    int t = (int)r->traj_table[k], nv = FMU_MB_TABLE_NPARAMS[t];
    double v[FMU_MB_TABLE_MAX_PARAMS] = {0};
    for (int m = 0; m < s->n_inputs; ++m) {
        const fmu_mb_var *var = &FMU_MB_VARS[s->inputs[m]];
        if (var->role == R_TRAJ && var->aux < r->n_tin && r->traj_index[var->aux] == k)
            v[r->traj_slot[var->aux]] = s->values[s->inputs[m]];
    }
    int64_t f = r->traj_first[k], n = r->traj_count[k], code = 0;
    memset(r->tt + 2 * f, 0, (size_t)(2 * n) * 8);
    memset(r->tp + r->width * f, 0, (size_t)(r->width * n) * 8);
    void *exc = NULL;
    int32_t st = FMU_MB_TABLE_FN[t](&code, &exc, v, nv, r->tt + 2 * f, r->tp + r->width * f, n, r->width);
    if (st == 0 && code == 0) return 1;
    char name[200];
    trajectory_name(r, k, name, sizeof name);
    if (st != 0)
        snprintf(why, len, "trajectory '%s': its table function failed (numba status %d)", name, (int)st);
    else if (code > 0 && code <= FMU_MB_TABLE_NCHECKS[t])
        snprintf(why, len, "trajectory '%s': %s", name, FMU_MB_TABLE_CHECKS[t][code - 1]);
    else
        snprintf(why, len, "trajectory '%s': check %lld failed", name, (long long)code);
    return 0;
}

/* The trajectory inputs into the run's segment tables (MechanismSlave._apply_trajectories,
 * Simulator.set_trajectory): every table recomputed from the Model's as base + slope * (value - p0),
 * checked as Trajectory.validate checks (ranges, segments in time order, moves of positive duration)
 * and written only if every check passes; otherwise fmi2Error naming the inputs and why, and the
 * values in force are shown again. force: apply even if nothing changed (a restored state). */
static int apply_trajectories(Instance *s, Run *r, const char *where, int force) {
    int changed = force;
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        if (FMU_MB_VARS[i].role == R_TRAJ && s->values[i] != s->traj_applied[FMU_MB_VARS[i].aux]) changed = 1;
    }
    if (!changed) return 1;
    if (!r->nseg) {
        keep_trajectory_inputs(s);
        return 1;
    }
    memcpy(r->tt, r->seg_time, (size_t)(2 * r->nseg) * 8);
    memcpy(r->tp, r->seg_par, (size_t)(r->width * r->nseg) * 8);
    char why[600] = "", names[1200] = "", unit[64];
    int bad_traj = -1;
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->role != R_TRAJ) continue;
        int j = v->aux;
        if (j >= r->n_tin || r->traj_index[j] < 0) continue;          /* absent here, or fixed (refused earlier) */
        double x = s->values[i], dp = x - r->traj_p0[j];
        const char *dot = strrchr(v->name, '.');
        if (!why[0] && v->has_range && !(v->min <= x && x <= v->max)) {
            char got[32];
            snprintf(why, sizeof why, "trajectory '%.*s': %s must be a finite number in [%g, %g]%s (got %s)",
                     (int)(dot ? dot - v->name : 0), v->name, dot ? dot + 1 : v->name, v->min, v->max,
                     unit_suffix(v, unit), repr(x, got));
            bad_traj = (int)r->traj_index[j];
        }
        if (dp == 0.0) continue;
        for (int64_t k = 0; k < 2 * r->nseg; ++k) r->tt[k] += r->traj_jt[(int64_t)j * 2 * r->nseg + k] * dp;
        for (int64_t k = 0; k < r->width * r->nseg; ++k)
            r->tp[k] += r->traj_jp[(int64_t)j * r->width * r->nseg + k] * dp;
    }
    for (int64_t k = 0; k < r->ntraj && !why[0]; ++k) {
        if (r->traj_table[k] >= 0 && !table_rows(s, r, k, why, sizeof why)) bad_traj = (int)k;
        int64_t f = r->traj_first[k], n = r->traj_count[k];
        for (int64_t g = f; g < f + n && !why[0]; ++g) {
            char name[200];
            if (g > f && r->tt[2 * g] < r->tt[2 * (g - 1)])
                snprintf(why, sizeof why, "trajectory '%s': segments must start in time order",
                         trajectory_name(r, k, name, sizeof name));
            else if (r->seg_kind[g] != 2 && !(r->tt[2 * g + 1] > r->tt[2 * g]))
                snprintf(why, sizeof why, "trajectory '%s': every move needs a duration > 0 s",
                         trajectory_name(r, k, name, sizeof name));
            if (why[0]) bad_traj = (int)k;
        }
    }
    if (why[0]) {
        for (int k = 0; k < s->n_inputs; ++k) {
            int i = s->inputs[k];
            const fmu_mb_var *v = &FMU_MB_VARS[i];
            if (v->role != R_TRAJ || v->aux >= r->n_tin || r->traj_index[v->aux] != bad_traj) continue;
            if (!force && s->values[i] == s->traj_applied[v->aux]) continue;        /* the changed ones, as Python */
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", v->name);
        }
        ERROR(s, "%s: invalid trajectory input (%s): %s; the previous values are kept", where, names, why);
        for (int k = 0; k < s->n_inputs; ++k) {
            int i = s->inputs[k];
            if (FMU_MB_VARS[i].role == R_TRAJ) s->values[i] = s->traj_applied[FMU_MB_VARS[i].aux];
        }
        return 0;
    }
    memcpy(r->traj_time, r->tt, (size_t)(2 * r->nseg) * 8);
    memcpy(r->traj_par, r->tp, (size_t)(r->width * r->nseg) * 8);
    keep_trajectory_inputs(s);
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * Parameters -> a started run (MechanismSlave._build)
 */
static double param(Instance *s, int role, int aux) {
    for (int i = 0; i < FMU_MB_NVARS; ++i)
        if (FMU_MB_VARS[i].role == role && (role != R_GRAVITY || FMU_MB_VARS[i].aux == aux)) return s->values[i];
    return NAN;
}

static int has_param(int role) {
    for (int i = 0; i < FMU_MB_NVARS; ++i)
        if (FMU_MB_VARS[i].role == role) return 1;
    return 0;
}

/* Whether option o (a Count/Value built at several values) was built at value x. */
static int carried_value(int o, double x) {
    for (int k = 0; k < FMU_MB_NVARIANTS; ++k)
        if (FMU_MB_VARIANT_OPTIONS[k * FMU_MB_NOPTIONS + o] == x) return 1;
    return 0;
}

/* "1, 2, 5": the values option o was built at, in the order of the variants (truncated to fit). */
static void carried_values(int o, int integer, char *out, size_t size) {
    size_t len = 0;
    out[0] = 0;
    for (int k = 0; k < FMU_MB_NVARIANTS; ++k) {
        double x = FMU_MB_VARIANT_OPTIONS[k * FMU_MB_NOPTIONS + o];
        int seen = 0;
        for (int j = 0; j < k && !seen; ++j) seen = FMU_MB_VARIANT_OPTIONS[j * FMU_MB_NOPTIONS + o] == x;
        if (seen) continue;
        char item[32];
        if (integer) snprintf(item, sizeof item, "%.0f", x);
        else repr(x, item);
        int n = snprintf(out + len, size - len, "%s%s", len ? ", " : "", item);
        if (n < 0 || (size_t)n >= size - len) {        /* no room: end with an ellipsis */
            if (size > 4) strcpy(out + (len < size - 4 ? len : size - 4), "...");
            return;
        }
        len += (size_t)n;
    }
}

/* The option combination the option parameters select, or -1 (logged). */
static int select_variant(Instance *s) {
    double want[256];
    int n = 0;
    char buf[32], buf2[32], unit[64];
    for (int i = 0; i < FMU_MB_NVARS && n < 256; ++i)
        if (FMU_MB_VARS[i].role == R_OPTION) want[n++] = s->values[i];
    for (int i = 0, o = 0; i < FMU_MB_NVARS; ++i) {
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->role != R_OPTION) continue;
        if (FMU_MB_OPTION_FIXED[o] == 2 && !carried_value(o, want[o])) {
            char list[256];
            carried_values(o, v->type == T_INTEGER, list, sizeof list);
            if (v->type == T_INTEGER) snprintf(buf, sizeof buf, "%.0f", want[o]);
            else repr(want[o], buf);
            ERROR(s, "invalid parameter: '%s' = %s: this native FMU carries the mechanism built with %s = %s%s only "
                  "(the option rebuilds the model in Python); build a native FMU with this value too (fmu-mb build "
                  "--kind native --option %s=...,%s) or use the Python FMU", v->name, buf, v->name, list,
                  unit_suffix(v, unit), v->name + 6, buf);
            return -1;
        }
        if (FMU_MB_OPTION_FIXED[o] == 1 && want[o] != v->start) {
            if (v->type == T_INTEGER) {
                snprintf(buf, sizeof buf, "%.0f", want[o]);
                snprintf(buf2, sizeof buf2, "%.0f", v->start);
            } else {
                repr(want[o], buf);
                repr(v->start, buf2);
            }
            ERROR(s, "invalid parameter: '%s' = %s: this native FMU carries the mechanism built with %s = %s%s only "
                  "(the option rebuilds the model in Python); build a native FMU with this value (fmu-mb build "
                  "--kind native --option %s=%s) or use the Python FMU", v->name, buf, v->name, buf2,
                  unit_suffix(v, unit), v->name + 6, buf);
            return -1;
        }
        ++o;
    }
    for (int k = 0; k < FMU_MB_NVARIANTS; ++k) {
        int ok = 1;
        for (int o = 0; o < n && ok; ++o)
            ok = FMU_MB_OPTION_FIXED[o] == 3 || FMU_MB_VARIANT_OPTIONS[k * FMU_MB_NOPTIONS + o] == want[o];
        if (ok) return k;
    }
    ERROR(s, "invalid parameter: this native FMU does not carry the combination of model options set (it carries "
          "%d combinations of the Choice/Flag options; see resources/variants.json)", FMU_MB_NVARIANTS);
    return -1;
}

/* Value options taken at run time (model table kind 3, fmu_mb.fmi.native_values): every record of the
 * combination's arrays moves by Δᵢ·slope.<i>.<record> + Δᵢ·Δⱼ·cross.<i>.<j>.<record>, Δ = value − built value. */
static int apply_value_options(Instance *s, Run *r) {
    double dv[256];
    int n = 0;
    for (int i = 0; i < FMU_MB_NVARS && n < 256; ++i)
        if (FMU_MB_VARS[i].role == R_OPTION) dv[n++] = s->values[i] - FMU_MB_VARS[i].start;
    fmu_mb_arrays *a = r->arr;
    for (int64_t k = 0; k < a->n; ++k) {
        fmu_mb_record *rec = &a->records[k];
        int i = -1, j = -1, used = 0;
        double w;
        if (sscanf(rec->name, "slope.%d.%n", &i, &used) == 1 && used > 0 && i >= 0 && i < n)
            w = dv[i];
        else if (sscanf(rec->name, "cross.%d.%d.%n", &i, &j, &used) == 2 && used > 0 && i >= 0 && i < n && j >= 0 &&
                 j < n)
            w = dv[i] * dv[j];
        else
            continue;
        fmu_mb_record *t = fmu_mb_arrays_find(a, rec->name + used);
        if (!t || t->kind != 0 || rec->kind != 0 || t->count != rec->count) {
            ERROR(s, "the compiled mechanism of option combination %d is damaged: record %s has no matching %s",
                  r->index, rec->name, rec->name + used);
            return 0;
        }
        if (w == 0.0) continue;
        double *x = (double *)t->values;
        const double *d = (const double *)rec->values;
        for (int64_t m = 0; m < t->count; ++m) x[m] += w * d[m];
    }
    return 1;
}

/* Parameter ranges and types, as MechanismSlave._settings: every offending parameter named. */
static int check_parameters(Instance *s) {
    int ok = 1;
    char c[32], unit[64];
    for (int k = 0; k < s->n_params; ++k) {
        int i = s->params[k];
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        double val = s->values[i];
        if (v->role == R_OPTION && v->type == T_INTEGER && v->has_range && (val < v->min || val > v->max)) {
            if (v->extra)          /* a Choice (model.options.Choice.check) */
                ERROR(s, "invalid parameter: parameter '%s' must be one of %s (got %.0f)", v->name, v->extra, val);
            else                   /* a Count (model.options.Count.check) */
                ERROR(s, "invalid parameter: parameter '%s' must be an integer in [%.0f, %.0f] (got %s)", v->name,
                      v->min, v->max, repr(val, c));
            ok = 0;
        } else if (v->role == R_OPTION && v->has_range && !(v->min <= val && val <= v->max)) {
            ERROR(s, "invalid parameter: parameter '%s' must be a finite number in [%g, %g]%s (got %s)", v->name,
                  v->min, v->max, unit_suffix(v, unit), repr(val, c));     /* a Value (model.options.Value.check) */
            ok = 0;
        } else if (v->has_range && !(v->min <= val && val <= v->max)) {
            ERROR(s, "invalid parameter: parameter '%s' must lie in [%g, %g]%s (got %g)", v->name, v->min, v->max,
                  unit_suffix(v, unit), val);
            ok = 0;
        }
    }
    return ok;
}

static int result_problem(Instance *s, const char *where, char *msg, size_t len);

static int build(Instance *s) {
    if (!check_parameters(s)) return 0;
    int k = select_variant(s);
    if (k < 0) return 0;
    int stat = has_param(R_STATIC) && param(s, R_STATIC, 0) != 0.0;
    Run *r = load_run(s, k);
    if (!r) return 0;
    if (!apply_value_options(s, r)) {
        free_run(r);
        return 0;
    }
    /* gravity and solver settings */
    for (int a = 0; a < 3; ++a) r->gravity[a] = param(s, R_GRAVITY, a);
    if (has_param(R_ALPHA)) {
        r->solver_opt[FMU_MB_SLOT[S_ALPHA]] = param(s, R_ALPHA, 0);
        r->solver_opt[FMU_MB_SLOT[S_BETA]] = param(s, R_BETA, 0);
        r->solver_opt[FMU_MB_SLOT[S_PROJECTION]] = param(s, R_PROJECTION, 0) != 0.0;
    }
    int method = (int)param(s, R_INTEGRATOR, 0);
    if (FMU_MB_METHOD_GAMMA[method] != 0.0) r->solver_opt[FMU_MB_SLOT[S_GAMMA]] = FMU_MB_METHOD_GAMMA[method];
    if (!apply_trajectories(s, r, "fmi2ExitInitializationMode", 1)) {
        free_run(r);
        return 0;
    }
    /* start state: Simulator.initialize */
    memcpy(r->x, r->x0, (size_t)r->nx * 8);
    for (int i = 0, j = 0; i < FMU_MB_NVARS; ++i) {
        int role = FMU_MB_VARS[i].role;
        if (role != R_Q_START && role != R_QD_START) continue;
        int64_t d = r->start_dof[j++];
        if (d >= 0) r->x[(role == R_Q_START ? 0 : r->nv) + d] = s->values[i];
    }
    if (stat) {         /* Simulator.initialize: statics at rest without inputs (kernels.statics) */
        int64_t it = -1;
        double *o = r->static_opts;
        fmu_mb_static_equilibrium(r->mb, r->db, r->x, r->nv, s->t, r->static_free, r->n_free, r->static_rows,
                                  r->n_rows, r->static_zero, r->n_zero, o[2], (int64_t)o[3], o[1], (int64_t)o[0],
                                  &it);
        if (it < 0) {
            double e = r->static_info[0];
            char why[96];
            if (isfinite(e))
                snprintf(why, sizeof why, "%d Newton iterations (%sresidual %.3e)", (int)o[3],
                         o[0] != 0.0 ? "relative " : "", e);
            else
                snprintf(why, sizeof why, "a non-finite residual");
            ERROR(s, "initialization (init.static / init.assemble): %sstatic equilibrium did not converge in %s",
                  o[0] != 0.0 ? "constrained " : "", why);
            free_run(r);
            return 0;
        }
    }
    for (int i = 0; i < r->nx; ++i)
        if (!isfinite(r->x[i])) {
            ERROR(s, "initialization (init.static / init.assemble): state contains NaN or inf");
            free_run(r);
            return 0;
        }
    r->x[r->nx - 3] = r->x[r->nx - 2] = r->x[r->nx - 1] = 0.0;
    anchor(r, s->t);
    int assemble = has_param(R_ASSEMBLE) ? param(s, R_ASSEMBLE, 0) != 0.0 : 1;
    if (assemble && r->flags[0]) {
        int64_t it = 0;
        double *x = r->x_cp;
        memcpy(x, r->x, (size_t)r->nx * 8);
        fmu_mb_project(r->mb, r->db, x, r->nx, s->t, r->assemble_mask, r->n_groups, &it);
        int finite = 1;
        for (int i = 0; i < r->nx; ++i) finite &= isfinite(x[i]) != 0;
        if (it < 0 || !finite) {
            ERROR(s, "initialization (init.static / init.assemble): '%s': the constraints could not be solved from "
                  "the given start configuration (max |Phi| = %.3e after 25 Newton iterations); start closer to a "
                  "closed configuration, or check the lengths: a loop that cannot close never will",
                  FMU_MB_MODEL_ID, r->con_stats[FMU_MB_SLOT[S_PROJ_RESIDUAL]]);
            free_run(r);
            return 0;
        }
        memcpy(r->x, x, (size_t)r->nx * 8);
        r->cp_valid[0] = 0;
        anchor(r, s->t);
    }
    r->fric_fail[0] = 0;
    r->lin_redo[0] = 0;
    hold_inputs(s, r);
    double h = param(s, R_STEP, 0);
    double lim[3] = {NAN, NAN, NAN};             /* RK4's stability limit at the start (fmu_mb.stability) */
    int64_t nlin = 0;
    if (FMU_MB_METHOD_KERNEL[method] == 0)
        fmu_mb_rk4_step_limit(r->mb, r->db, r->x, r->nx, s->t, r->tau, r->nv, h, lim, 3, &nlin);
    if (h > lim[0] * (1.0 + 1e-9)) {              /* (NaN when not RK4: never) */
        char advice[32];
        snprintf(advice, sizeof advice, "%.2g", 0.9 * lim[0]);
        ERROR(s, "solver.step_size = %g s is above the stability limit of explicit RK4 for these options at the "
              "start: the stiffest mode (eigenvalue %.4g %+.4gi 1/s) allows h <= %.3g s; set solver.step_size <= %g s",
              h, lim[1], lim[2], lim[0], strtod(advice, NULL));
        free_run(r);
        return 0;
    }
    free_run(s->run);
    s->run = r;
    s->h = h;
    s->method_kernel = FMU_MB_METHOD_KERNEL[method];
    s->max_steps = (int64_t)param(s, R_MAX_STEPS, 0);
    s->max_violation = has_param(R_MAX_VIOLATION) ? param(s, R_MAX_VIOLATION, 0) : HUGE_VAL;
    say(s, fmi2OK, "kernels: native library (%s), option combination %d: %s", FMU_MB_METHOD_NAME[method], k,
        FMU_MB_VARIANT_TEXT[k]);
    return 1;
}

static int ensure_built(Instance *s) {
    int same = s->ready && s->run;
    for (int k = 0; same && k < s->n_params; ++k) same = s->built[k] == s->values[s->params[k]];
    if (same) return 1;
    s->ready = 0;
    if (!build(s)) return 0;
    for (int k = 0; k < s->n_params; ++k) s->built[k] = s->values[s->params[k]];
    s->ready = 1;
    if (!gather(s, s->run)) {
        ERROR(s, "evaluating the outputs failed in the kernel library");
        s->ready = 0;
        return 0;
    }
    return 1;
}

/* Why the current result may not be answered with fmi2OK (1, text in msg): a non-finite output, a
 * constraint violated beyond solver.max_violation (TableSlave._result_problem, MechanismSlave's). */
static int result_problem(Instance *s, const char *where, char *msg, size_t len) {
    int bad = -1, nbad = 0;
    char b1[32];
    for (int k = 0; k < s->n_outputs; ++k)
        if (!isfinite(s->values[s->outputs[k]])) {
            if (bad < 0) bad = s->outputs[k];
            ++nbad;
        }
    if (bad >= 0) {
        snprintf(msg, len, "%s: output '%s' = %s is not finite (%d output(s) in all)", where, FMU_MB_VARS[bad].name,
                 repr(s->values[bad], b1), nbad);
        return 1;
    }
    int worst = -1;
    for (int k = 0; k < s->n_violations; ++k) {
        int i = s->violations[k];
        if (worst < 0 || s->values[i] > s->values[worst]) worst = i;
    }
    if (worst < 0 || s->values[worst] <= s->max_violation) return 0;
    const fmu_mb_var *v = &FMU_MB_VARS[worst];
    char group[64] = "", type[64] = "", point[128] = "", name[256], amount[200];
    if (v->extra) sscanf(v->extra, "%63[^|]|%63[^|]|%127[^\n]", group, type, point);
    snprintf(name, sizeof name, "%s", v->name);
    char *dot = strrchr(name, '.');
    if (dot) *dot = '\0';
    snprintf(amount, sizeof amount, "%.4g%s%s%s", s->values[worst], v->unit && *v->unit ? " " : "",
             v->unit ? v->unit : "",
             strcmp(type, "PointOnEllipse") == 0 ? " (first-order distance |Phi|/|grad Phi|, exact only near the "
                                                   "ellipse)" : "");
    if (strcmp(group, "programmed") == 0) {
        char who[400];
        if (point[0]) snprintf(who, sizeof who, "point %s is %s away from it", point, amount);
        else snprintf(who, sizeof who, "it is violated by %s", amount);
        snprintf(msg, len, "%s: the programmed motion '%s' cannot be followed: %s at t = %g s, more than "
                 "solver.max_violation = %g (is the path out of reach, or traversed too fast?)", where, name, who,
                 s->t, s->max_violation);
    } else {
        snprintf(msg, len, "%s: constraint '%s' (%s) is violated by %s at t = %g s, more than solver.max_violation "
                 "= %g", where, name, group, amount, s->t, s->max_violation);
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * Life cycle
 */
/* dir with a trailing separator (dir has room for one more character). */
static const char *with_separator(char *dir) {
    size_t n = strlen(dir);
    if (n == 0 || (dir[n - 1] != '/' && dir[n - 1] != '\\')) strcpy(dir + n, "/");
    return dir;
}

/* A directory holding this FMU's compiled mechanisms (variants.arrays). */
static int is_our_resources(const char *dir) {
    char probe[4200];
    snprintf(probe, sizeof probe, "%svariants.arrays", dir);
    FILE *f = fopen(probe, "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}

#define PATH_BYTES 4096
/* fmuResourceLocation -> the resources directory (malloc'ed, with a trailing separator), or NULL and
 * why. The decoded URI is tried first (the standard); a host that put a raw path into the URI without
 * encoding it is understood where the decoded form is not this FMU's resources but the raw one is. */
static char *resources_dir(const char *uri, char *why, size_t wsize) {
    char decoded[PATH_BYTES], raw[PATH_BYTES], reason[512] = "", raw_why[64];
    if (!uri || !*uri) {
        snprintf(why, wsize, "fmuResourceLocation is %s; the host must pass the URI of the FMU's resources "
                 "folder (file:///path/to/resources)", uri ? "empty" : "NULL");
        return NULL;
    }
    const char *found = NULL;
    int ok_dec = decode_file_uri(uri, decoded, sizeof decoded - 1, 1, reason, sizeof reason);
    if (ok_dec && is_our_resources(with_separator(decoded))) found = decoded;
    else if (decode_file_uri(uri, raw, sizeof raw - 1, 0, raw_why, sizeof raw_why) &&
             is_our_resources(with_separator(raw)))
        found = raw;
    if (found) {
        char *out = malloc(strlen(found) + 1);
        if (out) strcpy(out, found);
        return out;
    }
    if (ok_dec)
        snprintf(why, wsize, "fmuResourceLocation '%.1024s' is not the resources folder of this FMU ('%.1024s' "
                 "holds no variants.arrays)", uri, decoded);
    else
        snprintf(why, wsize, "fmuResourceLocation '%.1024s' cannot be used: %s", uri, reason);
    return NULL;
}

static void free_states(Instance *s) {
    while (s->states) {
        StateBlob *b = s->states;
        s->states = b->next;
        b->magic = 0;
        free(b);
    }
}

static void reset_values(Instance *s) {
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        s->values[i] = FMU_MB_VARS[i].start;
        if (FMU_MB_VARS[i].role == R_TRAJ) s->traj_applied[FMU_MB_VARS[i].aux] = FMU_MB_VARS[i].start;
    }
    for (int k = 0; k < s->n_outputs; ++k) s->values[s->outputs[k]] = 0.0;
}

EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                     const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean loggingOn) {
    (void)visible;
    Instance probe;
    memset(&probe, 0, sizeof probe);
    if (!cb || !cb->logger) {
        fprintf(stderr, "fmu_mb (%s): fmi2Instantiate: the host passed no logger callback; instantiation refused\n",
                FMU_MB_MODEL_ID);
        return NULL;
    }
    probe.cb = *cb;
    probe.name = (char *)(name && valid_utf8(name) ? name : "");
    if (!name || !*name) {
        ERROR(&probe, "fmi2Instantiate: instanceName must be a non-empty string");
        return NULL;
    }
    if (!valid_utf8(name)) {
        ERROR(&probe, "fmi2Instantiate: instanceName is not valid UTF-8");
        return NULL;
    }
    if (type != fmi2CoSimulation) {
        ERROR(&probe, "fmi2Instantiate: this FMU supports co-simulation only (fmuType %d requested)", (int)type);
        return NULL;
    }
    if (!guid || strcmp(guid, FMU_MB_GUID) != 0) {
        ERROR(&probe, "fmi2Instantiate: GUID %.100s does not match this FMU's %s (modelDescription.xml and binary "
              "from different builds?)", guid ? guid : "(NULL)", FMU_MB_GUID);
        return NULL;
    }
    char why[2600];
    char *res = resources_dir(resources, why, sizeof why);
    if (!res) {
        ERROR(&probe, "fmi2Instantiate: %s", why);
        return NULL;
    }
    Instance *s = calloc(1, sizeof *s);
    if (!s) {
        free(res);
        return NULL;
    }
    s->magic = INSTANCE_MAGIC;
    s->name = malloc(strlen(name) + 1);
    strcpy(s->name, name);
    s->resources = res;
    if (cb) s->cb = *cb;
    s->debug = loggingOn != 0;
    s->values = calloc((size_t)FMU_MB_NVARS + 1, 8);
    s->values_before = calloc((size_t)FMU_MB_NVARS + 1, 8);
    s->params = calloc((size_t)FMU_MB_NVARS + 1, sizeof(int));
    s->inputs = calloc((size_t)FMU_MB_NVARS + 1, sizeof(int));
    s->outputs = calloc((size_t)FMU_MB_NVARS + 1, sizeof(int));
    s->violations = calloc((size_t)FMU_MB_NVARS + 1, sizeof(int));
    s->built = calloc((size_t)FMU_MB_NVARS + 1, 8);
    s->traj_applied = calloc((size_t)FMU_MB_NVARS + 1, 8);
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->causality == C_PARAMETER) s->params[s->n_params++] = i;
        else if (v->causality == C_INPUT) s->inputs[s->n_inputs++] = i;
        else s->outputs[s->n_outputs++] = i;
        if (v->role == R_VIOLATION) s->violations[s->n_violations++] = i;
    }
    reset_values(s);
    /* the first option combination must load: a damaged FMU fails here, not at the first step */
    char path[4096], err[512];
    snprintf(path, sizeof path, "%svariants.arrays", s->resources);
    fmu_mb_arrays *a = fmu_mb_arrays_load(path, FMU_MB_VARIANT_FILE[0], err, sizeof err);
    if (!a) {
        ERROR(s, "fmi2Instantiate: cannot load the compiled mechanism (%s); is fmuResourceLocation this FMU's "
              "resources folder?", err);
        s->magic = 0;
        free(s->name); free(s->resources); free(s->values); free(s->values_before); free(s->params);
        free(s->inputs); free(s->outputs); free(s->violations); free(s->built); free(s->traj_applied); free(s);
        return NULL;
    }
    fmu_mb_arrays_free(a);
    return s;
}

EXPORT void fmi2FreeInstance(fmi2Component c) {
    Instance *s = instance_of(c);
    if (!s) return;
    s->magic = 0;
    free_states(s);
    free_run(s->run);
    free(s->name); free(s->resources); free(s->values); free(s->values_before); free(s->params);
    free(s->inputs); free(s->outputs); free(s->violations); free(s->built); free(s->traj_applied);
    free(s);
}

EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t n, const fmi2String cat[]) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    if (n && !cat) {
        ERROR(s, "fmi2SetDebugLogging: categories is NULL with nCategories = %zu", n);
        return fmi2Error;
    }
    unsigned mask = 0;
    for (size_t i = 0; i < n; ++i) {
        int k = category_index(cat[i]);
        if (k < 0) {
            ERROR(s, "fmi2SetDebugLogging: unknown log category '%.200s' (this FMU has logStatusWarning, "
                  "logStatusDiscard, logStatusError, logStatusFatal, logAll)", cat[i] ? cat[i] : "(NULL)");
            return fmi2Error;
        }
        mask |= 1u << k;
    }
    s->debug = loggingOn != 0;
    s->categories = mask;
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start,
                                      fmi2Boolean stopDef, fmi2Real stop) {
    Instance *s = instance_of(c);
    char a[32], b[32];
    if (!s) return fmi2Error;
    if (!phase_is(s, P_INST, "fmi2SetupExperiment", NULL)) return fmi2Error;
    if (!(isfinite(start) && fabs(start) <= TIME_LIMIT)) {
        ERROR(s, "fmi2SetupExperiment: startTime must be finite and within +-%g s (got %s)", TIME_LIMIT,
              repr(start, a));
        return fmi2Error;
    }
    if (stopDef && (isnan(stop) || stop < start)) {
        ERROR(s, "fmi2SetupExperiment: stopTime %s s must not lie before startTime %s s", repr(stop, a),
              repr(start, b));
        return fmi2Error;
    }
    if (tolDef && !(isfinite(tol) && tol > 0)) {
        ERROR(s, "fmi2SetupExperiment: tolerance must be finite and > 0 (got %s); this FMU steps with a fixed "
              "internal step and does not use it", repr(tol, a));
        return fmi2Error;
    }
    s->t = s->t0 = start;
    s->has_stop = stopDef && !isinf(stop);
    s->t_stop = s->has_stop ? stop : NAN;
    return fmi2OK;
}

EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    if (!phase_is(s, P_INST, "fmi2EnterInitializationMode", NULL)) return fmi2Error;
    s->phase = INITIALIZATION;
    return fmi2OK;
}

EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance *s = instance_of(c);
    char msg[4096], where[128];
    if (!s) return fmi2Error;
    if (!phase_is(s, P_INIT, "fmi2ExitInitializationMode", "call fmi2EnterInitializationMode first"))
        return fmi2Error;
    if (!ensure_built(s)) return fmi2Error;
    snprintf(where, sizeof where, "fmi2ExitInitializationMode at t = %g s", s->t);
    if (result_problem(s, where, msg, sizeof msg)) {
        s->ready = 0;
        ERROR(s, "%s; change the parameters or start values and try again", msg);
        return fmi2Error;
    }
    s->phase = STEPPING;
    s->last_ok = s->t;
    return fmi2OK;
}

EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    if (!phase_is(s, P_STEP, "fmi2Terminate", NULL)) return fmi2Error;
    s->phase = TERMINATED;
    return fmi2OK;
}

EXPORT fmi2Status fmi2Reset(fmi2Component c) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    free_run(s->run);
    s->run = NULL;
    s->ready = 0;
    s->phase = INSTANTIATED;
    s->t = s->t0 = s->last_ok = 0.0;
    s->has_stop = 0;
    reset_values(s);
    return fmi2OK;
}

/* ------------------------------------------------------------------------------------------------
 * Stepping
 */
EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real dt, fmi2Boolean noSetPrior) {
    (void)noSetPrior;
    Instance *s = instance_of(c);
    char a[32], b[32], msg[4096], where[200];
    if (!s) return fmi2Error;
    if (!phase_is(s, P_STEP, "fmi2DoStep",
                  "it is allowed after fmi2ExitInitializationMode and before fmi2Terminate"))
        return fmi2Error;
    if (!(isfinite(dt) && dt > 0.0)) {
        ERROR(s, "fmi2DoStep: communicationStepSize must be finite and > 0 s (got %s)", repr(dt, a));
        return fmi2Error;
    }
    if (!isfinite(t) || fabs(t - s->t) > 1e-9 * fmax(1.0, fabs(s->t)) + 1e-12) {
        ERROR(s, "fmi2DoStep: currentCommunicationPoint %s s differs from the FMU time %s s (steps must be "
              "contiguous; use fmi2SetFMUstate to go back)", repr(t, a), repr(s->t, b));
        return fmi2Error;
    }
    double end = t + dt;
    if (s->has_stop && end > s->t_stop + 1e-9 * fmax(1.0, fabs(s->t_stop))) {
        ERROR(s, "fmi2DoStep: the step to t = %s s ends after the stop time %s s given to fmi2SetupExperiment",
              repr(end, a), repr(s->t_stop, b));
        return fmi2Error;
    }
    if (!(fabs(end) <= TIME_LIMIT)) {
        ERROR(s, "fmi2DoStep: the step to t = %s s ends beyond +-%g s", repr(end, a), TIME_LIMIT);
        return fmi2Error;
    }
    Run *r = s->run;
    double ratio = dt / s->h;
    double nr = floor(ratio + 0.5);
    if (fabs(ratio - nr) > 1e-9 * fmax(1.0, ratio)) nr = floor(ratio);
    double nsteps = ceil(dt / s->h - 1e-9);
    if (nsteps > (double)s->max_steps) {
        ERROR(s, "fmi2DoStep: a step of %g s needs %.0f internal steps of %g s, more than "
              "solver.max_steps_per_call = %lld", dt, nsteps, s->h, (long long)s->max_steps);
        return fmi2Error;
    }
    snprintf(where, sizeof where, "fmi2DoStep at t = %g s", t);
    if (!apply_trajectories(s, r, where, 0)) return fmi2Error;
    hold_inputs(s, r);
    int64_t fails = r->fric_fail[0], ok = 0, res = 0;
    int64_t n = (int64_t)nr;
    double rem = dt - (double)n * s->h;
    checkpoint(r, s->values, s->n_outputs, s->outputs);
    int32_t st = STEPS[r->family][s->method_kernel](r->mb, r->db, r->x, r->nx, t, r->tau, r->nv, s->h, n, &ok);
    ok = ok && st == 0;
    if (ok && rem > 1e-9 * s->h) {
        st = STEP[r->family][s->method_kernel](r->mb, r->db, r->x, r->nx, t + (double)n * s->h, r->tau, r->nv, rem,
                                                &res);
        ok = st == 0;
        for (int64_t i = 0; ok && i < r->nx; ++i) ok = isfinite(r->x[i]) != 0;
    }
    if (!ok) {
        rollback(r, NULL, 0, NULL);
        char why[200] = "";
        if (r->nc && r->con_stats[FMU_MB_SLOT[S_PIVOT]] == 0.0)
            snprintf(why, sizeof why, " (the constraint matrix is singular: rank %d at the failing configuration)",
                     (int)r->con_stats[FMU_MB_SLOT[S_RANK]]);
        ERROR(s, "fmi2DoStep at t = %g s: integration from t = %.6g s over %.6g s produced a non-finite state%s; the "
              "state before the step is kept; outputs and state of t = %g s are kept (%s at solver.step_size = %g s "
              "may be unstable here: a smaller step or another solver.integrator may pass)", t, t, dt, why, t,
              FMU_MB_METHOD_NAME[(int)param(s, R_INTEGRATOR, 0)], s->h);
        return fmi2Error;
    }
    s->t = end;
    if (!gather(s, r)) {
        rollback(r, s->values, s->n_outputs, s->outputs);
        s->t = t;
        ERROR(s, "fmi2DoStep at t = %g s: evaluating the outputs failed in the kernel library", t);
        return fmi2Error;
    }
    snprintf(where, sizeof where, "fmi2DoStep from t = %g s over %g s", t, dt);
    if (result_problem(s, where, msg, sizeof msg)) {
        rollback(r, s->values, s->n_outputs, s->outputs);
        s->t = t;
        ERROR(s, "%s; the state and outputs at t = %g s are kept", msg, t);
        return fmi2Error;
    }
    s->last_ok = s->t;
    if (r->fric_fail[0] > fails) {
        say(s, fmi2Warning, "fmi2DoStep at t = %g s: the friction/reaction loop did not converge in %lld "
            "evaluation(s) (a self-locking joint?); the least-residual friction torques were applied", t,
            (long long)(r->fric_fail[0] - fails));
        return fmi2Warning;
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2CancelStep(fmi2Component c) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    ERROR(s, "fmi2CancelStep: there is no asynchronous step to cancel (canRunAsynchronuously = false)");
    return fmi2Error;
}

/* ------------------------------------------------------------------------------------------------
 * Variables
 */
#define MAX_VALUES (1u << 24)
static int arrays_ok(Instance *s, const char *fn, size_t n, const void *vr, const void *v) {
    if (n > MAX_VALUES) {
        ERROR(s, "%s: nvr = %zu is larger than any call of this FMU needs (at most %u)", fn, n, MAX_VALUES);
        return 0;
    }
    if (n && (!vr || !v)) {
        ERROR(s, "%s: %s is NULL with nvr = %zu", fn, !vr ? "vr" : "value", n);
        return 0;
    }
    return 1;
}

static int check_vrs(Instance *s, const fmi2ValueReference vr[], size_t n, int type, const char *what) {
    static const char *const names[] = {"Real", "Integer", "Boolean"};
    for (size_t k = 0; k < n; ++k) {
        if (vr[k] >= (fmi2ValueReference)FMU_MB_NVARS) {
            ERROR(s, "%s: unknown value reference %u", what, vr[k]);
            return 0;
        }
        const fmu_mb_var *v = &FMU_MB_VARS[vr[k]];
        if (v->type != type) {
            ERROR(s, "%s: value reference %u ('%s') is %s, not %s", what, vr[k], v->name, names[v->type], names[type]);
            return 0;
        }
    }
    return 1;
}

static int read_values(Instance *s, const fmi2ValueReference vr[], size_t n, int type, const char *what) {
    if (!phase_is(s, P_INIT | P_STEP | P_TERM, what, "call fmi2EnterInitializationMode first")) return 0;
    if (!check_vrs(s, vr, n, type, what)) return 0;
    int any_output = 0;
    for (size_t k = 0; k < n; ++k) any_output |= FMU_MB_VARS[vr[k]].causality == C_OUTPUT;
    if (any_output && s->phase == INITIALIZATION && !ensure_built(s)) return 0;
    for (size_t k = 0; k < n; ++k)
        if (!isfinite(s->values[vr[k]])) {
            char a[32];
            ERROR(s, "%s: '%s' = %s is not finite", what, FMU_MB_VARS[vr[k]].name, repr(s->values[vr[k]], a));
            return 0;
        }
    return 1;
}

/* Write one value (TableSlave._write): outputs and fixed parameters refused, NaN refused, trajectory
 * inputs fixed at their built values (their segment tables are the model file's Python). */
static int write_value(Instance *s, fmi2ValueReference vr, double x, const char *what) {
    const fmu_mb_var *v = &FMU_MB_VARS[vr];
    char a[32], b[32];
    if (v->causality == C_OUTPUT) {
        ERROR(s, "%s: '%s' is an output and cannot be set", what, v->name);
        return 0;
    }
    if (v->causality == C_PARAMETER && s->phase != INSTANTIATED && s->phase != INITIALIZATION) {
        ERROR(s, "%s: parameter '%s' is fixed after initialization (FMU is in %s)", what, v->name, PHASES[s->phase]);
        return 0;
    }
    if (!isfinite(x)) {
        ERROR(s, "%s: '%s' = %s refused (not finite); keeping %s", what, v->name, repr(x, a), repr(s->values[vr], b));
        return 0;
    }
    if (v->role == R_TRAJ && x != v->start && v->extra && strcmp(v->extra, "fixed") == 0) {
        ERROR(s, "%s: '%s' = %s refused: a native FMU follows the programmed trajectories it was built with (their "
              "segments are computed by the model file's Python); keeping %s. Change it in the model file and "
              "build again, or use the Python FMU", what, v->name, repr(x, a), repr(s->values[vr], b));
        return 0;
    }
    s->values[vr] = x;
    return 1;
}

static fmi2Status write_values(Instance *s, const fmi2ValueReference vr[], size_t n, const double *x, int type,
                               const char *what) {
    if (!phase_is(s, P_INST | P_INIT | P_STEP, what, "variables cannot be set after fmi2Terminate")) return fmi2Error;
    if (!check_vrs(s, vr, n, type, what)) return fmi2Error;
    int ok = 1;
    for (size_t k = 0; k < n; ++k) ok &= write_value(s, vr[k], x[k], what);
    return ok ? fmi2OK : fmi2Error;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Instance *s = instance_of(c);
    if (!s || !arrays_ok(s, "fmi2GetReal", n, vr, v)) return fmi2Error;
    if (!read_values(s, vr, n, T_REAL, "fmi2GetReal")) {
        for (size_t k = 0; k < n; ++k) v[k] = 0.0;
        return fmi2Error;
    }
    for (size_t k = 0; k < n; ++k) v[k] = s->values[vr[k]];
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    Instance *s = instance_of(c);
    if (!s || !arrays_ok(s, "fmi2GetInteger", n, vr, v)) return fmi2Error;
    if (!read_values(s, vr, n, T_INTEGER, "fmi2GetInteger")) {
        for (size_t k = 0; k < n; ++k) v[k] = 0;
        return fmi2Error;
    }
    for (size_t k = 0; k < n; ++k) {
        double x = s->values[vr[k]];
        v[k] = x > 2147483647.0 ? 2147483647 : x < -2147483648.0 ? (-2147483647 - 1) : (fmi2Integer)x;
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
    Instance *s = instance_of(c);
    if (!s || !arrays_ok(s, "fmi2GetBoolean", n, vr, v)) return fmi2Error;
    if (!read_values(s, vr, n, T_BOOLEAN, "fmi2GetBoolean")) {
        for (size_t k = 0; k < n; ++k) v[k] = 0;
        return fmi2Error;
    }
    for (size_t k = 0; k < n; ++k) v[k] = s->values[vr[k]] != 0.0;
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
    Instance *s = instance_of(c);
    if (!s || !arrays_ok(s, "fmi2GetString", n, vr, v)) return fmi2Error;
    if (!phase_is(s, P_INIT | P_STEP | P_TERM, "fmi2GetString", NULL)) return fmi2Error;
    if (n) {
        ERROR(s, "fmi2GetString: this FMU has no String variables");
        return fmi2Error;
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    Instance *s = instance_of(c);
    if (!s || !arrays_ok(s, "fmi2SetReal", n, vr, v)) return fmi2Error;
    return write_values(s, vr, n, v, T_REAL, "fmi2SetReal");
}

#define SET_CONVERTED(fn, ctype, TYPE, conv)                                                     \
    EXPORT fmi2Status fn(fmi2Component c, const fmi2ValueReference vr[], size_t n, const ctype v[]) { \
        Instance *s = instance_of(c);                                                              \
        if (!s || !arrays_ok(s, #fn, n, vr, v)) return fmi2Error;                                  \
        if (!phase_is(s, P_INST | P_INIT | P_STEP, #fn, "variables cannot be set after fmi2Terminate")) \
            return fmi2Error;                                                                      \
        if (!check_vrs(s, vr, n, TYPE, #fn)) return fmi2Error;                                     \
        int ok = 1;                                                                                \
        for (size_t k = 0; k < n; ++k) ok &= write_value(s, vr[k], conv, #fn);                     \
        return ok ? fmi2OK : fmi2Error;                                                            \
    }
SET_CONVERTED(fmi2SetInteger, fmi2Integer, T_INTEGER, (double)v[k])
SET_CONVERTED(fmi2SetBoolean, fmi2Boolean, T_BOOLEAN, (v[k] ? 1.0 : 0.0))

EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    Instance *s = instance_of(c);
    if (!s || !arrays_ok(s, "fmi2SetString", n, vr, v)) return fmi2Error;
    if (!phase_is(s, P_INST | P_INIT | P_STEP, "fmi2SetString", NULL)) return fmi2Error;
    if (n) {
        ERROR(s, "fmi2SetString: this FMU has no String variables");
        return fmi2Error;
    }
    return fmi2OK;
}

/* ------------------------------------------------------------------------------------------------
 * FMU state: the record of fmu_mb/fmi/state.py
 */
#define HEAD_SIZE (6 + 2 + 32 + 1 + 4 + 4 + 8 + 8 + 8 + 8)
#define FORMAT_VERSION 2

static uint32_t crc32_of(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void put(unsigned char **p, const void *v, size_t n) {
    memcpy(*p, v, n);           /* x86-64 (both targets) is little-endian: the record's byte order */
    *p += n;
}

static void digest_bytes(unsigned char out[32]) {
    for (int i = 0; i < 32; ++i) {
        unsigned v;
        sscanf(FMU_MB_INTERFACE_DIGEST + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
}

/* The simulator state record (Simulator.state_record): x, cp_rows, cp_cols, rank, valid, pivot ratio,
 * con_off, partition count. */
static int64_t record_size(Run *r) { return r ? r->nx + 2 * r->nc + r->nv + 3 + 1 : 0; }

static void write_record(Run *r, double *rec) {
    int64_t o = 0;
    memcpy(rec, r->x, (size_t)r->nx * 8);
    o = r->nx;
    for (int64_t i = 0; i < r->nc; ++i) rec[o++] = (double)r->cp_rows[i];
    for (int64_t i = 0; i < r->nv; ++i) rec[o++] = (double)r->cp_cols[i];
    rec[o++] = (double)r->cp_rank[0];
    rec[o++] = (double)r->cp_valid[0];
    rec[o++] = r->con_stats[FMU_MB_SLOT[S_PIVOT_CHOSEN]];
    for (int64_t i = 0; i < r->nc; ++i) rec[o++] = r->con_off[i];
    rec[o++] = (double)r->cp_count[0];
}

static StateBlob *pack_state(Instance *s) {
    Run *r = s->ready ? s->run : NULL;
    int64_t nrec = record_size(r);
    uint32_t nval = (uint32_t)(s->n_params + s->n_inputs), nstate = (uint32_t)nrec;
    size_t size = HEAD_SIZE + 8 * ((size_t)nval + (size_t)nstate) + 4;
    StateBlob *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->magic = STATE_MAGIC;
    b->size = size;
    unsigned char *p = b->bytes, dig[32];
    uint16_t version = FORMAT_VERSION;
    uint8_t phase = (uint8_t)s->phase;
    double t_stop = s->has_stop ? s->t_stop : NAN;
    int64_t fails = r ? r->fric_fail[0] : 0;
    digest_bytes(dig);
    put(&p, "FMUMB\0", 6);
    put(&p, &version, 2);
    put(&p, dig, 32);
    put(&p, &phase, 1);
    put(&p, &nval, 4);
    put(&p, &nstate, 4);
    put(&p, &s->t0, 8);
    put(&p, &t_stop, 8);
    put(&p, &s->t, 8);
    put(&p, &fails, 8);
    for (int k = 0; k < s->n_params; ++k) put(&p, &s->values[s->params[k]], 8);
    for (int k = 0; k < s->n_inputs; ++k) put(&p, &s->values[s->inputs[k]], 8);
    if (r) {
        write_record(r, r->rec_cp);
        put(&p, r->rec_cp, 8 * (size_t)nrec);
    }
    uint32_t crc = crc32_of(b->bytes, size - 4);
    put(&p, &crc, 4);
    return b;
}

typedef struct {
    uint8_t phase;
    uint32_t nval, nstate;
    double t0, t_stop, t;
    int64_t fails;
    const double *values, *state;       /* unaligned views: read with memcpy */
} Unpacked;

static double at(const double *p, size_t i) {
    double v;
    memcpy(&v, (const unsigned char *)p + 8 * i, 8);
    return v;
}

/* fmu_mb.fmi.state.unpack: the framing; 0 and the reason in why if it is wrong. */
static int unpack_state(const unsigned char *b, size_t size, Unpacked *u, char *why, size_t wlen) {
    char x1[32], x2[32];
    if (size < HEAD_SIZE + 4) {
        snprintf(why, wlen, "FMU state too short (%zu bytes)", size);
        return 0;
    }
    if (memcmp(b, "FMUMB\0", 6) != 0) {
        snprintf(why, wlen, "not an fmu_mb FMU state (bad magic)");
        return 0;
    }
    uint16_t version;
    memcpy(&version, b + 6, 2);
    if (version != FORMAT_VERSION) {
        snprintf(why, wlen, "FMU state format %u is not supported (this FMU reads format %d)", version,
                 FORMAT_VERSION);
        return 0;
    }
    unsigned char dig[32];
    digest_bytes(dig);
    if (memcmp(b + 8, dig, 32) != 0) {
        snprintf(why, wlen, "FMU state belongs to a different FMU interface");
        return 0;
    }
    const unsigned char *p = b + 40;
    memcpy(&u->phase, p, 1);
    memcpy(&u->nval, p + 1, 4);
    memcpy(&u->nstate, p + 5, 4);
    memcpy(&u->t0, p + 9, 8);
    memcpy(&u->t_stop, p + 17, 8);
    memcpy(&u->t, p + 25, 8);
    memcpy(&u->fails, p + 33, 8);
    size_t expected = HEAD_SIZE + 8 * ((size_t)u->nval + (size_t)u->nstate) + 4;
    if (size != expected) {
        snprintf(why, wlen, "FMU state has %zu bytes, its header announces %zu", size, expected);
        return 0;
    }
    uint32_t crc;
    memcpy(&crc, b + expected - 4, 4);
    if (crc != crc32_of(b, expected - 4)) {
        snprintf(why, wlen, "FMU state checksum mismatch (corrupted)");
        return 0;
    }
    if (u->phase > 3) {
        snprintf(why, wlen, "FMU state has an unknown phase code %u", u->phase);
        return 0;
    }
    if (!(isfinite(u->t0) && fabs(u->t0) <= TIME_LIMIT)) {
        snprintf(why, wlen, "FMU state start time %s s is not a finite time within +-%g s", repr(u->t0, x1),
                 TIME_LIMIT);
        return 0;
    }
    if (!(isfinite(u->t) && fabs(u->t) <= TIME_LIMIT)) {
        snprintf(why, wlen, "FMU state time %s s is not a finite time within +-%g s", repr(u->t, x1), TIME_LIMIT);
        return 0;
    }
    if (u->t < u->t0) {
        snprintf(why, wlen, "FMU state time %s s lies before its start time %s s", repr(u->t, x1), repr(u->t0, x2));
        return 0;
    }
    if (!(isnan(u->t_stop) || u->t_stop >= u->t0)) {
        snprintf(why, wlen, "FMU state stop time %s s lies before its start time %s s", repr(u->t_stop, x1),
                 repr(u->t0, x2));
        return 0;
    }
    if (u->fails < 0) {
        snprintf(why, wlen, "FMU state has a negative failure count %lld", (long long)u->fails);
        return 0;
    }
    u->values = (const double *)(b + HEAD_SIZE);
    u->state = (const double *)(b + HEAD_SIZE + 8 * (size_t)u->nval);
    return 1;
}

/* Simulator.restore_record's checks, then the write; 0 and the reason if the record does not fit. */
static int restore_record(Instance *s, const Unpacked *u, char *why, size_t wlen) {
    Run *r = s->run;
    int64_t n = record_size(r), nv = r->nv, nc = r->nc, nx = r->nx;
    char a[32];
    if ((int64_t)u->nstate != n) {
        snprintf(why, wlen, "it holds %u state values, the model has %lld", u->nstate, (long long)n);
        return 0;
    }
    for (int64_t i = 0; i < n; ++i)
        if (!isfinite(at(u->state, (size_t)i))) {
            snprintf(why, wlen, "state value %lld is %s", (long long)i, repr(at(u->state, (size_t)i), a));
            return 0;
        }
    for (int64_t i = 0; i < 2 * nv; ++i) {
        double v = at(u->state, (size_t)i), lim = i < nv ? COORDINATE_LIMIT : RATE_LIMIT;
        if (fabs(v) > lim) {
            snprintf(why, wlen, "%s %lld = %s lies outside +-%g", i < nv ? "coordinate" : "rate of coordinate",
                     (long long)(i % nv), repr(v, a), lim);
            return 0;
        }
    }
    double count = at(u->state, (size_t)n - 1);
    if (!(count >= 0 && floor(count) == count)) {
        snprintf(why, wlen, "the partition count %s is not a count", repr(count, a));
        return 0;
    }
    /* a valid partition: permutations of the rows and columns, rank and flag in range */
    unsigned char *seen = calloc((size_t)(nc > nv ? nc : nv) + 1, 1);
    if (!seen) {
        snprintf(why, wlen, "out of memory");
        return 0;
    }
    int ok = 1;
    for (int pass = 0; pass < 2 && ok; ++pass) {
        int64_t m = pass ? nv : nc, off = nx + (pass ? nc : 0);
        memset(seen, 0, (size_t)(nc > nv ? nc : nv) + 1);
        for (int64_t i = 0; i < m && ok; ++i) {
            double v = at(u->state, (size_t)(off + i));
            ok = v >= 0 && v < (double)m && floor(v) == v && !seen[(int64_t)v];
            if (ok) seen[(int64_t)v] = 1;
        }
    }
    free(seen);
    double rank = at(u->state, (size_t)(nx + nc + nv)), valid = at(u->state, (size_t)(nx + nc + nv + 1));
    if (!ok) {
        snprintf(why, wlen, "solver state holds an invalid partition");
        return 0;
    }
    if (!(floor(rank) == rank && rank >= 0 && rank <= (double)(nc < nv ? nc : nv)) || !(valid == 0.0 || valid == 1.0)) {
        snprintf(why, wlen, "solver state holds an invalid partition rank %s or flag", repr(rank, a));
        return 0;
    }
    for (int64_t i = 0; i < nx; ++i) r->x[i] = at(u->state, (size_t)i);
    for (int64_t i = 0; i < nc; ++i) r->cp_rows[i] = (int64_t)at(u->state, (size_t)(nx + i));
    for (int64_t i = 0; i < nv; ++i) r->cp_cols[i] = (int64_t)at(u->state, (size_t)(nx + nc + i));
    r->cp_rank[0] = (int64_t)rank;
    r->cp_valid[0] = (int64_t)valid;
    r->con_stats[FMU_MB_SLOT[S_PIVOT_CHOSEN]] = at(u->state, (size_t)(nx + nc + nv + 2));
    for (int64_t i = 0; i < nc; ++i) r->con_off[i] = at(u->state, (size_t)(nx + nc + nv + 3 + i));
    r->cp_count[0] = (int64_t)count;
    r->fric_fail[0] = u->fails;
    s->t = u->t;
    return 1;
}

static int check_saved(Instance *s, const Unpacked *u, char *why, size_t wlen) {
    char a[32], unit[64];
    if ((int)u->nval != s->n_params + s->n_inputs) {
        snprintf(why, wlen, "FMU state holds %u values, this FMU has %d", u->nval, s->n_params + s->n_inputs);
        return 0;
    }
    if (u->phase == TERMINATED) {
        snprintf(why, wlen, "it was saved after fmi2Terminate and cannot be restored (use fmi2Reset)");
        return 0;
    }
    if (u->phase == INSTANTIATED && u->nstate) {
        snprintf(why, wlen, "it is marked 'instantiated' but holds a simulator state");
        return 0;
    }
    if (u->phase != STEPPING && u->phase != s->phase) {
        snprintf(why, wlen, "it was saved in %s and the FMU is in %s; only a state saved while stepping can be "
                 "restored into another phase", PHASES[u->phase], PHASES[s->phase]);
        return 0;
    }
    for (uint32_t k = 0; k < u->nval; ++k) {
        int vr = (int)k < s->n_params ? s->params[k] : s->inputs[k - (uint32_t)s->n_params];
        const fmu_mb_var *v = &FMU_MB_VARS[vr];
        double x = at(u->values, k);
        if (!isfinite(x)) snprintf(why, wlen, "'%s' = %s is not finite", v->name, repr(x, a));
        else if (v->type != T_REAL && floor(x) != x) snprintf(why, wlen, "'%s' = %s is not an integer", v->name,
                                                              repr(x, a));
        else if (v->type == T_BOOLEAN && x != 0.0 && x != 1.0) snprintf(why, wlen, "'%s' = %s is not a Boolean",
                                                                        v->name, repr(x, a));
        else if (v->has_range && !(v->min <= x && x <= v->max))
            snprintf(why, wlen, "'%s' must lie in [%g, %g]%s (got %g)", v->name, v->min, v->max,
                     unit_suffix(v, unit), x);
        else if (v->role == R_TRAJ && x != v->start && v->extra && strcmp(v->extra, "fixed") == 0)
            snprintf(why, wlen, "'%s' = %s differs from the trajectory this native FMU was built with", v->name,
                     repr(x, a));
        else continue;
        return 0;
    }
    return 1;
}

static int set_state(Instance *s, const unsigned char *bytes, size_t size) {
    Unpacked u;
    char why[1024], msg[4096];
    if (!unpack_state(bytes, size, &u, why, sizeof why) || !check_saved(s, &u, why, sizeof why)) {
        ERROR(s, "fmi2SetFMUstate: the state is refused: %s; the current state is kept", why);
        return 0;
    }
    /* what is kept if the state does not fit */
    memcpy(s->values_before, s->values, (size_t)FMU_MB_NVARS * 8);
    int phase = s->phase, has_stop = s->has_stop, had_run = s->ready && s->run;
    double t0 = s->t0, t_stop = s->t_stop, t = s->t;
    double *rec_before = NULL;
    int64_t fail_before = 0;
    if (had_run) {
        rec_before = malloc((size_t)record_size(s->run) * 8 + 8);
        if (!rec_before) {
            ERROR(s, "fmi2SetFMUstate: out of memory");
            return 0;
        }
        write_record(s->run, rec_before);
        fail_before = s->run->fric_fail[0];
    }
    for (uint32_t k = 0; k < u.nval; ++k) {
        int vr = (int)k < s->n_params ? s->params[k] : s->inputs[k - (uint32_t)s->n_params];
        s->values[vr] = at(u.values, k);
    }
    s->t0 = u.t0;
    s->has_stop = !isnan(u.t_stop);
    s->t_stop = u.t_stop;
    s->t = u.t;
    int problem = 0;
    if (u.nstate || u.phase == STEPPING) {
        if (!ensure_built(s)) {
            problem = 1;
            snprintf(msg, sizeof msg, "its parameters do not build this FMU's model (see the messages above)");
        } else if (!restore_record(s, &u, msg, sizeof msg)) {
            problem = 1;
        } else if (!apply_trajectories(s, s->run, "fmi2SetFMUstate", 1)) {
            problem = 1;
            snprintf(msg, sizeof msg, "its trajectory inputs are invalid");
        } else {
            hold_inputs(s, s->run);
            problem = !gather(s, s->run) ? (snprintf(msg, sizeof msg, "its outputs cannot be evaluated"), 1)
                                         : result_problem(s, "its outputs", msg, sizeof msg);
        }
    }
    if (problem) {
        memcpy(s->values, s->values_before, (size_t)FMU_MB_NVARS * 8);
        s->phase = phase;
        s->t0 = t0;
        s->has_stop = has_stop;
        s->t_stop = t_stop;
        s->t = t;
        if (!had_run) {
            s->ready = 0;
        } else if (ensure_built(s)) {
            Unpacked back = u;
            back.nstate = (uint32_t)record_size(s->run);
            back.state = rec_before;
            back.fails = fail_before;
            back.t = t;
            restore_record(s, &back, why, sizeof why);
            apply_trajectories(s, s->run, "fmi2SetFMUstate", 1);
            hold_inputs(s, s->run);
            gather(s, s->run);
        }
        free(rec_before);
        ERROR(s, "fmi2SetFMUstate: the state is refused: %s; the current state is kept", msg);
        return 0;
    }
    free(rec_before);
    s->phase = u.phase;
    if (s->phase == STEPPING) s->last_ok = s->t;
    return 1;
}

static StateBlob *blob_of(Instance *s, fmi2FMUstate st) {
    for (StateBlob *b = s->states; b; b = b->next)
        if ((void *)b == st && b->magic == STATE_MAGIC) return b;
    return NULL;
}

static void keep_blob(Instance *s, StateBlob *b) {
    b->next = s->states;
    s->states = b;
}

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    if (!state) {
        ERROR(s, "fmi2GetFMUstate: FMUstate pointer is NULL");
        return fmi2Error;
    }
    StateBlob *old = *state ? blob_of(s, *state) : NULL;
    StateBlob *b = pack_state(s);
    if (!b) {
        ERROR(s, "fmi2GetFMUstate: out of memory");
        return fmi2Error;
    }
    if (old) {                                  /* FMI 2.0: an existing state is overwritten */
        StateBlob **pp = &s->states;
        while (*pp && *pp != old) pp = &(*pp)->next;
        if (*pp) *pp = old->next;
        old->magic = 0;
        free(old);
    }
    keep_blob(s, b);
    *state = b;
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    StateBlob *b = state ? blob_of(s, state) : NULL;
    if (!b) {
        ERROR(s, "fmi2SetFMUstate: the FMUstate is NULL or not one of this instance's (fmi2GetFMUstate / "
              "fmi2DeSerializeFMUstate make them)");
        return fmi2Error;
    }
    return set_state(s, b->bytes, b->size) ? fmi2OK : fmi2Error;
}

EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    if (!state || !*state) return fmi2OK;
    StateBlob **pp = &s->states;
    while (*pp && (void *)*pp != *state) pp = &(*pp)->next;
    if (!*pp) {
        ERROR(s, "fmi2FreeFMUstate: the FMUstate is not one of this instance's");
        return fmi2Error;
    }
    StateBlob *b = *pp;
    *pp = b->next;
    b->magic = 0;
    free(b);
    *state = NULL;
    return fmi2OK;
}

EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    StateBlob *b = state ? blob_of(s, state) : NULL;
    if (!b || !size) {
        ERROR(s, "fmi2SerializedFMUstateSize: %s", !b ? "unknown FMUstate" : "size pointer is NULL");
        return fmi2Error;
    }
    *size = b->size;
    return fmi2OK;
}

EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    StateBlob *b = state ? blob_of(s, state) : NULL;
    if (!b || !bytes || size != b->size) {
        ERROR(s, "fmi2SerializeFMUstate: %s", !b ? "unknown FMUstate" : !bytes ? "buffer is NULL"
                                                                                : "buffer size differs from "
                                                                                  "fmi2SerializedFMUstateSize");
        return fmi2Error;
    }
    memcpy(bytes, b->bytes, size);
    return fmi2OK;
}

EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                          fmi2FMUstate *state) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    if ((!bytes && size) || !state) {
        ERROR(s, "fmi2DeSerializeFMUstate: %s is NULL", !state ? "FMUstate pointer" : "buffer");
        return fmi2Error;
    }
    Unpacked u;
    char why[512];
    if (!unpack_state((const unsigned char *)bytes, size, &u, why, sizeof why)) {
        ERROR(s, "fmi2DeSerializeFMUstate: %s", why);
        return fmi2Error;
    }
    StateBlob *b = malloc(sizeof *b + size);
    if (!b) {
        ERROR(s, "fmi2DeSerializeFMUstate: out of memory");
        return fmi2Error;
    }
    b->magic = STATE_MAGIC;
    b->size = size;
    memcpy(b->bytes, bytes, size);
    keep_blob(s, b);
    *state = b;
    return fmi2OK;
}

/* ------------------------------------------------------------------------------------------------
 * Status inquiries and capabilities this FMU does not offer
 */
static fmi2Status status_inquiry(Instance *s, const void *value, const char *fn) {
    if (!phase_is(s, P_STEP | P_TERM, fn, NULL)) return fmi2Error;
    if (!value) {
        ERROR(s, "%s: value pointer is NULL", fn);
        return fmi2Error;
    }
    return fmi2OK;
}

static fmi2Status not_available(Instance *s, const char *fn, int kind) {
    say(s, fmi2Discard, "%s: status kind %d is not available (this FMU steps synchronously: only "
        "fmi2GetRealStatus(fmi2LastSuccessfulTime) and fmi2GetBooleanStatus(fmi2Terminated) apply)", fn, kind);
    return fmi2Discard;
}

#define UNAVAILABLE_STATUS(name, type)                                                  \
    EXPORT fmi2Status name(fmi2Component c, const fmi2StatusKind kind, type *value) {   \
        Instance *s = instance_of(c);                                                   \
        if (!s) return fmi2Error;                                                       \
        fmi2Status st = status_inquiry(s, value, #name);                                \
        return st != fmi2OK ? st : not_available(s, #name, (int)kind);                  \
    }
UNAVAILABLE_STATUS(fmi2GetStatus, fmi2Status)
UNAVAILABLE_STATUS(fmi2GetIntegerStatus, fmi2Integer)
UNAVAILABLE_STATUS(fmi2GetStringStatus, fmi2String)

EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Real *value) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    fmi2Status st = status_inquiry(s, value, "fmi2GetRealStatus");
    if (st != fmi2OK) return st;
    if (kind != fmi2LastSuccessfulTime) return not_available(s, "fmi2GetRealStatus", (int)kind);
    *value = s->last_ok;
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Boolean *value) {
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    fmi2Status st = status_inquiry(s, value, "fmi2GetBooleanStatus");
    if (st != fmi2OK) return st;
    if (kind != fmi2Terminated) return not_available(s, "fmi2GetBooleanStatus", (int)kind);
    *value = 0;
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                               const fmi2ValueReference z[], size_t nz, const fmi2Real dv[],
                                               fmi2Real dz[]) {
    (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz;
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    ERROR(s, "fmi2GetDirectionalDerivative is not supported by this FMU (providesDirectionalDerivative = false)");
    return fmi2Error;
}

EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                              const fmi2Integer order[], const fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    ERROR(s, "fmi2SetRealInputDerivatives is not supported by this FMU (canInterpolateInputs = false: inputs are "
          "held constant over each communication step)");
    return fmi2Error;
}

EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                               const fmi2Integer order[], fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    Instance *s = instance_of(c);
    if (!s) return fmi2Error;
    ERROR(s, "fmi2GetRealOutputDerivatives is not supported by this FMU (maxOutputDerivativeOrder = 0)");
    return fmi2Error;
}
