/* SPDX-License-Identifier: MIT */
/*
 * control_request.c - the answering side of `autoprof ctl PID
 * start|stop|dump|status` (session/control.c writes the endpoint that ctl
 * reads, see there): a delivery of the sampling signal with si_code
 * SI_QUEUE and this image's token in its value is a request, taken as such
 * by the handler (on_signal.c) before anything else, acted on at once from
 * the thread it landed on, and answered in the reply file (through a
 * temporary file and a rename).
 *
 * Acting from one thread on the others: every thread is taken from its own
 * handler for a moment (registry__visit) to flush its buffer (dump), or to
 * end or make its perf event or disarm or arm its CPU-time timer (stop,
 * start). Blocked threads are never woken up. What it reads and changes of
 * the image is what the session registered (image.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "handler.h"
#include "settled.h"
#include "setup.h"

/* The reply file of this image's endpoint, set up before any request can come. */
static char reply[PATH_MAX + 8];
static char reply_tmp[PATH_MAX + 16] AP_LARGE_BSS;
static int replied;    /* a reply was written to it (its removal at the end is needed); atomic */
static uint32_t token; /* 0: no endpoint */

/* A thread's counts, added up over a visit. */
struct tally {
	uint64_t samples, lost;
	int threads;
	int op;
};

/*
 * The reply file and its temporary beside endpoint (the session's, DIR/PID),
 * before the token is set. Not async-signal-safe.
 */
void control_request__set_reply(const char *endpoint)
{
	char path[sizeof(reply)];

	snprintf(path, sizeof(path), "%s.reply", endpoint);
	if (strcmp(path, reply)) /* another process's: none written to it yet */
		__atomic_store_n(&replied, 0, __ATOMIC_SEQ_CST);
	snprintf(reply, sizeof(reply), "%s", path);
	snprintf(reply_tmp, sizeof(reply_tmp), "%s.reply.tmp", endpoint);
}

/* Requests with tok are valid from now on (0: none is). */
void control_request__set_token(uint32_t tok)
{
	__atomic_store_n(&token, tok, __ATOMIC_SEQ_CST);
}

/* The current token (0: none). */
uint32_t control_request__token(void)
{
	return __atomic_load_n(&token, __ATOMIC_SEQ_CST);
}

/* No request is valid from now on; the token that was. Async-signal-safe. */
uint32_t control_request__take_token(void)
{
	return __atomic_exchange_n(&token, 0, __ATOMIC_SEQ_CST);
}

/* The reply file's path. Async-signal-safe. */
const char *control_request__reply(void)
{
	return reply;
}

/* Was a reply written to it (by this process)? Async-signal-safe. */
bool control_request__replied(void)
{
	return __atomic_load_n(&replied, __ATOMIC_SEQ_CST);
}

/* Is this delivery of the sampling signal a request of `autoprof ctl`? Async-signal-safe. */
bool control_request__is_request(const siginfo_t *si)
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
		sampler_arming__sync(t, __atomic_load_n(image__get()->paused, __ATOMIC_SEQ_CST));
	if (a->op == AP_CTL_STOP || a->op == AP_CTL_DUMP) {
		aggregate__emit_all(t); /* AUTOPROF_AGGREGATE: merged records too */
		buffer__flush(t);
	}
	a->samples += t->stats.samples;
	a->lost += t->stats.lost;
	a->threads++;
}

/* Pause or resume sampling; false when it already was. Async-signal-safe. */
static bool set_paused(const struct ap_image *img, bool paused)
{
	uint64_t now = ap_now(), since;

	if (__atomic_exchange_n(img->paused, paused, __ATOMIC_SEQ_CST) == paused)
		return false;
	since = __atomic_exchange_n(img->state_since, now, __ATOMIC_SEQ_CST);
	if (paused)
		__atomic_fetch_add(img->sampled_ns, now - since, __ATOMIC_SEQ_CST);
	if (img->on_since && img->off_since) /* the latest stretch, for off-CPU time */
		__atomic_store_n(paused ? img->off_since : img->on_since, now, __ATOMIC_SEQ_CST);
	if (img->on_pause)
		img->on_pause(paused, now, since); /* the counters count while on only */
	return true;
}

/* Write the answer: written whole to a temporary file, then renamed. Async-signal-safe. */
static void answer(const char *text)
{
	int fd = (int)raw_syscall(SYS_openat, AT_FDCWD, reply_tmp,
				  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return;
	__atomic_store_n(&replied, 1, __ATOMIC_SEQ_CST);
	raw_syscall(SYS_write, fd, text, strlen(text));
	raw_syscall(SYS_close, fd);
	raw_syscall(SYS_rename, reply_tmp, reply);
}

/* The last request acted on (its signal value) and its answer. */
static uint64_t last_request;
static char last_answer[PATH_MAX + 512] AP_LARGE_BSS;

/* control_request__on_signal()'s work, on the handler's own stack. Async-signal-safe. */
static void act(void *arg)
{
	const struct ap_image *img = image__get();
	const siginfo_t *si = arg;
	uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	struct tally a = {.op = (int)(v & 0xff)};
	char text[PATH_MAX + 512] = "";
	bool changed = false;
	uint64_t t0 = ap_now();
	int err;

	if (!img->active || !__atomic_load_n(img->active, __ATOMIC_ACQUIRE) || ap_sandboxed ||
	    (pid_t)raw_syscall(SYS_getpid) != *img->pid)
		return;
	/* `autoprof ctl` asks again when no answer came (a pending SIGPROF
	 * absorbs its signal): a request already acted on is answered again. */
	if (__atomic_exchange_n(&last_request, v, __ATOMIC_SEQ_CST) == v) {
		answer(last_answer);
		return;
	}
	if (a.op == AP_CTL_START || a.op == AP_CTL_STOP)
		changed = set_paused(img, a.op == AP_CTL_STOP);
	registry__visit(visit, &a);
	if (a.op == AP_CTL_DUMP) {
		windows__end(true); /* a window past its end, in an idle process: ended now */
		if (img->dump)
			img->dump(img->writer); /* AUTOPROF_MEMORY: the live set of now */
	}
	a.samples += __atomic_load_n(&img->totals->samples, __ATOMIC_RELAXED);
	a.lost += __atomic_load_n(&img->totals->lost, __ATOMIC_RELAXED);

	put(text, sizeof(text), AP_CONTROL_MAGIC "\n");
	put_u64(text, sizeof(text), "nonce", (v >> 8) & 0xffffff);
	put_u64(text, sizeof(text), "op", (uint64_t)a.op);
	put_u64(text, sizeof(text), "changed", changed);
	put_u64(text, sizeof(text), "sampling", !__atomic_load_n(img->paused, __ATOMIC_SEQ_CST));
	put_u64(text, sizeof(text), "since", __atomic_load_n(img->state_since, __ATOMIC_SEQ_CST));
	put_u64(text, sizeof(text), "sampled_ns",
		__atomic_load_n(img->sampled_ns, __ATOMIC_SEQ_CST));
	put_u64(text, sizeof(text), "now", ap_now());
	put_u64(text, sizeof(text), "samples", a.samples);
	put_u64(text, sizeof(text), "lost", a.lost);
	put_u64(text, sizeof(text), "threads", (uint64_t)a.threads);
	put_u64(text, sizeof(text), "mode_timer", img->cfg->timer_mode);
	err = __atomic_load_n(&img->writer->error, __ATOMIC_RELAXED);
	put_u64(text, sizeof(text), "error", (uint64_t)(err < 0 ? -err : err));
	put_u64(text, sizeof(text), "arrived", t0);
	put_u64(text, sizeof(text), "took_ns", ap_now() - t0);
	put(text, sizeof(text), "file ");
	put(text, sizeof(text), img->writer->path);
	put(text, sizeof(text), "\n");
	memcpy(last_answer, text, sizeof(last_answer));
	answer(text);
}

/*
 * Act on a request (control_request__is_request() said it is one) and answer it,
 * from the thread it landed on: on that thread's own handler stack when it
 * has one (the program's alternate stack may be small; its own handler
 * cannot be running, every signal is blocked in ours). Async-signal-safe.
 */
void control_request__on_signal(const siginfo_t *si)
{
	int saved_errno = errno;
	struct ap_thread *t = ap_self;

	if (t && t->stack_top && !__atomic_load_n(&t->closed, __ATOMIC_ACQUIRE))
		own_stack__call((void *)si, act, t->stack_top);
	else
		act((void *)si);
	errno = saved_errno;
}
