// SPDX-License-Identifier: MIT
/*
 * listing.c - `autoprof-report --list [DIR|FILE...]`: one line per profile
 * (the perf.data files of a directory, or the files named) with what it
 * holds: process id, samples, lost samples, the time its samples span and
 * the command. Answers "which file of this process tree holds my program?"
 * without reading any symbols.
 */
#include "read/read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct listed {
	char *path;
	u32 pid;
	u64 samples, lost, first, last;
	u64 lost_records, lost_samples; /* LOST, LOST_SAMPLES: the same losses in perf 6.x */
	u64 aux;			/* AUXTRACE records: trace data not decoded */
	char *partial;			/* what could not be read, or NULL */
	char *cmd; /* the CMDLINE feature (features.c drops autoprof's own first word) */
	const char *err;
	bool from_dir, is_stat; /* found in a directory; a counters file (not listed then) */
};

/* Walk the records of @pf: samples, lost samples, the first process, the time span. */
static void walk(struct perf_file *pf, struct listed *l)
{
	u64 pos = pf->data_off;
	struct record r;

	l->first = UINT64_MAX;
	int ret;

	while ((ret = perf_file__next_record(pf, &pos, &r)) > 0) {
		struct sample s;

		switch (r.h.type) {
		case PERF_RECORD_SAMPLE:
			l->samples++;
			if (sample__parse(pf, &r, &s))
				break;
			if (!l->pid && s.has_tid)
				l->pid = s.pid;
			if (s.has_time && s.time < l->first)
				l->first = s.time;
			if (s.has_time && s.time > l->last)
				l->last = s.time;
			break;
		case PERF_RECORD_LOST:
			l->lost_records += REC(struct perf_record_lost, &r).lost;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			l->lost_samples += REC(struct perf_record_lost_samples, &r).lost;
			break;
		case PERF_RECORD_AUXTRACE:
			l->aux++;
			break;
		case PERF_RECORD_COMM:
			if (!l->pid)
				l->pid = REC(struct perf_record_comm, &r).pid;
			break;
		}
	}
	l->lost = l->lost_records > l->lost_samples ? l->lost_records : l->lost_samples;
	if (ret < 0 && asprintf(&l->partial, "PARTIAL: %s", perf_file__error(pf)) < 0)
		l->partial = NULL;
	else if (ret >= 0 && l->aux &&
		 asprintf(&l->partial,
			  "(%llu AUXTRACE records: trace data not decoded; SAMPLES counts "
			  "sampled records only)",
			  (unsigned long long)l->aux) < 0)
		l->partial = NULL;
}

/* Fill @l for the file at l->path; l->err says why it could not be read. */
static void summarize(struct listed *l)
{
	struct perf_file pf;
	char warn[256];
	const char *cmd;

	memset(&pf, 0, sizeof(pf));
	if (perf_file__open(&pf, l->path)) {
		l->err = "not a readable perf.data file";
		goto out;
	}
	if (features__read(&pf, warn, sizeof(warn)) == -ENOMEM) {
		l->err = "out of memory";
		goto out;
	}
	if (pf.feat.has_stat) {
		l->is_stat = true;
		l->err = "counter totals (perf stat record file)";
		goto out;
	}
	if (!pf.pipe && pf.feat.has_comp && stream__expand(&pf, pf.data_off, pf.data_end)) {
		l->err = "compressed records that cannot be read";
		goto out;
	}
	walk(&pf, l);
	cmd = pf.feat.cmdline ? pf.feat.cmdline : ""; /* autoprof's: the program's */
	l->cmd = strdup(cmd);
out:
	perf_file__close(&pf);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct listed *)a)->path, ((const struct listed *)b)->path);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int listing__dir(const char *dir, char ***v, size_t *nr, size_t *cap)
{
	bool here = !strcmp(dir, ".");
	size_t first = *nr;
	struct dirent *e;
	struct stat st;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.' ||
		    asprintf(&p, "%s%s%s", here ? "" : dir, here ? "" : "/", e->d_name) < 0)
			continue;
		/* a regular file, or a link to one (stat only when readdir cannot say) */
		if ((e->d_type != DT_REG && ((e->d_type != DT_UNKNOWN && e->d_type != DT_LNK) ||
					     stat(p, &st) || !S_ISREG(st.st_mode))) ||
		    !perf_file__has_magic(p) || array__reserve(v, cap, *nr + 1, sizeof(**v))) {
			free(p);
			continue;
		}
		(*v)[(*nr)++] = p;
	}
	closedir(d);
	qsort(*v + first, *nr - first, sizeof(**v), by_name);
	return 0;
}

/* Add @path (a profile, or every profile directly inside a directory) to @v. */
static int collect(const char *path, struct listed **v, size_t *nr, size_t *cap)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		char **paths = NULL;
		size_t n = 0, cap_paths = 0, i;
		int err = listing__dir(path, &paths, &n, &cap_paths);

		for (i = 0; i < n; i++) {
			if (!err && array__reserve(v, cap, *nr + 1, sizeof(**v)))
				err = -ENOMEM;
			if (err)
				free(paths[i]);
			else
				(*v)[(*nr)++] = (struct listed){.path = paths[i], .from_dir = true};
		}
		free(paths);
		return err;
	}
	if (stat(path, &st))
		return -errno;
	if (array__reserve(v, cap, *nr + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[*nr] = (struct listed){.path = strdup(path)};
	if (!(*v)[*nr].path)
		return -ENOMEM;
	(*nr)++;
	return 0;
}

/*
 * Print the listing of @nr paths (files or directories) on @out, a header
 * line first. Returns 0, or 1 after one line on stderr naming a path that
 * does not exist.
 */
int listing__print(const char *const *paths, size_t nr, FILE *out, bool strict)
{
	struct listed *v = NULL;
	size_t n = 0, cap = 0, width = 4;
	int status = 0;

	for (size_t i = 0; i < nr; i++) {
		int err = collect(paths[i], &v, &n, &cap);

		if (err) {
			fprintf(stderr, "autoprof-report: %s: %s\n", paths[i], strerror(-err));
			status = 1;
		}
	}
	qsort(v, n, sizeof(*v), by_path);
	for (size_t i = 0; i < n; i++) {
		summarize(&v[i]);
		if (strlen(v[i].path) > width)
			width = strlen(v[i].path);
	}
	if (!n && !status)
		fprintf(stderr, "autoprof-report: no perf.data files in %s\n",
			nr == 1 ? paths[0] : "the arguments");
	if (n)
		fprintf(out, "%-*s  %7s  %9s  %6s  %9s  %s\n", (int)width, "FILE", "PID", "SAMPLES",
			"LOST", "DURATION", "COMMAND");
	for (size_t i = 0; i < n; i++) {
		struct listed *l = &v[i];

		if (l->is_stat && l->from_dir)
			; /* FILE.stat beside FILE: its totals are FILE's, shown by its report */
		else if (l->err)
			fprintf(out, "%-*s  %s\n", (int)width, l->path, l->err);
		else
			fprintf(out, "%-*s  %7u  %9llu  %6llu  %8.3fs  %s%s%s\n", (int)width,
				l->path, l->pid, (unsigned long long)l->samples,
				(unsigned long long)l->lost,
				l->last > l->first ? (double)(l->last - l->first) / 1e9 : 0.0,
				l->cmd ? l->cmd : "", l->partial ? "  " : "",
				l->partial ? l->partial : "");
		if (strict && (l->partial || (l->err && !l->is_stat)))
			status = 1;
		free(l->partial);
		free(l->path);
		free(l->cmd);
	}
	free(v);
	return status;
}
