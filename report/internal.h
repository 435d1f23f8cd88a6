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
 *   demangle.c   C++ names, when libstdc++'s demangler can be found
 *   hist.c       address cache, function table, per-event self/children counts
 *   session.c    the two passes over all files that drive the above
 *   output.c     the text report
 * Only main.c prints diagnostics or exits; everything else returns 0/-errno
 * and leaves a message in the object it worked on.
 */
#ifndef AUTOPROF_REPORT_INTERNAL_H
#define AUTOPROF_REPORT_INTERNAL_H

#include <autoprof/perf_file.h>
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

/* ---- perf_file.c ---- */

/* One attr of one file, zero-extended to the attr struct this build knows. */
struct evattr {
	struct perf_event_attr attr;
	u64 default_period; /* when PERIOD is not in sample_type */
	char *name;	    /* EVENT_DESC name, else derived from type/config */
	int hist;	    /* index of the event's counters, set by the session */
};

/* What the optional feature sections said; NULL/0 when absent. */
struct features {
	char *hostname, *osrelease, *arch, *version, *cmdline;
	u32 nr_cpus_avail, nr_cpus_online;
	bool has_nrcpus, has_stat;
};

struct perf_file {
	char *path;
	const u8 *base; /* the whole file, mapped read-only */
	size_t size;
	struct perf_file_header hdr;
	u64 data_off, data_end; /* record stream, clamped to the file */
	u64 walk_end;		/* where walking stopped (== data_end unless bad record) */
	struct evattr *attrs;
	size_t nr_attrs;
	struct kvmap ids; /* event id -> attr index */
	int id_pos;	  /* u64 index of the id in a SAMPLE, -1: none */
	bool sample_id_all;
	bool data_repaired; /* data.size was 0 or ran past the end */
	struct features feat;
	char warn[256]; /* a recoverable problem found by perf_file__open() */
	char err[256];	/* why the last call failed */
};

/* A record: its header (copied, so alignment never matters) and its bytes. */
struct record {
	struct perf_event_header h;
	const u8 *p; /* h.size bytes, starting with the header */
	u64 off;     /* file offset */
};

int perf_file__open(struct perf_file *pf, const char *path);
void perf_file__close(struct perf_file *pf);
int perf_file__next_record(struct perf_file *pf, u64 *pos, struct record *r);
int perf_file__record_at(const struct perf_file *pf, u64 pos, struct record *r);
int perf_file__attr_of_id(const struct perf_file *pf, u64 id);

/* ---- features.c ---- */

int features__read(struct perf_file *pf, char *warn, size_t warn_len);
void features__exit(struct features *f);

/* ---- evname.c ---- */

char *evname__from_attr(const struct perf_event_attr *attr);

/* ---- sample.c ---- */

struct sample {
	int attr; /* index into pf->attrs */
	u16 misc; /* header.misc */
	u64 ip;
	u32 pid, tid;
	u64 time;
	u64 id;
	u32 cpu;
	u64 period;
	u64 nr_chain;	 /* callchain entries */
	const u8 *chain; /* nr_chain unaligned u64s inside the mapped file */
	bool has_ip, has_tid, has_time;
};

int sample__parse(const struct perf_file *pf, const struct record *r, struct sample *s);
int sample_id__parse(const struct perf_file *pf, const struct record *r, size_t fixed,
		     struct sample *s, size_t *body_end);

static inline u64 sample__chain(const struct sample *s, u64 i)
{
	return ld64(s->chain + i * 8);
}

/* ---- dso.c + symbols.c + demangle.c ---- */

struct sym {
	u64 start, end; /* [start, end) in the ELF's virtual addresses */
	const char *name;
};

struct symtab {
	struct sym *syms;
	size_t nr;
	char *names; /* one arena for all names */
};

struct load_seg {
	u64 offset, filesz, vaddr;
};

struct dso {
	char *path;
	const char *short_name; /* basename, points into path */
	u32 id;
	bool special; /* [vdso], [heap], //anon ...: never opened */
	bool loaded;  /* load attempted */
	struct symtab symtab;
	struct load_seg *segs;
	size_t nr_segs;
};

struct dsos {
	struct dso **v;
	size_t nr, cap;
	struct kvmap by_hash; /* path hash -> first index, chained by linear scan */
};

struct dso *dsos__findnew(struct dsos *d, const char *path, size_t len);
void dsos__exit(struct dsos *d);
void dso__load(struct dso *dso);
const struct sym *dso__find_sym(struct dso *dso, u64 file_off);

int symbols__load(struct dso *dso);
const struct sym *symtab__lookup(const struct symtab *t, u64 vaddr);
void symtab__exit(struct symtab *t);
char *demangle__name(const char *name);

/* ---- machine.c ---- */

#define TIME_NEVER UINT64_MAX

struct map {
	u64 start, end, pgoff;
	u64 time, end_time; /* valid from time (0: always) until end_time (an exec) */
	u32 epoch;	    /* how many execs of the process came before it */
	struct dso *dso;
};

struct proc {
	u32 pid;
	u32 fork_epoch;	     /* epoch of the fork: the parent's maps count only within it */
	struct proc *parent; /* forked from */
	u64 fork_time;
	struct map *maps;
	size_t nr_maps, cap_maps;
	u64 *execs; /* exec times, increasing */
	size_t nr_execs, cap_execs;
	u64 *max_end; /* prefix maximum of map ends, after machine__finish() */
	bool simple;  /* maps of one epoch never overlap: (epoch, addr) decides the map */
	const struct map *last;
};

struct thread {
	u32 pid, tid;
	char comm[32];
};

struct machine {
	struct proc **procs;
	size_t nr_procs, cap_procs;
	struct kvmap proc_idx; /* pid -> index */
	struct thread *threads;
	size_t nr_threads, cap_threads;
	struct kvmap thread_idx; /* tid -> index */
	struct dsos dsos;
};

int machine__mmap(struct machine *m, u32 pid, u64 start, u64 len, u64 pgoff, const char *name,
		  size_t name_len, u64 time);
int machine__comm(struct machine *m, u32 pid, u32 tid, const char *comm, size_t len, bool exec,
		  u64 time);
int machine__fork(struct machine *m, u32 pid, u32 ppid, u32 tid, u32 ptid, u64 time);
int machine__finish(struct machine *m);
struct proc *machine__find_proc(const struct machine *m, u32 pid);
const struct thread *machine__find_thread(const struct machine *m, u32 tid);
u32 proc__epoch(const struct proc *p, u64 time);
const struct map *proc__find_map(struct proc *p, u64 addr, u64 time, u32 epoch);
void machine__exit(struct machine *m);

/* ---- hist.c ---- */

enum { FUNC_UNKNOWN = 0, FUNC_KERNEL = 1 };

struct func {
	char *name;
	const char *object; /* display name of the object */
};

struct func_stat {
	u64 self_period, self_samples;
	u64 total_period, total_samples;
	u64 seen; /* sample sequence number that last counted this function */
};

struct hist {
	char *event;
	u64 nr_samples, total_period;
	struct func_stat *stats; /* indexed by function id */
	size_t nr_stats;
};

/* A direct-mapped cache of (pid, epoch, address) -> function, see resolve() in hist.c. */
#define FRAME_CACHE_BITS 14

struct frame_cache_ent {
	u64 addr;
	u64 key; /* pid | epoch << 32 */
	u32 fid; /* UINT32_MAX: empty */
};

struct hists {
	struct frame_cache_ent *frame_cache;
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct kvmap func_idx;	 /* (dso id, symbol start | unresolved offset) -> func id */
	struct kvmap addr_cache; /* (dso id, file offset) -> func id */
	struct hist *v;
	size_t nr;
	u64 seq;
};

int hists__init(struct hists *h);
int hists__findnew_event(struct hists *h, const char *event);
int hists__add_sample(struct hists *h, int hist, struct machine *m, const struct sample *s,
		      u64 period);
void hists__exit(struct hists *h);

/* ---- session.c ---- */

#define MAX_WARNINGS 32

struct session {
	struct perf_file *files;
	size_t nr_files;
	struct machine machine;
	struct hists hists;
	/* totals over all files */
	u64 nr_samples, lost, lost_samples, throttle, unthrottle;
	u64 unknown_id, bad_samples, bad_records, unknown_records, nr_records;
	u32 unknown_types[4]; /* first few unknown record types, for the warning */
	u64 first_time, last_time;
	u64 nr_procs_seen, nr_threads_seen;
	struct kvmap pids_seen, tids_seen;
	char *warnings[MAX_WARNINGS];
	size_t nr_warnings, dropped_warnings;
	char err[320];
};

int session__init(struct session *s);
int session__add_file(struct session *s, const char *path);
int session__process(struct session *s);
void session__warn(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void session__exit(struct session *s);

/* ---- output.c ---- */

struct report_opts {
	unsigned top;
	bool children;
};

void report__print(const struct session *s, const struct report_opts *o, FILE *out);

#endif /* AUTOPROF_REPORT_INTERNAL_H */
