/* SPDX-License-Identifier: MIT */
/*
 * entry.c - the library's entry and exit: a thin constructor and destructor
 * over lifecycle__start()/lifecycle__stop() (session/lifecycle.c), kept apart so unit
 * tests can link everything else without profiling themselves.
 */
#include <errno.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "internal.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The linker's: where .bss starts, and where it ends, before .lbss (preload/bss_end.ld, which
 * a linker without GNU ld's INSERT does not take: the Makefile leaves it out, and this is 0). */
extern char __bss_start[];
extern char __autoprof_bss_end[] __attribute__((weak, visibility("hidden")));

/* More than this is not .bss alone (a linker that put the mark after .lbss): left alone. */
#define SMALL_STATE_MAX (256 * 1024)

/* This thread's id (a system call: no libc state). */
static pid_t self_tid(void)
{
	return (pid_t)raw_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
}

/*
 * Write in the library's small variables (.bss: AP_LARGE_BSS keeps out of
 * it what a start does not touch) in one call: a start touches nearly every
 * page of it, and each first touch is a page fault (10 us in the VMs we
 * measure, against under 1 us a page populated). A kernel before 5.14 says
 * EINVAL: the pages come as they are touched, as before.
 */
static void prefault_small_state(void)
{
	uintptr_t page = getauxval(AT_PAGESZ) ?: 4096;
	uintptr_t lo = (uintptr_t)__bss_start & ~(page - 1);
	uintptr_t hi = ((uintptr_t)__autoprof_bss_end + page - 1) & ~(page - 1);

	if (__autoprof_bss_end && hi > lo && hi - lo <= SMALL_STATE_MAX)
		raw_syscall(SYS_madvise, lo, hi - lo, MADV_POPULATE_WRITE, 0, 0, 0);
}

__attribute__((constructor)) static void autoprof_init(void)
{
	int saved = errno;

	prefault_small_state();
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
