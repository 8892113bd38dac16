/*
 * The FMI 2.0 Model Exchange API of an fmu_mb FMU (the functions only Model Exchange has; the common ones are
 * fmi2_cs.c's): argument checks, the instance's interface and the state table, then the core (exchange.c).
 * No physics, no model knowledge. The FMU has no event indicators and no time events: event mode only
 * passes through (fmi2NewDiscreteStates asks for nothing).
 */
#include <string.h>

#include "api.h"

#define counted api_counted

FMI2_Export fmi2Status fmi2EnterEventMode(fmi2Component c) {
    BEGIN_ME("fmi2EnterEventMode", fmi2EnterEventMode);
    return STATUS(fmu_enter_event_mode(s));
}

FMI2_Export fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    BEGIN_ME("fmi2NewDiscreteStates", fmi2NewDiscreteStates);
    if (!info) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, "fmi2EventInfo");
        return fmi2Error;
    }
    return STATUS(fmu_new_discrete_states(s, info));
}

FMI2_Export fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    BEGIN_ME("fmi2EnterContinuousTimeMode", fmi2EnterContinuousTimeMode);
    return STATUS(fmu_enter_continuous_time_mode(s));
}

FMI2_Export fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation) {
    (void)noSetFMUStatePriorToCurrentPoint;
    BEGIN_ME("fmi2CompletedIntegratorStep", fmi2CompletedIntegratorStep);
    if (!enterEventMode || !terminateSimulation) {
        FMU_ERROR(s, MSG_NULL_ARGUMENT, s->call, !enterEventMode ? "enterEventMode" : "terminateSimulation");
        return fmi2Error;
    }
    int event = 0, stop = 0, ok = fmu_completed_integrator_step(s, &event, &stop);
    *enterEventMode = event ? fmi2True : fmi2False;
    *terminateSimulation = stop ? fmi2True : fmi2False;
    return STATUS(ok);
}

FMI2_Export fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
    BEGIN_ME("fmi2SetTime", fmi2SetTime);
    return STATUS(fmu_set_time(s, time));
}

FMI2_Export fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    BEGIN_ME("fmi2SetContinuousStates", fmi2SetContinuousStates);
    if (!counted(s, x, nx, "x")) return fmi2Error;
    return STATUS(fmu_set_states(s, x, nx));
}

FMI2_Export fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx) {
    BEGIN_ME("fmi2GetDerivatives", fmi2GetDerivatives);
    if (!counted(s, derivatives, nx, "derivatives")) return fmi2Error;
    return fmu_get_derivatives(s, derivatives, nx);
}

FMI2_Export fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni) {
    BEGIN_ME("fmi2GetEventIndicators", fmi2GetEventIndicators);
    if (!counted(s, eventIndicators, ni, "eventIndicators")) return fmi2Error;
    return STATUS(fmu_get_event_indicators(s, ni));
}

FMI2_Export fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    BEGIN_ME("fmi2GetContinuousStates", fmi2GetContinuousStates);
    if (!counted(s, x, nx, "x")) return fmi2Error;
    return STATUS(fmu_get_states(s, x, nx));
}

FMI2_Export fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx) {
    BEGIN_ME("fmi2GetNominalsOfContinuousStates", fmi2GetNominalsOfContinuousStates);
    if (!counted(s, x_nominal, nx, "x_nominal")) return fmi2Error;
    return STATUS(fmu_get_nominals(s, x_nominal, nx));
}
