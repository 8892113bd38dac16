"""Every message an fmu_mb FMU logs, defined once: printf templates, generated into the C header of the FMU
core (``#define MSG_<NAME> "<template>"``, fmu_mb.fmi.constants.c_header) and read here by the Python API where
it says the same (the simulator's state records, the trajectories' checks). Imports nothing.

The templates use only conversions C's printf and Python's ``%`` operator read alike (``%s %d %u %g %e %f``
with flags, width and precision, ``%.*s``), so :func:`text` words a message exactly as the FMU does given the
same arguments (doubles as Python's repr() are passed as strings: the core's fmu_repr). The FMU prefixes each
message with ``[<model>] ``. Sub-messages (a ``%s`` filled with another template) keep sentences whole.
"""
from __future__ import annotations

import re

MESSAGES = {
    # ---- instantiation
    "NO_LOGGER": "fmu_mb (%s): fmi2Instantiate: the host passed no logger callback; instantiation refused",
    "NAME_EMPTY": "fmi2Instantiate: instanceName must be a non-empty string",
    "NAME_NOT_UTF8": "fmi2Instantiate: instanceName is not valid UTF-8",
    "NOT_COSIMULATION": "fmi2Instantiate: this FMU supports co-simulation only (fmuType %d requested)",
    "UNKNOWN_FMU_TYPE": "fmi2Instantiate: fmuType %d is neither fmi2ModelExchange (0) nor fmi2CoSimulation (1)",
    "GUID_MISMATCH": "fmi2Instantiate: GUID %.100s does not match this FMU's %s (modelDescription.xml and binary "
                     "from different builds?)",
    "INSTANTIATE_REFUSED": "fmi2Instantiate: %s",
    "RESOURCES_MISSING": "fmuResourceLocation is %s; the host must pass the URI of the FMU's resources folder "
                         "(file:///path/to/resources)",
    "RESOURCES_NOT_OURS": "fmuResourceLocation '%.1024s' is not the resources folder of this FMU ('%.1024s' holds "
                          "no %s)",
    "RESOURCES_UNUSABLE": "fmuResourceLocation '%.1024s' cannot be used: %s",
    "URI_TOO_LONG": "the path is too long",
    "URI_NOT_FILE": "it is not a file URI (expected file:///absolute/path/to/resources)",
    "URI_REMOTE_HOST": "it names the host '%.*s'; only local files (file:///path) can be used",
    "URI_NOT_ABSOLUTE": "its path is not absolute",
    "URI_BAD_ESCAPE": "it has a malformed percent-escape at character %u",
    "URI_NUL": "it encodes a NUL character (%%00)",
    "VARIANTS_UNREADABLE": "fmi2Instantiate: cannot load the compiled mechanism (%s); is fmuResourceLocation this "
                           "FMU's resources folder?",
    "OUT_OF_MEMORY": "%s: out of memory",
    # ---- a Python FMU's model (python.c)
    "PYTHON_MISSING": "fmu_mb: cannot load libpython (%s): %s",
    "BINARY_UNLOCATED": "fmu_mb: cannot locate the FMU binary directory",
    "WRAPPER_MISSING": "fmu_mb: cannot load %s: %s",
    "WRAPPER_INCOMPLETE": "fmu_mb: fmi2Instantiate not found in pythonfmu's wrapper",
    "PYTHON_SAYS": "%s",
    "RESOURCES_NOT_PASSABLE": "fmi2Instantiate: the resources folder '%s' cannot be passed on (not named resources)",
    "RESOURCES_NO_ALIAS": "fmi2Instantiate: the FMU folder '%s' has a name the Python wrapper cannot take, and no "
                          "temporary link to it could be made",
    "RESOURCES_NO_SLAVE": "fmi2Instantiate: the resources folder %s holds no slavemodule.txt (is it this FMU's?)",
    "SLAVE_NOT_STARTED": "fmi2Instantiate: the model's Python (pythonfmu's wrapper running the slave script) %s; "
                         "see the messages above",
    "PYTHON_BUILD_REFUSED": "%s",
    "PYTHON_BUILD_DAMAGED": "the arrays the model's Python built are damaged: %s",
    # ---- the state table, logging, arguments
    "PHASE_REFUSED": "%s is not allowed in %s (FMI 2.0 %s state table)%s%s",
    "OTHER_INTERFACE": "%s is a%s function; this instance was instantiated for %s",
    "LOG_CATEGORIES_NULL": "%s: categories is NULL with nCategories = %.0f",
    "LOG_CATEGORY_UNKNOWN": "%s: unknown log category '%.200s' (this FMU has %s)",
    "NULL_ARGUMENT": "%s: %s is NULL",
    "NULL_ARRAY": "%s: %s is NULL with nvr = %.0f",
    "TOO_MANY_VALUES": "%s: nvr = %.0f is larger than any call of this FMU needs (at most %d)",
    "NO_STRINGS": "%s: this FMU has no String variables",
    "NO_ASYNCHRONOUS_STEP": "%s: there is no asynchronous step to cancel (canRunAsynchronuously = false)",
    "STATUS_UNAVAILABLE": "%s: status kind %d is not available (this FMU steps synchronously: only "
                          "fmi2GetRealStatus(fmi2LastSuccessfulTime) and fmi2GetBooleanStatus(fmi2Terminated) apply)",
    "NO_DIRECTIONAL_DERIVATIVE": "%s is not supported by this FMU (providesDirectionalDerivative = false)",
    "NO_INPUT_DERIVATIVES": "%s is not supported by this FMU (canInterpolateInputs = false: inputs are held constant "
                            "over each communication step)",
    "NO_OUTPUT_DERIVATIVES": "%s is not supported by this FMU (maxOutputDerivativeOrder = 0)",
    # ---- experiment and variables
    "START_TIME": "fmi2SetupExperiment: startTime must be finite and within +-%g s (got %s)",
    "STOP_BEFORE_START": "fmi2SetupExperiment: stopTime %s s must not lie before startTime %s s",
    "TOLERANCE": "fmi2SetupExperiment: tolerance must be finite and > 0 (got %s); this FMU steps with a fixed "
                 "internal step and does not use it",
    "VR_UNKNOWN": "%s: unknown value reference %u",
    "VR_WRONG_TYPE": "%s: value reference %u ('%s') is %s, not %s",
    "VALUE_NOT_FINITE": "%s: '%s' = %s is not finite",
    "SET_OUTPUT": "%s: '%s' is an output and cannot be set",
    "SET_FIXED_PARAMETER": "%s: parameter '%s' is fixed after initialization (FMU is in %s)",
    "SET_NOT_FINITE": "%s: '%s' = %s refused (not finite); keeping %s",
    "SET_FIXED_TRAJECTORY": "%s: '%s' = %s refused: a native FMU follows the programmed trajectories it was built "
                            "with (their segments are computed by the model file's Python); keeping %s. Change it in "
                            "the model file and build again, or use the Python FMU",
    # ---- parameters and the build
    "PARAMETER_CHOICE": "invalid parameter: parameter '%s' must be one of %s (got %.0f)",
    "PARAMETER_COUNT": "invalid parameter: parameter '%s' must be an integer in [%.0f, %.0f] (got %s)",
    "PARAMETER_VALUE": "invalid parameter: parameter '%s' must be a finite number in [%g, %g]%s (got %s)",
    "PARAMETER_RANGE": "invalid parameter: parameter '%s' must lie in [%g, %g]%s (got %g)",
    "OPTION_NOT_CARRIED": "invalid parameter: '%s' = %s: this native FMU carries the mechanism built with %s = %s%s "
                          "only (the option rebuilds the model in Python); build a native FMU with this value too "
                          "(fmu-mb build --kind native --option %s=...,%s) or use the Python FMU",
    "OPTION_NOT_BUILT": "invalid parameter: '%s' = %s: this native FMU carries the mechanism built with %s = %s%s "
                        "only (the option rebuilds the model in Python); build a native FMU with this value (fmu-mb "
                        "build --kind native --option %s=%s) or use the Python FMU",
    "COMBINATION_NOT_CARRIED": "invalid parameter: this native FMU does not carry the combination of model options "
                               "set (it carries %d combinations of the Choice/Flag options; see "
                               "resources/variants.json)",
    "VARIANT_UNREADABLE": "cannot load the compiled mechanism: %s",
    "VARIANT_SLOPES_DAMAGED": "the compiled mechanism of option combination %d is damaged: record %s has no matching "
                              "%s",
    "VARIANT_BUILT": "option combination %d: %s",
    "RUN_DAMAGED": "the compiled mechanism (%s) is damaged: %s",
    "BUILT": "kernels: compiled library (%s), %s",
    "STATICS_ITERATIONS": "%d Newton iterations (%sresidual %.3e)",
    "STATICS_NOT_FINITE": "a non-finite residual",
    "STATICS_FAILED": "initialization (init.static / init.assemble): %sstatic equilibrium did not converge in %s",
    "START_NOT_FINITE": "initialization (init.static / init.assemble): state contains NaN or inf",
    "ASSEMBLY_FAILED": "initialization (init.static / init.assemble): '%s': the constraints could not be solved from "
                       "the given start configuration (max |Phi| = %.3e after 25 Newton iterations); start closer to "
                       "a closed configuration, or check the lengths: a loop that cannot close never will",
    "RK4_LIMIT": "solver.step_size = %g s is above the stability limit of explicit RK4 for these options at the "
                 "start: the stiffest mode (eigenvalue %.4g %+.4gi 1/s) allows h <= %.3g s; set solver.step_size <= "
                 "%g s",
    "ACCURACY_NOTE": "%s = %s with solver.integrator = %s at solver.step_size = %g s is outside the measured "
                     "accuracy (the result may be off by more than the bound below): %s",
    "AUTO_METHOD": "solver.integrator = auto: %s at solver.step_size = %g s (the model's default %s is outside the "
                   "measured accuracy where %s = %s: %s)",
    "WHERE_AT": "%s at t = %g s",
    "WHERE_TIME": "at t = %g s",
    "WHERE_STEP": "%s from t = %g s over %g s",
    "WHERE_OUTPUTS": "its outputs",
    "INIT_RESULT_REFUSED": "%s; change the parameters or start values and try again",
    "KERNEL_OUTPUTS_FAILED": "%s: evaluating the outputs failed in the kernel library",
    # ---- stepping
    "STEP_SIZE": "fmi2DoStep: communicationStepSize must be finite and > 0 s (got %s)",
    "STEP_NOT_CONTIGUOUS": "fmi2DoStep: currentCommunicationPoint %s s differs from the FMU time %s s (steps must be "
                           "contiguous; use fmi2SetFMUstate to go back)",
    "STEP_AFTER_STOP": "fmi2DoStep: the step to t = %s s ends after the stop time %s s given to fmi2SetupExperiment",
    "STEP_BEYOND_TIME_LIMIT": "fmi2DoStep: the step to t = %s s ends beyond +-%g s",
    "STEP_TOO_MANY": "%s: a step of %g s needs %.0f internal steps of %g s, more than solver.max_steps_per_call = "
                     "%.0f",
    "STEP_NOT_FINITE": "%s: integration from t = %.6g s over %.6g s produced a non-finite state%s; the state and "
                       "outputs of t = %g s are kept (%s)",
    "SINGULAR_CONSTRAINTS": " (the constraint matrix is singular: rank %d at the failing configuration)",
    "HINT_CAUSE": "the likely cause: %s",
    "HINT_RK4": "explicit RK4 at solver.step_size = %g s may be unstable here: LuGre bristles, RFEM links and stiff "
                "supports need small steps; a smaller step, solver.integrator = 1 (ROS2) or other inputs may pass",
    "HINT_ROSENBROCK": "%s at solver.step_size = %g s linearises only the stiff forces and may lose stability where "
                       "friction couples them strongly (LuGre with flexible links); a smaller step, %sor "
                       "solver.integrator = 0 (RK4) at a step small enough for the stiffest detail may pass",
    "HINT_DAMPED_ROS2": "solver.integrator = 1 (ros2, the damped and more robust gamma), ",
    "HINT_LOOPS": "; or a closed loop has reached a singular (dead-point) position, where its rates grow without "
                  "bound and no step or method passes (a programmed motion cannot go on there)",
    "EVALUATION_FAILED": "%s: evaluating the outputs failed in the kernel library",
    "STEP_RESULT_REFUSED": "%s; the state and outputs at t = %g s are kept",
    # ---- Model Exchange (fmi2_me.c, exchange.c)
    "ME_NULL_ARRAY": "%s: %s is NULL with %s = %.0f",
    "ME_STATE_COUNT": "%s: nx = %.0f, but this FMU has %d continuous states (modelDescription: ModelStructure/"
                      "Derivatives)",
    "ME_INDICATOR_COUNT": "%s: ni = %.0f, but this FMU has no event indicators (numberOfEventIndicators = 0)",
    "ME_TIME": "fmi2SetTime: time must be finite and within +-%g s (got %s); keeping t = %s s",
    "ME_STATE_NOT_FINITE": "%s: %s = %s refused (not finite); the states of t = %g s are kept",
    "ME_STATE_BEYOND": "%s: %s (%s) = %s lies beyond +-%g, the range of the FMU's state; the states of t = %g s are "
                       "kept",
    "ME_DERIVATIVE_NOT_FINITE": "%s at t = %g s: der(%s) = %s is not finite (%d derivative(s) in all): the state "
                                "the integrator tried is outside what the model can evaluate; try a smaller step",
    "DD_KNOWN": "%s: '%s' is not a known of a directional derivative (the knowns are the continuous states "
                "state[k] and the Real inputs)",
    "DD_UNKNOWN": "%s: '%s' is not an unknown of a directional derivative (the unknowns are the derivatives "
                  "der(state[k]), the Real outputs and the states)",
    "DD_TRAJECTORY": "%s: derivatives with respect to the programmed-trajectory parameter '%s' are not available "
                     "(its segment tables are computed from it, not differentiated); use differences of two runs",
    "DD_SEED": "%s: dvKnown[%d] = %s is not finite",
    "DD_NOT_FINITE": "%s at t = %g s: the directional derivative of '%s' is %s (not finite)",
    "DD_UNAVAILABLE": "%s: the model is not built (call fmi2EnterInitializationMode first)",
    "OD_NOT_OUTPUT": "%s: '%s' is not a Real output (output derivatives are the time derivatives of the Real "
                     "outputs)",
    "OD_ORDER": "%s: derivative order %d of '%s' is not available (this FMU gives the first time derivative of its "
                "outputs: maxOutputDerivativeOrder = 1)",
    "OD_NOT_FINITE": "%s at t = %g s: the time derivative of '%s' is %s (not finite)",
    "ME_RESULT_REFUSED": "%s; the integrator should go back to its last accepted step",
    "FRICTION_NOT_CONVERGED": "%s at t = %g s: the friction/reaction loop did not converge in %d evaluation(s) within "
                              "solver.friction_iteration_limit Newton iterations (a self-locking joint, or a limit "
                              "set too low?); the least-residual friction torques were applied",
    # ---- results
    "OUTPUT_NOT_FINITE": "%s: output '%s' = %s is not finite (%d output(s) in all)",
    "STATE_BEYOND_LIMIT": "%s: %s = %s lies beyond +-%g, the range of the FMU's state (a state it could not "
                          "restore: %s)",
    "BEYOND_INPUTS": "are the inputs too large?",
    "BEYOND_LOOPS": "are the inputs too large, or has a closed loop reached a singular (dead-point) position, where "
                    "its rates grow without bound and a programmed motion cannot go on?",
    "ELLIPSE_DISTANCE": " (first-order distance |Phi|/|grad Phi|, exact only near the ellipse)",
    "POINT_AWAY": "point %s is %s away from it",
    "VIOLATED_BY": "it is violated by %s",
    "PROGRAMMED_MOTION_LOST": "%s: the programmed motion '%s' cannot be followed: %s at t = %g s, more than "
                              "solver.max_violation = %g (is the path out of reach, or traversed too fast?)",
    "CONSTRAINT_VIOLATED": "%s: constraint '%s' (%s) is violated by %s at t = %g s, more than solver.max_violation = "
                           "%g",
    # ---- trajectories (TRAJECTORY_RANGE, _ORDER, _DURATION are Trajectory.validate's words too)
    "TRAJECTORY_RANGE": "trajectory '%.*s': %s must be a finite number in [%g, %g]%s (got %s)",
    "TRAJECTORY_ORDER": "trajectory '%s': segments must start in time order",
    "TRAJECTORY_DURATION": "trajectory '%s': every move needs a duration > 0 s",
    "TRAJECTORY_REFUSED": "trajectory '%s': %s",
    "TRAJECTORY_INPUT_REFUSED": "%s: invalid trajectory input (%s): %s; the previous values are kept",
    "TABLE_MISSING": "its table function %d is not in this FMU",
    "TABLE_FAILED": "its table function failed (numba status %d)",
    "TABLE_CHECK_FAILED": "check %d failed",
    # ---- FMU states
    "STATE_TOO_SHORT": "FMU state too short (%.0f bytes)",
    "STATE_BAD_MAGIC": "not an fmu_mb FMU state (bad magic)",
    "STATE_FORMAT": "FMU state format %d is not supported (this FMU reads format %d)",
    "STATE_OTHER_INTERFACE": "FMU state belongs to a different FMU interface",
    "STATE_SIZE": "FMU state has %.0f bytes, its header announces %.0f",
    "STATE_CHECKSUM": "FMU state checksum mismatch (corrupted)",
    "STATE_PHASE_CODE": "FMU state has an unknown phase code %d",
    "STATE_TIME_FIELD": "FMU state %s %s s is not a finite time within +-%g s",
    "STATE_TIME_BEFORE_START": "FMU state time %s s lies before its start time %s s",
    "STATE_STOP_BEFORE_START": "FMU state stop time %s s lies before its start time %s s",
    "STATE_TIME_AFTER_STOP": "FMU state time %s s lies after its stop time %s s",
    "STATE_COUNTER": "FMU state has a friction-failure count %.0f outside [0, %.0f]",
    "STATE_VALUE_COUNT": "FMU state holds %d values, this FMU has %d",
    "STATE_TERMINATED": "it was saved after fmi2Terminate and cannot be restored (use fmi2Reset)",
    "STATE_INSTANTIATED_WITH_RECORD": "it is marked 'instantiated' but holds a simulator state",
    "STATE_OTHER_PHASE": "it was saved in %s and the FMU is in %s; only a state saved after initialization can be "
                         "restored into another phase",
    "SAVED_NOT_FINITE": "'%s'%s = %s is not finite",
    "SAVED_NOT_INTEGER": "'%s'%s = %s is not an integer",
    "SAVED_NOT_BOOLEAN": "'%s'%s = %s is not a Boolean",
    "SAVED_IN_FORCE": " (the value in force)",
    "SAVED_OUT_OF_RANGE": "'%s' must lie in [%g, %g]%s (got %g)",
    "SAVED_FIXED_TRAJECTORY": "'%s'%s = %s differs from the trajectory this native FMU was built with",
    "RECORD_SIZE": "it holds %d state values, the model has %d",
    "RECORD_NOT_FINITE": "state value %d is %s",
    "RECORD_BEYOND_LIMIT": "%s = %s lies outside +-%g",
    "RECORD_COUNT": "the partition count %s is not a count below 2^31",
    "RECORD_FALLBACK": "the number of damped ROS2 steps still to take, %s, is not a count below 2^31",
    "RECORD_PARTITION": "solver state holds an invalid partition",
    "RECORD_RANK": "solver state holds an invalid partition rank %s or flag",
    "BLOCK_RECORD": "it holds %d state values; this signal block (a controller or an excitation) is stateless",
    "STATE_PARAMETERS": "its parameters do not build this FMU's model (see the messages above)",
    "STATE_TRAJECTORIES": "its trajectory inputs are invalid",
    "STATE_OUTPUTS": "its outputs cannot be evaluated",
    "STATE_REFUSED": "%s: the state is refused: %s; the current state is kept",
    "STATE_UNKNOWN": "%s: %s FMU state (not one this instance handed out, or already freed; fmi2GetFMUstate and "
                     "fmi2DeSerializeFMUstate make them)",
    "STATE_TOO_LARGE": "%s: size %.0f is larger than any state of this FMU",
    "DESERIALIZE_REFUSED": "%s: %s",
    "SERIALIZE_BUFFER": "%s: %s (the state needs exactly %.0f bytes, fmi2SerializedFMUstateSize)",
    # ---- FMI 3.0 (fmi3.c; the messages above reach an FMI 3.0 host in FMI 3.0's words: constants.FMI3_WORDS)
    "RESOURCES_PATH_MISSING": "resourcePath is NULL; the host must pass the path of the FMU's resources folder",
    "RESOURCES_PATH_NOT_OURS": "resourcePath '%.1024s' is not the resources folder of this FMU (it holds no %s)",
    "FMI3_NO_EVENT_MODE": "%s: eventModeUsed = true, but this FMU has no event mode in co-simulation (hasEventMode = "
                          "false)",
    "FMI3_NO_INTERMEDIATE": "%s: %.0f required intermediate variables, but this FMU provides no intermediate update "
                            "(providesIntermediateUpdate = false)",
    "FMI3_NOT_SCHEDULED": "%s: this FMU offers co-simulation and Model Exchange, not scheduled execution",
    "FMI3_VALUE_COUNT": "%s: nValues = %.0f, but the %.0f variables asked for hold %.0f values",
    "FMI3_SEED_COUNT": "%s: %s = %.0f, but the %.0f %s asked for hold %.0f values",
    "FMI3_VR_IN_ARRAY": "%s: value reference %u is no FMI 3.0 variable: it is element %d of the array %s (value "
                        "reference %u)",
    "FMI3_VR_WRONG_TYPE": "%s: value reference %u (%s) is of type %s, not %s",
    "FMI3_TIME_READ_ONLY": "%s: time (value reference %u, the independent variable) cannot be set",
    "FMI3_NO_CONFIGURATION": "%s: this FMU has no structural parameters (no configuration mode)",
    "FMI3_CONFIGURING": "%s: the instance is in configuration mode: leave it with fmi3ExitConfigurationMode first",
    "FMI3_NOT_CONFIGURING": "%s: the instance is not in configuration mode (fmi3EnterConfigurationMode first)",
    "FMI3_STRUCTURAL_OUTSIDE": "%s: %s is a structural parameter: set it in configuration mode "
                               "(fmi3EnterConfigurationMode after instantiation or fmi3Reset, then "
                               "fmi3ExitConfigurationMode)",
    "FMI3_NOT_STRUCTURAL": "%s: in configuration mode only structural parameters are set; %s is not one",
    "FMI3_NO_CLOCKS": "%s: this FMU has no clocks",
    "FMI3_NO_EVENT_STEP": "%s: this FMU has no event mode in co-simulation (hasEventMode = false): there is no step "
                          "mode to enter",
    "FMI3_NO_EVALUATE": "%s: this FMU has no discrete states to evaluate (providesEvaluateDiscreteStates = false)",
    "FMI3_NO_PER_ELEMENT": "%s: this FMU declares its dependencies in the modelDescription's ModelStructure only "
                           "(providesPerElementDependencies = false)",
}

_CONVERSION = re.compile(r"%(?:%|[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?([a-zA-Z]))")
_ALLOWED = set("sdugef")


def conversions(name: str) -> list:
    """The conversion letters of a template, in order (``*`` width/precision counted as an extra ``d``)."""
    out = []
    for m in _CONVERSION.finditer(MESSAGES[name]):
        spec = m.group(0)
        if spec == "%%":
            continue
        out += ["d"] * spec.count("*") + [m.group(1)]
    return out


def text(name: str, *args) -> str:
    """A message as the FMU words it, from the same arguments (a double the core prints with repr(): its repr)."""
    return MESSAGES[name] % args


def pattern(name: str, prefix: bool = True) -> re.Pattern:
    """A regular expression matching every message of template ``name`` (any argument values), with the
    FMU's ``[<model>] `` prefix when ``prefix``."""
    parts, pos, template = [], 0, MESSAGES[name]
    for m in _CONVERSION.finditer(template):
        parts.append(re.escape(template[pos:m.start()]))
        parts.append("%" if m.group(0) == "%%" else ".*?")
        pos = m.end()
    parts.append(re.escape(template[pos:]))
    return re.compile((r"\[[^\]]+\] " if prefix else "") + "".join(parts) + "$", re.S)
