// SPDX-License-Identifier: MIT
/*
 * render_json.c - --json: the whole report as one JSON object for scripts,
 * documented in doc/json-format.md: the header fields, the counters, every
 * function seen (name, object, source line), and per sampled event every row
 * (by the --sort keys, function by default), every function's self and
 * total counts and self time per source line (json_lines.c), per-thread
 * and per-process totals and the call tree as a flat list of nodes. "format" is the schema's
 * version: 2 added all but the header, counters and rows (which keep their names), and rows are no
 * longer cut at --top.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>

#include "json_lines.h"

#define JSON_FORMAT 2

static void key_str(FILE *out, const char *key, const char *val, bool comma)
{
	fprintf(out, "  \"%s\": ", key);
	if (val)
		escape__json(out, val);
	else
		fprintf(out, "null");
	fprintf(out, "%s\n", comma ? "," : "");
}

/* A function's or a row's samples and periods, self and total, in percent of @all. */
static void put_counts(FILE *out, u64 self_samples, u64 self_period, u64 total_samples,
		       u64 total_period, u64 all)
{
	fprintf(out,
		"\"self_samples\": %llu, \"self_period\": %llu, \"self_percent\": %.4f, "
		"\"total_samples\": %llu, \"total_period\": %llu, \"total_percent\": %.4f",
		(unsigned long long)self_samples, (unsigned long long)self_period,
		output__pct_of(self_period, all), (unsigned long long)total_samples,
		(unsigned long long)total_period, output__pct_of(total_period, all));
}

static const char *first_feature(const struct session *s, size_t off)
{
	size_t i;

	for (i = 0; i < s->nr_files; i++) {
		const char *v = *(char *const *)((const char *)&s->files[i].feat + off);

		if (v)
			return v;
	}
	return NULL;
}

static void put_header(const struct session *s, FILE *out)
{
	size_t i;

	fprintf(out, "  \"format\": %d,\n  \"files\": [", JSON_FORMAT);
	for (i = 0; i < s->nr_files; i++) {
		fprintf(out, "%s", i ? ", " : "");
		escape__json(out, s->files[i].path);
	}
	fprintf(out, "],\n");
	key_str(out, "command", first_feature(s, offsetof(struct features, cmdline)), true);
	key_str(out, "hostname", first_feature(s, offsetof(struct features, hostname)), true);
	key_str(out, "osrelease", first_feature(s, offsetof(struct features, osrelease)), true);
	key_str(out, "arch", first_feature(s, offsetof(struct features, arch)), true);
	/* samples: what the records stand for (an aggregated file's merge them), as the
	 * closing line and `autoprof ctl status` count them; records: as read */
	fprintf(out, "  \"samples\": %llu,\n  \"records\": %llu,\n",
		(unsigned long long)s->stands_for, (unsigned long long)s->nr_samples);
	fprintf(out, "  \"lost\": %llu,\n  \"throttled\": %llu,\n",
		(unsigned long long)s->lost_total, (unsigned long long)s->throttle);
	fprintf(out, "  \"filtered\": %llu,\n", (unsigned long long)s->filtered);
	fprintf(out, "  \"samples_represented\": %llu,\n", (unsigned long long)s->stands_for);
	if (s->first_time <= s->last_time)
		fprintf(out, "  \"duration_s\": %.9f,\n",
			(double)(s->last_time - s->first_time) / 1e9);
	else
		fprintf(out, "  \"duration_s\": null,\n");
	if (s->counters.has_final)
		fprintf(out, "  \"elapsed_s\": %.9f,\n", (double)s->counters.elapsed_ns / 1e9);
	else
		fprintf(out, "  \"elapsed_s\": null,\n");
	fprintf(out, "  \"processes\": %llu,\n  \"threads\": %llu,\n",
		(unsigned long long)s->nr_procs_seen, (unsigned long long)s->nr_threads_seen);
	fprintf(out, "  \"complete\": %s,\n  \"read_bytes\": %llu,\n  \"data_bytes\": %llu,\n",
		session__incomplete(s) ? "false" : "true", (unsigned long long)s->read_bytes,
		(unsigned long long)s->data_bytes);
	fprintf(out, "  \"warnings\": [");
	for (i = 0; i < s->nr_warnings; i++) {
		fprintf(out, "%s", i ? ", " : "");
		escape__json(out, s->warnings[i]);
	}
	fprintf(out, "],\n");
}

static int cmp_func_stat(const void *pa, const void *pb, void *arg)
{
	const struct hist *hi = arg;
	const struct func_stat *a = &hi->stats[*(const u32 *)pa], *b = &hi->stats[*(const u32 *)pb];

	if (a->self_period != b->self_period)
		return a->self_period > b->self_period ? -1 : 1;
	if (a->total_period != b->total_period)
		return a->total_period > b->total_period ? -1 : 1;
	return *(const u32 *)pa < *(const u32 *)pb ? -1 : 1;
}

/*
 * The table of every function with samples in the events printed: its id
 * (what the events' functions and tree nodes name), name, object, and the
 * source file:line of its first instruction (null when unknown).
 */
static int put_function_table(struct session *s, const struct report_opts *o, FILE *out)
{
	const struct resolver *r = &s->hists.res;
	char buf[SRCLINE_MAX];
	size_t i, h, n = 0;

	fprintf(out, "  \"functions\": [");
	for (i = 0; i < r->nr_funcs; i++) {
		bool used = false;

		for (h = 0; h < s->hists.nr && !used; h++) {
			const struct hist *hi = &s->hists.v[h];

			if (o->event && strcmp(o->event, hi->event))
				continue;
			used = i < hi->nr_stats && hi->stats[i].total_samples;
		}
		if (!used)
			continue;
		fprintf(out, "%s\n    {\"id\": %zu, \"name\": ", n++ ? "," : "", i);
		escape__json(out, r->funcs[i].name);
		fprintf(out, ", \"object\": ");
		escape__json(out, r->funcs[i].object ? r->funcs[i].object : "");
		output__func_source(s, (u32)i, buf, sizeof(buf));
		fprintf(out, ", \"source\": ");
		if (buf[0])
			escape__json(out, buf);
		else
			fprintf(out, "null");
		fprintf(out, "}");
	}
	fprintf(out, "%s],\n", n ? "\n  " : "");
	return 0;
}

static void put_counters(const struct session *s, FILE *out)
{
	size_t i;

	fprintf(out, "  \"counters\": [");
	for (i = 0; i < s->counters.nr; i++) {
		const struct counter *c = &s->counters.v[i];

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		escape__json(out, c->name);
		fprintf(out, ", \"value\": %llu, \"enabled_ns\": %llu, \"running_ns\": %llu}",
			(unsigned long long)c->val, (unsigned long long)c->ena,
			(unsigned long long)c->run);
	}
	fprintf(out, "%s],\n", s->counters.nr ? "\n  " : "");
}

/*
 * Every function with samples in @hist, by self period, then total period,
 * with its hot source lines when the stacks keep addresses (main.c asks).
 */
static int put_functions(struct session *s, int hist, FILE *out)
{
	const struct hist *hi = &s->hists.v[hist];
	u32 *ids = malloc((hi->nr_stats + 1) * sizeof(*ids));
	struct json_lines jl;
	size_t i, n = 0;
	int err;

	if (!ids)
		return -ENOMEM;
	err = json_lines__build(&jl, s, hist);
	if (err) {
		json_lines__exit(&jl);
		free(ids);
		return err;
	}
	for (i = 0; i < hi->nr_stats; i++) {
		if (hi->stats[i].total_samples || hi->stats[i].self_samples)
			ids[n++] = (u32)i;
	}
	qsort_r(ids, n, sizeof(*ids), cmp_func_stat, (void *)hi);
	fprintf(out, ",\n     \"functions\": [");
	for (i = 0; i < n; i++) {
		const struct func_stat *fs = &hi->stats[ids[i]];

		fprintf(out, "%s\n      {\"id\": %u, \"function\": ", i ? "," : "", ids[i]);
		escape__json(out, s->hists.res.funcs[ids[i]].name);
		fprintf(out, ", ");
		put_counts(out, fs->self_samples, fs->self_period, fs->total_samples,
			   fs->total_period, hi->total_period);
		json_lines__put(&jl, ids[i], out);
		fprintf(out, "}");
	}
	fprintf(out, "%s]", n ? "\n     " : "");
	json_lines__exit(&jl);
	free(ids);
	return 0;
}

/* Per-thread and per-process samples and period of @hist. */
static int put_tasks(struct session *s, int hist, FILE *out)
{
	const struct stacks *st = &s->hists.stacks;
	const struct hist *hi = &s->hists.v[hist];
	u64 *v = calloc(2 * st->nr_tasks + 1, sizeof(*v));
	struct kvmap procs = {0};
	size_t i, n = 0;
	u64 slot;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < st->nr_entries; i++) {
		const struct entry *e = &st->entries[i];

		if (e->hist == (u32)hist) {
			v[2 * e->task] += e->samples;
			v[2 * e->task + 1] += e->period;
		}
	}
	fprintf(out, ",\n     \"threads\": [");
	for (i = 0; i < st->nr_tasks; i++) {
		const struct task *t = &st->tasks[i];
		const char *comm = machine__task_comm(&s->machine, t->pid, t->tid, t->comm);

		if (!v[2 * i])
			continue;
		fprintf(out, "%s\n      {\"pid\": %u, \"tid\": %u, \"comm\": ", n++ ? "," : "",
			t->pid, t->tid);
		escape__json(out, comm ? comm : "");
		fprintf(out, ", \"samples\": %llu, \"period\": %llu, \"percent\": %.4f}",
			(unsigned long long)v[2 * i], (unsigned long long)v[2 * i + 1],
			output__pct_of(v[2 * i + 1], hi->total_period));
	}
	fprintf(out, "%s],\n     \"processes\": [", n ? "\n     " : "");
	/* A process is printed at its first thread, with the sums of all its threads. */
	for (i = 0, n = 0; i < st->nr_tasks && !err; i++) {
		const struct task *t = &st->tasks[i];
		u64 samples = 0, period = 0;
		const char *comm;
		size_t k;

		if (!v[2 * i] || kvmap__get(&procs, t->pid, 0, &slot))
			continue;
		err = kvmap__put(&procs, t->pid, 0, i);
		for (k = i; k < st->nr_tasks; k++) {
			if (st->tasks[k].pid == t->pid) {
				samples += v[2 * k];
				period += v[2 * k + 1];
			}
		}
		comm = machine__comm_of(&s->machine, t->pid, t->pid);
		fprintf(out, "%s\n      {\"pid\": %u, \"comm\": ", n++ ? "," : "", t->pid);
		escape__json(out, comm ? comm : "");
		fprintf(out, ", \"samples\": %llu, \"period\": %llu, \"percent\": %.4f}",
			(unsigned long long)samples, (unsigned long long)period,
			output__pct_of(period, hi->total_period));
	}
	fprintf(out, "%s]", n ? "\n     " : "");
	kvmap__exit(&procs);
	free(v);
	return err;
}

/*
 * The call tree of @hist (every stack from its outermost frame) as a flat
 * list in pre-order, children by period: node 0 is the root (all samples),
 * every other node one function called from its parent.
 */
static int put_tree(struct session *s, int hist, FILE *out)
{
	struct ftree t;
	size_t i;
	int err = ftree__build(&t, &s->hists, hist, FT_STACKS, 0);

	if (err) {
		ftree__exit(&t);
		return err;
	}
	ftree__order(&t, s->hists.res.funcs, false);
	fprintf(out, ",\n     \"tree\": [");
	for (i = 0; i != UINT32_MAX;) {
		const struct fnode *f = &t.v[i];

		fprintf(out, "%s\n      {\"id\": %zu, \"parent\": ", i ? "," : "", i);
		if (i)
			fprintf(out, "%u, \"function\": %u", f->parent, f->fid);
		else
			fprintf(out, "null, \"function\": null");
		fprintf(out,
			", \"self_samples\": %llu, \"self_period\": %llu, \"total_samples\": %llu, "
			"\"total_period\": %llu}",
			(unsigned long long)f->self_samples, (unsigned long long)f->self_period,
			(unsigned long long)f->samples, (unsigned long long)f->period);
		i = ftree__next(&t, (u32)i);
	}
	fprintf(out, "\n     ]");
	ftree__exit(&t);
	return 0;
}

static int put_event(struct session *s, const struct report_opts *o, int hist, FILE *out)
{
	const struct hist *hi = &s->hists.v[hist];
	struct rows rows;
	char buf[SRCLINE_MAX];
	size_t i, shown = 0;
	int k, err;

	fprintf(out, "    {\"event\": ");
	escape__json(out, hi->event);
	/* period_unit: nanoseconds (the CPU clocks, offcpu-time), bytes, objects or count;
	 * offcpu-time's samples are its waits */
	fprintf(out, ", \"samples\": %llu, \"period\": %llu, \"period_unit\": \"%s\", \"rows\": [",
		(unsigned long long)hi->nr_samples, (unsigned long long)hi->total_period,
		event_units__period_unit(hi->event));
	err = rows__build(&rows, &s->hists, &s->machine, hist, &o->sort);
	if (!err)
		rows__sort(&rows, &s->hists, false);
	for (i = 0; !err && i < rows.nr; i++) {
		const struct row *r = &rows.v[i];

		if (!r->self_samples)
			continue;
		fprintf(out, "%s\n      {", shown++ ? "," : "");
		for (k = 0; k < o->sort.nr; k++) {
			static const char *const names[] = {
			    [SK_FUNC] = "function",   [SK_DSO] = "object",
			    [SK_SRCLINE] = "srcline", [SK_THREAD] = "thread",
			    [SK_PROCESS] = "process", [SK_COMM] = "comm"};

			rows__name(&rows, &s->hists, &s->machine, &o->sort, r, k, buf, sizeof(buf));
			fprintf(out, "\"%s\": ", names[o->sort.k[k]]);
			escape__json(out, buf);
			fprintf(out, ", ");
		}
		if (rows__spec_has(&o->sort, SK_FUNC) && !rows__spec_has(&o->sort, SK_DSO)) {
			fprintf(out, "\"object\": ");
			escape__json(out, s->hists.res.funcs[r->fid].object);
			fprintf(out, ", ");
		}
		put_counts(out, r->self_samples, r->self_period, r->total_samples, r->total_period,
			   hi->total_period);
		fprintf(out, "}");
	}
	fprintf(out, "%s]", shown ? "\n    " : "");
	rows__exit(&rows);
	if (!err)
		err = put_functions(s, hist, out);
	if (!err)
		err = put_tasks(s, hist, out);
	if (!err)
		err = put_tree(s, hist, out);
	fprintf(out, "}");
	return err;
}

/* Print the report as JSON. Returns 0 or -ENOMEM. */
int render_json(struct session *s, const struct report_opts *o, FILE *out)
{
	static const struct sort_spec by_func = {{SK_FUNC}, 1};
	struct report_opts def = *o;
	size_t i, n = 0;
	int err = 0;

	if (!def.sort.nr)
		def.sort = by_func;
	fprintf(out, "{\n");
	put_header(s, out);
	put_counters(s, out);
	put_function_table(s, o, out);
	fprintf(out, "  \"events\": [");
	for (i = 0; i < s->hists.nr && !err; i++) {
		if (!s->hists.v[i].nr_samples ||
		    (o->event && strcmp(o->event, s->hists.v[i].event)))
			continue;
		fprintf(out, "%s\n", n++ ? "," : "");
		err = put_event(s, &def, (int)i, out);
	}
	fprintf(out, "%s]\n}\n", n ? "\n  " : "");
	return err;
}
