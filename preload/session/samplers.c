/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread sampling state: the thread's own perf event, its ring
 * buffer, and the records it has built but not yet written; and the registry
 * of all of them, indexed by the event's fd.
 *
 * Everything a thread needs in its signal handler lives in one mapping made
 * when the thread starts sampling, so the handler never allocates. A thread is
 * stopped exactly once, by itself (thread exit) or by the thread that ends the
 * process (thread__stop_all); the `closed` flag decides who.
 *
 * A thread costs no file descriptor: its event's fd is closed as soon as the
 * ring is mapped, the signal routed and the event enabled. The mapping keeps
 * the event alive, its overflow signals keep coming (the owner and signal
 * are the open file's, not the fd's), and munmap ends it. The CPU-time timer
 * of the fallback needs no fd either. The registry is a table of slots.
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

#include "internal.h"

/* Records a thread builds before it writes them out. */
#define RECORD_BUF_BYTES (64 * 1024)
/* The handler's own stack (own_stack.c) and the guard page below it. */
#define HANDLER_STACK_BYTES (64 * 1024)
#define GUARD_BYTES	    4096
#define PAGE_UP(x)	    (((x) + 4095) & ~(size_t)4095)
/* Threads sampled at once. */
#define MAX_SLOTS 65536
/* The longest wait for another thread's handler to leave. */
#define WAIT_NS 3000000000ULL

AP_TLS struct ap_thread *ap_self;

/* Every sampled thread; written under registry_lock, read lock-free by the handler. */
static struct ap_thread **by_slot;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static int max_slot = -1; /* highest slot ever used */

/* Ring size: a signal per sample keeps rings nearly empty; fp chains are larger. */
static unsigned ring_pages(void)
{
	return autoprof.cfg->callgraph == AP_CG_FP ? 4 : 1;
}

/* Data pages of a batched sampler's ring: room for 16 batches of samples with their stack copies.
 */
static unsigned batched_ring_pages(unsigned copy)
{
	const struct ap_settled *cfg = autoprof.cfg;
	size_t rec = 128 + copy + (cfg->kernel ? 8 * (cfg->stack_depth + 2) : 0);
	/* Room for 16 batches: the tick counts user time only (a signal left
	 * pending in a system call would end the program's next wait with
	 * EINTR), so it misses while the thread is in the kernel and the
	 * samples between two drains vary; with 16 batches of room a run of
	 * misses long enough to fill the ring is about e^-16 likely. */
	size_t need = 16 * (size_t)event__tick_span(cfg) * rec;
	unsigned pages = 8;

	while ((size_t)pages * 4096 < need && pages < 1024)
		pages *= 2;
	return pages;
}

/* The sampler's attr for a signal per sample: without registers and stack copies. */
static void plain_attr(struct perf_event_attr *attr)
{
	*attr = autoprof.cfg->attr;
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
	const struct ap_settled *cfg = autoprof.cfg;
	uint64_t rate = cfg->hz;
	uint64_t lim;

	rate >>= t->rate_shift;
	lim = rate ? COPY_BUDGET / rate : AP_MAX_STACK_COPY;
	lim &= ~(uint64_t)7; /* the kernel wants a multiple of 8 */
	if (lim < cfg->stack_copy)
		lim = cfg->stack_copy;
	return lim < AP_MAX_STACK_COPY ? (unsigned)lim : AP_MAX_STACK_COPY;
}

/* The tick attr of t (event__tick_attr) at t's rate. */
static void tick_attr(const struct ap_thread *t, struct perf_event_attr *attr, unsigned samples)
{
	event__tick_attr(autoprof.cfg, attr, samples);
	attr->sample_period <<= t->rate_shift;
}

/*
 * From t's handler, after a drain: replace t's batched sampling event by one
 * whose samples copy four times as much stack (its stacks are deeper than
 * the copies). The new event starts before the old one's ring is drained
 * and unmapped (which ends it): no gap. On failure t keeps its event and
 * stops asking. Async-signal-safe (system calls only).
 */
void thread__grow_copy(struct ap_thread *t)
{
	struct perf_event_attr attr = autoprof.cfg->attr;
	unsigned copy = t->copy_bytes * 4 < t->copy_max ? t->copy_bytes * 4 : t->copy_max;
	struct ring ring = {0}, old = t->ring;
	int fd;

	if (copy <= t->copy_bytes)
		return;

	attr.sample_stack_user = copy;
	rate_attr(t, &attr);
	fd = event__open(&attr, t->tid);
	if (fd >= 0 && ring__map(&ring, fd, batched_ring_pages(copy)) == 0 &&
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0) {
		sample__drain(t, NULL);
		t->ring = ring;
		ring__unmap(&old);
		t->copy_bytes = copy;
	} else {
		ring__unmap(&ring);
		t->copy_max = t->copy_bytes; /* no more tries */
	}
	if (fd >= 0)
		syscall(SYS_close, fd);
}

/*
 * Open the tick of thread t (tid, 0 = the caller) into t->tick, its signal
 * signo routed to t; its fd in *tick_fd. Returns 0 or -errno with nothing
 * left open. Not async-signal-safe.
 */
static int open_tick(struct ap_thread *t, pid_t tid, int signo, int *tick_fd)
{
	struct perf_event_attr tick;
	int err;

	tick_attr(t, &tick, t->sampler->tick_samples);
	*tick_fd = event__open(&tick, tid);
	if (*tick_fd == -EACCES || *tick_fd == -EPERM) {
		tick.exclude_kernel = 1; /* perf_event_paranoid 2: user time only */
		*tick_fd = event__open(&tick, tid);
	}
	if (*tick_fd < 0)
		return *tick_fd;
	err = ring__map(&t->tick, *tick_fd, 0);
	if (!err)
		err = event__route_signal(*tick_fd, signo, t->tid);
	if (!err)
		return 0;
	ring__unmap(&t->tick);
	syscall(SYS_close, *tick_fd);
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
 * failure) t is only batched from the start. Not async-signal-safe.
 */
static void open_ramp(struct ap_thread *t, pid_t tid)
{
	struct perf_event_attr attr;
	int fd;

	t->ramp_fd = -1;
	t->ramp_drains = 0;
	if (t->sampler->tick_samples <= 1)
		return; /* the tick is at every sample already */
	tick_attr(t, &attr, 1);
	attr.disabled = 0;
	fd = event__open(&attr, tid);
	if (fd < 0)
		return;
	if (ring__map(&t->ramp, fd, 0) == 0 && event__route_signal(fd, autoprof.signo, t->tid) == 0)
		t->ramp_fd = fd; /* the number its signals carry in si_fd */
	else
		ring__unmap(&t->ramp);
	syscall(SYS_close, fd);
}

/* End t's ramp, if it has one. Async-signal-safe (munmap). */
void thread__end_ramp(struct ap_thread *t)
{
	ring__unmap(&t->ramp);
	t->ramp_fd = -1;
}

/*
 * From t's handler, after a drain (on_signal.c's backoff): halve t's rate.
 * New events at the new rate (batched: the sampling event and its tick; its
 * ramp ends) start before the old ones are drained and unmapped, which ends
 * them: no gap. False (t unchanged) at the floor, SLOWEST_HZ, in period
 * mode (a count of events, which has no rate to halve), or on a failure.
 * Async-signal-safe (system calls only).
 */
bool thread__slow_down(struct ap_thread *t)
{
	struct ring ring = {0}, tick = {0}, old = t->ring, old_tick = t->tick;
	int signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE);
	struct perf_event_attr attr;
	int fd, tick_fd = -1;
	bool ok;

	if (t->is_timer || !t->ring.page || !autoprof.cfg->attr.freq ||
	    (autoprof.cfg->freq >> (t->rate_shift + 1)) < SLOWEST_HZ)
		return false;
	t->rate_shift++;
	if (t->batched) {
		attr = autoprof.cfg->attr;
		attr.sample_stack_user = t->copy_bytes;
	} else {
		plain_attr(&attr);
	}
	rate_attr(t, &attr);
	fd = event__open(&attr, t->tid);
	ok = fd >= 0 &&
	     ring__map(&ring, fd, t->batched ? batched_ring_pages(t->copy_bytes) : ring_pages()) ==
		 0;
	if (ok && t->batched) {
		struct perf_event_attr ta;

		tick_attr(t, &ta, t->sampler->tick_samples);
		tick_fd = event__open(&ta, t->tid);
		ok = tick_fd >= 0 && ring__map(&tick, tick_fd, 0) == 0 &&
		     event__route_signal(tick_fd, signo, t->tid) == 0 &&
		     syscall(SYS_ioctl, tick_fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
	} else if (ok) {
		ok = event__route_signal(fd, signo, t->tid) == 0;
	}
	ok = ok && syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ENABLE, 0) == 0;
	if (ok) {
		sample__drain(t, NULL);
		t->ring = ring;
		ring__unmap(&old);
		if (t->batched) {
			t->tick = tick;
			ring__unmap(&old_tick);
			thread__end_ramp(t);
		}
		t->fd = t->batched ? tick_fd : fd;
		t->copy_max = copy_limit(t); /* a lower rate affords larger copies */
	} else {
		ring__unmap(&ring);
		ring__unmap(&tick);
		t->rate_shift--;
	}
	if (fd >= 0)
		syscall(SYS_close, fd);
	if (tick_fd >= 0)
		syscall(SYS_close, tick_fd);
	return ok;
}

/*
 * Open t's batched sampling event (its fd in *fd, its ring in t->ring), and
 * the tick whose signal drains it (t->tick, its fd in *tick_fd), and its
 * ramp (open_ramp). The copy is the size t has learned (a thread sampled
 * again after a pause), else AUTOPROF_STACK_COPY. Returns 0 or -errno with
 * nothing left open (a ring over the locked-memory limit: the caller samples
 * the thread unbatched). Not async-signal-safe.
 */
static int open_batched(struct ap_thread *t, pid_t tid, int *fd, int *tick_fd)
{
	struct perf_event_attr attr = autoprof.cfg->attr;
	unsigned copy = t->copy_bytes ? t->copy_bytes : autoprof.cfg->stack_copy;
	int err;

	t->copy_max = copy_limit(t);
	if (copy > t->copy_max)
		copy = t->copy_max;

	attr.sample_stack_user = copy;
	rate_attr(t, &attr);
	*fd = event__open(&attr, tid);
	if (*fd < 0)
		return *fd;
	err = ring__map(&t->ring, *fd, batched_ring_pages(copy));
	t->copy_bytes = copy;
	t->copy_samples = t->copy_short = 0;
	if (!err)
		err = open_tick(t, tid, autoprof.signo, tick_fd);
	if (!err) {
		open_ramp(t, tid);
		return 0;
	}
	ring__unmap(&t->ring);
	syscall(SYS_close, *fd);
	*fd = -1;
	return err;
}

/*
 * Open t's unbatched sampling event, a signal per sample, into t->fd and
 * t->ring. Returns 0 or -errno with nothing left open. Async-signal-safe
 * (system calls only).
 */
static int open_plain(struct ap_thread *t, pid_t tid)
{
	struct perf_event_attr attr;
	int err;

	plain_attr(&attr);
	rate_attr(t, &attr);
	t->fd = event__open(&attr, tid);
	if (t->fd < 0)
		return t->fd;
	err = ring__map(&t->ring, t->fd, ring_pages());
	if (!err)
		err = event__route_signal(t->fd, autoprof.signo, t->tid);
	if (!err)
		return 0;
	ring__unmap(&t->ring);
	syscall(SYS_close, t->fd);
	t->fd = -1;
	return err;
}

static int registry_init(void)
{
	void *p;

	if (by_slot)
		return 0;
	p = mmap(NULL, MAX_SLOTS * sizeof(*by_slot), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	by_slot = p;
	return 0;
}

/*
 * The calling thread's sampler whose event signals with si_fd fd (a thread
 * attached from outside, which has no ap_self), or NULL. Async-signal-safe.
 */
struct ap_thread *thread__from_fd(int fd)
{
	int top = __atomic_load_n(&max_slot, __ATOMIC_ACQUIRE);
	pid_t self = 0;

	if (thread__sandboxed())
		return NULL; /* no system call on a thread in seccomp */
	for (int i = 0; by_slot && i <= top; i++) {
		struct ap_thread *t = __atomic_load_n(&by_slot[i], __ATOMIC_ACQUIRE);

		if (!t || (t->fd != fd && t->ramp_fd != fd))
			continue;
		if (!self)
			self = (pid_t)syscall(SYS_gettid);
		if (t->tid == self)
			return t;
	}
	return NULL;
}

/* Put t in a free slot. Returns 0 or -EMFILE. Caller holds registry_lock. */
static int add_slot(struct ap_thread *t)
{
	for (int i = 0; i < MAX_SLOTS; i++) {
		if (by_slot[i])
			continue;
		t->slot = i;
		__atomic_store_n(&by_slot[i], t, __ATOMIC_RELEASE);
		if (i > max_slot)
			__atomic_store_n(&max_slot, i, __ATOMIC_RELEASE);
		return 0;
	}
	return -EMFILE;
}

/*
 * Is thread tid still alive? (A thread that died inside its handler, by
 * asynchronous cancellation, never leaves it.) Async-signal-safe.
 */
static bool alive(pid_t tid)
{
	return !(syscall(SYS_tgkill, getpid(), tid, 0) < 0 && errno == ESRCH);
}

/*
 * Wait until t's handler is not running: a bounded wait, and none at all
 * for a thread that died. Returns true when it left. Async-signal-safe.
 */
static bool wait_handler(struct ap_thread *t)
{
	uint64_t deadline = 0;

	for (unsigned i = 0; __atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST); i++) {
		if (i % 64 == 63) {
			uint64_t now = ap_now();

			if (!alive(t->tid))
				return false;
			if (!deadline)
				deadline = now + WAIT_NS;
			else if (now > deadline)
				return false;
		}
		syscall(SYS_sched_yield);
	}
	return true;
}

/*
 * Visitors: signal handlers on other threads that go over the registry
 * (control.c). A thread that ends waits for them to leave before it frees
 * its memory: a visitor that read its slot may still be about to look at it.
 */
static int visitors;

/* Wait (bounded) until no visitor is going over the registry. Async-signal-safe. */
static void wait_visitors(void)
{
	uint64_t deadline = 0;

	for (unsigned i = 0; __atomic_load_n(&visitors, __ATOMIC_SEQ_CST); i++) {
		if (i % 64 == 63) {
			uint64_t now = ap_now();

			if (!deadline)
				deadline = now + WAIT_NS;
			else if (now > deadline)
				return;
		}
		syscall(SYS_sched_yield);
	}
}

/*
 * Take t for a visitor (or, with own, for t's own set-up): its handler is
 * then held off as if it were running (a sampling signal meanwhile leaves
 * its record in the ring for the next one). Waits (bounded) while t's
 * handler runs. False when t is stopping or the wait ran out.
 * Async-signal-safe.
 */
bool thread__grab(struct ap_thread *t, bool own)
{
	uint64_t deadline = 0;

	(void)own;
	for (unsigned i = 0;; i++) {
		int cur = 0;

		if (__atomic_compare_exchange_n(&t->in_handler, &cur, 2, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			break;
		if (i % 64 == 63) {
			uint64_t now = ap_now();

			if (!deadline)
				deadline = now + 100000000ULL;
			else if (now > deadline)
				return false;
		}
		syscall(SYS_sched_yield);
	}
	if (__atomic_load_n(&t->closed, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&t->in_handler, 0, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

/* Give t back to its handler. Async-signal-safe. */
void thread__release(struct ap_thread *t)
{
	thread__leave(t); /* the same release as its own handler's */
}

/*
 * Call fn(t, arg) for every thread sampled now, each taken from its handler
 * meanwhile (thread__grab); a thread that cannot be taken (stopping, or its
 * handler stuck) is skipped. Returns how many fn saw. Lock-free: safe from
 * a signal handler on any thread whose own handler is not running.
 * Async-signal-safe.
 */
int thread__visit(void (*fn)(struct ap_thread *t, void *arg), void *arg)
{
	int top, n = 0;

	__atomic_fetch_add(&visitors, 1, __ATOMIC_SEQ_CST);
	top = __atomic_load_n(&max_slot, __ATOMIC_SEQ_CST);
	for (int i = 0; by_slot && i <= top; i++) {
		struct ap_thread *t = __atomic_load_n(&by_slot[i], __ATOMIC_SEQ_CST);

		if (!t || !thread__grab(t, false))
			continue;
		fn(t, arg);
		thread__release(t);
		n++;
	}
	__atomic_fetch_sub(&visitors, 1, __ATOMIC_SEQ_CST);
	return n;
}

/*
 * Make t's sample source follow autoprof.paused: paused, its perf event is
 * ended (its ring unmapped: the event has no fd left) or its timer disarmed;
 * running, it gets a new event (or its timer armed). The caller holds t
 * (thread__grab). Returns 0 or -errno. Async-signal-safe (system calls only).
 */
int thread__sync_armed(struct ap_thread *t)
{
	bool paused = __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST);
	int err, sample_fd = -1, tick_fd = -1;

	if (t->is_timer)
		return timer__set_armed(t, !paused);
	if (paused) {
		ring__unmap(&t->ring); /* drops at most the samples not yet drained */
		ring__unmap(&t->tick); /* batched: the tick that signals */
		thread__end_ramp(t);
		return 0;
	}
	if (t->ring.page)
		return 0;
	/* Batched as threads that start running are, else a signal per sample. */
	if (autoprof.sampler.batched && open_batched(t, t->tid, &sample_fd, &tick_fd) == 0) {
		err = syscall(SYS_ioctl, sample_fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ||
			      syscall(SYS_ioctl, tick_fd, PERF_EVENT_IOC_ENABLE, 0) < 0
			  ? -errno
			  : 0;
		if (err) {
			ring__unmap(&t->ring);
			ring__unmap(&t->tick);
			thread__end_ramp(t);
		} else {
			t->batched = true;
			t->fd = tick_fd;
		}
		syscall(SYS_close, sample_fd);
		syscall(SYS_close, tick_fd);
		return err;
	}
	t->batched = false;
	err = open_plain(t, t->tid);
	if (err)
		return err;
	if (syscall(SYS_ioctl, t->fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		err = -errno;
		ring__unmap(&t->ring);
	}
	syscall(SYS_close, t->fd);
	return err;
}

/*
 * The calling thread stops being sampled for good, from a handler (the
 * program reads the sampling signal itself on it: signals.c): its samples
 * so far are kept, its events end. Returns whether it was sampled until
 * then. Async-signal-safe.
 */
bool thread__step_aside(void)
{
	struct ap_thread *t = ap_self;
	bool had;

	if (!t || !thread__grab(t, true))
		return false;
	had = t->ring.page || t->tick.page || t->is_timer;
	if (t->is_timer)
		timer__set_armed(t, false);
	if (t->ring.page)
		sample__drain(t, NULL);
	ring__unmap(&t->tick);
	thread__end_ramp(t);
	ring__unmap(&t->ring);
	thread__release(t);
	return had;
}

/* The first record of a thread: its name, before its event is enabled. */
static void put_comm(struct ap_thread *t, pid_t tid)
{
	char name[32] = "", path[64];

	if (!tid) {
		prctl(PR_GET_NAME, name);
	} else {
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
		ap_read_file(path, name, sizeof(name));
		name[strcspn(name, "\n")] = 0;
	}
	t->len += record__comm(t->buf + t->len, t->cap - t->len, (uint32_t)autoprof.pid,
			       (uint32_t)t->tid, name, ap_now(), false);
}

/*
 * Set up sampling of thread tid (the caller when tid is 0): event, ring,
 * signal routing, registry entry; the event is enabled last. Returns the
 * thread or NULL with *err set. Not async-signal-safe.
 */
static struct ap_thread *thread_open(pid_t tid, int *err)
{
	size_t body =
	    PAGE_UP(PERF_ALIGN8(sizeof(struct ap_thread)) + RECORD_BUF_BYTES + AP_SCRATCH_BYTES);
	size_t agg = aggregate__bytes(&autoprof.sampler); /* AUTOPROF_AGGREGATE's table */
	size_t len = body + agg + GUARD_BYTES + HANDLER_STACK_BYTES;
	bool paused = __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST);
	struct ap_thread *t;
	int sample_fd = -1; /* batched: the sampling event (t->fd is its tick's) */
	void *mem;

	*err = registry_init();
	if (*err)
		return NULL;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	t = mem;
	t->mem = mem;
	t->mem_len = len;
	t->buf = (char *)mem + PERF_ALIGN8(sizeof(*t));
	t->cap = RECORD_BUF_BYTES;
	t->scratch = t->buf + RECORD_BUF_BYTES;
	t->sampler = &autoprof.sampler;
	/* The handler's own stack, at the end, above a guard page (own_stack.c). */
	t->stack_top = (char *)mem + len;
	mprotect((char *)mem + body + agg, GUARD_BYTES, PROT_NONE);
	t->tid = tid ? tid : gettid();
	t->last_flush = ap_now();
	t->agg = agg ? aggregate__place((char *)mem + body, agg, t->last_flush) : NULL;

	t->fd = -1;
	t->ramp_fd = -1;
	if (autoprof.cfg->timer_mode) {
		/* A POSIX CPU-time timer, created by the thread itself. */
		*err = tid ? -EOPNOTSUPP : timer__open(t);
		if (*err)
			goto out_mem;
	} else if (paused) {
		/* Started paused (AUTOPROF_START=0, `autoprof ctl PID stop`): no
		 * event until sampling starts (thread__sync_armed). */
	} else {
		/* Batched where the sampler says so and the rings fit, else a
		 * signal per sample. */
		t->batched =
		    autoprof.sampler.batched && open_batched(t, tid, &sample_fd, &t->fd) == 0;
		if (!t->batched) {
			*err = open_plain(t, tid);
			if (*err)
				goto out_mem;
		}
	}
	t->handle = tid ? 0 : pthread_self();
	put_comm(t, tid);
	pthread_mutex_lock(&registry_lock);
	*err = add_slot(t);
	pthread_mutex_unlock(&registry_lock);
	if (*err)
		goto out_ring;
	if (!tid)
		ap_self = t;
	*err = t->is_timer ? (paused ? 0 : timer__start(t))
	       : t->fd < 0 ? 0
	       : (sample_fd >= 0 && ioctl(sample_fd, PERF_EVENT_IOC_ENABLE, 0) < 0) ||
		       ioctl(t->fd, PERF_EVENT_IOC_ENABLE, 0) < 0
		   ? -errno
		   : 0;
	if (*err) {
		if (!tid)
			ap_self = NULL;
		pthread_mutex_lock(&registry_lock);
		__atomic_store_n(&by_slot[t->slot], NULL, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&registry_lock);
		goto out_ring;
	}
	offcpu__thread_start(t, tid); /* AUTOPROF_OFFCPU */
	/* The event lives on in its mapping; t->fd stays as the number its
	 * signals carry in si_fd, never used again. */
	if (t->fd >= 0)
		syscall(SYS_close, t->fd);
	if (sample_fd >= 0)
		syscall(SYS_close, sample_fd);
	/* A `ctl start` or `stop` that went over the registry before t was in
	 * it: make t follow it now. */
	if (paused != __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST) &&
	    thread__grab(t, false)) {
		thread__sync_armed(t);
		thread__release(t);
	}
	return t;

out_ring:
	ring__unmap(&t->ring);
	ring__unmap(&t->tick);
	thread__end_ramp(t);
	if (t->is_timer)
		timer__close(t);
	if (t->fd >= 0)
		syscall(SYS_close, t->fd);
	if (sample_fd >= 0)
		syscall(SYS_close, sample_fd);
out_mem:
	munmap(mem, len);
	return NULL;
}

/*
 * Start sampling the calling thread. Returns 0 or -errno (nothing is left
 * behind on failure). Not async-signal-safe.
 */
int thread__start(void)
{
	int err;

	if (autoprof.cfg->callgraph == AP_CG_LIBUNWIND)
		unwind__prime_thread();
	return thread_open(0, &err) ? 0 : err;
}

/*
 * Start sampling another thread of this process that already exists (found
 * in /proc/self/task at start-up). Its handler finds it by fd.
 * Returns 0 or -errno. Not async-signal-safe.
 */
int thread__attach(pid_t tid)
{
	int err;

	return thread_open(tid, &err) ? 0 : err;
}

/*
 * Take t out of the registry; false if someone else already did. Callers
 * hold registry_lock, except the emergency stop, which only tries it (the
 * compare-and-swap on closed alone decides who stops t). Async-signal-safe.
 */
static bool claim(struct ap_thread *t)
{
	int expected = 0;

	if (!__atomic_compare_exchange_n(&t->closed, &expected, 1, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return false;
	__atomic_store_n(&by_slot[t->slot], NULL, __ATOMIC_RELEASE);
	return true;
}

/*
 * After a successful claim: stop t's timer, wait (bounded) for its handler
 * to leave, keep the samples still in its ring, write everything out, then
 * unmap the ring, which ends the event (its handler, if a last signal comes,
 * sees `closed` and leaves). Only the owner frees the memory (the owner may
 * still look at it otherwise).
 */
static void finish(struct ap_thread *t, bool own)
{
	if (t->is_timer)
		timer__close(t);
	/* On its own thread a handler cannot be running: in_handler set means
	 * one was unwound out of (by a cancellation point or longjmp in code it
	 * called); the ring is whole, its tail not yet moved. */
	if (own)
		__atomic_compare_exchange_n(&t->in_handler, &(int){1}, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	if (wait_handler(t))
		sample__drain(t, NULL);
	thread__flush(t);
	aggregate__emit_all(t);
	stats__fold(&autoprof.stats, &t->stats);
	ring__unmap(&t->tick);
	thread__end_ramp(t);
	ring__unmap(&t->ring);
	if (own) {
		offcpu__close_event(t); /* only here: its wrappers read it unclaimed */
		ap_self = NULL;
		wait_visitors();
		munmap(t->mem, t->mem_len);
	}
}

/*
 * Stop sampling the calling thread (at its exit), unless the thread ending
 * the process already did. Not async-signal-safe.
 */
void thread__stop_self(void)
{
	struct ap_thread *t = ap_self;
	sigset_t old;
	bool mine;

	if (!t)
		return;
	ap_block_sampling(&old);
	pthread_mutex_lock(&registry_lock);
	mine = claim(t);
	pthread_mutex_unlock(&registry_lock);
	if (mine)
		finish(t, true);
	ap_self = NULL;
	ap_sigmask(SIG_SETMASK, &old, NULL);
}

/* Stop every thread still sampling; the process is ending. Not async-signal-safe. */
void thread__stop_all(void)
{
	sigset_t old;
	int top;

	thread__stop_self();
	ap_block_sampling(&old);
	top = __atomic_load_n(&max_slot, __ATOMIC_ACQUIRE);
	for (int i = 0; by_slot && i <= top; i++) {
		struct ap_thread *t;
		bool mine = false;

		pthread_mutex_lock(&registry_lock);
		t = by_slot[i];
		if (t)
			mine = claim(t);
		pthread_mutex_unlock(&registry_lock);
		if (mine)
			finish(t, false);
	}
	ap_sigmask(SIG_SETMASK, &old, NULL);
}

/* The kernel tid of a thread of ours, or 0 when it is not one we sample. Not async-signal-safe. */
pid_t thread__tid_of(pthread_t handle)
{
	pid_t tid = 0;

	if (pthread_equal(handle, pthread_self()))
		return gettid();
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; by_slot && i <= max_slot && !tid; i++)
		if (by_slot[i] && by_slot[i]->handle && pthread_equal(by_slot[i]->handle, handle))
			tid = by_slot[i]->tid;
	pthread_mutex_unlock(&registry_lock);
	return tid;
}

/* Record that thread tid is now called name (a COMM record). Not async-signal-safe. */
void thread__rename(pid_t tid, const char *name)
{
	struct ap_thread *t = ap_self;
	char rec[128];
	size_t n;
	sigset_t old;

	if (tid <= 0 || !name)
		return;
	n = record__comm(rec, sizeof(rec), (uint32_t)autoprof.pid, (uint32_t)tid, name, ap_now(),
			 false);
	ap_block_sampling(&old);
	if (t && thread__grab(t, true)) { /* a visitor may be flushing t's buffer */
		memcpy(thread__reserve(t, n), rec, n);
		t->len += n;
		thread__release(t);
	} else {
		writer__append(&autoprof.writer, rec, n);
	}
	ap_sigmask(SIG_SETMASK, &old, NULL);
}

/* Say once that some thread could not be sampled, and why. Not async-signal-safe. */
void thread__warn_once(int err)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pr_warn("cannot sample a new thread: %s; it runs unprofiled (said once)",
			strerror(-err));
}

/* pthread_atfork: no thread may hold the registry across fork. Not async-signal-safe. */
void thread__atfork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

void thread__atfork_parent(void)
{
	pthread_mutex_unlock(&registry_lock);
}

/*
 * In a forked child: every registered thread is the parent's (their events
 * belong to the parent's threads, their rings are not mapped here, their
 * buffers hold the parent's records). Free it all, unwritten.
 */
void thread__forget_all(void)
{
	pthread_mutex_init(&registry_lock, NULL);
	for (int i = 0; by_slot && i <= max_slot; i++) {
		struct ap_thread *t = by_slot[i];

		if (!t)
			continue;
		by_slot[i] = NULL;
		munmap(t->mem, t->mem_len);
	}
	max_slot = -1;
	ap_self = NULL;
	visitors = 0; /* a visitor of the parent's is not here */
}

/*
 * From a deadly signal's handler: stop every thread as thread__stop_all()
 * does, but never block: the registry lock is only tried (the interrupted
 * code may hold it), a handler that does not leave is not waited for long,
 * and nothing is freed. Async-signal-safe.
 */
void thread__stop_all_emergency(void)
{
	int top = __atomic_load_n(&max_slot, __ATOMIC_ACQUIRE);
	bool locked = false;

	for (int i = 0; i < 1000 && !(locked = !pthread_mutex_trylock(&registry_lock)); i++)
		syscall(SYS_sched_yield);
	for (int i = 0; by_slot && i <= top; i++) {
		struct ap_thread *t = __atomic_load_n(&by_slot[i], __ATOMIC_ACQUIRE);

		if (!t || !claim(t))
			continue;
		if (t->is_timer)
			timer__close(t);
		if (t == ap_self ? !__atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST)
				 : wait_handler(t))
			sample__drain(t, NULL);
		thread__flush(t);
		aggregate__emit_all(t);
		stats__fold(&autoprof.stats, &t->stats);
	}
	if (locked)
		pthread_mutex_unlock(&registry_lock);
}

/*
 * Give t a new event that signals with signo (its old one has no fd left to
 * change): t's handler is held off meanwhile, the old ring is drained into
 * t's buffer and unmapped, which ends the old event. On failure t stops
 * being sampled. Caller holds registry_lock. Not async-signal-safe.
 */
static void reopen_event(struct ap_thread *t, int signo)
{
	struct ring ring = {0};
	int fd, err;

	if (!t->ring.page)
		return; /* paused: its next event is opened with the new number */
	if (__atomic_exchange_n(&t->closed, 1, __ATOMIC_SEQ_CST))
		return;
	if (!wait_handler(t))
		return; /* died in its handler: leave it closed */
	if (t->batched) {
		/* Only the tick signals: a new tick, the same sampling event. */
		struct ring old = t->tick;

		thread__end_ramp(t); /* it signals with the old number */
		t->tick.page = NULL;
		err = open_tick(t, t->tid, signo, &fd);
		if (!err && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			err = -errno;
		sample__drain(t, NULL);
		ring__unmap(&old);
		if (fd >= 0)
			syscall(SYS_close, fd);
		if (err) {
			ring__unmap(&t->tick);
			ring__unmap(&t->ring);
			return; /* stays closed */
		}
		t->fd = fd;
		__atomic_store_n(&t->closed, 0, __ATOMIC_SEQ_CST);
		return;
	}
	{
		struct perf_event_attr attr;

		plain_attr(&attr);
		rate_attr(t, &attr);
		fd = event__open(&attr, t->tid);
	}
	err = fd < 0 ? fd : ring__map(&ring, fd, ring_pages());
	if (!err)
		err = event__route_signal(fd, signo, t->tid);
	if (!err && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		err = -errno;
	sample__drain(t, NULL);
	ring__unmap(&t->ring);
	if (fd >= 0)
		syscall(SYS_close, fd);
	if (err) {
		ring__unmap(&ring);
		t->ring.page = NULL;
		return; /* stays closed; its samples so far are in its buffer */
	}
	t->ring = ring;
	t->fd = fd;
	__atomic_store_n(&t->closed, 0, __ATOMIC_SEQ_CST);
}

/*
 * Send every thread's overflow signal as signo from now on (the program took
 * the old one). Timer threads get a new timer on their own CPU clock.
 * Not async-signal-safe.
 */
void thread__reroute(int signo)
{
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; by_slot && i <= max_slot; i++) {
		struct ap_thread *t = by_slot[i];

		if (!t)
			continue;
		if (!t->is_timer)
			reopen_event(t, signo);
		else
			timer__retarget(t);
	}
	pthread_mutex_unlock(&registry_lock);
	control__publish(); /* `autoprof ctl` sends the new number from now on */
}

/* The calling thread entered seccomp: no more system calls of ours on it. */
static AP_TLS bool sandboxed;

/* Did the calling thread enter seccomp (strict or a filter)? Async-signal-safe. */
bool thread__sandboxed(void)
{
	return sandboxed;
}

/*
 * The calling thread is about to enter seccomp (strict mode, or a filter that
 * may refuse or kill our system calls): flush and stop its sampler, consume
 * any sampling signal already pending, and make no system call on it from
 * then on. With all_threads (SECCOMP_FILTER_FLAG_TSYNC) the whole session is
 * finished now. Says once why. Not async-signal-safe.
 */
void thread__before_seccomp(bool all_threads)
{
	static int said;
	struct timespec zero = {0, 0};
	sigset_t old, ours;

	if (sandboxed || !__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) ||
	    getpid() != autoprof.pid)
		return;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pr_warn("the program enters seccomp; %s stops being profiled first, so that the "
			"profiler makes no system call the sandbox forbids (said once)",
			all_threads ? "every thread" : "that thread");
	if (all_threads) {
		autoprof__stop();
		sandboxed = true;
		return;
	}
	ap_block_sampling(&old);
	thread__stop_self();
	sigemptyset(&ours);
	sigaddset(&ours, autoprof.signo);
	while (syscall(SYS_rt_sigtimedwait, &ours, NULL, &zero, _NSIG / 8) > 0)
		; /* a sample signal already queued would run our handler under the sandbox */
	sandboxed = true;
	ap_sigmask(SIG_SETMASK, &old, NULL);
}
