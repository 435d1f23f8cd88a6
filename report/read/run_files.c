// SPDX-License-Identifier: MIT
/*
 * run_files.c - the files of a run written one per process image (a bare
 * LD_PRELOAD run, `autoprof --per-process`, or a run whose launcher was
 * killed before it merged them): FILE for the first process, FILE.PID for
 * a descendant, FILE.PID.N for the N-th program a process exec'd
 * (preload/session/lifecycle.c names them). Named FILE alone, the report
 * reads them all.
 *
 * No run id ties the files together; time does. A file of the run was
 * written while the run went on: its last write (mtime) is not older than
 * the run's start, in real time: the first record of the run's first file
 * (its CLOCK_DATA feature converts its CLOCK_MONOTONIC times), or earlier by
 * FILE.stat, whose elapsed time counts from the run's first exec (the first
 * file may be a later image's). A sibling written before is an earlier run's
 * (the first file was moved to FILE.old and rewritten, its descendants'
 * files stayed): left out, with a warning.
 */
#include "read/read.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#define SCAN_RECORDS 4096	 /* records read for the file's start (maps first, then COMM) */
#define SLACK_NS     20000000ULL /* file times come from the coarse clock */

const u8 *run_files__feature(const struct perf_file *pf, int bit, u64 *len)
{
	const struct perf_file_header *h = &pf->hdr;
	u64 table = h->data.offset + h->data.size;
	struct perf_file_section s;
	int idx = 0;

	if (pf->pipe || pf->data_repaired || !(h->adds_features[bit / 64] >> (bit % 64) & 1))
		return NULL;
	for (int b = 0; b < bit; b++)
		idx += (int)(h->adds_features[b / 64] >> (b % 64) & 1);
	table += (u64)idx * sizeof(s);
	if (table > pf->size || pf->size - table < sizeof(s))
		return NULL;
	memcpy(&s, pf->base + table, sizeof(s));
	if (s.offset > pf->size || s.size > pf->size - s.offset)
		return NULL;
	*len = s.size;
	return pf->base + s.offset;
}

bool run_files__start(const char *path, u64 *mono, u64 *real, u32 *pid)
{
	struct perf_file pf;
	u64 pos, len = 0;
	const u8 *clock;
	struct record r;

	memset(&pf, 0, sizeof(pf));
	*pid = 0;
	*mono = UINT64_MAX;
	*real = 0;
	if (perf_file__open(&pf, path) || pf.pipe)
		goto out;
	pos = pf.data_off;
	for (int i = 0; i < SCAN_RECORDS && perf_file__next_record(&pf, &pos, &r) > 0; i++) {
		struct sample id;
		size_t body_end;

		if (!sample__record_ids(&pf, &r, &id, &body_end))
			continue;
		if (id.has_time && id.time && id.time < *mono)
			*mono = id.time;
		if (id.has_tid && !*pid)
			*pid = id.pid;
	}
	clock = run_files__feature(&pf, PERF_FEAT_CLOCK_DATA, &len);
	/* u32 version, u32 clockid, u64 wall-clock ns, u64 clockid ns (perf's CLOCK_DATA) */
	if (*mono != UINT64_MAX && clock && len >= 24)
		*real = *mono - ld64(clock + 16) + ld64(clock + 8);
out:
	perf_file__close(&pf);
	if (*mono == UINT64_MAX)
		*mono = 0;
	return *mono != 0;
}

/*
 * The run's start in real time by PATH.stat, the counter totals its first
 * process wrote at its end: their elapsed time (STAT_ROUND) counts from the
 * run's first exec, even when the first file is a later image's (a shell
 * that took no sample hands its name to the program it execs). 0: unknown.
 */
static u64 stat_start(const char *path)
{
	struct perf_file pf;
	struct record r;
	struct stat st;
	u64 pos, elapsed = 0, mtime;
	char *stat_path;

	if (asprintf(&stat_path, "%s.stat", path) < 0)
		return 0;
	memset(&pf, 0, sizeof(pf));
	if (stat(stat_path, &st) == 0 && S_ISREG(st.st_mode) &&
	    perf_file__open(&pf, stat_path) == 0 && !pf.pipe) {
		pos = pf.data_off;
		while (perf_file__next_record(&pf, &pos, &r) > 0)
			if (r.h.type == PERF_RECORD_STAT_ROUND && r.h.size >= 24)
				elapsed = ld64(r.p + 16);
	}
	perf_file__close(&pf);
	free(stat_path);
	mtime = (u64)st.st_mtim.tv_sec * 1000000000ULL + (u64)st.st_mtim.tv_nsec;
	return elapsed && elapsed < mtime ? mtime - elapsed : 0;
}

/* Is @name BASE.PID or BASE.PID.N? Sets *@pid. */
static bool sibling_name(const char *name, const char *base, u32 *pid)
{
	size_t blen = strlen(base);
	const char *n = name + blen;
	char *end;

	if (strncmp(name, base, blen) || n[0] != '.' || n[1] < '0' || n[1] > '9')
		return false;
	*pid = (u32)strtoul(n + 1, &end, 10);
	if (!*end)
		return true;
	if (end[0] != '.' || end[1] < '0' || end[1] > '9')
		return false;
	strtoul(end + 1, &end, 10);
	return !*end;
}

/* Does @name end in ".PID" or ".PID.N" with this @pid (a descendant's file)? */
static bool names_pid(const char *name, u32 pid)
{
	const char *dot = strrchr(name, '.');

	for (int part = 0; dot && part < 2; part++) {
		const char *prev;

		if (!dot[1] || strspn(dot + 1, "0123456789") != strcspn(dot + 1, "."))
			return false;
		if (pid && strtoul(dot + 1, NULL, 10) == pid)
			return true;
		for (prev = dot - 1; prev >= name && *prev != '.'; prev--)
			;
		dot = prev >= name ? prev : NULL;
	}
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* One sibling found: its path and when it was last written (real time, ns). */
struct sibling {
	char *path;
	u64 mtime;
};

/* The files named PATH.PID or PATH.PID.N beside @path: regular perf.data files. */
static int list_siblings(const char *dir, bool in_dir, const char *base, struct sibling **out,
			 size_t *nr)
{
	struct dirent *e;
	size_t cap = 0;
	u32 pid;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		struct stat st;
		char *p;

		if (!sibling_name(e->d_name, base, &pid))
			continue;
		if (array__reserve(out, &cap, *nr + 1, sizeof(**out)) ||
		    asprintf(&p, "%s%s%s", in_dir ? dir : "", in_dir ? "/" : "", e->d_name) < 0) {
			closedir(d);
			return -ENOMEM;
		}
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode) || !perf_file__has_magic(p)) {
			free(p);
			continue;
		}
		(*out)[(*nr)++] = (struct sibling){p, (u64)st.st_mtim.tv_sec * 1000000000ULL +
							  (u64)st.st_mtim.tv_nsec};
	}
	if (d)
		closedir(d);
	return 0;
}

int run_files__find(const char *path, char ***out, size_t *nr, FILE *warn, const char *prog)
{
	char dir[PATH_MAX], *slash;
	struct sibling *sib = NULL;
	size_t nr_sib = 0;
	const char *base;
	u64 start = 0, mono, by_stat;
	u32 first_pid;
	struct stat st;
	bool known;
	int err;

	*out = NULL;
	*nr = 0;
	if (strlen(path) >= sizeof(dir) || !strcmp(path, "-"))
		return 0;
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	base = slash ? path + (slash - dir) + 1 : path;
	if (slash)
		slash == dir ? (void)(dir[1] = 0) : (void)(*slash = 0);
	else
		strcpy(dir, ".");
	err = list_siblings(dir, slash != NULL, base, &sib, &nr_sib);
	/* only a regular file is opened twice (a pipe or FIFO would be consumed) */
	if (err || !nr_sib || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		goto out;
	run_files__start(path, &mono, &start, &first_pid);
	by_stat = stat_start(path);
	if (by_stat && (!start || by_stat < start))
		start = by_stat;
	known = start != 0;
	if (names_pid(base, first_pid))
		goto out; /* FILE.PID[.N] is a descendant's file: BASE.PID.M are not its tree */
	err = array__reserve(out, &(size_t){0}, nr_sib, sizeof(**out));
	for (size_t i = 0; !err && i < nr_sib; i++) {
		if (known && sib[i].mtime + SLACK_NS < start) {
			fprintf(warn,
				"%s: warning: %s is not of %s's run (written before it started): "
				"left out\n",
				prog, sib[i].path, path);
			continue;
		}
		(*out)[(*nr)++] = sib[i].path;
		sib[i].path = NULL;
	}
	qsort(*out, *nr, sizeof(**out), by_name);
out:
	for (size_t i = 0; i < nr_sib; i++)
		free(sib[i].path);
	free(sib);
	if (err) {
		run_files__free(*out, *nr);
		*out = NULL;
		*nr = 0;
	}
	return err;
}

void run_files__free(char **paths, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
}
