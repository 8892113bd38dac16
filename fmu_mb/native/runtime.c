/* The part of numba's runtime (numba/core/runtime/nrt.cpp) that fmu_mb's compiled kernels use:
 * the boxes of the Model/Data StructRefs each entry builds (kernels.handles, native.library).
 * The layout of NRT_MemInfo is numba's (the compiled code reads refct and data in place).
 * Boxes are recycled through a small per-thread cache: after the first call of an entry on a
 * thread no entry allocates; instances stepping in parallel threads share nothing. */
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

#if defined(_MSC_VER)
#define THREAD_LOCAL __declspec(thread)
#else
#define THREAD_LOCAL _Thread_local
#endif

#define CACHE_SLOTS 8
static THREAD_LOCAL NRT_MemInfo *cache[CACHE_SLOTS];

static void custom_dtor(void *ptr, size_t size, void *info) {
    NRT_dtor_function dtor = (NRT_dtor_function)info;
    if (dtor) dtor(ptr, size, NULL);
}

NRT_MemInfo *NRT_MemInfo_alloc_dtor(size_t size, NRT_dtor_function dtor) {
    NRT_MemInfo *mi = NULL;
    for (int i = 0; i < CACHE_SLOTS; i++) {
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
    if (mi->dtor) mi->dtor(mi->data, mi->size, mi->dtor_info);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (!cache[i]) {
            cache[i] = mi;
            return;
        }
    }
    free(mi);
}
