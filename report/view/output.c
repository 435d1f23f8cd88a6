// SPDX-License-Identifier: MIT
/*
 * output.c - the default text report: a summary header, the counter totals
 * with derived ratios, then per sampled event the top rows by self time and
 * by total (children) time, grouped by the --sort keys (function by default),
 * and with --hot-lines the hottest source lines of the top functions.
 */
#include "view/view.h"

#include <stdlib.h>

#define MAX_FILES_SHOWN 4
#define MAX_COL_WIDTH	60

/* Print a string from the file with control characters made harmless. */
void output__print_clean(FILE *out, const char *str)
{
	for (; *str; str++)
		fputc((unsigned char)*str < 0x20 || *str == 0x7f ? ' ' : *str, out);
}

/* @part as a percentage of @whole; 0 when @whole is 0. */
double output__pct_of(u64 part, u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void print_files(const struct session *s, FILE *out)
{
	size_t i;

	for (i = 0; i < s->nr_files && i < MAX_FILES_SHOWN; i++) {
		const struct perf_file *pf = &s->files[i];

		fprintf(out, "File:       ");
		output__print_clean(out, pf->path);
		if (pf->feat.cmdline) {
			fprintf(out, "\nCommand:    ");
			output__print_clean(out, pf->feat.cmdline);
		}
		if (pf->feat.version) {
			/* perf writes its bare version ("6.1.187"); autoprof its name too. */
			fprintf(out, "\nRecorder:   %s",
				strncmp(pf->feat.version, "autoprof", 8) ? "perf " : "");
			output__print_clean(out, pf->feat.version);
		}
		if (pf->feat.has_stat)
			fprintf(out, "\nStat data:  yes (perf stat record)");
		fprintf(out, "\n");
	}
	if (s->nr_files > MAX_FILES_SHOWN)
		fprintf(out, "            ... and %zu more files\n", s->nr_files - MAX_FILES_SHOWN);
}

static void print_host(const struct session *s, FILE *out)
{
	const struct features *host = NULL;
	size_t i;

	for (i = 0; i < s->nr_files && !host; i++) {
		const struct features *f = &s->files[i].feat;

		if (f->hostname || f->osrelease || f->arch)
			host = f;
	}
	if (host) {
		const char *parts[] = {host->hostname, host->osrelease, host->arch};

		fprintf(out, "Host:      ");
		for (i = 0; i < ARRAY_SIZE(parts); i++) {
			if (parts[i]) {
				fputc(' ', out);
				output__print_clean(out, parts[i]);
			}
		}
		if (host->has_nrcpus)
			fprintf(out, ", %u cpus online", host->nr_cpus_online);
		fprintf(out, "\n");
	}
}

const char *output__count_noun(const struct session *s, const char *ev)
{
	if (event_units__wall(ev))
		return s->merged ? "merged records" : "records";
	if ((s->merged || s->memory_merged) &&
	    (memory_names__in_bytes(ev) || memory_names__derived(ev)))
		return "merged records"; /* alloc-bytes: per thread, stack and size, per window */
	return "samples";
}

/* The summary: files, command, host, events, samples, lost, duration, tasks. */
void output__print_header(const struct session *s, FILE *out)
{
	const char *sep = "";
	size_t i, with_samples = 0;

	print_files(s, out);
	print_host(s, out);
	for (i = 0; i < s->hists.nr; i++)
		with_samples += s->hists.v[i].nr_samples > 0;
	fprintf(out, "Event:      ");
	for (i = 0; i < s->hists.nr; i++) {
		if (!s->hists.v[i].nr_samples)
			continue;
		fprintf(out, "%s", sep);
		output__print_clean(out, s->hists.v[i].event);
		if (with_samples > 1)
			fprintf(out, " (%llu %s)", (unsigned long long)s->hists.v[i].nr_samples,
				output__count_noun(s, s->hists.v[i].event));
		sep = ", ";
	}
	fprintf(out, "%s\n",
		with_samples	 ? ""
		: s->counters.nr ? "none sampled (counters only)"
				 : "none");
	if (s->stands_for > s->nr_samples) /* an aggregated file: records merge samples */
		fprintf(out, "Samples:    %llu (in %llu merged records)",
			(unsigned long long)s->stands_for, (unsigned long long)s->nr_samples);
	else
		fprintf(out, "Samples:    %llu", (unsigned long long)s->nr_samples);
	if (s->filtered)
		fprintf(out, " (%llu more filtered out)", (unsigned long long)s->filtered);
	if (s->hists.aimed_out)
		fprintf(out, " (%llu outside --focus/--peek/--ignore/-S; percentages of all)",
			(unsigned long long)s->hists.aimed_out);
	for (i = 0; i < s->hists.nr; i++) /* offcpu-time: its records are waits */
		if (s->hists.v[i].nr_samples && event_units__wall(s->hists.v[i].event))
			fprintf(out, "\nOff-CPU:    %.3f s in %llu %s (%s)",
				(double)s->hists.v[i].total_period / 1e9,
				(unsigned long long)s->hists.v[i].nr_samples,
				s->merged ? "merged records" : "records", s->hists.v[i].event);
	fprintf(out, "\nLost:       %llu", (unsigned long long)s->lost_total);
	if (s->lost_total)
		fprintf(out, " (%.2f%% of samples)",
			output__pct_of(s->lost_total, s->lost_total + s->nr_samples));
	fprintf(out, "\n");
	if (s->throttle || s->unthrottle)
		fprintf(out, "Throttled:  %llu times\n", (unsigned long long)s->throttle);
	if (s->first_time <= s->last_time)
		fprintf(out, "Duration:   %.3f s of samples",
			(double)(s->last_time - s->first_time) / 1e9);
	else
		fprintf(out, "Duration:   n/a (no samples)");
	if (s->counters.has_final)
		fprintf(out, ", %.3f s elapsed", (double)s->counters.elapsed_ns / 1e9);
	fprintf(out, "\n");
	fprintf(out, "Processes:  %llu\n", (unsigned long long)s->nr_procs_seen);
	fprintf(out, "Threads:    %llu\n", (unsigned long long)s->nr_threads_seen);
	output__print_memory_before(s, out);
	session__print_gaps(s, out);
}

void output__print_memory_before(const struct session *s, FILE *out)
{
	if (s->memory_before)
		fprintf(out,
			"Not sampled: %llu bytes in allocations before profiling started are not "
			"in the profile (constructors run before libautoprof.so's, or an image's "
			"allocations before a failed exec, in the file removed for it)\n",
			(unsigned long long)s->memory_before);
	if (s->memory_unseen)
		fprintf(
		    out,
		    "Not seen: %llu bytes of anonymous memory the process held at its end did "
		    "not come through malloc & co (an allocator the library cannot see: linked "
		    "into the program under names of its own, a runtime's heap, mmap); they are "
		    "not in the profile\n",
		    (unsigned long long)s->memory_unseen);
}

/* Counter value scaled for multiplexing, as perf stat does. */
static double scaled(const struct counter *c)
{
	if (c->run && c->run < c->ena)
		return (double)c->val * (double)c->ena / (double)c->run;
	return (double)c->val;
}

static const struct counter *find(const struct session *s, const char *name)
{
	return counters__find(&s->counters, name);
}

/* The derived metric perf stat prints beside counter @c, into @buf ("" if none). */
static void derived(const struct session *s, const struct counter *c, char *buf, size_t len)
{
	const struct counter *clock = find(s, "task-clock"), *other;
	double v = scaled(c), secs;

	if (!clock)
		clock = find(s, "cpu-clock");
	secs = clock ? scaled(clock) / 1e9 : 0;
	buf[0] = 0;
	if (!strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock")) {
		if (s->counters.elapsed_ns)
			snprintf(buf, len, "%.3f CPUs utilized",
				 v / (double)s->counters.elapsed_ns);
	} else if (!strcmp(c->name, "instructions")) {
		other = find(s, "cycles");
		if (other && scaled(other) > 0)
			snprintf(buf, len, "%.2f insn per cycle", v / scaled(other));
	} else if (!strcmp(c->name, "cycles")) {
		if (secs > 0)
			snprintf(buf, len, "%.3f GHz", v / secs / 1e9);
	} else if (!strcmp(c->name, "branch-misses")) {
		other = find(s, "branches");
		if (other && scaled(other) > 0)
			snprintf(buf, len, "%.2f%% of all branches", 100.0 * v / scaled(other));
	} else if (!strcmp(c->name, "cache-misses")) {
		other = find(s, "cache-references");
		if (other && scaled(other) > 0)
			snprintf(buf, len, "%.2f%% of all cache refs", 100.0 * v / scaled(other));
	} else if (secs > 0) {
		double rate = v / secs;

		if (rate >= 1e9)
			snprintf(buf, len, "%.3f G/sec", rate / 1e9);
		else if (rate >= 1e6)
			snprintf(buf, len, "%.3f M/sec", rate / 1e6);
		else if (rate >= 1e3)
			snprintf(buf, len, "%.3f K/sec", rate / 1e3);
		else
			snprintf(buf, len, "%.3f /sec", rate);
	}
}

/* Counter totals perf-stat style: value, name, derived ratio, multiplexing. */
void output__print_counters(const struct session *s, FILE *out)
{
	size_t i;

	if (!s->counters.nr)
		return;
	fprintf(out, "\nCounters:\n");
	for (i = 0; i < s->counters.nr; i++) {
		const struct counter *c = &s->counters.v[i];
		bool clock = !strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock");
		char d[96];

		if (c->ena && !c->run) {
			fprintf(out, "  %18s      ", "<not counted>");
			output__print_clean(out, c->name);
			fprintf(out, "\n");
			continue;
		}
		derived(s, c, d, sizeof(d));
		if (clock)
			fprintf(out, "  %18.2f msec ", scaled(c) / 1e6);
		else
			fprintf(out, "  %18.0f      ", scaled(c));
		fprintf(out, "%-24s", c->name);
		if (d[0])
			fprintf(out, "  # %s", d);
		if (c->run < c->ena)
			fprintf(out, "  (multiplexed: ran %.2f%%)", output__pct_of(c->run, c->ena));
		fprintf(out, "\n");
	}
	if (s->counters.has_final)
		fprintf(out, "  %18.9f seconds time elapsed\n",
			(double)s->counters.elapsed_ns / 1e9);
}

/* Source file:line of function @fid's first instruction into @buf, "" if unknown. */
void output__func_source(struct session *s, u32 fid, char *buf, size_t len)
{
	const struct func *fn = &s->hists.res.funcs[fid];

	buf[0] = 0;
	if (fn->dso && fn->has_sym && !s->opts.no_load)
		srcline__find(fn->dso, fn->vaddr, false, buf, len);
	if (!buf[0] && fn->decl) /* a function seen only inlined: where it is defined */
		snprintf(buf, len, "%s", fn->decl);
}

struct table {
	struct rows *rows;
	const struct sort_spec *ss;
	size_t shown;
	bool by_total, object, lines;
	int width[MAX_SORT_KEYS], obj_width;
};

static void measure(struct table *t, struct session *s)
{
	char buf[SRCLINE_MAX];
	size_t r;
	int i;

	for (i = 0; i < t->ss->nr; i++) {
		t->width[i] = (int)strlen(rows__key_title(t->ss->k[i]));
		if (t->width[i] < 8)
			t->width[i] = 8;
	}
	t->obj_width = 6;
	for (r = 0; r < t->shown; r++) {
		int olen = (int)strlen(s->hists.res.funcs[t->rows->v[r].fid].object);

		if (olen > t->obj_width)
			t->obj_width = olen > MAX_COL_WIDTH ? MAX_COL_WIDTH : olen;
		for (i = 0; i < t->ss->nr; i++) {
			int len;

			rows__name(t->rows, &s->hists, &s->machine, t->ss, &t->rows->v[r], i, buf,
				   sizeof(buf));
			len = (int)strlen(buf);
			if (len > t->width[i])
				t->width[i] = len > MAX_COL_WIDTH ? MAX_COL_WIDTH : len;
		}
	}
}

/* Print @str left-aligned in @width columns (no padding when @width is 0). */
static void print_cell(FILE *out, const char *str, int width)
{
	int len = (int)strlen(str);

	fputs("  ", out);
	output__print_clean(out, str);
	if (width > len)
		fprintf(out, "%*s", width - len, "");
}

static void print_rows(struct table *t, struct session *s, const struct hist *hi, FILE *out)
{
	char buf[SRCLINE_MAX];
	size_t r;
	int i, last = t->ss->nr - 1;

	const char *mem = memory_names__column(hi->event); /* bytes or objects, not records */
	bool wall = event_units__wall(hi->event);	   /* offcpu-time: seconds waited */

	fprintf(out, "%7s  %*s", t->by_total ? "Total%" : "Self%", mem || wall ? 12 : 8,
		mem    ? mem
		: wall ? "Seconds"
		       : "Samples");
	for (i = 0; i < t->ss->nr; i++)
		print_cell(out, rows__key_title(t->ss->k[i]),
			   i < last || t->object || t->lines ? t->width[i] : 0);
	if (t->object)
		print_cell(out, "Object", t->lines ? t->obj_width : 0);
	if (t->lines)
		print_cell(out, "Source", 0);
	fprintf(out, "\n");
	for (r = 0; r < t->shown; r++) {
		const struct row *row = &t->rows->v[r];
		u64 period = t->by_total ? row->total_period : row->self_period;
		u64 samples = t->by_total ? row->total_samples : row->self_samples;

		if (wall)
			fprintf(out, "%6.2f%%  %12.3f", output__pct_of(period, hi->total_period),
				(double)period / 1e9);
		else
			fprintf(out, "%6.2f%%  %*llu", output__pct_of(period, hi->total_period),
				mem ? 12 : 8, (unsigned long long)(mem ? period : samples));
		for (i = 0; i < t->ss->nr; i++) {
			rows__name(t->rows, &s->hists, &s->machine, t->ss, row, i, buf,
				   sizeof(buf));
			/* --full-names: the whole name, however long */
			print_cell(out,
				   t->ss->k[i] == SK_FUNC && demangle__full()
				       ? s->hists.res.funcs[row->key[i]].name
				       : buf,
				   i < last || t->object || t->lines ? t->width[i] : 0);
		}
		if (t->object)
			print_cell(out, s->hists.res.funcs[row->fid].object,
				   t->lines ? t->obj_width : 0);
		if (t->lines) {
			output__func_source(s, row->fid, buf, sizeof(buf));
			print_cell(out, buf[0] ? buf : "-", 0);
		}
		fprintf(out, "\n");
	}
}

/*
 * -S LIST (perf report --symbols): only the rows of those functions, when
 * the rows are keyed by function. The rows' index is not used after this.
 */
static void keep_symbols(struct rows *rows, struct session *s, const struct report_opts *o)
{
	size_t r, n = 0;

	if (!o->aim || !o->aim->nr_symbols || !rows__spec_has(&o->sort, SK_FUNC))
		return;
	for (r = 0; r < rows->nr; r++) {
		if (aim__marks(&s->hists, rows->v[r].fid) & MARK_SYMBOL)
			rows->v[n++] = rows->v[r];
	}
	rows->nr = n;
}

static bool default_sort(const struct sort_spec *ss)
{
	return ss->nr == 1 && ss->k[0] == SK_FUNC;
}

static void print_table(struct session *s, int hist, const struct report_opts *o, struct rows *rows,
			bool by_total, FILE *out)
{
	const struct hist *hi = &s->hists.v[hist];
	struct table t = {.rows = rows, .ss = &o->sort, .by_total = by_total};
	size_t n = 0, r;
	int i;

	rows__sort(rows, &s->hists, by_total);
	for (r = 0; r < rows->nr; r++)
		n += (by_total ? rows->v[r].total_samples : rows->v[r].self_samples) > 0;
	t.shown = n < o->top ? n : o->top;
	t.object = rows__spec_has(&o->sort, SK_FUNC) && !rows__spec_has(&o->sort, SK_DSO);
	t.lines = o->lines && rows__spec_has(&o->sort, SK_FUNC);
	measure(&t, s);
	if (default_sort(&o->sort)) {
		fprintf(out, "\n%s\n",
			by_total ? "Top functions by total time (children included):"
				 : "Top functions by self time:");
	} else {
		fprintf(out, "\nTop by %s time, sorted by ", by_total ? "total" : "self");
		for (i = 0; i < o->sort.nr; i++)
			fprintf(out, "%s%s", i ? "," : "", rows__key_title(o->sort.k[i]));
		fprintf(out, ":\n");
	}
	print_rows(&t, s, hi, out);
}

/* Print the whole default report for @s to @out. */
void output__print(struct session *s, const struct report_opts *o, FILE *out)
{
	static const struct sort_spec by_func = {{SK_FUNC}, 1};
	struct report_opts def;
	size_t i, with_samples = 0;
	bool by_node;

	if (!o->sort.nr) {
		def = *o;
		def.sort = by_func;
		o = &def;
	}
	by_node = rows__spec_has(&o->sort, SK_FUNC) || rows__spec_has(&o->sort, SK_DSO) ||
		  rows__spec_has(&o->sort, SK_SRCLINE);
	output__print_header(s, out);
	output__print_counters(s, out);
	for (i = 0; i < s->hists.nr; i++)
		with_samples += s->hists.v[i].nr_samples > 0;
	for (i = 0; i < s->hists.nr; i++) {
		const struct hist *hi = &s->hists.v[i];
		struct rows rows;

		if (!hi->nr_samples)
			continue;
		if (o->event && strcmp(o->event, hi->event))
			continue;
		if (with_samples > 1 && event_units__wall(hi->event))
			fprintf(out, "\n== %s: %.3f s in %llu %s ==\n", hi->event,
				(double)hi->total_period / 1e9, (unsigned long long)hi->nr_samples,
				s->merged ? "merged records" : "records");
		else if (with_samples > 1)
			fprintf(out, "\n== %s: %llu %s ==\n", hi->event,
				(unsigned long long)hi->nr_samples,
				output__count_noun(s, hi->event));
		if (rows__build(&rows, &s->hists, &s->machine, (int)i, &o->sort) == 0) {
			keep_symbols(&rows, s, o);
			print_table(s, (int)i, o, &rows, false, out);
			if (o->hot_lines && hot_lines__print(s, (int)i, o, out))
				fprintf(out, "\n(out of memory)\n");
			if (o->children && by_node)
				print_table(s, (int)i, o, &rows, true, out);
		} else {
			fprintf(out, "\n(out of memory)\n");
		}
		rows__exit(&rows);
	}
}
