/* SPDX-License-Identifier: MIT */
/*
 * writer_lock.c - the writer's file lock: one write of the file at a time,
 * from any thread or signal handler. The holder's tid is in the lock word: a
 * waiter never waits on a thread that died (it takes the lock over), nor on
 * itself (a deadly signal that interrupted its own write), nor longer than
 * LOCK_WAIT_NS (the write is then dropped). Waiters sleep on the word
 * (futex). Async-signal-safe.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "writer_parts.h"

#define LOCK_WAIT_NS 3000000000ULL /* then the append is dropped */

#define WAITERS	  (1 << 30) /* in the lock word: someone sleeps on it (tids are below 2^22) */
#define HOLDER(v) ((v) & ~WAITERS)

/* This thread's interrupted write will resume (writer_lock__own_write_resumes): never taken over.
 */
static AP_TLS bool own_resumes;

/*
 * Take the file lock: false when it cannot be had (the holder is alive and
 * busy for LOCK_WAIT_NS). Waiters sleep on the lock word (futex), 20 ms at a
 * time, checking between sleeps whether the holder still lives: a dead
 * holder's lock is taken over, and so is the caller's own (a deadly signal's
 * handler interrupted its write). Async-signal-safe.
 */
bool writer_lock__take(struct writer *w)
{
	int self = (int)raw_syscall(SYS_gettid), mine = self;
	uint64_t deadline = 0;

	for (unsigned i = 0;; i++) {
		int cur = 0;
		struct timespec nap = {0, 20 * 1000 * 1000};

		if (__atomic_compare_exchange_n(&w->lock, &cur, mine, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		if (HOLDER(cur) == self && own_resumes)
			return false; /* an exec from a handler, which may fail: the write resumes
				       */
		if (HOLDER(cur) == self ||
		    (i > 0 && raw_syscall(SYS_tgkill, getpid(), HOLDER(cur), 0) < 0 &&
		     errno == ESRCH)) {
			if (__atomic_compare_exchange_n(&w->lock, &cur, self | (cur & WAITERS),
							false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return true;
			continue;
		}
		if (i > 0) {
			uint64_t now = ap_now();

			if (!deadline)
				deadline = now + LOCK_WAIT_NS;
			else if (now > deadline)
				return false;
		}
		if (!(cur & WAITERS) &&
		    !__atomic_compare_exchange_n(&w->lock, &cur, cur | WAITERS, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		raw_syscall(SYS_futex, &w->lock, FUTEX_WAIT_PRIVATE, cur | WAITERS, &nap, NULL, 0);
		mine = self | WAITERS; /* others may sleep too: the next unlock wakes one */
	}
}

/* Release the file lock, waking one sleeper. Async-signal-safe. */
void writer_lock__give(struct writer *w)
{
	if (__atomic_exchange_n(&w->lock, 0, __ATOMIC_RELEASE) & WAITERS)
		raw_syscall(SYS_futex, &w->lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * The code a handler of the program interrupted on this thread resumes after it (an exec that
 * can fail, lifecycle.c): while on, a lock this thread holds (the interrupted code's write) is not
 * taken over, and the writes that would need it are dropped. Async-signal-safe.
 */
void writer_lock__own_write_resumes(bool on)
{
	own_resumes = on;
}

/* Does this thread hold w's lock (a write of its own that a handler interrupted)?
 * Async-signal-safe. */
bool writer_lock__held_here(const struct writer *w)
{
	int cur = __atomic_load_n(&w->lock, __ATOMIC_RELAXED);

	return cur && HOLDER(cur) == (int)raw_syscall(SYS_gettid);
}
