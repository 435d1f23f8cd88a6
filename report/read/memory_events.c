// SPDX-License-Identifier: MIT
/*
 * memory_events.c - autoprof's memory events (AUTOPROF_MEMORY, the library's
 * session/memory.c): alloc-bytes, the allocations sampled, and live-bytes,
 * the sampled blocks still allocated at the end. Each SAMPLE's period is the
 * estimated bytes it stands for and its WEIGHT field the block's size, so
 * period / weight is the estimated number of blocks (objects).
 *
 * The reader counts those objects as samples of two events of its own,
 * alloc-objects and live-objects, at the same stack: every view and export
 * then shows objects beside bytes (-e alloc-objects), and the pprof export
 * names the four as pprof's heap profiles do (alloc_space, alloc_objects,
 * inuse_space, inuse_objects).
 */
#include "internal.h"

/* Fields between CALLCHAIN and WEIGHT that this reader does not step over. */
#define BEFORE_WEIGHT                                                                              \
	(PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |                      \
	 PERF_SAMPLE_STACK_USER)

static const struct {
	const char *event, *objects, *pprof, *pprof_objects;
} kinds[] = {
    {"alloc-bytes", "alloc-objects", "alloc_space", "alloc_objects"},
    {"live-bytes", "live-objects", "inuse_space", "inuse_objects"},
};

/* The index in kinds[] of event @ev (bytes), or -1. */
static int kind_of(const char *ev)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (ev && !strcmp(ev, kinds[i].event))
			return (int)i;
	return -1;
}

/* Is @ev an event the reader derives from the memory events (alloc-objects, live-objects)? */
bool memory_events__derived(const char *ev)
{
	for (size_t i = 0; ev && i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(ev, kinds[i].objects))
			return true;
	return false;
}

/* Is @ev one of the memory events, in bytes (alloc-bytes, live-bytes)? */
bool memory_events__in_bytes(const char *ev)
{
	return kind_of(ev) >= 0;
}

/*
 * pprof's name of the memory event @ev (bytes or objects) and its unit in
 * *@unit; NULL for other events.
 */
const char *memory_events__pprof_name(const char *ev, const char **unit)
{
	for (size_t i = 0; ev && i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(ev, kinds[i].event)) {
			*unit = "bytes";
			return kinds[i].pprof;
		}
		if (!strcmp(ev, kinds[i].objects)) {
			*unit = "count";
			return kinds[i].pprof_objects;
		}
	}
	return NULL;
}

/*
 * After sample @smp of @pf was counted with the stack @frames (@nr
 * locations): when it is a memory event's, count its objects (period /
 * weight, rounded, at least 1) as a sample of the objects event at the same
 * stack. Returns 0 or -ENOMEM.
 */
int memory_events__count(struct session *s, const struct perf_file *pf, const struct sample *smp,
			 u32 comm, const u32 *frames, u32 nr)
{
	const struct evattr *ea = &pf->attrs[smp->attr];
	u64 size, objects;
	int k, h;

	if (!(ea->attr.sample_type & PERF_SAMPLE_WEIGHT) ||
	    (ea->attr.sample_type & BEFORE_WEIGHT) || ea->hist < 0 ||
	    (k = kind_of(s->hists.v[ea->hist].event)) < 0 || smp->end - smp->rest < 8)
		return 0;
	size = ld64(smp->rest);
	if (!size)
		return 0;
	objects = (smp->period + size / 2) / size;
	h = hists__findnew_event(&s->hists, kinds[k].objects);
	if (h < 0)
		return h;
	return hists__add_stack(&s->hists, h, smp->pid, smp->tid, comm,
				smp->has_cpu ? smp->cpu : UINT32_MAX, frames, nr,
				objects ? objects : 1);
}

/*
 * The column title of the memory event @ev's totals in the text views
 * ("Bytes" or "Objects": its period, not its records), or NULL for other events.
 */
const char *memory_events__column(const char *ev)
{
	for (size_t i = 0; ev && i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(ev, kinds[i].event))
			return "Bytes";
		if (!strcmp(ev, kinds[i].objects))
			return "Objects";
	}
	return NULL;
}
