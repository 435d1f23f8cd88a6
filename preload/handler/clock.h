/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the two clocks of the library: CLOCK_MONOTONIC, the clock of
 * every timestamp in the file (perf record -k 1), and the calling thread's
 * CPU time. Both are clock_gettime(), which POSIX lists as async-signal-safe.
 */
#ifndef AUTOPROF_HANDLER_CLOCK_H
#define AUTOPROF_HANDLER_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns. Async-signal-safe (the vDSO, no system call). */
static inline uint64_t ap_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time in ns. Async-signal-safe (a system call). */
static inline uint64_t ap_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
