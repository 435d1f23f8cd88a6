// SPDX-License-Identifier: MIT
/*
 * stacks.c - every distinct call stack once, as a trie, and the samples of
 * each (event, thread, stack) as one entry.
 *
 * A node is a frame called from its parent node; node 0 is the root above
 * every outermost frame. Nodes are keyed by function, or by location when
 * source lines are wanted, so memory grows with distinct stacks, never with
 * samples. Consecutive samples mostly share their outer frames: the last
 * interned path is kept, and only the frames below the shared part are
 * looked up. The flat per-function totals are computed from the entries
 * once, at the end (hists__finish()).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

static inline u32 key_of(const struct hists *h, u32 loc)
{
	return h->lines ? loc : h->locs[loc].fid;
}

static int add_node(struct hists *h, u32 parent, u32 loc, u32 *id)
{
	if (h->nr_nodes >= UINT32_MAX - 1)
		return -ENOMEM;
	if (array__reserve(&h->nodes, &h->cap_nodes, h->nr_nodes + 1, sizeof(*h->nodes)))
		return -ENOMEM;
	h->nodes[h->nr_nodes] = (struct stack_node){
	    .parent = parent,
	    .fid = h->locs[loc].fid,
	    .loc = h->lines ? loc : UINT32_MAX,
	    .depth = h->nodes[parent].depth + 1,
	    .entry = UINT32_MAX,
	};
	*id = (u32)h->nr_nodes++;
	return kvmap__put(&h->node_idx, parent, key_of(h, loc), *id);
}

/*
 * The node of the stack @locs (@nr locations, leaf first), creating the
 * missing nodes. Returns 0 or -ENOMEM.
 */
int stacks__intern(struct hists *h, const u32 *locs, u32 nr, u32 *node)
{
	u32 d = 0, parent = 0;
	int err;

	/* The outer frames shared with the last stack need no lookup. */
	while (d < nr && d < h->path_depth && h->path_keys[d] == key_of(h, locs[nr - 1 - d]))
		d++;
	if (d)
		parent = h->path_nodes[d - 1];
	for (; d < nr; d++) {
		u32 loc = locs[nr - 1 - d], key = key_of(h, loc);
		u64 val;

		if (kvmap__get(&h->node_idx, parent, key, &val)) {
			parent = (u32)val;
		} else {
			err = add_node(h, parent, loc, &parent);
			if (err) {
				h->path_depth = 0;
				return err;
			}
		}
		h->path_keys[d] = key;
		h->path_nodes[d] = parent;
	}
	h->path_depth = nr;
	*node = parent;
	return 0;
}

/* The nodes from @node up to (not including) the root into @out, leaf first; how many. */
u32 stacks__path(const struct hists *h, u32 node, u32 *out)
{
	u32 n = 0;

	while (node && n < MAX_FRAMES) {
		out[n++] = node;
		node = h->nodes[node].parent;
	}
	return n;
}

static int findnew_task(struct hists *h, u32 pid, u32 tid, u32 *task)
{
	u64 val;

	if (h->last_task != UINT32_MAX && h->last_pid == pid && h->last_tid == tid) {
		*task = h->last_task;
		return 0;
	}
	if (kvmap__get(&h->task_idx, pid, tid, &val)) {
		*task = (u32)val;
	} else {
		if (array__reserve(&h->tasks, &h->cap_tasks, h->nr_tasks + 1, sizeof(*h->tasks)))
			return -ENOMEM;
		h->tasks[h->nr_tasks] = (struct task){.pid = pid, .tid = tid};
		*task = (u32)h->nr_tasks;
		if (kvmap__put(&h->task_idx, pid, tid, *task))
			return -ENOMEM;
		h->nr_tasks++;
	}
	h->last_pid = pid;
	h->last_tid = tid;
	h->last_task = *task;
	return 0;
}

/*
 * Count one sample of event @hist with weight @period, taken in thread @tid
 * of process @pid with the stack @locs (@nr locations, leaf first, nr >= 1).
 * Returns 0 or -ENOMEM.
 */
int hists__add_stack(struct hists *h, int hist, u32 pid, u32 tid, const u32 *locs, u32 nr,
		     u64 period)
{
	struct hist *hi = &h->v[hist];
	struct entry *e;
	u32 task, node;
	u64 val;
	int err;

	err = findnew_task(h, pid, tid, &task);
	if (!err)
		err = stacks__intern(h, locs, nr, &node);
	if (err)
		return err;
	val = h->nodes[node].entry;
	if (val != UINT32_MAX && h->entries[val].hist == (u32)hist &&
	    h->entries[val].task == task) {
		e = &h->entries[val];
	} else if (kvmap__get(&h->entry_idx, (u64)hist << 32 | task, node, &val)) {
		e = &h->entries[val];
		h->nodes[node].entry = (u32)val;
	} else {
		if (h->nr_entries >= UINT32_MAX - 1)
			return -ENOMEM;
		if (array__reserve(&h->entries, &h->cap_entries, h->nr_entries + 1,
				   sizeof(*h->entries)))
			return -ENOMEM;
		err = kvmap__put(&h->entry_idx, (u64)hist << 32 | task, node, h->nr_entries);
		if (err)
			return err;
		h->nodes[node].entry = (u32)h->nr_entries;
		e = &h->entries[h->nr_entries++];
		*e = (struct entry){.hist = (u32)hist, .task = task, .node = node};
	}
	e->samples++;
	e->period += period;
	h->tasks[task].samples++;
	h->tasks[task].period += period;
	hi->nr_samples++;
	hi->total_period += period;
	return 0;
}

/*
 * Compute every event's per-function self and total (children) counts from
 * the entries: self for the leaf's function, total once for every distinct
 * function on the stack (recursion counts once). Returns 0 or -ENOMEM.
 */
int hists__finish(struct hists *h)
{
	size_t i;

	for (i = 0; i < h->nr; i++) {
		free(h->v[i].stats);
		h->v[i].stats = NULL;
		h->v[i].nr_stats = 0;
		if (!h->v[i].nr_samples)
			continue; /* a counter only: no table */
		h->v[i].stats = calloc(h->nr_funcs ? h->nr_funcs : 1, sizeof(*h->v[i].stats));
		if (!h->v[i].stats)
			return -ENOMEM;
		h->v[i].nr_stats = h->nr_funcs;
	}
	for (i = 0; i < h->nr_entries; i++) {
		const struct entry *e = &h->entries[i];
		struct func_stat *stats = h->v[e->hist].stats;
		u32 node = e->node;
		int guard = MAX_FRAMES;

		stats[h->nodes[node].fid].self_samples += e->samples;
		stats[h->nodes[node].fid].self_period += e->period;
		for (; node && guard--; node = h->nodes[node].parent) {
			struct func_stat *st = &stats[h->nodes[node].fid];

			if (st->seen == i + 1)
				continue;
			st->seen = i + 1;
			st->total_samples += e->samples;
			st->total_period += e->period;
		}
	}
	return 0;
}
