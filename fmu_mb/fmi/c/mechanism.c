/*
 * A mechanism as an FMU model (model.h): the compiled arrays of the model options in force from the run
 * source (source.h), stepped by the numba-compiled kernels (fmu_mb.native.library, linked into the FMU).
 *
 *  - Build (fmi2ExitInitializationMode, or a restored state with other parameters): every parameter checked
 *    against its range; the arrays of the options in force; gravity and solver settings; the trajectory
 *    inputs; the start: coordinates and rates from the start values, with init.static the static
 *    equilibrium from them (kernel static_equilibrium, the problem fmu_mb.statics.start_problem), relative
 *    constraints anchored, constraint groups assembled (kernels project, anchor_offsets), as
 *    Simulator.initialize; explicit RK4 refused above its stability limit at the start (kernel
 *    rk4_step_limit).
 *  - Step: the remainder rule, the scheme and the rollback are the kernel's (kernels.stepping.advance_*). No
 *    allocation per step.
 *  - A result is refused (model_problem) when an output is not finite, a coordinate or rate lies beyond the
 *    FMU's limits (a state it could not restore), or a constraint is violated beyond solver.max_violation.
 *  - The state record is the kernels' (kernels.record), checked in full before it is written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "model.h"
#include "source.h"

const int FMU_MB_FEEDTHROUGH = 0;

static const char *const METHOD_NAME[] = FMU_MB_METHOD_NAME;
static const int METHOD_SCHEME[] = FMU_MB_METHOD_SCHEME;
static const double METHOD_GAMMA[] = FMU_MB_METHOD_GAMMA;

/* ------------------------------------------------------------------------------------------------
 * Runs: the records of one option combination
 */
/* The values of record `name` if it has this kind (its count into *count), else NULL and why (the first
 * missing record) into err. */
static void *values_of(fmu_mb_arrays *a, const char *name, int kind, int64_t *count, char *err) {
    fmu_mb_record *r = fmu_mb_arrays_find(a, name);
    if (!r || r->kind != kind) {
        if (!err[0]) snprintf(err, 256, "record %s missing", name);
        return NULL;
    }
    if (count) *count = r->count;
    return r->values;
}

static double *f8(fmu_mb_arrays *a, const char *name, int64_t *count, char *err) {
    return (double *)values_of(a, name, FMU_MB_ARRAYS_FLOAT64, count, err);
}

static int64_t *i8(fmu_mb_arrays *a, const char *name, int64_t *count, char *err) {
    return (int64_t *)values_of(a, name, FMU_MB_ARRAYS_INT64, count, err);
}

static int64_t scalar(fmu_mb_arrays *a, const char *name, char *err) {
    int64_t *v = (int64_t *)values_of(a, name, FMU_MB_ARRAYS_SCALAR, NULL, err);
    return v ? *v : 0;
}

static void free_run(Run *r) {
    if (!r) return;
    fmu_mb_release_block(r->mb);                 /* the structs the kernels keep in the blocks (fmu_mb_kernels.h) */
    fmu_mb_release_block(r->db);
    fmu_mb_release_block(r->dcb);
    free(r->mb);
    free(r->db);
    free(r->x);
    free(r->tau);
    free(r->xdot);
    free(r->tt);
    free(r->tp);
    free(r->slot);
    free(r->unused);
    free(r->dcb);
    free(r->dc_arena);
    free(r->dd);
    free(r->out_seq);
    if (r->arr) fmu_mb_arrays_free(r->arr);
    free(r);
}

/* The run of arrays `a` (taken over: freed with the run); NULL and why if a record is missing or does not fit. */
static Run *load_run(Instance *s, fmu_mb_arrays *a, char *err, size_t elen) {
    Run *r = calloc(1, sizeof *r);
    if (!r) {
        fmu_mb_arrays_free(a);
        snprintf(err, elen, "out of memory");
        return NULL;
    }
    r->arr = a;
    int64_t n = 0, n_table = 0, n_slot = 0, n_block;
    err[0] = '\0';
    r->nv = scalar(a, "model.nv", err);
    r->nc = scalar(a, "model.nc", err);
    r->nx = scalar(a, "model.nx", err);
    r->constrained = r->nc > 0;
    int64_t n_group = 0;
    const int64_t *group = r->nc > 0 ? i8(a, "model.con_group", &n_group, err) : NULL;
    for (int64_t k = 0; group && k < n_group; ++k) r->loops |= group[k] == FMU_MB_GROUP_KINEMATIC;
    r->mb = fmu_mb_arrays_block(a, "model.", &n_block);
    r->db = fmu_mb_arrays_block(a, "data.", &n_block);
    r->solver_opt = f8(a, "data.solver_opt", NULL, err);
    r->con_stats = f8(a, "data.con_stats", NULL, err);
    r->cp_valid = i8(a, "data.cp_valid", NULL, err);
    r->fric_fail = i8(a, "data.fric_fail", NULL, err);
    r->lin_redo = i8(a, "data.lin_redo", NULL, err);
    r->lin_hold = i8(a, "data.lin_hold", NULL, err);
    r->bf = f8(a, "data.bf_val", &r->nbf, err);
    r->traj_time = f8(a, "data.traj_time", NULL, err);
    r->traj_par = f8(a, "data.traj_par", NULL, err);
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
    r->traj_table = i8(a, "fmu.traj_table", &n_table, err);
    r->traj_slot = i8(a, "fmu.traj_slot", &n_slot, err);
    r->seg_kind = i8(a, "model.seg_kind", &r->nseg, err);
    r->seg_time = f8(a, "model.seg_time", NULL, err);
    r->seg_par = f8(a, "model.seg_par", &r->width, err);
    if (r->nseg) r->width /= r->nseg;
    if (!err[0] && (!r->mb || !r->db)) snprintf(err, elen, "no Model/Data records");
    if (!err[0] && FMU_MB_NSTATES && r->nx > FMU_MB_NSTATES)
        snprintf(err, elen, "%lld states, more than the %d the model table declares", (long long)r->nx,
                 FMU_MB_NSTATES);
    if (!err[0] && (n != r->nx || r->nout != s->n_outputs))
        snprintf(err, elen, "sizes do not match the model table (nx %lld, outputs %lld)", (long long)n,
                 (long long)r->nout);
    if (!err[0] && (n_table != r->ntraj || n_slot != r->n_tin || r->n_tin != mechanism_of(s)->n_traj_inputs))
        snprintf(err, elen, "trajectory records of %lld/%lld entries (expected %lld/%d)", (long long)n_table,
                 (long long)n_slot, (long long)r->ntraj, mechanism_of(s)->n_traj_inputs);
    for (int64_t j = 0; j < r->n_tin && !err[0]; ++j)
        if (r->traj_index[j] >= r->ntraj || (r->traj_index[j] >= 0 && (r->traj_slot[j] < 0 ||
                                                                       r->traj_slot[j] >= FMU_MB_TABLE_MAX_PARAMS)))
            snprintf(err, elen, "trajectory input %lld: trajectory %lld, slot %lld out of range", (long long)j,
                     (long long)r->traj_index[j], (long long)r->traj_slot[j]);
    for (int64_t k = 0; k < r->nout && !err[0]; ++k)
        if (r->out_vr[k] < 0 || r->out_vr[k] >= FMU_MB_NVARS ||
            FMU_MB_VARS[r->out_vr[k]].causality != FMU_MB_CAUSALITY_OUTPUT)
            snprintf(err, elen, "output %lld has value reference %lld", (long long)k, (long long)r->out_vr[k]);
    if (err[0]) {
        free_run(r);
        return NULL;
    }
    r->x = calloc((size_t)r->nx + 1, 8);
    r->tau = calloc((size_t)r->nv + 1, 8);
    r->xdot = calloc((size_t)r->nx + 1, 8);
    r->tt = calloc((size_t)(2 * r->nseg + 1), 8);
    r->tp = calloc((size_t)(r->width * r->nseg + 1), 8);
    r->slot = calloc((size_t)FMU_MB_NSTATES + 1, 8);
    r->unused = calloc((size_t)FMU_MB_NSTATES + 1, 8);
    if (r->slot)
        for (int64_t k = 0; k < FMU_MB_NSTATES; ++k)     /* x: q, qd, friction states, then 3 energy counters */
            r->slot[k] = k < r->nx - 3 ? k : k >= FMU_MB_NSTATES - 3 ? r->nx - (FMU_MB_NSTATES - k) : -1;
    if (!r->x || !r->tau || !r->xdot || !r->tt || !r->tp || !r->slot || !r->unused) {
        free_run(r);
        snprintf(err, elen, "out of memory");
        return NULL;
    }
    return r;
}

/* ------------------------------------------------------------------------------------------------
 * The kernels on a run
 */
/* The outputs (and the derivatives, r->xdot) at the current state; the states and derivatives into their
 * variables. */
static int gather(Instance *s, Run *r) {
    int64_t res = 0;
    int32_t st = (r->constrained ? fmu_mb_gather_outputs_constrained : fmu_mb_gather_outputs_tree)(
        r->mb, r->db, r->x, r->nx, s->t, r->tau, r->nv, r->xdot, r->nx, r->out_vr, r->nout, r->out_kind, r->nout,
        r->out_a, r->nout, r->out_b, r->nout, r->out_f, r->nout, 3, s->values, FMU_MB_NVARS, &res);
    const Mechanism *me = mechanism_of(s);
    for (int k = 0; k < FMU_MB_NSTATES; ++k) {
        int64_t i = r->slot[k];
        s->values[me->state_vr[k]] = i >= 0 ? r->x[i] : r->unused[k];
        s->values[me->der_vr[k]] = i >= 0 ? r->xdot[i] : 0.0;
    }
    return st == 0;
}

static void anchor(Run *r, double t) {
    if (!r->nc) return;
    int64_t res;
    if (r->flags[1]) fmu_mb_anchor_offsets(r->mb, r->db, r->x, r->nv, r->x + r->nv, r->nv, t, &res);
    r->cp_valid[0] = 0;
}

/* The drive torques and body forces into the run's buffers, in force from now on (s->held); `from_held`: those
 * in force already (a restored state). */
static void hold_inputs(Instance *s, Run *r, int from_held) {
    int di = 0, fi = 0;
    memset(r->tau, 0, (size_t)r->nv * 8);
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->role != FMU_MB_ROLE_TAU_DRIVE && v->role != FMU_MB_ROLE_BODY_FORCE) continue;
        if (!from_held) s->held[k] = s->values[i];
        if (v->role == FMU_MB_ROLE_TAU_DRIVE) {
            int64_t d = di < r->n_drive ? r->drive_dof[di] : -1;
            ++di;
            if (d >= 0) r->tau[d] = s->held[k];
        } else {
            int64_t f = fi < r->n_force ? r->force_idx[fi] : -1;
            ++fi;
            if (f >= 0 && f < r->nbf) r->bf[f] = s->held[k];
        }
    }
}

/* The output variable of coordinate (rate: `rate`) dof, or "coordinate <dof>" (buf: 300 bytes). */
static const char *coordinate_name(const Run *r, int64_t dof, int rate, char *buf) {
    int64_t kind = rate ? FMU_MB_OUT_QD : FMU_MB_OUT_Q;
    for (int64_t k = 0; k < r->nout; ++k)
        if (r->out_kind[k] == kind && r->out_a[k] == dof) {
            snprintf(buf, 300, "'%s'", FMU_MB_VARS[r->out_vr[k]].name);
            return buf;
        }
    snprintf(buf, 300, "%s %lld", rate ? "rate of coordinate" : "coordinate", (long long)dof);
    return buf;
}

/* ------------------------------------------------------------------------------------------------
 * Life cycle
 */
int model_create(Instance *s) {
    Mechanism *me = calloc(1, sizeof *me);
    size_t n = (size_t)FMU_MB_NVARS + 1;
    if (me) {
        me->violations = calloc(n, sizeof(int));
        me->state_vr = calloc((size_t)FMU_MB_NSTATES + 1, sizeof(int));
        me->der_vr = calloc((size_t)FMU_MB_NSTATES + 1, sizeof(int));
    }
    if (!me || !me->violations || !me->state_vr || !me->der_vr) {
        if (me) {
            free(me->violations);
            free(me->state_vr);
            free(me->der_vr);
        }
        free(me);
        FMU_ERROR(s, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->role == FMU_MB_ROLE_VIOLATION) me->violations[me->n_violations++] = i;
        if (v->role == FMU_MB_ROLE_STATE && v->aux < FMU_MB_NSTATES) me->state_vr[v->aux] = i;
        if (v->role == FMU_MB_ROLE_STATE_DERIVATIVE && v->aux < FMU_MB_NSTATES) me->der_vr[v->aux] = i;
        if (v->role == FMU_MB_ROLE_TRAJECTORY)
            me->n_traj_inputs = v->aux + 1 > me->n_traj_inputs ? v->aux + 1 : me->n_traj_inputs;
    }
    s->model = me;
    if (!source_open(s, &me->source)) {
        free(me->violations);
        free(me->state_vr);
        free(me->der_vr);
        free(me);
        s->model = NULL;
        return 0;
    }
    return 1;
}

void model_free(Instance *s) {
    Mechanism *me = mechanism_of(s);
    if (!me) return;
    free_run(me->run);
    source_close(s, me->source);
    free(me->violations);
    free(me->state_vr);
    free(me->der_vr);
    free(me);
    s->model = NULL;
}

void model_reset(Instance *s) {
    Mechanism *me = mechanism_of(s);
    free_run(me->run);
    me->run = NULL;
}

/* A model file's measured accuracy limits (model_table.h: FMU_MB_ACCURACY, fmu_mb.model.options.Accuracy and
 * ChoiceAccuracy). note_value: the index of the note's option variable, or -1 if the note does not apply to the
 * option values in force. */
static int note_variable(const Instance *s, const fmu_mb_accuracy *a) {
    int v = 0;
    while (v < FMU_MB_NVARS && !(FMU_MB_VARS[v].role == FMU_MB_ROLE_OPTION && FMU_MB_VARS[v].aux == a->option)) ++v;
    if (v == FMU_MB_NVARS) return -1;
    double value = s->values[v];
    return value >= a->lo && value < a->hi ? v : -1;
}

static int note_allows(const fmu_mb_accuracy *a, int method, double h) {
    return h <= a->max_step[method] * (1.0 + 1e-9);
}

/* The option's value as the messages show it: a Value with its unit, a Choice as "code (name)". */
static const char *note_value_text(const Instance *s, const fmu_mb_accuracy *a, int v, char *buf, size_t n) {
    const fmu_mb_var *var = &FMU_MB_VARS[v];
    if (a->choice) snprintf(buf, n, "%s", a->choice);
    else snprintf(buf, n, "%g%s%s", s->values[v], var->unit[0] ? " " : "", var->unit);
    return buf;
}

/* solver.integrator = auto (fmu_mb.model.options.auto_method, the same rule): the model's default method if every
 * note that applies allows it at step h, else the first of FMU_MB_AUTO_ORDER they all allow (logged, with the note
 * that excluded the default); the default where none does (accuracy_warnings then warns). */
static int auto_method(Instance *s, double h) {
    static const int order[] = FMU_MB_AUTO_ORDER;
    int n = (int)(sizeof order / sizeof order[0]);
    for (int c = -1; c < n; ++c) {
        int m = c < 0 ? FMU_MB_DEFAULT_METHOD : order[c], ok = 1, excluded = -1, exv = -1;
        for (int k = 0; k < FMU_MB_NACCURACY && ok; ++k) {
            int v = note_variable(s, &FMU_MB_ACCURACY[k]);
            if (v >= 0 && !note_allows(&FMU_MB_ACCURACY[k], m, h)) ok = 0;
        }
        if (!ok) continue;
        if (m != FMU_MB_DEFAULT_METHOD) {
            for (int k = 0; k < FMU_MB_NACCURACY && excluded < 0; ++k) {
                int v = note_variable(s, &FMU_MB_ACCURACY[k]);
                if (v >= 0 && !note_allows(&FMU_MB_ACCURACY[k], FMU_MB_DEFAULT_METHOD, h)) excluded = k, exv = v;
            }
            char buf[64];
            const fmu_mb_accuracy *a = &FMU_MB_ACCURACY[excluded];
            FMU_DEBUG(s, MSG_AUTO_METHOD, METHOD_NAME[m], h, METHOD_NAME[FMU_MB_DEFAULT_METHOD],
                      FMU_MB_VARS[exv].name, note_value_text(s, a, exv, buf, sizeof buf), a->text);
        }
        return m;
    }
    return FMU_MB_DEFAULT_METHOD;
}

/* Per option, the strictest note that applies; a warning if the internal step is larger than the largest one
 * measured within the bound there for the method in force. */
static void accuracy_warnings(Instance *s, int method, double h) {
    for (int k = 0; k < FMU_MB_NACCURACY; ++k) {
        const fmu_mb_accuracy *a = &FMU_MB_ACCURACY[k];
        int v = note_variable(s, a);
        if (v < 0) continue;
        int strictest = 1;                        /* no other applicable note of this option allows less */
        for (int j = 0; j < FMU_MB_NACCURACY && strictest; ++j) {
            const fmu_mb_accuracy *b = &FMU_MB_ACCURACY[j];
            if (j != k && b->option == a->option && note_variable(s, b) >= 0 &&
                (b->max_step[method] < a->max_step[method] || (b->max_step[method] == a->max_step[method] && j > k)))
                strictest = 0;
        }
        if (!strictest || note_allows(a, method, h)) continue;
        char buf[64];
        fmu_say(s, fmi2Warning, MSG_ACCURACY_NOTE, FMU_MB_VARS[v].name, note_value_text(s, a, v, buf, sizeof buf),
                METHOD_NAME[method], h, a->text);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Build: the parameter values -> a started run (MechanismSlave._build, Simulator.initialize)
 */
static int start(Instance *s, Run *r) {
    int stat = fmu_has_param(FMU_MB_ROLE_STATIC) && fmu_param(s, FMU_MB_ROLE_STATIC, 0) != 0.0;
    memcpy(r->x, r->x0, (size_t)r->nx * 8);
    for (int i = 0, j = 0; i < FMU_MB_NVARS; ++i) {
        int role = FMU_MB_VARS[i].role;
        if (role != FMU_MB_ROLE_Q_START && role != FMU_MB_ROLE_QD_START) continue;
        int64_t d = j < r->n_start ? r->start_dof[j] : -1;
        ++j;
        if (d >= 0) r->x[(role == FMU_MB_ROLE_Q_START ? 0 : r->nv) + d] = s->values[i];
    }
    if (stat) {         /* statics at rest without inputs (kernels.statics) */
        int64_t it = -1;
        double *o = r->static_opts;
        fmu_mb_static_equilibrium(r->mb, r->db, r->x, r->nv, s->t, r->static_free, r->n_free, r->static_rows,
                                  r->n_rows, r->static_zero, r->n_zero, o[2], (int64_t)o[3], o[1], (int64_t)o[0],
                                  &it);
        if (it < 0) {
            double e = r->static_info[0];
            char why[96];
            if (isfinite(e)) snprintf(why, sizeof why, MSG_STATICS_ITERATIONS, (int)o[3], o[0] != 0.0 ? "relative " : "", e);
            else snprintf(why, sizeof why, MSG_STATICS_NOT_FINITE);
            FMU_ERROR(s, MSG_STATICS_FAILED, o[0] != 0.0 ? "constrained " : "", why);
            return 0;
        }
    }
    for (int i = 0; i < r->nx; ++i)
        if (!isfinite(r->x[i])) {
            FMU_ERROR(s, MSG_START_NOT_FINITE);
            return 0;
        }
    r->x[r->nx - 3] = r->x[r->nx - 2] = r->x[r->nx - 1] = 0.0;
    anchor(r, s->t);
    int assemble = fmu_has_param(FMU_MB_ROLE_ASSEMBLE) ? fmu_param(s, FMU_MB_ROLE_ASSEMBLE, 0) != 0.0 : 1;
    if (assemble && r->flags[0]) {
        int64_t it = 0;
        double *x = r->xdot;                /* (scratch) */
        memcpy(x, r->x, (size_t)r->nx * 8);
        fmu_mb_project(r->mb, r->db, x, r->nx, s->t, r->assemble_mask, r->n_groups, &it);
        int finite = 1;
        for (int i = 0; i < r->nx; ++i) finite &= isfinite(x[i]) != 0;
        if (it < 0 || !finite) {
            FMU_ERROR(s, MSG_ASSEMBLY_FAILED, FMU_MB_MODEL_ID, r->con_stats[FMU_MB_STAT_PROJECTION_RESIDUAL]);
            return 0;
        }
        memcpy(r->x, x, (size_t)r->nx * 8);
        r->cp_valid[0] = 0;
        anchor(r, s->t);
    }
    r->fric_fail[0] = 0;
    r->lin_redo[0] = 0;
    r->lin_hold[0] = 0;
    return 1;
}

int model_build(Instance *s) {
    Mechanism *me = mechanism_of(s);
    char what[600] = "", err[600];
    if (!fmu_check_parameters(s)) return 0;
    int64_t token = -1;
    fmu_mb_arrays *a = source_build(s, me->source, &token, what, sizeof what);
    if (!a) return 0;
    Run *r = load_run(s, a, err, sizeof err);
    if (!r) {
        FMU_ERROR(s, MSG_RUN_DAMAGED, what, err);
        return 0;
    }
    r->token = token;
    for (int k = 0; k < 3; ++k) r->gravity[k] = fmu_param(s, FMU_MB_ROLE_GRAVITY, k);
    if (fmu_has_param(FMU_MB_ROLE_ALPHA)) {
        r->solver_opt[FMU_MB_OPT_ALPHA] = fmu_param(s, FMU_MB_ROLE_ALPHA, 0);
        r->solver_opt[FMU_MB_OPT_BETA] = fmu_param(s, FMU_MB_ROLE_BETA, 0);
        r->solver_opt[FMU_MB_OPT_PROJECTION] = fmu_param(s, FMU_MB_ROLE_PROJECTION, 0) != 0.0;
    }
    if (fmu_has_param(FMU_MB_ROLE_FRICTION_ITERATIONS))     /* the bounds of a step's loops (fmu_mb.step_cost) */
        r->solver_opt[FMU_MB_OPT_FRICTION_ITERATIONS] = fmu_param(s, FMU_MB_ROLE_FRICTION_ITERATIONS, 0);
    if (fmu_has_param(FMU_MB_ROLE_PROJECTION_ITERATIONS))
        r->solver_opt[FMU_MB_OPT_PROJECTION_ITERATIONS] = fmu_param(s, FMU_MB_ROLE_PROJECTION_ITERATIONS, 0);
    double h = fmu_param(s, FMU_MB_ROLE_STEP, 0);
    int method = (int)fmu_param(s, FMU_MB_ROLE_INTEGRATOR, 0);
    if (method == FMU_MB_METHOD_AUTO) method = auto_method(s, h);
    if (METHOD_GAMMA[method] != 0.0) r->solver_opt[FMU_MB_OPT_ROS2_GAMMA] = METHOD_GAMMA[method];
    fmu_where where = {FMU_WHERE_CALL, s->call, 0.0, 0.0, ""};
    if (!apply_trajectories(s, r, &where, 1, 0) || !start(s, r)) {
        free_run(r);
        return 0;
    }
    hold_inputs(s, r, 0);
    double lim[3] = {NAN, NAN, NAN};             /* RK4's stability limit at the start (fmu_mb.stability) */
    int64_t nlin = 0;
    if (METHOD_SCHEME[method] == FMU_MB_SCHEME_RK4)
        fmu_mb_rk4_step_limit(r->mb, r->db, r->x, r->nx, s->t, r->tau, r->nv, h, lim, 3, &nlin);
    if (h > lim[0] * (1.0 + 1e-9)) {              /* (NaN when not RK4: never) */
        char advice[32];
        snprintf(advice, sizeof advice, "%.2g", 0.9 * lim[0]);
        FMU_ERROR(s, MSG_RK4_LIMIT, h, lim[1], lim[2], lim[0], strtod(advice, NULL));
        free_run(r);
        return 0;
    }
    accuracy_warnings(s, method, h);
    free_run(me->run);
    me->run = r;
    me->h = h;
    me->method = method;
    me->scheme = METHOD_SCHEME[method];
    me->max_steps = (int64_t)fmu_param(s, FMU_MB_ROLE_MAX_STEPS, 0);
    me->max_violation = fmu_has_param(FMU_MB_ROLE_MAX_VIOLATION) ? fmu_param(s, FMU_MB_ROLE_MAX_VIOLATION, 0)
                                                                 : HUGE_VAL;
    snprintf(me->what, sizeof me->what, "%s", what);
    FMU_DEBUG(s, MSG_BUILT, METHOD_NAME[method], what);
    return 1;
}

int model_evaluate(Instance *s) {
    Run *r = mechanism_of(s)->run;
    if (!r || !gather(s, r)) {
        FMU_ERROR(s, MSG_KERNEL_OUTPUTS_FAILED, s->call);
        return 0;
    }
    return 1;
}

/* The inputs into the run: those in force (`from_held`: a restored state's, tables recomputed) or those as set
 * (Model Exchange: tables recomputed where a trajectory input changed). */
static int inputs_into_run(Instance *s, int from_held) {
    Run *r = mechanism_of(s)->run;
    if (!r) return 1;
    fmu_where where = {FMU_WHERE_CALL, s->call, 0.0, 0.0, ""};
    if (!apply_trajectories(s, r, &where, from_held, from_held)) return 0;
    hold_inputs(s, r, from_held);
    return 1;
}

int model_restore_inputs(Instance *s) { return inputs_into_run(s, 1); }

/* ------------------------------------------------------------------------------------------------
 * Model Exchange: the state slots (r->slot) over the run's state x
 */
void model_get_states(const Instance *s, double *x) {
    const Run *r = mechanism_of(s)->run;
    for (int k = 0; k < FMU_MB_NSTATES; ++k) x[k] = !r ? 0.0 : r->slot[k] >= 0 ? r->x[r->slot[k]] : r->unused[k];
}

int model_set_states(Instance *s, const double *x, char *why, size_t len) {
    Mechanism *me = mechanism_of(s);
    Run *r = me->run;
    char a[32], slot[32], name[300];
    if (!r) {
        snprintf(why, len, MSG_KERNEL_OUTPUTS_FAILED, s->call);
        return 0;
    }
    for (int k = 0; k < FMU_MB_NSTATES; ++k) {    /* (the words only for a refusal: an integrator calls this
                                                       every stage, and formatting cost 30 % of an RK4 step) */
        int64_t i = r->slot[k];
        if (!isfinite(x[k])) {
            snprintf(slot, sizeof slot, "state[%d]", k + 1);
            snprintf(why, len, MSG_ME_STATE_NOT_FINITE, s->call, slot, fmu_repr(x[k], a), s->t);
            return 0;
        }
        double lim = i < r->nv ? FMU_MB_COORDINATE_LIMIT : FMU_MB_RATE_LIMIT;
        if (i >= 0 && i < 2 * r->nv && fabs(x[k]) > lim) {
            snprintf(slot, sizeof slot, "state[%d]", k + 1);
            snprintf(why, len, MSG_ME_STATE_BEYOND, s->call, slot, coordinate_name(r, i % r->nv, i >= r->nv, name),
                     fmu_repr(x[k], a), lim, s->t);
            return 0;
        }
    }
    for (int k = 0; k < FMU_MB_NSTATES; ++k) {
        if (r->slot[k] >= 0) r->x[r->slot[k]] = x[k];
        else r->unused[k] = x[k];               /* kept as the integrator set it (its derivative is 0) */
    }
    return 1;
}

/* The derivatives alone at the current state and inputs, into the run's xdot (Model Exchange's derivative
 * calls: kernels.outputs.derivative_*, the same bits as the outputs' evaluation, without the outputs). */
int model_derivatives(Instance *s) {
    Run *r = mechanism_of(s)->run;
    int64_t res = 0;
    if (!r || (r->constrained ? fmu_mb_derivative_constrained : fmu_mb_derivative_tree)(
                  r->mb, r->db, r->x, r->nx, s->t, r->tau, r->nv, r->xdot, r->nx, &res) != 0) {
        FMU_ERROR(s, MSG_KERNEL_OUTPUTS_FAILED, s->call);
        return 0;
    }
    return 1;
}

int model_get_derivatives(const Instance *s, double *dx) {
    const Run *r = mechanism_of(s)->run;
    int bad = -1;
    for (int k = 0; k < FMU_MB_NSTATES; ++k) {
        dx[k] = r->slot[k] >= 0 ? r->xdot[r->slot[k]] : 0.0;
        if (bad < 0 && !isfinite(dx[k])) bad = k;
    }
    return bad;
}

int model_take_inputs(Instance *s) { return inputs_into_run(s, 0); }

/* ------------------------------------------------------------------------------------------------
 * Directional derivatives: one complex-step evaluation of the pipeline along the seed (kernels.jacobian.
 * directional_derivative) on a complex copy of the run's Data
 */
int model_has_directional_derivatives(void) { return FMU_MB_NSTATES > 0; }

/* The complex-step Data and work vectors of run r (once). */
static int dd_workspace(Run *r) {
    if (r->dd) return 1;
    int64_t n = 0;
    r->dcb = fmu_mb_arrays_complex_block(r->arr, "data.", FMU_MB_DATA_COMPLEX, &r->dc_arena, &n);
    r->dd = calloc((size_t)(2 * (2 * r->nx + r->nv + r->nout) + 2 * r->nx + r->nv + r->nbf + r->nout + 1), 8);
    r->out_seq = calloc((size_t)r->nout + 1, 8);
    if (!r->dcb || !r->dd || !r->out_seq) {
        free(r->dcb);
        free(r->dc_arena);
        free(r->dd);
        free(r->out_seq);
        r->dcb = NULL, r->dc_arena = NULL, r->dd = NULL, r->out_seq = NULL;
        return 0;
    }
    for (int64_t k = 0; k < r->nout; ++k) r->out_seq[k] = k;
    return 1;
}

int model_directional_derivative(Instance *s, const fmi2ValueReference unknown[], size_t nu,
                                 const fmi2ValueReference known[], size_t nk, const double dv[], double dz[],
                                 char *why, size_t len) {
    Run *r = mechanism_of(s)->run;
    char a[32];
    if (!dd_workspace(r)) {
        snprintf(why, len, MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    double *xc = r->dd, *tc = xc + 2 * r->nx, *fc = tc + 2 * r->nv, *yc = fc + 2 * r->nx;
    double *vx = yc + 2 * r->nout, *vtau = vx + r->nx, *vbf = vtau + r->nv, *dxdot = vbf + r->nbf;
    double *dy = dxdot + r->nx;
    memset(vx, 0, (size_t)(2 * r->nx + r->nv + r->nbf + r->nout) * 8);
    for (size_t k = 0; k < nk; ++k) {                /* the seed: states, drive torques, body forces */
        const fmu_mb_var *v = &FMU_MB_VARS[known[k]];
        if (v->role == FMU_MB_ROLE_STATE) {
            if (r->slot[v->aux] >= 0) vx[r->slot[v->aux]] += dv[k];
        } else if (v->role == FMU_MB_ROLE_TAU_DRIVE) {
            int64_t d = v->aux < r->n_drive ? r->drive_dof[v->aux] : -1;
            if (d >= 0) vtau[d] += dv[k];
        } else if (v->role == FMU_MB_ROLE_BODY_FORCE) {
            int64_t f = v->aux < r->n_force ? r->force_idx[v->aux] : -1;
            if (f >= 0 && f < r->nbf) vbf[f] += dv[k];
        } else {
            snprintf(why, len, v->role == FMU_MB_ROLE_TRAJECTORY ? MSG_DD_TRAJECTORY : MSG_DD_KNOWN, s->call, v->name);
            return 0;
        }
    }
    for (size_t k = 0; k < nu; ++k) {
        int role = FMU_MB_VARS[unknown[k]].role;
        if (role != FMU_MB_ROLE_STATE && role != FMU_MB_ROLE_STATE_DERIVATIVE && role != FMU_MB_ROLE_OUTPUT &&
            role != FMU_MB_ROLE_VIOLATION) {
            snprintf(why, len, MSG_DD_UNKNOWN, s->call, FMU_MB_VARS[unknown[k]].name);
            return 0;
        }
    }
    int64_t res = 0;
    int32_t st = fmu_mb_directional_derivative(
        r->mb, r->db, r->dcb, r->x, r->nx, s->t, 0.0, r->tau, r->nv, vx, r->nx, vtau, r->nv, vbf, r->nbf, r->out_seq,
        r->nout, r->out_kind, r->nout, r->out_a, r->nout, r->out_b, r->nout, r->out_f, r->nout, 3, xc, r->nx, tc,
        r->nv, fc, r->nx, yc, r->nout, dxdot, r->nx, dy, r->nout, &res);
    if (st != 0) {
        snprintf(why, len, MSG_KERNEL_OUTPUTS_FAILED, s->call);
        return 0;
    }
    for (size_t k = 0; k < nu; ++k) {
        const fmu_mb_var *v = &FMU_MB_VARS[unknown[k]];
        double z = 0.0;
        if (v->role == FMU_MB_ROLE_STATE) {          /* ∂state/∂known: the seed of that state */
            for (size_t j = 0; j < nk; ++j)
                if (FMU_MB_VARS[known[j]].role == FMU_MB_ROLE_STATE && FMU_MB_VARS[known[j]].aux == v->aux) z += dv[j];
        } else if (v->role == FMU_MB_ROLE_STATE_DERIVATIVE) {
            z = r->slot[v->aux] >= 0 ? dxdot[r->slot[v->aux]] : 0.0;
        } else {
            for (int64_t j = 0; j < r->nout; ++j)
                if (r->out_vr[j] == (int64_t)unknown[k]) z = dy[j];
        }
        if (!isfinite(z)) {
            snprintf(why, len, MSG_DD_NOT_FINITE, s->call, s->t, v->name, fmu_repr(z, a));
            return 0;
        }
        dz[k] = z;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * Output derivatives (co-simulation: fmi2GetRealOutputDerivatives, fmi3GetOutputDerivatives): dy/dt = ∂y/∂x·ẋ +
 * ∂y/∂t at the current state with the inputs in force held (the FMU cannot know their rates), by the same
 * kernel entry: one complex-step evaluation gives ẋ (its real part), a second one along (ẋ, t) the exact
 * derivative (the programmed trajectories are the only explicit time dependence: kernels.trajectory)
 */
int model_has_output_derivatives(void) { return 1; }

int model_output_derivatives(Instance *s, const fmi2ValueReference vr[], size_t n, double dz[], char *why,
                             size_t len) {
    Run *r = mechanism_of(s)->run;
    char a[32];
    if (!r || !dd_workspace(r)) {
        snprintf(why, len, !r ? MSG_KERNEL_OUTPUTS_FAILED : MSG_OUT_OF_MEMORY, s->call);
        return 0;
    }
    double *xc = r->dd, *tc = xc + 2 * r->nx, *fc = tc + 2 * r->nv, *yc = fc + 2 * r->nx;
    double *vx = yc + 2 * r->nout, *vtau = vx + r->nx, *vbf = vtau + r->nv, *dxdot = vbf + r->nbf;
    double *dy = dxdot + r->nx;
    int64_t res = 0;
    int32_t st = 0;
    memset(vx, 0, (size_t)(2 * r->nx + r->nv + r->nbf + r->nout) * 8);
    for (int pass = 0; pass < 2 && st == 0; ++pass) {   /* ẋ, then the derivative along it */
        if (pass == 1)
            for (int64_t k = 0; k < r->nx; ++k) vx[k] = fc[2 * k];
        st = fmu_mb_directional_derivative(
            r->mb, r->db, r->dcb, r->x, r->nx, s->t, (double)pass, r->tau, r->nv, vx, r->nx, vtau, r->nv, vbf,
            r->nbf, r->out_seq, r->nout, r->out_kind, r->nout, r->out_a, r->nout, r->out_b, r->nout, r->out_f,
            r->nout, 3, xc, r->nx, tc, r->nv, fc, r->nx, yc, r->nout, dxdot, r->nx, dy, r->nout, &res);
    }
    if (st != 0) {
        snprintf(why, len, MSG_KERNEL_OUTPUTS_FAILED, s->call);
        return 0;
    }
    for (size_t k = 0; k < n; ++k) {
        double z = NAN;
        for (int64_t j = 0; j < r->nout; ++j)
            if (r->out_vr[j] == (int64_t)vr[k]) z = dy[j];
        if (!isfinite(z)) {
            snprintf(why, len, MSG_OD_NOT_FINITE, s->call, s->t, FMU_MB_VARS[vr[k]].name, fmu_repr(z, a));
            return 0;
        }
        dz[k] = z;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * Steps
 */
/* After a failed step from t: the constraint bound broken already at its start with the inputs it applied
 * (a target moved out of reach), as the likely cause (into msg), or 0. Outputs are kept as they were. */
static int violation_at_start(Instance *s, double t, char *msg, size_t len) {
    Mechanism *me = mechanism_of(s);
    if (!me->n_violations) return 0;
    double *kept = malloc((size_t)s->n_outputs * 8 + 8);
    if (!kept) return 0;
    for (int k = 0; k < s->n_outputs; ++k) kept[k] = s->values[s->outputs[k]];
    fmu_where where = {FMU_WHERE_TIME, NULL, t, 0.0, ""};
    int found = gather(s, me->run) && model_problem(s, &where, msg, len);
    for (int k = 0; k < s->n_outputs; ++k) s->values[s->outputs[k]] = kept[k];
    free(kept);
    return found;
}

int model_step(Instance *s, double t, double dt) {
    Mechanism *me = mechanism_of(s);
    Run *r = me->run;
    char why[200] = "", hint[4300];
    double nsteps = ceil(dt / me->h - 1e-9);
    if (nsteps > (double)me->max_steps) {
        FMU_ERROR(s, MSG_STEP_TOO_MANY, s->call, dt, nsteps, me->h, (double)me->max_steps);
        return 0;
    }
    fmu_where where = {FMU_WHERE_AT, s->call, t, 0.0, ""};
    if (!apply_trajectories(s, r, &where, 0, 0)) return 0;
    hold_inputs(s, r, 0);
    r->fails_before = r->fric_fail[0];
    int64_t ok = 0, res = 0;
    int32_t st = (r->constrained ? fmu_mb_advance_constrained : fmu_mb_advance_tree)(
        r->mb, r->db, r->x, r->nx, t, r->tau, r->nv, me->h, dt, me->scheme, &ok);
    if (st == 0 && ok) return 1;
    if (st != 0) fmu_mb_rollback(r->mb, r->db, r->x, r->nx, &res);
    if (r->nc && r->con_stats[FMU_MB_STAT_PIVOT_RATIO] == 0.0)
        snprintf(why, sizeof why, MSG_SINGULAR_CONSTRAINTS, (int)r->con_stats[FMU_MB_STAT_RANK]);
    char cause[4096];
    int known = violation_at_start(s, t, cause, sizeof cause);
    if (known)
        snprintf(hint, sizeof hint, MSG_HINT_CAUSE, cause);
    else if (me->scheme == FMU_MB_SCHEME_RK4)
        snprintf(hint, sizeof hint, MSG_HINT_RK4, me->h);
    else
        snprintf(hint, sizeof hint, MSG_HINT_ROSENBROCK, METHOD_NAME[me->method], me->h,
                 METHOD_GAMMA[me->method] != 0.0 || me->scheme == FMU_MB_SCHEME_ROS34PW2 ? MSG_HINT_DAMPED_ROS2 : "");
    if (r->loops && !known) {                     /* (appended: a dead point is no matter of step or method) */
        size_t used = strlen(hint);
        snprintf(hint + used, sizeof hint - used, "%s", MSG_HINT_LOOPS);
    }
    FMU_ERROR(s, MSG_STEP_NOT_FINITE, fmu_where_text(&where), t, dt, why, t, hint);
    return 0;
}

fmi2Status model_step_accepted(Instance *s, double t) {
    Run *r = mechanism_of(s)->run;
    if (r->fric_fail[0] <= r->fails_before) return fmi2OK;
    fmu_say(s, fmi2Warning, MSG_FRICTION_NOT_CONVERGED, s->call, t, (int)(r->fric_fail[0] - r->fails_before));
    return fmi2Warning;
}

void model_undo_step(Instance *s) {
    Run *r = mechanism_of(s)->run;
    int64_t res;
    fmu_mb_rollback(r->mb, r->db, r->x, r->nx, &res);
}

/* Why the current result may not be answered with fmi2OK: a non-finite output, a coordinate or rate beyond
 * the FMU's limits, a constraint violated beyond solver.max_violation. */
int model_problem(Instance *s, fmu_where *where, char *msg, size_t len) {
    Mechanism *me = mechanism_of(s);
    Run *r = me->run;
    int bad = -1, nbad = 0;
    char b1[32], name[300];
    for (int k = 0; k < s->n_outputs; ++k)
        if (!isfinite(s->values[s->outputs[k]])) {
            if (bad < 0) bad = s->outputs[k];
            ++nbad;
        }
    if (bad >= 0) {
        snprintf(msg, len, MSG_OUTPUT_NOT_FINITE, fmu_where_text(where), FMU_MB_VARS[bad].name, fmu_repr(s->values[bad], b1),
                 nbad);
        return 1;
    }
    for (int64_t i = 0; i < 2 * r->nv; ++i) {
        double lim = i < r->nv ? FMU_MB_COORDINATE_LIMIT : FMU_MB_RATE_LIMIT;
        if (fabs(r->x[i]) > lim) {
            snprintf(msg, len, MSG_STATE_BEYOND_LIMIT, fmu_where_text(where), coordinate_name(r, i % r->nv, i >= r->nv, name),
                     fmu_repr(r->x[i], b1), lim, r->loops ? MSG_BEYOND_LOOPS : MSG_BEYOND_INPUTS);
            return 1;
        }
    }
    int worst = -1;
    for (int k = 0; k < me->n_violations; ++k) {
        int i = me->violations[k];
        if (worst < 0 || s->values[i] > s->values[worst]) worst = i;
    }
    if (worst < 0 || s->values[worst] <= me->max_violation) return 0;
    const fmu_mb_var *v = &FMU_MB_VARS[worst];
    char group[64] = "", type[64] = "", point[128] = "", amount[200];
    if (v->extra) sscanf(v->extra, "%63[^|]|%63[^|]|%127[^\n]", group, type, point);
    snprintf(name, sizeof name, "%s", v->name);
    char *dot = strrchr(name, '.');
    if (dot) *dot = '\0';
    snprintf(amount, sizeof amount, "%.4g%s%s%s", s->values[worst], v->unit && *v->unit ? " " : "",
             v->unit ? v->unit : "", strcmp(type, "PointOnEllipse") == 0 ? MSG_ELLIPSE_DISTANCE : "");
    if (strcmp(group, "programmed") == 0) {
        char who[400];
        if (point[0]) snprintf(who, sizeof who, MSG_POINT_AWAY, point, amount);
        else snprintf(who, sizeof who, MSG_VIOLATED_BY, amount);
        snprintf(msg, len, MSG_PROGRAMMED_MOTION_LOST, fmu_where_text(where), name, who, s->t, me->max_violation);
    } else {
        snprintf(msg, len, MSG_CONSTRAINT_VIOLATED, fmu_where_text(where), name, group, amount, s->t, me->max_violation);
    }
    return 1;
}

/* ------------------------------------------------------------------------------------------------
 * The state record (kernels.record)
 */
int64_t model_record_size(const Instance *s) {
    const Run *r = s->ready ? mechanism_of(s)->run : NULL;
    return r ? r->nx + 2 * r->nc + r->nv + FMU_MB_RECORD_EXTRA : 0;
}

void model_write_record(const Instance *s, double *record, int64_t *counter) {
    Run *r = mechanism_of(s)->run;
    int64_t res;
    fmu_mb_write_record(r->mb, r->db, r->x, r->nx, record, model_record_size(s), &res);
    *counter = r->fric_fail[0];
}

int model_read_record(Instance *s, const double *record, int64_t n, int64_t counter, char *why, size_t len) {
    Run *r = mechanism_of(s)->run;
    int64_t code = 0, want = model_record_size(s);
    double info[2] = {0.0, 0.0};
    char a[32], name[300];
    if (n != want) {
        snprintf(why, len, MSG_RECORD_SIZE, (int)n, (int)want);
        return 0;
    }
    fmu_mb_read_record(r->mb, r->db, (double *)record, n, r->x, r->nx, FMU_MB_COORDINATE_LIMIT, FMU_MB_RATE_LIMIT,
                       info, 2, &code);
    switch (code) {
    case FMU_MB_RECORD_OK:
        r->fric_fail[0] = counter;
        return 1;
    case FMU_MB_RECORD_NOT_FINITE:
        snprintf(why, len, MSG_RECORD_NOT_FINITE, (int)info[0], fmu_repr(info[1], a));
        break;
    case FMU_MB_RECORD_COORDINATE:
    case FMU_MB_RECORD_RATE:
        snprintf(why, len, MSG_RECORD_BEYOND_LIMIT,
                 coordinate_name(r, (int64_t)info[0], code == FMU_MB_RECORD_RATE, name), fmu_repr(info[1], a),
                 code == FMU_MB_RECORD_RATE ? FMU_MB_RATE_LIMIT : FMU_MB_COORDINATE_LIMIT);
        break;
    case FMU_MB_RECORD_COUNT:
        snprintf(why, len, MSG_RECORD_COUNT, fmu_repr(info[1], a));
        break;
    case FMU_MB_RECORD_FALLBACK:
        snprintf(why, len, MSG_RECORD_FALLBACK, fmu_repr(info[1], a));
        break;
    case FMU_MB_RECORD_PARTITION:
        snprintf(why, len, MSG_RECORD_PARTITION);
        break;
    default:
        snprintf(why, len, MSG_RECORD_RANK, fmu_repr(info[1], a));
    }
    return 0;
}
