// SPDX-License-Identifier: MIT
/*
 * hot_lines.c - --hot-lines N: where the time of the hottest functions went,
 * as perf annotate --print-line summarises it: for each of the top functions
 * by self time, the N source lines (file:line, from the samples' addresses
 * and the libdw line tables) with the most samples, as shares of the
 * function's own samples.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>

struct line_ctx {
	const struct row *v;
};

/* A row's count: its samples, or the seconds of a wall-clock event (offcpu-time). */
static void print_count(FILE *out, const struct hist *hi, u64 samples, u64 period)
{
	if (event_units__wall(hi->event))
		fprintf(out, "%8.3f s  ", (double)period / 1e9);
	else
		fprintf(out, "%8llu  ", (unsigned long long)samples);
}

/* By function, then samples (period) largest first, then line text id. */
static int line_cmp(const void *pa, const void *pb, void *arg)
{
	const struct line_ctx *c = arg;
	const struct row *x = &c->v[*(const u32 *)pa], *y = &c->v[*(const u32 *)pb];

	if (x->key[0] != y->key[0])
		return x->key[0] < y->key[0] ? -1 : 1;
	if (x->self_period != y->self_period)
		return x->self_period > y->self_period ? -1 : 1;
	if (x->self_samples != y->self_samples)
		return x->self_samples > y->self_samples ? -1 : 1;
	return x->key[1] < y->key[1] ? -1 : x->key[1] > y->key[1];
}

/* True if @line is a "file:line" (not an object+offset placeholder). */
static bool has_line(const char *line)
{
	return strchr(line, ':') != NULL;
}

/*
 * Print the hot lines of the top o->top functions by self time of event
 * @hist (those -S names when given). Needs the stacks keyed by location
 * (session_opts.lines). Returns 0 or -ENOMEM.
 */
int hot_lines__print(struct session *s, int hist, const struct report_opts *o, FILE *out)
{
	static const struct sort_spec by_func = {{SK_FUNC}, 1};
	static const struct sort_spec by_line = {{SK_FUNC, SK_SRCLINE}, 2};
	const struct hist *hi = &s->hists.v[hist];
	struct rows funcs, lines;
	struct line_ctx c;
	struct kvmap first = {0};
	u32 *ids = NULL;
	size_t i, shown = 0;
	int err;

	err = rows__build_leaves(&funcs, &s->hists, &s->machine, hist, &by_func);
	if (!err)
		err = rows__build_leaves(&lines, &s->hists, &s->machine, hist, &by_line);
	if (err)
		goto out;
	rows__sort(&funcs, &s->hists, false);
	ids = malloc((lines.nr ? lines.nr : 1) * sizeof(*ids));
	if (!ids) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < lines.nr; i++)
		ids[i] = (u32)i;
	c.v = lines.v;
	qsort_r(ids, lines.nr, sizeof(*ids), line_cmp, &c);
	for (i = lines.nr; i > 0 && !err; i--) /* the first line row of each function */
		err = kvmap__put(&first, lines.v[ids[i - 1]].key[0], 0, i - 1);
	if (err)
		goto out;
	fprintf(out, "\nHot source lines (up to %u per function, %% of its self samples):\n",
		o->hot_lines);
	for (i = 0; i < funcs.nr && shown < o->top; i++) {
		const struct row *f = &funcs.v[i];
		u32 fid = f->key[0];
		unsigned n = 0;
		u64 at;

		if (!f->self_samples)
			break;
		if (o->aim && o->aim->nr_symbols && !(aim__marks(&s->hists, fid) & MARK_SYMBOL))
			continue;
		shown++;
		fprintf(out, "\n%6.2f%%  ", output__pct_of(f->self_period, hi->total_period));
		print_count(out, hi, f->self_samples, f->self_period);
		output__print_clean(out, s->hists.res.funcs[fid].name);
		fprintf(out, "  [");
		output__print_clean(out, s->hists.res.funcs[fid].object);
		fprintf(out, "]\n");
		if (!kvmap__get(&first, fid, 0, &at))
			continue;
		for (; at < lines.nr && lines.v[ids[at]].key[0] == fid && n < o->hot_lines; at++) {
			const struct row *l = &lines.v[ids[at]];
			const char *text = strset__str(&lines.names, l->key[1]);

			if (!has_line(text))
				continue;
			fprintf(out, "  %6.2f%%  ", output__pct_of(l->self_period, f->self_period));
			print_count(out, hi, l->self_samples, l->self_period);
			output__print_clean(out, text);
			fprintf(out, "\n");
			n++;
		}
		if (!n)
			fprintf(out, "  (no line information)\n");
	}
out:
	free(ids);
	kvmap__exit(&first);
	rows__exit(&lines);
	rows__exit(&funcs);
	return err;
}
