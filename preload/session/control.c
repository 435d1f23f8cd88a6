/* SPDX-License-Identifier: MIT */
/*
 * control.c - `autoprof ctl PID start|stop|dump|status`: control of a
 * running process, through the sampling signal the library already holds.
 *
 * At start the library writes its control endpoint, DIR/PID (DIR is
 * $XDG_RUNTIME_DIR/autoprof, else /tmp/autoprof-UID; both mode 0700, the file
 * 0600): the process's start time (to tell a reused pid), the sampling signal,
 * a random token and the profile's path. `autoprof ctl` reads it and queues
 * the sampling signal with si_code SI_QUEUE and the value
 * token << 32 | nonce << 8 | command. Our handler (on_signal.c) takes such a
 * delivery as a request, never as a sample or the program's signal, acts on
 * it at once from the thread it landed on, and writes its answer to
 * DIR/PID.reply (through a temporary file and a rename), which ctl reads.
 *
 * No new signal, fd or thread is visible to the program: the signal number
 * is the one the library holds anyway (a program that takes it moves
 * sampling, and the endpoint, to another number; with a Go runtime our
 * handler is chained and sees the request first), and the answer's fd lives
 * inside the handler only.
 *
 * Acting from one thread on the others: every thread is taken from its own
 * handler for a moment (samplers.c, registry__visit) to flush its buffer
 * (dump), or to end or make its perf event or disarm or arm its CPU-time
 * timer (stop, start). Blocked threads are never woken up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "internal.h"

/* The endpoint of this image, set up before any request can come. */
static char endpoint[PATH_MAX], reply[PATH_MAX + 8], reply_tmp[PATH_MAX + 16];
static uint32_t token; /* 0: no endpoint */

/* A thread's counts, added up over a visit. */
struct tally {
	uint64_t samples, lost;
	int threads;
	int op;
};

/*
 * The folder of the endpoints: made 0700 when missing; it must be ours, a
 * real folder, and closed to others. Returns 0 or -errno. Not async-signal-safe.
 */
int control__dir(char *out, size_t cap)
{
	return ap_control_dir_make(out, cap, getenv("XDG_RUNTIME_DIR"));
}

/* This process's start time in clock ticks since boot (/proc/self/stat field 22), or 0. */
static unsigned long long start_ticks(void)
{
	char buf[1024], *p;
	unsigned long long v = 0;

	if (raw_syscall__read_file("/proc/self/stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &v) != 1)
		return 0;
	return v;
}

/*
 * Remove the endpoints in dir of processes that are gone (killed by SIGKILL,
 * or ended by a raw exit_group): the first process of each run does it.
 * Not async-signal-safe.
 */
static void sweep(const char *dir)
{
	char path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || end == e->d_name || (*end && strcmp(end, ".reply")) ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/*
 * Write this image's endpoint: at start (a forked child or an exec'd image
 * gets a token of its own), and again when sampling moves to another
 * signal (the same token). Said once when it cannot be written; the profile
 * goes on, without control. Not async-signal-safe.
 */
void control__publish(void)
{
	static pid_t published;
	static int image;
	char dir[PATH_MAX], tmp[PATH_MAX + 16], text[PATH_MAX + 256];
	uint32_t tok = 0;
	int fd, n, err;
	pid_t pid = getpid();

	if (published == pid && image == autoprof.gen)
		tok = __atomic_load_n(&token, __ATOMIC_SEQ_CST); /* 0 if withdrawn */
	published = pid;
	image = autoprof.gen;
	if (!tok) /* a new token: none is valid until the file names it. A republish
		   * (sampling moved) keeps the token valid throughout: a request that
		   * read the old file must not reach the program as its signal. */
		__atomic_store_n(&token, 0, __ATOMIC_SEQ_CST);
	err = control__dir(dir, sizeof(dir));
	if (!err && (size_t)snprintf(endpoint, sizeof(endpoint), "%s/%d", dir, (int)pid) >=
			sizeof(endpoint))
		err = -ENAMETOOLONG;
	if (err) {
		pr_warn("no control endpoint (%s: %s); `autoprof ctl` cannot reach this process",
			dir, strerror(-err));
		endpoint[0] = 0;
		return;
	}
	if (autoprof.top && autoprof.gen == 0 && !tok)
		sweep(dir);
	snprintf(reply, sizeof(reply), "%s.reply", endpoint);
	snprintf(reply_tmp, sizeof(reply_tmp), "%s.reply.tmp", endpoint);
	snprintf(tmp, sizeof(tmp), "%s.tmp", endpoint);
	while (!tok)
		if (raw_syscall(SYS_getrandom, &tok, sizeof(tok), 0) != sizeof(tok))
			tok = (uint32_t)(ap_now() ^ ((uint64_t)pid << 16));
	n = snprintf(text, sizeof(text), "%s\npid %d\nstart %llu\nsignal %d\ntoken %u\nfile %s\n",
		     AP_CONTROL_MAGIC, (int)pid, start_ticks(), autoprof.signo, tok,
		     autoprof.writer.path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, (size_t)n) != n || close(fd) < 0 || rename(tmp, endpoint)) {
		pr_warn("no control endpoint (%s: %s); `autoprof ctl` cannot reach this process",
			endpoint, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		endpoint[0] = 0;
		return;
	}
	__atomic_store_n(&token, tok, __ATOMIC_SEQ_CST);
}

/* Remove this image's endpoint (the process ends or execs). Async-signal-safe. */
void control__withdraw(void)
{
	if (!__atomic_exchange_n(&token, 0, __ATOMIC_SEQ_CST) || !endpoint[0])
		return;
	raw_syscall(SYS_unlink, endpoint);
	raw_syscall(SYS_unlink, reply);
}

/* Is this delivery of the sampling signal a request of `autoprof ctl`? Async-signal-safe. */
bool control__is_request(const siginfo_t *si)
{
	uint32_t tok = __atomic_load_n(&token, __ATOMIC_RELAXED);

	return tok && si->si_code == SI_QUEUE &&
	       (uint32_t)((uint64_t)(uintptr_t)si->si_value.sival_ptr >> 32) == tok;
}

/* Append s to buf (of cap bytes, NUL-terminated). Async-signal-safe. */
static void put(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(buf);

	while (*s && n + 1 < cap)
		buf[n++] = *s++;
	buf[n] = 0;
}

/* Append "key value\n". Async-signal-safe. */
static void put_u64(char *buf, size_t cap, const char *key, uint64_t v)
{
	char digits[24];
	int i = (int)sizeof(digits) - 1;

	digits[i] = 0;
	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(buf, cap, key);
	put(buf, cap, " ");
	put(buf, cap, digits + i);
	put(buf, cap, "\n");
}

/* One thread, taken from its handler: do the request's part, count. Async-signal-safe. */
static void visit(struct ap_thread *t, void *arg)
{
	struct tally *a = arg;

	/* A batched thread's ring holds samples whose stacks are in their
	 * copies: drain them before its event ends or its buffer is written. */
	if ((a->op == AP_CTL_STOP || a->op == AP_CTL_DUMP) && t->batched && t->ring.page)
		on_signal__drain(t, NULL);
	if (a->op == AP_CTL_START || a->op == AP_CTL_STOP)
		samplers__sync_armed(t);
	if (a->op == AP_CTL_STOP || a->op == AP_CTL_DUMP) {
		aggregate__emit_all(t); /* AUTOPROF_AGGREGATE: merged records too */
		buffer__flush(t);
	}
	a->samples += t->stats.samples;
	a->lost += t->stats.lost;
	a->threads++;
}

/* Pause or resume sampling; false when it already was. Async-signal-safe. */
static bool set_paused(bool paused)
{
	uint64_t now = ap_now(), since;

	if (__atomic_exchange_n(&autoprof.paused, paused, __ATOMIC_SEQ_CST) == paused)
		return false;
	since = __atomic_exchange_n(&autoprof.state_since, now, __ATOMIC_SEQ_CST);
	if (paused)
		__atomic_fetch_add(&autoprof.sampled_ns, now - since, __ATOMIC_SEQ_CST);
	return true;
}

/* Write the answer: written whole to a temporary file, then renamed. Async-signal-safe. */
static void answer(const char *text)
{
	int fd = (int)raw_syscall(SYS_openat, AT_FDCWD, reply_tmp,
				  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return;
	raw_syscall(SYS_write, fd, text, strlen(text));
	raw_syscall(SYS_close, fd);
	raw_syscall(SYS_rename, reply_tmp, reply);
}

/* The last request acted on (its signal value) and its answer. */
static uint64_t last_request;
static char last_answer[PATH_MAX + 512];

/* control__on_signal()'s work, on the handler's own stack. Async-signal-safe. */
static void act(void *arg)
{
	const siginfo_t *si = arg;
	uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	struct tally a = {.op = (int)(v & 0xff)};
	char text[PATH_MAX + 512] = "";
	bool changed = false;
	uint64_t t0 = ap_now();
	int err;

	if (!__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) || process_events__sandboxed() ||
	    (pid_t)raw_syscall(SYS_getpid) != autoprof.pid)
		return;
	/* `autoprof ctl` asks again when no answer came (a pending SIGPROF
	 * absorbs its signal): a request already acted on is answered again. */
	if (__atomic_exchange_n(&last_request, v, __ATOMIC_SEQ_CST) == v) {
		answer(last_answer);
		return;
	}
	if (a.op == AP_CTL_START || a.op == AP_CTL_STOP)
		changed = set_paused(a.op == AP_CTL_STOP);
	registry__visit(visit, &a);
	if (a.op == AP_CTL_DUMP)
		windows__end(true); /* a window past its end, in an idle process: ended now */
	a.samples += __atomic_load_n(&autoprof.stats.samples, __ATOMIC_RELAXED);
	a.lost += __atomic_load_n(&autoprof.stats.lost, __ATOMIC_RELAXED);

	put(text, sizeof(text), AP_CONTROL_MAGIC "\n");
	put_u64(text, sizeof(text), "nonce", (v >> 8) & 0xffffff);
	put_u64(text, sizeof(text), "op", (uint64_t)a.op);
	put_u64(text, sizeof(text), "changed", changed);
	put_u64(text, sizeof(text), "sampling",
		!__atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST));
	put_u64(text, sizeof(text), "since",
		__atomic_load_n(&autoprof.state_since, __ATOMIC_SEQ_CST));
	put_u64(text, sizeof(text), "sampled_ns",
		__atomic_load_n(&autoprof.sampled_ns, __ATOMIC_SEQ_CST));
	put_u64(text, sizeof(text), "now", ap_now());
	put_u64(text, sizeof(text), "samples", a.samples);
	put_u64(text, sizeof(text), "lost", a.lost);
	put_u64(text, sizeof(text), "threads", (uint64_t)a.threads);
	put_u64(text, sizeof(text), "mode_timer", autoprof.cfg->timer_mode);
	err = __atomic_load_n(&autoprof.writer.error, __ATOMIC_RELAXED);
	put_u64(text, sizeof(text), "error", (uint64_t)(err < 0 ? -err : err));
	put_u64(text, sizeof(text), "arrived", t0);
	put_u64(text, sizeof(text), "took_ns", ap_now() - t0);
	put(text, sizeof(text), "file ");
	put(text, sizeof(text), autoprof.writer.path);
	put(text, sizeof(text), "\n");
	memcpy(last_answer, text, sizeof(last_answer));
	answer(text);
}

/*
 * Act on a request (control__is_request() said it is one) and answer it,
 * from the thread it landed on: on that thread's own handler stack when it
 * has one (the program's alternate stack may be small; its own handler
 * cannot be running, every signal is blocked in ours). Async-signal-safe.
 */
void control__on_signal(const siginfo_t *si)
{
	int saved_errno = errno;
	struct ap_thread *t = ap_self;

	if (t && t->stack_top && !__atomic_load_n(&t->closed, __ATOMIC_ACQUIRE))
		ap_call_on_stack((void *)si, act, t->stack_top);
	else
		act((void *)si);
	errno = saved_errno;
}
