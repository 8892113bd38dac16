/* The data of a mechanism as an FMU model (mechanism.c, with trajectories.c): one run of compiled arrays from
 * the FMU's run source (source.h) stepped by the numba-compiled kernels (fmu_mb.native.library). */
#ifndef FMU_MB_RUN_H
#define FMU_MB_RUN_H
#include "arrays.h"
#include "core.h"
#include "fmu_mb_kernels.h"

/* One started run: its arrays (a fresh Model and Data) and the views the core uses. */
typedef struct {
    fmu_mb_arrays *arr;
    int64_t *mb, *db;                     /* address blocks of Model and Data (the kernels' arguments) */
    int64_t nv, nc, nx, nbf, nout;
    int constrained;
    int loops;                            /* closed loops: rows of the kinematic group (codes.Group) */
    double *x0, *static_opts, *static_info, *out_f, *gravity, *solver_opt, *con_stats, *bf;
    int64_t *start_dof, *drive_dof, *force_idx, *out_vr, *out_kind, *out_a, *out_b, *assemble_mask, *flags;
    int64_t *fric_fail, *lin_redo, *lin_hold, *cp_valid;
    int64_t n_start, n_drive, n_force, n_groups, n_free, n_rows, n_zero;
    int64_t *static_free, *static_rows, *static_zero;
    /* trajectory inputs (fmu_mb.fmi.variants.trajectory_records): tables = base + slopes * (value - p0), or,
     * for a trajectory k with traj_table[k] >= 0, the run source's table function traj_table[k] of its inputs
     * (each input j at position traj_slot[j] of the function's parameter vector) */
    int64_t n_tin, nseg, width, ntraj;
    int64_t *traj_index, *traj_first, *traj_count, *seg_kind, *traj_table, *traj_slot;
    double *traj_p0, *traj_jt, *traj_jp, *seg_time, *seg_par, *traj_time, *traj_par, *tt, *tp;
    /* run buffers (allocated once per run) */
    double *x, *tau, *xdot;
    int64_t fails_before;                 /* friction failures at the start of the current step */
    int64_t *slot;                        /* Model Exchange: per state slot its index in x, or -1 (not a state of
                                             this option combination; the energy counters take the last 3 slots) */
    double *unused;                       /* the values a host set into the slots of no state (derivative 0) */
    /* directional derivatives (allocated at the first call): the complex-step Data (block over one arena) and
     * the work vectors of the kernel entry directional_derivative */
    int64_t *dcb;
    void *dc_arena;
    double *dd;                           /* xc, tc, fc, yc (complex), vx, vtau, vbf, dxdot, dy */
    int64_t *out_seq;                     /* 0 .. nout-1: the entry's output numbers */
    int64_t token;                        /* the run source's name of the build (source_table) */
} Run;

typedef struct {
    Run *run;
    void *source;                         /* the run source's per-instance data (source.h) */
    double h;                             /* solver.step_size: the internal step, s */
    int scheme;                           /* codes.Scheme of solver.integrator */
    int method;                           /* solver.integrator */
    int64_t max_steps;
    double max_violation;
    int n_traj_inputs;
    int *violations, n_violations;        /* value references of the violation outputs */
    int *state_vr, *der_vr;               /* per state slot: the value references of state[k] and der(state[k]) */
    char what[600];                       /* the option combination in force (for messages) */
} Mechanism;

static inline Mechanism *mechanism_of(const Instance *s) { return (Mechanism *)s->model; }

/* trajectories.c: the trajectory inputs as set (or, `from_held`, those in force: s->held) into the run's segment
 * tables, checked; 0: refused and logged (`where` names the call), the values in force shown again. `force`:
 * recompute even if no input changed. */
int apply_trajectories(Instance *s, Run *r, fmu_where *where, int force, int from_held);
#endif
