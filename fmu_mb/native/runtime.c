/* The part of numba's runtime (numba/core/runtime/nrt.cpp) that fmu_mb's compiled kernels use (and, at the end,
 * numba's helper for complex powers):
 * the boxes of the Model/Data StructRefs each entry builds (kernels.handles, native.library).
 * The layout of NRT_MemInfo is numba's (the compiled code reads refct and data in place).
 * Boxes are recycled through a small per-thread cache: after the first call of an entry on a
 * thread no entry allocates; instances stepping in parallel threads share nothing; a thread's
 * cache is freed when the thread ends. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*NRT_dtor_function)(void *ptr, size_t size, void *info);

typedef struct NRT_MemInfo {
    size_t refct;                  /* std::atomic_size_t in numba: same size and alignment */
    NRT_dtor_function dtor;
    void *dtor_info;
    void *data;
    size_t size;
    void *external_allocator;
} NRT_MemInfo;

#define CACHE_SLOTS 8

/* The calling thread's cache, and its release when the thread ends (a thread pool's threads come
 * and go: their boxes go with them). Windows: a fiber-local slot whose callback frees the cache
 * (the slot is released when the library unloads). Linux: a thread-local array and the C library's
 * thread-exit destructor (__cxa_thread_atexit_impl, glibc >= 2.18; also what keeps the library
 * mapped until the threads that used it end); without it the boxes stay, as before. */
static void free_boxes(NRT_MemInfo **slots) {
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(slots[i]);
        slots[i] = NULL;
    }
}

#if defined(_WIN32)
#include <windows.h>
static DWORD fls_slot = FLS_OUT_OF_INDEXES;
static INIT_ONCE fls_once = INIT_ONCE_STATIC_INIT;

static VOID WINAPI release_cache(PVOID cache) {
    if (!cache) return;
    free_boxes((NRT_MemInfo **)cache);
    free(cache);
}

static BOOL CALLBACK make_slot(PINIT_ONCE once, PVOID param, PVOID *context) {
    (void)once; (void)param; (void)context;
    fls_slot = FlsAlloc(release_cache);
    return TRUE;
}

__attribute__((destructor)) static void release_slot(void) {
    if (fls_slot != FLS_OUT_OF_INDEXES) FlsFree(fls_slot);        /* runs every thread's callback */
}

/* This thread's cache (NULL when no slot or memory: then nothing is cached). */
static NRT_MemInfo **thread_cache(void) {
    InitOnceExecuteOnce(&fls_once, make_slot, NULL, NULL);
    if (fls_slot == FLS_OUT_OF_INDEXES) return NULL;
    NRT_MemInfo **cache = (NRT_MemInfo **)FlsGetValue(fls_slot);
    if (!cache) {
        cache = (NRT_MemInfo **)calloc(CACHE_SLOTS, sizeof *cache);
        if (cache && !FlsSetValue(fls_slot, cache)) {
            free(cache);
            cache = NULL;
        }
    }
    return cache;
}
#else
extern int __cxa_thread_atexit_impl(void (*dtor)(void *), void *obj, void *dso_symbol) __attribute__((weak));
extern void *__dso_handle __attribute__((weak));
static _Thread_local NRT_MemInfo *slots[CACHE_SLOTS];
static _Thread_local int registered;

static void release_cache(void *cache) { free_boxes((NRT_MemInfo **)cache); }

static NRT_MemInfo **thread_cache(void) {
    if (!registered) {
        registered = 1;
        if (__cxa_thread_atexit_impl) __cxa_thread_atexit_impl(release_cache, slots, &__dso_handle);
    }
    return slots;
}
#endif

static void custom_dtor(void *ptr, size_t size, void *info) {
    NRT_dtor_function dtor = (NRT_dtor_function)info;
    if (dtor) dtor(ptr, size, NULL);
}

NRT_MemInfo *NRT_MemInfo_alloc_dtor(size_t size, NRT_dtor_function dtor) {
    NRT_MemInfo *mi = NULL, **cache = thread_cache();
    for (int i = 0; cache && i < CACHE_SLOTS; i++) {
        if (cache[i] && cache[i]->size == size) {
            mi = cache[i];
            cache[i] = NULL;
            break;
        }
    }
    if (!mi) {
        mi = (NRT_MemInfo *)malloc(sizeof(NRT_MemInfo) + size + 16);
        if (!mi) return NULL;
        mi->data = (void *)(((uintptr_t)(mi + 1) + 15) & ~(uintptr_t)15);
        mi->size = size;
    }
    mi->refct = 1;
    mi->dtor = custom_dtor;
    mi->dtor_info = (void *)dtor;
    mi->external_allocator = NULL;
    return mi;
}

void NRT_MemInfo_call_dtor(NRT_MemInfo *mi) {
    NRT_MemInfo **cache = thread_cache();
    if (mi->dtor) mi->dtor(mi->data, mi->size, mi->dtor_info);
    for (int i = 0; cache && i < CACHE_SLOTS; i++) {
        if (!cache[i]) {
            cache[i] = mi;
            return;
        }
    }
    free(mi);
}

/* numba's helper for complex ** complex (numba/_helperlib.c numba_cpow: CPython's _Py_c_pow, NaN where CPython
 * raises), which the complex-step kernels call (kernels.jacobian: a power of a complex-step value). */
#include <math.h>

typedef struct {
    double real, imag;
} numba_complex;

void numba_cpow(numba_complex *a, numba_complex *b, numba_complex *out) {
    if (b->real == 0.0 && b->imag == 0.0) {
        out->real = 1.0;
        out->imag = 0.0;
    } else if (a->real == 0.0 && a->imag == 0.0) {
        out->real = out->imag = (b->imag != 0.0 || b->real < 0.0) ? NAN : 0.0;
    } else {
        double vabs = hypot(a->real, a->imag), len = pow(vabs, b->real), at = atan2(a->imag, a->real);
        double phase = at * b->real;
        if (b->imag != 0.0) {
            len /= exp(at * b->imag);
            phase += b->imag * log(vabs);
        }
        out->real = len * cos(phase);
        out->imag = len * sin(phase);
    }
}
