// SPDX-License-Identifier: MIT
/*
 * rows.c - the rows of a table: samples grouped by up to four keys
 * (function, library, source line, thread, process, comm, CPU), each with self
 * counts (the stack's leaf) and total counts (once per sample for every
 * distinct row on the stack, so recursion counts once).
 *
 * Rows are computed from the stack entries, never from samples, so this
 * costs distinct (stack, thread) pairs times stack depth. Source lines are
 * looked up once per location, only when a srcline key asks for them.
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdlib.h>

/* Each key with its aliases (perf report's spellings among them). */
static const struct {
	const char *name, *alias, *alias2, *title;
	enum sort_kind kind;
} keys[] = {
    {"function", "symbol", "sym", "Function", SK_FUNC},
    {"library", "dso", NULL, "Object", SK_DSO},
    {"srcline", "line", NULL, "Source", SK_SRCLINE},
    {"thread", "tid", NULL, "Thread", SK_THREAD},
    {"process", "pid", NULL, "Process", SK_PROCESS},
    {"comm", NULL, NULL, "Command", SK_COMM},
    {"cpu", NULL, NULL, "CPU", SK_CPU},
};

static bool is(const char *name, const char *p, size_t len)
{
	return name && strlen(name) == len && !strncmp(p, name, len);
}

/* The valid keys, "function (symbol, sym), library (dso), ...", into @buf. */
void rows__valid_keys(char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = 0;
	for (i = 0; i < ARRAY_SIZE(keys) && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s%s%s%s%s%s", i ? ", " : "",
				 keys[i].name, keys[i].alias ? " (" : "",
				 keys[i].alias ? keys[i].alias : "", keys[i].alias2 ? ", " : "",
				 keys[i].alias2 ? keys[i].alias2 : "", keys[i].alias ? ")" : "");

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/*
 * Parse a comma-separated list of sort keys (a name or an alias of keys[]),
 * at most MAX_SORT_KEYS and each once. Returns 0 or -EINVAL.
 */
int rows__parse_spec(struct sort_spec *ss, const char *arg)
{
	const char *p = arg;

	ss->nr = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;
		bool found = false;

		for (i = 0; i < ARRAY_SIZE(keys) && !found; i++) {
			if (is(keys[i].name, p, len) || is(keys[i].alias, p, len) ||
			    is(keys[i].alias2, p, len)) {
				if (ss->nr == MAX_SORT_KEYS || rows__spec_has(ss, keys[i].kind))
					return -EINVAL;
				ss->k[ss->nr++] = keys[i].kind;
				found = true;
			}
		}
		if (!found)
			return -EINVAL;
		p += len;
		if (*p == ',' && *++p == 0)
			return -EINVAL;
	}
	return ss->nr ? 0 : -EINVAL;
}

bool rows__spec_has(const struct sort_spec *ss, enum sort_kind k)
{
	int i;

	for (i = 0; i < ss->nr; i++) {
		if (ss->k[i] == k)
			return true;
	}
	return false;
}

const char *rows__key_title(enum sort_kind k)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		if (keys[i].kind == k)
			return keys[i].title;
	}
	return "?";
}

/* The source line of location @loc as a string id of r->names; "" when unknown. */
static int line_of(struct rows *r, const struct hists *h, const struct machine *m, u32 loc, u32 *id)
{
	char buf[SRCLINE_MAX];
	const struct loc *l;
	const struct func *fn;
	u64 val, vaddr;

	if (loc == UINT32_MAX || loc >= h->res.nr_locs) {
		*id = 0;
		return 0;
	}
	if (kvmap__get(&r->line_of, loc, 0, &val)) {
		*id = (u32)val;
		return 0;
	}
	l = &h->res.locs[loc];
	fn = &h->res.funcs[l->fid];
	buf[0] = 0;
	/* With inlined frames each frame has its own line; else the line names its inlines. */
	if (l->dso && !m->dsos.no_load && !dso__vaddr(l->dso, l->off, &vaddr)) {
		if (h->res.no_inline)
			srcline__find(l->dso, vaddr, true, buf, sizeof(buf));
		else
			srcline__find_depth(l->dso, vaddr, l->depth, buf, sizeof(buf));
	}
	if (!buf[0] && l->dso)
		snprintf(buf, sizeof(buf), "%s+0x%llx", l->dso->short_name,
			 (unsigned long long)l->off);
	else if (!buf[0])
		snprintf(buf, sizeof(buf), "%s", fn->name);
	if (strset__intern(&r->names, buf, sizeof(buf), id))
		return -ENOMEM;
	return kvmap__put(&r->line_of, loc, 0, *id);
}

/* The value of key @k for stack node @node of an entry @e of thread @t. */
static int key_of(struct rows *r, const struct hists *h, const struct machine *m, enum sort_kind k,
		  u32 node, const struct entry *e, const struct task *t, u32 *v)
{
	const char *comm;

	switch (k) {
	case SK_FUNC:
		*v = h->stacks.nodes[node].fid;
		return 0;
	case SK_DSO:
		*v = h->res.funcs[h->stacks.nodes[node].fid].obj;
		return 0;
	case SK_SRCLINE:
		return line_of(r, h, m, h->stacks.nodes[node].loc, v);
	case SK_THREAD:
		*v = t->thread;
		return 0;
	case SK_PROCESS:
		*v = t->pid;
		return 0;
	case SK_COMM:
		comm = machine__task_comm(m, t->pid, t->tid, t->comm);
		return strset__intern(&r->names, comm, strlen(comm), v) ? -ENOMEM : 0;
	case SK_CPU:
		*v = e->cpu;
		return 0;
	}
	return -EINVAL;
}

static int findnew_row(struct rows *r, const u32 key[MAX_SORT_KEYS], u32 fid, struct row **out)
{
	u64 a = (u64)key[0] << 32 | key[1], b = (u64)key[2] << 32 | key[3], val;

	if (kvmap__get(&r->idx, a, b, &val)) {
		*out = &r->v[val];
		return 0;
	}
	if (array__reserve(&r->v, &r->cap, r->nr + 1, sizeof(*r->v)))
		return -ENOMEM;
	if (kvmap__put(&r->idx, a, b, r->nr))
		return -ENOMEM;
	*out = &r->v[r->nr++];
	**out = (struct row){.fid = fid};
	memcpy((*out)->key, key, sizeof((*out)->key));
	return 0;
}

static int row_at(struct rows *r, const struct hists *h, const struct machine *m,
		  const struct sort_spec *ss, u32 node, const struct entry *e, struct row **out)
{
	const struct task *t = &h->stacks.tasks[e->task];
	u32 key[MAX_SORT_KEYS] = {0};
	int i, err;

	for (i = 0; i < ss->nr; i++) {
		err = key_of(r, h, m, ss->k[i], node, e, t, &key[i]);
		if (err)
			return err;
	}
	return findnew_row(r, key, h->stacks.nodes[node].fid, out);
}

/* rows__build(), or with @leaves the self counts only (no walk up the stacks). */
static int build(struct rows *r, const struct hists *h, const struct machine *m, int hist,
		 const struct sort_spec *ss, bool leaves)
{
	bool by_node = rows__spec_has(ss, SK_FUNC) || rows__spec_has(ss, SK_DSO) ||
		       rows__spec_has(ss, SK_SRCLINE);
	u32 *path = malloc(MAX_FRAMES * sizeof(*path));
	size_t i;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (!path)
		return -ENOMEM;
	for (i = 0; i < h->stacks.nr_entries && !err; i++) {
		const struct entry *e = &h->stacks.entries[i];
		struct row *row;
		u32 n, d;

		if (e->hist != (u32)hist)
			continue;
		err = row_at(r, h, m, ss, e->node, e, &row);
		if (err)
			break;
		row->self_samples += e->samples;
		row->self_period += e->period;
		if (leaves)
			continue;
		if (!by_node) {
			row->total_samples += e->samples;
			row->total_period += e->period;
			continue;
		}
		n = stacks__path(&h->stacks, e->node, path);
		for (d = 0; d < n && !err; d++) {
			err = row_at(r, h, m, ss, path[d], e, &row);
			if (!err && row->seen != i + 1) {
				row->seen = i + 1;
				row->total_samples += e->samples;
				row->total_period += e->period;
			}
		}
	}
	free(path);
	return err;
}

/*
 * Group the entries of event @hist into rows by the keys @ss. Returns 0 or
 * -ENOMEM; rows__exit() frees the rows either way.
 */
int rows__build(struct rows *r, const struct hists *h, const struct machine *m, int hist,
		const struct sort_spec *ss)
{
	return build(r, h, m, hist, ss, false);
}

/*
 * rows__build() counting only the samples' leaves: self counts, the total
 * counts left 0 (--hot-lines: function and source line of each sample's
 * address). Returns 0 or -ENOMEM; rows__exit() either way.
 */
int rows__build_leaves(struct rows *r, const struct hists *h, const struct machine *m, int hist,
		       const struct sort_spec *ss)
{
	return build(r, h, m, hist, ss, true);
}

struct cmp_ctx {
	const struct hists *h;
	bool by_total;
};

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct cmp_ctx *c = arg;
	const struct row *x = pa, *y = pb;
	u64 xp = c->by_total ? x->total_period : x->self_period;
	u64 yp = c->by_total ? y->total_period : y->self_period;
	u64 xs = c->by_total ? x->total_samples : x->self_samples;
	u64 ys = c->by_total ? y->total_samples : y->self_samples;
	int i, d;

	if (xp != yp)
		return xp > yp ? -1 : 1;
	if (xs != ys)
		return xs > ys ? -1 : 1;
	d = strcmp(c->h->res.funcs[x->fid].name, c->h->res.funcs[y->fid].name);
	if (d)
		return d;
	for (i = 0; i < MAX_SORT_KEYS; i++) {
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	}
	return 0;
}

/* Order the rows by self (or total) period, then samples, then name. */
void rows__sort(struct rows *r, const struct hists *h, bool by_total)
{
	struct cmp_ctx c = {h, by_total};

	if (r->nr > 1)
		qsort_r(r->v, r->nr, sizeof(*r->v), row_cmp, &c);
}

/* The text of key @i of @row into @buf. Returns 0 or -ENOMEM. */
int rows__name(struct rows *r, const struct hists *h, const struct machine *m,
	       const struct sort_spec *ss, const struct row *row, int i, char *buf, size_t len)
{
	const struct task *t;
	const char *comm;
	u32 v = row->key[i];

	switch (ss->k[i]) {
	case SK_FUNC:
		cxxname__fit(h->res.funcs[v].name, buf, len);
		break;
	case SK_DSO:
		snprintf(buf, len, "%s", h->res.funcs[row->fid].object);
		break;
	case SK_SRCLINE:
	case SK_COMM:
		snprintf(buf, len, "%s", strset__str(&r->names, v));
		break;
	case SK_THREAD:
		t = &h->stacks.tasks[v];
		comm = machine__comm_of(m, t->pid, t->tid);
		if (comm[0])
			snprintf(buf, len, "%s/%u", comm, t->tid);
		else
			snprintf(buf, len, ":%u/%u", t->tid, t->tid);
		break;
	case SK_PROCESS:
		comm = machine__comm_of(m, v, v);
		if (comm[0])
			snprintf(buf, len, "%s/%u", comm, v);
		else
			snprintf(buf, len, ":%u/%u", v, v);
		break;
	case SK_CPU:
		if (v == UINT32_MAX)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%u", v);
		break;
	}
	return 0;
}

void rows__exit(struct rows *r)
{
	free(r->v);
	kvmap__exit(&r->idx);
	kvmap__exit(&r->line_of);
	strset__exit(&r->names);
	memset(r, 0, sizeof(*r));
}
