// SPDX-License-Identifier: MIT
/*
 * render_tree.c - --tree: the call graph of the hottest functions. Under
 * each function its callees, or with --callers its callers, as an indented
 * tree; branches below --min-percent of the event are cut. The functions
 * are the matches of --focus/--peek/-S when given, else the top functions
 * by total time (callees) or by self time (callers of the time spent in
 * the function itself, up to main, as perf report --no-children -G). Direct recursion is one row,
 * "f (recursive xN)", unless --no-fold-recursion. --peek shows the direct callers and callees only.
 * Percentages are of the event's whole period, as perf report shows them.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>

/* Deepest level printed; deeper branches end in "...". */
#define MAX_TREE_DEPTH 64

static void print_name(const struct session *s, const struct fnode *f, FILE *out)
{
	output__print_clean(out, s->hists.res.funcs[f->fid].name);
	if (f->rec > 1)
		fprintf(out, " (recursive x%u)", f->rec);
}

/*
 * Print the branches below @node, indented from @indent levels, at most
 * @max_depth levels deep.
 */
static void print_branch(const struct session *s, const struct ftree *t, u32 node, u64 whole,
			 double min_pct, u32 indent, u32 max_depth, bool wall, FILE *out)
{
	u32 depth = 1, n = t->v[node].child;

	/* Iterative pre-order walk: child first, then next sibling, then up. */
	while (n != UINT32_MAX && n != node) {
		const struct fnode *f = &t->v[n];
		double pct = output__pct_of(f->period, whole);
		bool shown = pct >= min_pct;

		if (shown) {
			fprintf(out, "%*s%.2f%%  ", (int)(2 * (depth + indent)), "", pct);
			print_name(s, f, out);
			if (wall) /* offcpu-time: the time waited */
				fprintf(out, "  (%.3f s)\n", (double)f->period / 1e9);
			else
				fprintf(out, "  (%llu)\n", (unsigned long long)f->samples);
		}
		if (shown && f->child != UINT32_MAX && depth < max_depth) {
			n = f->child;
			depth++;
			continue;
		}
		if (shown && f->child != UINT32_MAX && max_depth == MAX_TREE_DEPTH)
			fprintf(out, "%*s...\n", (int)(2 * (depth + indent) + 2), "");
		while (n != node && t->v[n].next == UINT32_MAX) {
			n = t->v[n].parent;
			depth--;
		}
		if (n != node)
			n = t->v[n].next;
	}
}

/* The tree of function @fid in @mode, recursion folded unless --no-fold-recursion. */
static int build(struct ftree *t, struct session *s, const struct report_opts *o, int hist, u32 fid,
		 enum ftree_mode mode, unsigned flags)
{
	int err = ftree__build_ex(t, &s->hists, hist, mode, fid,
				  flags | (o->no_fold ? 0 : FT_FOLD_RECURSION));

	if (!err)
		ftree__order(t, s->hists.res.funcs, false);
	return err;
}

/* The heading of function @r's tree: its share (@by_self: self first), name, object. */
static void print_heading(const struct session *s, const struct hist *hi, const struct row *r,
			  bool by_self, u32 rec, FILE *out)
{
	const struct func *fn = &s->hists.res.funcs[r->key[0]];

	fprintf(out, "\n%6.2f%%  ",
		output__pct_of(by_self ? r->self_period : r->total_period, hi->total_period));
	output__print_clean(out, fn->name);
	if (rec > 1)
		fprintf(out, " (recursive x%u)", rec);
	fprintf(out, "  [");
	output__print_clean(out, fn->object);
	if (event_units__wall(hi->event)) /* offcpu-time: the time waited */
		fprintf(
		    out, "]  %s %.2f%%, %.3f s\n", by_self ? "total" : "self",
		    output__pct_of(by_self ? r->total_period : r->self_period, hi->total_period),
		    (double)(by_self ? r->self_period : r->total_period) / 1e9);
	else if (by_self)
		fprintf(out, "]  total %.2f%%, %llu samples\n",
			output__pct_of(r->total_period, hi->total_period),
			(unsigned long long)r->self_samples);
	else
		fprintf(out, "]  self %.2f%%, %llu samples\n",
			output__pct_of(r->self_period, hi->total_period),
			(unsigned long long)r->total_samples);
}

/* Print the --tree view of the main event. Returns 0 or -ENOMEM. */
int render_tree(struct session *s, const struct report_opts *o, FILE *out)
{
	static const struct sort_spec by_func = {{SK_FUNC}, 1};
	int hist = session__main_hist(s, o->event);
	bool aimed = aim__has_focus(o->aim), peek = o->aim && o->aim->has[AIM_PEEK];
	bool by_self = o->callers && !aimed;
	enum ftree_mode mode = o->callers ? FT_CALLERS : FT_CALLEES;
	const struct hist *hi;
	struct rows rows;
	size_t i, shown = 0;
	bool wall;
	char count[64];
	int err;

	if (hist < 0 || (size_t)hist >= s->hists.nr)
		return 0;
	hi = &s->hists.v[hist];
	wall = event_units__wall(hi->event);
	err = rows__build(&rows, &s->hists, &s->machine, hist, &by_func);
	if (err)
		goto out;
	rows__sort(&rows, &s->hists, !by_self);
	if (wall) /* offcpu-time: a record per wait (per stack and window, aggregated) */
		snprintf(count, sizeof(count), "%.3f s in %llu %s", (double)hi->total_period / 1e9,
			 (unsigned long long)hi->nr_samples,
			 s->merged ? "merged records" : "records");
	else
		snprintf(count, sizeof(count), "%llu %s", (unsigned long long)hi->nr_samples,
			 output__count_noun(s, hi->event));
	fprintf(out, "Call graph of %s (%s%s, %s; branches under %.2f%% hidden)\n", hi->event,
		peek	  ? "callers and callees of the --peek matches"
		: aimed	  ? (o->callers ? "callers of the matches" : "callees of the matches")
		: by_self ? "callers of the top functions by self time"
			  : "callees",
		o->no_fold ? "" : ", recursion folded", count, o->min_pct);
	for (i = 0; i < rows.nr && shown < o->top && !err; i++) {
		const struct row *r = &rows.v[i];
		struct ftree t = {0}, up = {0};
		u32 fid = r->key[0];

		if (aimed) {
			u8 m = aim__marks(&s->hists, fid);

			if (!(m & (peek ? MARK_PEEK : MARK_AIMED)))
				continue;
		} else if (output__pct_of(by_self ? r->self_period : r->total_period,
					  hi->total_period) < o->min_pct) {
			break;
		}
		shown++;
		/* by self: the callers of the time spent in the function itself */
		err = build(&t, s, o, hist, fid, peek ? FT_CALLEES : mode,
			    by_self ? FT_SELF_ONLY : 0);
		if (!err && peek)
			err = build(&up, s, o, hist, fid, FT_CALLERS, 0);
		if (!err) {
			print_heading(s, hi, r, by_self, t.v[0].rec, out);
			if (peek) {
				fprintf(out, "    callers:\n");
				print_branch(s, &up, 0, hi->total_period, o->min_pct, 2, 1, wall,
					     out);
				fprintf(out, "    callees:\n");
				print_branch(s, &t, 0, hi->total_period, o->min_pct, 2, 1, wall,
					     out);
			} else {
				print_branch(s, &t, 0, hi->total_period, o->min_pct, 0,
					     MAX_TREE_DEPTH, wall, out);
			}
		}
		ftree__exit(&t);
		ftree__exit(&up);
	}
out:
	rows__exit(&rows);
	return err;
}
