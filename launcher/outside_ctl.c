/* SPDX-License-Identifier: MIT */
/*
 * outside_ctl.c - `autoprof ctl PID start|stop|dump|status` in outside mode
 * (outside.h): the library's protocol (include/autoprof/control.h), served
 * by the launcher. It publishes the endpoint DIR/PID of the profiled program
 * (the command's pid, or the first -p/-t target) and DIR/LPID of itself,
 * both with "server LPID": `autoprof ctl` then queues the request signal to
 * the launcher, never to the program, which sees nothing. The handler only
 * keeps the request; the launcher's loop (its poll is cut short by the
 * signal) acts on it and writes the answer to both DIR/PID.reply and
 * DIR/LPID.reply, whole, through a temporary file and a rename.
 * Not async-signal-safe, but for on_request.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "outside.h"

static char endpoint[2][4200];
static int nr_endpoints;
static uint32_t token;
static volatile sig_atomic_t pending;
static volatile uint64_t request;
static uint64_t last_request;

/* The request's signal handler: keep a request carrying our token. Async-signal-safe. */
static void on_request(int sig, siginfo_t *si, void *uc)
{
	uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;

	(void)sig;
	(void)uc;
	if (si->si_code == SI_QUEUE && token && (uint32_t)(v >> 32) == token) {
		request = v;
		pending = 1;
	}
}

/* /proc/@pid/@name into @buf (@cap bytes, NUL-terminated); false when unreadable. */
static bool proc_text(pid_t pid, const char *name, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	n = raw_syscall__read_file(path, buf, cap - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

uint64_t outside_ctl__threads(pid_t pid)
{
	char buf[2048], *p;

	if (!proc_text(pid, "status", buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\nThreads:");
	return p ? strtoull(p + 9, NULL, 10) : 0;
}

/* Start time of process @pid in clock ticks since boot (field 22 of its stat), or 0. */
static unsigned long long start_of(pid_t pid)
{
	char buf[1024], *p;

	if (!proc_text(pid, "stat", buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/*
 * Is the endpoint at @path the library's own, of process @pid as it runs now
 * (attached with -p while the library profiles it)? Then it is left alone.
 */
static bool library_endpoint(const char *path, pid_t pid)
{
	char text[8192], start[64];

	if (raw_syscall__read_file(path, text, sizeof(text) - 1) <= 0)
		return false;
	text[sizeof(text) - 1] = 0;
	snprintf(start, sizeof(start), "\nstart %llu\n", start_of(pid));
	return strstr(text, start) && !strstr(text, "\nserver ");
}

/* Write @text to @path whole: a temporary file, then a rename. */
static int put_file(const char *path, const char *text)
{
	char tmp[sizeof(endpoint) + 8];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || close(fd) < 0 || rename(tmp, path) < 0) {
		int err = -errno;

		unlink(tmp);
		return err ? err : -EIO;
	}
	return 0;
}

int outside_ctl__publish(pid_t prog, const char *file)
{
	pid_t pids[2] = {prog, getpid()};
	char dir[4096], text[4800];
	struct sigaction sa;
	int err = ap_control_dir_make(dir, sizeof(dir), getenv("XDG_RUNTIME_DIR"));

	while (!err && !token)
		if (getrandom(&token, sizeof(token), 0) != (ssize_t)sizeof(token))
			token = (uint32_t)((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_request;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the loop's poll returns at once */
	sigemptyset(&sa.sa_mask);
	if (!err && sigaction(OUTSIDE_CTL_SIGNAL, &sa, NULL) < 0)
		err = -errno;
	for (int i = 0; i < 2 && !err; i++) {
		if (pids[i] <= 0 || (i && pids[i] == pids[0]))
			continue;
		snprintf(endpoint[nr_endpoints], sizeof(endpoint[0]), "%s/%d", dir, (int)pids[i]);
		if (library_endpoint(endpoint[nr_endpoints], pids[i]))
			continue; /* -p on a process the library profiles: its own ctl stays */
		snprintf(text, sizeof(text),
			 "%s\npid %d\nstart %llu\nsignal %d\ntoken %u\nserver %d\nfile %s\n",
			 AP_CONTROL_MAGIC, (int)pids[i], start_of(pids[i]), OUTSIDE_CTL_SIGNAL,
			 token, (int)getpid(), file);
		err = put_file(endpoint[nr_endpoints], text);
		if (!err)
			nr_endpoints++;
	}
	if (err)
		fprintf(stderr,
			"autoprof: no control endpoint (%s: %s); `autoprof ctl` cannot reach this "
			"run\n",
			dir, strerror(-err));
	return err;
}

uint64_t outside_ctl__take(void)
{
	if (!pending)
		return 0;
	pending = 0;
	return request;
}

/* Append "key value\n" to @buf. */
static void put_u64(char *buf, size_t cap, const char *key, uint64_t v)
{
	size_t n = strlen(buf);

	snprintf(buf + n, cap - n, "%s %llu\n", key, (unsigned long long)v);
}

void outside_ctl__answer(uint64_t v, const struct outside_ctl_state *st)
{
	static char text[4800];
	char reply[sizeof(endpoint) + 8];

	/* A request asked again (no answer seen yet) gets the same answer. */
	if (v != last_request) {
		last_request = v;
		snprintf(text, sizeof(text), "%s\n", AP_CONTROL_MAGIC);
		put_u64(text, sizeof(text), "nonce", (v >> 8) & 0xffffff);
		put_u64(text, sizeof(text), "op", v & 0xff);
		put_u64(text, sizeof(text), "changed", st->changed);
		put_u64(text, sizeof(text), "sampling", st->sampling);
		put_u64(text, sizeof(text), "since", st->since);
		put_u64(text, sizeof(text), "sampled_ns", st->sampled_ns);
		put_u64(text, sizeof(text), "now", st->now);
		put_u64(text, sizeof(text), "samples", st->samples);
		put_u64(text, sizeof(text), "lost", st->lost);
		put_u64(text, sizeof(text), "threads", st->threads);
		put_u64(text, sizeof(text), "mode_timer", 0);
		put_u64(text, sizeof(text), "outside", 1);
		put_u64(text, sizeof(text), "error", (uint64_t)(st->error < 0 ? -st->error : 0));
		put_u64(text, sizeof(text), "arrived", st->now);
		put_u64(text, sizeof(text), "took_ns", st->took_ns);
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "file %s\n", st->file);
	}
	for (int i = 0; i < nr_endpoints; i++) {
		snprintf(reply, sizeof(reply), "%s.reply", endpoint[i]);
		put_file(reply, text);
	}
}

void outside_ctl__withdraw(void)
{
	char reply[sizeof(endpoint) + 8];

	token = 0;
	for (int i = 0; i < nr_endpoints; i++) {
		snprintf(reply, sizeof(reply), "%s.reply", endpoint[i]);
		unlink(endpoint[i]);
		unlink(reply);
	}
	nr_endpoints = 0;
	signal(OUTSIDE_CTL_SIGNAL, SIG_IGN);
}
