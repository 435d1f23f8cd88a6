// SPDX-License-Identifier: MIT
/*
 * json_lines.c - where each function's self time went, line by line, for
 * --json: every sample's leaf address (the stacks keep addresses when
 * main.c asks: session_opts.lines) mapped to its file:line through libdw,
 * summed per function and line as `perf report --sort sym,srcline` does.
 * Addresses without line information count under a null source.
 */
#include "json_lines.h"

#include <errno.h>
#include <stdlib.h>

#define NONE UINT32_MAX

/* The source line of location @loc as a string id (0: unknown). */
static int src_of(struct json_lines *jl, const struct session *s, u32 loc, u32 *id)
{
	const struct loc *l = &s->hists.res.locs[loc];
	char buf[SRCLINE_MAX];
	u64 vaddr;

	*id = 0;
	buf[0] = 0;
	if (l->dso && !l->dso->special && !s->opts.no_load && !dso__vaddr(l->dso, l->off, &vaddr))
		srcline__find_depth(l->dso, vaddr, l->depth, buf, sizeof(buf));
	return buf[0] ? strset__intern(&jl->names, buf, strlen(buf), id) : 0;
}

static int add(struct json_lines *jl, u32 fid, u32 src, const struct entry *e)
{
	u64 val;

	if (kvmap__get(&jl->idx, fid, src, &val)) {
		jl->v[val].samples += e->samples;
		jl->v[val].period += e->period;
		return 0;
	}
	if (array__reserve(&jl->v, &jl->cap, jl->nr + 1, sizeof(*jl->v)) ||
	    kvmap__put(&jl->idx, fid, src, jl->nr))
		return -ENOMEM;
	jl->v[jl->nr++] = (struct json_line){fid, src, e->samples, e->period};
	return 0;
}

static int cmp_line(const void *pa, const void *pb)
{
	const struct json_line *a = pa, *b = pb;

	if (a->fid != b->fid)
		return a->fid < b->fid ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->src < b->src ? -1 : a->src > b->src;
}

int json_lines__build(struct json_lines *jl, struct session *s, int hist)
{
	const struct stacks *st = &s->hists.stacks;
	u32 *src_cache = NULL;
	size_t i;
	int err = 0;

	memset(jl, 0, sizeof(*jl));
	if (!st->lines)
		return 0;
	jl->nr_funcs = s->hists.res.nr_funcs;
	jl->first = malloc((jl->nr_funcs + 1) * sizeof(*jl->first));
	src_cache = malloc((s->hists.res.nr_locs + 1) * sizeof(*src_cache));
	if (!jl->first || !src_cache) {
		free(src_cache);
		return -ENOMEM;
	}
	memset(jl->first, 0xff, (jl->nr_funcs + 1) * sizeof(*jl->first));
	memset(src_cache, 0xff, (s->hists.res.nr_locs + 1) * sizeof(*src_cache));
	for (i = 0; i < st->nr_entries && !err; i++) {
		const struct entry *e = &st->entries[i];
		const struct stack_node *n = &st->nodes[e->node];

		if (e->hist != (u32)hist || !e->node || n->loc == NONE)
			continue;
		if (src_cache[n->loc] == NONE)
			err = src_of(jl, s, n->loc, &src_cache[n->loc]);
		if (!err)
			err = add(jl, n->fid, src_cache[n->loc], e);
	}
	free(src_cache);
	kvmap__exit(&jl->idx);
	if (err)
		return err;
	qsort(jl->v, jl->nr, sizeof(*jl->v), cmp_line);
	for (i = jl->nr; i > 0; i--)
		jl->first[jl->v[i - 1].fid] = (u32)(i - 1);
	return 0;
}

void json_lines__put(const struct json_lines *jl, u32 fid, FILE *out)
{
	size_t i;

	if (!jl->first || fid >= jl->nr_funcs || jl->first[fid] == NONE)
		return;
	fprintf(out, ", \"lines\": [");
	for (i = jl->first[fid]; i < jl->nr && jl->v[i].fid == fid; i++) {
		fprintf(out, "%s{\"source\": ", i > jl->first[fid] ? ", " : "");
		if (jl->v[i].src)
			escape__json(out, strset__str(&jl->names, jl->v[i].src));
		else
			fprintf(out, "null");
		fprintf(out, ", \"self_samples\": %llu, \"self_period\": %llu}",
			(unsigned long long)jl->v[i].samples, (unsigned long long)jl->v[i].period);
	}
	fprintf(out, "]");
}

void json_lines__exit(struct json_lines *jl)
{
	free(jl->v);
	free(jl->first);
	strset__exit(&jl->names);
	kvmap__exit(&jl->idx);
	memset(jl, 0, sizeof(*jl));
}
