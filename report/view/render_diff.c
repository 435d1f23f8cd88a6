// SPDX-License-Identifier: MIT
/*
 * render_diff.c - --diff A B: which functions grew or shrank. Functions are
 * matched by name and object across the two profiles; their self shares of
 * the compared event are subtracted, and the biggest changes come first.
 * Either side may be several files (a process tree), merged into one profile.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>

/* Changes smaller than this (in points) print as 0.00 and count as none. */
#define DIFF_EPSILON 0.005

struct diff_row {
	u32 key; /* "name\tobject" in the strset */
	double a, b;
};

struct diff {
	struct diff_row *v;
	size_t nr, cap;
	struct kvmap idx; /* key -> row */
	struct strset keys;
};

static int add_side(struct diff *d, struct session *s, int hist, bool second)
{
	static const struct sort_spec by_func = {{SK_FUNC}, 1};
	const struct hist *hi = &s->hists.v[hist];
	struct rows rows;
	char *key = NULL;
	size_t i;
	int err;

	err = rows__build(&rows, &s->hists, &s->machine, hist, &by_func);
	for (i = 0; i < rows.nr && !err; i++) {
		const struct func *fn = &s->hists.res.funcs[rows.v[i].fid];
		double pct = output__pct_of(rows.v[i].self_period, hi->total_period);
		struct diff_row *r;
		u32 id;
		u64 val;

		if (!rows.v[i].self_samples)
			continue;
		if (asprintf(&key, "%s\t%s", fn->name, fn->object) < 0) {
			err = -ENOMEM;
			break;
		}
		err = strset__intern(&d->keys, key, strlen(key), &id);
		free(key);
		if (err)
			break;
		if (kvmap__get(&d->idx, id, 0, &val)) {
			r = &d->v[val];
		} else {
			if (array__reserve(&d->v, &d->cap, d->nr + 1, sizeof(*d->v))) {
				err = -ENOMEM;
				break;
			}
			err = kvmap__put(&d->idx, id, 0, d->nr);
			if (err)
				break;
			r = &d->v[d->nr++];
			*r = (struct diff_row){.key = id};
		}
		if (second)
			r->b += pct;
		else
			r->a += pct;
	}
	rows__exit(&rows);
	return err;
}

static double mag(const struct diff_row *r)
{
	double d = r->b - r->a;

	return d < 0 ? -d : d;
}

static int diff_cmp(const void *pa, const void *pb, void *arg)
{
	const struct diff_row *x = pa, *y = pb;
	const struct strset *keys = arg;

	if (mag(x) != mag(y))
		return mag(x) > mag(y) ? -1 : 1;
	return strcmp(strset__str(keys, x->key), strset__str(keys, y->key));
}

static void print_key(FILE *out, const char *key)
{
	const char *tab = strchr(key, '\t');
	char name[512];

	snprintf(name, sizeof(name), "%.*s", tab ? (int)(tab - key) : (int)strlen(key), key);
	output__print_clean(out, name);
	if (tab) {
		fprintf(out, "  ");
		output__print_clean(out, tab + 1);
	}
}

/* The files of one side: the first three paths, then how many more. */
static void print_files(FILE *out, const struct session *s)
{
	size_t i;

	for (i = 0; i < s->nr_files && i < 3; i++) {
		if (i)
			fprintf(out, ", ");
		output__print_clean(out, s->files[i].path);
	}
	if (s->nr_files > 3)
		fprintf(out, " and %zu more", s->nr_files - 3);
}

/* " (EVENT, N samples)", or the seconds of a wall-clock event (offcpu-time). */
static void print_count(FILE *out, const struct hist *h)
{
	if (event_units__wall(h->event))
		fprintf(out, " (%s, %.3f s)", h->event, (double)h->total_period / 1e9);
	else
		fprintf(out, " (%s, %llu samples)", h->event, (unsigned long long)h->nr_samples);
}

/* Print how @b's self shares differ from @a's. Returns 0 or -ENOMEM. */
int render_diff(struct session *a, struct session *b, const struct report_opts *o, FILE *out)
{
	int ha = session__main_hist(a, o->event), hb = session__main_hist(b, o->event);
	struct diff d = {0};
	size_t i, shown = 0;
	int err = 0;

	if (ha < 0 || hb < 0 || !a->hists.nr || !b->hists.nr) {
		fprintf(out, "No event %s in both profiles.\n", o->event ? o->event : "");
		return 0;
	}
	fprintf(out, "Baseline: ");
	print_files(out, a);
	print_count(out, &a->hists.v[ha]);
	fprintf(out, "\nNew:      ");
	print_files(out, b);
	print_count(out, &b->hists.v[hb]);
	fprintf(out, "\n");
	err = add_side(&d, a, ha, false);
	if (!err)
		err = add_side(&d, b, hb, true);
	if (!err && d.nr > 1)
		qsort_r(d.v, d.nr, sizeof(*d.v), diff_cmp, &d.keys);
	for (i = 0; !err && i < d.nr && shown < o->top; i++) {
		const struct diff_row *r = &d.v[i];

		if (mag(r) < DIFF_EPSILON)
			break;
		if (!shown++)
			fprintf(out, "\n  Base%%    New%%    Delta  Function  Object\n");
		fprintf(out, "%6.2f%%  %6.2f%%  %+6.2f  ", r->a, r->b, r->b - r->a);
		print_key(out, strset__str(&d.keys, r->key));
		fprintf(out, "\n");
	}
	if (!err && !shown)
		fprintf(out,
			"\nNo change: self shares of all %zu functions agree within %.3f points.\n",
			d.nr, DIFF_EPSILON);
	free(d.v);
	kvmap__exit(&d.idx);
	strset__exit(&d.keys);
	return err;
}
