/* SPDX-License-Identifier: MIT */
/*
 * aggregate.h - samples turned into counts (report/aggregate/):
 *   resolver.c  the resolver: address -> location -> function (locate.c: its tables)
 *   ustack.c    dwarf-unwound user frames appended to a sample's stack
 *   stacks.c    the trie of distinct call stacks, samples per (event, thread, stack)
 *   hists.c     both per event, and the per-function totals at the end
 *   counters.c  STAT/STAT_ROUND records: counter totals and elapsed time
 *   rows.c      --sort keys: rows keyed by function, library, line, thread...
 *   ftree.c     a merged call tree (callees or callers) for the tree views
 *   aim.c       --focus, --peek, --hide, --ignore, -S: the stack filter
 * The third stage: uses read/, model/ and util/; never view/ or the driver
 * (report/driver/, which calls it and holds the hists and counters).
 */
#ifndef AUTOPROF_REPORT_AGGREGATE_H
#define AUTOPROF_REPORT_AGGREGATE_H

#include <regex.h>

#include "model/model.h"
#include "read/read.h"
#include "util/util.h"

/* ---- resolver.c + locate.c + ustack.c: the resolver, address -> location -> function ---- */

enum { FUNC_UNKNOWN = 0, FUNC_KERNEL = 1 };
enum { OBJ_UNKNOWN = 0, OBJ_KERNEL = 1, OBJ_DSO0 = 2 }; /* object ids; a dso is OBJ_DSO0 + id */

struct func {
	char *name;
	const char *object; /* display name of the object */
	struct dso *dso;    /* where the symbol is, NULL for kernel and placeholders */
	u64 vaddr;	    /* the symbol's start in the dso's ELF addresses */
	u32 obj;	    /* object id */
	bool has_sym;
	char *decl; /* an inlined function's "file.c:12" (DWARF), or NULL */
};

/* One distinct code address: a dso and file offset, or a kernel address. */
struct loc {
	u32 fid;
	u32 next;	 /* the caller frame of an inlined function's frame, or NONE_LOC */
	struct dso *dso; /* NULL: kernel or unknown */
	u64 off;
	u32 depth; /* 0: the address's own frame; d: the caller d levels out of its inlines */
};

#define NONE_LOC UINT32_MAX

/* A direct-mapped cache of (pid, epoch, address) -> location, see resolve() in resolver.c. */
#define FRAME_CACHE_BITS 16

struct frame_cache_ent {
	u64 addr;
	u64 key; /* pid | epoch << 32 */
	u32 loc; /* UINT32_MAX: empty */
	u32 map; /* not 0: valid while machine__map_decides(&proc->maps[map - 1], time) */
};

/*
 * Every distinct code address seen, as a location id (locs), each with its
 * function id (funcs); locations 0 and 1 are [unknown] and [kernel], and so
 * are functions 0 and 1. Ids are stable: the tables only grow.
 */
struct resolver {
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct kvmap func_idx; /* (dso id | kind, symbol start | offset) -> func id */
	struct loc *locs;
	size_t nr_locs, cap_locs;
	struct kvmap loc_idx; /* (dso id | kind, file offset | address) -> loc id */
	struct frame_cache_ent *frame_cache;
	struct chain_ent *chain_cache; /* whole samples' locations, see chain_cache.c */
	u32 chain_tries, chain_hits;   /* in the current window of lookups */
	bool chain_off;		       /* too few hits: not used any more */
	struct proc *last_proc;	       /* the process of the last sample, and its pid */
	u32 last_proc_pid;
	struct kernel_syms ksyms; /* kernel addresses, once enabled */
	bool no_inline;		  /* --no-inline: no frames for inlined functions */
	bool any_inline;	  /* some location has inlined frames (loc.next) */
};

void resolver__set_inline(bool on);
/* Function and location key kinds (high half of key a; low half is the dso id). */
#define KEY_SYM	   (1ULL << 32)
#define KEY_NOSYM  (2ULL << 32)
#define KEY_KSYM   (3ULL << 32)
#define KEY_KERNEL (4ULL << 32)
#define KEY_INLINE (5ULL << 32)

/* The frame cache key of kernel addresses: no pid | epoch << 32 is all ones. */
#define KERNEL_CACHE_KEY UINT64_MAX

enum { LOC_UNKNOWN = 0, LOC_KERNEL = 1 };

/* locate.c: the tables behind the resolver. Each returns 0 or -ENOMEM. */
/* Add function @name (taken) like @proto; its id into *id. */
int locate__add_func(struct resolver *r, char *name, const struct func *proto, u32 *id);
/* Add a location of function @fid at file offset @off of @dso; its id into *id. */
int locate__add_loc(struct resolver *r, u32 fid, struct dso *dso, u64 off, u32 *id);
/* The location of file offset @off of @dso, made (with its function and inline frames) on first
 * sight. */
int locate__dso(struct resolver *r, struct dso *dso, u64 off, bool no_load, u32 *loc);
/* The location of kernel address @addr: a kallsyms function, or [kernel]. */
int locate__kernel(struct resolver *r, u64 addr, u32 *loc);

int resolver__init(struct resolver *r);
int resolver__sample(struct resolver *r, struct machine *m, const struct sample *s, u32 *frames,
		     u32 *nr);
/*
 * As resolver__sample() for a sample of an LBR call stack (perf record
 * --call-graph lbr), as perf builds it: the ip, the kernel's part of the
 * callchain, then the user part from the @nr_entries branch entries at
 * @entries (the target of the last call, then each call site). Returns 1
 * if the sample has no user part or no entries (use resolver__sample()),
 * 0, or -ENOMEM.
 */
int resolver__lbr(struct resolver *r, struct machine *m, const struct sample *s, const u8 *entries,
		  u64 nr_entries, u32 *frames, u32 *nr);
int resolver__user(struct resolver *r, struct machine *m, const struct sample *s, const u64 *addrs,
		   u32 nr_addrs, u32 *frames, u32 *nr);
int ustack__unwind(struct resolver *r, struct unwinder *uw, struct machine *m,
		   const struct perf_file *pf, const struct sample *s, u32 *frames, u32 *nr);
struct proc *resolver__proc(struct resolver *r, struct machine *m, const struct sample *s);
void resolver__exit(struct resolver *r);

struct chain_ent;
bool chain_cache__find(struct resolver *r, const struct sample *s, u64 pkey,
		       struct chain_ent **slot, u64 *hash, const u32 **out, u32 *nr);
void chain_cache__store(struct chain_ent *e, u64 hash, const struct sample *s, u64 pkey,
			const u32 *frames, u32 nr);
void chain_cache__free(struct resolver *r);

/* ---- stacks.c: the trie of distinct stacks and the samples of each ---- */

/* Node 0 is the root; a node is one frame called from its parent. */
struct stack_node {
	u32 parent, fid, loc; /* loc is UINT32_MAX unless the stacks keep lines */
	u32 depth;
	u32 entry; /* the last entry that ended here: a cache in front of entry_idx */
};

/* Samples of one event, thread, CPU and stack (and one leaf location with lines). */
struct entry {
	u32 hist, task, node, cpu; /* cpu: UINT32_MAX when the samples do not say */
	u64 samples, period;
};

struct task {
	u32 pid, tid;
	u32 comm;   /* its name then: machine__comm_idx() */
	u32 thread; /* the first task of the same thread (tasks differ in comm only) */
	u64 samples, period;
};

struct stacks {
	struct stack_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct kvmap node_idx; /* (parent, fid or loc) -> node */
	struct entry *entries;
	size_t nr_entries, cap_entries;
	struct kvmap entry_idx; /* (hist, task, cpu, node) -> entry */
	struct task *tasks;
	size_t nr_tasks, cap_tasks;
	struct kvmap task_idx; /* (pid, tid) -> task */
	u32 *path_keys;	       /* the last stack interned, root first: its keys */
	u32 *path_nodes;       /* ... and its nodes */
	u32 path_depth;
	u32 last_pid, last_tid, last_comm, last_task;
	bool lines; /* nodes are locations, not only functions */
	bool cpus;  /* entries per CPU too; else every entry's cpu is UINT32_MAX */
};

int stacks__init(struct stacks *st);
int stacks__intern(struct stacks *st, const struct loc *loctab, const u32 *locs, u32 nr, u32 *node);
int stacks__add(struct stacks *st, const struct loc *loctab, u32 hist, u32 pid, u32 tid, u32 comm,
		u32 cpu, const u32 *locs, u32 nr, u64 period);
u32 stacks__path(const struct stacks *st, u32 node, u32 *out);
void stacks__exit(struct stacks *st);

/* ---- hists.c: per event, the resolver and the trie together ---- */

struct func_stat {
	u64 self_period, self_samples;
	u64 total_period, total_samples;
	u64 seen; /* internal to hists__finish() */
};

struct hist {
	char *event;
	u64 nr_samples, total_period;
	struct func_stat *stats; /* indexed by function id, after hists__finish() */
	size_t nr_stats;
};

struct hists {
	struct resolver res;  /* the locations and functions the stacks name */
	struct stacks stacks; /* the samples of every event, per thread and stack */
	struct hist *v;	      /* per event: totals, and per-function counts at the end */
	size_t nr, cap;
	const struct aim *aim; /* the stack filter (aim.c), or NULL */
	u8 *marks;	       /* per function id: MARK_* bits, 0 until computed */
	size_t nr_marks;
	u32 *aim_buf;  /* a stack without its hidden frames */
	u64 aimed_out; /* samples the filter kept out of the stacks */
};

int hists__init(struct hists *h);
int hists__findnew_event(struct hists *h, const char *event);
int hists__add_stack(struct hists *h, int hist, u32 pid, u32 tid, u32 comm, u32 cpu,
		     const u32 *locs, u32 nr, u64 period);
int hists__finish(struct hists *h);
void hists__exit(struct hists *h);

/* ---- aim.c: the stack filter of --focus, --peek, --hide, --ignore, -S ---- */

enum aim_kind { AIM_FOCUS, AIM_PEEK, AIM_HIDE, AIM_IGNORE, AIM_NR };
#define MAX_AIM_SYMBOLS 16

/* The filter as the command line gave it: shared by every session, read-only. */
struct aim {
	regex_t re[AIM_NR];
	bool has[AIM_NR];
	const char *symbols[MAX_AIM_SYMBOLS]; /* -S: exact names */
	size_t nr_symbols;
};

enum {
	MARK_DONE = 1,	  /* marks computed */
	MARK_FOCUS = 2,	  /* matches --focus */
	MARK_PEEK = 4,	  /* matches --peek */
	MARK_HIDE = 8,	  /* matches --hide */
	MARK_IGNORE = 16, /* matches --ignore */
	MARK_SYMBOL = 32, /* named by -S */
	MARK_AIMED = MARK_FOCUS | MARK_PEEK | MARK_SYMBOL,
};

int aim__set(struct aim *a, enum aim_kind k, const char *regex, char *err, size_t len);
bool aim__active(const struct aim *a);
bool aim__has_focus(const struct aim *a);
void aim__exit(struct aim *a);
u8 aim__marks(struct hists *h, u32 fid);
int aim__filter(struct hists *h, const u32 *locs, u32 nr, const u32 **out, u32 *out_nr);

/* ---- counters.c ---- */

struct counter {
	char *name;
	u64 val, ena, run;
	bool has_sample_attr; /* the same event also samples */
};

struct counter_val {
	u32 counter;
	u64 val, ena, run;
};

struct counters {
	struct counter *v;
	size_t nr, cap;
	struct counter_val *vals;
	size_t nr_vals, cap_vals;
	struct kvmap val_idx;  /* (file << 32 | attr, cpu << 32 | thread) -> val */
	struct kvmap attr_idx; /* (file, attr) -> counter */
	u64 elapsed_ns;	       /* STAT_ROUND time, the longest over all files */
	u64 nr_stat;
	bool has_final;
};

int counters__stat(struct counters *c, const struct perf_file *pf, u32 file,
		   const struct record *r);
int counters__round(struct counters *c, const struct record *r);
int counters__finish(struct counters *c);
const struct counter *counters__find(const struct counters *c, const char *name);
void counters__exit(struct counters *c);

/* ---- rows.c: --sort keys and the rows of a table ---- */

enum sort_kind { SK_FUNC, SK_DSO, SK_SRCLINE, SK_THREAD, SK_PROCESS, SK_COMM, SK_CPU };
#define MAX_SORT_KEYS 4

struct sort_spec {
	enum sort_kind k[MAX_SORT_KEYS];
	int nr;
};

struct row {
	u32 key[MAX_SORT_KEYS];
	u32 fid; /* a function of the row, for its object name */
	u64 self_samples, self_period, total_samples, total_period;
	u64 seen;
};

struct rows {
	struct row *v;
	size_t nr, cap;
	struct kvmap idx;
	struct strset names;  /* comms and source lines */
	struct kvmap line_of; /* loc -> line string id */
};

int rows__parse_spec(struct sort_spec *ss, const char *arg);
bool rows__spec_has(const struct sort_spec *ss, enum sort_kind k);
void rows__valid_keys(char *buf, size_t len);
int rows__build(struct rows *r, const struct hists *h, const struct machine *m, int hist,
		const struct sort_spec *ss);
int rows__build_leaves(struct rows *r, const struct hists *h, const struct machine *m, int hist,
		       const struct sort_spec *ss);
void rows__sort(struct rows *r, const struct hists *h, bool by_total);
int rows__name(struct rows *r, const struct hists *h, const struct machine *m,
	       const struct sort_spec *ss, const struct row *row, int i, char *buf, size_t len);
const char *rows__key_title(enum sort_kind k);
void rows__exit(struct rows *r);

/* ---- ftree.c ---- */

struct fnode {
	u32 parent, fid;
	u32 child, next;	       /* first child, next sibling: UINT32_MAX for none */
	u64 samples, period;	       /* this node and everything below it */
	u64 self_samples, self_period; /* samples that end here */
	u32 rec;		       /* folded recursion: the deepest run of fid here */
};

enum ftree_mode { FT_STACKS, FT_CALLEES, FT_CALLERS };

struct ftree {
	struct fnode *v; /* v[0] is the root: all stacks, or the focus function */
	size_t nr, cap;
	struct kvmap idx; /* (parent, fid) -> node */
};

/* ftree__build_ex() flags */
enum {
	FT_FOLD_RECURSION = 1, /* a function calling itself directly: one node */
	FT_SELF_ONLY = 2,      /* FT_CALLERS: only the samples that end in the focus */
};

int ftree__build(struct ftree *t, const struct hists *h, int hist, enum ftree_mode mode, u32 focus);
int ftree__build_ex(struct ftree *t, const struct hists *h, int hist, enum ftree_mode mode,
		    u32 focus, unsigned flags);
void ftree__order(struct ftree *t, const struct func *funcs, bool by_name);
void ftree__exit(struct ftree *t);

/*
 * The node after @i in a depth-first walk from the root: its first child,
 * else the next sibling of it or of its nearest ancestor that has one;
 * UINT32_MAX after the last.
 */
static inline u32 ftree__next(const struct ftree *t, u32 i)
{
	if (t->v[i].child != UINT32_MAX)
		return t->v[i].child;
	while (i && t->v[i].next == UINT32_MAX)
		i = t->v[i].parent;
	return i ? t->v[i].next : UINT32_MAX;
}

#endif /* AUTOPROF_REPORT_AGGREGATE_H */
