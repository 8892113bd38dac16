/* fmu-mb rt-bench: step a native co-simulation FMU at a fixed rate, as a hardware-in-the-loop rig does, and
 * measure every step (fmi2DoStep plus reading every Real output). No Python in the loop: fmu_mb.rtbench
 * compiles this file with the C compiler and runs it.
 *
 * Usage: rt_bench BINARY RESOURCES_URI GUID STEPS RATE_HZ CPU OUTPUT_VRS [VR=V | VR:i=V | VR:b=V ...] [step=S]
 *                 [vary=VR,V0,A ...] [fmi3=NVALUES] [me=S,NX]
 *        rt_bench --spin N - STEPS RATE_HZ CPU ""   (the platform's baseline: each "step" is the same fixed
 *                 computation, N iterations of a dependent floating-point recurrence, in place of the FMU; no
 *                 outputs: an empty OUTPUT_VRS)
 *   RATE_HZ  steps per second; the communication step is 1/RATE_HZ. The loop sleeps until each period's start
 *            (clock_nanosleep, absolute CLOCK_MONOTONIC); 0: back to back, communication step 1 ms or S
 *   step=S   the communication step of a back-to-back run, s (a paced run's is 1/RATE_HZ)
 *   CPU      the processor to pin the loop to (-1: none)
 *   VR=V     Real start values, VR:i=V Integer (Enumeration), VR:b=V Boolean, set before the initialization
 *   fmi3=NVALUES  an FMI 3.0 FMU (RESOURCES_URI is then its resource path, with the trailing separator; GUID its
 *            instantiation token): fmi3InstantiateCoSimulation, VR:c=V structural Int32 values set in configuration
 *            mode, VR=V Float64, VR:a=V1,V2,... Float64 arrays, VR:e=V Enumeration (fmi3SetInt64), VR:i=V Int32
 *            and VR:b=V Boolean values set in initialization mode, fmi3DoStep, and OUTPUT_VRS read by one
 *            fmi3GetFloat64 of NVALUES values (arrays count each element)
 *   vary=VR,V0,A  a Real input written before every step, as a rig's controller writes its output: V0 + A sin(2 pi t)
 *            at the step's start time t (s; a 1 s period), all such inputs in one fmi2SetReal call, which the step's
 *            time includes. An input never written keeps its start value (the FMU may reuse work keyed on it)
 *   me=S,NX  Model Exchange instead of co-simulation, integrated by the harness as a rig's fixed-step solver does:
 *            S = 1 explicit Euler (Simulink's ode1), S = 4 classical Runge-Kutta (ode4); NX continuous states (FMI
 *            3.0: the FMU's own count, which its structural parameters set, replaces it). Each stage is
 *            fmi2SetTime, fmi2SetContinuousStates and fmi2GetDerivatives (fmi3GetContinuousStateDerivatives); a
 *            step ends with the new time and states set, fmi2CompletedIntegratorStep (an event it asks for is
 *            handled: event mode, discrete states until none are needed, continuous-time mode) and the outputs read
 * What it asks of the system and what it got is reported: memory locked (mlockall), SCHED_FIFO priority 80 (when
 * paced), the CPU. Prints "key value" lines: the settings obtained, then the step times in ns (median, p99, p99.99,
 * max, mean), overruns (steps longer than the period) and the FMI status. The step-time array is allocated and
 * touched before the loop; the loop itself calls only the FMU, clock_gettime and clock_nanosleep. Linux. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fmi2FunctionTypes.h"   /* the FMI 2.0 standard's types (fmu_mb/fmi/c/fmi2) */
#include "fmi3FunctionTypes.h"   /* and FMI 3.0's (fmu_mb/fmi/c/fmi3) */

static int quiet_errors;

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...) {
    (void)env;
    (void)name;
    (void)category;
    if (status < 3 || quiet_errors) return;                     /* errors only: the run stops at the first */
    va_list ap;
    va_start(ap, message);
    fprintf(stderr, "FMU: ");
    vfprintf(stderr, message, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message) {
    (void)env;
    (void)category;
    if (status < fmi3Error || quiet_errors) return;
    fprintf(stderr, "FMU: %s\n", message);
}

static void *need(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "the FMU binary has no %s\n", name);
        exit(3);
    }
    return f;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

#define MAXV 8192

/* --spin: a step of fixed work (no FMU). What varies from one such step to the next is the platform's own
 * jitter (interrupts, the hypervisor, frequency changes, cache pollution by other tasks). */
static long spin_n;
static volatile double spin_sink, spin_a = 0.999999, spin_b = 1e-6;
static int spin_dummy;

static fmi2Component spin_instantiate(fmi2String a, fmi2Type b, fmi2String c, fmi2String d,
                                      const fmi2CallbackFunctions *e, fmi2Boolean f, fmi2Boolean g) {
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f, (void)g;
    return &spin_dummy;
}
static fmi2Status spin_setup(fmi2Component c, fmi2Boolean a, fmi2Real b, fmi2Real d, fmi2Boolean e, fmi2Real f) {
    (void)c, (void)a, (void)b, (void)d, (void)e, (void)f;
    return fmi2OK;
}
static fmi2Status spin_mode(fmi2Component c) {
    (void)c;
    return fmi2OK;
}
static fmi2Status spin_real(fmi2Component c, const fmi2ValueReference *v, size_t n, const fmi2Real *x) {
    (void)c, (void)v, (void)n, (void)x;
    return fmi2OK;
}
static fmi2Status spin_int(fmi2Component c, const fmi2ValueReference *v, size_t n, const fmi2Integer *x) {
    (void)c, (void)v, (void)n, (void)x;
    return fmi2OK;
}
static fmi2Status spin_bool(fmi2Component c, const fmi2ValueReference *v, size_t n, const fmi2Boolean *x) {
    (void)c, (void)v, (void)n, (void)x;
    return fmi2OK;
}
static fmi2Status spin_get(fmi2Component c, const fmi2ValueReference *v, size_t n, fmi2Real *x) {
    (void)c, (void)v, (void)n, (void)x;
    return fmi2OK;
}
static fmi2Status spin_step(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean last) {
    (void)c, (void)t, (void)h, (void)last;
    double x = spin_sink, a = spin_a, b = spin_b;  /* (volatile reads: the compiler cannot fold the recurrence) */
    for (long i = 0; i < spin_n; ++i) x = x * a + b;
    spin_sink = x;
    return fmi2OK;
}
static void spin_free(fmi2Component c) {
    (void)c;
}

/* The FMU a step calls, FMI 2.0 or 3.0: its input writes, its step and its output read. */
typedef struct {
    int v3;
    void *inst;
    fmi2SetRealTYPE *set2;
    fmi2DoStepTYPE *step2;
    fmi2GetRealTYPE *get2;
    fmi3SetFloat64TYPE *set3;
    fmi3DoStepTYPE *step3;
    fmi3GetFloat64TYPE *get3;
    fmi3TerminateTYPE *terminate3;
    fmi3FreeInstanceTYPE *free3;
    /* Model Exchange (me = 1 Euler, 4 RK4; 0: co-simulation): the harness integrates nx states */
    int me;
    size_t nx;
    double *x, *xs, *k[4];
    void *call[7];                      /* the ME calls of the FMU's version, in the order of ME_CALLS */
} Plant;

/* The Model Exchange calls a rig's solver makes, FMI 2.0 and 3.0 names (Plant.call: looked up once) */
enum { ME_TIME, ME_STATES, ME_DERIVATIVES, ME_COMPLETED, ME_EVENT, ME_DISCRETE, ME_CONTINUOUS };
static const char *const ME_CALLS[7][2] = {
    {"fmi2SetTime", "fmi3SetTime"},
    {"fmi2SetContinuousStates", "fmi3SetContinuousStates"},
    {"fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives"},
    {"fmi2CompletedIntegratorStep", "fmi3CompletedIntegratorStep"},
    {"fmi2EnterEventMode", "fmi3EnterEventMode"},
    {"fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates"},
    {"fmi2EnterContinuousTimeMode", "fmi3EnterContinuousTimeMode"},
};
/* Plant p's Model Exchange call k as the function type `type` of its FMI version */
#define ME_CALL(p, k, type) ((type##TYPE *)(p)->call[k])

static int plant_set(const Plant *p, const fmi2ValueReference *vr, size_t n, const double *v) {
    return p->v3 ? (int)p->set3(p->inst, vr, n, v, n) : (int)p->set2(p->inst, vr, n, v);
}

/* A Model Exchange call k whose only argument is the instance (ME_EVENT, ME_CONTINUOUS: the same signature in
 * both versions). */
static int plant_call(const Plant *p, int k) {
    return p->v3 ? (int)ME_CALL(p, k, fmi3EnterEventMode)(p->inst) : (int)ME_CALL(p, k, fmi2EnterEventMode)(p->inst);
}

/* One update of the discrete states: its status; whether another is needed and whether the FMU asks to stop. */
static int plant_discrete(const Plant *p, int *need, int *stop) {
    if (p->v3) {
        fmi3Boolean n, f, nominals, values, timed;
        fmi3Float64 next;
        int st = (int)ME_CALL(p, ME_DISCRETE, fmi3UpdateDiscreteStates)(p->inst, &n, &f, &nominals, &values, &timed,
                                                                        &next);
        *need = n, *stop = f;
        return st;
    }
    fmi2EventInfo info;
    int st = (int)ME_CALL(p, ME_DISCRETE, fmi2NewDiscreteStates)(p->inst, &info);
    *need = info.newDiscreteStatesNeeded, *stop = info.terminateSimulation;
    return st;
}

/* Model Exchange: event mode, discrete states until none are needed, continuous-time mode (after the
 * initialization, and where a completed step asks for an event). Its worst status. */
static int plant_events(const Plant *p, int enter) {
    int st = enter ? plant_call(p, ME_EVENT) : fmi2OK, more = 1;
    for (int i = 0; more && st <= fmi2Warning && i < 100; ++i) {
        int stop, u = plant_discrete(p, &more, &stop);
        if (u > st) st = u;
        if (stop) st = fmi2Error;
    }
    if (st <= fmi2Warning) {
        int c = plant_call(p, ME_CONTINUOUS);
        if (c > st) st = c;
    }
    return st;
}

/* The time, then the continuous states set: their worst status. */
static int plant_set_point(const Plant *p, double t, const double *x) {
    int st = p->v3 ? (int)ME_CALL(p, ME_TIME, fmi3SetTime)(p->inst, t)
                   : (int)ME_CALL(p, ME_TIME, fmi2SetTime)(p->inst, t);
    if (st > fmi2Warning) return st;
    int s = p->v3 ? (int)ME_CALL(p, ME_STATES, fmi3SetContinuousStates)(p->inst, x, p->nx)
                  : (int)ME_CALL(p, ME_STATES, fmi2SetContinuousStates)(p->inst, x, p->nx);
    return s > st ? s : st;
}

/* One stage of the rig's solver: dx = f(t, x), the time and states set first. */
static int plant_derivatives(const Plant *p, double t, const double *x, double *dx) {
    int st = plant_set_point(p, t, x);
    if (st <= fmi2Warning) {
        int d = p->v3 ? (int)ME_CALL(p, ME_DERIVATIVES, fmi3GetContinuousStateDerivatives)(p->inst, dx, p->nx)
                        : (int)ME_CALL(p, ME_DERIVATIVES, fmi2GetDerivatives)(p->inst, dx, p->nx);
        if (d > st) st = d;
    }
    return st;
}

/* A fixed step of explicit Euler or classical RK4 from (t, p->x), then the new time and states set and the step
 * completed. A derivative call answering Discard (not finite) or worse ends the step with that status. */
static int plant_me_step(const Plant *p, double t, double h) {
    size_t n = p->nx;
    double *x = p->x, *xs = p->xs, **k = (double **)p->k;
    int st = plant_derivatives(p, t, x, k[0]);
    if (p->me == 4) {
        static const double c[3] = {0.5, 0.5, 1.0};
        for (int j = 0; j < 3 && st <= fmi2Warning; ++j) {
            for (size_t i = 0; i < n; ++i) xs[i] = x[i] + c[j] * h * k[j][i];
            int d = plant_derivatives(p, t + c[j] * h, xs, k[j + 1]);
            if (d > st) st = d;
        }
        if (st > fmi2Warning) return st;
        for (size_t i = 0; i < n; ++i) x[i] += h / 6.0 * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]);
    } else {
        if (st > fmi2Warning) return st;
        for (size_t i = 0; i < n; ++i) x[i] += h * k[0][i];
    }
    int s = plant_set_point(p, t + h, x);
    if (s > st) st = s;
    if (st > fmi2Warning) return st;
    int event, stop;
    if (p->v3) {
        fmi3Boolean e, f;
        s = (int)ME_CALL(p, ME_COMPLETED, fmi3CompletedIntegratorStep)(p->inst, fmi3True, &e, &f);
        event = e, stop = f;
    } else {
        fmi2Boolean e, f;
        s = (int)ME_CALL(p, ME_COMPLETED, fmi2CompletedIntegratorStep)(p->inst, fmi2True, &e, &f);
        event = e, stop = f;
    }
    if (s > st) st = s;
    if (stop && st <= fmi2Warning) {
        fprintf(stderr, "the FMU asked to terminate the simulation at t = %g s\n", t + h);
        st = fmi2Error;
    }
    if (event && st <= fmi2Warning) {
        s = plant_events(p, 1);
        if (s > st) st = s;
    }
    return st;
}

static int plant_step(const Plant *p, double t, double dt) {
    if (p->me) return plant_me_step(p, t, dt);
    if (!p->v3) return (int)p->step2(p->inst, t, dt, fmi2True);
    fmi3Boolean event, stop, early;
    fmi3Float64 reached;
    return (int)p->step3(p->inst, t, dt, fmi3True, &event, &stop, &early, &reached);
}

static int plant_get(const Plant *p, const fmi2ValueReference *vr, size_t n, double *out, size_t nvalues) {
    return p->v3 ? (int)p->get3(p->inst, vr, n, out, nvalues) : (int)p->get2(p->inst, vr, n, out);
}

/* FMI 3.0 Float64 arrays set, one fmi3SetFloat64 each (values at[i] .. at[i + 1] of v); 0 if one failed. */
static int arrays_set(const Plant *p, const fmi3ValueReference *vr, const size_t *at, const double *v, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (p->set3(p->inst, &vr[i], 1, &v[at[i]], at[i + 1] - at[i]) > fmi3Warning) return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: %s BINARY RESOURCES_URI GUID STEPS RATE_HZ CPU OUTPUT_VRS [VR=V | VR:i=V | VR:b=V ...] "
                "[step=S]\n",
                argv[0]);
        return 2;
    }
    long steps = atol(argv[4]);
    double rate = atof(argv[5]);
    int cpu = atoi(argv[6]);
    if (steps < 1 || !(rate >= 0.0)) {
        fprintf(stderr, "STEPS must be >= 1 and RATE_HZ >= 0\n");
        return 2;
    }
    static fmi2ValueReference vrs[MAXV], real_vr[MAXV], int_vr[MAXV], bool_vr[MAXV], vary_vr[MAXV], enum_vr[MAXV],
        config_vr[MAXV];
    static fmi3Int64 enum_v[MAXV];
    static fmi3ValueReference array_vr[MAXV];
    static size_t array_at[MAXV + 1];
    static double array_v[MAXV];
    size_t narray = 0;
    static fmi3Int32 config_v[MAXV];
    static fmi2Real out[MAXV], real_v[MAXV], vary_v0[MAXV], vary_a[MAXV], vary_v[MAXV];
    static fmi2Integer int_v[MAXV];
    static fmi2Boolean bool_v[MAXV];
    size_t nout = 0, nreal = 0, nint = 0, nbool = 0, nvary = 0, nenum = 0, nconfig = 0, nvalues = 0;
    int v3 = 0;
    for (char *p = argv[7]; *p && nout < MAXV; ++nout) {
        vrs[nout] = (fmi2ValueReference)strtoul(p, &p, 10);
        if (*p == ',') ++p;
    }
    double back_step = 1e-3;
    int me = 0;
    size_t me_nx = 0;
    for (int a = 8; a < argc; ++a) {
        char *p;
        if (!strncmp(argv[a], "me=", 3)) {
            me = (int)strtol(argv[a] + 3, &p, 10);
            me_nx = *p == ',' ? (size_t)strtoul(p + 1, &p, 10) : 0;
            if (*p || (me != 1 && me != 4) || me_nx < 1 || me_nx > MAXV) {
                fprintf(stderr, "bad %s: me=S,NX with S 1 (Euler) or 4 (RK4) and 1 to %d continuous states\n",
                        argv[a], MAXV);
                return 2;
            }
            continue;
        }
        if (!strncmp(argv[a], "step=", 5)) {
            back_step = strtod(argv[a] + 5, &p);
            if (*p || !(back_step > 0.0) || rate > 0.0) {
                fprintf(stderr, "bad %s: a back-to-back run's communication step, > 0 (RATE_HZ 0)\n", argv[a]);
                return 2;
            }
            continue;
        }
        if (!strncmp(argv[a], "fmi3=", 5)) {
            v3 = 1;
            nvalues = (size_t)strtoul(argv[a] + 5, &p, 10);
            if (*p || nvalues > MAXV) {
                fprintf(stderr, "bad %s: fmi3=NVALUES, the number of output values (at most %d)\n", argv[a], MAXV);
                return 2;
            }
            continue;
        }
        if (!strncmp(argv[a], "vary=", 5)) {
            p = argv[a] + 5;
            unsigned long vr = strtoul(p, &p, 10);
            double v0 = *p == ',' ? strtod(p + 1, &p) : NAN;
            double amp = *p == ',' ? strtod(p + 1, &p) : NAN;
            if (*p || !isfinite(v0) || !isfinite(amp) || nvary >= MAXV) {
                fprintf(stderr, "bad %s: vary=VR,V0,A with a finite start value V0 and amplitude A\n", argv[a]);
                return 2;
            }
            vary_vr[nvary] = (fmi2ValueReference)vr;
            vary_v0[nvary] = v0;
            vary_a[nvary++] = amp;
            continue;
        }
        unsigned long vr = strtoul(argv[a], &p, 10);
        if (!strncmp(p, ":a=", 3) && narray < MAXV) {
            array_vr[narray] = (fmi3ValueReference)vr;
            size_t n = array_at[narray];
            for (p += 3; n < MAXV; ++n) {
                char *end;
                array_v[n] = strtod(p, &end);
                if (end == p) break;
                p = *end == ',' ? end + 1 : end;
                if (*end != ',') {
                    ++n;
                    break;
                }
            }
            if (*p || n == array_at[narray]) {
                fprintf(stderr, "bad start values %s\n", argv[a]);
                return 2;
            }
            array_at[++narray] = n;
        } else if (!strncmp(p, ":e=", 3) && nenum < MAXV) {
            enum_vr[nenum] = (fmi2ValueReference)vr;
            enum_v[nenum++] = atoll(p + 3);
        } else if (!strncmp(p, ":c=", 3) && nconfig < MAXV) {
            config_vr[nconfig] = (fmi2ValueReference)vr;
            config_v[nconfig++] = atoi(p + 3);
        } else if (!strncmp(p, ":i=", 3) && nint < MAXV) {
            int_vr[nint] = (fmi2ValueReference)vr;
            int_v[nint++] = atoi(p + 3);
        } else if (!strncmp(p, ":b=", 3) && nbool < MAXV) {
            bool_vr[nbool] = (fmi2ValueReference)vr;
            bool_v[nbool++] = atoi(p + 3) != 0;
        } else if (*p == '=' && nreal < MAXV) {
            real_vr[nreal] = (fmi2ValueReference)vr;
            real_v[nreal++] = strtod(p + 1, NULL);
        } else {
            fprintf(stderr, "bad start value %s\n", argv[a]);
            return 2;
        }
    }
    int spin = !strcmp(argv[1], "--spin");
    if (spin && me) {
        fprintf(stderr, "--spin steps no FMU: me= does not apply\n");
        return 2;
    }
    void *lib = NULL;
    if (spin) {
        spin_n = atol(argv[2]);
    } else if (!(lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
        return 3;
    }
#define FN(name, stub) name##TYPE *name = spin ? stub : v3 ? NULL : (name##TYPE *)need(lib, #name)
    FN(fmi2Instantiate, spin_instantiate);
    FN(fmi2SetupExperiment, spin_setup);
    FN(fmi2EnterInitializationMode, spin_mode);
    FN(fmi2ExitInitializationMode, spin_mode);
    FN(fmi2SetReal, spin_real);
    FN(fmi2SetInteger, spin_int);
    FN(fmi2SetBoolean, spin_bool);
    FN(fmi2GetReal, spin_get);
    FN(fmi2DoStep, spin_step);
    FN(fmi2Terminate, spin_mode);
    FN(fmi2FreeInstance, spin_free);

    int64_t *t_ns = (int64_t *)malloc((size_t)steps * sizeof *t_ns);
    if (!t_ns) {
        fprintf(stderr, "no memory for %ld step times\n", steps);
        return 3;
    }
    memset(t_ns, 0, (size_t)steps * sizeof *t_ns);             /* touched: no page fault in the loop */

    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    Plant pl = {.v3 = v3, .set2 = fmi2SetReal, .step2 = fmi2DoStep, .get2 = fmi2GetReal, .me = me, .nx = me_nx};
    static double me_x[MAXV], me_xs[MAXV], me_k[4][MAXV];
    pl.x = me_x, pl.xs = me_xs;
    for (int j = 0; j < 4; ++j) pl.k[j] = me_k[j];
    for (int k = 0; me && k < 7; ++k) pl.call[k] = need(lib, ME_CALLS[k][v3]);
    if (v3) {
#define FN3(name) name##TYPE *name = (name##TYPE *)need(lib, #name)
        FN3(fmi3InstantiateCoSimulation);
        FN3(fmi3EnterConfigurationMode);
        FN3(fmi3ExitConfigurationMode);
        FN3(fmi3EnterInitializationMode);
        FN3(fmi3ExitInitializationMode);
        FN3(fmi3SetInt32);
        FN3(fmi3SetInt64);
        FN3(fmi3SetBoolean);
        pl.set3 = (fmi3SetFloat64TYPE *)need(lib, "fmi3SetFloat64");
        pl.step3 = (fmi3DoStepTYPE *)need(lib, "fmi3DoStep");
        pl.get3 = (fmi3GetFloat64TYPE *)need(lib, "fmi3GetFloat64");
        pl.terminate3 = (fmi3TerminateTYPE *)need(lib, "fmi3Terminate");
        pl.free3 = (fmi3FreeInstanceTYPE *)need(lib, "fmi3FreeInstance");
        static fmi3Boolean bools[MAXV];
        for (size_t i = 0; i < nbool; ++i) bools[i] = bool_v[i] != 0;
        fmi3Int32 ints[MAXV];
        for (size_t i = 0; i < nint; ++i) ints[i] = (fmi3Int32)int_v[i];
        if (me) {
            FN3(fmi3InstantiateModelExchange);
            pl.inst = fmi3InstantiateModelExchange("rt-bench", argv[3], argv[2], fmi3False, fmi3False, NULL, logger3);
        } else {
            pl.inst = fmi3InstantiateCoSimulation("rt-bench", argv[3], argv[2], fmi3False, fmi3False, fmi3False,
                                                  fmi3False, NULL, 0, NULL, logger3, NULL);
        }
        if (!pl.inst ||
            (nconfig && (fmi3EnterConfigurationMode(pl.inst) > fmi3Warning ||
                         fmi3SetInt32(pl.inst, config_vr, nconfig, config_v, nconfig) > fmi3Warning ||
                         fmi3ExitConfigurationMode(pl.inst) > fmi3Warning)) ||
            fmi3EnterInitializationMode(pl.inst, fmi3False, 0.0, 0.0, fmi3False, 0.0) > fmi3Warning ||
            (nreal && pl.set3(pl.inst, real_vr, nreal, real_v, nreal) > fmi3Warning) ||
            (nenum && fmi3SetInt64(pl.inst, enum_vr, nenum, enum_v, nenum) > fmi3Warning) ||
            (nint && fmi3SetInt32(pl.inst, int_vr, nint, ints, nint) > fmi3Warning) ||
            (nbool && fmi3SetBoolean(pl.inst, bool_vr, nbool, bools, nbool) > fmi3Warning) ||
            !arrays_set(&pl, array_vr, array_at, array_v, narray) ||
            fmi3ExitInitializationMode(pl.inst) > fmi3Warning) {
            fprintf(stderr, "the FMU did not initialize\n");
            return 4;
        }
    } else {
        pl.inst = fmi2Instantiate("rt-bench", me ? fmi2ModelExchange : fmi2CoSimulation, argv[3], argv[2], &cb,
                                  fmi2False, fmi2False);
        if (nenum || nconfig || narray) {
            fprintf(stderr, "VR:e=, VR:c= and VR:a= values are for FMI 3.0 FMUs (fmi3=NVALUES)\n");
            return 2;
        }
        if (!pl.inst || fmi2SetupExperiment(pl.inst, fmi2False, 0.0, 0.0, fmi2False, 0.0) > fmi2Warning ||
            (nreal && fmi2SetReal(pl.inst, real_vr, nreal, real_v) > fmi2Warning) ||
            (nint && fmi2SetInteger(pl.inst, int_vr, nint, int_v) > fmi2Warning) ||
            (nbool && fmi2SetBoolean(pl.inst, bool_vr, nbool, bool_v) > fmi2Warning) ||
            fmi2EnterInitializationMode(pl.inst) > fmi2Warning || fmi2ExitInitializationMode(pl.inst) > fmi2Warning) {
            fprintf(stderr, "the FMU did not initialize\n");
            return 4;
        }
        nvalues = nout;
    }
    if (me) {                           /* event mode after the initialization: to continuous time, the states */
        size_t n = me_nx;
        int st = plant_events(&pl, 0);
        if (v3 && st <= fmi2Warning) {
            FN3(fmi3GetNumberOfContinuousStates);
            st = (int)fmi3GetNumberOfContinuousStates(pl.inst, &n);
        }
        if (st > fmi2Warning || n < 1 || n > MAXV) {
            fprintf(stderr, st > fmi2Warning ? "the FMU did not enter continuous-time mode\n"
                                             : "the FMU has %zu continuous states (at most %d here)\n", n, MAXV);
            return 4;
        }
        pl.nx = me_nx = n;
        st = v3 ? (int)((fmi3GetContinuousStatesTYPE *)need(lib, "fmi3GetContinuousStates"))(pl.inst, me_x, n)
                : (int)((fmi2GetContinuousStatesTYPE *)need(lib, "fmi2GetContinuousStates"))(pl.inst, me_x, n);
        if (st > fmi2Warning) {
            fprintf(stderr, "the FMU did not give its continuous states\n");
            return 4;
        }
    }
    /* What the system grants, asked for once everything is allocated and the FMU initialized (a memory lock
     * with MCL_FUTURE would make later allocations fail beyond RLIMIT_MEMLOCK); each reported. */
    int locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0;
    /* Paced only: back to back, a real-time task would use the whole CPU and the kernel's real-time bandwidth
     * limit (sched_rt_runtime_us, 0.95 s per s by default) would stop it for ~50 ms each second. */
    struct sched_param sp = {.sched_priority = 80};
    int fifo = rate > 0.0 && sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    int pinned = 0;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        pinned = sched_setaffinity(0, sizeof set, &set) == 0;
    }
    double dt = rate > 0.0 ? 1.0 / rate : back_step;
    int64_t period = rate > 0.0 ? (int64_t)(1e9 / rate + 0.5) : 0;
    long done = 0, overruns = 0;
    int worst = fmi2OK;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    int64_t start = now_ns();
    for (long k = 0; k < steps; ++k) {
        if (period) {
            next.tv_nsec += period;
            while (next.tv_nsec >= 1000000000) {
                next.tv_nsec -= 1000000000;
                next.tv_sec += 1;
            }
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {
            }
        }
        int64_t t0 = now_ns();
        int st = fmi2OK;
        if (nvary) {
            double w = sin(6.283185307179586 * (double)k * dt);
            for (size_t i = 0; i < nvary; ++i) vary_v[i] = vary_v0[i] + vary_a[i] * w;
            st = plant_set(&pl, vary_vr, nvary, vary_v);
        }
        if (st <= fmi2Warning) {
            int d = plant_step(&pl, (double)k * dt, dt);
            if (d > st) st = d;
        }
        if (st <= fmi2Warning) {
            int g = plant_get(&pl, vrs, nout, out, nvalues);
            if (g > st) st = g;
        }
        int64_t t1 = now_ns();
        t_ns[k] = t1 - t0;
        if (period && t1 - t0 > period) ++overruns;
        if (st > worst) worst = st;
        done = k + 1;
        if (st > fmi2Warning) break;
    }
    double wall = (double)(now_ns() - start) * 1e-9;
    quiet_errors = 1;
    if (v3) {
        pl.terminate3(pl.inst);
        pl.free3(pl.inst);
    } else {
        fmi2Terminate(pl.inst);
        fmi2FreeInstance(pl.inst);
    }
    double mean = 0.0;
    for (long k = 0; k < done; ++k) mean += (double)t_ns[k];
    mean /= (double)done;
    qsort(t_ns, (size_t)done, sizeof *t_ns, by_value);
#define AT(p) t_ns[(long)((p) * (double)(done - 1) + 0.5)]
    printf("memory_locked %d\nsched_fifo %d\npinned_cpu %d\nsteps %ld\nrate_hz %.17g\ncommunication_step_s %.17g\n"
           "wall_s %.6f\nmedian_ns %lld\np99_ns %lld\np9999_ns %lld\nmax_ns %lld\nmean_ns %.1f\nmin_ns %lld\n"
           "overruns %ld\nvaried_inputs %zu\nfmi_version %d\nmodel_exchange %d\nstatus %d\n",
           locked, fifo, pinned ? cpu : -1, done, rate, dt, wall, (long long)AT(0.5), (long long)AT(0.99),
           (long long)AT(0.9999), (long long)t_ns[done - 1], mean, (long long)t_ns[0], overruns, nvary, v3 ? 3 : 2,
           me, worst);
    printf("outputs");                  /* the outputs after the last step that completed (hexadecimal: exact) */
    for (size_t i = 0; i < nvalues && worst <= fmi2Warning; ++i) printf("%c%a", i ? ',' : ' ', out[i]);
    printf("\n");
    free(t_ns);
    return worst > fmi2Warning ? 5 : 0;
}
