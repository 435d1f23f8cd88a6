/* SPDX-License-Identifier: MIT */
/*
 * entry.c - the library's entry and exit: a thin constructor and destructor
 * over lifecycle__start()/lifecycle__stop() (session/lifecycle.c), kept apart so unit
 * tests can link everything else without profiling themselves.
 */
#include <errno.h>
#include <sys/syscall.h>

#include "internal.h"

/* This thread's id (a system call: no libc state). */
static pid_t self_tid(void)
{
	return (pid_t)raw_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
}

__attribute__((constructor)) static void autoprof_init(void)
{
	int saved = errno;

	chain__profiler_work(self_tid()); /* its samples are ours alone */
	lifecycle__start();
	chain__profiler_work(0);
	errno = saved;
}

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void entry_late_stop(void *unused)
{
	int saved = errno;

	(void)unused;
	chain__profiler_work(self_tid());
	lifecycle__stop();
	chain__profiler_work(0);
	errno = saved;
}

/*
 * At exit the libraries the program was linked with are finalized after
 * us (they were initialized before us): their destructors, C++ globals of
 * shared libraries among them, free memory then, which a live set written
 * now would count as leaked. An exit handler registered now, of no object
 * (a handler of ours would run at our own finalization, right after this),
 * runs once _dl_fini has finalized every object: the session stops there
 * (now if it cannot be registered).
 */
__attribute__((destructor)) static void autoprof_fini(void)
{
	if (__cxa_atexit(entry_late_stop, NULL, NULL))
		entry_late_stop(NULL);
}
