/*
 * The fmu_mb FMU core: one instance, its variables, its phase and its FMU states, written once under the
 * FMI API files (fmi2_cs.c). Layout, the Modelica Reference-FMUs' way:
 *
 *   fmi2_cs.c      the FMI 2.0 API common to both interfaces and co-simulation's: argument checks and the
 *                  state table, then the core
 *   fmi2_me.c      the FMI 2.0 Model Exchange API (a mechanism FMU declaring continuous states)
 *   instance.c     life cycle, logging, variable access, stepping (this header's fmu_* functions)
 *   exchange.c     Model Exchange: time, continuous states, derivatives, event and continuous-time modes
 *   state.c        FMU states: the checked byte record, get/set/serialize
 *   text.c         message text: repr() of doubles, UTF-8, file URIs
 *   model.h        what a model implements for the core (mechanism.c or controller.c)
 *   fmu_mb_constants.h   generated from fmu_mb/fmi/constants.py and fmu_mb/messages.py
 *   <model>.c      generated per FMU (fmu_mb.fmi.model_table): its variables and facts
 *
 * An instance is used by one thread at a time (FMI 2.0); instances share nothing and may run in parallel.
 */
#ifndef FMU_MB_CORE_H
#define FMU_MB_CORE_H
#include <stddef.h>
#include <stdint.h>

#include "fmi2/fmi2Functions.h"
#include "fmu_mb_constants.h"
#include "model_table.h"

#if defined(__GNUC__) && defined(_WIN32)
#define FMU_MB_PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))      /* __USE_MINGW_ANSI_STDIO */
#elif defined(__GNUC__)
#define FMU_MB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FMU_MB_PRINTF(a, b)
#endif

#define INSTANCE_MAGIC 0x464d554d424e4154ULL   /* marks a live Instance (fmi2Component checks) */

/* Instance.dirty (Model Exchange): what is stale since the last evaluation */
enum { FMU_DERIVATIVES_FRESH = 1, FMU_STALE = 2 };

typedef struct StateBlob {
    uint64_t magic;
    size_t size;
    struct StateBlob *next;
    unsigned char bytes[];
} StateBlob;

typedef struct Instance {
    uint64_t magic;
    char *name;
    char *resources;                   /* the FMU's resources folder, with a trailing separator */
    fmi2CallbackFunctions cb;
    int debug;                         /* debug messages on (loggingOn, fmi2SetDebugLogging) */
    unsigned categories;               /* enabled categories (bit i: FMU_MB_LOG_CATEGORIES[i]); 0: all */
    const char *call;                  /* the FMI function being served: messages name it */
    int phase;                         /* FMU_MB_PHASE_* */
    double t, t_start, t_stop, last_ok;
    int has_stop;
    double *values;                    /* every variable's value, by value reference (inputs: as last set) */
    double *held;                      /* per input (s->inputs order): the value in force, which the outputs
                                          were evaluated with (the last step's; a set input takes effect at the
                                          next step, or at once in a model with feedthrough) */
    double *built;                     /* the parameter values the model was built with */
    double *kept;                      /* scratch: values (and from FMU_MB_NVARS + 1 on, held inputs) kept while a
                                          state is tried */
    int ready;                         /* the model is built for `built` */
    int n_params, n_inputs, n_outputs, n_locals;
    int *params, *inputs, *outputs, *locals;   /* value references by causality */
    int me;                            /* instantiated for Model Exchange (else co-simulation) */
    int dirty;                         /* Model Exchange: FMU_STALE (time, states or inputs changed since the
                                          last evaluation), FMU_DERIVATIVES_FRESH (the derivatives evaluated alone
                                          since: the outputs not), 0 (both evaluated) */
    void *model;                       /* the model's per-instance data (model.h) */
    StateBlob *states;
} Instance;

/* Messages ----------------------------------------------------------------------------------------- */
/* A message to the host's logger: errors and warnings always, others as loggingOn and the categories say. */
void fmu_say(Instance *s, int status, const char *fmt, ...) FMU_MB_PRINTF(3, 4);
#define FMU_ERROR(s, ...) fmu_say((s), fmi2Error, __VA_ARGS__)
#define FMU_DEBUG(s, ...) fmu_say((s), fmi2OK, __VA_ARGS__)
/* A message before an instance exists (fmi2Instantiate's refusals). */
void fmu_say_to(const fmi2CallbackFunctions *cb, const char *instance, int status, const char *fmt, ...)
    FMU_MB_PRINTF(4, 5);
/* Where a message arises ("fmi2DoStep from t = 0.1 s over 0.01 s"): its parts, put into words only when a message
 * needs them (fmu_where_text), so a step that logs nothing formats nothing (two %g took about 0.4 us of a 15 us
 * step). `kind` names the words: FMU_WHERE_CALL "<call>", _AT MSG_WHERE_AT, _STEP MSG_WHERE_STEP, _TIME
 * MSG_WHERE_TIME, _OUTPUTS MSG_WHERE_OUTPUTS. */
enum { FMU_WHERE_CALL, FMU_WHERE_AT, FMU_WHERE_STEP, FMU_WHERE_TIME, FMU_WHERE_OUTPUTS };
typedef struct {
    int kind;
    const char *call;
    double t, dt;
    char text[200];                       /* "" until fmu_where_text writes it */
} fmu_where;
const char *fmu_where_text(fmu_where *w);
/* A double as Python's repr() writes it (buf: 32 bytes). */
const char *fmu_repr(double v, char *buf);
/* " <unit>" of a variable, or "" (buf: 64 bytes). */
const char *fmu_unit_suffix(const fmu_mb_var *v, char *buf);
int fmu_valid_utf8(const char *s);
int fmu_category_index(const char *name);
/* RFC 3986 / RFC 8089 file URI -> local path (percent escapes decoded if `decode`); 0 and why otherwise. */
int fmu_decode_file_uri(const char *uri, char *out, size_t size, int decode, char *why, size_t wsize);

/* The instance --------------------------------------------------------------------------------------- */
/* `type`: fmi2ModelExchange or fmi2CoSimulation (Model Exchange only where the FMU declares continuous states,
 * FMU_MB_NSTATES > 0; anything else refused by name). `resources_location`: the resources folder's file URI
 * (FMI 2.0's fmuResourceLocation) or, `is_path`, its path (FMI 3.0's resourcePath). */
Instance *fmu_instantiate(const char *name, int type, const char *guid, const char *resources_location, int is_path,
                          const fmi2CallbackFunctions *cb, int logging_on);
void fmu_free(Instance *s);                      /* (the API frees its FMU states first: fmu_free_states) */
void fmu_reset(Instance *s);
/* fmi2Error unless the instance is in a phase of `mask` (FMU_MB_MASK_*), naming the call and the hint. */
int fmu_phase_allows(Instance *s, unsigned mask, const char *hint);
int fmu_set_debug_logging(Instance *s, int on, size_t n, const char *const categories[]);
int fmu_setup_experiment(Instance *s, int tol_defined, double tol, double start, int stop_defined, double stop);
int fmu_enter_initialization(Instance *s);
int fmu_exit_initialization(Instance *s);
int fmu_terminate(Instance *s);
fmi2Status fmu_do_step(Instance *s, double t, double dt);
/* Variables: type is FMU_MB_TYPE_*; values as doubles (Integer and Boolean converted by the API file). */
int fmu_get(Instance *s, const fmi2ValueReference vr[], size_t n, int type, double out[]);
int fmu_set(Instance *s, const fmi2ValueReference vr[], size_t n, int type, const double in[]);
/* The call is of the interface this instance was instantiated for (`me`: a Model Exchange function); logged. */
int fmu_interface_is(Instance *s, int me);
/* The model built for the current parameters and its outputs evaluated (1), or why not logged (0). */
int fmu_ensure_built(Instance *s);
/* The value of the parameter of `role` (gravity: axis `aux`), NaN if the FMU has none. */
double fmu_param(const Instance *s, int role, int aux);
int fmu_has_param(int role);
/* Every parameter within its range (every offending one logged). */
int fmu_check_parameters(Instance *s);

/* Directional derivatives of the derivatives and outputs at the current state and inputs in force (both
 * interfaces; the API file checked the phase and the pointers): dz = Σ ∂unknown/∂known · dv. */
/* Model Exchange: the outputs and derivatives at the time, states and inputs the host set (evaluated if they
 * changed since, s->dirty); 0: failed, logged. */
int fmu_evaluated(Instance *s);
int fmu_has_directional_derivatives(void);     /* the model offers them (providesDirectionalDerivative) */
int fmu_get_directional_derivative(Instance *s, const fmi2ValueReference unknown[], size_t nu,
                                   const fmi2ValueReference known[], size_t nk, const double dv[], double dz[]);
int fmu_has_output_derivatives(void);          /* the model offers them (maxOutputDerivativeOrder = 1) */
/* The first time derivatives (order[k] = 1) of the Real outputs vr at the current state; 0: refused, logged. */
int fmu_get_output_derivatives(Instance *s, const fmi2ValueReference vr[], size_t n, const int order[], double out[]);

/* Model Exchange (exchange.c); every function checked its phase and arguments' pointers already */
int fmu_set_time(Instance *s, double t);
int fmu_set_states(Instance *s, const double x[], size_t nx);
int fmu_get_states(Instance *s, double x[], size_t nx);
int fmu_get_nominals(Instance *s, double x[], size_t nx);
fmi2Status fmu_get_derivatives(Instance *s, double dx[], size_t nx);   /* fmi2Discard: not finite */
int fmu_get_event_indicators(Instance *s, size_t ni);
int fmu_completed_integrator_step(Instance *s, int *enter_event_mode, int *terminate);
int fmu_new_discrete_states(Instance *s, fmi2EventInfo *info);
int fmu_enter_event_mode(Instance *s);
int fmu_enter_continuous_time_mode(Instance *s);

/* FMU states (state.c) ------------------------------------------------------------------------------- */
int fmu_get_state(Instance *s, fmi2FMUstate *state);
int fmu_set_state(Instance *s, fmi2FMUstate state);
int fmu_free_state(Instance *s, fmi2FMUstate *state);
int fmu_state_size(Instance *s, fmi2FMUstate state, size_t *size);
int fmu_serialize_state(Instance *s, fmi2FMUstate state, fmi2Byte bytes[], size_t size);
int fmu_deserialize_state(Instance *s, const fmi2Byte bytes[], size_t size, fmi2FMUstate *state);
void fmu_free_states(Instance *s);
#endif
