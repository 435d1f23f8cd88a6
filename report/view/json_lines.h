/* SPDX-License-Identifier: MIT */
/*
 * json_lines.h - the hot source lines of each function for --json
 * (json_lines.c): self samples per (function, file:line) of one event, from
 * the stacks' leaf addresses. Used by render_json.c only.
 */
#ifndef AUTOPROF_REPORT_JSON_LINES_H
#define AUTOPROF_REPORT_JSON_LINES_H

#include "view/view.h"

struct json_line {
	u32 fid, src; /* function, source line (string id of names) */
	u64 samples, period;
};

struct json_lines {
	struct json_line *v; /* by function, then samples (most first) */
	size_t nr, cap;
	struct strset names;
	struct kvmap idx; /* (fid, src) -> index into v, while building */
	u32 *first;	  /* function id -> first index into v, UINT32_MAX: none */
	size_t nr_funcs;
};

/* Gather event @hist's lines; nothing when the stacks do not keep addresses. 0 or -ENOMEM. */
int json_lines__build(struct json_lines *jl, struct session *s, int hist);
/* Print ', "lines": [...]' for function @fid (nothing when it has none). */
void json_lines__put(const struct json_lines *jl, u32 fid, FILE *out);
void json_lines__exit(struct json_lines *jl);

#endif /* AUTOPROF_REPORT_JSON_LINES_H */
