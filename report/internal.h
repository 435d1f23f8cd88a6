/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private types of autoprof-report.
 *
 * The reader is a pipeline, one folder per stage, each with its header:
 *   read/       read.h: files, streams, features, the typed record decoder
 *   model/      model.h: machine (processes, maps), dsos, symbols, kallsyms,
 *               demangling, source lines, JIT maps, the dwarf unwinder
 *   aggregate/  aggregate.h: resolution, call stacks, counters, sort, trees
 *   view/       view.h: the text report and every other output
 *   util/       util.h: kvmap, strset, the growable-array helper
 * This header holds what all stages share: the basic types and the session
 * (read/session.c), the two passes over all files that drive the stages.
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

/* ---- util/: kvmap, strset, array ---- */

#include "util/util.h"

/* ---- read/: perf_file.c, stream.c, features.c, evname.c, sample.c ---- */

#include "read/read.h"

/* ---- model/: machine, dso, symbols, demangle, srcline, kallsyms, JIT maps ---- */

#include "model/model.h"

/* ---- aggregate/: resolution, stacks, counters, sort, call trees ---- */

#include "aggregate/aggregate.h"

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
	bool cpus;    /* keep the CPU of every sample (--sort cpu) */
	struct filter filter;
	/* --focus, --peek, --hide, --ignore, -S (aggregate/aim.c); or NULL */
	const struct aim *aim;
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
	/*
	 * The samples lost: per file, the larger of its LOST and its LOST_SAMPLES
	 * totals (perf 6.x writes both for the same losses), summed over files.
	 */
	u64 lost_total;
	/*
	 * The samples the records stand for when a record merges several (an
	 * aggregated file: fixed-period events whose records' periods add up to
	 * more than one period each), else nr_samples.
	 */
	u64 stands_for;
	/* the records' bytes of all files as stored, and how many of them were read */
	u64 data_bytes, read_bytes;
	u64 unknown_id, bad_samples, bad_records, unknown_records, nr_records;
	u64 type_counts[PERF_RECORD_LAST_KNOWN];
	bool branch_noted, read_noted; /* the warnings about branch stacks and group reads given */
	u64 guest_samples;	       /* perf kvm: not resolved */
	u64 aux_records, aux_bytes, aux_truncated; /* AUX-area traces: not decoded */
	u32 unknown_types[4]; /* first few unknown record types, for the warning */
	u64 first_time, last_time;
	u64 nr_procs_seen, nr_threads_seen;
	char *warnings[MAX_WARNINGS];
	size_t nr_warnings, dropped_warnings;
	char err[320];
	struct kvmap stats_read; /* (dev, inode) of the stat files counted (stat_sibling.c) */
};

int session__init(struct session *s);
int session__add_file(struct session *s, const char *path);
int session__add_buffer(struct session *s, const char *name, const void *buf, size_t len);
int session__process(struct session *s);
void session__warn(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void session__exit(struct session *s);
int session__main_hist(const struct session *s, const char *event);
/* True if the report is not of the whole input: records unread or skipped (the warnings). */
bool session__incomplete(const struct session *s);
/* Print the header lines saying what was not read, as "Warning:" lines (none if complete). */
void session__print_gaps(const struct session *s, FILE *out);

/* ---- view/: the text report and every other output ---- */

#include "view/view.h"

#endif /* AUTOPROF_REPORT_INTERNAL_H */
