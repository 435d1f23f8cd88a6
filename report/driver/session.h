/* SPDX-License-Identifier: MIT */
/*
 * session.h - a report's session (report/driver/): the files read, and what
 * the stages made of them (the machine, the hists, the counters, the
 * totals and warnings). The driver calls the stages in order, read ->
 * model -> aggregate; the views (view/view.h) show a finished session.
 * Only main.c prints diagnostics or exits; everything else returns 0/-errno
 * and leaves a message in the object it worked on.
 */
#ifndef AUTOPROF_REPORT_DRIVER_SESSION_H
#define AUTOPROF_REPORT_DRIVER_SESSION_H

#include <stdio.h>

#include "aggregate/aggregate.h"
#include "model/model.h"
#include "read/read.h"
#include "util/util.h"

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

/* The side-band records to apply in time order. */
struct sides {
	struct rec_pos *v;
	size_t nr, cap;
	/* with many files: (hash, size) of each record kept -> its index in v */
	struct kvmap kept;
	/*
	 * With many files (copy set before pass 1): the records themselves, v[].off
	 * their place here, so applying them reads no file again (a day of windows
	 * would map each window's pages once more for its COMMs).
	 */
	bool copy;
	u8 *bytes;
	size_t nr_bytes, cap_bytes;
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
	/* an event's records merge samples (merged_counts.c): so may offcpu-time's merge waits */
	bool merged;
	/* the records' bytes of all files as stored, and how many of them were read */
	u64 data_bytes, read_bytes;
	u64 unknown_id, bad_samples, bad_records, unknown_records, nr_records;
	u64 type_counts[PERF_RECORD_LAST_KNOWN];
	bool branch_noted, read_noted; /* the warnings about branch stacks and group reads given */
	u64 guest_samples;	       /* perf kvm: not resolved */
	u64 memory_zero;    /* memory records of period 0 (live sets retired, empty): skipped */
	bool memory_merged; /* an alloc-bytes record of address 0: merged (AUTOPROF_AGGREGATE) */
	u64 memory_before;  /* bytes allocated before the memory profile started (not in it) */
	u64 memory_unseen;  /* anonymous memory the allocator's wrappers did not see (not in it) */
	u64 aux_records, aux_bytes, aux_truncated; /* AUX-area traces: not decoded */
	u32 unknown_types[4]; /* first few unknown record types, for the warning */
	u64 first_time, last_time;
	u64 nr_procs_seen, nr_threads_seen;
	char *warnings[MAX_WARNINGS];
	size_t nr_warnings, dropped_warnings;
	char err[320];
	struct kvmap stats_read; /* (dev, inode) of the stat files counted (stat_sibling.c) */
	/*
	 * Many files (session__reserve() for more than one): pass 1 of each file
	 * as it is added (its pages are mapped then), into sides; nr_scanned: the
	 * files done so.
	 */
	bool many;
	struct sides sides;
	size_t nr_scanned;
};

/* merged_counts.c: the samples an aggregated file's records stand for. */
/* The period of one sample of @a: its fixed period, or 1 s / freq for the CPU clocks; else 0. */
u64 merged_counts__sample_period(const struct perf_event_attr *a);
/*
 * Each merged event's (thread, stack) entries count the samples they stand
 * for, not records, and so do its and the threads' totals (see the file).
 * Called once the samples are in, before hists__finish().
 */
void merged_counts__apply(struct session *s);

int session__init(struct session *s);
/*
 * Make room for @nr files in all (a day of windows: one allocation, no
 * copies); with more than one, each is scanned as it is added (pass 1).
 * Returns 0 or -ENOMEM.
 */
int session__reserve(struct session *s, size_t nr);
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

#endif /* AUTOPROF_REPORT_DRIVER_SESSION_H */
