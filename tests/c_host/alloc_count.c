/* Counts the heap calls of a process (LD_PRELOAD): malloc, calloc, realloc, free, posix_memalign and
 * aligned_alloc go to glibc's own (__libc_*) and are counted; alloc_live() is the number of blocks
 * allocated and not freed, alloc_calls() the number of allocating calls so far. Linux, glibc. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static long live_blocks, calls;

long alloc_live(void) { return __atomic_load_n(&live_blocks, __ATOMIC_SEQ_CST); }
long alloc_calls(void) { return __atomic_load_n(&calls, __ATOMIC_SEQ_CST); }

static void *counted(void *p) {
    __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    if (p) __atomic_add_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
    return p;
}

void *malloc(size_t n) { return counted(__libc_malloc(n)); }
void *calloc(size_t n, size_t m) { return counted(__libc_calloc(n, m)); }

void free(void *p) {
    if (p) __atomic_sub_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
    __libc_free(p);
}

void *realloc(void *p, size_t n) {
    if (!p) return malloc(n);
    __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    void *q = __libc_realloc(p, n);
    if (!q && n == 0) __atomic_sub_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
    return q;
}

void *memalign(size_t a, size_t n) { return counted(__libc_memalign(a, n)); }
void *aligned_alloc(size_t a, size_t n) { return counted(__libc_memalign(a, n)); }

int posix_memalign(void **out, size_t a, size_t n) {
    void *p = counted(__libc_memalign(a, n));
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
