/* Counts the heap calls of a process (LD_PRELOAD): malloc, calloc, realloc, free, posix_memalign and
 * aligned_alloc go to glibc's own (__libc_*) and are counted, and so are mmap and munmap (made as system calls
 * here; glibc's malloc maps its large blocks internally, so a block is not counted twice); alloc_live() is the
 * number of blocks allocated and not freed, alloc_calls() the number of allocating calls so far. Linux, glibc. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

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

void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off) {
    __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    return (void *)syscall(SYS_mmap, addr, n, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t n, int prot, int flags, int fd, off_t off) { return mmap(addr, n, prot, flags, fd, off); }

int munmap(void *addr, size_t n) {
    __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    return (int)syscall(SYS_munmap, addr, n);
}
