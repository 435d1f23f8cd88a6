// SPDX-License-Identifier: MIT
/*
 * resolver.c - the resolver: a sample's addresses into locations, each
 * location into its function.
 *
 * An address is symbolised at most once per (dso, file offset): the location
 * table maps it to a location id, each location knows its function, and the
 * function table dedupes functions by (dso, symbol start). In front of both,
 * a direct-mapped frame cache keyed by (pid, exec epoch, address) skips the
 * map search for hot addresses, so the per-frame work is usually one cache
 * probe, with no allocation once the distinct addresses are known. Kernel
 * addresses resolve through /proc/kallsyms (model/kallsyms.c's struct kernel_syms)
 * when the files' kernel map fits this machine, else to the single function
 * [kernel]. The resolver knows nothing of stacks or counts: it fills the
 * caller's array of location ids.
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static bool inline_frames = true;

/* Give inlined functions frames of their own (true, the default) in resolvers set up from now on.
 */
void resolver__set_inline(bool on)
{
	inline_frames = on;
}

/*
 * Set up the two fixed functions and locations, [unknown] and [kernel], and
 * the empty frame cache. Returns 0 or -ENOMEM.
 */
int resolver__init(struct resolver *r)
{
	u32 id;

	memset(r, 0, sizeof(*r));
	r->no_inline = !inline_frames;
	r->frame_cache = malloc(sizeof(*r->frame_cache) << FRAME_CACHE_BITS);
	if (!r->frame_cache)
		return -ENOMEM;
	memset(r->frame_cache, 0xff, sizeof(*r->frame_cache) << FRAME_CACHE_BITS);
	if (locate__add_func(r, strdup("[unknown]"), &(struct func){.object = "[unknown]"}, &id) ||
	    locate__add_func(r, strdup("[kernel]"),
			     &(struct func){.object = "[kernel]", .obj = OBJ_KERNEL}, &id) ||
	    locate__add_loc(r, FUNC_UNKNOWN, NULL, 0, &id) ||
	    locate__add_loc(r, FUNC_KERNEL, NULL, 0, &id))
		return -ENOMEM;
	return 0;
}

/* CTX_OTHER: hypervisor and guest addresses (perf kvm), which this reader cannot resolve */
enum ctx { CTX_USER, CTX_KERNEL, CTX_OTHER };

static enum ctx ctx_of_cpumode(u16 misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:
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
		return CTX_KERNEL;
	case PERF_CONTEXT_USER:
		return CTX_USER;
	default:
		return CTX_OTHER;
	}
}

static struct frame_cache_ent *frame_cache_slot(struct resolver *r, u64 key, u64 addr)
{
	u64 k = (addr ^ (key * 0xc2b2ae3d27d4eb4fULL)) * 0x9e3779b97f4a7c15ULL;

	return &r->frame_cache[k >> (64 - FRAME_CACHE_BITS)];
}

struct frame_ctx {
	const struct machine *m;
	struct proc *p;
	u64 time;
	u32 epoch;
	bool no_load;
};

/*
 * The location of kernel address @addr without kallsyms: in a module's map
 * ("[ext4]+0x..."), else [unknown] below the kernel's text (perf: outside
 * every kernel map), else [kernel].
 */
static int resolve_module(struct resolver *r, const struct frame_ctx *fc, u64 addr, u32 *loc)
{
	struct proc *k = fc->m->has_modules ? machine__find_proc(fc->m, MACHINE_KERNEL_PID) : NULL;
	const struct map *mp = k ? machine__proc_find_map(k, addr, fc->time, 0) : NULL;

	if (mp)
		return locate__dso(r, mp->dso, addr - mp->start, true, loc);
	*loc = fc->m->kmap.present && addr < fc->m->kmap.start ? LOC_UNKNOWN : LOC_KERNEL;
	return 0;
}

/* The frame cache key of a user address of the sample described by @fc. */
static u64 user_key(const struct frame_ctx *fc)
{
	return fc->p->pid | (u64)fc->epoch << 32;
}

/*
 * The location of @addr in context @ctx for the sample described by @fc.
 * When (epoch, addr) decides the map, or the address is a kernel one, the
 * answer is cached by (pid, epoch, addr), which skips the map search. In a
 * process whose maps overlap (a --call-graph dwarf file's data maps, an ELF
 * file mapped whole and then its segments over it) the answer is cached
 * with its map, and holds while no map of the epoch lies over that one.
 */
static int resolve(struct resolver *r, const struct frame_ctx *fc, enum ctx ctx, u64 addr, u32 *loc)
{
	struct frame_cache_ent *ce;
	const struct map *mp;
	u64 key;
	int err = 0;

	*loc = LOC_UNKNOWN;
	if (ctx == CTX_KERNEL) {
		if (!r->ksyms.enabled && !fc->m->has_modules &&
		    (!fc->m->kmap.present || addr >= fc->m->kmap.start)) {
			*loc = LOC_KERNEL;
			return 0;
		}
		key = KERNEL_CACHE_KEY;
	} else if (ctx != CTX_USER || !fc->p) {
		return 0;
	} else {
		key = user_key(fc);
	}
	ce = frame_cache_slot(r, key, addr);
	if (ce->loc != UINT32_MAX && ce->addr == addr && ce->key == key &&
	    (!ce->map || machine__map_decides(&fc->p->maps[ce->map - 1], fc->time))) {
		*loc = ce->loc;
		return 0;
	}
	if (ctx == CTX_KERNEL) {
		err = r->ksyms.enabled ? locate__kernel(r, addr, loc)
				       : resolve_module(r, fc, addr, loc);
		if (!err)
			*ce = (struct frame_cache_ent){addr, key, *loc, 0};
		return err;
	}
	mp = machine__proc_find_map(fc->p, addr, fc->time, fc->epoch);
	if (mp)
		err = locate__dso(r, mp->dso, addr - mp->start + mp->pgoff, fc->no_load, loc);
	if (err)
		return err;
	/* (epoch, addr) decides the map; else the map found decides for a while, or not */
	if (fc->p->simple)
		*ce = (struct frame_cache_ent){addr, key, *loc, 0};
	else if (mp && mp >= fc->p->maps && mp < fc->p->maps + fc->p->nr_maps &&
		 machine__map_decides(mp, fc->time))
		*ce = (struct frame_cache_ent){addr, key, *loc, (u32)(mp - fc->p->maps) + 1};
	return 0;
}

/*
 * After location @frames[*n - 1], the frames of the functions it was
 * inlined into (loc.next), while they fit below MAX_FRAMES.
 */
static inline void expand_inlines(const struct resolver *r, u32 *frames, u32 *n)
{
	u32 next = r->locs[frames[*n - 1]].next;

	while (next != NONE_LOC && *n < MAX_FRAMES) {
		frames[(*n)++] = next;
		next = r->locs[next].next;
	}
}

/* The process of sample @s: samples come in runs from one process, so the last is kept. */
static struct proc *proc_of(struct resolver *r, struct machine *m, const struct sample *s)
{
	if (!s->has_tid)
		return NULL;
	if (!r->last_proc || r->last_proc_pid != s->pid) {
		r->last_proc = machine__find_proc(m, s->pid);
		r->last_proc_pid = s->pid;
	}
	return r->last_proc;
}

/*
 * Ask the CPU for the frame cache slots of the ip and callchain of sample @s
 * (@ctx its cpumode's context) before resolving them one by one: the slots
 * are spread over a table bigger than the CPU's caches, and this way their
 * misses overlap instead of coming one after the other.
 */
static void prefetch_chain(struct resolver *r, const struct frame_ctx *fc, const struct sample *s,
			   enum ctx ctx, u64 ip)
{
	u64 i, e;

	if (s->has_ip && (ctx == CTX_KERNEL || fc->p))
		__builtin_prefetch(
		    frame_cache_slot(r, ctx == CTX_KERNEL ? KERNEL_CACHE_KEY : user_key(fc), ip));
	for (i = 0; i < s->nr_chain; i++) {
		e = sample__chain(s, i);
		if (PERF_CONTEXT_IS_MARKER(e)) {
			ctx = ctx_of_marker(e);
			continue;
		}
		if (ctx == CTX_KERNEL)
			__builtin_prefetch(frame_cache_slot(r, KERNEL_CACHE_KEY, e - 1));
		else if (ctx == CTX_USER && fc->p)
			__builtin_prefetch(frame_cache_slot(r, user_key(fc), e - 1));
	}
}

/*
 * Resolve sample @s into @frames (room for MAX_FRAMES): the location of its
 * ip, then of each caller in its callchain (return addresses looked up at
 * addr - 1), leaf first; *nr is how many (at least 1). Returns 0 or -ENOMEM.
 */
int resolver__sample(struct resolver *r, struct machine *m, const struct sample *s, u32 *frames,
		     u32 *nr)
{
	struct frame_ctx fc = {.m = m, .no_load = m->dsos.no_load, .time = s->time};
	enum ctx ctx = ctx_of_cpumode(s->misc), ip_ctx = ctx;
	bool have_ip = s->has_ip, first = true;
	struct chain_ent *slot = NULL;
	u64 i, ip = s->ip, pkey = 0, hash = 0;
	const u32 *kept;
	u32 n = 0;
	int err;

	fc.p = proc_of(r, m, s);
	fc.epoch = fc.p ? machine__proc_epoch(fc.p, s->time) : 0;
	/* A chain seen before: its locations at once (chain_cache.c). */
	if (!fc.p || fc.p->simple) {
		pkey = fc.p ? user_key(&fc) : UINT64_MAX;
		if (chain_cache__find(r, s, pkey, &slot, &hash, &kept, nr)) {
			memcpy(frames, kept, *nr * sizeof(*frames));
			return 0;
		}
	}
	/* Without IP, the first callchain entry is the ip. */
	for (i = 0; !have_ip && i < s->nr_chain; i++) {
		u64 e = sample__chain(s, i);

		if (PERF_CONTEXT_IS_MARKER(e)) {
			ip_ctx = ctx_of_marker(e);
			continue;
		}
		ip = e;
		have_ip = true;
	}
	prefetch_chain(r, &fc, s, ctx, ip);
	if (!have_ip)
		frames[n++] = LOC_UNKNOWN;
	else if ((err = resolve(r, &fc, ip_ctx, ip, &frames[n++])))
		return err;
	if (r->any_inline)
		expand_inlines(r, frames, &n);

	for (i = 0; i < s->nr_chain && n < MAX_FRAMES; i++) {
		u64 e = sample__chain(s, i);

		if (PERF_CONTEXT_IS_MARKER(e)) {
			ctx = ctx_of_marker(e);
			continue;
		}
		if (first) {
			first = false;
			if (e == ip)
				continue; /* the kernel puts the ip first */
		} else {
			if (e == 0)
				continue; /* the end of a frame-pointer chain */
			e--;
		}
		err = resolve(r, &fc, ctx, e, &frames[n]);
		if (err)
			return err;
		n++;
		if (r->any_inline)
			expand_inlines(r, frames, &n);
	}
	*nr = n;
	if (slot)
		chain_cache__store(slot, hash, s, pkey, frames, n);
	return 0;
}

int resolver__lbr(struct resolver *r, struct machine *m, const struct sample *s, const u8 *entries,
		  u64 nr_entries, u32 *frames, u32 *nr)
{
	struct frame_ctx fc = {.m = m, .no_load = m->dsos.no_load, .time = s->time};
	enum ctx ctx = ctx_of_cpumode(s->misc), ip_ctx = ctx;
	u64 i, user, ip = s->ip;
	u32 n = 0, leaf_n, loc;
	int err;

	for (user = 0; user < s->nr_chain && sample__chain(s, user) != PERF_CONTEXT_USER; user++)
		;
	if (user == s->nr_chain || !nr_entries)
		return 1; /* no user part: the chain as it is */
	fc.p = proc_of(r, m, s);
	fc.epoch = fc.p ? machine__proc_epoch(fc.p, s->time) : 0;
	if (!s->has_ip) { /* the first callchain entry is the ip */
		for (i = 0; i < s->nr_chain && PERF_CONTEXT_IS_MARKER(sample__chain(s, i)); i++)
			ip_ctx = ctx_of_marker(sample__chain(s, i));
		if (i == s->nr_chain)
			return 1;
		ip = sample__chain(s, i);
	}
	if ((err = resolve(r, &fc, ip_ctx, ip, &frames[n++])))
		return err;
	if (r->any_inline)
		expand_inlines(r, frames, &n);
	leaf_n = n; /* the leaf and the functions it was inlined into */
	/* the kernel's part of the chain, as resolver__sample() reads it */
	for (i = 0; i < user && n < MAX_FRAMES; i++) {
		u64 e = sample__chain(s, i);

		if (PERF_CONTEXT_IS_MARKER(e)) {
			ctx = ctx_of_marker(e);
			continue;
		}
		if (e == ip && n == leaf_n)
			continue;
		if ((err = resolve(r, &fc, ctx, e - (n > leaf_n), &frames[n])))
			return err;
		n++;
	}
	/* the user part from the branch stack: where the last call went, then each call site */
	for (i = 0; i <= nr_entries && n < MAX_FRAMES; i++) {
		u64 addr = i ? ld64(entries + (i - 1) * 24) : ld64(entries + 8);

		if ((err = resolve(r, &fc, CTX_USER, addr, &loc)))
			return err;
		/* a user-mode sample's own (outermost) function is already there */
		if (i == 0 && n == leaf_n && r->locs[loc].fid == r->locs[frames[n - 1]].fid)
			continue;
		frames[n++] = loc;
		if (r->any_inline)
			expand_inlines(r, frames, &n);
	}
	*nr = n;
	return 0;
}

/*
 * Append to @frames, from index *nr, the user-space locations of the
 * @nr_addrs code addresses @addrs of sample @s (already call addresses,
 * nothing is subtracted); *nr grows by how many fit below MAX_FRAMES.
 * Returns 0 or -ENOMEM.
 */
int resolver__user(struct resolver *r, struct machine *m, const struct sample *s, const u64 *addrs,
		   u32 nr_addrs, u32 *frames, u32 *nr)
{
	struct frame_ctx fc = {.m = m, .no_load = m->dsos.no_load, .time = s->time};
	u32 i, n = *nr;
	int err;

	if (!s->has_tid)
		return 0;
	fc.p = proc_of(r, m, s);
	fc.epoch = fc.p ? machine__proc_epoch(fc.p, s->time) : 0;
	for (i = 0; fc.p && i < nr_addrs; i++) /* see prefetch_chain() */
		__builtin_prefetch(frame_cache_slot(r, user_key(&fc), addrs[i]));
	for (i = 0; i < nr_addrs && n < MAX_FRAMES; i++) {
		err = resolve(r, &fc, CTX_USER, addrs[i], &frames[n]);
		if (err)
			return err;
		n++;
		if (r->any_inline)
			expand_inlines(r, frames, &n);
	}
	*nr = n;
	return 0;
}

/* The process of sample @s, as resolver__sample() found it (NULL: none known). */
struct proc *resolver__proc(struct resolver *r, struct machine *m, const struct sample *s)
{
	return proc_of(r, m, s);
}

void resolver__exit(struct resolver *r)
{
	size_t i;

	kallsyms__syms_exit(&r->ksyms);
	for (i = 0; i < r->nr_funcs; i++) {
		free(r->funcs[i].name);
		free(r->funcs[i].decl);
	}
	free(r->funcs);
	free(r->locs);
	free(r->frame_cache);
	chain_cache__free(r);
	kvmap__exit(&r->func_idx);
	kvmap__exit(&r->loc_idx);
	memset(r, 0, sizeof(*r));
}
