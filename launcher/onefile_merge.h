/* SPDX-License-Identifier: MIT */
/*
 * onefile_merge.h - what onefile_merge.c (attrs, records) and
 * onefile_features.c (the feature sections) share while they write the
 * merged file. Built with -Ireport. Not async-signal-safe.
 */
#ifndef AUTOPROF_ONEFILE_MERGE_H
#define AUTOPROF_ONEFILE_MERGE_H

#include <stdio.h>

#include "onefile.h"
#include "read/read.h"

#define NAME_ALIGN 64 /* perf's do_write_string pads strings to this */
#define TRAILER_BITS                                                                               \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* One attr of the output and the ids it gathered. */
struct mattr {
	struct perf_event_attr attr;
	const char *name;
	u64 *ids;
	size_t nr_ids, cap_ids;
	bool periods_differ;	 /* its inputs' attrs had other periods (timers measure theirs) */
	u64 samples, period_sum; /* then the period written is the average of its samples' */
};

/* One input: its file, and how its ids map to the output's. */
struct input {
	struct perf_file pf;
	u64 (*map)[2]; /* its ids and their numbers in the output */
	size_t nr_map, cap_map;
	bool remap;
	u64 sample_type; /* of its first attr: the layout of every record's ids */
	size_t *attr_to; /* its attrs' indexes in the output's */
};

struct merge {
	struct input *in;
	size_t nr_in;
	struct mattr *attrs;
	size_t nr_attrs, cap_attrs;
	u64 next_id;
	struct rec_pos *idx;
	size_t nr_idx, cap_idx;
	FILE *out;
	u64 pos; /* bytes written */
	struct onefile_merged *res;
	char *why;
	size_t cap;
};

/* Append @n bytes to the output. Returns 0 or -EIO. */
int onefile_merge__put(struct merge *m, const void *p, size_t n);
/* Zeros up to the next multiple of 8 bytes. Returns 0 or -EIO. */
int onefile_merge__pad8(struct merge *m);
/*
 * The feature sections after the data (m->pos): the merged ones (CMDLINE
 * from @argv unless NULL, EVENT_DESC, BUILD_ID, SAMPLE_TIME) and the others
 * as the first input that has them gives them; sets @h's feature bits.
 * Returns 0 or -errno.
 */
int onefile_features__write(struct merge *m, struct perf_file_header *h, char *const *argv);

#endif
