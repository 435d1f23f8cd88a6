// libmemfini.c - a library the program is linked with (tests/memory-hostile.t)
// that frees its memory at the process's end, after libautoprof.so's own
// destructor has run: fini_setup() allocates 100 x 1000 bytes at fini_kept,
// freed by the library's destructor, and 100 x 2000 bytes at fini_handled,
// freed by an exit handler the library's constructor registered (atexit:
// run when the library is finalized, as C++ destroys a shared library's
// globals). Nothing leaks.
#include <stdlib.h>

static void *by_destructor[100], *by_handler[100];

__attribute__((noinline)) void fini_kept(void)
{
	for (int i = 0; i < 100; i++)
		by_destructor[i] = malloc(1000);
}

__attribute__((noinline)) void fini_handled(void)
{
	for (int i = 0; i < 100; i++)
		by_handler[i] = malloc(2000);
}

static void free_handled(void)
{
	for (int i = 0; i < 100; i++)
		free(by_handler[i]);
}

__attribute__((constructor)) static void fini_init(void)
{
	atexit(free_handled);
}

void fini_setup(void)
{
	fini_kept();
	fini_handled();
}

__attribute__((destructor)) static void fini_free(void)
{
	for (int i = 0; i < 100; i++)
		free(by_destructor[i]);
}
