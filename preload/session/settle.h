/* SPDX-License-Identifier: MIT */
/*
 * settle.h - the configuration the library runs with, settled once.
 *
 * options__parse() (common/options.c) reads the AUTOPROF_* variables into a
 * raw struct ap_config: what was asked. settle__config() turns it, once per
 * process image, into a struct ap_settled: what will be done, with every
 * clamp, probe and fallback applied and said. The session holds it as
 * `const struct ap_settled *`; nothing edits it afterwards. What changes
 * while the program runs (the signal sampling moved to, a thread's rate)
 * lives beside it, in the session and the threads.
 */
#ifndef AUTOPROF_SESSION_SETTLE_H
#define AUTOPROF_SESSION_SETTLE_H

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

/* What settling needs to know of the machine and the run. */
struct settle_facts {
	int max_rate; /* kernel.perf_event_max_sample_rate, or 0 when unknown */
	/* Can this thread open attr? 0 or -errno (the event is closed again). */
	int (*probe)(const struct perf_event_attr *attr);
	const char *cwd; /* the first process's working directory (output made absolute), or NULL */
	bool say_timers; /* the run's first image: say when the timers stand in for perf */
	bool no_counters; /* counters were asked and none could open (said with the timers) */
};

/*
 * Settle @raw into @out: the output path, the frequency clamped to the
 * kernel's limit, the event probed (kernel samples dropped where not
 * permitted, cpu-clock where the default cycles is missing), timer
 * sampling where perf_event_open is refused (AUTOPROF_MODE=auto) or asked,
 * a timer-driven event's rate clamped, the rate as a period, and the attr.
 * Each change is said in one line. @raw is not changed. Returns 0, or
 * -errno when no event can sample (said; @out's output is settled even
 * then). Not async-signal-safe.
 */
int settle__config(const struct ap_config *raw, const struct settle_facts *facts,
		   struct ap_settled *out);

#endif /* AUTOPROF_SESSION_SETTLE_H */
