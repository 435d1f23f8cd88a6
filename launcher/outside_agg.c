/* SPDX-License-Identifier: MIT */
/*
 * outside_agg.c - AUTOPROF_AGGREGATE in outside mode (outside.h): samples
 * merged by stack with the library's own table (preload/handler/aggregate.c,
 * linked into the launcher). The launcher is one "thread" of that code: one
 * table for the whole run (its key holds the pid and tid, so threads stay
 * apart), emitted when full, when its window (0.2 s, doubling up to 10 s) is
 * over, at a window's end, a `ctl dump` and the end. Every sample gets the
 * first event's id before it is merged (all of the run's events share one
 * attr), so the same stack merges across CPUs. Not async-signal-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handler/handler.h"
#include "outside.h"

static struct ap_sampler sampler = {.aggregate = true};
static struct ap_thread table; /* only its agg and sampler are used */
static struct perf_out *into;

/*
 * aggregate.c's way out: the library's writer there, the launcher's file
 * here (the launcher links no writer.c).
 */
int writer__append(struct writer *w, const void *buf, size_t len)
{
	(void)w;
	perf_out__add(into, buf, len);
	return 0;
}

int outside_agg__init(struct perf_out *o, uint64_t now)
{
	size_t len = aggregate__bytes(&sampler);
	void *mem = calloc(1, len);

	if (!mem)
		return -ENOMEM;
	into = o;
	table.sampler = &sampler;
	table.agg = aggregate__place(mem, len, now);
	return table.agg ? 0 : -EINVAL;
}

bool outside_agg__on(void)
{
	return table.agg != NULL;
}

bool outside_agg__fold(void *rec, size_t len, uint64_t time)
{
	if (!table.agg)
		return true;
	if (len >= 16 && into->nr_ids)
		memcpy((char *)rec + 8, &into->ids[0], 8);
	aggregate__maybe_emit(&table, time);
	return aggregate__fold(&table, rec, len) != 0;
}

void outside_agg__emit(void)
{
	if (table.agg)
		aggregate__emit_all(&table);
}
