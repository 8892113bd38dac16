/* The part of numba's runtime (numba/core/runtime/nrt.cpp) that fmu_mb's compiled kernels use (and, at the end,
 * numba's helper for complex powers):
 * the boxes of the Model/Data StructRefs the entries build, one per address block, kept in its header word
 * (kernels.handles, native.library), and their release (fmu_mb_release_block).
 * The layout of NRT_MemInfo is numba's (the compiled code reads data in place). The compiled code counts no
 * references (fmu_mb.native.library.without_reference_counts): a box keeps the one its header word holds from its
 * build to fmu_mb_release_block, which drops it.
 * Boxes are recycled through one process-wide pool, lock-free: a released box goes into a free slot of its
 * size's class (compare-and-swap), a box is taken by exchanging a slot with NULL (each slot is its own atomic
 * cell, so no ABA problem). After the first calls of the entries on any thread no entry allocates on any
 * thread: a real-time thread that steps an FMU another thread initialized makes no heap call, takes no lock and
 * registers nothing (a per-thread cache did all three on a thread's first call). The pool is bounded (a box
 * without a free slot is freed) and freed when the library unloads; threads leave nothing behind. */
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

/* Size classes (the StructRefs of Model, Data and the complex Data: three sizes) and slots per class (boxes
 * alive at once: two or three per entry call, per instance stepping at the same time). */
#define POOL_CLASSES 8
#define POOL_SLOTS 32
static size_t pool_size[POOL_CLASSES];                   /* 0: unclaimed; set once, by compare-and-swap */
static NRT_MemInfo *pool[POOL_CLASSES][POOL_SLOTS];

/* The class of boxes of `size` (claimed if `claim` and none is), or -1. */
static int pool_class(size_t size, int claim) {
    for (int c = 0; c < POOL_CLASSES; c++) {
        size_t s = __atomic_load_n(&pool_size[c], __ATOMIC_ACQUIRE);
        if (s == size) return c;
        if (s == 0) {
            if (!claim) return -1;
            if (__atomic_compare_exchange_n(&pool_size[c], &s, size, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
                s == size)
                return c;
        }
    }
    return -1;
}

__attribute__((destructor)) static void release_pool(void) {
    for (int c = 0; c < POOL_CLASSES; c++)
        for (int i = 0; i < POOL_SLOTS; i++) free(__atomic_exchange_n(&pool[c][i], NULL, __ATOMIC_ACQ_REL));
}

static void custom_dtor(void *ptr, size_t size, void *info) {
    NRT_dtor_function dtor = (NRT_dtor_function)info;
    if (dtor) dtor(ptr, size, NULL);
}

NRT_MemInfo *NRT_MemInfo_alloc_dtor(size_t size, NRT_dtor_function dtor) {
    NRT_MemInfo *mi = NULL;
    int c = pool_class(size, 0);
    for (int i = 0; c >= 0 && !mi && i < POOL_SLOTS; i++) {
        if (__atomic_load_n(&pool[c][i], __ATOMIC_RELAXED)) mi = __atomic_exchange_n(&pool[c][i], NULL, __ATOMIC_ACQ_REL);
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
    if (mi->dtor) mi->dtor(mi->data, mi->size, mi->dtor_info);
    int c = pool_class(mi->size, 1);
    for (int i = 0; c >= 0 && i < POOL_SLOTS; i++) {
        NRT_MemInfo *empty = NULL;
        if (!__atomic_load_n(&pool[c][i], __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&pool[c][i], &empty, mi, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return;
    }
    free(mi);
}

/* Release the struct an address block keeps in its header word (fmu_mb.native.library's decoders build it on the
 * block's first use and hold one reference to its box there): that reference is dropped (the box back to the pool
 * when it was the last) and the word set to 0. For the owner of the block, before it frees it; a block whose word
 * is 0 is left as it is. */
#if defined(_WIN32)
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
void fmu_mb_release_block(int64_t *block) {
    if (!block || !block[0]) return;
    NRT_MemInfo *mi = (NRT_MemInfo *)(intptr_t)block[0];
    block[0] = 0;
    if (__atomic_sub_fetch(&mi->refct, 1, __ATOMIC_ACQ_REL) == 0) NRT_MemInfo_call_dtor(mi);
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
