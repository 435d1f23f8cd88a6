/* SPDX-License-Identifier: MIT */
/*
 * signal_table.c - the signals the library holds, as the program sees them:
 * who holds each (AP_HOLD_*: the program, the sampler, fatal.c), the
 * program's "virtual" disposition of each, and the numbers that ever carried
 * samples. wrap/signals.c's wrappers write it under a spin lock taken with
 * every signal blocked on the writing thread (signal_table__enter/leave);
 * the handlers read it without a lock, against a sequence count (a read that
 * overlapped a write is made again). Also the real sigaction, registered by
 * wrap/signals.c before any handler is installed, and each thread's shadow
 * bit (ap_shadow_signo, which wrap/signal_masks.c keeps). Everything here is
 * async-signal-safe.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

#include "handler.h"

static unsigned char holder[_NSIG];
static struct sigaction virt[_NSIG];
static unsigned seq;	      /* odd while the table changes (read by handlers) */
static int table_lock;	      /* a spin lock, taken with every signal blocked */
static sigset_t ever_sampled; /* numbers that carried samples at some time */
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

AP_TLS int ap_shadow_signo;

/* The calling thread's mask, past the wrappers (a raw system call). */
static void set_mask(int how, const sigset_t *set, sigset_t *old)
{
	raw_syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

/* Take the table: every signal blocked on this thread (the old mask in *old), then the lock. */
void signal_table__enter(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	set_mask(SIG_BLOCK, &all, old);
	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_fetch_add(&seq, 1, __ATOMIC_ACQ_REL);
}

/* Give the table back and the thread its mask old. */
void signal_table__leave(const sigset_t *old)
{
	__atomic_fetch_add(&seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
	set_mask(SIG_SETMASK, old, NULL);
}

/*
 * A consistent copy of sig's holder (returned) and virtual disposition,
 * without locks (a writer on another thread is waited out).
 */
int signal_table__read(int sig, struct sigaction *out)
{
	unsigned s;
	int who;

	for (;;) {
		s = __atomic_load_n(&seq, __ATOMIC_ACQUIRE);
		if (s & 1) {
			sched_yield();
			continue;
		}
		who = __atomic_load_n(&holder[sig], __ATOMIC_RELAXED);
		memcpy(out, &virt[sig], sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&seq, __ATOMIC_RELAXED) == s)
			return who;
	}
}

/* sig's virtual disposition, to read or change between signal_table__enter() and __leave(). */
struct sigaction *signal_table__virt(int sig)
{
	return &virt[sig];
}

/* Who holds sig (AP_HOLD_*). */
int signal_table__holder(int sig)
{
	return sig > 0 && sig < _NSIG ? __atomic_load_n(&holder[sig], __ATOMIC_RELAXED) : 0;
}

/* sig is held by who from now on (between signal_table__enter() and __leave()). */
void signal_table__set_holder(int sig, int who)
{
	__atomic_store_n(&holder[sig], (unsigned char)who, __ATOMIC_RELAXED);
}

/* Remember that sig carries samples (its POLL_* deliveries are ours). */
void signal_table__note_sampling(int sig)
{
	sigset_t old;

	signal_table__enter(&old);
	sigaddset(&ever_sampled, sig);
	signal_table__leave(&old);
}

/* Has sig carried samples at some time (its POLL_* deliveries are ours)? */
bool signal_table__ever_sampled(int sig)
{
	return sigismember(&ever_sampled, sig);
}

/*
 * SA_RESETHAND: the program's handler for sig ran once; its virtual
 * disposition becomes SIG_DFL (the kernel keeps the flags) unless the
 * program set another meanwhile.
 */
void signal_table__reset_handler(int sig, sighandler_t ran)
{
	sigset_t old;

	signal_table__enter(&old);
	if (virt[sig].sa_handler == ran)
		virt[sig].sa_handler = SIG_DFL;
	signal_table__leave(&old);
}

/* Register libc's sigaction (wrap/signals.c finds it), before any handler is installed. */
void signal_table__set_sigaction(int (*fn)(int, const struct sigaction *, struct sigaction *))
{
	__atomic_store_n(&real_sigaction, fn, __ATOMIC_RELEASE);
}

/* The real sigaction (-1 with ENOSYS before one is registered). */
int signal_table__sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int (*fn)(int, const struct sigaction *, struct sigaction *) =
	    __atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE);

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(sig, act, old);
}
