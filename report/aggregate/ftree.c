// SPDX-License-Identifier: MIT
/*
 * ftree.c - a call tree merged by function, for one event:
 *   FT_STACKS   every stack from its outermost frame down (flame graph, folded)
 *   FT_CALLEES  what a focus function calls: the stacks below its outermost
 *               occurrence, so recursion is counted once
 *   FT_CALLERS  who calls a focus function: the stacks above its innermost
 *               occurrence, outward
 * Built from the stack entries, so its size is bounded by distinct stacks.
 * FT_SELF_ONLY keeps, for FT_CALLERS, only the samples spent in the focus
 * itself (perf report --no-children's call graph of an entry).
 * With FT_FOLD_RECURSION a function calling itself directly is one node,
 * which keeps the deepest such run (rec): pprof and perf show one msort row
 * for a merge sort's 25 nested calls.
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdlib.h>

#define NONE UINT32_MAX

static int child_of(struct ftree *t, u32 parent, u32 fid, u32 *out)
{
	u64 val;

	if (kvmap__get(&t->idx, parent, fid, &val)) {
		*out = (u32)val;
		return 0;
	}
	if (array__reserve(&t->v, &t->cap, t->nr + 1, sizeof(*t->v)))
		return -ENOMEM;
	if (kvmap__put(&t->idx, parent, fid, t->nr))
		return -ENOMEM;
	t->v[t->nr] = (struct fnode){.parent = parent,
				     .fid = fid,
				     .child = NONE,
				     .next = parent == NONE ? NONE : t->v[parent].child};
	if (parent != NONE)
		t->v[parent].child = (u32)t->nr;
	*out = (u32)t->nr++;
	return 0;
}

/*
 * Add @e's counts along @fids[0..n) (outermost first) below the root; with
 * @fold, a run of one function is one node.
 */
static int insert(struct ftree *t, const struct entry *e, const u32 *fids, u32 n, bool self,
		  bool fold)
{
	u32 node = 0, i, run;
	int err;

	t->v[0].samples += e->samples;
	t->v[0].period += e->period;
	for (i = 0; i < n; i += run) {
		run = 1;
		while (fold && i + run < n && fids[i + run] == fids[i])
			run++;
		err = child_of(t, node, fids[i], &node);
		if (err)
			return err;
		t->v[node].samples += e->samples;
		t->v[node].period += e->period;
		if (run > t->v[node].rec)
			t->v[node].rec = run;
	}
	if (self) {
		t->v[node].self_samples += e->samples;
		t->v[node].self_period += e->period;
	}
	return 0;
}

/* ftree__build_ex() without flags: every frame its own node. */
int ftree__build(struct ftree *t, const struct hists *h, int hist, enum ftree_mode mode, u32 focus)
{
	return ftree__build_ex(t, h, hist, mode, focus, 0);
}

/* Count the frames after @k in @fids[0..n) that repeat @focus; the root's recursion. */
static u32 run_after(const u32 *fids, u32 n, u32 k, u32 focus)
{
	u32 r = 0;

	while (k + 1 + r < n && fids[k + 1 + r] == focus)
		r++;
	return r;
}

/*
 * Build the tree of event @hist in @mode (@focus: the function for
 * FT_CALLEES and FT_CALLERS), with FT_* @flags. Returns 0 or -ENOMEM;
 * ftree__exit() either way.
 */
int ftree__build_ex(struct ftree *t, const struct hists *h, int hist, enum ftree_mode mode,
		    u32 focus, unsigned flags)
{
	bool fold = flags & FT_FOLD_RECURSION;
	u32 *path = malloc(MAX_FRAMES * sizeof(*path) * 2), *fids;
	size_t i;
	u32 root;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!path)
		return -ENOMEM;
	fids = path + MAX_FRAMES;
	err = child_of(t, NONE, mode == FT_STACKS ? FUNC_UNKNOWN : focus, &root);
	for (i = 0; i < h->stacks.nr_entries && !err; i++) {
		const struct entry *e = &h->stacks.entries[i];
		u32 n, d, k = NONE, r;

		if (e->hist != (u32)hist)
			continue;
		n = stacks__path(&h->stacks, e->node, path);
		for (d = 0; d < n; d++) /* outermost first */
			fids[d] = h->stacks.nodes[path[n - 1 - d]].fid;
		switch (mode) {
		case FT_STACKS:
			err = insert(t, e, fids, n, true, fold);
			break;
		case FT_CALLEES:
			for (d = 0; d < n && k == NONE; d++)
				k = fids[d] == focus ? d : NONE;
			if (k == NONE)
				break;
			/* folded: the focus calling itself stays the root */
			r = fold ? run_after(fids, n, k, focus) : 0;
			if (r + 1 > t->v[0].rec)
				t->v[0].rec = r + 1;
			err = insert(t, e, fids + k + 1 + r, n - k - 1 - r, true, fold);
			break;
		case FT_CALLERS:
			for (d = n; d > 0 && k == NONE; d--)
				k = fids[d - 1] == focus ? d - 1 : NONE;
			if (k == NONE || ((flags & FT_SELF_ONLY) && k != n - 1))
				break;
			r = 0;
			while (fold && r < k && fids[k - 1 - r] == focus)
				r++;
			if (r + 1 > t->v[0].rec)
				t->v[0].rec = r + 1;
			k -= r;
			for (d = 0; d < k / 2; d++) { /* callers, innermost first */
				u32 tmp = fids[d];

				fids[d] = fids[k - 1 - d];
				fids[k - 1 - d] = tmp;
			}
			err = insert(t, e, fids, k, false, fold);
			break;
		}
	}
	free(path);
	return err;
}

struct order_ctx {
	const struct fnode *v;
	const struct func *funcs;
	bool by_name;
};

static int order_cmp(const void *pa, const void *pb, void *arg)
{
	const struct order_ctx *c = arg;
	const struct fnode *x = &c->v[*(const u32 *)pa], *y = &c->v[*(const u32 *)pb];
	int d;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (!c->by_name && x->period != y->period)
		return x->period > y->period ? -1 : 1;
	d = strcmp(c->funcs[x->fid].name, c->funcs[y->fid].name);
	if (d)
		return d;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

/* Relink every node's children in name order (@by_name) or by period, largest first. */
void ftree__order(struct ftree *t, const struct func *funcs, bool by_name)
{
	struct order_ctx c = {t->v, funcs, by_name};
	u32 *ids;
	size_t i;

	if (t->nr < 2)
		return;
	ids = malloc((t->nr - 1) * sizeof(*ids));
	if (!ids)
		return; /* keeps insertion order */
	for (i = 1; i < t->nr; i++)
		ids[i - 1] = (u32)i;
	qsort_r(ids, t->nr - 1, sizeof(*ids), order_cmp, &c);
	for (i = 0; i < t->nr; i++)
		t->v[i].child = NONE;
	for (i = t->nr - 1; i > 0; i--) {
		struct fnode *n = &t->v[ids[i - 1]];

		n->next = t->v[n->parent].child;
		t->v[n->parent].child = ids[i - 1];
	}
	free(ids);
}

void ftree__exit(struct ftree *t)
{
	free(t->v);
	kvmap__exit(&t->idx);
	memset(t, 0, sizeof(*t));
}
