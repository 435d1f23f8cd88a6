/* SPDX-License-Identifier: MIT */
/*
 * registry.c - every sampled thread of the process, in a table of slots
 * written under one lock and read lock-free by signal handlers: a thread
 * attached from outside is found by the fd its signals carry, `autoprof ctl`
 * visits them all from a handler (grab/release hold a thread's own handler
 * off meanwhile), and a thread is stopped exactly once (claim: the `closed`
 * flag decides who). Across fork the lock is held, and the child forgets
 * the parent's threads. Also the calling thread's own: its sampler
 * (ap_self) and whether it entered seccomp (ap_sandboxed).
 *
 * The handler's side is declared in handler.h; adding, dropping, the lock
 * and fork are the session's, outside any handler (setup.h).
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
#include "setup.h"

/* Threads sampled at once. */
#define MAX_SLOTS 65536
/* The longest wait for another thread's handler to leave. */
#define WAIT_NS 3000000000ULL

AP_TLS struct ap_thread *ap_self;
AP_TLS bool ap_sandboxed;

/* Every sampled thread; written under registry_lock, read lock-free by the handler. */
static struct ap_thread **by_slot;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static int max_slot = -1; /* highest slot ever used */
/* This thread holds registry_lock, or is about to (set first, cleared last): a handler of the
 * program that forks meanwhile (fork is async-signal-safe) must not take it again in our
 * atfork prepare (it waited for itself: samplers__stop_all of a failed exec, a SIGUSR1 whose
 * handler forks, hung the program). */
static __thread bool lock_here;
static __thread bool prepare_skipped; /* the prepare found lock_here: the parent leaves it */

static void lock_registry(void)
{
	lock_here = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&registry_lock);
}

static void unlock_registry(void)
{
	pthread_mutex_unlock(&registry_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	lock_here = false;
}

static int table_init(void)
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
struct ap_thread *registry__from_fd(int fd)
{
	int top = __atomic_load_n(&max_slot, __ATOMIC_ACQUIRE);
	pid_t self = 0;

	if (ap_sandboxed)
		return NULL; /* no system call on a thread in seccomp */
	for (int i = 0; by_slot && i <= top; i++) {
		struct ap_thread *t = __atomic_load_n(&by_slot[i], __ATOMIC_ACQUIRE);

		if (!t || (t->fd != fd && t->ramp_fd != fd))
			continue;
		if (!self)
			self = (pid_t)raw_syscall(SYS_gettid);
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
	return !(raw_syscall(SYS_tgkill, getpid(), tid, 0) < 0 && errno == ESRCH);
}

/*
 * Wait until t's handler is not running: a bounded wait, and none at all
 * for a thread that died. Returns true when it left. Async-signal-safe.
 */
bool registry__wait_handler(struct ap_thread *t)
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
		raw_syscall(SYS_sched_yield);
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
void registry__wait_visitors(void)
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
		raw_syscall(SYS_sched_yield);
	}
}

/*
 * Take t for a visitor (or, with own, for t's own set-up): its handler is
 * then held off as if it were running (a sampling signal meanwhile leaves
 * its record in the ring for the next one). Waits (bounded) while t's
 * handler runs. False when t is stopping or the wait ran out, and at once
 * when t is the calling thread and entered (by the code the caller's handler
 * interrupted: a memory sample, its own handler), which no wait frees. The
 * thread's own hold is 1, as its handler's: 1 is only ever the thread's own
 * (lifecycle.c reads it as "interrupted inside"; a visitor's 2 is not: an exec
 * that read a visitor's flush as its own went on without finishing the file).
 * Async-signal-safe.
 */
bool registry__grab(struct ap_thread *t, bool own)
{
	uint64_t deadline = 0;
	int hold = t == ap_self ? 1 : 2;

	(void)own;
	for (unsigned i = 0;; i++) {
		int cur = 0;

		if (__atomic_compare_exchange_n(&t->in_handler, &cur, hold, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			break;
		/* entered by the code this handler interrupted (its own handler, a memory
		 * sample): no wait frees it; a visitor's hold (2, another thread's) is waited */
		if (cur == 1 && t == ap_self)
			return false;
		if (i % 64 == 63) {
			uint64_t now = ap_now();

			if (!deadline)
				deadline = now + 100000000ULL;
			else if (now > deadline)
				return false;
		}
		raw_syscall(SYS_sched_yield);
	}
	if (__atomic_load_n(&t->closed, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&t->in_handler, 0, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

/* Give t back to its handler. Async-signal-safe. */
void registry__release(struct ap_thread *t)
{
	buffer__leave(t); /* the same release as its own handler's */
}

/*
 * Call fn(t, arg) for every thread sampled now, each taken from its handler
 * meanwhile (registry__grab); a thread that cannot be taken (stopping, or its
 * handler stuck) is skipped. Returns how many fn saw. Lock-free: safe from
 * a signal handler on any thread whose own handler is not running.
 * Async-signal-safe.
 */
int registry__visit(void (*fn)(struct ap_thread *t, void *arg), void *arg)
{
	int top, n = 0;

	__atomic_fetch_add(&visitors, 1, __ATOMIC_SEQ_CST);
	top = __atomic_load_n(&max_slot, __ATOMIC_SEQ_CST);
	for (int i = 0; by_slot && i <= top; i++) {
		struct ap_thread *t = __atomic_load_n(&by_slot[i], __ATOMIC_SEQ_CST);

		if (!t || !registry__grab(t, false))
			continue;
		fn(t, arg);
		registry__release(t);
		n++;
	}
	__atomic_fetch_sub(&visitors, 1, __ATOMIC_SEQ_CST);
	return n;
}

/*
 * Take t out of the registry; false if someone else already did. Callers
 * hold registry_lock, except the emergency stop, which only tries it (the
 * compare-and-swap on closed alone decides who stops t). Async-signal-safe.
 */
bool registry__claim(struct ap_thread *t)
{
	int expected = 0;

	if (!__atomic_compare_exchange_n(&t->closed, &expected, 1, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return false;
	__atomic_store_n(&by_slot[t->slot], NULL, __ATOMIC_RELEASE);
	return true;
}

static __thread bool forking; /* this thread is between the two below (set first: a handler
			       * that comes while the lock is taken must see it) */

/* pthread_atfork: no thread may hold the registry across fork. Not async-signal-safe. */
void registry__atfork_prepare(void)
{
	forking = true;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (lock_here) { /* a handler's fork inside our hold: the lock is this thread's already */
		prepare_skipped = true;
		return;
	}
	lock_registry();
}

void registry__atfork_parent(void)
{
	if (prepare_skipped)
		prepare_skipped = false;
	else
		unlock_registry();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	forking = false;
}

/*
 * Does the calling thread hold the registry, or is it about to: inside fork() (a handler of
 * the program that interrupted its fork runs), or in the library's own hold (a handler that
 * interrupted it)? Whatever takes the registry would wait for itself. Async-signal-safe.
 */
bool registry__held_here(void)
{
	return forking || lock_here;
}

/*
 * In a forked child: every registered thread is the parent's (their events
 * belong to the parent's threads, their rings are not mapped here, their
 * buffers hold the parent's records). Free it all, unwritten.
 */
void registry__forget_all(void)
{
	/* open, whoever held it (a handler's fork inside our hold included: the child's session
	 * opens now, and the interrupted code's unlock, should the child return to it, finds an
	 * open lock) */
	forking = false;
	prepare_skipped = false;
	lock_here = false;
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
 * Put t in the registry (the table is made at the first thread), the caller
 * holding the registry lock. Returns 0, or -errno (-EMFILE: MAX_SLOTS
 * threads sampled at once). Not async-signal-safe.
 */
int registry__add(struct ap_thread *t)
{
	int err = table_init();

	return err ? err : add_slot(t);
}

/* Take t out again (its start failed before anyone could see it), the caller holding the
 * registry lock. Not async-signal-safe. */
void registry__drop(struct ap_thread *t)
{
	__atomic_store_n(&by_slot[t->slot], NULL, __ATOMIC_RELEASE);
}

/* The registry lock: held to claim a thread, to go over the table in order. */
void registry__lock(void)
{
	lock_registry();
}

void registry__unlock(void)
{
	unlock_registry();
}

/* Try the lock only (the emergency stop: the interrupted code may hold it). Async-signal-safe. */
bool registry__trylock(void)
{
	if (pthread_mutex_trylock(&registry_lock) != 0)
		return false;
	lock_here = true;
	return true;
}

/* The highest slot ever used, or -1. Async-signal-safe. */
int registry__top(void)
{
	return by_slot ? __atomic_load_n(&max_slot, __ATOMIC_ACQUIRE) : -1;
}

/* The thread in slot i (at most registry__top()), or NULL. Async-signal-safe. */
struct ap_thread *registry__at(int i)
{
	return by_slot ? __atomic_load_n(&by_slot[i], __ATOMIC_ACQUIRE) : NULL;
}
