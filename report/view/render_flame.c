// SPDX-License-Identifier: MIT
/*
 * render_flame.c - --flamegraph FILE.svg: a self-contained interactive flame
 * graph, or icicle graph (--icicle: root at the top), or differential flame
 * graph (--diff: the new profile's shape, red where it grew, blue where it
 * shrank). Each frame is a <g> with a <title> tooltip (samples, percentage,
 * and the baseline and change in a diff), a <rect> whose width is proportional
 * to its samples and a label (written here and refitted by the script, so
 * an <img> of the file is readable too). The script (flame_script.c) zooms,
 * searches and keeps the controls in view. No external resources, and the
 * same input always gives the same bytes.
 */
#include "flame.h"

#include <errno.h>
#include <stdlib.h>

#define DEFAULT_WIDTH 1200
#define SVG_PAD	      10 /* the script's PAD */
#define FRAME_HEIGHT  16
#define TOP_SPACE     52 /* title, subtitle and buttons */
#define BOTTOM_SPACE  30 /* details line */
#define CHAR_WIDTH    7	 /* the script's label fitting: 12px Verdana */
#define NONE	      UINT32_MAX

struct layout {
	const struct flame *f;
	const struct flame_opts *fo;
	const char *unit; /* what the counts are: samples, or a memory event's bytes or objects */
	bool wall;	  /* ... or ns of wall-clock time (offcpu-time), shown in seconds */
	double px;	  /* pixels per sample */
	double min_px;	  /* narrower frames are left out */
	double scale;	  /* baseline samples -> new samples (diff) */
	double max_delta; /* the largest |change| of a shown frame, in new samples */
	const char *palette;
	u32 max_depth;
	int width, height;
	bool diff;
};

static bool shown(const struct layout *l, u32 i)
{
	return l->f->v[i].n[1] && (double)l->f->v[i].n[1] * l->px >= l->min_px;
}

static double delta(const struct layout *l, u32 i)
{
	return (double)l->f->v[i].n[1] - (double)l->f->v[i].n[0] * l->scale;
}

/* The next node of a pre-order walk that skips the children of @skip_children nodes. */
static u32 walk_next(const struct flame *f, u32 i, bool skip_children)
{
	if (!skip_children && f->v[i].child != NONE)
		return f->v[i].child;
	while (i && f->v[i].next == NONE)
		i = f->v[i].parent;
	return i ? f->v[i].next : NONE;
}

/*
 * True if @f has kernel or JIT frames: the default palette then draws user
 * code red, as flamegraph.pl --colors java draws a mixed-mode graph, so the
 * orange kernel and green JIT frames stand out from it.
 */
static bool mixed(const struct flame *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++) {
		if (f->v[i].kind == FK_KERNEL || f->v[i].kind == FK_JIT)
			return true;
	}
	return false;
}

/* Starts, depths, the deepest shown frame and the largest change. */
static void lay_out(struct flame *f, struct layout *l)
{
	u32 i = 0;

	f->v[0].start = 0;
	f->v[0].depth = 0;
	l->max_depth = 0;
	l->max_delta = 0;
	while (i != NONE) {
		struct flame_node *n = &f->v[i];
		bool wide = shown(l, i);
		u64 at = n->start;
		u32 c;

		if (wide && n->depth > l->max_depth)
			l->max_depth = n->depth;
		if (wide && i && l->diff) {
			double d = delta(l, i) < 0 ? -delta(l, i) : delta(l, i);

			if (d > l->max_delta)
				l->max_delta = d;
		}
		for (c = n->child; wide && c != NONE; c = f->v[c].next) {
			f->v[c].start = at;
			f->v[c].depth = n->depth + 1;
			at += f->v[c].n[1];
		}
		i = walk_next(f, i, !wide);
	}
}

/* The label that fits @w pixels, as the script's fit() makes it. */
static void put_label(FILE *out, const char *name, size_t len, double w)
{
	int n = (int)((w - 6) / CHAR_WIDTH);
	char buf[1024];

	if (n < 3)
		return;
	if (len > sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	if ((size_t)n >= len) {
		snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
	} else {
		char whole[1024];

		/* Cut inside template arguments and parameters first, as the tables do. */
		snprintf(whole, sizeof(whole), "%.*s", (int)len, name);
		cxxname__fit(whole, buf, (size_t)n + 1);
		if (strlen(buf) > (size_t)n)
			snprintf(buf, sizeof(buf), "%.*s..", n - 2, whole);
	}
	escape__xml(out, buf);
}

static void put_tooltip(FILE *out, const struct layout *l, u32 i, const char *name, size_t len)
{
	const struct flame *f = l->f;
	const struct flame_node *n = &f->v[i];
	const char *obj = flame_tree__object(f, i);
	char buf[1024];

	snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
	escape__xml(out, buf);
	if (n->kind != FK_ROOT && n->kind != FK_PROC && obj[0]) {
		fprintf(out, obj[0] == '[' ? " " : " [");
		escape__xml(out, obj);
		fprintf(out, obj[0] == '[' ? "" : "]");
	}
	if (l->wall)
		fprintf(out, " (%.3f s, %.2f%%", (double)n->n[1] / 1e9,
			output__pct_of(n->n[1], f->v[0].n[1]));
	else
		fprintf(out, " (%llu %s, %.2f%%", (unsigned long long)n->n[1], l->unit,
			output__pct_of(n->n[1], f->v[0].n[1]));
	if (l->diff) {
		double d = delta(l, i), pts = d * 100.0 / (double)f->v[0].n[1];

		fprintf(out, "; baseline %llu %s, %.2f%%; ", (unsigned long long)n->n[0], l->unit,
			output__pct_of(n->n[0], f->v[0].n[0]));
		if (l->fo->raw_counts)
			fprintf(out, "%s %+.0f samples",
				d > 0	? "grew"
				: d < 0 ? "shrank"
					: "changed",
				d);
		else
			fprintf(out, "%s %+.2f points",
				pts > 0	  ? "grew"
				: pts < 0 ? "shrank"
					  : "changed",
				pts);
	}
	fprintf(out, ")");
}

static void put_frame(FILE *out, const struct layout *l, u32 i)
{
	const struct flame_node *n = &l->f->v[i];
	double x = SVG_PAD + (double)n->start * l->px, w = (double)n->n[1] * l->px;
	int y = l->fo->icicle ? TOP_SPACE + (int)n->depth * FRAME_HEIGHT
			      : l->height - BOTTOM_SPACE - (int)(n->depth + 1) * FRAME_HEIGHT;
	size_t len;
	const char *name = flame_tree__name(l->f, i, &len);
	char fill[32], buf[1024];

	if (l->diff && i)
		flame_palette__diff_colour(delta(l, i), l->max_delta, fill, sizeof(fill));
	else
		flame_palette__colour(l->palette, name, len, n->kind, fill, sizeof(fill));
	snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
	fprintf(out, "<g data-s=\"%llu\" data-n=\"%llu\" data-d=\"%u\" data-name=\"",
		(unsigned long long)n->start, (unsigned long long)n->n[1], n->depth);
	escape__xml(out, buf);
	fprintf(out, "\"><title>");
	put_tooltip(out, l, i, name, len);
	fprintf(out,
		"</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		"data-fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		x, y, w, FRAME_HEIGHT - 1, fill, fill, x + 3, y + FRAME_HEIGHT - 5);
	put_label(out, name, len, w);
	fprintf(out, "</text></g>\n");
}

/* The document up to the frames: size, layout attributes, style and script. */
static void put_head(FILE *out, const struct layout *l)
{
	const struct flame_opts *fo = l->fo;
	int w = l->width, h = l->height;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" ");
	fprintf(out,
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" data-total=\"%llu\" "
		"data-top=\"%d\" data-bottom=\"%d\"%s onload=\"init(evt)\">\n",
		w, h, w, h, (unsigned long long)l->f->v[0].n[1], TOP_SPACE, BOTTOM_SPACE,
		fo->icicle ? " data-icicle=\"1\"" : "");
	fprintf(out, "<style type=\"text/css\">\n"
		     "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		     "#title { font-size: 17px; }\n"
		     "#subtitle { fill: #555; }\n"
		     "#frames rect { stroke: none; }\n"
		     "#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
		     "#frames g { cursor: pointer; }\n"
		     ".hide { display: none; }\n"
		     ".parent { opacity: 0.5; }\n"
		     "#unzoom, #search { cursor: pointer; }\n"
		     "</style>\n");
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", flame_script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f8\"/>\n", w, h);
	fprintf(out, "<g id=\"frames\">\n");
}

/* After the frames, so they stay on top: title, buttons, details line. */
static void put_controls(FILE *out, const struct layout *l, const char *title, const char *event,
			 u64 base_samples)
{
	int w = l->width, h = l->height;

	fprintf(out,
		"</g>\n<g id=\"header\"><rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		"fill=\"#f8f8f8\" fill-opacity=\"0.92\"/>\n",
		w, TOP_SPACE - 4);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", w / 2);
	escape__xml(out, title);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"42\" text-anchor=\"middle\">",
		w / 2);
	escape__xml(out, event);
	if (l->wall)
		fprintf(out, ", %.3f s", (double)l->f->v[0].n[1] / 1e9);
	else
		fprintf(out, ", %llu %s", (unsigned long long)l->f->v[0].n[1], l->unit);
	if (l->diff)
		fprintf(out, " (baseline %llu); red grew, blue shrank%s",
			(unsigned long long)base_samples,
			l->fo->raw_counts ? " (sample counts)" : " (shares of all samples)");
	fprintf(out,
		"</text>\n<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n",
		SVG_PAD);
	fprintf(out,
		"<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text></g>\n",
		w - SVG_PAD);
	fprintf(out,
		"<g id=\"footer\"><rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"#f8f8f8\" fill-opacity=\"0.92\"/>\n",
		h - BOTTOM_SPACE + 4, w, BOTTOM_SPACE - 4);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", SVG_PAD, h - 10);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text></g>\n",
		w - SVG_PAD, h - 10);
	fprintf(out, "</svg>\n");
}

static void put_svg(struct flame *f, const struct flame_opts *fo, bool diff, const char *event,
		    FILE *out)
{
	struct layout l = {.f = f, .fo = fo, .diff = diff, .scale = 1, .unit = "samples"};
	const char *title;
	u32 i;

	if (memory_names__column(event)) /* weighed by bytes or objects (flame_tree.c) */
		l.unit = memory_names__in_bytes(event) ? "bytes" : "objects";
	l.wall = event_units__wall(event);
	if (l.wall)
		l.unit = "ns";
	l.width = fo->width ? (int)fo->width : DEFAULT_WIDTH;
	l.px = f->v[0].n[1] ? (double)(l.width - 2 * SVG_PAD) / (double)f->v[0].n[1] : 0;
	l.min_px = fo->min_width;
	if (fo->min_pct > 0 && fo->min_pct * (l.width - 2 * SVG_PAD) / 100 > l.min_px)
		l.min_px = fo->min_pct * (l.width - 2 * SVG_PAD) / 100;
	if (diff && !fo->raw_counts && f->v[0].n[0])
		l.scale = (double)f->v[0].n[1] / (double)f->v[0].n[0];
	lay_out(f, &l);
	l.palette = fo->palette ? fo->palette : mixed(f) ? "red" : "hot";
	l.height = TOP_SPACE + BOTTOM_SPACE + (int)(l.max_depth + 1) * FRAME_HEIGHT;
	title = fo->title    ? fo->title
		: diff	     ? "Differential Flame Graph"
		: fo->icicle ? "Icicle Graph"
			     : "Flame Graph";
	put_head(out, &l);
	for (i = 0; i != NONE; i = walk_next(f, i, !shown(&l, i))) {
		if (shown(&l, i))
			put_frame(out, &l, i);
	}
	put_controls(out, &l, title, event, f->v[0].n[0]);
}

/*
 * The graph of a profile with no samples to draw (@event NULL: no sampled
 * event at all): the title and a line saying so, so that the file opened
 * later explains itself. Returns -ENODATA, which the caller says too.
 */
static int put_empty(const struct flame_opts *fo, const char *event, FILE *out)
{
	struct flame_node root = {0};
	struct flame f = {.v = &root, .nr = 1};
	struct layout l = {.f = &f, .fo = fo, .width = fo->width ? (int)fo->width : DEFAULT_WIDTH};

	l.height = TOP_SPACE + BOTTOM_SPACE + 2 * FRAME_HEIGHT;
	put_head(out, &l);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", l.width / 2,
		TOP_SPACE + FRAME_HEIGHT);
	if (event) {
		fprintf(out, "No samples of ");
		escape__xml(out, event);
	} else {
		fprintf(out, "No sampled event (a file of counters only)");
	}
	fprintf(out, " in the profile: nothing to draw</text>\n");
	put_controls(out, &l, fo->title ? fo->title : "Flame Graph", event ? event : "no event", 0);
	return -ENODATA;
}

/* The event's histogram in @s, or -1 when it has no samples of it. */
static int pick_hist(const struct session *s, const char *event)
{
	int hist = session__main_hist(s, event);

	if (!s->hists.nr || hist < 0 || (size_t)hist >= s->hists.nr)
		return -1;
	return hist;
}

static int root_mode(const struct flame_opts *fo, size_t procs)
{
	if (fo->root != FLAME_ROOT_AUTO)
		return fo->root;
	return procs > 1 ? FLAME_ROOT_COMM : FLAME_ROOT_NONE;
}

/*
 * Write the main event's flame graph as SVG to @out. Returns 0, -ENOMEM, or
 * -ENODATA after writing a graph that says the profile has no samples.
 */
int render_flame(struct session *s, const struct report_opts *o, FILE *out)
{
	int hist = pick_hist(s, o->event), err;
	struct flame f = {0};

	if (hist < 0)
		return put_empty(&o->flame, NULL, out);
	err =
	    flame_tree__add(&f, s, hist, 1, root_mode(&o->flame, flame_tree__count_procs(s, hist)));
	if (!err)
		err = flame_tree__sort(&f);
	if (!err && !f.v[0].n[1])
		err = put_empty(&o->flame, s->hists.v[hist].event, out);
	else if (!err)
		put_svg(&f, &o->flame, false, s->hists.v[hist].event, out);
	flame_tree__exit(&f);
	return err;
}

/*
 * Write the differential flame graph of @base -> @new as SVG to @out: the
 * new profile's frames, coloured by how their share of all samples changed.
 * Returns 0, -ENOMEM or -ENODATA (no samples in the new profile, as
 * render_flame()).
 */
int render_flame__diff(struct session *base, struct session *new, const struct report_opts *o,
		       FILE *out)
{
	int ha = pick_hist(base, o->event), hb = pick_hist(new, o->event), err = 0, root;
	struct flame f = {0};
	size_t procs;

	if (hb < 0)
		return put_empty(&o->flame, NULL, out);
	procs = flame_tree__count_procs(new, hb);
	if (ha >= 0 && flame_tree__count_procs(base, ha) > procs)
		procs = flame_tree__count_procs(base, ha);
	root = root_mode(&o->flame, procs);
	if (ha >= 0)
		err = flame_tree__add(&f, base, ha, 0, root);
	if (!err)
		err = flame_tree__add(&f, new, hb, 1, root);
	if (!err)
		err = flame_tree__sort(&f);
	if (!err && !f.v[0].n[1])
		err = put_empty(&o->flame, new->hists.v[hb].event, out);
	else if (!err)
		put_svg(&f, &o->flame, true, new->hists.v[hb].event, out);
	flame_tree__exit(&f);
	return err;
}
