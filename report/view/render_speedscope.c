// SPDX-License-Identifier: MIT
/*
 * render_speedscope.c - --speedscope FILE: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json) for the main event:
 * one "sampled" profile per thread, named "comm pid/tid", whose samples are
 * the thread's distinct stacks (outermost frame first) weighted by their
 * period (nanoseconds for the clock events), and one shared frame per
 * function with its source file and line where libdw knows them.
 *
 * The stacks are aggregated, so speedscope's time order view shows each
 * distinct stack once; its left heavy and sandwich views are exact.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "0.1"
#endif

#define NONE UINT32_MAX

struct ss {
	struct session *s;
	int hist;
	u32 *frame_of; /* function id -> shared frame index, NONE: not yet */
	u32 *frames;   /* shared frame index -> function id */
	u32 nr_frames;
	u32 *by_task;	 /* entry ids of the hist, grouped by task */
	u32 *task_start; /* task -> first index into by_task; [nr_tasks] the end */
	u32 *path;
};

static u32 frame(struct ss *x, u32 fid)
{
	if (x->frame_of[fid] == NONE) {
		x->frame_of[fid] = x->nr_frames;
		x->frames[x->nr_frames++] = fid;
	}
	return x->frame_of[fid];
}

/* Bucket the hist's entries by task (a counting sort). */
static void group(struct ss *x)
{
	const struct stacks *st = &x->s->hists.stacks;
	size_t i;

	for (i = 0; i < st->nr_entries; i++) {
		if (st->entries[i].hist == (u32)x->hist && st->entries[i].samples)
			x->task_start[st->entries[i].task + 1]++;
	}
	for (i = 0; i < st->nr_tasks; i++)
		x->task_start[i + 1] += x->task_start[i];
	for (i = 0; i < st->nr_entries; i++) {
		const struct entry *e = &st->entries[i];

		if (e->hist == (u32)x->hist && e->samples)
			x->by_task[x->task_start[e->task]++] = (u32)i;
	}
	for (i = st->nr_tasks; i > 0; i--) /* shift back: start[t] is t's first again */
		x->task_start[i] = x->task_start[i - 1];
	x->task_start[0] = 0;
}

static void put_profile(struct ss *x, u32 task, const char *unit, FILE *out)
{
	const struct stacks *st = &x->s->hists.stacks;
	const struct task *t = &st->tasks[task];
	const char *comm = machine__task_comm(&x->s->machine, t->pid, t->tid, t->comm);
	char name[96];
	u64 total = 0;
	u32 i, d, n;

	for (i = x->task_start[task]; i < x->task_start[task + 1]; i++)
		total += st->entries[x->by_task[i]].period;
	snprintf(name, sizeof(name), "%s %u/%u", comm && *comm ? comm : "[unknown]", t->pid,
		 t->tid);
	fprintf(out, "    {\"type\": \"sampled\", \"name\": ");
	escape__json(out, name);
	fprintf(out, ", \"unit\": \"%s\", \"startValue\": 0, \"endValue\": %llu,\n", unit,
		(unsigned long long)total);
	fprintf(out, "     \"samples\": [");
	for (i = x->task_start[task]; i < x->task_start[task + 1]; i++) {
		n = stacks__path(st, st->entries[x->by_task[i]].node, x->path);
		fprintf(out, "%s[", i > x->task_start[task] ? ",\n      " : "\n      ");
		for (d = n; d > 0; d--) /* outermost first */
			fprintf(out, "%s%u", d < n ? "," : "",
				frame(x, st->nodes[x->path[d - 1]].fid));
		fprintf(out, "]");
	}
	fprintf(out, "],\n     \"weights\": [");
	for (i = x->task_start[task]; i < x->task_start[task + 1]; i++)
		fprintf(out, "%s%llu", i > x->task_start[task] ? "," : "",
			(unsigned long long)st->entries[x->by_task[i]].period);
	fprintf(out, "]}");
}

static void put_frames(struct ss *x, FILE *out)
{
	char buf[SRCLINE_MAX];
	u32 i;

	fprintf(out, "  \"shared\": {\"frames\": [");
	for (i = 0; i < x->nr_frames; i++) {
		const struct func *fn = &x->s->hists.res.funcs[x->frames[i]];
		char *colon;

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		escape__json(out, fn->name);
		output__func_source(x->s, x->frames[i], buf, sizeof(buf));
		colon = strrchr(buf, ':');
		if (buf[0] && colon) {
			*colon = 0;
			fprintf(out, ", \"file\": ");
			escape__json(out, buf);
			fprintf(out, ", \"line\": %ld", strtol(colon + 1, NULL, 10));
		}
		fprintf(out, "}");
	}
	fprintf(out, "%s]}\n", x->nr_frames ? "\n  " : "");
}

/*
 * Write the main event of @s as a speedscope file to @out. Returns 0 or
 * -ENOMEM.
 */
int render_speedscope(struct session *s, const struct report_opts *o, FILE *out)
{
	const struct stacks *st = &s->hists.stacks;
	struct ss x = {.s = s, .hist = session__main_hist(s, o->event)};
	const char *event = (size_t)x.hist < s->hists.nr ? s->hists.v[x.hist].event : "";
	const char *cmd = NULL, *unit;
	size_t i, n = 0, nr_funcs = s->hists.res.nr_funcs;
	u64 best = 0;
	u32 active = 0;

	x.frame_of = malloc((nr_funcs + 1) * sizeof(*x.frame_of));
	x.frames = malloc((nr_funcs + 1) * sizeof(*x.frames));
	x.by_task = malloc((st->nr_entries + 1) * sizeof(*x.by_task));
	x.task_start = calloc(st->nr_tasks + 2, sizeof(*x.task_start));
	x.path = malloc(MAX_FRAMES * sizeof(*x.path));
	if (!x.frame_of || !x.frames || !x.by_task || !x.task_start || !x.path) {
		free(x.frame_of);
		free(x.frames);
		free(x.by_task);
		free(x.task_start);
		free(x.path);
		return -ENOMEM;
	}
	memset(x.frame_of, 0xff, (nr_funcs + 1) * sizeof(*x.frame_of));
	if ((size_t)x.hist < s->hists.nr)
		group(&x);
	/* nanoseconds (the CPU clocks, offcpu-time: ns waited), bytes; else speedscope's "none" */
	unit = event_units__period_unit(event);
	if (strcmp(unit, "nanoseconds") && strcmp(unit, "bytes"))
		unit = "none";
	for (i = 0; i < s->nr_files && !cmd; i++)
		cmd = s->files[i].feat.cmdline;
	fprintf(out, "{\n  \"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n");
	fprintf(out, "  \"exporter\": \"autoprof-report " AUTOPROF_VERSION "\",\n  \"name\": ");
	escape__json(out, cmd ? cmd : s->nr_files ? s->files[0].path : "autoprof");
	fprintf(out, ",\n  \"profiles\": [");
	for (i = 0; i < st->nr_tasks; i++) {
		u64 w = 0;
		u32 k;

		if (x.task_start[i] == x.task_start[i + 1])
			continue;
		for (k = x.task_start[i]; k < x.task_start[i + 1]; k++)
			w += st->entries[x.by_task[k]].period;
		if (w > best) {
			best = w;
			active = (u32)n;
		}
		fprintf(out, "%s\n", n++ ? "," : "");
		put_profile(&x, (u32)i, unit, out);
	}
	fprintf(out, "%s],\n  \"activeProfileIndex\": %u,\n", n ? "\n  " : "", active);
	put_frames(&x, out);
	fprintf(out, "}\n");
	free(x.frame_of);
	free(x.frames);
	free(x.by_task);
	free(x.task_start);
	free(x.path);
	return 0;
}
