/* SPDX-License-Identifier: MIT */
/*
 * extra_events.c - the file's attrs after the sampling event and the
 * counters: AUTOPROF_AGGREGATE_CHECK's twin of the sampling event (its
 * merged copies, for tests) and AUTOPROF_OFFCPU's offcpu-time (offcpu.c).
 * Their ids follow the counters' (whose ids stat_records.c relies on), and
 * the handlers learn them from the sampler description.
 */
#include <stdio.h>
#include <string.h>

#include "memory.h"

/* Append one attr to events[n], with id n + 1. Returns the new count. */
static int add(struct writer_event *events, int n, const struct perf_event_attr *attr,
	       const char *name, uint64_t *id)
{
	if (n >= AP_MAX_EVENTS)
		return n;
	events[n].attr = *attr;
	events[n].id = (uint64_t)n + 1;
	snprintf(events[n].name, sizeof(events[n].name), "%s", name);
	*id = events[n].id;
	return n + 1;
}

/*
 * Add the extra attrs to the n events of the file about to be opened and
 * tell the sampler (read by every handler) their ids and whether samples
 * merge. Called before any thread samples. Returns the new count.
 */
int extra__file_events(struct writer_event *events, int n)
{
	struct ap_sampler *s = &autoprof.sampler;
	char name[64];

	s->aggregate = autoprof.cfg->aggregate && !autoprof.cfg->aggregate_check;
	s->check_id = 0;
	s->offcpu_id = 0;
	if (autoprof.cfg->aggregate_check) {
		snprintf(name, sizeof(name), "%.40s-aggregated", autoprof.cfg->event_name);
		n = add(events, n, &events[0].attr, name, &s->check_id);
	}
	if (autoprof.cfg->offcpu) {
		struct perf_event_attr attr;

		offcpu__file_attr(&attr);
		n = add(events, n, &attr, "offcpu-time", &s->offcpu_id);
	}
	return memory__file_events(events, n); /* AUTOPROF_MEMORY */
}
