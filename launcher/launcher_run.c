/* SPDX-License-Identifier: MIT */
/*
 * launcher_run.c - the launcher's second half: run the command as a child,
 * pass it the signals someone sends the launcher, wait, say which files the
 * run wrote, and end exactly as the command ended (same status, same signal).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "launcher.h"
#include "onefile.h"

static volatile pid_t child;

/* A signal sent to the launcher by kill() goes on to the command. The
 * terminal's own (Ctrl-C, hang-up) reach the command directly already. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (child > 0 && si->si_code == SI_USER)
		kill(child, sig);
}

static void handle_signals(void)
{
	launcher_run__forward_signals(0);
}

/* Pass the signals someone sends the launcher on to @pid (0: to the child run here). */
void launcher_run__forward_signals(pid_t pid)
{
	static const int passed[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2};
	struct sigaction sa;

	if (pid > 0)
		child = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		sigaction(passed[i], &sa, NULL);
}

/* Is s exactly a window's stamp, ".yyyymmddThhmmss.mmm" (AUTOPROF_WINDOW)? */
static int is_stamp(const char *s)
{
	static const char form[] = ".DDDDDDDDTDDDDDD.DDD";

	for (size_t i = 0; i < sizeof(form) - 1; i++)
		if (form[i] == 'D' ? s[i] < '0' || s[i] > '9' : s[i] != form[i])
			return 0;
	return s[sizeof(form) - 1] == 0;
}

/* Does name look like base, base.PID or base.PID.N (or pattern with %p as digits), each
 * perhaps with a window's stamp? */
static int is_output(const char *name, const char *pattern)
{
	const char *p = pattern, *n = name;

	while (*p) {
		if (p[0] == '%' && p[1] == 'p') {
			if (*n < '0' || *n > '9')
				return 0;
			while (*n >= '0' && *n <= '9')
				n++;
			p += 2;
		} else if (*p++ != *n++) {
			return 0;
		}
	}
	for (int part = 0; *n && part < 2; part++) { /* .PID, then .N */
		if (is_stamp(n))
			return 1;
		if (*n++ != '.' || *n < '0' || *n > '9')
			return 0;
		while (*n >= '0' && *n <= '9')
			n++;
	}
	return *n == 0 || is_stamp(n);
}

/* One output file of the run and what it holds. */
struct output {
	char *name;
	struct file_summary sum;
};

/* Most samples first, then by name (the first process's file before its descendants'). */
static int by_samples(const void *a, const void *b)
{
	const struct output *x = a, *y = b;

	if (x->sum.samples != y->sum.samples)
		return x->sum.samples < y->sum.samples ? 1 : -1;
	return strcmp(x->name, y->name);
}

#define SHOWN_FILES 10 /* file lines of a process tree's closing lines */

/*
 * "12345 samples at 997 Hz, 0 lost": the rate delivered, samples per second
 * of the CPU time they stand for, where the event counts CPU time.
 */
static const char *counts(const struct file_summary *s, char *buf, size_t cap)
{
	char rate[48] = "";

	if (s->clock_samples && s->clock_ns)
		snprintf(rate, sizeof(rate), " at %.0f Hz",
			 (double)s->clock_samples * 1e9 / (double)s->clock_ns);
	char other[64] = "";

	if (s->other)
		snprintf(other, sizeof(other), ", %llu record%s of other events",
			 (unsigned long long)s->other, s->other == 1 ? "" : "s");
	snprintf(buf, cap, "%llu sample%s%s, %llu lost%s", (unsigned long long)s->samples,
		 s->samples == 1 ? "" : "s", rate, (unsigned long long)s->lost, other);
	return buf;
}

/*
 * Was @mtime written before @since? File times come from the kernel's coarse
 * clock, up to a tick (4 ms at 250 Hz) behind the real time read at the
 * start: 20 ms of slack, so that a file written at once counts and one left
 * by an earlier run (a second before, say) does not.
 */
static bool older(const struct timespec *mtime, const struct timespec *since)
{
	int64_t m = (int64_t)mtime->tv_sec * 1000000000 + mtime->tv_nsec;
	int64_t t = (int64_t)since->tv_sec * 1000000000 + since->tv_nsec;

	return m < t - 20000000;
}

/* The real time now, for launcher_run__list_outputs(). */
struct timespec launcher_run__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

/*
 * Print, on stderr, the output files written since @since (the run's start,
 * launcher_run__now()): the file, its
 * samples and lost samples and its command; for a process tree one line per
 * file (pid, samples, command), most samples first, so the file that holds
 * the real program is plain to see.
 */
void launcher_run__list_outputs(const char *output, struct timespec since)
{
	char copy[PATH_MAX], copy2[PATH_MAX], path[PATH_MAX * 2], num[128];
	struct output outs[256];
	const char *dir, *base, *pre;
	uint64_t more_samples = 0;
	struct dirent *e;
	size_t n = 0, more = 0, width = 0;
	DIR *d;

	snprintf(copy, sizeof(copy), "%s", output);
	snprintf(copy2, sizeof(copy2), "%s", output);
	dir = dirname(copy);
	base = basename(copy2);
	pre = strcmp(dir, ".") ? dir : "";
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;

		if (!is_output(e->d_name, base))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || older(&st.st_mtim, &since))
			continue;
		if (n == sizeof(outs) / sizeof(outs[0])) {
			struct file_summary sum;

			file_summary__read(path, &sum);
			more++;
			more_samples += sum.samples;
			continue;
		}
		outs[n].name = strdup(e->d_name);
		if (!outs[n].name)
			continue;
		if (!onefile__summary(dir, e->d_name, &outs[n].sum))
			file_summary__read(path, &outs[n].sum); /* (not read already) */
		n++;
	}
	closedir(d);
	if (!n)
		return;
	qsort(outs, n, sizeof(outs[0]), by_samples);
	if (n == 1 && !more) {
		char stat_note[PATH_MAX + 32] = "";

		snprintf(path, sizeof(path), "%s/%s.stat", dir, outs[0].name);
		if (access(path, F_OK) == 0)
			snprintf(stat_note, sizeof(stat_note), "; counters in %s%s%s.stat", pre,
				 *pre ? "/" : "", outs[0].name);
		fprintf(stderr, "autoprof: wrote %s%s%s (%s%s)%s%s\n", pre, *pre ? "/" : "",
			outs[0].name, counts(&outs[0].sum, num, sizeof(num)), stat_note,
			outs[0].sum.cmd[0] ? " for " : "", outs[0].sum.cmd);
		free(outs[0].name);
		return;
	}
	fprintf(stderr, "autoprof: wrote %zu files, %s (autoprof-report merges them):\n", n + more,
		onefile_windows__merged() ? "one per window, each with every process of the run"
					  : "one per process image and window");
	for (size_t i = 0; i < n && i < SHOWN_FILES; i++)
		if (strlen(outs[i].name) > width)
			width = strlen(outs[i].name);
	for (size_t i = 0; i < n; i++) {
		if (i < SHOWN_FILES)
			fprintf(stderr, "autoprof:   %s%s%-*s  pid %-7d %-24s %s\n", pre,
				*pre ? "/" : "", (int)width, outs[i].name, outs[i].sum.pid,
				counts(&outs[i].sum, num, sizeof(num)), outs[i].sum.cmd);
		else
			more_samples += outs[i].sum.samples;
		free(outs[i].name);
	}
	if (n + more > SHOWN_FILES)
		fprintf(stderr,
			"autoprof:   and %zu more files with %llu samples (autoprof-report --list "
			"%s)\n",
			n + more - SHOWN_FILES, (unsigned long long)more_samples, *pre ? pre : ".");
}

/*
 * Die without a core and without the core flag (as timeout(1) does:
 * PR_SET_DUMPABLE 0 stops even a core_pattern pipe; RLIMIT_CORE 0 too).
 */
static void no_core(void)
{
	struct rlimit zero = {0, 0};

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	setrlimit(RLIMIT_CORE, &zero);
}

/*
 * The command dumped core: die with the core flag too, so the shell says
 * "(core dumped)" as it would without us, but leave no core of our own. The
 * kernel sets the flag only for a dump that succeeded, so ours must be
 * written: with a core_pattern relative to the working directory, it is
 * written (near-empty: coredump_filter 0) into a private directory that a
 * small process removes once we are gone (it sees our end of a pipe close,
 * which the kernel does after the dump). Where the dump would go elsewhere
 * (a pipe to a crash collector, an absolute directory) we give up the flag
 * rather than leave a core of the launcher there. Returns false then.
 */
static bool core_elsewhere(void)
{
	static char dir[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	char pattern[256] = "";
	struct rlimit lim;
	int fd, pipefd[2];
	pid_t cleaner;

	fd = open("/proc/sys/kernel/core_pattern", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, pattern, sizeof(pattern) - 1) <= 0 || pattern[0] == '|' ||
	    strchr(pattern, '/')) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	if (!tmp || tmp[0] != '/' || strlen(tmp) > PATH_MAX - 64)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/autoprof-core.XXXXXX", tmp);
	if (!mkdtemp(dir) || pipe2(pipefd, O_CLOEXEC_FLAG) < 0)
		return false;
	cleaner = fork();
	if (cleaner < 0) {
		rmdir(dir);
		return false;
	}
	if (cleaner == 0) {
		char c, path[PATH_MAX];
		struct dirent *e;
		DIR *d;

		for (int i = 0; i < 1024; i++)
			if (i != pipefd[0])
				close(i);
		setsid();
		while (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
			;
		d = opendir(dir);
		while (d && (e = readdir(d)))
			if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) <
			    (int)sizeof(path))
				unlink(path);
		if (d)
			closedir(d);
		rmdir(dir);
		_exit(0);
	}
	close(pipefd[0]);
	if (chdir(dir) < 0)
		return false;
	fd = open("/proc/self/coredump_filter", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = write(fd, "0", 1); /* if not: a larger core, removed all the same */

		(void)n;
		close(fd);
	}
	if (getrlimit(RLIMIT_CORE, &lim) == 0) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_CORE, &lim);
	}
	return true;
}

/*
 * End as the command ended: its exit status, or death by its signal with
 * the same core flag (WCOREDUMP), which the shell shows as "(core dumped)".
 */
int launcher_run__end_like(int status)
{
	sigset_t set;
	int sig;

	on_window__finish(); /* --on-window: the last windows' hooks, before the end */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	sig = WTERMSIG(status);
	if (!WCOREDUMP(status) || !core_elsewhere())
		no_core();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;
}

/*
 * Run argv as a child with the environment already set up, the counters
 * opened in the child just before its exec; wait; list the output files.
 * Returns the launcher's exit status (or does not return: killed by the
 * command's signal).
 */
int launcher_run__command(char **argv, const char *output, int quiet)
{
	struct timespec since = launcher_run__now();
	int status, pipefd[2], go[2], err = 0;

	if (pipe2(pipefd, O_CLOEXEC_FLAG) < 0 || pipe2(go, O_CLOEXEC_FLAG) < 0) {
		perror("autoprof: pipe");
		return 126;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		perror("autoprof: fork");
		return 126;
	}
	if (child == 0) {
		char c;

		close(pipefd[0]);
		close(go[1]);
		if (read(go[0], &c, 1) != 1) /* the launcher watches the execs first */
			_exit(126);
		launcher__open_counters();
		launcher__restore_xfsz();
		execvp(argv[0], argv);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			err = 0;
		_exit(err == ENOENT ? 127 : 126);
	}
	close(pipefd[1]);
	close(go[0]);
	if (launcher__options()->follow)
		exec_watch__start(child); /* (--follow 0: no child is profiled anyway) */
	if (write(go[1], "x", 1) != 1)
		kill(child, SIGKILL);
	close(go[1]);
	ctl_tree__publish(child, output, quiet); /* `autoprof ctl $! ...` */
	handle_signals();
	if (read(pipefd[0], &err, sizeof(err)) == (ssize_t)sizeof(err))
		fprintf(stderr, "autoprof: cannot run '%s': %s\n", argv[0], strerror(err));
	close(pipefd[0]);
	if (exec_watch__wait(child, &status) < 0) {
		ctl_tree__withdraw();
		exec_watch__end();
		onefile__finish(argv, quiet);
		onefile_windows__finish();
		return 126;
	}
	onefile__finish(argv, quiet); /* the run's files into one (not with --per-process) */
	onefile_windows__finish();    /* --window: the last windows merged */
	if (!err && !quiet) {
		launcher_run__list_outputs(output, since);
		onefile__say_images(quiet);
		exec_watch__say();
	}
	ctl_tree__withdraw();
	exec_watch__end();
	return launcher_run__end_like(status);
}
