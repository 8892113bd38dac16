/* What a model implements for the FMU core (instance.c, state.c): the Reference-FMUs' model.h contract.
 * Two models exist: a mechanism (mechanism.c: compiled arrays from a run source, the numba-compiled
 * kernels) and the PD joint controller (controller.c). A failing function logs why (fmu_say) unless it
 * returns the reason in a buffer. */
#ifndef FMU_MB_MODEL_H
#define FMU_MB_MODEL_H
#include "core.h"

/* Outputs depend directly on inputs (re-evaluated when read after an input was set). */
extern const int FMU_MB_FEEDTHROUGH;

/* Per-instance data into s->model, once the instance exists (the Python run source starts the model
 * file's Python here); 0: refused, logged. */
int model_create(Instance *s);
void model_free(Instance *s);
/* Back to the state after model_create (fmi2Reset). */
void model_reset(Instance *s);
/* The model for the current parameter values, started at s->t; 0: refused, every reason logged. */
int model_build(Instance *s);
/* Every output into s->values at the current state and inputs; 0: failed, logged. */
int model_evaluate(Instance *s);
/* The inputs in force (s->held) into the model again: a restored state's (trajectory tables, drives); 0:
 * refused (logged). */
int model_restore_inputs(Instance *s);
/* Integrate [t, t + dt] with the inputs held; 0 (logged) keeps the state of t. */
int model_step(Instance *s, double t, double dt);
/* The step from t was accepted: fmi2OK, or fmi2Warning with what the host should know about it (logged). */
fmi2Status model_step_accepted(Instance *s, double t);
/* Model Exchange (a mechanism: exchange.c). The FMU_MB_NSTATES continuous states at the current state (inactive
 * slots 0). */
void model_get_states(const Instance *s, double *x);
/* New continuous states, every one checked before any is taken; 0 and why (the states unchanged). */
int model_set_states(Instance *s, const double *x, char *why, size_t len);
/* The derivatives alone at the current state and inputs (no outputs); 0: failed, logged. */
int model_derivatives(Instance *s);
/* The derivatives of the states as last evaluated (model_evaluate or model_derivatives); the first non-finite
 * one's slot, or -1. */
int model_get_derivatives(const Instance *s, double *dx);
/* The inputs as set (s->values) in force at once (Model Exchange); 0: refused, logged, those in force kept. */
int model_take_inputs(Instance *s);

/* Directional derivatives (model_has_directional_derivatives: the model offers them). The knowns and unknowns are
 * checked by the core's caller only for type and range; the model refuses what it cannot differentiate (0 and
 * why). */
int model_has_directional_derivatives(void);
int model_directional_derivative(Instance *s, const fmi2ValueReference unknown[], size_t nu,
                                 const fmi2ValueReference known[], size_t nk, const double dv[], double dz[],
                                 char *why, size_t len);

/* Output derivatives of co-simulation (model_has_output_derivatives: the model offers them, order 1): the time
 * derivatives of the Real outputs vr (checked by the core's caller) at the current state, the inputs in force
 * held; 0 and why. */
int model_has_output_derivatives(void);
int model_output_derivatives(Instance *s, const fmi2ValueReference vr[], size_t n, double dz[], char *why,
                             size_t len);

/* Why the current result may not be answered with fmi2OK (1, text in msg), or 0. */
int model_problem(Instance *s, fmu_where *where, char *msg, size_t len);
/* Undo the last model_step (its result was refused). */
void model_undo_step(Instance *s);
/* The model's part of an FMU state: its length, its values and a counter saved beside it. */
int64_t model_record_size(const Instance *s);
void model_write_record(const Instance *s, double *record, int64_t *counter);
/* Checks everything before it writes anything; 0 with the reason (the model unchanged). */
int model_read_record(Instance *s, const double *record, int64_t n, int64_t counter, char *why, size_t len);
#endif
