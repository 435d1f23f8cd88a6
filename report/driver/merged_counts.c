// SPDX-License-Identifier: MIT
/*
 * merged_counts.c - one count of samples everywhere, for aggregated files
 * (AUTOPROF_AGGREGATE, --aggregate: the library merges a thread's samples
 * with the same stack into one record whose period is their sum).
 *
 * An event with one sample period P in every file (its fixed period, or
 * 1 s / freq for the CPU clocks) whose records carry more than 1.1 P on
 * average is merged: each (event, thread, stack) entry then stands for
 * round(period / P) samples, at least 1, and the event's and the threads'
 * totals are their sums. Every view counts from the entries (the tables'
 * Samples column, the per-event headers, the flame graph, folded, JSON,
 * pprof), so all of them count the samples the closing line and `autoprof
 * ctl status` counted, not the records; the header adds the records.
 * Events whose period is no count of samples keep one per record: the
 * memory events (bytes) and wall-clock ones (offcpu-time: a record is a
 * wait, its period the ns waited; in an aggregated file, s->merged, the
 * waits of one stack merge too and the views say records, not waits).
 */
#include "driver/driver.h"

u64 merged_counts__sample_period(const struct perf_event_attr *a)
{
	if (!a->freq)
		return a->sample_period;
	if (a->type == PERF_TYPE_SOFTWARE && a->sample_freq &&
	    (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK))
		return 1000000000ULL / a->sample_freq;
	return 0;
}

/* Event @h's one sample period in every file, or 0 when it has none or several. */
static u64 one_period(const struct session *s, size_t h)
{
	u64 period = 0;

	for (size_t i = 0; i < s->nr_files; i++) {
		for (size_t j = 0; j < s->files[i].nr_attrs; j++) {
			const struct evattr *ea = &s->files[i].attrs[j];
			u64 p;

			if (ea->hist != (int)h)
				continue;
			p = merged_counts__sample_period(&ea->attr);
			if (!p || (period && period != p))
				return 0;
			period = p;
		}
	}
	return period;
}

/* Is event @h's period a count of samples of one period (not bytes, not wall time)? */
static bool counts_samples(const struct session *s, size_t h)
{
	const char *ev = s->hists.v[h].event;

	return !memory_names__derived(ev) && !memory_names__column(ev) && !event_units__wall(ev);
}

void merged_counts__apply(struct session *s)
{
	struct stacks *st = &s->hists.stacks;
	u64 per[64] = {0}, recs[64] = {0}, period[64] = {0}, n;
	size_t h, i, nr = s->hists.nr < 64 ? s->hists.nr : 64;
	bool any = false;

	for (i = 0; i < st->nr_entries; i++) {
		const struct entry *e = &st->entries[i];

		if (e->hist < nr) {
			recs[e->hist] += e->samples;
			period[e->hist] += e->period;
		}
	}
	for (h = 0; h < nr; h++) {
		struct hist *hi = &s->hists.v[h];
		u64 p = counts_samples(s, h) && hi->nr_samples ? one_period(s, h) : 0;

		if (p && hi->total_period / p > hi->nr_samples + hi->nr_samples / 10) {
			u64 out = hi->nr_samples > recs[h] ? hi->nr_samples - recs[h] : 0;

			per[h] = p;
			/* the samples the stack filter (--focus...) kept out, then the stacks' */
			hi->nr_samples = out && hi->total_period > period[h]
					     ? (hi->total_period - period[h] + p / 2) / p
					     : 0;
			/* ... and its count of them, in samples too */
			s->hists.aimed_out += hi->nr_samples;
			s->hists.aimed_out -= out < s->hists.aimed_out ? out : s->hists.aimed_out;
			any = true;
		}
	}
	if (!any)
		return;
	s->merged = true;
	for (i = 0; i < st->nr_tasks; i++)
		st->tasks[i].samples = 0;
	for (i = 0; i < st->nr_entries; i++) {
		struct entry *e = &st->entries[i];
		u64 p = e->hist < nr ? per[e->hist] : 0;

		if (p) {
			n = (e->period + p / 2) / p;
			e->samples = n ? n : 1;
			s->hists.v[e->hist].nr_samples += e->samples;
		}
		st->tasks[e->task].samples += e->samples;
	}
}
