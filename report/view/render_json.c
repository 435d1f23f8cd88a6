// SPDX-License-Identifier: MIT
/*
 * render_json.c - --json: the default report as one JSON object for
 * scripts: the header fields, the counters, and per sampled event the top
 * rows (by the --sort keys, function by default) with self and total counts.
 */
#include "internal.h"

static void key_str(FILE *out, const char *key, const char *val, bool comma)
{
	fprintf(out, "  \"%s\": ", key);
	if (val)
		escape_json(out, val);
	else
		fprintf(out, "null");
	fprintf(out, "%s\n", comma ? "," : "");
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

	fprintf(out, "  \"files\": [");
	for (i = 0; i < s->nr_files; i++) {
		fprintf(out, "%s", i ? ", " : "");
		escape_json(out, s->files[i].path);
	}
	fprintf(out, "],\n");
	key_str(out, "command", first_feature(s, offsetof(struct features, cmdline)), true);
	key_str(out, "hostname", first_feature(s, offsetof(struct features, hostname)), true);
	key_str(out, "osrelease", first_feature(s, offsetof(struct features, osrelease)), true);
	key_str(out, "arch", first_feature(s, offsetof(struct features, arch)), true);
	fprintf(out, "  \"samples\": %llu,\n  \"lost\": %llu,\n  \"throttled\": %llu,\n",
		(unsigned long long)s->nr_samples, (unsigned long long)(s->lost + s->lost_samples),
		(unsigned long long)s->throttle);
	fprintf(out, "  \"filtered\": %llu,\n", (unsigned long long)s->filtered);
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
}

static void put_counters(const struct session *s, FILE *out)
{
	size_t i;

	fprintf(out, "  \"counters\": [");
	for (i = 0; i < s->counters.nr; i++) {
		const struct counter *c = &s->counters.v[i];

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		escape_json(out, c->name);
		fprintf(out, ", \"value\": %llu, \"enabled_ns\": %llu, \"running_ns\": %llu}",
			(unsigned long long)c->val, (unsigned long long)c->ena,
			(unsigned long long)c->run);
	}
	fprintf(out, "%s],\n", s->counters.nr ? "\n  " : "");
}

static int put_event(struct session *s, const struct report_opts *o, int hist, FILE *out)
{
	const struct hist *hi = &s->hists.v[hist];
	struct rows rows;
	char buf[SRCLINE_MAX];
	size_t i, shown = 0;
	int k, err;

	fprintf(out, "    {\"event\": ");
	escape_json(out, hi->event);
	fprintf(out, ", \"samples\": %llu, \"period\": %llu, \"rows\": [",
		(unsigned long long)hi->nr_samples, (unsigned long long)hi->total_period);
	err = rows__build(&rows, s, hist, &o->sort);
	if (!err)
		rows__sort(&rows, s, false);
	for (i = 0; !err && i < rows.nr && shown < o->top; i++) {
		const struct row *r = &rows.v[i];

		if (!r->self_samples)
			continue;
		fprintf(out, "%s\n      {", shown++ ? "," : "");
		for (k = 0; k < o->sort.nr; k++) {
			static const char *const names[] = {
			    [SK_FUNC] = "function",   [SK_DSO] = "object",
			    [SK_SRCLINE] = "srcline", [SK_THREAD] = "thread",
			    [SK_PROCESS] = "process", [SK_COMM] = "comm"};

			rows__name(&rows, s, &o->sort, r, k, buf, sizeof(buf));
			fprintf(out, "\"%s\": ", names[o->sort.k[k]]);
			escape_json(out, buf);
			fprintf(out, ", ");
		}
		if (sort_spec__has(&o->sort, SK_FUNC) && !sort_spec__has(&o->sort, SK_DSO)) {
			fprintf(out, "\"object\": ");
			escape_json(out, s->hists.res.funcs[r->fid].object);
			fprintf(out, ", ");
		}
		fprintf(out,
			"\"self_samples\": %llu, \"self_period\": %llu, \"self_percent\": %.4f, "
			"\"total_samples\": %llu, \"total_period\": %llu, \"total_percent\": %.4f}",
			(unsigned long long)r->self_samples, (unsigned long long)r->self_period,
			pct_of(r->self_period, hi->total_period),
			(unsigned long long)r->total_samples, (unsigned long long)r->total_period,
			pct_of(r->total_period, hi->total_period));
	}
	fprintf(out, "%s]}", shown ? "\n    " : "");
	rows__exit(&rows);
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
