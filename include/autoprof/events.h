/* SPDX-License-Identifier: MIT */
/*
 * events.h - perf event names and their (type, config), as perf spells them.
 *
 * Shared by the preload library (AUTOPROF_EVENT, the counters) and the report
 * tool (naming the events of a file that has no EVENT_DESC feature).
 *
 * X(name, alias, type, config)
 */
#ifndef AUTOPROF_EVENTS_H
#define AUTOPROF_EVENTS_H

#include <linux/perf_event.h>

#define AUTOPROF_EVENT_TABLE(X)                                                                    \
	X("cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)                    \
	X("instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS)                    \
	X("cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES)            \
	X("cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES)                    \
	X("branches", "branch-instructions", PERF_TYPE_HARDWARE,                                   \
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS)                                                       \
	X("branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES)                  \
	X("bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES)                        \
	X("stalled-cycles-frontend", NULL, PERF_TYPE_HARDWARE,                                     \
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND)                                                   \
	X("stalled-cycles-backend", NULL, PERF_TYPE_HARDWARE,                                      \
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND)                                                    \
	X("ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES)                    \
	X("cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK)                          \
	X("task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK)                        \
	X("page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS)                  \
	X("context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES)            \
	X("cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS)        \
	X("minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN)                 \
	X("major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ)                 \
	X("alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS)            \
	X("emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS)

/*
 * The event a file of a memory profile that was asked for (AUTOPROF_MEMORY)
 * and not recorded has instead of alloc-bytes and live-bytes: no samples,
 * its name after the prefix says why (the library's session/memory.c writes
 * it, autoprof-report says it).
 */
#define AP_MEMORY_MARK		    "memory-not-recorded:"
#define AP_MEMORY_MARK_NO_LIBRARY   AP_MEMORY_MARK "libautoprof-memory.so-not-preloaded"
#define AP_MEMORY_MARK_OUT_OF_REACH AP_MEMORY_MARK "malloc-out-of-the-wrappers-reach"
#define AP_MEMORY_MARK_NO_TABLE	    AP_MEMORY_MARK "no-address-space-for-the-live-table"

/*
 * The address of the alloc-bytes record of period 0 whose size is the
 * anonymous memory a process held at its end beyond what the allocator's
 * wrappers saw allocated (its memory came from an allocator the library
 * cannot see); the record at address 0 holds the bytes allocated before the
 * profile started.
 */
#define AP_MEMORY_UNSEEN_ADDR 1

#endif /* AUTOPROF_EVENTS_H */
