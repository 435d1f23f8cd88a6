/* SPDX-License-Identifier: MIT */
/*
 * onefile.c - one run, one file: `autoprof -o FILE -- cmd` leaves FILE
 * holding every process and exec'd image of the run, as `perf record` does.
 *
 * The library writes one file per process image (FILE, FILE.<pid>,
 * FILE.<pid>.<n>: preload/session/lifecycle.c), finished at every flush, so
 * that any ending keeps a profile and `autoprof ctl PID dump` makes FILE
 * complete while a service runs. When the command has ended (a signal
 * included), the launcher merges the files of the run (those names, written
 * since it started, their first record after its start) into FILE (onefile_merge.c, through
 * FILE.merging-PID and a rename), moves the FILE.stat of the run's first process's last image
 * beside it, and removes the merged files. If the launcher itself is killed
 * (SIGKILL), the per-image files stay as a bare LD_PRELOAD run leaves them,
 * and `autoprof-report FILE` reads them all. A process of the run that
 * outlives the command keeps its own file (said in one line).
 * --per-process (AUTOPROF_PER_PROCESS=1) and an -o with %p keep the
 * per-image files; with --window the run's files are merged one window at a
 * time as the windows end (onefile_windows.c).
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
#include <time.h>
#include <unistd.h>

#include "autoprof/perf_file.h"
#include "common.h"
#include "launcher.h"
#include "onefile.h"
#include "read/read.h"

#define SHOWN_IMAGES 10

/* One per-image file of the run. */
struct part {
	char *name;
	int pid, gen; /* from its name: BASE (the first process), BASE.PID, BASE.PID.N */
	bool live;    /* its process still runs: left as it is */
	struct file_summary sum;
};

static struct {
	bool on;
	char output[PATH_MAX]; /* as the user gave it */
	char dir[PATH_MAX];    /* its folder */
	char base[NAME_MAX + 1];
	struct timespec since; /* the run's start (real time, as file times) */
	uint64_t mono_since;   /* and in CLOCK_MONOTONIC, as the records' times */
	struct part *parts;
	size_t nr_parts, nr_merged;
	unsigned live;
	bool counted; /* the parts' samples were counted (the closing lines show them) */
	bool rewrote; /* OUTPUT is the merge of the parts (read again to summarise it) */
	bool unread;  /* one part only, not read: nothing to merge (the closing line reads it) */
} of;

/* The folder and the name of @output (onefile.h). */
void onefile__split(const char *output, char *dir, size_t dir_cap, char *base, size_t base_cap)
{
	const char *slash = strrchr(output, '/');

	snprintf(base, base_cap, "%s", slash ? slash + 1 : output);
	if (!slash)
		snprintf(dir, dir_cap, ".");
	else
		snprintf(dir, dir_cap, "%.*s", slash == output ? 1 : (int)(slash - output), output);
}

/* Does process @pid run (not a zombie)? (onefile.h) */
bool onefile__alive(int pid)
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

/* Is @name a BASE.merging-PID file a killed launcher left (PID gone)? Never a finished profile. */
static bool stale_merge(const char *name)
{
	size_t blen = strlen(of.base);
	const char *pid = name + blen + strlen(".merging-");

	return !strncmp(name, of.base, blen) && !strncmp(name + blen, ".merging-", 9) && *pid &&
	       strspn(pid, "0123456789") == strlen(pid) && !onefile__alive(atoi(pid));
}

int onefile__begin(const char *output)
{
	const struct ap_config *cfg = launcher__options();
	const char *pp = ap_env(AP_ENV_PER_PROCESS);

	if ((pp && *pp && strcmp(pp, "0")) || strstr(output, "%p") || cfg->window_ns ||
	    !cfg->follow)
		return 0; /* per-image files asked for, or a run of one image anyway */
	if (strlen(output) >= sizeof(of.output) - 32)
		return 0;
	snprintf(of.output, sizeof(of.output), "%s", output);
	onefile__split(output, of.dir, sizeof(of.dir), of.base, sizeof(of.base));
	clock_gettime(CLOCK_REALTIME, &of.since);
	{
		struct timespec mono;

		clock_gettime(CLOCK_MONOTONIC, &mono);
		of.mono_since = (uint64_t)mono.tv_sec * 1000000000ULL + (uint64_t)mono.tv_nsec;
	}
	of.on = *of.base != 0; /* (the folder is read once, at the end: find_parts) */
	return 0;
}

/* Is @name BASE, BASE.PID or BASE.PID.N? Sets @p's pid and gen (BASE: 0, -1). */
static bool part_name(const char *name, struct part *p)
{
	size_t blen = strlen(of.base);
	const char *n = name + blen;
	char *end;

	if (strncmp(name, of.base, blen))
		return false;
	p->pid = 0;
	p->gen = -1;
	if (!*n)
		return true;
	if (n[0] != '.' || n[1] < '0' || n[1] > '9')
		return false;
	p->pid = (int)strtol(n + 1, &end, 10);
	p->gen = 0;
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

	if ((x->gen < 0) != (y->gen < 0)) /* BASE, whatever its pid */
		return x->gen < 0 ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* Written since the run started (file times come from the coarse clock: 20 ms of slack)? */
static bool this_run(const struct stat *st)
{
	int64_t m = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	int64_t t = (int64_t)of.since.tv_sec * 1000000000 + of.since.tv_nsec;

	return S_ISREG(st->st_mode) && m >= t - 20000000;
}

/* Add @p to of.parts. Returns 0 or -ENOMEM. */
static int add_part(struct part *p, size_t *cap)
{
	if (of.nr_parts == *cap) {
		struct part *more = realloc(of.parts, (*cap * 2 + 8) * sizeof(*p));

		if (!more)
			return -ENOMEM;
		of.parts = more;
		*cap = *cap * 2 + 8;
	}
	of.parts[of.nr_parts++] = *p;
	return 0;
}

/*
 * Read the run's per-image files into of.parts: their process and command,
 * and with @counts their samples (for the closing lines). The folder is read
 * once: the files named as the run's and written since it started first,
 * then, when there are two or more to merge, each file's first record and
 * summary (a run of one image, the usual one, opens no file here: nothing
 * to merge; the closing line reads its one file). BASE.merging-PID files a
 * killed launcher left are removed on the way. Returns 0 or -errno.
 */
static int find_parts(bool counts)
{
	DIR *d = opendir(of.dir);
	struct dirent *e;
	size_t cap = 0, kept = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[PATH_MAX + NAME_MAX + 2];
		struct part p = {0};
		struct stat st;

		bool stale = stale_merge(e->d_name);

		if (!stale && !part_name(e->d_name, &p))
			continue; /* (most of a folder: no snprintf) */
		snprintf(path, sizeof(path), "%s/%s", of.dir, e->d_name);
		if (stale) {
			unlink(path);
			continue;
		}
		if (lstat(path, &st) < 0 || !this_run(&st))
			continue;
		p.name = strdup(e->d_name);
		if (!p.name || add_part(&p, &cap)) {
			free(p.name);
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	if (of.nr_parts < 2) {
		of.unread = of.nr_parts == 1;
		if (of.unread && of.parts[0].gen >= 0 && onefile__alive(of.parts[0].pid)) {
			of.parts[0].live = true; /* the one file is a process's that still runs */
			of.live++;
		}
		return 0;
	}
	for (size_t i = 0; i < of.nr_parts; i++) {
		struct part p = of.parts[i];
		char path[PATH_MAX + NAME_MAX + 2];
		u64 mono, real;
		u32 pid;

		snprintf(path, sizeof(path), "%s/%s", of.dir, p.name);
		if ((run_files__start(path, &mono, &real, &pid) && mono < of.mono_since) ||
		    (counts ? file_summary__read(path, &p.sum)
			    : file_summary__read_head(path, &p.sum)) < 0) {
			free(p.name); /* not a profile of this run (its first record is older) */
			continue;
		}
		if (!p.pid)
			p.pid = p.sum.pid;
		p.live = p.gen >= 0 &&
			 onefile__alive(p.pid); /* (the first process is gone: waited for) */
		of.live += p.live;
		of.parts[kept++] = p;
	}
	of.nr_parts = kept;
	/* A live process's older images ended at their exec (BASE.PID before
	 * BASE.PID.1, or before an image that names its file in its endpoint but
	 * has not written it yet): their files are whole, merged like the
	 * others, and the process is counted once, by what its image now writes. */
	for (size_t i = 0; i < of.nr_parts; i++) {
		bool ended =
		    of.parts[i].live && onefile_live__moved_on(of.parts[i].pid, of.parts[i].name);

		for (size_t j = 0; j < of.nr_parts && of.parts[i].live && !ended; j++)
			ended =
			    of.parts[j].pid == of.parts[i].pid && of.parts[j].gen > of.parts[i].gen;
		if (ended) {
			of.parts[i].live = false;
			of.live--;
		}
	}
	qsort(of.parts, of.nr_parts, sizeof(*of.parts), by_run_order);
	return 0;
}

static char *path_of(const char *name, const char *suffix)
{
	char *p;

	return asprintf(&p, "%s/%s%s", of.dir, name, suffix) < 0 ? NULL : p;
}

/*
 * The counter totals of the run: the .stat of the first process's last image
 * (the counters the launcher opened, inherited by the whole tree, go on
 * across its execs) becomes OUTPUT.stat.
 */
static void take_stat(void)
{
	const struct part *best = NULL;
	char *from, *to;

	for (size_t i = 0; i < of.nr_parts; i++) {
		const struct part *p = &of.parts[i];

		from = path_of(p->name, ".stat");
		if ((p->gen < 0 || p->pid == of.parts[0].sum.pid) && !p->live && from &&
		    access(from, F_OK) == 0)
			best = p; /* sorted: the last exec of the first process */
		free(from);
	}
	if (!best || best->gen < 0)
		return; /* none, or OUTPUT.stat itself */
	from = path_of(best->name, ".stat");
	to = path_of(of.base, ".stat");
	if (from && to && rename(from, to) < 0)
		fprintf(stderr, "autoprof: cannot move %s to %s: %s\n", from, to, strerror(errno));
	free(from);
	free(to);
}

/* Remove the merged files (not OUTPUT: replaced) and their .stat. */
static void clean_up(void)
{
	for (size_t i = 0; i < of.nr_parts; i++) {
		char *path, *stat;

		if (of.parts[i].live || of.parts[i].gen < 0)
			continue;
		path = path_of(of.parts[i].name, "");
		stat = path_of(of.parts[i].name, ".stat");
		if (path)
			unlink(path);
		if (stat)
			unlink(stat);
		free(path);
		free(stat);
	}
}

/*
 * One line for the processes of the run that outlive the command: their
 * files, written or to come (no file before their first flush), stay beside
 * OUTPUT; those that have not started the library yet are said apart.
 */
static bool has_live_file(int pid)
{
	for (size_t i = 0; i < of.nr_parts; i++)
		if (of.parts[i].live && of.parts[i].pid == pid)
			return true;
	return false;
}

static void say_live(void)
{
	unsigned later, total;

	of.live += onefile_live__unwritten(of.dir, of.base, has_live_file, &later);
	total = of.live + later;
	if (!total)
		return;
	fprintf(stderr,
		"autoprof: %u process%s of the run outlive%s the command: %s own file%s "
		"beside %s (autoprof-report %s reads %s too)",
		total, total == 1 ? "" : "es", total == 1 ? "s" : "", total == 1 ? "its" : "their",
		total == 1 ? " stays" : "s stay", of.output, of.output, total == 1 ? "it" : "them");
	if (later)
		fprintf(stderr,
			"; %u of them %s not started the library yet: no file if %s never do%s",
			later, later == 1 ? "has" : "have", later == 1 ? "it" : "they",
			later == 1 ? "es" : "");
	fputc('\n', stderr);
}

void onefile__finish(char *const *argv, int quiet)
{
	char tmp[PATH_MAX + 32], why[3 * PATH_MAX];
	const char **paths;
	struct onefile_merged res;
	size_t n = 0;
	int err;

	if (!of.on)
		return;
	of.on = false;
	of.counted = !quiet;
	err = find_parts(of.counted);
	paths = calloc(of.nr_parts + 1, sizeof(*paths));
	if (err || !paths) {
		if (!quiet)
			fprintf(
			    stderr,
			    "autoprof: cannot read %s: %s; the run's files stay one per process\n",
			    of.dir, strerror(err ? -err : ENOMEM));
		free(paths);
		return;
	}
	for (size_t i = 0; i < of.nr_parts; i++)
		if (!of.parts[i].live && !(paths[n++] = path_of(of.parts[i].name, "")))
			goto out;
	of.nr_merged = n;
	if (n < 2)
		goto say; /* OUTPUT is the run's one file already */
	snprintf(tmp, sizeof(tmp), "%s.merging-%d", of.output, (int)getpid());
	err = onefile_merge__files(paths, n, tmp, argv, &res, why, sizeof(why));
	if (!err && of.parts[0].gen >= 0 && (err = old_file__move_aside(of.output)) != 0) {
		/* the first process wrote no OUTPUT: one there is an earlier run's */
		snprintf(why, sizeof(why), "cannot move %s to %s.old: %s", of.output, of.output,
			 strerror(-err));
		unlink(tmp);
	}
	if (!err && rename(tmp, of.output) < 0) {
		err = -errno;
		snprintf(why, sizeof(why), "%s: %s", of.output, strerror(errno));
		unlink(tmp);
	}
	if (err) {
		of.nr_merged = 0;
		if (!quiet)
			fprintf(stderr,
				"autoprof: could not merge the run's %zu files into %s (%s); they "
				"stay one per "
				"process (autoprof-report %s reads them all)\n",
				n, of.output, why, of.output);
		goto out;
	}
	of.rewrote = true;
	take_stat();
	clean_up();
say:
	if (!quiet)
		say_live();
out:
	for (size_t i = 0; i < n; i++)
		free((char *)paths[i]);
	free(paths);
}

bool onefile__summary(const char *dir, const char *name, struct file_summary *s)
{
	for (size_t i = 0;
	     i < of.nr_parts && of.counted && !of.rewrote && !of.unread && !strcmp(dir, of.dir);
	     i++)
		if (!of.parts[i].live && !strcmp(of.parts[i].name, name)) {
			*s = of.parts[i].sum;
			return true;
		}
	return false;
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
			p->sum.samples == 1 ? "" : "s", (unsigned long long)p->sum.lost,
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
