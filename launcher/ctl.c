/* SPDX-License-Identifier: MIT */
/*
 * ctl.c - `autoprof ctl [-t] PID start|stop|dump|status`: control of a
 * process profiled by libautoprof.so, through the endpoint it publishes
 * (include/autoprof/control.h, preload/session/control.c).
 *
 * The request is the process's own sampling signal, queued to one of its
 * threads with a value that carries the endpoint's token: a running thread
 * if there is one, else one waiting on a futex (a lock, a condition, a
 * join: those waits go on after a handler), else the main thread. Any
 * problem (no such process, another user's, not profiled, gone, no answer)
 * is one line on stderr and exit status 1. The pid of a launcher that runs
 * its command under the library stands for every process of its run
 * (ctl_tree.c); one that profiles from outside serves the requests itself.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "launcher.h"

#define ANSWER_WAIT_NS 2000000000ULL

struct endpoint {
	char path[4096];
	int pid, signo;
	unsigned long long start;
	uint32_t token;
	int server;    /* outside mode: the launcher that serves the requests, or 0 */
	bool launcher; /* library mode: the launcher's own, for the run (ctl_tree.c) */
	char file[4096];
};

static const char *const ops[] = {[AP_CTL_STATUS] = "status",
				  [AP_CTL_START] = "start",
				  [AP_CTL_STOP] = "stop",
				  [AP_CTL_DUMP] = "dump"};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Find and read the endpoint of pid (owned by uid). Returns 0, 1 after saying
 * why, or CTL_ABSENT (silently when quiet) when pid has none.
 */
static int find_endpoint(int pid, uid_t uid, struct endpoint *e, bool quiet)
{
	char dirs[3][1024], text[8192], v[64];
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n = 0;

	if (uid == getuid() && xdg && *xdg)
		ap_control_dir(dirs[n++], sizeof(dirs[0]), xdg, uid);
	snprintf(v, sizeof(v), "/run/user/%u", (unsigned)uid);
	ap_control_dir(dirs[n++], sizeof(dirs[0]), v, uid);
	ap_control_dir(dirs[n++], sizeof(dirs[0]), NULL, uid);
	for (int i = 0; i < n; i++) {
		snprintf(e->path, sizeof(e->path), "%s/%d", dirs[i], pid);
		if (textfile__read(e->path, text, sizeof(text)) < 0)
			continue;
		e->launcher = textfile__field_u64(text, "launcher") != 0;
		if (strncmp(text, AP_CONTROL_MAGIC "\n", strlen(AP_CONTROL_MAGIC) + 1) ||
		    (!e->launcher && !textfile__field(text, "token", v, sizeof(v)))) {
			fprintf(stderr, "autoprof ctl: %s is not an autoprof control endpoint\n",
				e->path);
			return 1;
		}
		e->token = e->launcher ? 0 : (uint32_t)strtoul(v, NULL, 10);
		e->pid = (int)textfile__field_u64(text, "pid");
		e->signo = (int)textfile__field_u64(text, "signal");
		e->start = textfile__field_u64(text, "start");
		e->server = (int)textfile__field_u64(text, "server");
		if (!textfile__field(text, "file", e->file, sizeof(e->file)))
			e->file[0] = 0;
		return 0;
	}
	if (quiet)
		return CTL_ABSENT;
	fprintf(stderr,
		"autoprof ctl: process %d is not profiled by autoprof (no control endpoint in %s "
		"or %s)\n",
		pid, dirs[0], dirs[n - 1]);
	return 1;
}

/*
 * Is pid an autoprof launcher, or may it be one an instant from now? Its
 * name is autoprof, or autoprof-outside (which it becomes for a mode that
 * profiles from outside, cut to the kernel's 15 characters), or it was
 * forked under a second ago and still has its parent's name: the shell's
 * child of `autoprof ... & autoprof ctl $! OP` before its exec.
 */
static bool is_launcher(int pid)
{
	char path[64], comm[64], parent[64], stat[1024], up[64], *p;
	unsigned long long start;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (textfile__read(path, comm, sizeof(comm)) <= 0)
		return false;
	if (!strcmp(comm, "autoprof\n") || !strcmp(comm, "autoprof-outsid\n"))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (textfile__read(path, stat, sizeof(stat)) <= 0 || !(p = strrchr(stat, ')')) ||
	    sscanf(p + 2, "%*c %d", &ppid) != 1 || !textfile__stat(path, &start, &(char){0}) ||
	    textfile__read("/proc/uptime", up, sizeof(up)) <= 0 ||
	    strtod(up, NULL) - (double)start / (double)sysconf(_SC_CLK_TCK) > 1.0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", ppid);
	return textfile__read(path, parent, sizeof(parent)) > 0 && !strcmp(comm, parent);
}

/*
 * Is a thread asleep in this kernel function (its wchan) in a wait that a
 * handler does not cut short (SA_RESTART restarts it, or glibc resumes it)?
 */
static bool restartable(const char *wchan)
{
	static const char *const waits[] = {"futex",	    "pipe_read",       "unix_stream_read",
					    "sk_wait_data", "inet_csk_accept", "do_wait",
					    "wait_woken"};

	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (strstr(wchan, waits[i]))
			return true;
	return false;
}

/*
 * The thread to queue the request to. A sleeping thread is woken at once by
 * the signal, while a running one may wait for a CPU on a busy machine: one
 * asleep in a wait that goes on after a handler (a lock, a condition, a
 * read, an accept, a join) comes first, then one running, then the main
 * thread (a thread in epoll_wait, poll or a sleep would see EINTR there; see
 * doc/limits.md).
 */
static int pick_thread(int pid)
{
	char path[128], wchan[128];
	int running = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return pid;
	while ((d = readdir(dir))) {
		int tid = atoi(d->d_name);
		unsigned long long start;
		char state = 0;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
		if (!textfile__stat(path, &start, &state))
			continue;
		if (state == 'R') {
			running = running ? running : tid;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
		if (state == 'S' && textfile__read(path, wchan, sizeof(wchan)) > 0 &&
		    restartable(wchan)) {
			closedir(dir);
			return tid;
		}
	}
	closedir(dir);
	return running ? running : pid;
}

/* Format a duration in ns for people. */
static const char *span(uint64_t ns, char *buf, size_t cap)
{
	double s = (double)ns / 1e9;

	if (s < 120)
		snprintf(buf, cap, "%.1f s", s);
	else if (s < 7200)
		snprintf(buf, cap, "%.1f min", s / 60);
	else
		snprintf(buf, cap, "%.1f h", s / 3600);
	return buf;
}

/* Say what the answer says, for op; its counts into a. */
static void print_answer(int pid, int op, const char *text, struct ctl_answer *out)
{
	bool on = textfile__field_u64(text, "sampling");
	uint64_t now = textfile__field_u64(text, "now"), since = textfile__field_u64(text, "since");
	uint64_t sampled =
	    textfile__field_u64(text, "sampled_ns") + (on && now > since ? now - since : 0);
	unsigned long long samples = textfile__field_u64(text, "samples"),
			   lost = textfile__field_u64(text, "lost");
	unsigned long long err = textfile__field_u64(text, "error");
	char file[4096] = "", a[32], b[32];

	textfile__field(text, "file", file, sizeof(file));
	out->samples = samples;
	out->lost = lost;
	out->threads = textfile__field_u64(text, "threads");
	out->sampling = on;
	switch (op) {
	case AP_CTL_START:
		printf("pid %d: sampling %s; file %s\n", pid,
		       textfile__field_u64(text, "changed") ? "started" : "was already on", file);
		break;
	case AP_CTL_STOP:
		printf("pid %d: sampling %s; %llu samples so far are in %s\n", pid,
		       textfile__field_u64(text, "changed") ? "stopped" : "was already off",
		       samples, file);
		break;
	case AP_CTL_DUMP:
		printf("pid %d: %llu samples so far are in %s (complete: perf report -i %s)\n", pid,
		       samples, file, file);
		break;
	default: {
		time_t at = time(NULL) - (time_t)((now > since ? now - since : 0) / 1000000000ULL);
		char when[32];

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&at));
		printf("pid %d: sampling %s since %s, %s ago (%s sampled in all)%s\n", pid,
		       on ? "on" : "off", when, span(now > since ? now - since : 0, a, sizeof(a)),
		       span(sampled, b, sizeof(b)),
		       textfile__field_u64(text, "mode_timer") ? ", with CPU-time timers" : "");
		printf("samples: %llu (%llu lost) from %llu threads sampled now\n", samples, lost,
		       textfile__field_u64(text, "threads"));
		printf("file: %s\n", file);
	}
	}
	if (err)
		fprintf(stderr, "autoprof ctl: pid %d: writing the profile failed: %s\n", pid,
			strerror((int)err));
}

static int usage(void)
{
	fprintf(stderr, "usage: autoprof ctl [-t] PID start|stop|dump|status\n");
	return 2;
}

bool ctl__has_endpoint(int pid)
{
	struct endpoint e;
	struct stat st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) == 0 && find_endpoint(pid, st.st_uid, &e, true) == 0;
}

/* `autoprof ctl [-t] PID OP`: see the top of the file. */
int ctl__run(int argc, char **argv)
{
	struct ctl_answer a;
	bool timing = argc > 1 && !strcmp(argv[1], "-t");
	char *end;
	int pid, op = 0;

	argv += timing;
	argc -= timing;
	if (argc >= 3 && !strcmp(argv[2], "memory")) { /* memory profiling is chosen at start */
		fprintf(stderr,
			"autoprof ctl: memory profiling cannot be added to a running process: "
			"start it with autoprof --memory (the allocator's wrappers are "
			"preloaded then); ctl start|stop resume and pause what it was "
			"started with\n");
		return 2;
	}
	if (argc != 3)
		return usage();
	for (int i = 1; i < 5; i++)
		if (!strcmp(argv[2], ops[i]))
			op = i;
	if (!op)
		return usage();
	errno = 0;
	pid = (int)strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || pid <= 0) {
		fprintf(stderr, "autoprof ctl: '%s' is not a process id\n", argv[1]);
		return 1;
	}
	return ctl__one(pid, op, timing, false, &a);
}

int ctl__one(int pid, int op, bool timing, bool in_tree, struct ctl_answer *a)
{
	char reply[4200], text[8192], path[128];
	struct endpoint e;
	unsigned long long start;
	struct stat st;
	siginfo_t si;
	uint64_t t0, nonce;
	int tid, rc;
	char state;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) < 0) {
		if (in_tree)
			return CTL_ABSENT; /* ended meanwhile */
		fprintf(stderr, "autoprof ctl: no process %d\n", pid);
		return 1;
	}
	if (st.st_uid != getuid() && getuid() != 0) {
		if (in_tree)
			return CTL_ABSENT;
		fprintf(stderr, "autoprof ctl: process %d belongs to another user (uid %u)\n", pid,
			(unsigned)st.st_uid);
		return 1;
	}
	/* `autoprof -- CMD & autoprof ctl $! OP` at once: the launcher may not
	 * have published its endpoint yet */
	for (uint64_t begin = mono_ns(); !in_tree && is_launcher(pid) &&
					 find_endpoint(pid, st.st_uid, &e, true) == CTL_ABSENT &&
					 mono_ns() - begin < ANSWER_WAIT_NS;)
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	rc = find_endpoint(pid, st.st_uid, &e, in_tree);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!textfile__stat(path, &start, &state) || (e.start && start != e.start)) {
		unlink(e.path);
		if (in_tree)
			return CTL_ABSENT;
		fprintf(stderr,
			"autoprof ctl: process %d is gone (it left a stale control endpoint, now "
			"removed)\n",
			pid);
		return 1;
	}
	if (e.launcher) /* library mode: every profiled process of the run */
		return in_tree ? CTL_ABSENT : ctl_tree__request(pid, op, timing);
	if (!e.signo || !e.token) {
		fprintf(stderr, "autoprof ctl: %s is incomplete\n", e.path);
		return 1;
	}

	snprintf(reply, sizeof(reply), "%s.reply", e.path);
	srand((unsigned)(mono_ns() ^ (uint64_t)getpid()));
	nonce = (uint64_t)(rand() & 0xffffff);
	memset(&si, 0, sizeof(si));
	si.si_signo = e.signo;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr =
	    (void *)(uintptr_t)((uint64_t)e.token << 32 | nonce << 8 | (uint64_t)op);
	/* Profiled from outside: the launcher (e.server) takes the request. */
	tid = e.server ? e.server : pick_thread(pid);
	t0 = mono_ns();
	if (e.server
		? syscall(SYS_rt_sigqueueinfo, e.server, e.signo, &si) < 0
		: syscall(SYS_rt_tgsigqueueinfo, pid, tid, e.signo, &si) < 0 &&
		      (errno != ESRCH || syscall(SYS_rt_sigqueueinfo, pid, e.signo, &si) < 0)) {
		fprintf(stderr, "autoprof ctl: cannot signal process %d: %s\n",
			e.server ? e.server : pid, strerror(errno));
		return 1;
	}
	for (uint64_t sent = t0;;) {
		struct timespec nap = {0, 200000};

		/* A standard sampling signal (SIGPROF) already pending on that
		 * thread absorbs ours: ask again every 100 ms (the process answers
		 * a repeated nonce once). */
		if (mono_ns() - sent > 100000000ULL) {
			sent = mono_ns();
			if (e.server || syscall(SYS_rt_tgsigqueueinfo, pid, tid, e.signo, &si) < 0)
				syscall(SYS_rt_sigqueueinfo, e.server ? e.server : pid, e.signo,
					&si);
		}
		if (textfile__read(reply, text, sizeof(text)) > 0 &&
		    !strncmp(text, AP_CONTROL_MAGIC "\n", strlen(AP_CONTROL_MAGIC) + 1) &&
		    textfile__field_u64(text, "nonce") == nonce && strstr(text, "\nfile "))
			break;
		if (mono_ns() - t0 > ANSWER_WAIT_NS) {
			fprintf(stderr,
				"autoprof ctl: process %d did not answer within %llu s (stopped, "
				"or ending?)\n",
				pid, ANSWER_WAIT_NS / 1000000000ULL);
			return 1;
		}
		nanosleep(&nap, NULL);
	}
	print_answer(pid, op, text, a);
	if (timing)
		printf("answered in %.3f ms (delivered after %.3f ms, acted on in %.3f ms)\n",
		       (double)(mono_ns() - t0) / 1e6,
		       ((double)textfile__field_u64(text, "arrived") - (double)t0) / 1e6,
		       (double)textfile__field_u64(text, "took_ns") / 1e6);
	return 0;
}
