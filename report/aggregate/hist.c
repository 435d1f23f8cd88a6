// SPDX-License-Identifier: MIT
/*
 * hist.c - turn a sample's addresses into locations and functions.
 *
 * An address is symbolised at most once per (dso, file offset): the location
 * table maps it to a location id, each location knows its function, and the
 * function table dedupes functions by (dso, symbol start). In front of both,
 * a direct-mapped frame cache keyed by (pid, exec epoch, address) skips the
 * map search for hot addresses, so the per-frame work is usually one cache
 * probe, with no allocation once the distinct addresses are known. Kernel
 * addresses resolve through /proc/kallsyms when the files' kernel map fits
 * this machine, else to the single function [kernel].
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Function and location key kinds (high half of key a; low half is the dso id). */
#define KEY_SYM	   (1ULL << 32)
#define KEY_NOSYM  (2ULL << 32)
#define KEY_KSYM   (3ULL << 32)
#define KEY_KERNEL (4ULL << 32)

/* The frame cache key of kernel addresses: no pid | epoch << 32 is all ones. */
#define KERNEL_CACHE_KEY UINT64_MAX

enum { LOC_UNKNOWN = 0, LOC_KERNEL = 1 };

static int add_func(struct hists *h, char *name, const struct func *proto, u32 *id)
{
	if (!name)
		return -ENOMEM;
	if (array__reserve(&h->funcs, &h->cap_funcs, h->nr_funcs + 1, sizeof(*h->funcs))) {
		free(name);
		return -ENOMEM;
	}
	h->funcs[h->nr_funcs] = *proto;
	h->funcs[h->nr_funcs].name = name;
	*id = (u32)h->nr_funcs++;
	return 0;
}

static int add_loc(struct hists *h, u32 fid, struct dso *dso, u64 off, u32 *id)
{
	if (array__reserve(&h->locs, &h->cap_locs, h->nr_locs + 1, sizeof(*h->locs)))
		return -ENOMEM;
	h->locs[h->nr_locs] = (struct loc){.fid = fid, .dso = dso, .off = off};
	*id = (u32)h->nr_locs++;
	return 0;
}

/*
 * Set up the two fixed functions and locations, [unknown] and [kernel], the
 * root of the stack trie and the scratch frame array. Returns 0 or -ENOMEM.
 */
int hists__init(struct hists *h)
{
	u32 id;

	memset(h, 0, sizeof(*h));
	h->frame_cache = malloc(sizeof(*h->frame_cache) << FRAME_CACHE_BITS);
	h->frames = malloc(MAX_FRAMES * sizeof(*h->frames));
	h->path_keys = malloc(MAX_FRAMES * sizeof(*h->path_keys));
	h->path_nodes = malloc(MAX_FRAMES * sizeof(*h->path_nodes));
	h->nodes = malloc(256 * sizeof(*h->nodes));
	h->last_task = UINT32_MAX;
	if (!h->frame_cache || !h->frames || !h->path_keys || !h->path_nodes || !h->nodes)
		return -ENOMEM;
	memset(h->frame_cache, 0xff, sizeof(*h->frame_cache) << FRAME_CACHE_BITS);
	h->cap_nodes = 256;
	h->nodes[0] = (struct stack_node){UINT32_MAX, FUNC_UNKNOWN, UINT32_MAX, 0, UINT32_MAX};
	h->nr_nodes = 1;
	if (add_func(h, strdup("[unknown]"), &(struct func){.object = "[unknown]"}, &id) ||
	    add_func(h, strdup("[kernel]"), &(struct func){.object = "[kernel]", .obj = OBJ_KERNEL},
		     &id) ||
	    add_loc(h, FUNC_UNKNOWN, NULL, 0, &id) || add_loc(h, FUNC_KERNEL, NULL, 0, &id))
		return -ENOMEM;
	return 0;
}

/* Index of the counters for event @name, created on first use; -ENOMEM on failure. */
int hists__findnew_event(struct hists *h, const char *event)
{
	size_t i;

	for (i = 0; i < h->nr; i++) {
		if (!strcmp(h->v[i].event, event))
			return (int)i;
	}
	if (array__reserve(&h->v, &h->cap, h->nr + 1, sizeof(*h->v)))
		return -ENOMEM;
	h->v[h->nr] = (struct hist){.event = strdup(event)};
	if (!h->v[h->nr].event)
		return -ENOMEM;
	return (int)h->nr++;
}

/* The location for file offset @off of @dso, creating it (and its function) on first sight. */
static int resolve_in_dso(struct hists *h, struct dso *dso, u64 off, bool no_load, u32 *loc)
{
	const struct sym *sym;
	u64 val, a, b;
	char *name;
	u32 fid;
	int err;

	if (kvmap__get(&h->loc_idx, dso->id, off, &val)) {
		*loc = (u32)val;
		return 0;
	}
	sym = dso->special ? NULL : dso__find_sym(dso, off, no_load);
	a = dso->id | (sym ? KEY_SYM : KEY_NOSYM);
	b = sym ? sym->start : off;
	if (kvmap__get(&h->func_idx, a, b, &val)) {
		fid = (u32)val;
	} else {
		struct func proto = {.object = dso->short_name,
				     .dso = dso,
				     .vaddr = sym ? sym->start : 0,
				     .obj = OBJ_DSO0 + dso->id,
				     .has_sym = sym != NULL};

		if (sym) {
			name = demangle__name(sym->name);
			if (!name)
				name = strdup(sym->name);
		} else if (asprintf(&name, "%s+0x%llx", dso->short_name, (unsigned long long)off) <
			   0) {
			name = NULL;
		}
		err = add_func(h, name, &proto, &fid);
		if (!err)
			err = kvmap__put(&h->func_idx, a, b, fid);
		if (err)
			return err;
	}
	err = add_loc(h, fid, dso, off, loc);
	return err ? err : kvmap__put(&h->loc_idx, dso->id, off, *loc);
}

static void *kallsyms_thread(void *arg)
{
	struct hists *h = arg;

	kallsyms__load_cached(&h->kallsyms);
	return NULL;
}

/*
 * Start reading /proc/kallsyms in a thread, before it is known to be needed:
 * the kernel takes tens of milliseconds to list it, which the record passes
 * can hide. Nothing else touches h->kallsyms until the thread is joined.
 */
void hists__prefetch_kallsyms(struct hists *h)
{
	if (h->kthread_running || h->kallsyms.loaded)
		return;
	h->kthread_running = pthread_create(&h->kthread, NULL, kallsyms_thread, h) == 0;
}

static void join_kallsyms(struct hists *h)
{
	if (h->kthread_running) {
		pthread_join(h->kthread, NULL);
		h->kthread_running = false;
	}
}

/* Load /proc/kallsyms the first time a kernel address needs it; false if unusable. */
static bool kallsyms_ready(struct hists *h)
{
	if (!h->use_kallsyms)
		return false;
	if (h->kready)
		return true;
	join_kallsyms(h);
	if (!h->kallsyms.loaded)
		kallsyms__load_cached(&h->kallsyms);
	if (!h->kallsyms.nr) {
		h->use_kallsyms = false;
		return false;
	}
	/* The kernel MMAP's pgoff is where _text was when the file was written. */
	if (h->kallsyms.text && h->kpgoff)
		h->kreloc = h->kallsyms.text - h->kpgoff;
	h->kready = true;
	return true;
}

/* The location of kernel address @addr: a kallsyms function, or [kernel]. */
static int resolve_kernel(struct hists *h, u64 addr, u32 *loc)
{
	const struct ksym *ks;
	u64 val;
	u32 fid;
	int err;

	*loc = LOC_KERNEL;
	if (!kallsyms_ready(h))
		return 0;
	if (kvmap__get(&h->loc_idx, KEY_KERNEL, addr, &val)) {
		*loc = (u32)val;
		return 0;
	}
	ks = kallsyms__lookup(&h->kallsyms, addr + h->kreloc);
	if (!ks) {
		fid = FUNC_KERNEL;
	} else if (kvmap__get(&h->func_idx, KEY_KSYM, ks->addr, &val)) {
		fid = (u32)val;
	} else {
		struct func proto = {.object = "[kernel.kallsyms]", .obj = OBJ_KERNEL};

		err = add_func(h, strdup(ks->name), &proto, &fid);
		if (!err)
			err = kvmap__put(&h->func_idx, KEY_KSYM, ks->addr, fid);
		if (err)
			return err;
	}
	err = add_loc(h, fid, NULL, addr, loc);
	return err ? err : kvmap__put(&h->loc_idx, KEY_KERNEL, addr, *loc);
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

struct frame_ctx {
	struct proc *p;
	u64 time;
	u32 epoch;
	bool no_load;
};

/*
 * The location of @addr in context @ctx for the sample described by @fc.
 * When (epoch, addr) decides the map, or the address is a kernel one, the
 * answer is cached by (pid, epoch, addr), which skips the map search.
 */
static int resolve(struct hists *h, const struct frame_ctx *fc, enum ctx ctx, u64 addr, u32 *loc)
{
	struct frame_cache_ent *ce = NULL;
	const struct map *mp;
	u64 key;
	int err = 0;

	*loc = LOC_UNKNOWN;
	if (ctx == CTX_KERNEL) {
		if (!h->use_kallsyms) {
			*loc = LOC_KERNEL;
			return 0;
		}
		key = KERNEL_CACHE_KEY;
	} else if (ctx != CTX_USER || !fc->p) {
		return 0;
	} else {
		key = fc->p->pid | (u64)fc->epoch << 32;
		if (!fc->p->simple)
			goto search;
	}
	ce = frame_cache_slot(h, key, addr);
	if (ce->loc != UINT32_MAX && ce->addr == addr && ce->key == key) {
		*loc = ce->loc;
		return 0;
	}
	if (ctx == CTX_KERNEL) {
		err = resolve_kernel(h, addr, loc);
		goto out;
	}
search:
	mp = proc__find_map(fc->p, addr, fc->time, fc->epoch);
	if (mp)
		err = resolve_in_dso(h, mp->dso, addr - mp->start + mp->pgoff, fc->no_load, loc);
out:
	if (ce && !err)
		*ce = (struct frame_cache_ent){addr, key, *loc};
	return err;
}

/*
 * Resolve sample @s into h->frames: the location of its ip, then of each
 * caller in its callchain (return addresses looked up at addr - 1), leaf
 * first; *nr is how many. Returns 0 or -ENOMEM.
 */
int hists__resolve(struct hists *h, struct machine *m, const struct sample *s, u32 *nr)
{
	struct frame_ctx fc = {.no_load = m->dsos.no_load, .time = s->time};
	enum ctx ctx = ctx_of_cpumode(s->misc), ip_ctx = ctx;
	bool have_ip = s->has_ip, first = true;
	u64 i, ip = s->ip;
	u32 n = 0;
	int err;

	/* Samples come in runs from one process: skip the lookup for a run. */
	if (!s->has_tid) {
		fc.p = NULL;
	} else if (h->last_proc && h->last_proc_pid == s->pid) {
		fc.p = h->last_proc;
	} else {
		fc.p = machine__find_proc(m, s->pid);
		h->last_proc = fc.p;
		h->last_proc_pid = s->pid;
	}
	fc.epoch = fc.p ? proc__epoch(fc.p, s->time) : 0;
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
	if (!have_ip)
		h->frames[n++] = LOC_UNKNOWN;
	else if ((err = resolve(h, &fc, ip_ctx, ip, &h->frames[n++])))
		return err;

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
		err = resolve(h, &fc, ctx, e, &h->frames[n]);
		if (err)
			return err;
		n++;
	}
	*nr = n;
	return 0;
}

/*
 * Append to h->frames, from index *nr, the user-space locations of the
 * @nr_addrs code addresses @addrs of sample @s (already call addresses,
 * nothing is subtracted); *nr grows by how many fit below MAX_FRAMES.
 * Called after hists__resolve() for the same sample. Returns 0 or -ENOMEM.
 */
int hists__resolve_user(struct hists *h, struct machine *m, const struct sample *s,
			const u64 *addrs, u32 nr_addrs, u32 *nr)
{
	struct frame_ctx fc = {.no_load = m->dsos.no_load, .time = s->time};
	u32 i, n = *nr;
	int err;

	if (!s->has_tid)
		return 0;
	if (h->last_proc && h->last_proc_pid == s->pid) {
		fc.p = h->last_proc;
	} else {
		fc.p = machine__find_proc(m, s->pid);
		h->last_proc = fc.p;
		h->last_proc_pid = s->pid;
	}
	fc.epoch = fc.p ? proc__epoch(fc.p, s->time) : 0;
	for (i = 0; i < nr_addrs && n < MAX_FRAMES; i++) {
		err = resolve(h, &fc, CTX_USER, addrs[i], &h->frames[n]);
		if (err)
			return err;
		n++;
	}
	*nr = n;
	return 0;
}

void hists__exit(struct hists *h)
{
	size_t i;

	join_kallsyms(h);
	for (i = 0; i < h->nr_funcs; i++)
		free(h->funcs[i].name);
	for (i = 0; i < h->nr; i++) {
		free(h->v[i].event);
		free(h->v[i].stats);
	}
	free(h->funcs);
	free(h->locs);
	free(h->v);
	free(h->frame_cache);
	free(h->frames);
	free(h->path_keys);
	free(h->path_nodes);
	free(h->nodes);
	free(h->entries);
	free(h->tasks);
	kvmap__exit(&h->func_idx);
	kvmap__exit(&h->loc_idx);
	kvmap__exit(&h->node_idx);
	kvmap__exit(&h->entry_idx);
	kvmap__exit(&h->task_idx);
	kallsyms__exit(&h->kallsyms);
	memset(h, 0, sizeof(*h));
}
