/* SPDX-License-Identifier: MIT */
/*
 * view.h - the outputs (report/view/):
 *   output.c      the default text report (header, counters, tables)
 *   hot_lines.c   --hot-lines: the source lines with the most samples
 *   escape.c      names made safe for XML, JSON and CSV
 *   render_*.c    one file per other view or export: tree, folded stacks,
 *                 flame graph (SVG), JSON, CSV (readperf's tables), diff,
 *                 pprof (with proto.c, the protobuf writer), speedscope;
 *                 json_lines.c: the hot source lines of --json
 * The last stage: shows a finished session (driver/session.h, with the
 * stages' results it holds); the driver's private parts it never sees.
 */
#ifndef AUTOPROF_REPORT_VIEW_H
#define AUTOPROF_REPORT_VIEW_H

#include <stdio.h>

#include "aggregate/aggregate.h"
#include "driver/session.h"
#include "model/model.h"
#include "read/read.h"
#include "util/util.h"

/* ---- output.c and render_*.c ---- */

/* --flamegraph's options (render_flame.c). */
enum { FLAME_ROOT_AUTO, FLAME_ROOT_COMM, FLAME_ROOT_PID, FLAME_ROOT_NONE };

struct flame_opts {
	const char *title;   /* NULL: "Flame Graph", "Icicle Graph" or "Differential ..." */
	const char *palette; /* flamegraph.pl's --colors name; NULL: hot */
	unsigned width;	     /* pixels; 0: 1200 */
	double min_width;    /* frames narrower than this many pixels are left out */
	double min_pct;	     /* ... or than this % of all samples, when > 0 */
	bool icicle;	     /* root at the top */
	bool raw_counts;     /* --diff: compare sample counts, not shares */
	int root;	     /* FLAME_ROOT_*: a node per command or process under "all" */
};

struct report_opts {
	unsigned top;
	bool children;
	bool lines;	   /* a source column for functions */
	bool callers;	   /* --tree shows callers instead of callees */
	double min_pct;	   /* --tree: hide branches below this share */
	const char *event; /* the event the views use; NULL: the first with samples */
	struct sort_spec sort;
	const struct aim *aim; /* the stack filter: -S limits the top table's rows */
	bool no_fold;	       /* --no-fold-recursion: tree views keep the raw chain */
	unsigned hot_lines;    /* --hot-lines N: the N hottest source lines per function */
	struct flame_opts flame;
};

/* Text-safe output of a string from the file (output.c, escape.c). */
void output__print_clean(FILE *out, const char *str);
void escape__xml(FILE *out, const char *str);
void escape__json(FILE *out, const char *str);
void escape__csv(FILE *out, const char *str);
void output__func_source(struct session *s, u32 fid, char *buf, size_t len);
double output__pct_of(u64 part, u64 whole);
/* What event @ev's count counts: "samples", or in an aggregated file "merged records" for the
 * events whose records merge by stack without a count of samples (memory, off-CPU). */
const char *output__count_noun(const struct session *s, const char *ev);

void output__print(struct session *s, const struct report_opts *o, FILE *out);
void output__print_header(const struct session *s, FILE *out);
/* The line of the memory profile's bytes allocated before it started, when there are some. */
void output__print_memory_before(const struct session *s, FILE *out);
void output__print_counters(const struct session *s, FILE *out);
int render_tree(struct session *s, const struct report_opts *o, FILE *out);
int hot_lines__print(struct session *s, int hist, const struct report_opts *o, FILE *out);
int render_folded(struct session *s, const struct report_opts *o, FILE *out);
int render_leaks(struct session *s, const struct report_opts *o, FILE *out);
int render_flame(struct session *s, const struct report_opts *o, FILE *out);
int render_flame__diff(struct session *base, struct session *new, const struct report_opts *o,
		       FILE *out);
/* flamegraph.pl's palette names, for --colors (flame_palette.c). */
bool flame_palette__valid(const char *name);
extern const char flame_palette_names[];
int render_json(struct session *s, const struct report_opts *o, FILE *out);
int render_pprof(struct session *s, const struct report_opts *o, FILE *out);
int render_speedscope(struct session *s, const struct report_opts *o, FILE *out);
/* render_csv's overview: an index of every record, built by visiting pass 1. */
struct csv_overview {
	struct rec_pos *v;
	size_t nr, cap;
};

int render_csv__overview_visit(void *arg, u32 file, const struct record *r,
			       const struct sample *id);
void render_csv__overview_attach(struct session_opts *so, struct csv_overview *ov);
void render_csv__overview_exit(struct csv_overview *ov);
int render_csv(struct session *s, const struct report_opts *o, const char *dir, char *err,
	       size_t err_len);
int render_diff(struct session *a, struct session *b, const struct report_opts *o, FILE *out);

#endif /* AUTOPROF_REPORT_VIEW_H */
