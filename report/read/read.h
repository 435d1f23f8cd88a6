/* SPDX-License-Identifier: MIT */
/*
 * read.h - what the rest of autoprof-report needs from the reader (report/read/):
 *   perf_file.c  header/attr/id validation of a file, a buffer or standard input
 *   prefault.c   a thread that maps a big file's pages ahead of the walker
 *   tracing.c    tracepoint names from perf's tracing data (pipe mode)
 *   stream.c     pipe-mode streams and PERF_RECORD_COMPRESSED (zstd) expanded
 *                into one plain record stream
 *   features.c   the optional feature sections (file) or HEADER_FEATURE records (pipe)
 *   evname.c     an event name from attr type/config
 *   memory_names.c  autoprof's memory events: names, derived events, pprof names
 *   sample.c     SAMPLE payload and the sample_id trailer, driven by sample_type
 *   listing.c    --list: what each profile of a directory holds
 *   rec_pos.c    the time order of record positions
 *   run_files.c  the per-image files of a run, found from its first file
 * The first stage: uses only util/ (never model/, aggregate/, view/ or the
 * driver, which calls it: report/driver/).
 */
#ifndef AUTOPROF_REPORT_READ_H
#define AUTOPROF_REPORT_READ_H

#include <autoprof/perf_file.h>
#include <pthread.h>
#include <stdio.h>

#include "util/util.h"

/* ---- perf_file.c ---- */

/* One attr of one file, zero-extended to the attr struct this build knows. */
struct evattr {
	struct perf_event_attr attr;
	u64 default_period; /* when PERIOD is not in sample_type */
	char *name;	    /* EVENT_DESC name, else derived from type/config */
	int hist;	    /* index of the event's counters, set by the session */
	bool lbr_calls;	    /* its call stacks are in its branch stacks (--call-graph lbr) */
};

/* One object's build id as the file gives it (BUILD_ID feature or record). */
struct build_id_note {
	char *path;   /* as perf names it: a path, "[vdso]", "[kernel.kallsyms]" */
	char hex[41]; /* lowercase hex, at most 20 bytes of id */
};

/* What the optional feature sections said; NULL/0 when absent. */
struct features {
	struct build_id_note *build_ids; /* BUILD_ID entries (and pipe-mode records) */
	size_t nr_build_ids, cap_build_ids;
	char *hostname, *osrelease, *arch, *version, *cmdline;
	u32 nr_cpus_avail, nr_cpus_online;
	bool has_nrcpus, has_stat;
	bool has_comp; /* HEADER_COMPRESSED: how PERF_RECORD_COMPRESSED bodies are packed */
	u32 comp_type, comp_level, comp_mmap_len; /* type 1: zstd */
};

struct perf_file {
	char *path;
	const u8 *base; /* the whole file, mapped read-only (or the caller's buffer) */
	size_t size;
	bool mapped;	 /* base is our mmap */
	u8 *heap;	 /* base when it is ours on the heap (standard input) */
	bool pipe;	 /* pipe-mode stream: 16-byte header, attrs and features as records */
	const u8 *rbase; /* the records: base, or the expanded stream (stream.c) */
	u8 *expanded;	 /* owned expanded stream, or NULL */
	size_t cap_attrs;
	u64 released;		   /* pages below this were handed back to the kernel */
	struct prefault *prefault; /* the thread mapping pages ahead (prefault.c), or NULL */
	struct perf_file_header hdr;
	u64 data_off, data_end; /* record stream, clamped to the file */
	u64 walk_end;		/* where walking stopped (== data_end unless bad record) */
	struct evattr *attrs;
	size_t nr_attrs;
	struct kvmap ids; /* event id -> attr index */
	int id_pos;	  /* u64 index of the id in a SAMPLE, -1: none */
	bool sample_id_all;
	bool data_repaired;	/* data.size was 0 or ran past the end */
	u64 lost, lost_samples; /* LOST and LOST_SAMPLES totals of this file */
	/* the records' bytes in the file as stored (before expanding), and where reading
	 * stopped in them (0: read to the end) */
	u64 orig_off, orig_end, stop_at;
	struct features feat;
	/* a recoverable problem found by perf_file__open(), and why the last call failed:
	 * allocated when said (a day of windows keeps thousands of files); read them with
	 * perf_file__warning() and perf_file__error() */
	char *warn, *err;
};

/* A record: its header (copied, so alignment never matters) and its bytes. */
struct record {
	struct perf_event_header h;
	const u8 *p; /* h.size bytes, starting with the header */
	u64 off;     /* file offset */
};

/*
 * The typed record decoder: the fixed part of record @r as struct type @T
 * (from perf_file.h), copied (so alignment never matters) and zero-filled
 * where the record is shorter than @T.
 */
#define REC(T, r)                                                                                  \
	({                                                                                         \
		T rec_v_;                                                                          \
		size_t rec_n_ = (r)->h.size < sizeof(rec_v_) ? (r)->h.size : sizeof(rec_v_);       \
		memset(&rec_v_, 0, sizeof(rec_v_));                                                \
		memcpy(&rec_v_, (r)->p, rec_n_);                                                   \
		rec_v_;                                                                            \
	})

int perf_file__open(struct perf_file *pf, const char *path);
int perf_file__open_mem(struct perf_file *pf, const char *name, const void *buf, size_t len);
int perf_file__fail(struct perf_file *pf, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Say a recoverable problem of @pf (instead of any said before). */
void perf_file__warn(struct perf_file *pf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* What perf_file__fail() said last ("out of memory" if it could not keep it). */
const char *perf_file__error(const struct perf_file *pf);
/* What perf_file__warn() said, or "". */
const char *perf_file__warning(const struct perf_file *pf);
void perf_file__close(struct perf_file *pf);
/*
 * Hand the mapped pages of @pf back to the kernel (read-only file pages:
 * touching them again reads them back). For a session of many files, each
 * holding its pages only while it is being read. Not with a prefault thread.
 */
void perf_file__release(struct perf_file *pf);
int perf_file__next_record(struct perf_file *pf, u64 *pos, struct record *r);
/* Bytes that follow record @r outside its size (TRACING_DATA of either layout, AUXTRACE). */
u64 perf_file__trailing(const struct record *r);
int perf_file__record_at(const struct perf_file *pf, u64 pos, struct record *r);
int perf_file__attr_of_id(const struct perf_file *pf, u64 id);
int perf_file__add_attr(struct perf_file *pf, const u8 *attr, u32 size, const u8 *ids, u64 nr_ids);
int perf_file__finish_attrs(struct perf_file *pf);

/* ---- prefault.c ---- */

struct prefault;
void prefault__start(struct perf_file *pf);
void prefault__tell(struct prefault *p, u64 pos);
void prefault__stop(struct perf_file *pf);

/* ---- stream.c ---- */

int stream__expand(struct perf_file *pf, u64 from, u64 to);

/* ---- tracing.c ---- */

/*
 * Name the tracepoint attrs of @pf ("system:name") from the @len bytes of
 * tracing data at @p (pipe mode's HEADER_TRACING_DATA payload); attrs with a
 * name keep it. Returns 0 (also on data it cannot parse) or -ENOMEM.
 */
int tracing__name_events(struct perf_file *pf, const u8 *p, u64 len);

/* ---- features.c ---- */

int features__read(struct perf_file *pf, char *warn, size_t warn_len);
int features__read_one(struct perf_file *pf, int bit, const u8 *p, u64 len);
int features__read_build_ids(struct features *f, const u8 *p, u64 len);
void features__exit(struct features *f);
/*
 * Free the build ids of @f once the session's objects took them; with
 * @keep_kernel, not the kernel's ("[kernel.kallsyms]": its kallsyms in perf's
 * build-id cache).
 */
void features__drop_build_ids(struct features *f, bool keep_kernel);

/* ---- stat_sibling.c: FILE.stat, the counter totals beside an autoprof profile ---- */

/* ---- run_files.c: the files of a run written one per process image ---- */

/* Feature @bit of @pf (file mode): its @len bytes, or NULL when absent or outside the file. */
const u8 *run_files__feature(const struct perf_file *pf, int bit, u64 *len);
/*
 * Where the file @path starts: the earliest time among its first records
 * (CLOCK_MONOTONIC for autoprof's files) into *@mono, in real time by its
 * CLOCK_DATA into *@real (0: no CLOCK_DATA), its first record's process into
 * *@pid. Returns false (all 0) when the file cannot be read or has no time.
 */
bool run_files__start(const char *path, u64 *mono, u64 *real, u32 *pid);
/*
 * The siblings of the run's first file @path: PATH.PID and PATH.PID.N
 * written while its run went on, sorted by name, into *@out (*@nr paths to
 * free with run_files__free()). A sibling written before the run started is
 * an earlier run's: one warning line on @warn (prefixed "@prog: ") and left
 * out. Nothing when @path is itself a descendant's file (PATH ends in .PID of
 * its process) or standard input. Returns 0 or -ENOMEM.
 */
int run_files__find(const char *path, char ***out, size_t *nr, FILE *warn, const char *prog);
void run_files__free(char **paths, size_t nr);

/* ---- listing.c: autoprof-report --list ---- */

/* With @strict, a file read only in part (or not at all) makes the status 1. */
int listing__print(const char *const *paths, size_t nr, FILE *out, bool strict);
/*
 * The perf.data files directly inside directory @dir (regular files with a
 * perf magic, names not starting with '.'), sorted by name, as malloc'd
 * paths appended to *@v (*@nr of them, room for *@cap). Returns 0 or -errno.
 */
int listing__dir(const char *dir, char ***v, size_t *nr, size_t *cap);

/* ---- evname.c ---- */

char *evname__from_attr(const struct perf_event_attr *attr);
const char *evname__record_type(u32 type);

/* ---- memory_names.c ---- */
/* The objects event derived from memory event @ev (alloc-bytes, live-bytes), or NULL. */
const char *memory_names__objects_of(const char *ev);
/* Is @ev an objects event the reader derives (alloc-objects, live-objects)? */
bool memory_names__derived(const char *ev);
/* Is @ev one of the memory events, in bytes (alloc-bytes, live-bytes)? */
bool memory_names__in_bytes(const char *ev);
/* pprof's name of memory event @ev (bytes or objects), its unit in *@unit; NULL for others. */
const char *memory_names__pprof_name(const char *ev, const char **unit);
/* "Bytes" or "Objects", the text views' column of memory event @ev, or NULL for others. */
const char *memory_names__column(const char *ev);

/* ---- event_units.c ---- */
/* Is @ev's period wall-clock nanoseconds, a record one wait (offcpu-time)? */
bool event_units__wall(const char *ev);
/* Is @ev a CPU clock (cpu-clock, task-clock: its period is ns of CPU time)? */
bool event_units__cpu_clock(const char *ev);
/* The unit of @ev's period: "nanoseconds", "bytes", pprof's memory units, or "count". */
const char *event_units__period_unit(const char *ev);

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
	u64 addr;	      /* PERF_SAMPLE_ADDR's word, 0 without one */
	u64 nr_chain;	      /* callchain entries */
	const u8 *chain;      /* nr_chain unaligned u64s inside the mapped file */
	const u8 *rest, *end; /* the fields after CALLCHAIN, for sample__user_stack() */
	bool has_ip, has_tid, has_time, has_cpu;
};

int sample__parse(const struct perf_file *pf, const struct record *r, struct sample *s);
/* The user registers and stack of a --call-graph dwarf sample. */
struct user_stack {
	u64 abi, mask;	 /* PERF_SAMPLE_REGS_ABI_*, attr.sample_regs_user */
	const u8 *regs;	 /* popcount(mask) unaligned u64s, by perf register number */
	const u8 *stack; /* size bytes from the user stack pointer up */
	u64 size;
};

int sample__user_stack(const struct perf_file *pf, const struct sample *s, struct user_stack *u);
/*
 * The branch stack of sample @s (PERF_SAMPLE_BRANCH_STACK): *@nr entries of
 * 24 bytes (from, to, flags: unaligned u64s) at *@entries, inside the mapped
 * file. Returns 0, -ENOENT without one, or -EINVAL if the record is too short.
 */
int sample__branch_stack(const struct perf_file *pf, const struct sample *s, const u8 **entries,
			 u64 *nr);
int sample__id_parse(const struct perf_file *pf, const struct record *r, size_t fixed,
		     struct sample *s, size_t *body_end);

size_t sample__fixed_size(u32 type);
/*
 * True if MMAP2 record @r has the layout of kernels 3.12-3.15 (RHEL 7's
 * 3.10 too): no prot and flags words, the file name at offset 64, not 72.
 */
bool sample__mmap2_old_layout(const struct record *r);
bool sample__record_ids(const struct perf_file *pf, const struct record *r, struct sample *id,
			size_t *body_end);

/* Where a record is, with its time: the order side-band records and the CSV overview use. */
struct rec_pos {
	u64 time;
	u64 off;
	u32 file;
	u32 has_time;
};

int rec_pos__cmp(const void *a, const void *b); /* time, then file, then offset */

/*
 * A visitor of the session's one walk over every record (pass 1): called for
 * each record in file order with its sample-id fields, or @id NULL when it
 * has none. Returns 0 or -errno (stops the session).
 */
typedef int (*record_visitor)(void *arg, u32 file, const struct record *r, const struct sample *id);

static inline u64 sample__chain(const struct sample *s, u64 i)
{
	return ld64(s->chain + i * 8);
}

/* True if the file @path starts with a perf.data magic (file or pipe mode, any version). */
bool perf_file__has_magic(const char *path);

#endif
