/* SPDX-License-Identifier: MIT */
/*
 * top.c - `autoprof top [options] -p PID | -- command`: a live view of the
 * hottest functions, as perf top shows them, refreshed every second in the
 * terminal: sorted by self samples, or by total (the function anywhere on
 * the stack) with `t` (`s` back to self), quitting with `q` or Ctrl-C.
 *
 * The samples come from outside mode's machinery (outside.h: the plan, the
 * events on every thread, the per-CPU rings drained and unwound into a
 * perf.data by pout); the view reads that file back as it grows. The file is
 * a temporary one, removed at the end, unless -o names it: then it stays, a
 * complete perf.data of what the view showed. Functions are named by
 * top_names.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "autoprof/perf_file.h"
#include "common.h"
#include "launcher.h"
#include "outside.h"

#define MAX_TARGETS 4096

static struct {
	struct outside_plan plan;
	struct outside_events ev;
	struct outside_rings rings;
	struct perf_out out;
	int ring_fds[OUTSIDE_MAX_CPUS], nrings;
	int rfd; /* the file, read back */
	uint64_t roff;
	pid_t pid;
	bool command, ended, by_total, keep_file;
	bool zero;	    /* z: start the counts over at the next refresh */
	uint64_t lost_base; /* the lost count at the last z */
	char tmpdir[64];
	struct top_func *funcs; /* top_names.c's, as draw() found them */
	size_t nr_funcs;
	uint64_t samples, lost;
	struct termios saved_tty;
	bool tty;
} top;

static volatile sig_atomic_t quit_asked;

static void on_quit(int sig)
{
	(void)sig;
	quit_asked = 1;
}

/* Count one sample (the file's layout, AUTOPROF_SAMPLE_TYPE): its leaf self, every frame total. */
static void count_sample(const uint64_t *w, size_t nw)
{
	/* id, ip, pid|tid, time, cpu|res, period, nr, ips[nr] */
	uint64_t nr = nw > 6 ? w[6] : 0;
	bool leaf = true;
	struct top_func *funcs;
	size_t nf;

	if (nw < 7 || nr > nw - 7)
		return;
	top.samples++;

	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = w[7 + i];
		uint32_t f;

		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue; /* PERF_CONTEXT_USER and the like */
		/* a return address: the call is before it */
		f = top_names__func((int)(uint32_t)w[2], leaf ? ip : ip - 1, top.samples);
		funcs = top_names__funcs(&nf);
		if (f >= nf)
			continue;
		if (leaf)
			funcs[f].self++;
		if (funcs[f].mark != top.samples) {
			funcs[f].total++;
			funcs[f].mark = top.samples;
		}
		leaf = false;
	}
}

/* Read the records the file gained since the last call. */
static void read_new(void)
{
	static uint64_t buf[1 << 16];
	size_t have = 0;

	perf_out__flush(&top.out);
	for (;;) {
		uint64_t end = top.out.end, at = top.roff, want = end - at;
		ssize_t got;
		size_t used = 0;

		if (end <= at)
			break;
		if (want > sizeof(buf) - have)
			want = sizeof(buf) - have;
		got = pread(top.rfd, (char *)buf + have, want, (off_t)at);
		if (got <= 0)
			break;
		have += (size_t)got;
		top.roff += (uint64_t)got;
		while (have - used >= sizeof(struct perf_event_header)) {
			const struct perf_event_header *h =
			    (const void *)((const char *)buf + used);

			if (h->size < sizeof(*h) || h->size > have - used)
				break;
			if (h->type == PERF_RECORD_SAMPLE && !(h->size & 7))
				count_sample((const uint64_t *)(h + 1), (h->size - sizeof(*h)) / 8);
			else if (h->type == PERF_RECORD_COMM && h->size >= sizeof(*h) + 8 &&
				 (h->misc & PERF_RECORD_MISC_COMM_EXEC))
				top_names__exec(*(const int *)(h + 1));
			used += h->size;
		}
		memmove(buf, (char *)buf + used, have - used);
		have -= used;
	}
	top.roff -= have; /* a partial record: read again next time */
	if (top.zero) {	  /* after reading: what came before z is dropped */
		top_names__zero();
		top.samples = 0;
		top.lost_base = top.out.lost;
		top.zero = false;
	}
	top.lost = top.out.lost - top.lost_base;
}

static int by_key(const void *a, const void *b)
{
	const struct top_func *x = &top.funcs[*(const uint32_t *)a],
			      *y = &top.funcs[*(const uint32_t *)b];
	uint64_t kx = top.by_total ? x->total : x->self, ky = top.by_total ? y->total : y->self;

	return kx < ky ? 1 : kx > ky ? -1 : strcmp(x->name, y->name);
}

/* One screen: the header, then the functions by the chosen key. */
static void draw(const char *what)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	static uint32_t *order;
	static size_t order_cap;
	double all = top.samples ? (double)top.samples : 1;
	int rows, cols;

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
	rows = ws.ws_row > 6 ? ws.ws_row : 24;
	cols = ws.ws_col > 40 ? ws.ws_col : 80;
	top.funcs = top_names__funcs(&top.nr_funcs);
	if (order_cap < top.nr_funcs) {
		free(order);
		order_cap = top.nr_funcs * 2;
		order = malloc(order_cap * sizeof(*order));
		if (!order) {
			order_cap = 0;
			return;
		}
	}
	for (size_t i = 0; i < top.nr_funcs; i++)
		order[i] = (uint32_t)i;
	qsort(order, top.nr_funcs, sizeof(*order), by_key);
	/* Drawn over the last screen, each line cleared to its end and what is
	 * below the last one cleared after it, and written at once (stdout is
	 * fully buffered): the terminal never shows a blank or half screen. */
	printf("\033[H");
	printf("%.*s\033[K\r\n", cols - 1, what);
	printf("%llu samples, %llu lost%s; sorted by %s (s: self, t: total, z: zero, q: quit)"
	       "\033[K\r\n",
	       (unsigned long long)top.samples, (unsigned long long)top.lost,
	       top.ended ? "; it ended" : "", top.by_total ? "total" : "self");
	printf("\033[K\r\n%7s %7s  %s\033[K\r\n", "self", "total", "function");
	for (size_t i = 0; i < top.nr_funcs && (int)i < rows - 5; i++) {
		const struct top_func *f = &top.funcs[order[i]];

		if (!(top.by_total ? f->total : f->self))
			break;
		printf("%6.2f%% %6.2f%%  %.*s\033[K\r\n", 100.0 * (double)f->self / all,
		       100.0 * (double)f->total / all, cols - 18, f->name);
	}
	printf("\033[J");
	fflush(stdout);
}

/* Raw keys from the terminal (Ctrl-C still a signal); restored by tty_restore(). */
static void tty_raw(void)
{
	struct termios t;

	top.tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &top.saved_tty) == 0;
	if (!top.tty)
		return;
	t = top.saved_tty;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
	printf("\033[?1049h\033[?25l"); /* the alternate screen, no cursor */
}

static void tty_restore(void)
{
	if (!top.tty)
		return;
	printf("\033[?25h\033[?1049l");
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSANOW, &top.saved_tty);
}

/* The keys typed since the last look: q quits, t and s choose the order. */
static void read_keys(void)
{
	char k[16];
	ssize_t n = top.tty ? read(STDIN_FILENO, k, sizeof(k)) : 0;

	for (ssize_t i = 0; i < n; i++) {
		if (k[i] == 'q' || k[i] == 'Q')
			quit_asked = 1;
		else if (k[i] == 't' || k[i] == 'T')
			top.by_total = true;
		else if (k[i] == 's' || k[i] == 'S')
			top.by_total = false;
		else if (k[i] == 'z' || k[i] == 'Z')
			top.zero = true;
	}
}

/* Open the events on every thread of the target. Returns 0 or -errno. */
static int open_events(void)
{
	static pid_t tids[MAX_TARGETS];
	int n, err = 0;

	if (top.command)
		return outside_events__add(&top.ev, &top.plan, top.pid);
	n = attach__threads(top.pid, tids, MAX_TARGETS);
	if (!n)
		return -ESRCH;
	for (int i = 0; i < n && !err; i++) {
		err = outside_events__add(&top.ev, &top.plan, tids[i]);
		if (err == -ESRCH)
			err = 0; /* the thread ended meanwhile */
	}
	return err;
}

/* Map the rings and create the file (@path), as outside mode does. Returns 0 or -1 (said). */
static int start(const char *path, char **argv)
{
	struct perf_event_attr fa = top.plan.attr;
	int err;

	for (int cpu = 0; cpu < top.ev.ncpu; cpu++)
		if (top.ev.ring_fd[cpu] >= 0)
			top.ring_fds[top.nrings++] = top.ev.ring_fd[cpu];
	top.rings.dwarf = top.plan.dwarf;
	top.rings.callchain = top.plan.dwarf;
	top.rings.stack_depth = (int)top.plan.cfg.stack_depth;
	top.rings.regs_mask = top.plan.attr.sample_regs_user;
	top.rings.uw = top.plan.dwarf ? unwind_user__new() : NULL;
	top.rings.out = &top.out;
	err = outside_rings__map(&top.rings, top.ring_fds, top.nrings,
				 top.plan.dwarf ? 4 * OUTSIDE_RING_PAGES : OUTSIDE_RING_PAGES);
	if (!err)
		err = outside_events__redirect(&top.ev); /* every event into its CPU's ring */
	if (err) {
		fprintf(stderr, "autoprof: cannot map the sampling rings: %s\n", strerror(-err));
		return -1;
	}
	fa.sample_type = AUTOPROF_SAMPLE_TYPE; /* stacks as callchains, as outside mode writes */
	fa.sample_regs_user = 0;
	fa.sample_stack_user = 0;
	fa.exclude_callchain_user = top.plan.cfg.callgraph == AP_CG_NONE;
	fa.disabled = 0;
	fa.enable_on_exec = 0;
	fa.watermark = 0;
	fa.wakeup_watermark = 0;
	fa.mmap = fa.mmap2 = fa.comm = fa.comm_exec = fa.task = 1; /* (the tracking event's) */
	err = perf_out__open(&top.out, path, &fa, top.plan.cfg.event_name, top.ev.ids, top.ev.nr,
			     argv);
	if (!err) {
		top.rfd = open(path, O_RDONLY | O_CLOEXEC);
		if (top.rfd < 0)
			err = -errno;
	}
	if (err) {
		fprintf(stderr, "autoprof: cannot create %s: %s\n", path, strerror(-err));
		return -1;
	}
	top.roff = top.out.data_off;
	if (!top.command)
		attach__synthesize(&top.out, top.pid, top.rings.uw);
	return 0;
}

/* Has the target ended? A command is reaped here (its status into @status). */
static bool target_ended(int *status)
{
	char path[64];

	if (top.command)
		return waitpid(top.pid, status, WNOHANG) == top.pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)top.pid);
	return access(path, F_OK) != 0;
}

/* Refresh every second until q or Ctrl-C; the command (if any) gets SIGINT then. */
static void loop(const char *what)
{
	struct pollfd pf[OUTSIDE_MAX_CPUS + 1];
	struct timespec now;
	double next = 0;
	int status = 0;

	for (int i = 0; i < top.nrings; i++)
		pf[i] = (struct pollfd){.fd = top.ring_fds[i], .events = POLLIN};
	pf[top.nrings] = (struct pollfd){.fd = STDIN_FILENO, .events = top.tty ? POLLIN : 0};
	while (!quit_asked) {
		bool was_total = top.by_total, was_zero = top.zero;

		poll(pf, (nfds_t)top.nrings + 1, 100);
		outside_rings__drain(&top.rings);
		read_keys();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!top.ended && target_ended(&status))
			top.ended = true;
		if (now.tv_sec + now.tv_nsec / 1e9 >= next || was_total != top.by_total ||
		    was_zero != top.zero) {
			read_new();
			draw(what);
			next = now.tv_sec + now.tv_nsec / 1e9 + 1;
			if (top.ended && !top.tty)
				break; /* no keys to wait for: the last screen is the end */
		}
	}
	if (top.command && !top.ended) {
		kill(top.pid, SIGINT);
		for (int i = 0; i < 30 && waitpid(top.pid, &status, WNOHANG) != top.pid; i++)
			usleep(100000);
		if (kill(top.pid, 0) == 0) {
			kill(top.pid, SIGKILL);
			waitpid(top.pid, &status, 0);
		}
	}
}

/* The command, stopped until the events are open; its output to /dev/null (the view's screen). */
static pid_t spawn(char **argv, int *go, int *failed)
{
	int p[2], e[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char c;
		int null = open("/dev/null", O_RDWR);

		close(p[1]);
		close(e[0]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		launcher__restore_xfsz();
		execvp(argv[0], argv);
		c = (char)errno; /* for the launcher, which says it */
		if (write(e[1], &c, 1) != 1)
			c = 0;
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(p[0]);
	close(e[1]);
	*go = p[1];
	*failed = e[0];
	return pid;
}

int top__run(char **argv, pid_t pid, const char *output, bool output_given)
{
	static char screen[1 << 16];
	char what[512], path[sizeof(top.tmpdir) + 16];
	struct sigaction sa = {.sa_handler = on_quit};
	int go = -1, failed = -1, err, status = 0;
	char why = 0;

	setvbuf(stdout, screen, _IOFBF, sizeof(screen)); /* a screen in one write (draw()) */
	top.command = argv != NULL;
	top.keep_file = output_given;
	if (outside_plan__init(&top.plan, 1) || outside_events__init(&top.ev))
		return 2;
	if (!top.command && kill(pid, 0) && errno == ESRCH) {
		fprintf(stderr, "autoprof: top -p %d: no such process\n", (int)pid);
		return 2;
	}
	outside_plan__attr(&top.plan, top.plan.cfg.callgraph == AP_CG_FP, top.command, true);
	top.pid = top.command ? spawn(argv, &go, &failed) : pid;
	if (top.pid < 0) {
		perror("autoprof: top");
		return 126;
	}
	err = open_events();
	if (err) {
		if (err == -EACCES || err == -EPERM)
			outside_events__say_denied(-err,
						   top.command ? "the command" : "the process");
		else
			fprintf(stderr, "autoprof: cannot open the sampling event %s: %s\n",
				top.plan.cfg.event_name, strerror(-err));
		if (top.command)
			kill(top.pid, SIGKILL);
		return 1;
	}
	if (!output_given) {
		snprintf(top.tmpdir, sizeof(top.tmpdir), "/tmp/autoprof-top.XXXXXX");
		if (!mkdtemp(top.tmpdir)) {
			perror("autoprof: top: a temporary folder");
			return 1;
		}
	}
	snprintf(path, sizeof(path), "%s/top.data", top.tmpdir);
	if (start(output_given ? output : path, argv)) {
		if (top.command)
			kill(top.pid, SIGKILL);
		return 1;
	}
	top_names__func(top.pid, 0, 0); /* its maps read now, while it runs */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL); /* a closed output: end cleanly, the file removed */
	if (top.command) {
		snprintf(what, sizeof(what), "autoprof top: %s (pid %d), %s", argv[0], (int)top.pid,
			 outside_plan__rate(&top.plan));
		if (write(go, "x", 1) != 1)
			quit_asked = 1;
		close(go);
		if (read(failed, &why, 1) == 1) { /* the exec failed: nothing to watch */
			fprintf(stderr, "autoprof: cannot run '%s': %s\n", argv[0], strerror(why));
			waitpid(top.pid, &status, 0);
			top.ended = true;
			quit_asked = 1;
		}
		close(failed);
	} else {
		snprintf(what, sizeof(what), "autoprof top: pid %d, %s", (int)pid,
			 outside_plan__rate(&top.plan));
	}
	if (!why) {
		tty_raw();
		loop(what);
		tty_restore();
	}
	outside_rings__drain(&top.rings);
	outside_events__close(&top.ev);
	outside_rings__drain(&top.rings);
	read_new();
	err = output_given ? perf_out__finish(&top.out) : 0;
	outside_rings__unmap(&top.rings);
	unwind_user__free(top.rings.uw);
	close(top.rfd);
	if (!output_given) {
		unlink(path);
		rmdir(top.tmpdir);
	}
	if (why) { /* nothing ran: no file, as without us (said above) */
		if (output_given)
			unlink(top.out.path);
		top_names__end();
		return why == ENOENT ? 127 : 126;
	}
	fprintf(stderr, "autoprof: top: %llu samples%s%s\n", (unsigned long long)top.samples,
		output_given ? (err ? ", the file could not be finished: " : "; wrote ") : "",
		output_given ? (err ? strerror(-err) : top.out.path) : "");
	top_names__end();
	return err ? 1 : 0;
}
