/* SPDX-License-Identifier: MIT */
/*
 * offcpu.c - off-CPU time (AUTOPROF_OFFCPU): where a thread waited, and for
 * how long, as samples of the event offcpu-time (its attr: extra_events.c)
 * whose period is the nanoseconds waited.
 *
 * Each thread that samples itself has a second event, a software dummy with
 * attr.context_switch: the kernel writes a PERF_RECORD_SWITCH into its ring
 * when the thread leaves the CPU (out) and when it comes back (in), each
 * with its CLOCK_MONOTONIC time, the file's clock. Nothing signals: a signal
 * to a thread that waits, or that was just woken but is still in the kernel,
 * cuts its poll, select or nanosleep short with EINTR (measured: poll()
 * failed every time when the ring woke the thread at its switch in).
 *
 * The ring is read when a blocking call of libc returns (wrap/waits.c: the
 * sleeps, poll, select, epoll, read, recv, accept, connect, condition
 * variables, mutexes, semaphores, joins and waits; wrap/process.c: futex
 * waits through syscall()): the thread is back in its own code, right at the
 * wait site, and where the call's records begin in the ring is known (the
 * ring's head when the call began).
 * The waits that began inside the call (out/in pairs; preemptions are left
 * out: the thread could run) become one SAMPLE record of offcpu-time whose
 * chain is the blocking call (the real libc function's address: the leaf
 * names pthread_mutex_lock, usleep, read ...) above the caller's stack,
 * period the ns waited, time when the first of them began; only their part
 * while sampling was on and inside the open window counts (inside()). Waits
 * elsewhere (a page fault, a call we do not wrap) are counted, not placed.
 * The sampling handler never reads this ring; the thread's buffer is claimed
 * from it with buffer__enter().
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define SWITCH_BYTES 24	   /* header + TID, TIME */
#define MIN_WAIT_NS  10000 /* shorter waits are counted, not unwound: the bound on the cost */
#define MAX_RECORD   (128 + (AP_MAX_CHAIN + 2) * 8)

/* The switch event's kernel attr. */
static void kernel_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr->sample_id_all = 1;
	attr->context_switch = 1;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

/*
 * Open the switch event of t (the calling thread), map its ring and enable
 * it; the fd is closed (the mapping keeps the event). Returns 0 or -errno,
 * and then t has no switch event. Not async-signal-safe (t's handler must
 * not be running on it: called as t starts).
 */
int offcpu__open_event(struct ap_thread *t)
{
	struct perf_event_attr attr;
	int fd, err;

	kernel_attr(&attr);
	fd = (int)raw_syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = ring__map(&t->off_ring, fd, 2);
	if (!err && raw_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		err = -errno;
		ring__unmap(&t->off_ring);
	}
	t->off_out = 0;
	raw_syscall(SYS_close, fd);
	return err;
}

/* End t's switch event (unmapping its ring ends it). */
void offcpu__close_event(struct ap_thread *t)
{
	ring__unmap(&t->off_ring);
}

struct wait_sum {
	struct ap_thread *t;
	uint64_t start;		/* where the blocking call's records begin in the ring */
	uint64_t pos;		/* where the record being read begins */
	bool out_inside;	/* the pending out record is the call's */
	uint64_t waited, first; /* its waits: ns in all, when the first began */
	uint64_t elsewhere;	/* waits that began before it */
	uint64_t last;		/* the latest end of a wait counted */
};

/*
 * The part of the wait [a, b] (CLOCK_MONOTONIC ns) inside the profile: while
 * sampling was on (`autoprof ctl` start..stop, AUTOPROF_START) and inside the
 * window whose file is open (AUTOPROF_WINDOW). Returns its length, and where
 * it begins in *from; 0 when none of it is. Only the latest stretch of
 * sampling is known: a wait across a stop, a start and a stop again counts
 * its part in the last stretch only (less, never more).
 */
static uint64_t inside(uint64_t a, uint64_t b, uint64_t *from)
{
	/* off first: b is past, so a change after these loads is after b, and a
	 * start between them shows as the latest stretch, from then on */
	uint64_t off = __atomic_load_n(&autoprof.off_since, __ATOMIC_SEQ_CST);
	uint64_t lo = __atomic_load_n(&autoprof.on_since, __ATOMIC_SEQ_CST);
	uint64_t hi = off > lo ? off : UINT64_MAX;
	uint64_t end = __atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE);

	if (!lo)
		return 0; /* never on in this image */
	if (end) {	  /* the open window is [end - length, end) */
		uint64_t w = autoprof.cfg->window_ns;

		lo = end > w && end - w > lo ? end - w : lo;
		hi = end < hi ? end : hi;
	}
	a = a > lo ? a : lo;
	b = b < hi ? b : hi;
	if (b <= a)
		return 0;
	*from = a;
	return b - a;
}

/* One record of the switch ring: pair outs with ins. */
static void on_switch(void *arg, const struct perf_event_header *rec, bool last_sample)
{
	struct wait_sum *w = arg;
	struct ap_thread *t = w->t;
	uint64_t time, out = t->off_out, from = 0, len;
	uint64_t at = w->pos;

	(void)last_sample;
	w->pos += rec->size;
	if (rec->type != PERF_RECORD_SWITCH || rec->size != SWITCH_BYTES)
		return; /* a LOST record: the ring overflowed between two calls */
	memcpy(&time, (const char *)rec + 16, sizeof(time));
	if (rec->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		/* a preemption (still runnable) is no wait: no out time kept */
		t->off_out = rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? 0 : time;
		w->out_inside = at >= w->start;
		return;
	}
	t->off_out = 0;
	if (!out || time <= out || !(len = inside(out, time, &from)))
		return;
	if (from + len > w->last)
		w->last = from + len;
	if (!w->out_inside) {
		w->elsewhere += len;
		return;
	}
	w->waited += len;
	if (!w->first)
		w->first = from;
}

/*
 * The blocking call's stack: leaf, the real function's address (its first
 * byte: a symbol lookup finds the libc function the program called), then
 * the stack of its caller: trace is the fast trace from here; ret, this
 * function's return address, marks where the caller begins. Returns the
 * entries stored in chain (PERF_CONTEXT_USER first), at least 2.
 */
static __attribute__((noinline)) unsigned caller_chain(struct ap_thread *t, uint64_t *chain,
						       unsigned depth, uintptr_t leaf)
{
	void **trace = (void **)(t->scratch + AP_RING_COPY_BYTES + AP_CHAIN_BYTES);
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);
	int got = unwind__backtrace(trace, (int)depth + 8), i = 0;
	uintptr_t bias = 0;
	unsigned n = 0;

	/* trace[i] is our return address into put_wait (as is, or one less) */
	while (i < got && (uintptr_t)trace[i] != ret && (uintptr_t)trace[i] != ret - 1)
		i++;
	chain[n++] = PERF_CONTEXT_USER;
	if (leaf)
		chain[n++] = leaf;
	if (i < got)
		bias = ret - (uintptr_t)trace[i];
	/* above put_wait: offcpu__end, the wrapper, then the caller of the blocking call */
	for (i += 3; i < got && n < depth + 1; i++)
		chain[n++] = (uintptr_t)trace[i] + bias;
	if (n == 1)
		chain[n++] = ret;	   /* no trace: at least where we are */
	__asm__ volatile("" ::: "memory"); /* not a tail call: our frame must stay */
	return n;
}

/* A SAMPLE of offcpu-time in the blocking call (leaf), under its caller. */
static __attribute__((noinline)) void put_wait(struct ap_thread *t, const struct wait_sum *w,
					       uintptr_t leaf)
{
	uint64_t *chain = (uint64_t *)(t->scratch + AP_RING_COPY_BYTES);
	uint64_t id = t->sampler->offcpu_id;
	unsigned nr = caller_chain(t, chain, t->sampler->stack_depth, leaf);
	char *out;
	size_t n;

	object_records__note(t, chain, nr);
	out = buffer__reserve(t, MAX_RECORD);
	n = record__sample(out, MAX_RECORD, false, chain[1], t->sampler->pid, (uint32_t)t->tid,
			   w->first, 0, w->waited, chain, nr);
	if (n)
		memcpy(out + sizeof(struct perf_event_header), &id, sizeof(id));
	t->len += aggregate__fold(t, out, n);
	t->stats.offcpu_waits++;
	t->stats.offcpu_ns += w->waited;
	if (!t->stats.first_time)
		t->stats.first_time = w->first;
	if (w->last > t->stats.last_time)
		t->stats.last_time = w->last;
	__asm__ volatile("" ::: "memory");
}

/*
 * A blocking call whose records begin at since - 1 in the ring
 * (offcpu__begin) returned on this thread: record its waits in leaf (the
 * real function called, or NULL) above the caller's stack. Keeps errno. Called by the wrappers
 * only, in the program's context (never in a handler). The ring stays mapped while t lives (only
 * t's own thread unmaps it), so it is read before t is claimed: a call that did not switch costs
 * two loads.
 */
__attribute__((noinline)) void offcpu__end(uint64_t since, const void *leaf)
{
	struct ap_thread *t = ap_self;
	struct wait_sum w = {.t = t, .start = since - 1};
	int saved;

	if (!since || !t || !t->off_ring.page ||
	    __atomic_load_n(&t->off_ring.page->data_head, __ATOMIC_ACQUIRE) ==
		t->off_ring.page->data_tail)
		return;
	saved = errno;
	if (!buffer__enter(t))
		goto out;
	/* a vfork child, or a thread made with a raw clone, shares our memory (and
	 * TLS): the ring is another thread's */
	if ((pid_t)raw_syscall(SYS_gettid) != t->tid)
		goto leave;
	w.pos = t->off_ring.page->data_tail;
	ring__drain(&t->off_ring, t->scratch, AP_RING_COPY_BYTES, on_switch, &w);
	if (w.waited >= MIN_WAIT_NS)
		put_wait(t, &w, (uintptr_t)leaf);
	else if (w.waited)
		t->stats.offcpu_short += w.waited;
	t->stats.offcpu_elsewhere += w.elsewhere;
	buffer__maybe_flush(t);
leave:
	buffer__leave(t);
out:
	errno = saved;
	__asm__ volatile("" ::: "memory");
}

/*
 * The file's attr of offcpu-time: a software event whose samples' period is
 * the nanoseconds a thread waited, in CLOCK_MONOTONIC time like the others.
 */
void offcpu__file_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr->sample_period = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

/*
 * A thread starts sampling (t is new, its sampling fd still open): give it a
 * switch event when off-CPU time is asked for. Only a thread that sets
 * itself up (tid 0) gets one: its event must begin on a running thread (see
 * wrap/waits.c). Says once when the kernel refuses. Not async-signal-safe.
 */
void offcpu__thread_start(struct ap_thread *t, pid_t tid)
{
	static int said;
	int err;

	if (!autoprof.sampler.offcpu_id || tid || t->is_timer)
		return;
	err = offcpu__open_event(t);
	if (err && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pr_warn(
		    "AUTOPROF_OFFCPU: cannot follow a thread's context switches: %s; no off-CPU "
		    "time for it (said once)",
		    strerror(-err));
}
