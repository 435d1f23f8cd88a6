/* SPDX-License-Identifier: MIT */
/*
 * settle.h - the configuration the library runs with, settled once.
 *
 * options__parse() (common/options.c) reads the AUTOPROF_* variables into a
 * raw struct ap_config: what was asked. settle__config() turns it, once per
 * process image, into a struct ap_settled (handler/settled.h, which the
 * handlers read): what will be done, with every
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
#include "handler/settled.h"

/* What settling needs to know of the machine and the run. */
struct settle_facts {
	/* kernel.perf_event_max_sample_rate, or 0 when unknown; read only when a probe
	 * is refused with EINVAL (a frequency above it) */
	int (*max_rate)(void);
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
