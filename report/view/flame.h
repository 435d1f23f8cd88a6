/* SPDX-License-Identifier: MIT */
/*
 * flame.h - the flame graph's own parts (report/view/, private to it):
 *   flame_tree.c     frames merged by name from one or two sessions (the
 *                    baseline and the new side of a differential graph),
 *                    with a node per command when processes are merged
 *   flame_palette.c  flamegraph.pl's palettes, the colours of kernel, JIT and
 *                    process frames, and the red/blue scale of a diff
 *   flame_script.c   the SVG's script: zoom, search, scrolling
 *   render_flame.c   the SVG: layout, frames, title and controls
 */
#ifndef AUTOPROF_REPORT_FLAME_H
#define AUTOPROF_REPORT_FLAME_H

#include "view/view.h"

enum flame_kind { FK_ROOT, FK_PROC, FK_USER, FK_KERNEL, FK_JIT, FK_UNKNOWN };

/* One frame: a function called from its parent frame, or a process node. */
struct flame_node {
	u32 parent, child, next; /* UINT32_MAX: none */
	u32 key;		 /* "name\tobject" in flame.names */
	u8 kind;		 /* enum flame_kind */
	u64 n[2];  /* samples here and below: [0] baseline, [1] new (or the only side) */
	u64 start; /* layout: first sample, in n[1] units */
	u32 depth;
};

struct flame {
	struct flame_node *v; /* v[0] is the root, "all" */
	size_t nr, cap;
	struct kvmap idx; /* (parent, key) -> node */
	struct strset names;
	size_t nr_procs[2]; /* processes with samples, per side */
};

/*
 * Add the samples of @s's event @hist to side @side (0 baseline, 1 new) of
 * @f, under a node per command (@root FLAME_ROOT_COMM), per process
 * (FLAME_ROOT_PID) or none. @f starts zeroed. Returns 0 or -ENOMEM.
 */
int flame_tree__add(struct flame *f, const struct session *s, int hist, int side, int root);
/* Processes (pids) with samples of event @hist in @s. */
size_t flame_tree__count_procs(const struct session *s, int hist);
/* Relink every node's children in name order (FlameGraph's order). */
int flame_tree__sort(struct flame *f);
/* The name and the object of node @i (the object may be ""). */
const char *flame_tree__name(const struct flame *f, u32 i, size_t *len);
const char *flame_tree__object(const struct flame *f, u32 i);
void flame_tree__exit(struct flame *f);

/* A frame's fill colour "rgb(r,g,b)" from palette @palette for its name and kind. */
void flame_palette__colour(const char *palette, const char *name, size_t len, enum flame_kind kind,
			   char *buf, size_t buflen);
/* The diff colour: red for @delta > 0, blue below, near-white at 0, deeper up to |@delta| = @max.
 */
void flame_palette__diff_colour(double delta, double max, char *buf, size_t buflen);

/* The script every flame graph embeds (flame_script.c). */
extern const char flame_script[];

#endif /* AUTOPROF_REPORT_FLAME_H */
