// SPDX-License-Identifier: MIT
/*
 * output.c - the text report: a summary header, then per event the top
 * functions by self time and by total (children) time.
 */
#include "internal.h"

#include <stdlib.h>

#define MAX_FILES_SHOWN 4
#define MAX_NAME_WIDTH	60

enum sort_key { BY_SELF, BY_TOTAL };

struct sort_ctx {
	const struct hist *hi;
	const struct func *funcs;
	enum sort_key key;
};

static int fid_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *c = arg;
	u32 a = *(const u32 *)pa, b = *(const u32 *)pb;
	const struct func_stat *x = &c->hi->stats[a], *y = &c->hi->stats[b];
	u64 xp = c->key == BY_SELF ? x->self_period : x->total_period;
	u64 yp = c->key == BY_SELF ? y->self_period : y->total_period;
	u64 xs = c->key == BY_SELF ? x->self_samples : x->total_samples;
	u64 ys = c->key == BY_SELF ? y->self_samples : y->total_samples;

	if (xp != yp)
		return xp > yp ? -1 : 1;
	if (xs != ys)
		return xs > ys ? -1 : 1;
	return strcmp(c->funcs[a].name, c->funcs[b].name);
}

/* Print a string from the file with control characters made harmless. */
static void print_clean(FILE *out, const char *str)
{
	for (; *str; str++)
		fputc((unsigned char)*str < 0x20 || *str == 0x7f ? ' ' : *str, out);
}

static void print_header(const struct session *s, FILE *out)
{
	const struct features *host = NULL;
	size_t i, printed;
	const char *sep = "";

	for (i = 0; i < s->nr_files && i < MAX_FILES_SHOWN; i++) {
		const struct perf_file *pf = &s->files[i];

		fprintf(out, "File:       ");
		print_clean(out, pf->path);
		if (pf->feat.cmdline) {
			fprintf(out, "\nCommand:    ");
			print_clean(out, pf->feat.cmdline);
		}
		if (pf->feat.version) {
			fprintf(out, "\nRecorder:   perf ");
			print_clean(out, pf->feat.version);
		}
		if (pf->feat.has_stat)
			fprintf(out, "\nStat data:  yes (perf stat record)");
		fprintf(out, "\n");
	}
	if (s->nr_files > MAX_FILES_SHOWN)
		fprintf(out, "            ... and %zu more files\n", s->nr_files - MAX_FILES_SHOWN);
	for (i = 0; i < s->nr_files && !host; i++) {
		const struct features *f = &s->files[i].feat;

		if (f->hostname || f->osrelease || f->arch)
			host = f;
	}
	if (host) {
		fprintf(out, "Host:      ");
		const char *parts[] = {host->hostname, host->osrelease, host->arch};

		for (i = 0; i < ARRAY_SIZE(parts); i++) {
			if (parts[i]) {
				fputc(' ', out);
				print_clean(out, parts[i]);
			}
		}
		if (host->has_nrcpus)
			fprintf(out, ", %u cpus online", host->nr_cpus_online);
		fprintf(out, "\n");
	}
	fprintf(out, "Event:      ");
	for (i = 0, printed = 0; i < s->hists.nr; i++) {
		fprintf(out, "%s", sep);
		print_clean(out, s->hists.v[i].event);
		if (s->hists.nr > 1)
			fprintf(out, " (%llu samples)",
				(unsigned long long)s->hists.v[i].nr_samples);
		sep = ", ";
		printed++;
	}
	fprintf(out, "%s\n", printed ? "" : "none");
	fprintf(out, "Samples:    %llu\n", (unsigned long long)s->nr_samples);
	fprintf(out, "Lost:       %llu\n", (unsigned long long)(s->lost + s->lost_samples));
	if (s->throttle)
		fprintf(out, "Throttled:  %llu times\n", (unsigned long long)s->throttle);
	if (s->first_time <= s->last_time)
		fprintf(out, "Duration:   %.3f s\n", (double)(s->last_time - s->first_time) / 1e9);
	else
		fprintf(out, "Duration:   n/a\n");
	fprintf(out, "Processes:  %llu\n", (unsigned long long)s->nr_procs_seen);
	fprintf(out, "Threads:    %llu\n", (unsigned long long)s->nr_threads_seen);
}

static void print_table(const struct hists *h, const struct hist *hi, enum sort_key key,
			unsigned top, FILE *out)
{
	struct sort_ctx ctx = {hi, h->funcs, key};
	size_t i, n = 0, shown;
	int width = 8;
	u32 *ids;

	ids = malloc((hi->nr_stats ? hi->nr_stats : 1) * sizeof(*ids));
	if (!ids)
		return;
	for (i = 0; i < hi->nr_stats && i < h->nr_funcs; i++) {
		if (key == BY_SELF ? hi->stats[i].self_samples : hi->stats[i].total_samples)
			ids[n++] = (u32)i;
	}
	qsort_r(ids, n, sizeof(*ids), fid_cmp, &ctx);
	shown = n < top ? n : top;
	for (i = 0; i < shown; i++) {
		int len = (int)strlen(h->funcs[ids[i]].name);

		if (len > width)
			width = len > MAX_NAME_WIDTH ? MAX_NAME_WIDTH : len;
	}
	fprintf(out, "\n%s\n",
		key == BY_SELF ? "Top functions by self time:"
			       : "Top functions by total time (children included):");
	fprintf(out, "%7s  %8s  %-*s  %s\n", key == BY_SELF ? "Self%" : "Total%", "Samples", width,
		"Function", "Object");
	for (i = 0; i < shown; i++) {
		const struct func_stat *st = &hi->stats[ids[i]];
		u64 period = key == BY_SELF ? st->self_period : st->total_period;
		u64 samples = key == BY_SELF ? st->self_samples : st->total_samples;
		double pct =
		    hi->total_period ? 100.0 * (double)period / (double)hi->total_period : 0;

		fprintf(out, "%6.2f%%  %8llu  %-*s  %s\n", pct, (unsigned long long)samples, width,
			h->funcs[ids[i]].name, h->funcs[ids[i]].object);
	}
	free(ids);
}

/* Print the whole report for @s to @out. */
void report__print(const struct session *s, const struct report_opts *o, FILE *out)
{
	size_t i, with_samples = 0;

	print_header(s, out);
	for (i = 0; i < s->hists.nr; i++)
		with_samples += s->hists.v[i].nr_samples > 0;
	for (i = 0; i < s->hists.nr; i++) {
		const struct hist *hi = &s->hists.v[i];

		if (!hi->nr_samples)
			continue;
		if (with_samples > 1)
			fprintf(out, "\n== %s: %llu samples ==\n", hi->event,
				(unsigned long long)hi->nr_samples);
		print_table(&s->hists, hi, BY_SELF, o->top, out);
		if (o->children)
			print_table(&s->hists, hi, BY_TOTAL, o->top, out);
	}
}
