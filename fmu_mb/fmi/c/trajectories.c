/* Programmed-trajectory inputs of a mechanism: the inputs `<trajectory>.<parameter>` into the run's segment
 * tables. A table is recomputed from the Model's as base + slope * (value - p0) where the build stored
 * slopes (affine paths), or by the run source's table function (source_table: a compiled TableTrajectory in
 * a native FMU, the model file's Python in a Python FMU); then checked as Trajectory.validate checks (ranges,
 * segments in time order, moves of positive duration; the words of fmu_mb.trajectories.paths) and written
 * only if every check passes. Otherwise fmi2Error names the inputs and why, and the values in force are shown
 * again. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "run.h"
#include "source.h"

/* The trajectory inputs applied are in force from now on (s->held); `back`: the other way, the values in
 * force shown again. */
static void hold_trajectory_inputs(Instance *s, int back) {
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        if (FMU_MB_VARS[i].role != FMU_MB_ROLE_TRAJECTORY) continue;
        if (back) s->values[i] = s->held[k];
        else s->held[k] = s->values[i];
    }
}

/* The name of trajectory k: its inputs' names up to the last dot. */
static const char *trajectory_name(const Run *r, int64_t k, char *buf, size_t len) {
    snprintf(buf, len, "%lld", (long long)k);
    for (int i = 0; i < FMU_MB_NVARS; ++i) {
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        const char *dot = strrchr(v->name, '.');
        if (v->role == FMU_MB_ROLE_TRAJECTORY && v->aux < r->n_tin && r->traj_index[v->aux] == k && dot) {
            snprintf(buf, len, "%.*s", (int)(dot - v->name), v->name);
            break;
        }
    }
    return buf;
}

/* Rows of trajectory k from the run source's table function of its inputs, into r->tt / r->tp. */
static int table_rows(Instance *s, Run *r, int64_t k, int from_held, char *why, size_t len) {
    double v[FMU_MB_TABLE_MAX_PARAMS] = {0};
    int64_t nv = 0;
    for (int m = 0; m < s->n_inputs; ++m) {
        const fmu_mb_var *var = &FMU_MB_VARS[s->inputs[m]];
        if (var->role == FMU_MB_ROLE_TRAJECTORY && var->aux < r->n_tin && r->traj_index[var->aux] == k) {
            int64_t slot = r->traj_slot[var->aux];
            v[slot] = from_held ? s->held[m] : s->values[s->inputs[m]];
            if (slot + 1 > nv) nv = slot + 1;
        }
    }
    int64_t f = r->traj_first[k], n = r->traj_count[k];
    memset(r->tt + 2 * f, 0, (size_t)(2 * n) * 8);
    memset(r->tp + r->width * f, 0, (size_t)(r->width * n) * 8);
    char reason[512] = "", name[200];
    if (source_table(s, mechanism_of(s)->source, r->token, r->traj_table[k], v, nv, r->tt + 2 * f,
                     r->tp + r->width * f, n, r->width, reason, sizeof reason))
        return 1;
    snprintf(why, len, MSG_TRAJECTORY_REFUSED, trajectory_name(r, k, name, sizeof name), reason);
    return 0;
}

int apply_trajectories(Instance *s, Run *r, fmu_where *where, int force, int from_held) {
    int changed = force || from_held;
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        if (FMU_MB_VARS[i].role == FMU_MB_ROLE_TRAJECTORY && s->values[i] != s->held[k]) changed = 1;
    }
    if (!changed) return 1;
    if (!r->nseg) {
        if (!from_held) hold_trajectory_inputs(s, 0);
        return 1;
    }
    memcpy(r->tt, r->seg_time, (size_t)(2 * r->nseg) * 8);
    memcpy(r->tp, r->seg_par, (size_t)(r->width * r->nseg) * 8);
    char why[800] = "", names[1200] = "", unit[64], name[200];
    int bad_traj = -1, bad_input = -1;                  /* the trajectory refused; the input out of range */
    for (int k = 0; k < s->n_inputs; ++k) {
        int i = s->inputs[k];
        const fmu_mb_var *v = &FMU_MB_VARS[i];
        if (v->role != FMU_MB_ROLE_TRAJECTORY) continue;
        int j = v->aux;
        if (j >= r->n_tin || r->traj_index[j] < 0) continue;          /* absent here, or fixed (refused earlier) */
        double x = from_held ? s->held[k] : s->values[i], dp = x - r->traj_p0[j];
        const char *dot = strrchr(v->name, '.');
        if (!why[0] && v->has_range && !(v->min <= x && x <= v->max)) {
            char got[32];
            snprintf(why, sizeof why, MSG_TRAJECTORY_RANGE, (int)(dot ? dot - v->name : 0), v->name,
                     dot ? dot + 1 : v->name, v->min, v->max, fmu_unit_suffix(v, unit), fmu_repr(x, got));
            bad_traj = (int)r->traj_index[j];
            bad_input = i;
        }
        if (dp == 0.0 || r->traj_table[r->traj_index[j]] >= 0) continue;
        for (int64_t k2 = 0; k2 < 2 * r->nseg; ++k2) r->tt[k2] += r->traj_jt[(int64_t)j * 2 * r->nseg + k2] * dp;
        for (int64_t k2 = 0; k2 < r->width * r->nseg; ++k2)
            r->tp[k2] += r->traj_jp[(int64_t)j * r->width * r->nseg + k2] * dp;
    }
    for (int64_t k = 0; k < r->ntraj && !why[0]; ++k) {
        if (r->traj_table[k] >= 0 && !table_rows(s, r, k, from_held, why, sizeof why)) bad_traj = (int)k;
        int64_t f = r->traj_first[k], n = r->traj_count[k];
        for (int64_t g = f; g < f + n && !why[0]; ++g) {
            if (g > f && r->tt[2 * g] < r->tt[2 * (g - 1)])
                snprintf(why, sizeof why, MSG_TRAJECTORY_ORDER, trajectory_name(r, k, name, sizeof name));
            else if (r->seg_kind[g] != FMU_MB_SEGMENT_LINEAR && !(r->tt[2 * g + 1] > r->tt[2 * g]))
                snprintf(why, sizeof why, MSG_TRAJECTORY_DURATION, trajectory_name(r, k, name, sizeof name));
            if (why[0]) bad_traj = (int)k;
        }
    }
    if (why[0]) {
        for (int k = 0; k < s->n_inputs; ++k) {
            int i = s->inputs[k];
            const fmu_mb_var *v = &FMU_MB_VARS[i];
            if (v->role != FMU_MB_ROLE_TRAJECTORY || v->aux >= r->n_tin || r->traj_index[v->aux] != bad_traj) continue;
            if (!force && !from_held && s->values[i] == s->held[k]) continue;        /* the changed ones */
            if (from_held && bad_input >= 0 && i != bad_input) continue;            /* (a restore: the culprit) */
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", v->name);
        }
        FMU_ERROR(s, MSG_TRAJECTORY_INPUT_REFUSED, fmu_where_text(where), names, why);
        if (!from_held) hold_trajectory_inputs(s, 1);
        return 0;
    }
    memcpy(r->traj_time, r->tt, (size_t)(2 * r->nseg) * 8);
    memcpy(r->traj_par, r->tp, (size_t)(r->width * r->nseg) * 8);
    if (!from_held) hold_trajectory_inputs(s, 0);
    return 1;
}
