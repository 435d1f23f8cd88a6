/*
 * libdwflcount.c - LD_PRELOAD shim for tests/report-dwarf-cache.t: counts the
 * calls of libdw's dwfl_getthread_frames() (the general unwinder, one call a
 * sample that the cached CFI rules do not unwind) and writes the count to the
 * file named by $DWFL_COUNT_OUT when the process exits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

typedef int (*getthread_frames_fn)(void *dwfl, pid_t tid, int (*cb)(void *, void *), void *arg);

static unsigned long calls;

int dwfl_getthread_frames(void *dwfl, pid_t tid, int (*cb)(void *, void *), void *arg)
{
	static getthread_frames_fn real;

	if (!real)
		real = (getthread_frames_fn)dlsym(RTLD_NEXT, "dwfl_getthread_frames");
	calls++;
	return real ? real(dwfl, tid, cb, arg) : -1;
}

__attribute__((destructor)) static void write_count(void)
{
	const char *path = getenv("DWFL_COUNT_OUT");
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	fprintf(f, "%lu\n", calls);
	fclose(f);
}
