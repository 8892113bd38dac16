/* Threads that call the runtime's box allocator (fmu_mb/native/runtime.c built as a shared library, loaded
 * as a host loads an FMU) and end: nothing may grow with their number (the boxes live in one bounded pool).
 *
 *   thread_exit LIBRARY THREADS     start and join THREADS threads, each allocating and releasing boxes;
 *                                   then a thread keeps its cache while the library is unloaded, and
 *                                   the whole round runs three times. Prints the peak memory (KiB: resident
 *                                   on Linux, committed on Windows) after the threads. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include "dynload.h"
#ifdef _WIN32
#include <windows.h>
#include <psapi.h>
static void close_library(void *h) { FreeLibrary((HMODULE)h); }
#else
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
static void close_library(void *h) { dlclose(h); }
#endif

typedef void *(*alloc_fn)(size_t size, void *dtor);
typedef void (*release_fn)(void *box);
static alloc_fn box_alloc;
static release_fn box_release;
static volatile int hold;

static void work(void) {
    for (int k = 0; k < 50; k++) {
        void *a = box_alloc(64, NULL), *b = box_alloc(256, NULL);
        box_release(a);
        box_release(b);
    }
    while (hold) {
    }
}

#ifdef _WIN32
static DWORD WINAPI run(LPVOID p) { (void)p; work(); return 0; }
typedef HANDLE thread_t;
static thread_t start(void) { return CreateThread(NULL, 0, run, NULL, 0, NULL); }
static void join(thread_t t) { WaitForSingleObject(t, INFINITE); CloseHandle(t); }
static void nap(void) { Sleep(20); }
static long peak_kib(void) {
    PROCESS_MEMORY_COUNTERS c;
    return K32GetProcessMemoryInfo(GetCurrentProcess(), &c, sizeof c) ? (long)(c.PeakPagefileUsage / 1024) : -1;
}
#else
static void *run(void *p) { (void)p; work(); return NULL; }
typedef pthread_t thread_t;
static thread_t start(void) { pthread_t t; pthread_create(&t, NULL, run, NULL); return t; }
static void join(thread_t t) { pthread_join(t, NULL); }
static void nap(void) { struct timespec ts = {0, 20000000}; nanosleep(&ts, NULL); }
/* VmHWM (getrusage's ru_maxrss keeps the parent's peak across fork and exec) */
static long peak_kib(void) {
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}
#endif

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: thread_exit LIBRARY THREADS\n");
        return 2;
    }
    int n = atoi(argv[2]);
    for (int round = 0; round < 3; round++) {
        void *lib = open_library(argv[1]);
        if (!lib) {
            fprintf(stderr, "cannot load %s\n", argv[1]);
            return 3;
        }
        box_alloc = (alloc_fn)symbol(lib, "NRT_MemInfo_alloc_dtor");
        box_release = (release_fn)symbol(lib, "NRT_MemInfo_call_dtor");
        if (!box_alloc || !box_release) {
            fprintf(stderr, "%s exports no NRT_MemInfo_alloc_dtor/NRT_MemInfo_call_dtor\n", argv[1]);
            return 3;
        }
        for (int i = 0; i < n; i++) join(start());
        if (round == 0) printf("peak %ld KiB after %d threads\n", peak_kib(), n);
        hold = 1;                                      /* a thread with a cache outlives the library */
        thread_t alive = start();
        nap();
        close_library(lib);
        hold = 0;
        join(alive);
    }
    printf("ok\n");
    return 0;
}
