/* SPDX-License-Identifier: MIT */
/*
 * onefile.c - one run, one file: `autoprof -o FILE -- cmd` leaves FILE
 * holding every process and exec'd image of the run, as `perf record` does.
 *
 * The library writes one file per process image (FILE, FILE.<pid>,
 * FILE.<pid>.<n>: preload/session/lifecycle.c), finished at every flush, so
 * that any ending keeps a profile. Under the launcher it writes them into a
 * private folder beside FILE, FILE.parts-<launcher pid>/, and at the end the
 * launcher merges them into FILE (onefile_merge.c), moves FILE.stat of the
 * run's first process beside it, and removes the folder. Whatever ends the
 * command (a signal included), the merge happens; if the launcher itself is
 * killed (SIGKILL), the folder stays, every file in it readable, and
 * `autoprof-report FILE.parts-PID/FILE` reads them all (the next run with the
 * same -o names such a folder in one line). A process of the run that
 * outlives the command keeps its file in the folder (said in one line).
 * --per-process (AUTOPROF_PER_PROCESS=1), an -o with %p and --window keep the
 * per-image files where they were (a window is each image's own: windows start
 * with each image, so those of two processes do not line up).
 * Not async-signal-safe.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "launcher.h"
#include "onefile.h"

#define PARTS_SUFFIX ".parts-"
#define SHOWN_IMAGES 10

/* One per-image file of the private folder. */
struct part {
	char *name;
	int pid, gen; /* from its name: BASE (the first process), BASE.PID, BASE.PID.N */
	bool live;    /* its process still runs: left in the folder */
	struct file_summary sum;
};

static struct {
	bool on;
	char output[PATH_MAX]; /* as the user gave it */
	char dir[PATH_MAX];    /* the private folder, absolute */
	char base[NAME_MAX + 1];
	struct part *parts;
	size_t nr_parts, nr_merged;
} of;

/* The folder of @path (".": none) into @out. */
static void dir_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, cap, ".");
	else if (slash == path)
		snprintf(out, cap, "/");
	else
		snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

/* Does process @pid run (not a zombie)? */
static bool alive(int pid)
{
	char path[64], buf[256], *close_paren;
	FILE *f;
	bool yes;

	if (pid <= 0 || (kill(pid, 0) < 0 && errno != EPERM))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	yes = fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')) &&
	      close_paren[1] == ' ' && close_paren[2] != 'Z';
	fclose(f);
	return yes;
}

/* One line for each folder a killed launcher left beside the output (BASE.parts-PID). */
static void say_left_folders(const char *parent)
{
	size_t blen = strlen(of.base);
	struct dirent *e;
	DIR *d = opendir(parent);

	while (d && (e = readdir(d))) {
		const char *pid = e->d_name + blen + strlen(PARTS_SUFFIX);

		if (strncmp(e->d_name, of.base, blen) ||
		    strncmp(e->d_name + blen, PARTS_SUFFIX, strlen(PARTS_SUFFIX)) || !*pid ||
		    strspn(pid, "0123456789") != strlen(pid) || alive(atoi(pid)))
			continue;
		fprintf(
		    stderr,
		    "autoprof: %s/%s holds the files of an earlier run whose launcher was killed "
		    "(autoprof-report %s/%s/%s reads them)\n",
		    parent, e->d_name, parent, e->d_name, of.base);
	}
	if (d)
		closedir(d);
}

int onefile__begin(const char *output, int quiet)
{
	const struct ap_config *cfg = launcher__options();
	const char *pp = ap_env(AP_ENV_PER_PROCESS);
	char parent[PATH_MAX], abs[PATH_MAX], path[PATH_MAX + NAME_MAX + 2];
	const char *slash = strrchr(output, '/');

	if ((pp && *pp && strcmp(pp, "0")) || strstr(output, "%p") || cfg->window_ns ||
	    !cfg->follow)
		return 0; /* per-image files asked for, or a run of one image anyway */
	snprintf(of.base, sizeof(of.base), "%s", slash ? slash + 1 : output);
	dir_of(output, parent, sizeof(parent));
	if (!*of.base || !realpath(parent, abs)) {
		fprintf(stderr, "autoprof: -o/--output %s: %s\n", output,
			*of.base ? strerror(errno) : "names a folder, not a file");
		return -1;
	}
	if (!quiet)
		say_left_folders(abs);
	for (int i = 0;; i++) {
		int n = i ? snprintf(of.dir, sizeof(of.dir), "%s/%s%s%d.%d", abs, of.base,
				     PARTS_SUFFIX, (int)getpid(), i)
			  : snprintf(of.dir, sizeof(of.dir), "%s/%s%s%d", abs, of.base,
				     PARTS_SUFFIX, (int)getpid());

		if (n < 0 || (size_t)n >= sizeof(of.dir) - NAME_MAX - 2) {
			fprintf(stderr, "autoprof: -o/--output %s: the path is too long\n", output);
			return -1;
		}
		if (mkdir(of.dir, 0700) == 0)
			break;
		if (errno != EEXIST || i == 100) {
			fprintf(stderr, "autoprof: cannot make %s: %s\n", of.dir, strerror(errno));
			return -1;
		}
	}
	snprintf(of.output, sizeof(of.output), "%s", output);
	snprintf(path, sizeof(path), "%s/%s", of.dir, of.base);
	setenv(ap_env_name(AP_ENV_OUTPUT), path, 1);
	of.on = true;
	return 0;
}

/* Is @name BASE, BASE.PID or BASE.PID.N? Sets @p's pid and gen (BASE: pid 0). */
static bool part_name(const char *name, struct part *p)
{
	size_t blen = strlen(of.base);
	const char *n = name + blen;
	char *end;

	if (strncmp(name, of.base, blen))
		return false;
	p->pid = p->gen = 0;
	if (!*n)
		return true;
	if (n[0] != '.' || n[1] < '0' || n[1] > '9')
		return false;
	p->pid = (int)strtol(n + 1, &end, 10);
	if (!*end)
		return true;
	if (end[0] != '.' || end[1] < '0' || end[1] > '9')
		return false;
	p->gen = (int)strtol(end + 1, &end, 10);
	return !*end;
}

/* The run's first process's file first, then by pid and exec. */
static int by_run_order(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* Read the folder's per-image files into of.parts. Returns 0 or -ENOMEM. */
static int find_parts(void)
{
	DIR *d = opendir(of.dir);
	struct dirent *e;
	size_t cap = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct part p = {0};
		char path[PATH_MAX + NAME_MAX + 2];

		if (!part_name(e->d_name, &p))
			continue;
		snprintf(path, sizeof(path), "%s/%s", of.dir, e->d_name);
		if (summary__read(path, &p.sum) < 0)
			continue; /* not a profile: left there */
		if (!p.pid)
			p.pid = p.sum.pid;
		p.name = strdup(e->d_name);
		if (p.name && of.nr_parts == cap) {
			struct part *more = realloc(of.parts, (cap * 2 + 8) * sizeof(p));

			if (more)
				of.parts = more, cap = cap * 2 + 8;
		}
		if (!p.name || of.nr_parts == cap) {
			free(p.name);
			closedir(d);
			return -ENOMEM;
		}
		of.parts[of.nr_parts++] = p;
	}
	closedir(d);
	for (size_t i = 0; i < of.nr_parts; i++) {
		struct part *p = &of.parts[i];

		if (!strcmp(p->name, of.base))
			p->pid = 0, p->gen = -1; /* first, whatever its pid */
		p->live = alive(p->pid ? p->pid : p->sum.pid);
	}
	qsort(of.parts, of.nr_parts, sizeof(*of.parts), by_run_order);
	return 0;
}

/* Move a file at @path out of the way to PATH.old, as perf record does. Returns 0 or -errno. */
static int move_old(const char *path)
{
	char old[PATH_MAX + 8];
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	snprintf(old, sizeof(old), "%s.old", path);
	return rename(path, old) < 0 ? -errno : 0;
}

/*
 * The counter totals of the run: FILE.stat of the first process's last image
 * (the counters the launcher opened, inherited by the whole tree, go on
 * across its execs), moved to OUTPUT.stat; an earlier run's OUTPUT.stat is
 * not this one's and goes.
 */
static void take_stat(void)
{
	char from[PATH_MAX + NAME_MAX + 8], to[PATH_MAX + 8];
	const struct part *best = NULL;
	int top = 0;

	for (size_t i = 0; i < of.nr_parts; i++) {
		const struct part *p = &of.parts[i];

		if (!i)
			top = p->sum.pid;
		snprintf(from, sizeof(from), "%s/%s.stat", of.dir, p->name);
		if ((!i || p->pid == top) && !p->live && access(from, F_OK) == 0)
			best = p; /* sorted: the last exec of the first process wins */
	}
	snprintf(to, sizeof(to), "%s.stat", of.output);
	if (!best) {
		unlink(to);
		return;
	}
	snprintf(from, sizeof(from), "%s/%s.stat", of.dir, best->name);
	if (rename(from, to) < 0)
		fprintf(stderr, "autoprof: cannot move %s to %s: %s\n", from, to, strerror(errno));
}

/*
 * Remove the merged files and their .stat, and the folder when nothing else
 * is in it. Returns false when the folder stays.
 */
static bool clean_up(void)
{
	char path[PATH_MAX + NAME_MAX + 8];

	for (size_t i = 0; i < of.nr_parts; i++) {
		if (of.parts[i].live)
			continue;
		snprintf(path, sizeof(path), "%s/%s", of.dir, of.parts[i].name);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s.stat", of.dir, of.parts[i].name);
		unlink(path);
	}
	return rmdir(of.dir) == 0;
}

void onefile__finish(char *const *argv, int quiet)
{
	char tmp[PATH_MAX + 16], why[3 * PATH_MAX];
	const char **paths;
	struct onefile_merged res;
	size_t n = 0, live = 0;
	int err;

	if (!of.on)
		return;
	of.on = false;
	err = find_parts();
	paths = calloc(of.nr_parts + 1, sizeof(*paths));
	if (err || !paths) {
		fprintf(stderr, "autoprof: cannot read %s: %s; the run's files stay there\n",
			of.dir, strerror(err ? -err : ENOMEM));
		free(paths);
		return;
	}
	for (size_t i = 0; i < of.nr_parts; i++) {
		char *path;

		if (of.parts[i].live) {
			live++;
			continue;
		}
		if (asprintf(&path, "%s/%s", of.dir, of.parts[i].name) < 0)
			goto out;
		paths[n++] = path;
	}
	of.nr_merged = n;
	if (!n) {
		rmdir(of.dir); /* the command did not run, or no image wrote a file */
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s/.merged", of.dir);
	if (n == 1)
		err = rename(paths[0], tmp) < 0 ? -errno : 0;
	else
		err = onefile_merge(paths, n, tmp, argv, &res, why, sizeof(why));
	if (n == 1 && err)
		snprintf(why, sizeof(why), "%s: %s", paths[0], strerror(-err));
	if (!err && (err = move_old(of.output)) != 0)
		snprintf(why, sizeof(why), "cannot move %s to %s.old: %s", of.output, of.output,
			 strerror(-err));
	if (!err && rename(tmp, of.output) < 0) {
		err = -errno;
		snprintf(why, sizeof(why), "%s: %s", of.output, strerror(errno));
	}
	if (err) {
		if (n == 1)
			rename(tmp, paths[0]);
		unlink(tmp);
		fprintf(stderr,
			"autoprof: could not write the run's one file (%s); its %zu per-process "
			"files are in %s (autoprof-report %s/%s reads them all)\n",
			why, n, of.dir, of.dir, of.base);
		goto out;
	}
	take_stat();
	if (!clean_up() && !live && !quiet)
		fprintf(stderr, "autoprof: %s keeps files that are no profile of the run\n",
			of.dir);
	if (live && !quiet)
		fprintf(stderr,
			"autoprof: %zu process%s of the run outlive%s the command: %s profile%s "
			"go%s on in %s\n",
			live, live == 1 ? "" : "es", live == 1 ? "s" : "",
			live == 1 ? "its" : "their", live == 1 ? "" : "s", live == 1 ? "es" : "",
			of.dir);
out:
	for (size_t i = 0; i < n; i++)
		free((char *)paths[i]);
	free(paths);
}

/* Most samples first. */
static int by_samples(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->sum.samples != y->sum.samples)
		return x->sum.samples < y->sum.samples ? 1 : -1;
	return by_run_order(a, b);
}

void onefile__say_images(int quiet)
{
	size_t shown = 0;

	if (quiet || of.nr_merged < 2)
		goto out;
	qsort(of.parts, of.nr_parts, sizeof(*of.parts), by_samples);
	fprintf(stderr, "autoprof:   it holds %zu process images:\n", of.nr_merged);
	for (size_t i = 0; i < of.nr_parts && shown < SHOWN_IMAGES; i++) {
		const struct part *p = &of.parts[i];

		if (p->live)
			continue;
		fprintf(stderr, "autoprof:     pid %-7d %8llu sample%s, %llu lost  %s\n",
			p->sum.pid, (unsigned long long)p->sum.samples,
			p->sum.samples == 1 ? " " : "s", (unsigned long long)p->sum.lost,
			p->sum.cmd);
		shown++;
	}
	if (of.nr_merged > shown)
		fprintf(stderr,
			"autoprof:     and %zu more (autoprof-report --sort pid shows all)\n",
			of.nr_merged - shown);
out:
	for (size_t i = 0; i < of.nr_parts; i++)
		free(of.parts[i].name);
	free(of.parts);
	of.parts = NULL;
	of.nr_parts = 0;
}
