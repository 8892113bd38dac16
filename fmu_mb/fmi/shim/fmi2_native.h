/* The model table of a native fmu_mb FMU (generated per FMU by fmu_mb.fmi.native_fmu into fmu_mb_model.c)
 * and the roles its variables play in fmi2_native.c. */
#ifndef FMU_MB_FMI2_NATIVE_H
#define FMU_MB_FMI2_NATIVE_H
#include <stddef.h>
#include <stdint.h>

enum fmu_mb_type { T_REAL = 0, T_INTEGER = 1, T_BOOLEAN = 2 };
enum fmu_mb_causality { C_PARAMETER = 0, C_INPUT = 1, C_OUTPUT = 2 };
enum fmu_mb_role {
    R_OPTION = 1, R_STEP = 2, R_INTEGRATOR = 3, R_MAX_STEPS = 4, R_GRAVITY = 5, R_STATIC = 6, R_ALPHA = 7,
    R_BETA = 8, R_PROJECTION = 9, R_MAX_VIOLATION = 10, R_ASSEMBLE = 11, R_Q_START = 12, R_QD_START = 13,
    R_TAU_DRIVE = 20, R_BODY_FORCE = 21, R_TRAJ = 22, R_OUTPUT = 30, R_VIOLATION = 31
};

typedef struct {
    const char *name;
    int type;            /* enum fmu_mb_type */
    int causality;       /* enum fmu_mb_causality */
    int role;            /* enum fmu_mb_role */
    int aux;             /* option / start value / drive / force / trajectory / output index; gravity axis */
    double start;
    double min, max;
    int has_range;
    const char *unit;
    const char *extra;   /* violation outputs: "group|constraint type|point name" */
} fmu_mb_var;

extern const char FMU_MB_MODEL_ID[];
extern const char FMU_MB_GUID[];
extern const char FMU_MB_INTERFACE_DIGEST[];     /* 64 hex digits: identifies FMU states */
extern const int FMU_MB_NVARS;
extern const fmu_mb_var FMU_MB_VARS[];
extern const int FMU_MB_NOPTIONS;
extern const int FMU_MB_OPTION_FIXED[];          /* per option: 0 Choice/Flag (all values carried), 1 only the
                                                   built value, 2 the values built (in the variant rows), 3 any
                                                   value (slope records, fmu_mb.fmi.native_values) */
extern const int FMU_MB_NVARIANTS;
extern const double FMU_MB_VARIANT_OPTIONS[];    /* NVARIANTS x NOPTIONS option values */
extern const char *const FMU_MB_VARIANT_TEXT[];
extern const int FMU_MB_VARIANT_FILE[];          /* per combination: its variant of resources/variants.arrays */
extern const int FMU_MB_NMETHODS;
extern const int FMU_MB_METHOD_KERNEL[];         /* 0 rk4, 1 ros2, 2 ros3 */
extern const double FMU_MB_METHOD_GAMMA[];
extern const char *const FMU_MB_METHOD_NAME[];
/* solver_opt / con_stats slots: ALPHA, BETA, PROJECTION, ROS2_GAMMA, PIVOT_RATIO_CHOSEN, PIVOT_RATIO, RANK,
 * PROJECTION_RESIDUAL, PROJECTION_TOL (fmu_mb.codes) */
extern const int FMU_MB_SLOT[];
/* Trajectory classes whose segment tables are a compiled function of their parameters (TableTrajectory,
 * fmu_mb.native.trajectory_code): numba's calling convention (status; *code 0 or a check number) */
typedef int32_t (*fmu_mb_table_fn)(int64_t *code, void **exc, const double *v, int64_t nv, double *time,
                                   double *par, int64_t nseg, int64_t width);
#define FMU_MB_TABLE_MAX_PARAMS 64                /* fmu_mb.native.trajectory_code.MAX_PARAMS */
extern const int FMU_MB_NTABLES;
extern const fmu_mb_table_fn FMU_MB_TABLE_FN[];
extern const int FMU_MB_TABLE_NPARAMS[];
extern const int FMU_MB_TABLE_NCHECKS[];
extern const char *const *const FMU_MB_TABLE_CHECKS[];  /* per table: its check messages (codes 1, 2, ...) */
#endif
