// SPDX-License-Identifier: MIT
/*
 * render_leaks.c - --leaks: the memory still allocated at the end of each
 * profiled process (autoprof's live-bytes event, AUTOPROF_MEMORY), by
 * allocation stack, biggest first, as heaptrack's and async-profiler's leak
 * views show it: the estimated bytes, the estimated blocks (live-objects),
 * the share, and the stack from the allocating function outwards.
 *
 * With AUTOPROF_MEMORY_INTERVAL=1 every allocation is recorded and the
 * numbers are exact; at the default interval each stack's bytes are an
 * unbiased estimate, and a leak smaller than the interval may be missed.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>

#define LEAK_FRAMES 16 /* frames shown per stack */

struct leak {
	u32 node;
	u64 bytes, objects;
};

static int by_bytes(const void *a, const void *b)
{
	const struct leak *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* The hist of event @name, or -1. */
static int hist_of(const struct session *s, const char *name)
{
	for (size_t i = 0; i < s->hists.nr; i++)
		if (!strcmp(s->hists.v[i].event, name))
			return (int)i;
	return -1;
}

/* Sum the entries of @hist by stack into @v (indexed through @at: node -> slot + 1). */
static void sum(const struct stacks *st, int hist, bool objects, struct leak *v, size_t *n, u32 *at)
{
	for (size_t i = 0; i < st->nr_entries; i++) {
		const struct entry *e = &st->entries[i];
		struct leak *l;

		if (e->hist != (u32)hist)
			continue;
		if (!at[e->node]) {
			if (objects)
				continue; /* no bytes at this stack: not a leak row */
			v[*n] = (struct leak){.node = e->node};
			at[e->node] = (u32)++ * n;
		}
		l = &v[at[e->node] - 1];
		if (objects)
			l->objects += e->period;
		else
			l->bytes += e->period;
	}
}

/* Do filters (--pid, --tid, --comm, --dso, --time, --focus & co) choose the samples? */
static bool filtering(const struct session *s)
{
	const struct filter *f = &s->opts.filter;

	return f->nr_pids || f->nr_tids || f->nr_comms || f->nr_dsos || f->has_time ||
	       s->opts.aim || s->filtered;
}

static void print_stack(const struct session *s, u32 node, u32 *path, FILE *out)
{
	const struct stacks *st = &s->hists.stacks;
	u32 n = stacks__path(st, node, path), d;

	for (d = 0; d < n && d < LEAK_FRAMES; d++) {
		const struct func *f = &s->hists.res.funcs[st->nodes[path[d]].fid];

		fprintf(out, "%s%s  [%s]\n", d ? "                                      " : "  ",
			f->name, f->object ? f->object : "?");
	}
	if (n > LEAK_FRAMES)
		fprintf(out, "                                      ... %u more frames\n",
			n - LEAK_FRAMES);
}

/*
 * Print the leak view of @s to @out. Returns 0, 1 when the input has no
 * memory profile (said on stderr), or -ENOMEM.
 */
int render_leaks(struct session *s, const struct report_opts *o, FILE *out)
{
	const struct stacks *st = &s->hists.stacks;
	int live = hist_of(s, "live-bytes"), objs = hist_of(s, "live-objects");
	struct leak *v;
	u32 *at, *path;
	u64 total = 0;
	size_t n = 0, i;

	(void)o;
	if (live < 0 && hist_of(s, "alloc-bytes") < 0) {
		fprintf(stderr,
			"autoprof-report: --leaks: the input has no memory profile "
			"(record one with autoprof --memory, or AUTOPROF_MEMORY=1 with both "
			"libautoprof.so and libautoprof-memory.so in LD_PRELOAD)\n");
		return 1;
	}
	if ((live < 0 || !s->hists.v[live].nr_samples) && !s->memory_zero && filtering(s)) {
		fprintf(stderr, "autoprof-report: --leaks: no live set in what the filters keep "
				"(--pid, --tid, --comm, --dso, --time, --focus, --ignore): none "
				"matches, or the processes kept ended without one (SIGKILL)\n");
		return 1;
	}
	if ((live < 0 || !s->hists.v[live].nr_samples) && !s->memory_zero) {
		fprintf(stderr,
			"autoprof-report: --leaks: the input has no live set: it is written "
			"at the end of the process, at a window's end and at ctl dump, and this "
			"process ended without one (SIGKILL, a Go program's raw exit_group, a "
			"live table held too long, an end inside seccomp, or in a signal handler "
			"that interrupted the profiler)\n");
		return 1;
	}
	if (live < 0 || !s->hists.v[live].nr_samples) {
		fprintf(out, "Leaks: none. No sampled block was still allocated at the end.\n");
		output__print_memory_before(s, out);
		return 0;
	}
	v = calloc(st->nr_entries + 1, sizeof(*v));
	at = calloc(st->nr_nodes + 1, sizeof(*at));
	path = malloc(MAX_FRAMES * sizeof(*path));
	if (!v || !at || !path) {
		free(v);
		free(at);
		free(path);
		return -ENOMEM;
	}
	sum(st, live, false, v, &n, at);
	if (objs >= 0)
		sum(st, objs, true, v, &n, at);
	qsort(v, n, sizeof(*v), by_bytes);
	while (n && !v[n - 1].bytes)
		n--; /* a live set that a later one retired (ctl dump): its records weigh 0 */
	for (i = 0; i < n; i++)
		total += v[i].bytes;
	if (!n)
		fprintf(out, "Leaks: none. No sampled block was still allocated at the end.\n");
	else
		fprintf(
		    out,
		    "Leaks: memory still allocated at the end, by allocation stack, biggest first\n"
		    "(live-bytes: %llu bytes in %zu stacks; estimates unless recorded with "
		    "AUTOPROF_MEMORY_INTERVAL=1)\n",
		    (unsigned long long)total, n);
	output__print_memory_before(s, out);
	if (n)
		fputc('\n', out);
	if (n)
		fprintf(out, "%14s  %10s  %6s  %s\n", "Bytes", "Objects", "Share", "Allocated at");
	for (i = 0; i < n; i++) {
		fprintf(out, "%14llu  %10llu  %5.1f%%", (unsigned long long)v[i].bytes,
			(unsigned long long)v[i].objects,
			total ? 100.0 * (double)v[i].bytes / (double)total : 0.0);
		print_stack(s, v[i].node, path, out);
	}
	free(v);
	free(at);
	free(path);
	return 0;
}
