/* SPDX-License-Identifier: MIT */
/*
 * exec_window.c - one ending of this image at a time: an exec's finish of
 * the file (lifecycle__before_exec) up to its failure (lifecycle__exec_failed),
 * or an exit's finish (lifecycle__stop). Two threads whose execs failed at
 * once both finished the file and freed its features' pages twice (SIGSEGV
 * in 2 of 3 runs of 4 threads x 3000 failing execs of a script whose
 * interpreter is missing); the second one now waits for the first: its exec
 * then fails too (the window opens again, on the session the failure
 * restarted) or succeeds (and this thread is gone with the image).
 *
 * The window is a thread id in a word, taken with a compare-and-swap, waited
 * for with sched_yield. A thread in the window that comes back (a handler of
 * the program that execs or exits inside it) only counts a level; one
 * interrupted inside the profiler (holding what the window's owner may wait
 * for: its buffer, the file's lock, a memory sample) does not wait; a vfork
 * child, which shares the parent's memory, never takes it; a forked child
 * starts with it open.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static int owner;		/* the thread in the window (its tid), 0: open */
static __thread unsigned depth; /* this thread's levels in the window */
static __thread bool held;	/* this thread took the window (its outermost level) */
static __thread int cancel;	/* its cancel state at its outermost level */

/*
 * Enter the window from an ending of this image (an exec, an exit): wait for
 * another thread's to end, unless inside (the thread was interrupted inside
 * the profiler) or not this process's own session (a vfork child). Paired
 * with exec_window__leave(). Not async-signal-safe (it may wait).
 */
void exec_window__enter(bool inside)
{
	int self, idle = 0;

	if (getpid() != autoprof.pid || depth++)
		return;
	/* No cancellation inside (the window's writes and closes are cancellation points; the
	 * exec and exit the program called are not): a thread cancelled there held the window
	 * for good, every other thread's exec waited for it (20 of 20 runs of 4 threads'
	 * failing execs, cancelled). A cancel acts where it would without us: at the program's
	 * next cancellation point. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	self = (int)raw_syscall(SYS_gettid);
	while (!__atomic_compare_exchange_n(&owner, &idle, self, false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (inside)
			return; /* what the owner may wait for is this thread's: go on without */
		idle = 0;
		sched_yield();
	}
	held = true;
}

/* Leave this thread's level of the window; the outermost one opens it. */
void exec_window__leave(void)
{
	if (getpid() != autoprof.pid || !depth || --depth)
		return;
	if (held) {
		held = false;
		__atomic_store_n(&owner, 0, __ATOMIC_RELEASE);
	}
	pthread_setcancelstate(cancel, NULL);
}

/* In a forked child: the window open (its parent's other threads are not here). */
void exec_window__after_fork(void)
{
	__atomic_store_n(&owner, 0, __ATOMIC_RELAXED);
	depth = 0;
	held = false;
}
