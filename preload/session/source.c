/* SPDX-License-Identifier: MIT */
/*
 * source.c - the sample source of this image, settled at start: perf events
 * where they can be had, else (or with AUTOPROF_MODE=timer) per-thread
 * CPU-time timers, with the one line that says which and what the machine
 * lacks; the timer source's attr, and the period it delivered, written into
 * the file at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/*
 * One line for what a machine without a PMU cannot do; nothing elsewhere.
 * Said by the run's first image only (not again by a later image of the
 * same process, nor by its descendants).
 */
void source__say_missing_pmu(const struct ap_counters *cs, int fell_back)
{
	char missing[512];

	counters__unsupported(cs, missing, sizeof(missing));
	if (fell_back && missing[0])
		pr_warn("no hardware PMU here (the kernel offers no cycles event): sampling "
			"cpu-clock; not counting %s",
			missing);
	else if (fell_back)
		pr_warn("no hardware cycles event here: sampling cpu-clock");
	else if (missing[0])
		pr_warn("not counting %s: the machine lacks them", missing);
}

/* Is this perf_event_open error a refusal of the whole system call (not of one event)? */
static bool refused(int err)
{
	return err == -EACCES || err == -EPERM || err == -ENOSYS;
}

/*
 * Perf events where they can be had, else (or with AUTOPROF_MODE=timer) the
 * CPU-time timers; one line says when the timers stand in. Returns 0 or
 * -errno, said.
 */
int source__choose(int *fell_back)
{
	struct ap_config *cfg = &autoprof.cfg;
	char missing[512];
	int err = 0;

	if (cfg->mode != AP_MODE_TIMER) {
		err = event__probe_default(cfg, fell_back);
		if (!err)
			return 0;
		if (cfg->mode == AP_MODE_PERF || !refused(err)) {
			pr_warn("cannot open a %s sampling event: %s; not profiling",
				cfg->event_name, strerror(-err));
			return err;
		}
		counters__unsupported(&autoprof.counters, missing, sizeof(missing));
		if (autoprof.top && !autoprof.execd)
			pr_warn("perf_event_open is refused here (%s; seccomp or "
				"kernel.perf_event_paranoid): sampling with per-thread CPU-time "
				"timers, "
				"at most at the kernel tick rate%s",
				strerror(-err), missing[0] ? "; no counters" : "");
	}
	autoprof.timer_mode = true;
	strcpy(cfg->event_name, "cpu-clock");
	cfg->kernel = false;
	if (cfg->callgraph == AP_CG_FP)
		cfg->callgraph = AP_CG_LIBUNWIND; /* no kernel chains without perf events */
	return 0;
}

/* The timer source's attr in the file: a user-only cpu-clock at the asked period for now. */
void source__timer_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period =
	    autoprof.cfg.period ? autoprof.cfg.period : 1000000000ULL / autoprof.cfg.freq;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

/* The timer source: give the file the period actually delivered, on average. */
void source__record_delivered_period(void)
{
	struct perf_event_attr *attr = &autoprof.writer.events[0].attr;

	if (!autoprof.timer_mode || !autoprof.stats.samples)
		return;
	attr->sample_period = autoprof.stats.period_sum / autoprof.stats.samples;
	attr->freq = 0;
	writer__update_attr(&autoprof.writer, 0);
	pr_info("timer sampling delivered %.0f samples per CPU-second (asked for %llu)",
		1e9 / (double)attr->sample_period,
		(unsigned long long)(autoprof.cfg.period ? 1000000000ULL / autoprof.cfg.period
							 : autoprof.cfg.freq));
}
