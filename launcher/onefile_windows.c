/* SPDX-License-Identifier: MIT */
/*
 * onefile_windows.c - one run, one file per window: under the launcher,
 * `--window T` leaves one file per window holding every process of the run
 * for that span, named as the first process names its windows
 * (FILE.<UTC start of the window>).
 *
 * The launcher gives the library its start (AUTOPROF_WINDOW_EPOCH, in
 * CLOCK_MONOTONIC ns, half a millisecond off a millisecond so that every
 * process names window k alike): window k spans EPOCH + k * T in every
 * process (preload/handler/windows.c). Each process still writes its own
 * file per window (FILE.<stamp>, FILE.<pid>.<stamp>, FILE.<pid>.<n>.<stamp>);
 * a thread of the launcher polls the folder and, once window k has ended and
 * every process that has a file of it has finished it (it is gone, or it has
 * a file of a later window: a process ends a window at its first sample
 * after the end), merges them (onefile_merge.c) into FILE.<stamp of window k>
 * and runs --on-window's hook on that file. A process that sleeps through
 * the end is asked to end its window (`autoprof ctl PID dump`, which ends a
 * window past its end) 250 ms after it; one that still has not 2 s (or T, if
 * longer) after the end is left out: the window is merged without it, its
 * file stays beside and joins the merged file when the run ends (said in one
 * line). A merge that fails leaves the window's files as they are and says
 * so in one line. Not async-signal-safe.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "launcher.h"
#include "onefile.h"
#include "onefile_wstat.h"
#include "read/read.h"

#define ASK_AFTER_NS   250000000ULL  /* a window's end: idle processes are asked to end it */
#define LEAVE_AFTER_NS 2000000000ULL /* and then, at least, merged without them */
#define MAX_ASKS       64

enum wstate { W_PENDING, W_ASKED, W_MERGED, W_FAILED, W_REMOVED };

/* One process's file of a window. */
struct wpart {
	char *name;
	long k;
	int pid;
	bool open; /* its process has not finished the window yet */
};

static struct {
	bool on, quiet;
	char output[PATH_MAX], dir[PATH_MAX], base[NAME_MAX + 1];
	char *const *argv;
	uint64_t epoch, w; /* CLOCK_MONOTONIC ns */
	unsigned keep;	   /* AUTOPROF_KEEP: the newest merged windows kept, or 0 */
	double epoch_ms;   /* the epoch in UTC ms, for the stamps */
	struct timespec since;
	unsigned char *state; /* per window index */
	long nr_state;
	struct wpart *parts;
	size_t nr_parts, cap_parts;
	pthread_t thread;
	pthread_mutex_t lock;
	int stop[2];
	bool thread_on, finished;
	pid_t asks[MAX_ASKS];
	int nr_asks;
	unsigned merged, late;
} wn = {.lock = PTHREAD_MUTEX_INITIALIZER, .stop = {-1, -1}};

static uint64_t mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/*
 * Is @name a window file of the run: BASE, ".pid" and ".n" parts, then
 * ".yyyymmddThhmmss.mmm"? Sets @k, the window's index from the epoch.
 */
static bool window_part(const char *name, long *k)
{
	const size_t slen = 20;
	size_t len = strlen(name), blen = strlen(wn.base);
	struct tm tm = {0};
	int ms;
	double at;

	if (len < blen + slen || strncmp(name, wn.base, blen) ||
	    !onefile_wstat__is_stamp(name + len - slen))
		return false;
	for (size_t i = blen; i < len - slen; i++)
		if (name[i] != '.' && (name[i] < '0' || name[i] > '9'))
			return false;
	if (sscanf(name + len - slen + 1, "%4d%2d%2dT%2d%2d%2d.%3d", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	at = (double)timegm(&tm) * 1000.0 + ms;
	at = (at - wn.epoch_ms) / ((double)wn.w / 1e6); /* k, give or take the clocks' noise */
	*k = (long)(at < 0 ? at - 0.5 : at + 0.5);
	return *k >= 0;
}

void onefile_windows__begin(const char *output, char *const *argv, int quiet)
{
	const struct ap_config *cfg = launcher__options();
	const char *pp = ap_env(AP_ENV_PER_PROCESS);
	struct timespec rt;
	uint64_t now;
	char buf[32];

	if (!cfg->window_ns || (pp && *pp && strcmp(pp, "0")) || strstr(output, "%p") ||
	    !cfg->follow || strlen(output) >= sizeof(wn.output) - 64)
		return; /* per-image files asked for, or one image */
	snprintf(wn.output, sizeof(wn.output), "%s", output);
	onefile__split(output, wn.dir, sizeof(wn.dir), wn.base, sizeof(wn.base));
	if (!*wn.base)
		return;
	onefile_wstat__remove_stale(wn.dir, wn.base);
	wn.argv = argv;
	wn.quiet = quiet;
	wn.w = cfg->window_ns;
	wn.keep = cfg->keep;
	clock_gettime(CLOCK_REALTIME, &wn.since);
	now = mono_now();
	clock_gettime(CLOCK_REALTIME, &rt);
	/* half a millisecond off the millisecond: every process stamps window k alike */
	wn.epoch = now / 1000000ULL * 1000000ULL - 500000ULL;
	wn.epoch_ms =
	    ((double)rt.tv_sec * 1e9 + (double)rt.tv_nsec - (double)(now - wn.epoch)) / 1e6;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)wn.epoch);
	setenv(ap_env_name(AP_ENV_WINDOW_EPOCH), buf, 1);
	on_window__merged_only();
	wn.on = true;
}

static enum wstate state_of(long k)
{
	return k < wn.nr_state ? (enum wstate)wn.state[k] : W_PENDING;
}

/* Read the folder's window files of this run into wn.parts. */
static void find_parts(void)
{
	int64_t since = (int64_t)wn.since.tv_sec * 1000000000 + wn.since.tv_nsec;
	DIR *d = opendir(wn.dir);
	struct dirent *e;

	for (size_t i = 0; i < wn.nr_parts; i++)
		free(wn.parts[i].name);
	wn.nr_parts = 0;
	while (d && (e = readdir(d))) {
		char path[PATH_MAX + NAME_MAX + 2];
		struct wpart p = {0};
		enum wstate s;
		struct stat st;
		u64 mono, real;
		u32 pid = 0;

		snprintf(path, sizeof(path), "%s/%s", wn.dir, e->d_name);
		if (!window_part(e->d_name, &p.k))
			continue;
		s = state_of(p.k);
		if (s == W_FAILED || s == W_REMOVED ||
		    (s == W_MERGED && strlen(e->d_name) == strlen(wn.base) + 20))
			continue; /* done with: not read again at every look */
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec < since - 20000000)
			continue;
		if (run_files__start(path, &mono, &real, &pid) && mono + 20000000 < wn.epoch)
			continue; /* an earlier run's */
		p.pid = (int)pid;
		if (wn.nr_parts == wn.cap_parts) {
			struct wpart *more =
			    realloc(wn.parts, (wn.cap_parts * 2 + 16) * sizeof(*more));

			if (!more)
				break;
			wn.parts = more;
			wn.cap_parts = wn.cap_parts * 2 + 16;
		}
		if (!(p.name = strdup(e->d_name)))
			break;
		wn.parts[wn.nr_parts++] = p;
	}
	if (d)
		closedir(d);
	/* open: its process runs and has no file of a later window */
	for (size_t i = 0; i < wn.nr_parts; i++) {
		struct wpart *p = &wn.parts[i];

		p->open = p->pid <= 0 || onefile__alive(p->pid);
		for (size_t j = 0; j < wn.nr_parts && p->open; j++)
			if (wn.parts[j].pid == p->pid && wn.parts[j].k > p->k)
				p->open = false;
	}
}

static void set_state(long k, enum wstate s)
{
	if (k >= wn.nr_state) {
		long n = k * 2 + 16;
		unsigned char *more = realloc(wn.state, (size_t)n);

		if (!more)
			return;
		memset(more + wn.nr_state, W_PENDING, (size_t)(n - wn.nr_state));
		wn.state = more;
		wn.nr_state = n;
	}
	wn.state[k] = (unsigned char)s;
}

/*
 * May process @pid be asked (a signal) without noticing: one of its threads
 * runs, or sleeps in a wait that a handler does not cut short (the waits of
 * ctl.c's restartable())? A thread in poll, epoll_wait or a sleep would see
 * EINTR (doc/limits.md): such a process is not asked, and is left out of
 * the window until it ends it itself or the command ends.
 */
static bool askable(int pid)
{
	static const char *const waits[] = {"futex",	    "pipe_read",       "unix_stream_read",
					    "sk_wait_data", "inet_csk_accept", "do_wait",
					    "wait_woken"};
	char path[NAME_MAX + 64], buf[256];
	struct dirent *e;
	bool yes = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && !yes && (e = readdir(d))) {
		FILE *f;
		char *paren;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, e->d_name);
		if ((f = fopen(path, "re"))) {
			yes = fgets(buf, sizeof(buf), f) && (paren = strrchr(buf, ')')) &&
			      paren[1] == ' ' && paren[2] == 'R';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid, e->d_name);
		if (!yes && (f = fopen(path, "re"))) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			buf[n] = 0;
			for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]) && !yes; i++)
				yes = strstr(buf, waits[i]) != NULL;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return yes;
}

/* `autoprof ctl PID dump`, unprofiled and silent: a process past a window's end ends it. */
static void ask(int pid)
{
	extern char **environ;
	char arg[16], **env;
	size_t n = 0;
	pid_t c;

	if (wn.nr_asks == MAX_ASKS || !askable(pid))
		return;
	snprintf(arg, sizeof(arg), "%d", pid);
	while (environ[n])
		n++;
	env = calloc(n + 1, sizeof(*env)); /* without LD_PRELOAD: not profiled */
	if (!env)
		return;
	n = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11))
			env[n++] = *e;
	c = fork();
	if (c == 0) { /* (a thread's fork: system calls only until the exec) */
		int null = open("/dev/null", O_RDWR);
		char *const av[] = {"autoprof", "ctl", arg, "dump", NULL};

		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		close_range(3, ~0U, 0);
		execve("/proc/self/exe", av, env);
		_exit(127);
	}
	free(env);
	if (c > 0)
		wn.asks[wn.nr_asks++] = c;
}

static void reap_asks(void)
{
	for (int i = 0; i < wn.nr_asks; i++)
		if (waitpid(wn.asks[i], NULL, WNOHANG) != 0) {
			wn.asks[i--] = wn.asks[--wn.nr_asks];
		}
}

/* The run's order: by pid, then by name (the exec'd images after). */
static int by_order(const void *a, const void *b)
{
	const struct wpart *x = *(struct wpart *const *)a, *y = *(struct wpart *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Merge window @k's files (@open ones too when @all) into FILE.<stamp of k>
 * (a merged file of k already there first). @final: the command ended.
 */
static void merge_window(long k, bool all, bool final)
{
	char stamp[AP_STAMP_LEN], target[NAME_MAX + AP_STAMP_LEN + 2], why[3 * PATH_MAX];
	char tpath[2 * PATH_MAX], tmp[2 * PATH_MAX + 32];
	struct wpart **in = calloc(wn.nr_parts + 1, sizeof(*in));
	const char **paths = calloc(wn.nr_parts + 2, sizeof(*paths));
	size_t n = 0, left = 0, np = 0;
	struct onefile_merged res;
	bool has_target;
	int err = 0;

	window_stamp__utc(wn.epoch + (uint64_t)k * wn.w, stamp);
	snprintf(target, sizeof(target), "%s.%s", wn.base, stamp);
	if (strcmp(wn.dir, "."))
		snprintf(tpath, sizeof(tpath), "%s/%s", wn.dir, target);
	else
		snprintf(tpath, sizeof(tpath), "%s", target);
	/* the first process's own file of k, or the merged one */
	has_target = access(tpath, F_OK) == 0;
	if (!in || !paths)
		goto out;
	for (size_t i = 0; i < wn.nr_parts; i++) {
		struct wpart *p = &wn.parts[i];

		if (p->k != k || !strcmp(p->name, target))
			continue;
		if (p->open && !all) {
			left++;
			continue;
		}
		in[n++] = p;
	}
	for (size_t i = 0; i < wn.nr_parts; i++)
		if (wn.parts[i].k == k && !strcmp(wn.parts[i].name, target) && wn.parts[i].open &&
		    !all && state_of(k) != W_MERGED)
			goto out; /* the first process's own, still open: merged when it ends */
	if (!n && state_of(k) == W_MERGED)
		goto out; /* nothing new */
	qsort(in, n, sizeof(*in), by_order);
	if (has_target && !(paths[np++] = strdup(tpath)))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (asprintf((char **)&paths[np++], "%s/%s", wn.dir, in[i]->name) < 0) {
			paths[--np] = NULL;
			goto out;
		}
	if (np < 2) {
		if (np == 1 && !has_target && link(paths[0], tpath) < 0) {
			err = -errno;
			snprintf(why, sizeof(why), "%s: %s", tpath, strerror(errno));
		}
	} else {
		snprintf(tmp, sizeof(tmp), "%s.merging-%d", tpath, (int)getpid());
		err = onefile_merge__files(paths, np, tmp, wn.argv, &res, why, sizeof(why));
		if (!err && !has_target && access(tpath, F_OK) == 0) {
			err = -EEXIST; /* never overwrite a file that was not an input */
			snprintf(why, sizeof(why), "%s appeared", tpath);
			unlink(tmp);
		}
		if (!err && rename(tmp, tpath) < 0) {
			err = -errno;
			snprintf(why, sizeof(why), "%s: %s", tpath, strerror(errno));
			unlink(tmp);
		}
	}
	if (err) {
		set_state(k, W_FAILED);
		if (!wn.quiet)
			fprintf(
			    stderr,
			    "autoprof: could not merge window %s's %zu files into %s (%s); they "
			    "stay one per process\n",
			    stamp, np, tpath, why);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		unlink(paths[np - n + i]);
		in[i]->k = -1;
	}
	if (left && !final && !wn.late++ && !wn.quiet)
		fprintf(
		    stderr,
		    "autoprof: window %s: %zu process%s had not ended it %.1f s after its end "
		    "(asleep in a wait that a signal would cut short, or stopped): merged without "
		    "%s; %s file%s beside %s until the run ends (said once; the end counts them)\n",
		    stamp, left, left == 1 ? "" : "es",
		    (double)(LEAVE_AFTER_NS > wn.w ? LEAVE_AFTER_NS : wn.w) / 1e9,
		    left == 1 ? "it" : "them", left == 1 ? "its" : "their",
		    left == 1 ? " stays" : "s stay", tpath);
	if (state_of(k) != W_MERGED)
		wn.merged++;
	set_state(k, W_MERGED);
	on_window__merged(target);
out:
	for (size_t i = 0; paths && i < np; i++)
		free((char *)paths[i]);
	free(paths);
	free(in);
}

/*
 * AUTOPROF_KEEP: the merged windows beyond the newest N removed (the first
 * process removes its own older windows, which are the merged files' names,
 * but a window it has no file of is the launcher's to remove).
 */
static void keep_newest(void)
{
	char stamp[AP_STAMP_LEN], path[2 * PATH_MAX];
	unsigned n = 0;

	for (long k = wn.nr_state - 1; k >= 0 && wn.keep; k--) {
		if (wn.state[k] != W_MERGED || ++n <= wn.keep)
			continue;
		window_stamp__utc(wn.epoch + (uint64_t)k * wn.w, stamp);
		snprintf(path, sizeof(path), "%s/%s.%s", wn.dir, wn.base, stamp);
		unlink(path); /* (the hook was given it: a hook still reading it keeps it open) */
		wn.state[k] = W_REMOVED;
	}
}

/*
 * One look at the folder: merge each window that ended and that every
 * process finished; ask the ones asleep past its end; at @final (the
 * command ended), every window with what is there.
 */
static void poll_once(bool final)
{
	uint64_t now = mono_now();
	uint64_t leave = LEAVE_AFTER_NS > wn.w ? LEAVE_AFTER_NS : wn.w;

	pthread_mutex_lock(&wn.lock);
	reap_asks();
	find_parts();
	for (size_t i = 0; i < wn.nr_parts; i++) {
		long k = wn.parts[i].k;
		uint64_t end = wn.epoch + (uint64_t)(k + 1) * wn.w;
		enum wstate s = state_of(k);
		bool open = false, first = true;

		for (size_t j = 0; j < i && first; j++)
			first = wn.parts[j].k != k;
		if (k < 0 || !first || s == W_FAILED || s == W_REMOVED || (!final && now < end))
			continue;
		for (size_t j = 0; j < wn.nr_parts; j++)
			open |= wn.parts[j].k == k && wn.parts[j].open;
		if (s == W_MERGED) {
			if (final) /* late files of a merged window join it at the end */
				merge_window(k, false, true);
		} else if (!open || final || now >= end + leave) {
			merge_window(k, false, final);
		} else if (now >= end + ASK_AFTER_NS && s == W_PENDING) {
			for (size_t j = 0; j < wn.nr_parts; j++)
				if (wn.parts[j].k == k && wn.parts[j].open && wn.parts[j].pid > 0)
					ask(wn.parts[j].pid);
			set_state(k, W_ASKED);
		}
	}
	keep_newest();
	pthread_mutex_unlock(&wn.lock);
}

static void *watch(void *arg)
{
	struct pollfd pf = {.fd = wn.stop[0], .events = POLLIN};

	(void)arg;
	while (poll(&pf, 1, 100) == 0 || !(pf.revents & (POLLIN | POLLHUP)))
		poll_once(false);
	return NULL;
}

void onefile_windows__start(void)
{
	sigset_t all, old;

	if (!wn.on || pipe2(wn.stop, O_CLOEXEC) < 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	wn.thread_on = pthread_create(&wn.thread, NULL, watch, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void onefile_windows__finish(void)
{
	if (!wn.on)
		return;
	wn.on = false;
	wn.finished = true;
	if (wn.thread_on) {
		if (write(wn.stop[1], "x", 1) != 1)
			pthread_cancel(wn.thread);
		pthread_join(wn.thread, NULL);
	}
	poll_once(true);
	onefile_wstat__take(wn.dir, wn.base, &wn.since, wn.quiet);
	if (wn.late > 1 && !wn.quiet)
		fprintf(stderr,
			"autoprof: %u windows were merged without a process asleep past their end; "
			"its files joined them now\n",
			wn.late);
	for (int i = 0; i < wn.nr_asks; i++)
		waitpid(wn.asks[i], NULL, 0);
	find_parts(); /* what stays: the files of processes that outlive the command */
	{
		size_t live = 0;

		for (size_t i = 0; i < wn.nr_parts; i++)
			live += wn.parts[i].open;
		if (live && !wn.quiet)
			fprintf(stderr,
				"autoprof: %zu window file%s of processes that outlive the command "
				"stay%s beside %s\n",
				live, live == 1 ? "" : "s", live == 1 ? "s" : "", wn.output);
	}
	for (size_t i = 0; i < wn.nr_parts; i++)
		free(wn.parts[i].name);
	free(wn.parts);
	wn.parts = NULL;
	wn.nr_parts = 0;
}

bool onefile_windows__merged(void)
{
	return wn.finished && wn.merged;
}
