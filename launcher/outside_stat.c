/* SPDX-License-Identifier: MIT */
/*
 * outside_stat.c - the counters of an outside run (outside.h) and their
 * FILE.stat sibling, written by the library's own stat_records.c (linked
 * into the launcher): the counters are opened on the command before its
 * exec (inherit=1, enable_on_exec), or on each thread of a -p/-t target,
 * and read once at the end; they count while sampling is on only
 * (--start-paused, `autoprof ctl` start/stop: outside_stat__follow). The one
 * launcher file that sees the library's session type. Not async-signal-safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autoprof/env.h"
#include "internal.h"
#include "outside.h"

/* What stat_records.c reads of the library's session: the pid, the file's path. */
struct ap_session autoprof;

/* Per-thread counters of a -p/-t target, summed into autoprof.counters at the end. */
static struct ap_counters *extra;
static int nr_extra;
static bool print_stat;	    /* AUTOPROF_STAT: the table on stderr at the end */
static bool paused;	    /* sampling is off: the counters are disabled */
static uint64_t stopped_at; /* when it went off last (0: never on) */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int outside_stat__open(const struct ap_config *cfg, const pid_t *tids, int n, bool enable_on_exec)
{
	const char *list = cfg->counters[0] ? cfg->counters : AUTOPROF_DEFAULT_COUNTERS;
	bool quiet = ap_quiet;

	ap_quiet = true;
	print_stat = cfg->stat;
	autoprof.pid = tids[0];
	if (counting__parse(&autoprof.counters, list) || !autoprof.counters.n) {
		autoprof.counters.n = 0;
		ap_quiet = quiet;
		return 0;
	}
	paused = !cfg->start;
	autoprof.counters.paused = paused; /* opened disabled, not enabled by the exec */
	counting__open_task(&autoprof.counters, tids[0], enable_on_exec && !paused);
	if (n > 1) {
		extra = calloc((size_t)n - 1, sizeof(*extra));
		for (int i = 1; extra && i < n; i++) {
			extra[nr_extra] = autoprof.counters;
			counting__open_task(&extra[nr_extra], tids[i], enable_on_exec && !paused);
			nr_extra++;
		}
	}
	ap_quiet = quiet;
	autoprof.start_time = now_ns();
	return autoprof.counters.n;
}

void outside_stat__started(void)
{
	autoprof.start_time = now_ns();
}

void outside_stat__follow(bool pause, uint64_t now, uint64_t since)
{
	paused = pause;
	counting__set_enabled(&autoprof.counters, !pause);
	for (int i = 0; i < nr_extra; i++)
		counting__set_enabled(&extra[i], !pause);
	if (pause) {
		stopped_at = now;
	} else { /* the time paused is no time elapsed: the start moves on by it */
		if (since < autoprof.start_time)
			since = autoprof.start_time; /* paused from before the exec */
		autoprof.start_time += now > since ? now - since : 0;
	}
}

/* Add thread counters @t to @sum (the first read sets valid). */
static void add(struct ap_counters *sum, const struct ap_counters *t)
{
	for (int i = 0; i < sum->n; i++) {
		struct ap_counter *c = &sum->c[i];
		const struct ap_counter *x = &t->c[i];

		if (!x->valid)
			continue;
		if (!c->valid) {
			c->raw = c->ena = c->run = c->value = 0;
			c->valid = c->unsupported ? false : true;
			if (!c->valid)
				continue;
		}
		c->raw += x->raw;
		c->ena += x->ena;
		c->run += x->run;
		c->value += x->value;
	}
}

bool outside_stat__finish(const char *path)
{
	struct ap_counters *cs = &autoprof.counters;
	uint64_t end = !paused ? now_ns() : stopped_at ? stopped_at : autoprof.start_time;
	uint64_t elapsed = end > autoprof.start_time ? end - autoprof.start_time : 0;
	int err;

	if (!cs->n)
		return false;
	counting__read(cs, true);
	for (int i = 0; i < nr_extra; i++) {
		counting__read(&extra[i], true);
		add(cs, &extra[i]);
	}
	free(extra);
	extra = NULL;
	nr_extra = 0;
	snprintf(autoprof.writer.path, sizeof(autoprof.writer.path), "%s", path);
	err = stat_records__write(&autoprof.writer, cs, AP_SAMPLE_ID + 1, elapsed);
	if (err)
		fprintf(stderr, "autoprof: cannot write %s.stat: %s\n", path, strerror(-err));
	if (print_stat)
		stat_records__print(cs, elapsed);
	return !err;
}
