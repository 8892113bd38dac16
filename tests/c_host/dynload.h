/* Loading a shared library and its symbols on Linux (dlopen) and Windows (LoadLibrary), for the test hosts. */
#ifndef FMU_MB_TEST_DYNLOAD_H
#define FMU_MB_TEST_DYNLOAD_H
#if defined(_WIN32)
#include <windows.h>
static void *open_library(const char *p) { return (void *)LoadLibraryA(p); }
static void *symbol(void *h, const char *s) { return (void *)GetProcAddress((HMODULE)h, s); }
#else
#include <dlfcn.h>
static void *open_library(const char *p) { return dlopen(p, RTLD_NOW | RTLD_LOCAL); }
static void *symbol(void *h, const char *s) { return dlsym(h, s); }
#endif
#endif
