/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private types of autoprof-report.
 *
 * The reader is split by responsibility:
 *   kvmap.c      a hash table keyed by two u64s (ids, addresses, pids)
 *   perf_file.c  mmap + header/attr/id validation, record walking
 *   features.c   the optional feature sections (hostname, cmdline, event names)
 *   evname.c     an event name from attr type/config
 *   sample.c     SAMPLE payload and the sample_id trailer, driven by sample_type
 *   machine.c    processes, threads, comms and maps over time
 *   dso.c        one object file per path, loaded lazily
 *   symbols.c    ELF symbol tables, load segments, separate debug files
 *   demangle.c   C++ and Rust names through libiberty
 *   jitmap.c     JIT symbols from /tmp/perf-PID.map (model/model.h: the model)
 *   kallsyms.c   kernel symbols from /proc/kallsyms, relocated by the kernel MMAP
 *   unwind_dwarf.c  user stacks of --call-graph dwarf samples, unwound by libdw
 *   srcline.c    source file:line and inlined frames through libdw, on demand
 *   strset.c     interned strings (comms, source lines) with u32 ids
 *   hist.c       address -> location -> function, and the samples per stack
 *   stacks.c     the trie of distinct call stacks, per-function totals
 *   ustack.c     dwarf-unwound user frames appended to a sample's stack
 *   counters.c   STAT/STAT_ROUND records: counter totals and elapsed time
 *   session.c    the two passes over all files that drive the above
 *   sort.c       --sort keys: rows keyed by function, library, line, thread...
 *   ftree.c      a merged call tree (callees or callers) for the tree views
 *   output.c     the default text report (header, counters, tables)
 *   escape.c     names made safe for XML, JSON and CSV
 *   render_*.c   one file per other view or export
 * Only main.c prints diagnostics or exits; everything else returns 0/-errno
 * and leaves a message in the object it worked on.
 */
#ifndef AUTOPROF_REPORT_INTERNAL_H
#define AUTOPROF_REPORT_INTERNAL_H

#include <autoprof/perf_file.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Unaligned native-endian loads: record payloads need not be aligned in a bad file. */
static inline u64 ld64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u32 ld32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- kvmap.c: open addressing, keys (a, b), u64 values ---- */

struct kvmap_slot {
	u64 a, b;
	u64 val;
	u64 used;
};

struct kvmap {
	struct kvmap_slot *slots;
	size_t cap; /* power of two, 0 when empty */
	size_t nr;
};

int kvmap__get(const struct kvmap *m, u64 a, u64 b, u64 *val);
int kvmap__put(struct kvmap *m, u64 a, u64 b, u64 val);
void kvmap__exit(struct kvmap *m);

/* ---- strset.c: interned strings, id 0 is "" ---- */

struct strset {
	char **v;
	size_t nr, cap;
	struct kvmap idx; /* (hash, salt) -> id */
};

int strset__intern(struct strset *ss, const char *str, size_t len, u32 *id);
const char *strset__str(const struct strset *ss, u32 id);
void strset__exit(struct strset *ss);

/* ---- util/array.c ---- */

int array__reserve(void *pv, size_t *cap, size_t need, size_t elem);

/* ---- read/: perf_file.c, stream.c, features.c, evname.c, sample.c ---- */

#include "read/read.h"

/* ---- model/: machine, dso, symbols, demangle, srcline, kallsyms, JIT maps ---- */

#include "model/model.h"

/* ---- hist.c + stacks.c ---- */

enum { FUNC_UNKNOWN = 0, FUNC_KERNEL = 1 };
enum { OBJ_UNKNOWN = 0, OBJ_KERNEL = 1, OBJ_DSO0 = 2 }; /* object ids; a dso is OBJ_DSO0 + id */

struct func {
	char *name;
	const char *object; /* display name of the object */
	struct dso *dso;    /* where the symbol is, NULL for kernel and placeholders */
	u64 vaddr;	    /* the symbol's start in the dso's ELF addresses */
	u32 obj;	    /* object id */
	bool has_sym;
};

/* One distinct code address: a dso and file offset, or a kernel address. */
struct loc {
	u32 fid;
	struct dso *dso; /* NULL: kernel or unknown */
	u64 off;
};

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

/* A direct-mapped cache of (pid, epoch, address) -> location, see resolve() in hist.c. */
#define FRAME_CACHE_BITS 16

struct frame_cache_ent {
	u64 addr;
	u64 key; /* pid | epoch << 32 */
	u32 loc; /* UINT32_MAX: empty */
};

/* Node 0 is the root; a node is one frame called from its parent. */
struct stack_node {
	u32 parent, fid, loc; /* loc is UINT32_MAX unless the stacks keep lines */
	u32 depth;
	u32 entry; /* the last entry that ended here: a cache in front of entry_idx */
};

/* Samples of one event, one thread, one stack (and one leaf location with lines). */
struct entry {
	u32 hist, task, node, pad;
	u64 samples, period;
};

struct task {
	u32 pid, tid;
	u64 samples, period;
};

/* The deepest stack kept: a SAMPLE record is at most 64 KiB, so 8192 u64s. */
#define MAX_FRAMES 8192

struct hists {
	struct frame_cache_ent *frame_cache;
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct kvmap func_idx; /* (dso id | kind, symbol start | offset) -> func id */
	struct loc *locs;
	size_t nr_locs, cap_locs;
	struct kvmap loc_idx; /* (dso id | kind, file offset | address) -> loc id */
	struct hist *v;
	size_t nr;
	/* stacks.c */
	struct stack_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct kvmap node_idx; /* (parent, fid or loc) -> node */
	struct entry *entries;
	size_t nr_entries, cap_entries;
	struct kvmap entry_idx; /* (hist, task, node) -> entry */
	struct task *tasks;
	size_t nr_tasks, cap_tasks;
	struct kvmap task_idx; /* (pid, tid) -> task */
	u32 *frames;	       /* MAX_FRAMES scratch locations of the current sample */
	u32 *path_keys;	       /* the last stack interned, root first: its keys */
	u32 *path_nodes;       /* ... and its nodes */
	u32 path_depth;
	u32 last_pid, last_tid, last_task;
	struct proc *last_proc; /* the process of the last sample, and its pid */
	u32 last_proc_pid;
	bool lines; /* stacks keep locations, not only functions */
	/* kernel symbols, read by a thread of their own while the records are read */
	struct kallsyms kallsyms;
	pthread_t kthread;
	bool kthread_running;
	bool use_kallsyms; /* the files have a kernel map that fits this machine */
	bool kready;	   /* kallsyms loaded and kreloc set */
	u64 kpgoff;	   /* the kernel MMAP's pgoff: where _text was in the file */
	u64 kreloc;	   /* added to file addresses to get /proc/kallsyms ones */
};

int hists__init(struct hists *h);
int hists__findnew_event(struct hists *h, const char *event);
void hists__prefetch_kallsyms(struct hists *h);
int hists__resolve(struct hists *h, struct machine *m, const struct sample *s, u32 *nr);
int hists__resolve_user(struct hists *h, struct machine *m, const struct sample *s,
			const u64 *addrs, u32 nr_addrs, u32 *nr);
int hists__unwind_user(struct hists *h, struct unwinder *uw, struct machine *m,
		       const struct perf_file *pf, const struct sample *s, u32 *nr);
int hists__add_stack(struct hists *h, int hist, u32 pid, u32 tid, const u32 *locs, u32 nr,
		     u64 period);
int hists__finish(struct hists *h);
void hists__exit(struct hists *h);
int stacks__intern(struct hists *h, const u32 *locs, u32 nr, u32 *node);
u32 stacks__path(const struct hists *h, u32 node, u32 *out);

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
	size_t nr;
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

/* ---- session.c ---- */

#define MAX_WARNINGS 32
#define MAX_FILTER   16

/* Which samples count: each list empty means "all". */
struct filter {
	u32 pids[MAX_FILTER], tids[MAX_FILTER];
	size_t nr_pids, nr_tids;
	const char *comms[MAX_FILTER], *dsos[MAX_FILTER];
	size_t nr_comms, nr_dsos;
	bool has_time;
	u64 time_from, time_to; /* ns after the first sample, [from, to) */
};

struct session_opts {
	bool no_load; /* never open object files or /proc/kallsyms (fuzzing) */
	bool lines;   /* keep the address of every frame, for source lines */
	struct filter filter;
	record_visitor visit; /* sees every record in pass 1 (--csv's overview), or NULL */
	void *visit_arg;
};

struct session {
	struct perf_file *files;
	size_t cap_files;
	size_t nr_files;
	struct session_opts opts;
	struct machine machine;
	struct hists hists;
	struct counters counters;
	struct unwinder *unwinder; /* made for the first --call-graph dwarf sample */
	/* totals over all files */
	u64 nr_samples, lost, lost_samples, throttle, unthrottle, filtered;
	u64 unknown_id, bad_samples, bad_records, unknown_records, nr_records;
	u64 type_counts[PERF_RECORD_LAST_KNOWN];
	u32 unknown_types[4]; /* first few unknown record types, for the warning */
	u64 first_time, last_time;
	u64 nr_procs_seen, nr_threads_seen;
	char *warnings[MAX_WARNINGS];
	size_t nr_warnings, dropped_warnings;
	char err[320];
};

int session__init(struct session *s);
int session__add_file(struct session *s, const char *path);
int session__add_buffer(struct session *s, const char *name, const void *buf, size_t len);
int session__process(struct session *s);
void session__warn(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void session__exit(struct session *s);
int session__main_hist(const struct session *s, const char *event);

/* ---- sort.c ---- */

enum sort_kind { SK_FUNC, SK_DSO, SK_SRCLINE, SK_THREAD, SK_PROCESS, SK_COMM };
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

int sort_spec__parse(struct sort_spec *ss, const char *arg);
bool sort_spec__has(const struct sort_spec *ss, enum sort_kind k);
int rows__build(struct rows *r, struct session *s, int hist, const struct sort_spec *ss);
void rows__sort(struct rows *r, const struct session *s, bool by_total);
int rows__name(struct rows *r, const struct session *s, const struct sort_spec *ss,
	       const struct row *row, int i, char *buf, size_t len);
const char *sort_kind__title(enum sort_kind k);
void rows__exit(struct rows *r);

/* ---- ftree.c ---- */

struct fnode {
	u32 parent, fid;
	u32 child, next;	       /* first child, next sibling: UINT32_MAX for none */
	u64 samples, period;	       /* this node and everything below it */
	u64 self_samples, self_period; /* samples that end here */
};

enum ftree_mode { FT_STACKS, FT_CALLEES, FT_CALLERS };

struct ftree {
	struct fnode *v; /* v[0] is the root: all stacks, or the focus function */
	size_t nr, cap;
	struct kvmap idx; /* (parent, fid) -> node */
};

int ftree__build(struct ftree *t, const struct session *s, int hist, enum ftree_mode mode,
		 u32 focus);
void ftree__order(struct ftree *t, const struct func *funcs, bool by_name);
void ftree__exit(struct ftree *t);

/* ---- output.c and render_*.c ---- */

struct report_opts {
	unsigned top;
	bool children;
	bool lines;	   /* a source column for functions */
	bool callers;	   /* --tree shows callers instead of callees */
	double min_pct;	   /* --tree: hide branches below this share */
	const char *event; /* the event the views use; NULL: the first with samples */
	struct sort_spec sort;
};

/* Text-safe output of a string from the file (output.c, escape.c). */
void print_clean(FILE *out, const char *str);
void escape_xml(FILE *out, const char *str);
void escape_json(FILE *out, const char *str);
void escape_csv(FILE *out, const char *str);
void report__func_source(struct session *s, u32 fid, char *buf, size_t len);
double pct_of(u64 part, u64 whole);

void report__print(struct session *s, const struct report_opts *o, FILE *out);
void report__print_header(const struct session *s, FILE *out);
void report__print_counters(const struct session *s, FILE *out);
int render_tree(struct session *s, const struct report_opts *o, FILE *out);
int render_folded(struct session *s, const struct report_opts *o, FILE *out);
int render_flamegraph(struct session *s, const struct report_opts *o, FILE *out);
int render_json(struct session *s, const struct report_opts *o, FILE *out);
/* render_csv's overview: an index of every record, built by visiting pass 1. */
struct csv_overview {
	struct rec_pos *v;
	size_t nr, cap;
};

int csv_overview__visit(void *arg, u32 file, const struct record *r, const struct sample *id);
void csv_overview__attach(struct session_opts *so, struct csv_overview *ov);
void csv_overview__exit(struct csv_overview *ov);
int render_csv(struct session *s, const struct report_opts *o, const char *dir, char *err,
	       size_t err_len);
int render_diff(struct session *a, struct session *b, const struct report_opts *o, FILE *out);

#endif /* AUTOPROF_REPORT_INTERNAL_H */
