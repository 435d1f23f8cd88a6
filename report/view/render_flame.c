// SPDX-License-Identifier: MIT
/*
 * render_flame.c - --flamegraph FILE.svg: a self-contained interactive flame
 * graph. Each frame is a <g> with a <title> tooltip (samples, percentage),
 * a <rect> whose width is proportional to its samples and a label; the
 * embedded script zooms on click, searches by regular expression (the
 * Search button or Ctrl-F) and resets with the Reset Zoom button or Escape.
 * No external resources, and the same input always gives the same bytes.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

#define SVG_WIDTH    1200
#define SVG_PAD	     10
#define FRAME_HEIGHT 16
#define TOP_SPACE    40 /* title and buttons */
#define BOTTOM_SPACE 30 /* details line */
#define MIN_WIDTH_PX 0.1

static const char script[] =
    "var svg, frames, details, matched, unzoombtn, total, W, PAD = 10;\n"
    "function init(evt) {\n"
    "  svg = document.documentElement;\n"
    "  frames = document.getElementById('frames');\n"
    "  details = document.getElementById('details').firstChild;\n"
    "  matched = document.getElementById('matched').firstChild;\n"
    "  unzoombtn = document.getElementById('unzoom');\n"
    "  total = parseFloat(svg.getAttribute('data-total'));\n"
    "  W = parseFloat(svg.getAttribute('width'));\n"
    "  var gs = frames.getElementsByTagName('g');\n"
    "  for (var i = 0; i < gs.length; i++) fit(gs[i]);\n"
    "  frames.addEventListener('click', function (e) { var g = frame_of(e.target); if (g) zoom(g); "
    "});\n"
    "  frames.addEventListener('mouseover', function (e) {\n"
    "    var g = frame_of(e.target);\n"
    "    if (g) details.nodeValue = g.getElementsByTagName('title')[0].textContent;\n"
    "  });\n"
    "  frames.addEventListener('mouseout', function () { details.nodeValue = ' '; });\n"
    "  unzoombtn.addEventListener('click', unzoom);\n"
    "  document.getElementById('search').addEventListener('click', search_prompt);\n"
    "  window.addEventListener('keydown', function (e) {\n"
    "    if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) { e.preventDefault(); "
    "search_prompt(); }\n"
    "    else if (e.key === 'Escape') { unzoom(); reset_search(); }\n"
    "  });\n"
    "}\n"
    "function frame_of(n) {\n"
    "  while (n && n !== frames) { if (n.tagName === 'g') return n; n = n.parentNode; }\n"
    "  return null;\n"
    "}\n"
    "function num(g, a) { return parseFloat(g.getAttribute(a)); }\n"
    "function place(g, x, w) {\n"
    "  var r = g.getElementsByTagName('rect')[0];\n"
    "  r.setAttribute('x', x.toFixed(2));\n"
    "  r.setAttribute('width', Math.max(w, 0).toFixed(2));\n"
    "  fit(g);\n"
    "}\n"
    "function fit(g) {\n"
    "  var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
    "  var name = g.getAttribute('data-name'), w = parseFloat(r.getAttribute('width'));\n"
    "  t.setAttribute('x', (parseFloat(r.getAttribute('x')) + 3).toFixed(2));\n"
    "  var n = Math.floor((w - 6) / 7);\n"
    "  if (n < 3) t.textContent = '';\n"
    "  else t.textContent = name.length <= n ? name : name.substring(0, n - 2) + '..';\n"
    "}\n"
    "function zoom(z) {\n"
    "  var zs = num(z, 'data-s'), zn = num(z, 'data-n'), zd = num(z, 'data-d');\n"
    "  var scale = (W - 2 * PAD) / zn, gs = frames.getElementsByTagName('g');\n"
    "  unzoombtn.setAttribute('class', '');\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], s = num(g, 'data-s'), n = num(g, 'data-n'), d = num(g, 'data-d');\n"
    "    if (d < zd && s <= zs && s + n >= zs + zn) {\n"
    "      g.setAttribute('class', 'parent'); place(g, PAD, W - 2 * PAD);\n"
    "    } else if (d >= zd && s >= zs && s + n <= zs + zn) {\n"
    "      g.setAttribute('class', ''); place(g, PAD + (s - zs) * scale, n * scale);\n"
    "    } else {\n"
    "      g.setAttribute('class', 'hide');\n"
    "    }\n"
    "  }\n"
    "}\n"
    "function unzoom() {\n"
    "  var gs = frames.getElementsByTagName('g'), scale = (W - 2 * PAD) / total;\n"
    "  unzoombtn.setAttribute('class', 'hide');\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    gs[i].setAttribute('class', '');\n"
    "    place(gs[i], PAD + num(gs[i], 'data-s') * scale, num(gs[i], 'data-n') * scale);\n"
    "  }\n"
    "}\n"
    "function reset_search() {\n"
    "  var gs = frames.getElementsByTagName('g');\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var r = gs[i].getElementsByTagName('rect')[0];\n"
    "    r.setAttribute('fill', r.getAttribute('data-fill'));\n"
    "  }\n"
    "  matched.nodeValue = ' ';\n"
    "}\n"
    "function search_prompt() {\n"
    "  var term = prompt('Search for a function (regular expression):', '');\n"
    "  if (term) search(term); else reset_search();\n"
    "}\n"
    "function search(term) {\n"
    "  var re, gs = frames.getElementsByTagName('g'), spans = [], sum = 0, end = -1;\n"
    "  try { re = new RegExp(term); } catch (e) { matched.nodeValue = 'bad expression'; return; }\n"
    "  reset_search();\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    if (!re.test(gs[i].getAttribute('data-name'))) continue;\n"
    "    gs[i].getElementsByTagName('rect')[0].setAttribute('fill', 'rgb(230,0,230)');\n"
    "    spans.push([num(gs[i], 'data-s'), num(gs[i], 'data-n')]);\n"
    "  }\n"
    "  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
    "  for (var j = 0; j < spans.length; j++) {\n"
    "    var s = spans[j][0], e = s + spans[j][1];\n"
    "    if (e <= end) continue;\n"
    "    sum += e - Math.max(s, end); end = e;\n"
    "  }\n"
    "  matched.nodeValue = 'Matched: ' + (100 * sum / total).toFixed(2) + '%';\n"
    "}\n";

/* A warm colour from a hash of the name; kernel frames orange, unknown grey. */
static void colour(const struct func *fn, char *buf, size_t len)
{
	u64 h = 0xcbf29ce484222325ULL;
	const char *p;
	unsigned v1, v2, v3;

	for (p = fn->name; *p; p++)
		h = (h ^ (u8)*p) * 0x100000001b3ULL;
	v1 = (unsigned)(h & 0xff);
	v2 = (unsigned)((h >> 8) & 0xff);
	v3 = (unsigned)((h >> 16) & 0xff);
	if (fn->obj == OBJ_KERNEL)
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + v1 % 36, 120 + v2 % 60, 20 + v3 % 40);
	else if (fn->obj == OBJ_UNKNOWN)
		snprintf(buf, len, "rgb(%u,%u,%u)", 170 + v1 % 30, 170 + v1 % 30, 170 + v1 % 30);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + v1 % 51, v2 * 230 / 255, v3 * 55 / 255);
}

struct layout {
	u64 *start; /* first sample of each node */
	u32 *depth;
	u32 max_depth;
	double px; /* pixels per sample */
};

/* Pre-order walk in name order computing start and depth; marks too-narrow nodes. */
static void lay_out(const struct ftree *t, struct layout *l)
{
	size_t i = 0;

	l->start[0] = 0;
	l->depth[0] = 0;
	l->max_depth = 0;
	while (i != UINT32_MAX) {
		const struct fnode *f = &t->v[i];
		bool wide = (double)f->samples * l->px >= MIN_WIDTH_PX;

		if (wide && l->depth[i] > l->max_depth)
			l->max_depth = l->depth[i];
		if (wide && f->child != UINT32_MAX) {
			l->start[f->child] = l->start[i];
			l->depth[f->child] = l->depth[i] + 1;
			i = f->child;
			continue;
		}
		while (i && t->v[i].next == UINT32_MAX)
			i = t->v[i].parent;
		if (!i)
			break;
		l->start[t->v[i].next] = l->start[i] + t->v[i].samples;
		l->depth[t->v[i].next] = l->depth[i];
		i = t->v[i].next;
	}
}

static void put_frame(const struct session *s, const struct ftree *t, const struct layout *l, u32 i,
		      const char *name, int height, FILE *out)
{
	const struct fnode *f = &t->v[i];
	const struct func *fn = &s->hists.res.funcs[f->fid];
	double x = SVG_PAD + (double)l->start[i] * l->px, w = (double)f->samples * l->px;
	int y = height - BOTTOM_SPACE - (int)(l->depth[i] + 1) * FRAME_HEIGHT;
	char fill[32];

	colour(fn, fill, sizeof(fill));
	if (!i)
		snprintf(fill, sizeof(fill), "rgb(220,220,220)");
	fprintf(out, "<g data-s=\"%llu\" data-n=\"%llu\" data-d=\"%u\" data-name=\"",
		(unsigned long long)l->start[i], (unsigned long long)f->samples, l->depth[i]);
	escape_xml(out, name);
	fprintf(out, "\"><title>");
	escape_xml(out, name);
	if (i && fn->object[0]) {
		fprintf(out, " [");
		escape_xml(out, fn->object);
		fprintf(out, "]");
	}
	fprintf(out, " (%llu samples, %.2f%%)</title>", (unsigned long long)f->samples,
		pct_of(f->samples, t->v[0].samples));
	fprintf(out,
		"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		"data-fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%d\"></text></g>\n",
		x, y, w, FRAME_HEIGHT - 1, fill, fill, x + 3, y + FRAME_HEIGHT - 5);
}

static void put_svg(const struct session *s, const struct hist *hi, const struct ftree *t,
		    const struct layout *l, FILE *out)
{
	int height = TOP_SPACE + BOTTOM_SPACE + (int)(l->max_depth + 1) * FRAME_HEIGHT;
	size_t i = 0;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" ");
	fprintf(out,
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" data-total=\"%llu\" "
		"onload=\"init(evt)\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height, (unsigned long long)t->v[0].samples);
	fprintf(out, "<style type=\"text/css\">\n"
		     "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		     "#title { font-size: 17px; }\n"
		     "#frames rect { stroke: none; }\n"
		     "#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
		     "#frames g { cursor: pointer; }\n"
		     ".hide { display: none; }\n"
		     ".parent { opacity: 0.5; }\n"
		     "#unzoom, #search { cursor: pointer; }\n"
		     "</style>\n");
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f8\"/>\n",
		SVG_WIDTH, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">Flame Graph: ",
		SVG_WIDTH / 2);
	escape_xml(out, hi->event);
	fprintf(out, ", %llu samples</text>\n", (unsigned long long)t->v[0].samples);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n",
		SVG_PAD);
	fprintf(out, "<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		SVG_WIDTH - SVG_PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", SVG_PAD, height - 10);
	fprintf(out,
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n<g "
		"id=\"frames\">\n",
		SVG_WIDTH - SVG_PAD, height - 10);
	while (i != UINT32_MAX) {
		const struct fnode *f = &t->v[i];
		bool wide = (double)f->samples * l->px >= MIN_WIDTH_PX;

		if (wide)
			put_frame(s, t, l, (u32)i, i ? s->hists.res.funcs[f->fid].name : "all",
				  height, out);
		if (wide && f->child != UINT32_MAX) {
			i = f->child;
			continue;
		}
		while (i && t->v[i].next == UINT32_MAX)
			i = t->v[i].parent;
		i = i ? t->v[i].next : UINT32_MAX;
	}
	fprintf(out, "</g>\n</svg>\n");
}

/* Write the main event's flame graph as SVG to @out. Returns 0 or -ENOMEM. */
int render_flamegraph(struct session *s, const struct report_opts *o, FILE *out)
{
	int hist = session__main_hist(s, o->event);
	struct layout l = {0};
	struct ftree t;
	int err;

	if (!s->hists.nr)
		return 0;
	if (hist < 0 || (size_t)hist >= s->hists.nr)
		hist = 0;
	err = ftree__build(&t, s, hist, FT_STACKS, 0);
	if (!err) {
		ftree__order(&t, s->hists.res.funcs, true);
		l.start = calloc(t.nr, sizeof(*l.start));
		l.depth = calloc(t.nr, sizeof(*l.depth));
		if (!l.start || !l.depth)
			err = -ENOMEM;
	}
	if (!err) {
		l.px =
		    t.v[0].samples ? (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)t.v[0].samples : 0;
		lay_out(&t, &l);
		put_svg(s, &s->hists.v[hist], &t, &l, out);
	}
	free(l.start);
	free(l.depth);
	ftree__exit(&t);
	return err;
}
