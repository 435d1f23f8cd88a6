// SPDX-License-Identifier: MIT
/*
 * render_folded.c - --folded: Brendan Gregg's collapsed stack format, one
 * line per distinct stack: "outer;...;leaf count" with the sample count,
 * stacks in name order, for flamegraph.pl and friends. The counts add up to
 * the event's samples.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>

/* A frame name made safe for the format: ';' and newlines would split it. */
static void put_frame(FILE *out, const char *name)
{
	for (; *name; name++) {
		unsigned char c = (unsigned char)*name;

		fputc(c == ';' ? ':' : c < 0x20 || c == 0x7f ? ' ' : c, out);
	}
}

static void put_stack(const struct session *s, const struct ftree *t, u32 node, u32 *scratch,
		      FILE *out)
{
	u32 n = 0, i;

	for (; node && n < MAX_FRAMES; node = t->v[node].parent)
		scratch[n++] = node;
	for (i = n; i > 0; i--) {
		if (i != n)
			fputc(';', out);
		put_frame(out, s->hists.res.funcs[t->v[scratch[i - 1]].fid].name);
	}
}

/* Print the main event's stacks in collapsed form. Returns 0 or -ENOMEM. */
int render_folded(struct session *s, const struct report_opts *o, FILE *out)
{
	int hist = session__main_hist(s, o->event);
	bool by_period;
	struct ftree t;
	u32 *scratch;
	size_t i;
	int err;

	if (hist < 0 || (size_t)hist >= s->hists.nr)
		return 0;
	/* a memory event's stacks count its bytes or objects (driver/memory_events.c) */
	/* ... and a wall-clock event's (offcpu-time) its nanoseconds waited */
	by_period = memory_names__column(s->hists.v[hist].event) ||
		    event_units__wall(s->hists.v[hist].event);
	scratch = malloc(MAX_FRAMES * sizeof(*scratch));
	if (!scratch)
		return -ENOMEM;
	err = ftree__build(&t, &s->hists, hist, FT_STACKS, 0);
	if (!err) {
		ftree__order(&t, s->hists.res.funcs, true);
		/* Pre-order in name order gives FlameGraph's sorted input. */
		for (i = t.v[0].child; i != UINT32_MAX;) {
			const struct fnode *f = &t.v[i];

			if (f->self_samples) {
				put_stack(s, &t, (u32)i, scratch, out);
				fprintf(out, " %llu\n",
					(unsigned long long)(by_period ? f->self_period
								       : f->self_samples));
			}
			i = ftree__next(&t, (u32)i);
		}
	}
	ftree__exit(&t);
	free(scratch);
	return err;
}
