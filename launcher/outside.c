/* SPDX-License-Identifier: MIT */
/*
 * outside.c - profiling from outside (outside.h): the launcher opens the
 * sampling events on the program, one per CPU with inherit=1 (an inherited
 * event with cpu=-1 cannot be mmapped: doc/design.md), so every thread
 * and child it makes is sampled however it makes them (raw clone included);
 * it drains the rings itself and writes the perf.data. For a command, the
 * child waits on a pipe while the events are opened (enable_on_exec: they
 * count from the program's first instruction), then execs; for -p/-t the
 * events go on each thread of the running process. Stacks come from frame
 * pointers (the kernel's chains: Go keeps them) or from register and stack
 * copies unwound here (unwind_user.c), as the mode line says.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "common.h"
#include "handler/handler.h"
#include "launcher.h"
#include "outside.h"

#define MAX_CPUS    OUTSIDE_MAX_CPUS
#define MAX_TARGETS 4096 /* threads of -p/-t */
#define RING_PAGES  OUTSIDE_RING_PAGES

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* The session: the events' rings drained into the file. */
struct session {
	struct outside_plan plan;
	struct outside_events ev;
	struct outside_rings rings;
	struct perf_out out;
	struct outside_windows win;
	int ring_fds[MAX_CPUS];
	int nrings;
	pid_t prog;		    /* the program's pid, for `autoprof ctl` */
	bool paused;		    /* AUTOPROF_START=0 or `autoprof ctl stop` */
	bool ever_sampled;	    /* sampling was on at some time */
	uint64_t since, sampled_ns; /* the state's start; the time sampled before it */
	struct timespec started;    /* for the closing lines' files */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* @pattern with %p as @pid and %% as %, as the library names its files. */
static const char *output_name(const char *pattern, pid_t pid)
{
	static char out[4096];
	size_t n = 0;

	for (const char *p = pattern; *p && n + 16 < sizeof(out); p++) {
		if (p[0] == '%' && (p[1] == 'p' || p[1] == '%'))
			n += (size_t)snprintf(out + n, sizeof(out) - n, p[1] == 'p' ? "%d" : "%%",
					      (int)pid);
		else
			out[n++] = *p;
		p += p[0] == '%' && (p[1] == 'p' || p[1] == '%');
	}
	out[n] = 0;
	return out;
}

/* Map the rings and create the file (the first window's). Returns 0 or -1 (said). */
static int session_start(struct session *s, const char *output, char **argv)
{
	char path[sizeof(s->out.path)];
	uint64_t now = now_ns();
	int err;

	s->nrings = 0;
	for (int cpu = 0; cpu < s->ev.ncpu; cpu++)
		if (s->ev.ring_fd[cpu] >= 0)
			s->ring_fds[s->nrings++] = s->ev.ring_fd[cpu];
	s->rings.dwarf = s->plan.dwarf;
	s->rings.callchain = s->plan.dwarf;
	s->rings.stack_depth = (int)s->plan.cfg.stack_depth;
	s->rings.regs_mask = s->plan.attr.sample_regs_user;
	s->rings.uw = s->plan.dwarf ? unwind_user__new() : NULL;
	s->rings.out = &s->out;
	err = outside_rings__map(&s->rings, s->ring_fds, s->nrings,
				 s->plan.dwarf ? 4 * RING_PAGES : RING_PAGES);
	if (!err)
		err = outside_events__redirect(&s->ev);
	if (err) {
		fprintf(stderr, "autoprof: cannot map the sampling rings: %s\n", strerror(-err));
		return -1;
	}
	{
		struct perf_event_attr fa = s->plan.attr;

		/* The file's samples: the plain layout, stacks as callchains. */
		fa.sample_type = AUTOPROF_SAMPLE_TYPE;
		fa.sample_regs_user = 0;
		fa.sample_stack_user = 0;
		fa.exclude_callchain_user = s->plan.cfg.callgraph == AP_CG_NONE;
		fa.disabled = 0;
		fa.enable_on_exec = 0;
		fa.watermark = 0;
		fa.wakeup_watermark = 0;
		fa.mmap = fa.mmap2 = fa.comm = fa.comm_exec = fa.task = 1; /* (tracking event's) */
		err = outside_windows__init(&s->win, &s->plan.cfg, output, now, path, sizeof(path));
		if (!err)
			err = perf_out__open(&s->out, path, &fa, s->plan.cfg.event_name, s->ev.ids,
					     s->ev.nr, argv);
	}
	if (err) {
		fprintf(stderr, "autoprof: cannot create %s: %s\n", output, strerror(-err));
		return -1;
	}
	outside_windows__attach(&s->win, &s->out);
	s->rings.win = s->win.len ? &s->win : NULL;
	if (s->plan.cfg.aggregate && outside_agg__init(&s->out, now))
		fprintf(stderr, "autoprof: --aggregate: no memory for the table; samples written "
				"one by one\n");
	s->paused = !s->plan.cfg.start;
	s->ever_sampled = !s->paused;
	s->since = now;
	s->started = launcher_run__now();
	outside_ctl__publish(s->prog, s->out.path);
	if (s->plan.cfg.kernel && !attach__kernel_map(&s->out))
		fprintf(stderr, "autoprof: -k: /proc/kallsyms hides the kernel's addresses "
				"(kernel.kptr_restrict): kernel frames stay unnamed\n");
	return 0;
}

/* Act on a request of `autoprof ctl` (outside_ctl.c) and answer it. */
static void session_ctl(struct session *s, uint64_t request)
{
	int op = (int)(request & 0xff);
	uint64_t t0 = now_ns();
	struct outside_ctl_state st = {0};

	if ((op == AP_CTL_START && s->paused) || (op == AP_CTL_STOP && !s->paused)) {
		int err = outside_events__enable(&s->ev, op == AP_CTL_START);

		if (err)
			fprintf(stderr, "autoprof: ctl %s: %s\n",
				op == AP_CTL_START ? "start" : "stop", strerror(-err));
		if (!s->paused)
			s->sampled_ns += t0 - s->since;
		outside_stat__follow(!s->paused, t0, s->since); /* the counters follow */
		s->paused = !s->paused;
		s->ever_sampled |= !s->paused;
		s->since = t0;
		st.changed = true;
	}
	if (op == AP_CTL_STOP || op == AP_CTL_DUMP) {
		outside_rings__drain(&s->rings);
		outside_agg__emit();
		if (op == AP_CTL_DUMP &&
		    outside_windows__due(&s->win, t0)) /* an idle window: ended now */
			outside_windows__rotate(&s->win, &s->out, t0);
		perf_out__flush(&s->out);
	}
	st.sampling = !s->paused;
	st.since = s->since;
	st.sampled_ns = s->sampled_ns;
	st.samples = s->out.prev_samples + s->out.samples;
	st.lost = s->out.prev_lost + s->out.lost;
	st.threads = outside_ctl__threads(s->prog);
	st.error = s->out.err;
	st.file = s->out.path;
	st.now = now_ns();
	st.took_ns = st.now - t0;
	outside_ctl__answer(request, &st);
}

/* Drain until @done says stop (checked at least every 100 ms). */
static void session_loop(struct session *s, bool (*done)(void *), void *ctx)
{
	struct pollfd pf[MAX_CPUS];

	for (int i = 0; i < s->nrings; i++)
		pf[i] = (struct pollfd){.fd = s->ring_fds[i], .events = POLLIN};
	while (!done(ctx)) {
		uint64_t request;

		poll(pf, (nfds_t)s->nrings, 100);
		outside_rings__drain(&s->rings);
		request = outside_ctl__take();
		if (request)
			session_ctl(s, request);
	}
}

/* The last records, the features; the file is complete. Returns 0 or -1 (said). */
static int session_end(struct session *s)
{
	int err;

	outside_ctl__withdraw();
	outside_rings__drain(&s->rings);
	outside_events__close(&s->ev); /* nothing more comes */
	outside_rings__drain(&s->rings);
	outside_agg__emit();
	err = perf_out__finish(&s->out);
	outside_windows__free(&s->win);
	if (s->plan.dwarf && s->rings.unwound && ap_verbose)
		fprintf(stderr,
			"autoprof: %llu of %llu stacks went no further than the sampled pc\n",
			(unsigned long long)s->rings.short_stacks,
			(unsigned long long)s->rings.unwound);
	outside_rings__unmap(&s->rings);
	unwind_user__free(s->rings.uw);
	if (err) {
		fprintf(stderr, "autoprof: writing %s: %s\n", s->out.path, strerror(-err));
		return -1;
	}
	return 0;
}

/* A closing note when the file has no sample: why. */
static void say_empty(const struct session *s, const char *who)
{
	if (s->out.samples || s->out.prev_samples)
		return;
	if (!s->ever_sampled) {
		fprintf(stderr,
			"autoprof: %s: 0 samples: sampling was off the whole run (started paused: "
			"--start-paused or AUTOPROF_START=0; `autoprof ctl PID start` starts it)\n",
			s->out.path);
		return;
	}
	fprintf(stderr,
		"autoprof: %s: 0 samples: %s did not run in user mode for one sampling "
		"period of %s (idle, or too short; see %s)\n",
		s->out.path, who, s->plan.cfg.event_name,
		s->plan.cfg.period ? "-c/--count" : "-F/--freq");
}

/* ---- a command ---- */

static pid_t run_child;

static bool child_done(void *ctx)
{
	int *status = ctx;

	if (waitpid(run_child, status, WNOHANG) == run_child)
		return true;
	return false;
}

int outside__run(char **argv, const char *output, int quiet, const char *why)
{
	static struct session s;
	int go[2], errp[2], status = 0, err = 0;
	ssize_t got;

	if (outside_plan__init(&s.plan, quiet) || outside_events__init(&s.ev))
		return 2;
	/* Pure Go keeps frame pointers everywhere; cgo's C code may not: copies then. */
	outside_plan__attr(
	    &s.plan,
	    (static_check__is_go(argv[0]) && !static_check__links_libraries(argv[0])) ||
		s.plan.cfg.callgraph == AP_CG_FP,
	    true, true);
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		perror("autoprof: pipe");
		return 126;
	}
	fflush(NULL);
	run_child = fork();
	if (run_child < 0) {
		perror("autoprof: fork");
		return 126;
	}
	if (run_child == 0) {
		char c;

		close(go[1]);
		close(errp[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(126); /* the launcher gave up: said there */
		launcher__restore_xfsz();
		execvp(argv[0], argv);
		err = errno;
		if (write(errp[1], &err, sizeof(err)) < 0)
			err = 0;
		_exit(err == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(errp[1]);
	launcher_run__forward_signals(run_child);
	outside_stat__open(&s.plan.cfg, &run_child, 1, true);
	err = outside_events__add(&s.ev, &s.plan, run_child);
	if (err) {
		if (err == -EACCES || err == -EPERM)
			outside_events__say_denied(-err, "the command");
		else
			fprintf(stderr, "autoprof: cannot open the sampling event %s: %s\n",
				s.plan.cfg.event_name, strerror(-err));
	}
	s.prog = run_child;
	if (err || session_start(&s, output_name(output, run_child), argv)) {
		/* The command runs all the same, as it would without us. */
		fprintf(stderr, "autoprof: running %s unprofiled\n", argv[0]);
		outside_events__close(&s.ev);
		if (write(go[1], "x", 1) != 1)
			kill(run_child, SIGKILL);
		close(go[1]);
		got = read(errp[0], &err, sizeof(err));
		if (got == (ssize_t)sizeof(err))
			fprintf(stderr, "autoprof: cannot run '%s': %s\n", argv[0], strerror(err));
		while (waitpid(run_child, &status, 0) < 0)
			if (errno != EINTR)
				return 126;
		return launcher_run__end_like(status);
	}
	if (!quiet)
		fprintf(stderr, "autoprof: profiling %s from outside (%s); %s; stacks: %s\n",
			argv[0], why, outside_plan__rate(&s.plan), s.plan.stacks);
	if (!quiet && s.paused) /* as in library mode (ctl_tree.c): the pid to start */
		fprintf(stderr,
			"autoprof: profiling pid %d, paused until `autoprof ctl %d start` (or "
			"`autoprof "
			"ctl %d start`, this launcher)\n",
			(int)run_child, (int)run_child, (int)getpid());
	outside_stat__started();
	if (write(go[1], "x", 1) != 1)
		return 126;
	close(go[1]);
	got = read(errp[0], &err, sizeof(err));
	close(errp[0]);
	if (got == (ssize_t)sizeof(err))
		fprintf(stderr, "autoprof: cannot run '%s': %s\n", argv[0], strerror(err));
	session_loop(&s, child_done, &status);
	if (got == (ssize_t)sizeof(err)) { /* nothing ran: no file, as without us */
		session_end(&s);
		unlink(s.out.path);
		return launcher_run__end_like(status);
	}
	if (session_end(&s) == 0 && got != (ssize_t)sizeof(err)) {
		outside_stat__finish(s.out.path);
		if (!quiet) {
			launcher_run__list_outputs(output, s.started);
			say_empty(&s, argv[0]);
		}
	}
	return launcher_run__end_like(status);
}

/* ---- -p / -t: processes already running ---- */

struct attached {
	const pid_t *ids;
	int n;
	bool threads;
	uint64_t deadline; /* CLOCK_MONOTONIC ns, or 0 */
};

/* Is process or thread @id gone (or a zombie)? */
static bool gone(pid_t id, bool thread)
{
	char path[64], buf[512], *p;

	(void)thread; /* /proc/TID/stat is there for any thread too */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)id);
	if (raw_syscall__read_file(path, buf, sizeof(buf) - 1) <= 0)
		return true;
	buf[sizeof(buf) - 1] = 0;
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

static bool attach_done(void *ctx)
{
	struct attached *a = ctx;
	struct timespec ts;

	if (stop_asked)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (a->deadline &&
	    (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec >= a->deadline)
		return true;
	for (int i = 0; i < a->n; i++)
		if (!gone(a->ids[i], a->threads))
			return false;
	return true;
}

/*
 * Open the events on thread @id (-t) or on every thread of process @id,
 * adding them to @tids (*nt of them). A thread made while they are opened
 * gets its events from its creator's (inherit) once that one's are open;
 * one made before, but after the listing, is found by listing again until
 * no new thread shows (as a bound: 8 times). Returns 0 or -errno.
 */
static int attach_threads(struct session *s, pid_t id, bool thread, pid_t *tids, int *nt)
{
	static pid_t now[MAX_TARGETS];
	int err = 0;

	for (int round = 0; round < 8; round++) {
		int k = thread ? 1 : attach__threads(id, now, MAX_TARGETS), added = 0;

		if (thread)
			now[0] = id;
		for (int j = 0; j < k && !err && *nt < MAX_TARGETS; j++) {
			bool known = false;

			for (int i = 0; i < *nt && !known; i++)
				known = tids[i] == now[j];
			if (known)
				continue;
			err = outside_events__add(&s->ev, &s->plan, now[j]);
			if (err == -ESRCH)
				err = 0; /* the thread ended meanwhile */
			tids[(*nt)++] = now[j];
			added++;
		}
		if (err || !added || thread)
			break;
	}
	return err;
}

/* The command line of process @pid, for the file's CMDLINE feature (NULL: none). */
static char **attach_argv(pid_t pid)
{
	static char buf[4096], *argv[64];
	char path[64];
	ssize_t len;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	len = raw_syscall__read_file(path, buf, sizeof(buf) - 1);
	if (len <= 0)
		return NULL;
	buf[len] = 0;
	for (ssize_t i = 0; i < len && n < 63; i += (ssize_t)strlen(buf + i) + 1)
		argv[n++] = buf + i;
	argv[n] = NULL;
	return argv;
}

int outside__attach(const pid_t *ids, int n, bool threads, double duration, const char *output,
		    int quiet)
{
	static struct session s;
	static pid_t tids[MAX_TARGETS];
	struct attached a = {ids, n, threads, 0};
	struct sigaction sa;
	struct timespec ts;
	int nt = 0, err = 0;
	char what[64];

	if (outside_plan__init(&s.plan, quiet) || outside_events__init(&s.ev))
		return 2;
	for (int i = 0; i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d", (int)ids[i]);
		if (access(path, F_OK)) {
			fprintf(stderr, "autoprof: %s %d: no such %s\n", threads ? "-t" : "-p",
				(int)ids[i], threads ? "thread" : "process");
			return 2;
		}
	}
	/* Go (the first target's program) keeps frame pointers; others: copies. */
	snprintf(what, sizeof(what), "/proc/%d/exe", (int)ids[0]);
	/* inherit: the threads the targets make after the attach are sampled too */
	outside_plan__attr(&s.plan,
			   (static_check__is_go(what) && !static_check__links_libraries(what)) ||
			       s.plan.cfg.callgraph == AP_CG_FP,
			   false, true);
	for (int i = 0; i < n && !err; i++)
		err = attach_threads(&s, ids[i], threads, tids, &nt);
	if (err) {
		snprintf(what, sizeof(what), "%s %d", threads ? "thread" : "process", (int)ids[0]);
		if (err == -EACCES || err == -EPERM)
			outside_events__say_denied(-err, what);
		else
			fprintf(stderr, "autoprof: cannot open the sampling event %s on %s: %s\n",
				s.plan.cfg.event_name, what, strerror(-err));
		return 1;
	}
	if (!s.ev.nr) {
		fprintf(stderr, "autoprof: the %s ended before the attach\n",
			threads ? "threads" : "processes");
		return 1;
	}
	s.prog = ids[0];
	if (session_start(&s, output_name(output, ids[0]), attach_argv(ids[0])))
		return 1;
	outside_stat__open(&s.plan.cfg, tids, nt, false);
	for (int i = 0; i < n; i++)
		attach__synthesize(&s.out, ids[i], s.rings.uw);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (duration > 0)
		a.deadline = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec +
			     (uint64_t)(duration * 1e9);
	if (!quiet)
		fprintf(stderr,
			"autoprof: attached to %d thread%s of %d %s from outside (%s); %s; stacks: "
			"%s; until %s\n",
			nt, nt == 1 ? "" : "s", n, threads ? "thread list" : "process(es)",
			threads ? "-t" : "-p", outside_plan__rate(&s.plan), s.plan.stacks,
			duration > 0 ? "--duration, Ctrl-C or its end" : "Ctrl-C or its end");
	session_loop(&s, attach_done, &a);
	if (session_end(&s))
		return 1;
	outside_stat__finish(s.out.path);
	if (!quiet) {
		launcher_run__list_outputs(output, s.started);
		say_empty(&s, threads ? "the threads" : "the process");
	}
	return 0;
}
