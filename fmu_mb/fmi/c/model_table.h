/* The model table of one FMU: its variables and facts, generated per FMU by fmu_mb.fmi.model_table into
 * model_table.c from the interface table (every value reference's name, type, causality, role, range and
 * start), and what its run source needs (the option combinations a native FMU carries, its compiled
 * trajectory table functions). */
#ifndef FMU_MB_MODEL_TABLE_H
#define FMU_MB_MODEL_TABLE_H
#include <stddef.h>
#include <stdint.h>
#include "fmu_mb_constants.h"

typedef struct {
    const char *name;
    int type;            /* FMU_MB_TYPE_* */
    int causality;       /* FMU_MB_CAUSALITY_* */
    int role;            /* FMU_MB_ROLE_* */
    int aux;             /* index among the variables of its role (gravity: the axis; PD controller: channel) */
    double start;
    double min, max;
    int has_range;
    int fixed;           /* a trajectory input this FMU cannot change (native: a Python-checked trajectory) */
    const char *unit;
    const char *extra;   /* a Choice option: its codes as "0 = a, 1 = b"; a violation output:
                            "group|constraint type|point name" */
} fmu_mb_var;

extern const char FMU_MB_MODEL_ID[];
extern const char FMU_MB_GUID[];
extern const char FMU_MB_INTERFACE_DIGEST[];     /* 64 hex digits: identifies FMU states */
extern const char FMU_MB_RESOURCE_MARKER[];      /* a file every resources folder of this FMU holds */
extern const int FMU_MB_NVARS;
extern const fmu_mb_var FMU_MB_VARS[];
extern const unsigned char FMU_MB_ENUMERATED[];   /* per variable: a named option (an FMI 3.0 Enumeration) */
/* FMI 3.0 (fmu_mb.fmi.arrays3): per value reference the number of elements of the FMI 3.0 variable there (1: a
 * scalar; n: an array; 0: an element of an array headed elsewhere, no FMI 3.0 variable) and the start of its
 * elements' value references (row-major) in FMU_MB_FMI3_ELEMENTS */
extern const int FMU_MB_FMI3_SIZE[];
extern const int FMU_MB_FMI3_FIRST[];
extern const unsigned int FMU_MB_FMI3_ELEMENTS[];
extern const char *const FMU_MB_FMI3_NAME[];      /* an array's name (NULL: a scalar, its name is FMU_MB_VARS') */
extern const int FMU_MB_NSTATES;                 /* continuous states declared (Model Exchange); 0: none */
extern const int FMU_MB_NOPTIONS;
extern const int FMU_MB_OPTION_VALUES[];         /* per option: FMU_MB_OPTION_* (which values it takes) */
/* native FMUs: the option combinations carried (variants.c) */
extern const int FMU_MB_NVARIANTS;
extern const double FMU_MB_VARIANT_OPTIONS[];    /* NVARIANTS x NOPTIONS option values */
extern const char *const FMU_MB_VARIANT_TEXT[];
extern const int FMU_MB_VARIANT_FILE[];          /* per combination: its variant of resources/variants.arrays */
/* native FMUs: trajectory classes whose segment tables are a compiled function of their parameters
 * (TableTrajectory, fmu_mb.native.trajectory_code), numba's calling convention (status; *code 0 or the
 * number of the check that failed) */
typedef int32_t (*fmu_mb_table_fn)(int64_t *code, void **exc, const double *v, int64_t nv, double *time,
                                   double *par, int64_t nseg, int64_t width);
extern const int FMU_MB_NTABLES;
extern const fmu_mb_table_fn FMU_MB_TABLE_FN[];
extern const int FMU_MB_TABLE_NPARAMS[];
extern const int FMU_MB_TABLE_NCHECKS[];
extern const char *const *const FMU_MB_TABLE_CHECKS[];  /* per table: its check messages (codes 1, 2, ...) */
/* measured accuracy limits of options (a model file's ACCURACY): where option `option` (index among the option
 * parameters) has a value in [lo, hi) (a Value below a threshold, a Choice's code), only internal steps up to
 * max_step[method] (0: none) were measured within the model's bound; solver.integrator = auto avoids the methods
 * the notes exclude, and the core warns at initialization where the method in force is outside, quoting `text`
 * (fmu_mb.fmi.interface.AccuracyNote) */
typedef struct {
    int option;
    double lo, hi;
    double max_step[FMU_MB_NMETHODS];
    const char *text;
    const char *choice;                           /* a Choice note: the value's name (NULL: a Value note) */
} fmu_mb_accuracy;
extern const int FMU_MB_NACCURACY;
extern const fmu_mb_accuracy FMU_MB_ACCURACY[];
extern const int FMU_MB_DEFAULT_METHOD;           /* the model's default integrator (what auto takes first) */
#endif
