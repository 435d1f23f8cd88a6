/* SPDX-License-Identifier: MIT */
/*
 * on_window.c - `--on-window CMD` (AUTOPROF_ON_WINDOW): run CMD FILE for each
 * finished window file (--window), so that a fleet can ship every window
 * (autoprof-report --pprof to a server, a copy to object storage) without a
 * shell loop.
 *
 * The library finishes a window's file (features, final header) and only
 * then closes it (writer__rotate, or the process's end), so the close of a
 * file written under a window's name (FILE[.pid[.n]].yyyymmddThhmmss.mmm) is
 * the moment it is complete: inotify's IN_CLOSE_WRITE on the output's folder,
 * read by a thread of the launcher. The hooks run beside the profiled
 * program, unprofiled (without the library in LD_PRELOAD, nor the variables
 * that would run the hook again), with no standard input; a failure is said in one line and never
 * stops anything. At the end the launcher runs the last windows' hooks and waits for every hook.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "launcher.h"

#define MAX_HOOKS 256 /* running at once; more wait for one to end */
#define MAX_SEEN  4096

static struct {
	const char *cmd;
	char dir[PATH_MAX], base[NAME_MAX + 1];
	int fd;		  /* inotify */
	int stop_pipe[2]; /* written by on_window__finish() */
	pthread_t thread;
	bool started, quiet;
	bool loose; /* -o had a %p: any characters between the base and the stamp */
	pid_t hooks[MAX_HOOKS];
	char *hook_file[MAX_HOOKS];
	int nr_hooks;
	char *seen[MAX_SEEN]; /* the files whose hook ran: once each */
	int nr_seen;
	unsigned failed, ran;
	bool merged_only; /* the launcher merges the windows: hooks for its files only */
	pthread_mutex_t lock;
} ow = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/*
 * Is @name a window file of the run: BASE, then ".pid" and ".n" parts (a child,
 * an exec; anything when -o had a %p), then ".yyyymmddThhmmss.mmm"?
 */
static bool window_name(const char *name)
{
	const size_t slen = 20; /* ".yyyymmddThhmmss.mmm" */
	size_t len = strlen(name), blen = strlen(ow.base);

	if (len < blen + slen || strncmp(name, ow.base, blen))
		return false;
	for (size_t i = 0; i < slen; i++) {
		char c = name[len - slen + i];

		if (i == 0 || i == 16 ? c != '.' : i == 9 ? c != 'T' : (c < '0' || c > '9'))
			return false;
	}
	for (size_t i = blen; i < len - slen && !ow.loose; i++)
		if (name[i] != '.' && (name[i] < '0' || name[i] > '9'))
			return false;
	return true;
}

/* Does LD_PRELOAD's first entry (pre) end with name? Its end (':' or NUL) in *end. */
static bool first_is(const char *pre, const char *name, const char **end)
{
	const char *colon = pre ? strchr(pre, ':') : NULL;
	size_t n = pre ? (colon ? (size_t)(colon - pre) : strlen(pre)) : 0, k = strlen(name);

	*end = pre + n;
	return n >= k && !strncmp(pre + n - k, name, k);
}

/*
 * LD_PRELOAD without the libraries the launcher put first (the hooks are not
 * profiled): libautoprof.so, and libautoprof-memory.so after it (--memory).
 */
static void drop_library(void)
{
	const char *pre = getenv("LD_PRELOAD"), *end, *next;

	if (!first_is(pre, "libautoprof.so", &end))
		return;
	if (*end && first_is(end + 1, "libautoprof-memory.so", &next))
		end = next;
	if (*end && end[1])
		setenv("LD_PRELOAD", end + 1, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* Say how hook @i ended (@status) if it failed, and forget it. */
static void hook_ended(int i, int status)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		ow.failed++;
		if (WIFSIGNALED(status))
			fprintf(stderr, "autoprof: --on-window: '%s %s' was killed by signal %d\n",
				ow.cmd, ow.hook_file[i], WTERMSIG(status));
		else
			fprintf(stderr, "autoprof: --on-window: '%s %s' failed (exit status %d)\n",
				ow.cmd, ow.hook_file[i], WEXITSTATUS(status));
	}
	free(ow.hook_file[i]);
	ow.nr_hooks--;
	ow.hooks[i] = ow.hooks[ow.nr_hooks];
	ow.hook_file[i] = ow.hook_file[ow.nr_hooks];
}

/* Reap the hooks that ended (@block: wait for one). */
static void reap(bool block)
{
	for (int i = 0; i < ow.nr_hooks; i++) {
		int status;
		pid_t r = waitpid(ow.hooks[i], &status, block && i == 0 ? 0 : WNOHANG);

		if (r == ow.hooks[i] || (r < 0 && errno == ECHILD)) {
			hook_ended(i, r < 0 ? 0 : status);
			i--;
			block = false;
		}
	}
}

/* Run `CMD FILE` (sh -c 'CMD "$@"' with FILE as $1) for the finished window @name. */
static void run_hook(const char *name)
{
	char path[PATH_MAX + NAME_MAX + 2], script[8192];
	pid_t pid;

	for (int i = 0; i < ow.nr_seen; i++)
		if (!strcmp(ow.seen[i], name))
			return;
	if (ow.nr_seen < MAX_SEEN)
		ow.seen[ow.nr_seen++] = strdup(name);
	while (ow.nr_hooks >= MAX_HOOKS)
		reap(true);
	snprintf(path, sizeof(path), "%s/%s", ow.dir, name);
	snprintf(script, sizeof(script), "%s \"$@\"", ow.cmd);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "autoprof: --on-window: cannot run '%s %s': %s\n", ow.cmd, path,
			strerror(errno));
		ow.failed++;
		return;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(STDIN_FILENO);
		if (open("/dev/null", O_RDONLY) < 0)
			_exit(126);
		drop_library();
		/* what the launcher added: a hook that runs autoprof does not inherit them */
		unsetenv(ap_env_name(AP_ENV_ON_WINDOW));
		unsetenv(ap_env_name(AP_ENV_LAUNCHER));
		unsetenv(ap_env_name(AP_ENV_COUNTER_FDS));
		close_range(3, ~0U, 0); /* none of the launcher's files, events or rings */
		launcher__restore_xfsz();
		execl("/bin/sh", "sh", "-c", script, "sh", path, (char *)NULL);
		_exit(127);
	}
	ow.hooks[ow.nr_hooks] = pid;
	ow.hook_file[ow.nr_hooks++] = strdup(path);
	ow.ran++;
}

/*
 * Read the folder's events: a window file closed after writing is finished.
 * Returns how many hooks were started.
 */
static unsigned read_events(void)
{
	unsigned before = ow.ran;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(ow.fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			if (e->len && window_name(e->name) &&
			    !__atomic_load_n(&ow.merged_only, __ATOMIC_ACQUIRE))
				run_hook(e->name);
			p += sizeof(*e) + e->len;
		}
	return ow.ran - before;
}

static void *watch(void *arg)
{
	struct pollfd pf[2] = {{.fd = ow.fd, .events = POLLIN},
			       {.fd = ow.stop_pipe[0], .events = POLLIN}};

	(void)arg;
	for (;;) {
		poll(pf, 2, 200);
		pthread_mutex_lock(&ow.lock);
		read_events();
		reap(false);
		pthread_mutex_unlock(&ow.lock);
		if (pf[1].revents)
			break;
	}
	return NULL;
}

int on_window__start(const char *cmd, const char *output, bool quiet)
{
	char copy[PATH_MAX], *d;
	sigset_t all, old;
	int err;

	snprintf(copy, sizeof(copy), "%s", output);
	snprintf(ow.base, sizeof(ow.base), "%s", basename(copy));
	ow.loose = strchr(ow.base, '%') != NULL;
	ow.base[strcspn(ow.base, "%")] = 0;
	snprintf(copy, sizeof(copy), "%s", output);
	d = dirname(copy);
	if (!realpath(d, ow.dir)) {
		fprintf(stderr, "autoprof: --on-window: %s: %s\n", d, strerror(errno));
		return -1;
	}
	ow.cmd = cmd;
	ow.quiet = quiet;
	ow.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ow.fd < 0 || inotify_add_watch(ow.fd, ow.dir, IN_CLOSE_WRITE) < 0 ||
	    pipe2(ow.stop_pipe, O_CLOEXEC) < 0) {
		fprintf(stderr, "autoprof: --on-window: cannot watch %s: %s\n", ow.dir,
			strerror(errno));
		return -1;
	}
	/* The signals the launcher forwards stay with its main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&ow.thread, NULL, watch, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fprintf(stderr, "autoprof: --on-window: %s\n", strerror(err));
		return -1;
	}
	ow.started = true;
	return 0;
}

void on_window__merged_only(void)
{
	__atomic_store_n(&ow.merged_only, true, __ATOMIC_RELEASE);
}

void on_window__merged(const char *name)
{
	if (!__atomic_load_n(&ow.started, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&ow.lock);
	run_hook(name);
	pthread_mutex_unlock(&ow.lock);
}

void on_window__finish(void)
{
	if (!ow.started)
		return;
	ow.started = false;
	if (write(ow.stop_pipe[1], "x", 1) != 1)
		pthread_cancel(ow.thread);
	pthread_join(ow.thread, NULL);
	/*
	 * The last windows, closed as their processes ended. A hook forked while
	 * the launcher still had a window's file open (outside mode writes them)
	 * holds it until its exec: that close comes once the hooks are reaped.
	 */
	do
		while (ow.nr_hooks)
			reap(true);
	while (read_events());
	if (!ow.quiet)
		fprintf(stderr, "autoprof: --on-window: ran '%s' for %u window file%s%s\n", ow.cmd,
			ow.ran, ow.ran == 1 ? "" : "s",
			ow.failed ? " (some failed: said above)" : "");
}
