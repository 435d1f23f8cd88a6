// SPDX-License-Identifier: MIT
/*
 * hists.c - the samples of every event: a resolver (resolver.c) turns each
 * sample's addresses into locations, the stack trie (stacks.c) counts it
 * per (event, thread, stack), and the event's totals are kept here; at the
 * end, the per-function self and total counts of each event.
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdlib.h>

/* An empty resolver and trie, no event yet. Returns 0 or -ENOMEM. */
int hists__init(struct hists *h)
{
	int err;

	memset(h, 0, sizeof(*h));
	err = resolver__init(&h->res);
	return err ? err : stacks__init(&h->stacks);
}

/* Index of the counters for event @name, created on first use; -ENOMEM on failure. */
int hists__findnew_event(struct hists *h, const char *event)
{
	size_t i;

	for (i = 0; i < h->nr; i++) {
		if (!strcmp(h->v[i].event, event))
			return (int)i;
	}
	if (array__reserve(&h->v, &h->cap, h->nr + 1, sizeof(*h->v)))
		return -ENOMEM;
	h->v[h->nr] = (struct hist){.event = strdup(event)};
	if (!h->v[h->nr].event)
		return -ENOMEM;
	return (int)h->nr++;
}

/*
 * Count one sample of event @hist with weight @period, taken in thread @tid
 * of process @pid (named as machine__comm_idx() @comm says) on @cpu (UINT32_MAX: unknown) with the
 * stack @locs (@nr locations of h->res, leaf first, nr >= 1), through the stack filter h->aim
 * (aim.c): a sample it drops counts in the event's totals only. Returns 0 or -ENOMEM.
 */
int hists__add_stack(struct hists *h, int hist, u32 pid, u32 tid, u32 comm, u32 cpu,
		     const u32 *locs, u32 nr, u64 period)
{
	int err = 1;

	if (aim__active(h->aim)) {
		err = aim__filter(h, locs, nr, &locs, &nr);
		if (err < 0)
			return err;
		h->aimed_out += !err;
	}
	if (err)
		err = stacks__add(&h->stacks, h->res.locs, (u32)hist, pid, tid, comm, cpu, locs, nr,
				  period);
	if (err)
		return err;
	h->v[hist].nr_samples++;
	h->v[hist].total_period += period;
	return 0;
}

/*
 * Compute every event's per-function self and total (children) counts from
 * the entries: self for the leaf's function, total once for every distinct
 * function on the stack (recursion counts once). Returns 0 or -ENOMEM.
 */
int hists__finish(struct hists *h)
{
	const struct stacks *st = &h->stacks;
	size_t nr_funcs = h->res.nr_funcs, i;

	for (i = 0; i < h->nr; i++) {
		free(h->v[i].stats);
		h->v[i].stats = NULL;
		h->v[i].nr_stats = 0;
		if (!h->v[i].nr_samples)
			continue; /* a counter only: no table */
		h->v[i].stats = calloc(nr_funcs ? nr_funcs : 1, sizeof(*h->v[i].stats));
		if (!h->v[i].stats)
			return -ENOMEM;
		h->v[i].nr_stats = nr_funcs;
	}
	for (i = 0; i < st->nr_entries; i++) {
		const struct entry *e = &st->entries[i];
		struct func_stat *stats = h->v[e->hist].stats;
		u32 node = e->node;
		int guard = MAX_FRAMES;

		stats[st->nodes[node].fid].self_samples += e->samples;
		stats[st->nodes[node].fid].self_period += e->period;
		for (; node && guard--; node = st->nodes[node].parent) {
			struct func_stat *fs = &stats[st->nodes[node].fid];

			if (fs->seen == i + 1)
				continue;
			fs->seen = i + 1;
			fs->total_samples += e->samples;
			fs->total_period += e->period;
		}
	}
	return 0;
}

void hists__exit(struct hists *h)
{
	size_t i;

	resolver__exit(&h->res);
	stacks__exit(&h->stacks);
	for (i = 0; i < h->nr; i++) {
		free(h->v[i].event);
		free(h->v[i].stats);
	}
	free(h->v);
	free(h->marks);
	free(h->aim_buf);
	memset(h, 0, sizeof(*h));
}
