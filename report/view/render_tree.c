// SPDX-License-Identifier: MIT
/*
 * render_tree.c - --tree: the call graph of the hottest functions. Under
 * each function (by total time) its callees, or with --callers its callers,
 * as an indented tree; branches below --min-percent of the event are cut.
 * Percentages are of the event's whole period, as perf report shows them.
 */
#include "internal.h"

#include <stdlib.h>

/* Deepest level printed; deeper branches end in "...". */
#define MAX_TREE_DEPTH 64

static void print_branch(const struct session *s, const struct ftree *t, u32 node, u64 whole,
			 double min_pct, FILE *out)
{
	u32 depth = 1, n = t->v[node].child;

	/* Iterative pre-order walk: child first, then next sibling, then up. */
	while (n != UINT32_MAX && n != node) {
		const struct fnode *f = &t->v[n];
		double pct = pct_of(f->period, whole);
		bool shown = pct >= min_pct;

		if (shown) {
			fprintf(out, "%*s%.2f%%  ", (int)(2 * depth), "", pct);
			print_clean(out, s->hists.res.funcs[f->fid].name);
			fprintf(out, "  (%llu)\n", (unsigned long long)f->samples);
		}
		if (shown && f->child != UINT32_MAX && depth < MAX_TREE_DEPTH) {
			n = f->child;
			depth++;
			continue;
		}
		if (shown && f->child != UINT32_MAX)
			fprintf(out, "%*s...\n", (int)(2 * depth + 2), "");
		while (n != node && t->v[n].next == UINT32_MAX) {
			n = t->v[n].parent;
			depth--;
		}
		if (n != node)
			n = t->v[n].next;
	}
}

/* Print the --tree view of the main event. Returns 0 or -ENOMEM. */
int render_tree(struct session *s, const struct report_opts *o, FILE *out)
{
	static const struct sort_spec by_func = {{SK_FUNC}, 1};
	int hist = session__main_hist(s, o->event);
	const struct hist *hi;
	struct rows rows;
	size_t i, shown = 0;
	int err;

	if (hist < 0 || (size_t)hist >= s->hists.nr)
		return 0;
	hi = &s->hists.v[hist];
	err = rows__build(&rows, s, hist, &by_func);
	if (err)
		goto out;
	rows__sort(&rows, s, true);
	fprintf(out, "Call graph of %s (%s, %llu samples; branches under %.2f%% hidden)\n",
		hi->event, o->callers ? "callers" : "callees", (unsigned long long)hi->nr_samples,
		o->min_pct);
	for (i = 0; i < rows.nr && shown < o->top && !err; i++) {
		const struct row *r = &rows.v[i];
		struct ftree t;

		if (pct_of(r->total_period, hi->total_period) < o->min_pct)
			break;
		shown++;
		fprintf(out, "\n%6.2f%%  ", pct_of(r->total_period, hi->total_period));
		print_clean(out, s->hists.res.funcs[r->key[0]].name);
		fprintf(out, "  [");
		print_clean(out, s->hists.res.funcs[r->key[0]].object);
		fprintf(out, "]  self %.2f%%, %llu samples\n",
			pct_of(r->self_period, hi->total_period),
			(unsigned long long)r->total_samples);
		err = ftree__build(&t, s, hist, o->callers ? FT_CALLERS : FT_CALLEES, r->key[0]);
		if (!err) {
			ftree__order(&t, s->hists.res.funcs, false);
			print_branch(s, &t, 0, hi->total_period, o->min_pct, out);
		}
		ftree__exit(&t);
	}
out:
	rows__exit(&rows);
	return err;
}
