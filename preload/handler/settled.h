/* SPDX-License-Identifier: MIT */
/*
 * settled.h - the configuration the library runs with, as settled once per
 * process image by session/settle.c (settle.h) before any handler is
 * installed, and never edited afterwards: what the handlers may read of it
 * (through their sampler's cfg) is frozen.
 */
#ifndef AUTOPROF_HANDLER_SETTLED_H
#define AUTOPROF_HANDLER_SETTLED_H

#include <limits.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "common.h"

struct ap_settled {
	char output[PATH_MAX]; /* AUTOPROF_OUTPUT: absolute in the run's first process */
	/* The event sampled: AUTOPROF_EVENT, cpu-clock where cycles is missing
	 * (fell_back: the errno of cycles) or where timers sample (timer_mode). */
	char event_name[64];
	struct ap_event event;
	int fell_back;
	bool timer_mode; /* AUTOPROF_MODE: per-thread CPU-time timers, not perf events */
	/* The rate: freq Hz or every period events (one is 0), clamped to what
	 * the kernel and a timer interrupt allow; both converted once. */
	uint64_t freq, period;
	uint64_t interval_ns;	     /* the period, or 1e9 / freq: ns between samples asked */
	uint64_t hz;		     /* the frequency, or 1e9 / period: samples per second asked */
	enum ap_callgraph callgraph; /* fp becomes libunwind with timers (no kernel chains) */
	unsigned stack_depth;
	unsigned batch;	     /* AUTOPROF_BATCH: samples per signal (libunwind), 1 = no batching */
	unsigned stack_copy; /* AUTOPROF_STACK_COPY: bytes of stack per batched sample */
	int signo;	     /* AUTOPROF_SIGNAL as asked; the session's signo follows moves */
	int verbose;
	bool stat;		  /* AUTOPROF_STAT */
	bool kernel;		  /* AUTOPROF_KERNEL, where permitted (never with timers) */
	bool follow;		  /* AUTOPROF_FOLLOW: children and exec'd programs too */
	bool aggregate;		  /* AUTOPROF_AGGREGATE: merged samples */
	bool aggregate_check;	  /* AUTOPROF_AGGREGATE_CHECK: both streams, for tests */
	bool offcpu;		  /* AUTOPROF_OFFCPU: off-CPU time */
	bool start;		  /* AUTOPROF_START: sample from the start */
	bool memory;		  /* AUTOPROF_MEMORY: allocations sampled, live blocks followed */
	uint64_t memory_interval; /* AUTOPROF_MEMORY_INTERVAL: mean bytes between samples */
	bool cost;		  /* AUTOPROF_COST: time the handler's phases */
	uint64_t window_ns;	  /* AUTOPROF_WINDOW: one file per window of this length, or 0 */
	unsigned keep;		  /* AUTOPROF_KEEP: the newest windows kept, or 0 for all */
	/* The kernel event each thread opens (perf_event.c), or the timers' in the file. */
	struct perf_event_attr attr;
};

#endif /* AUTOPROF_HANDLER_SETTLED_H */
