// SPDX-License-Identifier: MIT
/*
 * aim.c - aiming the views: the stack filter every view shares, applied to
 * each sample's stack as it is aggregated (hists__add_stack() in hists.c):
 *   --ignore RE   drop the samples whose stack has a function matching RE
 *   --focus RE    keep only the samples whose stack has a match (pprof -focus)
 *   --peek RE     the same, and the tree shows the matches' direct callers and
 *                 callees only (pprof -peek)
 *   -S LIST       the same with exact names (perf report --symbols); the top
 *                 table shows only these functions
 *   --hide RE     remove matching frames from the stacks (pprof -hide)
 * Regular expressions are POSIX extended, unanchored, matched against the
 * function's displayed name. Dropped samples still count in the event's
 * totals: percentages stay of the whole profile, as perf report's default
 * (--percentage absolute) and pprof's "of N total" do.
 *
 * Each function is matched once per reader: its marks are cached by id.
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdlib.h>

static const char *const aim_names[AIM_NR] = {"--focus", "--peek", "--hide", "--ignore"};

/*
 * Compile @regex as the @k filter of @a (a repeated option replaces the
 * earlier one). Returns 0, or -EINVAL with a message naming the option and
 * the regex error in @err.
 */
int aim__set(struct aim *a, enum aim_kind k, const char *regex, char *err, size_t len)
{
	regex_t re;
	int rc;

	rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char why[128];

		regerror(rc, &re, why, sizeof(why));
		snprintf(err, len, "%s '%s': %s", aim_names[k], regex, why);
		return -EINVAL;
	}
	if (a->has[k])
		regfree(&a->re[k]);
	a->re[k] = re;
	a->has[k] = true;
	return 0;
}

/* True if any filter is set: the aggregation then consults the marks. */
bool aim__active(const struct aim *a)
{
	return a && (a->has[AIM_FOCUS] || a->has[AIM_PEEK] || a->has[AIM_HIDE] ||
		     a->has[AIM_IGNORE] || a->nr_symbols);
}

/* True if the views start from the matches of --focus, --peek or -S. */
bool aim__has_focus(const struct aim *a)
{
	return a && (a->has[AIM_FOCUS] || a->has[AIM_PEEK] || a->nr_symbols);
}

void aim__exit(struct aim *a)
{
	int k;

	for (k = 0; k < AIM_NR; k++) {
		if (a->has[k])
			regfree(&a->re[k]);
		a->has[k] = false;
	}
	a->nr_symbols = 0;
}

static u8 compute_marks(const struct aim *a, const char *name)
{
	u8 m = MARK_DONE;
	size_t i;

	if (a->has[AIM_FOCUS] && !regexec(&a->re[AIM_FOCUS], name, 0, NULL, 0))
		m |= MARK_FOCUS;
	if (a->has[AIM_PEEK] && !regexec(&a->re[AIM_PEEK], name, 0, NULL, 0))
		m |= MARK_PEEK;
	if (a->has[AIM_HIDE] && !regexec(&a->re[AIM_HIDE], name, 0, NULL, 0))
		m |= MARK_HIDE;
	if (a->has[AIM_IGNORE] && !regexec(&a->re[AIM_IGNORE], name, 0, NULL, 0))
		m |= MARK_IGNORE;
	for (i = 0; i < a->nr_symbols; i++) {
		if (!strcmp(a->symbols[i], name))
			m |= MARK_SYMBOL;
	}
	return m;
}

/*
 * The MARK_* bits of function @fid of @h under its filter (0 without one),
 * computed on first use. Out of memory: no marks (the function is kept).
 */
u8 aim__marks(struct hists *h, u32 fid)
{
	if (!aim__active(h->aim) || fid >= h->res.nr_funcs)
		return 0;
	if (fid >= h->nr_marks) {
		size_t cap = h->nr_marks, want = 2 * cap > fid + 1 ? 2 * cap : fid + 64;
		u8 *v = realloc(h->marks, want);

		if (!v)
			return 0;
		memset(v + cap, 0, want - cap);
		h->marks = v;
		h->nr_marks = want;
	}
	if (!h->marks[fid])
		h->marks[fid] = compute_marks(h->aim, h->res.funcs[fid].name);
	return h->marks[fid];
}

/* aim__marks() with the cached marks read inline: the per-frame path. */
static inline u8 marks_of(struct hists *h, u32 loc)
{
	u32 fid = h->res.locs[loc].fid;

	return fid < h->nr_marks && h->marks[fid] ? h->marks[fid] : aim__marks(h, fid);
}

/*
 * Apply the filter of @h to the stack @locs (@nr location ids, leaf first).
 * Returns 1 to keep it, with *@out and *@out_nr the stack to count (@locs,
 * or a copy in h->aim_buf without the hidden frames); 0 to drop the sample
 * from the stacks (it still counts in the totals); -ENOMEM.
 */
int aim__filter(struct hists *h, const u32 *locs, u32 nr, const u32 **out, u32 *out_nr)
{
	const struct aim *a = h->aim;
	bool focus = !a->has[AIM_FOCUS], peek = !a->has[AIM_PEEK], sym = !a->nr_symbols;
	bool hide = false;
	u32 i, n = 0;

	for (i = 0; i < nr; i++) {
		u8 m = marks_of(h, locs[i]);

		if (m & MARK_IGNORE)
			return 0;
		focus |= m & MARK_FOCUS;
		peek |= m & MARK_PEEK;
		sym |= m & MARK_SYMBOL;
		hide |= m & MARK_HIDE;
	}
	if (!focus || !peek || !sym)
		return 0;
	*out = locs;
	*out_nr = nr;
	if (!hide)
		return 1;
	if (!h->aim_buf && !(h->aim_buf = malloc(MAX_FRAMES * sizeof(*h->aim_buf))))
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (!(marks_of(h, locs[i]) & MARK_HIDE))
			h->aim_buf[n++] = locs[i];
	}
	*out = h->aim_buf;
	*out_nr = n;
	return n > 0;
}
