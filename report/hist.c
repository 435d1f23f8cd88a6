// SPDX-License-Identifier: MIT
/*
 * hist.c - turn samples into per-function self and children counts.
 *
 * An address is symbolised at most once per (dso, file offset): the address
 * cache maps it to a function id, and the function table dedupes functions
 * by (dso, symbol start). In front of both, a direct-mapped frame cache keyed
 * by (pid, exec epoch, address) skips the map search for hot addresses.
 * Counters live in one flat array per event, indexed by function id, so the
 * per-frame work is usually one cache probe and one counter update, with no
 * allocation once the distinct addresses are known.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Function table key kinds (high half of key a; low half is the dso id). */
#define KEY_SYM	  (1ULL << 32)
#define KEY_NOSYM (2ULL << 32)

static int add_func(struct hists *h, char *name, const char *object, u32 *id)
{
	if (!name)
		return -ENOMEM;
	if (h->nr_funcs == h->cap_funcs) {
		size_t ncap = h->cap_funcs ? h->cap_funcs * 2 : 256;
		struct func *nv = realloc(h->funcs, ncap * sizeof(*nv));

		if (!nv) {
			free(name);
			return -ENOMEM;
		}
		h->funcs = nv;
		h->cap_funcs = ncap;
	}
	h->funcs[h->nr_funcs] = (struct func){.name = name, .object = object};
	*id = (u32)h->nr_funcs++;
	return 0;
}

/* Set up the two fixed functions, [unknown] and [kernel]. Returns 0 or -ENOMEM. */
int hists__init(struct hists *h)
{
	u32 id;

	memset(h, 0, sizeof(*h));
	h->frame_cache = malloc(sizeof(*h->frame_cache) << FRAME_CACHE_BITS);
	if (!h->frame_cache)
		return -ENOMEM;
	memset(h->frame_cache, 0xff, sizeof(*h->frame_cache) << FRAME_CACHE_BITS);
	if (add_func(h, strdup("[unknown]"), "[unknown]", &id) ||
	    add_func(h, strdup("[kernel]"), "[kernel]", &id))
		return -ENOMEM;
	return 0;
}

/* Index of the counters for event @name, created on first use; -ENOMEM on failure. */
int hists__findnew_event(struct hists *h, const char *event)
{
	struct hist *nv;
	size_t i;

	for (i = 0; i < h->nr; i++) {
		if (!strcmp(h->v[i].event, event))
			return (int)i;
	}
	nv = realloc(h->v, (h->nr + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	h->v = nv;
	h->v[h->nr] = (struct hist){.event = strdup(event)};
	if (!h->v[h->nr].event)
		return -ENOMEM;
	return (int)h->nr++;
}

/* The function id for file offset @off of @dso, creating the function on first sight. */
static int resolve_in_dso(struct hists *h, struct dso *dso, u64 off, u32 *fid)
{
	const struct sym *sym;
	u64 val, a, b;
	char *name;
	int err;

	if (kvmap__get(&h->addr_cache, dso->id, off, &val)) {
		*fid = (u32)val;
		return 0;
	}
	sym = dso->special ? NULL : dso__find_sym(dso, off);
	a = dso->id | (sym ? KEY_SYM : KEY_NOSYM);
	b = sym ? sym->start : off;
	if (kvmap__get(&h->func_idx, a, b, &val)) {
		*fid = (u32)val;
	} else {
		if (sym) {
			name = demangle__name(sym->name);
			if (!name)
				name = strdup(sym->name);
		} else if (asprintf(&name, "%s+0x%llx", dso->short_name, (unsigned long long)off) <
			   0) {
			name = NULL;
		}
		err = add_func(h, name, dso->short_name, fid);
		if (!err)
			err = kvmap__put(&h->func_idx, a, b, *fid);
		if (err)
			return err;
	}
	return kvmap__put(&h->addr_cache, dso->id, off, *fid);
}

enum ctx { CTX_USER, CTX_KERNEL, CTX_OTHER };

static enum ctx ctx_of_cpumode(u16 misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:
	case PERF_RECORD_MISC_GUEST_KERNEL:
		return CTX_KERNEL;
	case PERF_RECORD_MISC_USER:
	case PERF_RECORD_MISC_CPUMODE_UNKNOWN:
		return CTX_USER;
	default:
		return CTX_OTHER;
	}
}

static enum ctx ctx_of_marker(u64 marker)
{
	switch (marker) {
	case PERF_CONTEXT_KERNEL:
	case PERF_CONTEXT_GUEST_KERNEL:
		return CTX_KERNEL;
	case PERF_CONTEXT_USER:
		return CTX_USER;
	default:
		return CTX_OTHER;
	}
}

static struct frame_cache_ent *frame_cache_slot(struct hists *h, u64 key, u64 addr)
{
	u64 k = (addr ^ (key * 0xc2b2ae3d27d4eb4fULL)) * 0x9e3779b97f4a7c15ULL;

	return &h->frame_cache[k >> (64 - FRAME_CACHE_BITS)];
}

/*
 * The function at @addr in process @p at time @t (in @p's epoch @epoch), in
 * context @ctx. When (epoch, addr) decides the map the answer is cached by
 * (pid, epoch, addr), which skips the map search on the hot path.
 */
static int resolve(struct hists *h, struct proc *p, enum ctx ctx, u64 addr, u64 t, u32 epoch,
		   u32 *fid)
{
	u64 key;
	struct frame_cache_ent *fc = NULL;
	const struct map *mp;
	int err = 0;

	*fid = FUNC_UNKNOWN;
	if (ctx == CTX_KERNEL) {
		*fid = FUNC_KERNEL;
		return 0;
	}
	if (ctx != CTX_USER || !p)
		return 0;
	key = p->pid | (u64)epoch << 32;
	if (p->simple) {
		fc = frame_cache_slot(h, key, addr);
		if (fc->fid != UINT32_MAX && fc->addr == addr && fc->key == key) {
			*fid = fc->fid;
			return 0;
		}
	}
	mp = proc__find_map(p, addr, t, epoch);
	if (mp)
		err = resolve_in_dso(h, mp->dso, addr - mp->start + mp->pgoff, fid);
	if (fc && !err)
		*fc = (struct frame_cache_ent){addr, key, *fid};
	return err;
}

/* The counters of @fid in @hi, growing the array as functions appear. */
static struct func_stat *stat_grow(struct hist *hi, u32 fid)
{
	size_t ncap = hi->nr_stats ? hi->nr_stats : 256;
	struct func_stat *nv;

	while (ncap <= fid)
		ncap *= 2;
	nv = realloc(hi->stats, ncap * sizeof(*nv));
	if (!nv)
		return NULL;
	memset(nv + hi->nr_stats, 0, (ncap - hi->nr_stats) * sizeof(*nv));
	hi->stats = nv;
	hi->nr_stats = ncap;
	return &hi->stats[fid];
}

static inline struct func_stat *stat_of(struct hist *hi, u32 fid)
{
	return fid < hi->nr_stats ? &hi->stats[fid] : stat_grow(hi, fid);
}

/* Count @fid once for this sample in the children column. */
static int add_total(struct hist *hi, u32 fid, u64 seq, u64 period)
{
	struct func_stat *st = stat_of(hi, fid);

	if (!st)
		return -ENOMEM;
	if (st->seen != seq) {
		st->seen = seq;
		st->total_period += period;
		st->total_samples++;
	}
	return 0;
}

/*
 * Account sample @s of event @hist with weight @period: self for the
 * function at the sample ip, children for every distinct function in its
 * callchain. The first non-marker callchain entry is the ip itself; later
 * ones are return addresses and resolve at addr - 1. Returns 0 or -ENOMEM.
 */
int hists__add_sample(struct hists *h, int hist, struct machine *m, const struct sample *s,
		      u64 period)
{
	struct hist *hi = &h->v[hist];
	struct proc *p = s->has_tid ? machine__find_proc(m, s->pid) : NULL;
	u32 epoch = p ? proc__epoch(p, s->time) : 0;
	enum ctx ctx = ctx_of_cpumode(s->misc);
	u64 seq = ++h->seq, i, ip = s->ip;
	bool have_ip = s->has_ip, first = true;
	struct func_stat *st;
	u32 fid;
	int err;

	hi->nr_samples++;
	hi->total_period += period;
	/* Without IP, the first callchain entry is the ip. */
	for (i = 0; !have_ip && i < s->nr_chain; i++) {
		u64 e = sample__chain(s, i);

		if (PERF_CONTEXT_IS_MARKER(e)) {
			ctx = ctx_of_marker(e);
			continue;
		}
		ip = e;
		have_ip = true;
	}
	if (!have_ip)
		fid = FUNC_UNKNOWN;
	else if ((err = resolve(h, p, ctx, ip, s->time, epoch, &fid)))
		return err;
	st = stat_of(hi, fid);
	if (!st)
		return -ENOMEM;
	st->self_period += period;
	st->self_samples++;
	err = add_total(hi, fid, seq, period);

	ctx = ctx_of_cpumode(s->misc);
	for (i = 0; !err && i < s->nr_chain; i++) {
		u64 e = sample__chain(s, i);

		if (PERF_CONTEXT_IS_MARKER(e)) {
			ctx = ctx_of_marker(e);
			continue;
		}
		if (first) {
			first = false;
		} else {
			if (e == 0)
				continue; /* the end of a frame-pointer chain */
			e--;
		}
		err = resolve(h, p, ctx, e, s->time, epoch, &fid);
		if (!err)
			err = add_total(hi, fid, seq, period);
	}
	return err;
}

void hists__exit(struct hists *h)
{
	size_t i;

	for (i = 0; i < h->nr_funcs; i++)
		free(h->funcs[i].name);
	for (i = 0; i < h->nr; i++) {
		free(h->v[i].event);
		free(h->v[i].stats);
	}
	free(h->funcs);
	free(h->v);
	free(h->frame_cache);
	kvmap__exit(&h->func_idx);
	kvmap__exit(&h->addr_cache);
	memset(h, 0, sizeof(*h));
}
