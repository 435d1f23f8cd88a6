// SPDX-License-Identifier: MIT
/*
 * flame_tree.c - the frames of a flame graph: every stack of one event,
 * outermost frame first, merged by function name and object below "all",
 * optionally below one node per command or process. Two sessions can fill
 * the two sides of one tree (a differential flame graph): frames match by
 * name and object, so a baseline and a new build line up.
 */
#include "flame.h"

#include <errno.h>
#include <stdlib.h>

#define NONE UINT32_MAX

static int node_of(struct flame *f, u32 parent, const char *key, size_t len, u8 kind, u32 *out)
{
	u32 id;
	u64 val;
	int err = strset__intern(&f->names, key, len, &id);

	if (err)
		return err;
	if (kvmap__get(&f->idx, parent, id, &val)) {
		*out = (u32)val;
		return 0;
	}
	if (array__reserve(&f->v, &f->cap, f->nr + 1, sizeof(*f->v)) ||
	    kvmap__put(&f->idx, parent, id, f->nr))
		return -ENOMEM;
	f->v[f->nr] = (struct flame_node){.parent = parent,
					  .child = NONE,
					  .next = parent == NONE ? NONE : f->v[parent].child,
					  .key = id,
					  .kind = kind};
	if (parent != NONE)
		f->v[parent].child = (u32)f->nr;
	*out = (u32)f->nr++;
	return 0;
}

static bool is_jit(const struct func *fn)
{
	const char *base;

	if (!fn->dso)
		return false;
	if (fn->dso->jitmap)
		return true;
	base = fn->dso->short_name ? fn->dso->short_name : "";
	return !strncmp(base, "jitted-", 7) && strlen(base) > 10 &&
	       !strcmp(base + strlen(base) - 3, ".so");
}

static u8 kind_of(const struct func *fn)
{
	if (fn->obj == OBJ_KERNEL)
		return FK_KERNEL;
	if (is_jit(fn))
		return FK_JIT;
	if (fn->obj == OBJ_UNKNOWN)
		return FK_UNKNOWN;
	return FK_USER;
}

/* "name\tobject" of @fn into @buf; returns its length. */
static size_t func_key(const struct func *fn, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s\t%s", fn->name, fn->object ? fn->object : "");

	return n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
}

/* The node under the root for the process of task @t, or the root. */
static int proc_node(struct flame *f, const struct session *s, const struct task *t, int root,
		     u32 *out)
{
	const char *comm = machine__comm_of(&s->machine, t->pid, t->pid);
	char buf[96];
	int n;

	*out = 0;
	if (root != FLAME_ROOT_COMM && root != FLAME_ROOT_PID)
		return 0;
	if (!comm[0])
		comm = machine__task_comm(&s->machine, t->pid, t->tid, t->comm);
	if (root == FLAME_ROOT_PID)
		n = snprintf(buf, sizeof(buf), "%s [%u]\t", comm[0] ? comm : "?", t->pid);
	else
		n = snprintf(buf, sizeof(buf), "%s\t", comm[0] ? comm : "?");
	return node_of(f, 0, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, FK_PROC,
		       out);
}

int flame_tree__add(struct flame *f, const struct session *s, int hist, int side, int root)
{
	const struct hists *h = &s->hists;
	u32 *path = malloc(MAX_FRAMES * sizeof(*path));
	char key[1024];
	size_t i;
	int err = 0;

	if (!path)
		return -ENOMEM;
	/* a memory event's flame graph is weighed by its bytes or objects, a wall-clock one's
	 * (offcpu-time) by its time, not their records */
	bool by_period =
	    memory_names__column(h->v[hist].event) || event_units__wall(h->v[hist].event);

	if (!f->nr)
		err = node_of(f, NONE, "all\t", 4, FK_ROOT, &(u32){0});
	for (i = 0; !err && i < h->stacks.nr_entries; i++) {
		const struct entry *e = &h->stacks.entries[i];
		u32 n, d, node;

		u64 w = by_period ? e->period : e->samples;

		if (e->hist != (u32)hist || !e->samples)
			continue;
		err = proc_node(f, s, &h->stacks.tasks[e->task], root, &node);
		f->v[0].n[side] += w;
		if (!err && node)
			f->v[node].n[side] += w;
		n = stacks__path(&h->stacks, e->node, path);
		for (d = n; !err && d > 0; d--) { /* outermost first */
			const struct func *fn = &h->res.funcs[h->stacks.nodes[path[d - 1]].fid];

			err = node_of(f, node, key, func_key(fn, key, sizeof(key)), kind_of(fn),
				      &node);
			if (!err)
				f->v[node].n[side] += w;
		}
	}
	free(path);
	return err;
}

size_t flame_tree__count_procs(const struct session *s, int hist)
{
	const struct stacks *st = &s->hists.stacks;
	struct kvmap seen = {0};
	size_t i, nr = 0;
	u64 val;

	for (i = 0; i < st->nr_entries; i++) {
		const struct entry *e = &st->entries[i];
		u32 pid = st->tasks[e->task].pid;

		if (e->hist != (u32)hist || !e->samples || kvmap__get(&seen, pid, 0, &val))
			continue;
		if (kvmap__put(&seen, pid, 0, 1))
			break; /* out of memory: "several" is all that matters */
		nr++;
	}
	kvmap__exit(&seen);
	return nr;
}

const char *flame_tree__name(const struct flame *f, u32 i, size_t *len)
{
	const char *key = strset__str(&f->names, f->v[i].key);

	*len = strcspn(key, "\t");
	return key;
}

const char *flame_tree__object(const struct flame *f, u32 i)
{
	const char *key = strset__str(&f->names, f->v[i].key), *tab = strchr(key, '\t');

	return tab ? tab + 1 : "";
}

static int sort_cmp(const void *pa, const void *pb, void *arg)
{
	const struct flame *f = arg;
	const struct flame_node *x = &f->v[*(const u32 *)pa], *y = &f->v[*(const u32 *)pb];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(strset__str(&f->names, x->key), strset__str(&f->names, y->key));
}

int flame_tree__sort(struct flame *f)
{
	u32 *ids;
	size_t i;

	if (f->nr < 2)
		return 0;
	ids = malloc((f->nr - 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 1; i < f->nr; i++)
		ids[i - 1] = (u32)i;
	qsort_r(ids, f->nr - 1, sizeof(*ids), sort_cmp, f);
	for (i = 0; i < f->nr; i++)
		f->v[i].child = NONE;
	for (i = f->nr - 1; i > 0; i--) {
		struct flame_node *n = &f->v[ids[i - 1]];

		n->next = f->v[n->parent].child;
		f->v[n->parent].child = ids[i - 1];
	}
	free(ids);
	return 0;
}

void flame_tree__exit(struct flame *f)
{
	free(f->v);
	kvmap__exit(&f->idx);
	strset__exit(&f->names);
	memset(f, 0, sizeof(*f));
}
