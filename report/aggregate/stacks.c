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
 * looked up. The trie knows locations only as ids into the resolver's
 * table (for their functions); the flat per-function totals are computed
 * from the entries once, at the end (hists__finish() in hists.c).
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdlib.h>

/*
 * An empty trie (the root only). Stacks are keyed by function unless
 * st->lines is set (before the first stack): then by location.
 * Returns 0 or -ENOMEM.
 */
int stacks__init(struct stacks *st)
{
	memset(st, 0, sizeof(*st));
	st->last_task = UINT32_MAX;
	st->path_keys = malloc(MAX_FRAMES * sizeof(*st->path_keys));
	st->path_nodes = malloc(MAX_FRAMES * sizeof(*st->path_nodes));
	if (!st->path_keys || !st->path_nodes ||
	    array__reserve(&st->nodes, &st->cap_nodes, 256, sizeof(*st->nodes)))
		return -ENOMEM;
	st->nodes[0] = (struct stack_node){UINT32_MAX, FUNC_UNKNOWN, UINT32_MAX, 0, UINT32_MAX};
	st->nr_nodes = 1;
	return 0;
}

static inline u32 key_of(const struct stacks *st, const struct loc *loctab, u32 loc)
{
	return st->lines ? loc : loctab[loc].fid;
}

static int add_node(struct stacks *st, const struct loc *loctab, u32 parent, u32 loc, u32 *id)
{
	if (st->nr_nodes >= UINT32_MAX - 1)
		return -ENOMEM;
	if (array__reserve(&st->nodes, &st->cap_nodes, st->nr_nodes + 1, sizeof(*st->nodes)))
		return -ENOMEM;
	st->nodes[st->nr_nodes] = (struct stack_node){
	    .parent = parent,
	    .fid = loctab[loc].fid,
	    .loc = st->lines ? loc : UINT32_MAX,
	    .depth = st->nodes[parent].depth + 1,
	    .entry = UINT32_MAX,
	};
	*id = (u32)st->nr_nodes++;
	return kvmap__put(&st->node_idx, parent, key_of(st, loctab, loc), *id);
}

/*
 * The node of the stack @locs (@nr location ids of @loctab, leaf first),
 * creating the missing nodes. Returns 0 or -ENOMEM.
 */
int stacks__intern(struct stacks *st, const struct loc *loctab, const u32 *locs, u32 nr, u32 *node)
{
	u32 d = 0, parent = 0;
	int err;

	/* The outer frames shared with the last stack need no lookup. */
	while (d < nr && d < st->path_depth &&
	       st->path_keys[d] == key_of(st, loctab, locs[nr - 1 - d]))
		d++;
	if (d)
		parent = st->path_nodes[d - 1];
	for (; d < nr; d++) {
		u32 loc = locs[nr - 1 - d], key = key_of(st, loctab, loc);
		u64 val;

		if (kvmap__get(&st->node_idx, parent, key, &val)) {
			parent = (u32)val;
		} else {
			err = add_node(st, loctab, parent, loc, &parent);
			if (err) {
				st->path_depth = 0;
				return err;
			}
		}
		st->path_keys[d] = key;
		st->path_nodes[d] = parent;
	}
	st->path_depth = nr;
	*node = parent;
	return 0;
}

/* The nodes from @node up to (not including) the root into @out, leaf first; how many. */
u32 stacks__path(const struct stacks *st, u32 node, u32 *out)
{
	u32 n = 0;

	while (node && n < MAX_FRAMES) {
		out[n++] = node;
		node = st->nodes[node].parent;
	}
	return n;
}

/* The task of thread @tid of @pid under name @comm: tasks are keyed (pid, comm, tid). */
static int findnew_task(struct stacks *st, u32 pid, u32 tid, u32 comm, u32 *task)
{
	u64 val, key = (u64)comm << 32 | pid;

	if (st->last_task != UINT32_MAX && st->last_pid == pid && st->last_tid == tid &&
	    st->last_comm == comm) {
		*task = st->last_task;
		return 0;
	}
	if (kvmap__get(&st->task_idx, key, tid, &val)) {
		*task = (u32)val;
	} else {
		if (array__reserve(&st->tasks, &st->cap_tasks, st->nr_tasks + 1,
				   sizeof(*st->tasks)))
			return -ENOMEM;
		*task = (u32)st->nr_tasks;
		/* the thread's first task, under a key no (pid, comm) pair makes */
		if (!kvmap__get(&st->task_idx, 1ULL << 63 | pid, tid, &val)) {
			val = *task;
			if (kvmap__put(&st->task_idx, 1ULL << 63 | pid, tid, val))
				return -ENOMEM;
		}
		st->tasks[*task] =
		    (struct task){.pid = pid, .tid = tid, .comm = comm, .thread = (u32)val};
		if (kvmap__put(&st->task_idx, key, tid, *task))
			return -ENOMEM;
		st->nr_tasks++;
	}
	st->last_pid = pid;
	st->last_tid = tid;
	st->last_comm = comm;
	st->last_task = *task;
	return 0;
}

/*
 * Count one sample of event @hist with weight @period, taken in thread @tid
 * of process @pid on @cpu (UINT32_MAX: unknown) with the stack @locs (@nr
 * location ids of @loctab, leaf first, nr >= 1): in its (event, thread, CPU,
 * stack) entry and its thread. The CPU counts only if st->cpus is set
 * (before the first stack). Returns 0 or -ENOMEM.
 */
int stacks__add(struct stacks *st, const struct loc *loctab, u32 hist, u32 pid, u32 tid, u32 comm,
		u32 cpu, const u32 *locs, u32 nr, u64 period)
{
	struct entry *e;
	u32 task, node;
	u64 val;
	int err;

	if (!st->cpus)
		cpu = UINT32_MAX; /* one entry for all CPUs: fewer entries */
	err = findnew_task(st, pid, tid, comm, &task);
	if (!err)
		err = stacks__intern(st, loctab, locs, nr, &node);
	if (err)
		return err;
	val = st->nodes[node].entry;
	if (val != UINT32_MAX && st->entries[val].hist == hist && st->entries[val].task == task &&
	    st->entries[val].cpu == cpu) {
		e = &st->entries[val];
	} else if (kvmap__get(&st->entry_idx, (u64)hist << 32 | task, (u64)cpu << 32 | node,
			      &val)) {
		e = &st->entries[val];
		st->nodes[node].entry = (u32)val;
	} else {
		if (st->nr_entries >= UINT32_MAX - 1)
			return -ENOMEM;
		if (array__reserve(&st->entries, &st->cap_entries, st->nr_entries + 1,
				   sizeof(*st->entries)))
			return -ENOMEM;
		err = kvmap__put(&st->entry_idx, (u64)hist << 32 | task, (u64)cpu << 32 | node,
				 st->nr_entries);
		if (err)
			return err;
		st->nodes[node].entry = (u32)st->nr_entries;
		e = &st->entries[st->nr_entries++];
		*e = (struct entry){.hist = hist, .task = task, .node = node, .cpu = cpu};
	}
	e->samples++;
	e->period += period;
	st->tasks[task].samples++;
	st->tasks[task].period += period;
	return 0;
}

void stacks__exit(struct stacks *st)
{
	free(st->path_keys);
	free(st->path_nodes);
	free(st->nodes);
	free(st->entries);
	free(st->tasks);
	kvmap__exit(&st->node_idx);
	kvmap__exit(&st->entry_idx);
	kvmap__exit(&st->task_idx);
	memset(st, 0, sizeof(*st));
}
