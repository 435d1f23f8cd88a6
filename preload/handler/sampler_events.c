/* SPDX-License-Identifier: MIT */
/*
 * sampler_events.c - the perf events of one sampled thread: their attrs at
 * the thread's rate, opening them (batched: the sampling event, the tick that
 * drains it and the ramp of its first drains; unbatched: a signal per
 * sample), and replacing them: from the thread's handler when its stack
 * copies grow or its rate backs off, and when the program takes the sampling
 * signal (sampler_events__reopen, the one function here that runs outside
 * any handler only: setup.h). A thread keeps no fd: each event lives on in
 * its mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handler.h"
#include "settled.h"
#include "setup.h"

/* Ring size: a signal per sample keeps rings nearly empty; fp chains are larger. */
static unsigned ring_pages(const struct ap_thread *t)
{
	return t->sampler->cfg->callgraph == AP_CG_FP ? 4 : 1;
}

/* The ring bytes of a batched sample with copy bytes of stack. */
static size_t batched_record(const struct ap_settled *cfg, unsigned copy)
{
	return 128 + copy + (cfg->kernel ? 8 * (cfg->stack_depth + 2) : 0);
}

/* The longest a batched thread's samples wait for their drain: 8 ms of its
 * CPU time, as AUTOPROF_BATCH's default of 8 waits at the default 1 kHz. */
#define DRAIN_MAX_NS 8000000ULL

/*
 * Data pages for 16 batches of batch samples with copy bytes of stack (a
 * power of two, 8-1024); 15 where the rate keeps the batch at
 * AUTOPROF_BATCH (1 kHz and below: drains DRAIN_MAX_NS apart are 8 samples
 * or fewer, so room beyond the batches is never used by a larger batch,
 * batch_for) and 15 fit a power of two that 16 do not: at 1 kHz with 2 KB
 * copies 8 x 2176 x 16 bytes is 8% above 256 KB, and the kernel would
 * allocate and zero 512 KB per thread at mmap (and charge it to
 * perf_event_mlock_kb), half of it for nothing.
 */
static unsigned ring_pages_for(const struct ap_settled *cfg, unsigned batch, unsigned copy)
{
	/* Room for 16 batches: the tick counts user time only (a signal left
	 * pending in a system call would end the program's next wait with
	 * EINTR), so it misses while the thread is in the kernel and the
	 * samples between two drains vary; with 16 batches of room a run of
	 * misses long enough to fill the ring is about e^-16 likely (e^-15
	 * with 15). */
	size_t one = (size_t)batch * batched_record(cfg, copy), need = 16 * one;
	uint64_t most = cfg->interval_ns ? DRAIN_MAX_NS / cfg->interval_ns : 0;
	unsigned pages = 8;

	while ((size_t)pages * 4096 < need && pages < 1024)
		pages *= 2;
	if (most <= cfg->batch && pages > 8 && (size_t)pages / 2 * 4096 >= 15 * one)
		pages /= 2;
	return pages;
}

/* Data pages of a batched sampler's ring, its tick spanning batch samples (batch_for). */
static unsigned batched_ring_pages(const struct ap_thread *t, unsigned copy, unsigned batch)
{
	unsigned span = perf_event__tick_span(t->sampler->cfg);

	return ring_pages_for(t->sampler->cfg, batch > span ? batch : span, copy);
}

/*
 * Data pages of a batched sampler's ring while it ramps: its ramp drains at
 * every sample, so room for 30 ms of samples (30 at 1 kHz) is enough where
 * its batches need 16 times theirs; no more than that full ring (at 20 kHz
 * the 0.75 ms that 15 samples last lost samples under load). The kernel
 * allocates and zeroes a ring at mmap: a process that ends within its ramp
 * (a fork child that execs, a short command) gets 64 KB at 1 kHz, not
 * 256 KB (1 MB with 8 KB copies); one that outlives it gets the full ring
 * then (settle_ramp). A count of events (period mode) has no time to size
 * by: the full ring.
 */
static unsigned ramp_ring_pages(const struct ap_thread *t, unsigned copy, unsigned batch)
{
	const struct ap_settled *cfg = t->sampler->cfg;
	unsigned full = batched_ring_pages(t, copy, batch), pages;
	uint64_t interval = cfg->interval_ns << t->rate_shift, samples;

	if (cfg->period || !interval)
		return full;
	samples = 2000000 / interval; /* 2 ms: 16 of those are 32 ms */
	pages = ring_pages_for(cfg, samples > 2 ? (unsigned)samples : 2, copy);
	return pages < full ? pages : full;
}

/* Is t's ring smaller than its batches need (a ramp's)? */
static bool ring_short(const struct ap_thread *t)
{
	return t->ring.page &&
	       t->ring.mask + 1 <
		   (uint64_t)batched_ring_pages(t, t->copy_bytes, t->tick_batch) * 4096;
}

/* The sampler's attr for a signal per sample: without registers and stack copies. */
static void plain_attr(const struct ap_thread *t, struct perf_event_attr *attr)
{
	*attr = t->sampler->cfg->attr;
	attr->sample_type &= ~(uint64_t)(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	attr->sample_regs_user = 0;
	attr->sample_stack_user = 0;
}

/* The lowest rate the backoff slows a thread to: AUTOPROF_FREQ's default, or the rate asked if
 * lower. */
#define SLOWEST_HZ 1000

/* attr (a sampling event's) at t's rate: the rate asked, halved t->rate_shift times. */
static void rate_attr(const struct ap_thread *t, struct perf_event_attr *attr)
{
	if (!t->rate_shift)
		return;
	if (attr->freq)
		attr->sample_freq >>= t->rate_shift;
	else
		attr->sample_period <<= t->rate_shift;
}

/*
 * The bytes of stack the kernel may copy per CPU-second of a thread: its
 * copies grow only up to COPY_BUDGET / rate (at 100 kHz, 60 KB copies took
 * more than the CPU and the thread never left the kernel's sampling).
 */
#define COPY_BUDGET (400ULL << 20)

/* The largest stack copy for t at its rate (at least AUTOPROF_STACK_COPY). */
static unsigned copy_limit(const struct ap_thread *t)
{
	const struct ap_settled *cfg = t->sampler->cfg;
	uint64_t rate = cfg->hz;
	uint64_t lim;

	rate >>= t->rate_shift;
	lim = rate ? COPY_BUDGET / rate : AP_MAX_STACK_COPY;
	lim &= ~(uint64_t)7; /* the kernel wants a multiple of 8 */
	if (lim < cfg->stack_copy)
		lim = cfg->stack_copy;
	return lim < AP_MAX_STACK_COPY ? (unsigned)lim : AP_MAX_STACK_COPY;
}

/*
 * The samples t's tick spans with copies of copy bytes: AUTOPROF_BATCH
 * (sampler->tick_samples), or more where 16 batches of more fit the ring
 * AUTOPROF_BATCH's batches would have anyway (at these copies or at
 * AUTOPROF_STACK_COPY's, whichever is larger; in powers of two) and the
 * drains stay DRAIN_MAX_NS apart at most: at 10 kHz with 2 KB copies 15
 * samples a signal instead of 8, in the same 512 KB; with copies that
 * shrank to 1280 bytes (on_signal.c) 23; at 1 kHz 8 as before. Fewer
 * signals (each a timer interrupt, an irq_work, a signal frame and
 * sigreturn) for the same memory and the same margin against a full ring.
 * Async-signal-safe.
 */
static unsigned batch_for(const struct ap_thread *t, unsigned copy)
{
	const struct ap_settled *cfg = t->sampler->cfg;
	unsigned base = t->sampler->tick_samples, span = perf_event__tick_span(cfg);
	unsigned pages = ring_pages_for(cfg, span, copy);
	unsigned first = ring_pages_for(cfg, span, cfg->stack_copy);
	uint64_t period = cfg->interval_ns << t->rate_shift;
	uint64_t fit, most = period ? DRAIN_MAX_NS / period : base;

	if (base <= 1)
		return base; /* AUTOPROF_KERNEL: a drain at about every sample */
	fit = (uint64_t)(pages > first ? pages : first) * 4096 / (16 * batched_record(cfg, copy));
	if (fit > most)
		fit = most;
	return fit > base ? (unsigned)fit : base;
}

/* The tick attr of t (perf_event__tick_attr) at t's rate. */
static void tick_attr(const struct ap_thread *t, struct perf_event_attr *attr, unsigned samples)
{
	perf_event__tick_attr(t->sampler->cfg, attr, samples);
	attr->sample_period <<= t->rate_shift;
}

/*
 * A new tick for t spanning batch samples, enabled, into *tick; its fd in
 * *tick_fd (or -1). Returns whether it is running. Async-signal-safe
 * (system calls only: raw_syscall, and libc's mmap in ring.c).
 */
static bool new_tick(struct ap_thread *t, unsigned batch, struct ring *tick, int *tick_fd)
{
	struct perf_event_attr ta;

	tick_attr(t, &ta, batch);
	*tick_fd = perf_event__open(&ta, t->tid);
	return *tick_fd >= 0 && ring__map(tick, *tick_fd, 0) == 0 &&
	       perf_event__route_signal(
		   *tick_fd, __atomic_load_n(t->sampler->signo, __ATOMIC_ACQUIRE), t->tid) == 0 &&
	       raw_syscall(SYS_ioctl, *tick_fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
}

/*
 * From t's handler, after a drain: replace t's batched sampling event by one
 * whose samples copy copy bytes of stack (more: its stacks are deeper than
 * the copies; fewer: its walks read much less), and its tick by one at the
 * batch that copy affords (batch_for) when that changes. The new events
 * start before the old ones are drained and unmapped (which ends them): no
 * gap. Its ring is a ramp's while it ramps, unless @full (the ring its
 * batches need). Returns whether t has the new copies; on failure t keeps
 * its events. Async-signal-safe (system calls only: raw_syscall, and libc's
 * mmap and munmap in ring.c).
 */
static bool resize(struct ap_thread *t, unsigned copy, bool full)
{
	struct perf_event_attr attr = t->sampler->cfg->attr;
	struct ring ring = {0}, old = t->ring, tick = {0}, old_tick = t->tick;
	unsigned batch = batch_for(t, copy);
	unsigned pages = t->ramp.page && !full ? ramp_ring_pages(t, copy, batch)
					       : batched_ring_pages(t, copy, batch);
	int fd, tick_fd = -1;
	bool ok;

	attr.sample_stack_user = copy;
	rate_attr(t, &attr);
	fd = perf_event__open(&attr, t->tid);
	ok = fd >= 0 && ring__map(&ring, fd, pages) == 0 &&
	     (batch == t->tick_batch || new_tick(t, batch, &tick, &tick_fd)) &&
	     raw_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
	if (ok) {
		on_signal__drain(t, NULL);
		t->ring = ring;
		ring__unmap(&old);
		if (batch != t->tick_batch) {
			t->tick = tick;
			ring__unmap(&old_tick);
			t->fd = tick_fd;
			t->tick_batch = batch;
		}
		t->copy_bytes = copy;
	} else {
		ring__unmap(&ring);
		ring__unmap(&tick);
	}
	if (fd >= 0)
		raw_syscall(SYS_close, fd);
	if (tick_fd >= 0)
		raw_syscall(SYS_close, tick_fd);
	return ok;
}

bool sampler_events__resize_copy(struct ap_thread *t, unsigned copy)
{
	return resize(t, copy, false);
}

/*
 * From t's handler, after a drain: copies four times as large (its stacks
 * are deeper than the copies), up to t->copy_max. On failure t keeps its
 * events and stops asking. Async-signal-safe (system calls only).
 */
void sampler_events__grow_copy(struct ap_thread *t)
{
	unsigned copy = t->copy_bytes * 4 < t->copy_max ? t->copy_bytes * 4 : t->copy_max;

	if (copy > t->copy_bytes && !sampler_events__resize_copy(t, copy))
		t->copy_max = t->copy_bytes; /* no more tries */
}

/*
 * Open the tick of thread t (tid, 0 = the caller) into t->tick, its signal
 * signo routed to t; its fd in *tick_fd. Returns 0 or -errno with nothing
 * left open. Async-signal-safe (system calls only): from a handler too, when
 * `autoprof ctl start` gives a batched thread its events again.
 */
int sampler_events__open_tick(struct ap_thread *t, pid_t tid, int signo, int *tick_fd)
{
	struct perf_event_attr tick;
	int err;

	tick_attr(t, &tick, t->tick_batch);
	*tick_fd = perf_event__open(&tick, tid);
	if (*tick_fd == -EACCES || *tick_fd == -EPERM) {
		tick.exclude_kernel = 1; /* perf_event_paranoid 2: user time only */
		*tick_fd = perf_event__open(&tick, tid);
	}
	if (*tick_fd < 0)
		return *tick_fd;
	err = ring__map(&t->tick, *tick_fd, 0);
	if (!err)
		err = perf_event__route_signal(*tick_fd, signo, t->tid);
	if (!err)
		return 0;
	ring__unmap(&t->tick);
	raw_syscall(SYS_close, *tick_fd);
	*tick_fd = -1;
	return err;
}

/*
 * Open t's ramp (t->ramp, enabled): a tick at every sample of its first
 * drains, while the size of its stack copies settles (on_signal.c's
 * adapt_batch), so that a program whose stacks deepen as it starts loses a
 * few walks to copies too small, not whole batches. A second event, not the
 * tick's period changed later: t keeps no fd to change it with, and a tick
 * opened anew would fire out of step with the samples. Without it (a
 * failure) t is only batched from the start. Async-signal-safe (system calls only).
 */
static void open_ramp(struct ap_thread *t, pid_t tid, int signo)
{
	struct perf_event_attr attr;
	int fd;

	t->ramp_fd = -1;
	t->ramp_drains = 0;
	if (t->sampler->tick_samples <= 1)
		return; /* the tick is at every sample already */
	tick_attr(t, &attr, 1);
	attr.disabled = 0;
	fd = perf_event__open(&attr, tid);
	if (fd < 0)
		return;
	if (ring__map(&t->ramp, fd, 0) == 0 && perf_event__route_signal(fd, signo, t->tid) == 0)
		t->ramp_fd = fd; /* the number its signals carry in si_fd */
	else
		ring__unmap(&t->ramp);
	raw_syscall(SYS_close, fd);
}

/* End t's ramp, if it has one. Async-signal-safe (munmap). */
void sampler_events__end_ramp(struct ap_thread *t)
{
	ring__unmap(&t->ramp);
	t->ramp_fd = -1;
}

/*
 * End t's ramp, its ring grown first for its batches (a new sampling event,
 * as a resize); if that fails the ramp goes on (a drain at every sample
 * keeps the smaller ring from filling) and false says so. From t's handler.
 * Async-signal-safe (system calls only).
 */
bool sampler_events__settle_ramp(struct ap_thread *t)
{
	if (ring_short(t) && !resize(t, t->copy_bytes, true))
		return false;
	sampler_events__end_ramp(t);
	return true;
}

/*
 * From t's handler, after a drain (on_signal.c's backoff): halve t's rate.
 * New events at the new rate (batched: the sampling event and its tick; its
 * ramp ends) start before the old ones are drained and unmapped, which ends
 * them: no gap. False (t unchanged) at the floor, SLOWEST_HZ, in period
 * mode (a count of events, which has no rate to halve), or on a failure.
 * Async-signal-safe (system calls only).
 */
bool sampler_events__slow_down(struct ap_thread *t)
{
	struct ring ring = {0}, tick = {0}, old = t->ring, old_tick = t->tick;
	int signo = __atomic_load_n(t->sampler->signo, __ATOMIC_ACQUIRE);
	struct perf_event_attr attr;
	int fd, tick_fd = -1;
	unsigned batch;
	bool ok;

	if (t->is_timer || !t->ring.page || !t->sampler->cfg->attr.freq ||
	    (t->sampler->cfg->freq >> (t->rate_shift + 1)) < SLOWEST_HZ)
		return false;
	t->rate_shift++;
	batch = t->batched ? batch_for(t, t->copy_bytes) : 0;
	if (t->batched) {
		attr = t->sampler->cfg->attr;
		attr.sample_stack_user = t->copy_bytes;
	} else {
		plain_attr(t, &attr);
	}
	rate_attr(t, &attr);
	fd = perf_event__open(&attr, t->tid);
	ok = fd >= 0 && ring__map(&ring, fd,
				  t->batched ? batched_ring_pages(t, t->copy_bytes, batch)
					     : ring_pages(t)) == 0;
	if (ok && t->batched) {
		ok = new_tick(t, batch, &tick, &tick_fd);
	} else if (ok) {
		ok = perf_event__route_signal(fd, signo, t->tid) == 0;
	}
	ok = ok && raw_syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
	if (ok) {
		on_signal__drain(t, NULL);
		t->ring = ring;
		ring__unmap(&old);
		if (t->batched) {
			t->tick = tick;
			t->tick_batch = batch;
			ring__unmap(&old_tick);
			sampler_events__end_ramp(t);
		}
		t->fd = t->batched ? tick_fd : fd;
		t->copy_max = copy_limit(t); /* a lower rate affords larger copies */
	} else {
		ring__unmap(&ring);
		ring__unmap(&tick);
		t->rate_shift--;
	}
	if (fd >= 0)
		raw_syscall(SYS_close, fd);
	if (tick_fd >= 0)
		raw_syscall(SYS_close, tick_fd);
	return ok;
}

/*
 * Open t's batched sampling event (its fd in *fd, its ring in t->ring), and
 * the tick whose signal drains it (t->tick, its fd in *tick_fd), and its
 * ramp (open_ramp). The copy is the size t has learned (a thread sampled
 * again after a pause), else AUTOPROF_STACK_COPY. Returns 0 or -errno with
 * nothing left open (a ring over the locked-memory limit: the caller samples
 * the thread unbatched). Async-signal-safe (system calls only).
 */
int sampler_events__open_batched(struct ap_thread *t, pid_t tid, int *fd, int *tick_fd)
{
	struct perf_event_attr attr = t->sampler->cfg->attr;
	unsigned copy = t->copy_bytes ? t->copy_bytes : t->sampler->cfg->stack_copy;
	int signo = __atomic_load_n(t->sampler->signo, __ATOMIC_ACQUIRE), err;

	t->copy_max = copy_limit(t);
	if (copy > t->copy_max)
		copy = t->copy_max;

	attr.sample_stack_user = copy;
	rate_attr(t, &attr);
	*fd = perf_event__open(&attr, tid);
	if (*fd < 0)
		return *fd;
	t->tick_batch = batch_for(t, copy);
	/* a ramp's ring while it may have one (open_ramp: a tick of more than one sample) */
	err = ring__map(&t->ring, *fd,
			t->sampler->tick_samples > 1 ? ramp_ring_pages(t, copy, t->tick_batch)
						     : batched_ring_pages(t, copy, t->tick_batch));
	t->copy_bytes = copy;
	t->copy_samples = t->copy_short = t->copy_reach = t->copy_window = 0;
	if (!err)
		err = sampler_events__open_tick(t, tid, signo, tick_fd);
	if (!err) {
		open_ramp(t, tid, signo);
		if (!t->ramp.page && ring_short(t)) {
			/* no ramp: the ring its batches need (the event is still disabled) */
			ring__unmap(&t->ring);
			err = ring__map(&t->ring, *fd, batched_ring_pages(t, copy, t->tick_batch));
		}
		if (!err)
			return 0;
		ring__unmap(&t->tick);
		raw_syscall(SYS_close, *tick_fd);
		*tick_fd = -1;
	}
	ring__unmap(&t->ring);
	raw_syscall(SYS_close, *fd);
	*fd = -1;
	return err;
}

/*
 * Open t's unbatched sampling event, a signal per sample, into t->fd and
 * t->ring. Returns 0 or -errno with nothing left open. Async-signal-safe
 * (system calls only).
 */
int sampler_events__open_plain(struct ap_thread *t, pid_t tid)
{
	struct perf_event_attr attr;
	int err;

	plain_attr(t, &attr);
	rate_attr(t, &attr);
	t->fd = perf_event__open(&attr, tid);
	if (t->fd < 0)
		return t->fd;
	err = ring__map(&t->ring, t->fd, ring_pages(t));
	if (!err)
		err = perf_event__route_signal(
		    t->fd, __atomic_load_n(t->sampler->signo, __ATOMIC_ACQUIRE), t->tid);
	if (!err)
		return 0;
	ring__unmap(&t->ring);
	raw_syscall(SYS_close, t->fd);
	t->fd = -1;
	return err;
}

/*
 * Give t a new event that signals with signo (its old one has no fd left to
 * change): t's handler is held off meanwhile, the old ring is drained into
 * t's buffer and unmapped, which ends the old event. On failure t stops
 * being sampled. Caller holds the registry lock. Not async-signal-safe.
 */
void sampler_events__reopen(struct ap_thread *t, int signo)
{
	struct ring ring = {0};
	int fd, err;

	if (!t->ring.page)
		return; /* paused: its next event is opened with the new number */
	if (__atomic_exchange_n(&t->closed, 1, __ATOMIC_SEQ_CST))
		return;
	if (!registry__wait_handler(t))
		return; /* died in its handler: leave it closed */
	if (t->batched) {
		/* Only the tick signals: a new tick, the same sampling event. */
		struct ring old = t->tick;
		bool ramping = t->ramp.page != NULL;

		sampler_events__end_ramp(t); /* it signals with the old number */
		t->tick.page = NULL;
		err = sampler_events__open_tick(t, t->tid, signo, &fd);
		if (!err && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			err = -errno;
		if (!err && ramping) /* its ring may be a ramp's still: a ramp on the new number */
			open_ramp(t, t->tid, signo);
		on_signal__drain(t, NULL);
		ring__unmap(&old);
		if (fd >= 0)
			raw_syscall(SYS_close, fd);
		if (err) {
			ring__unmap(&t->tick);
			ring__unmap(&t->ring);
			return; /* stays closed */
		}
		t->fd = fd;
		/* no ramp to end: the ring its batches need now (the same batch, so the same tick;
		 * on a failure the samples a full ring drops are counted lost) */
		if (ramping && !t->ramp.page && ring_short(t))
			resize(t, t->copy_bytes, true);
		__atomic_store_n(&t->closed, 0, __ATOMIC_SEQ_CST);
		return;
	}
	{
		struct perf_event_attr attr;

		plain_attr(t, &attr);
		rate_attr(t, &attr);
		fd = perf_event__open(&attr, t->tid);
	}
	err = fd < 0 ? fd : ring__map(&ring, fd, ring_pages(t));
	if (!err)
		err = perf_event__route_signal(fd, signo, t->tid);
	if (!err && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		err = -errno;
	on_signal__drain(t, NULL);
	ring__unmap(&t->ring);
	if (fd >= 0)
		raw_syscall(SYS_close, fd);
	if (err) {
		ring__unmap(&ring);
		t->ring.page = NULL;
		return; /* stays closed; its samples so far are in its buffer */
	}
	t->ring = ring;
	t->fd = fd;
	__atomic_store_n(&t->closed, 0, __ATOMIC_SEQ_CST);
}
