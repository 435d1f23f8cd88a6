/* SPDX-License-Identifier: MIT */
/*
 * signals.c - the program and the profiler share signals without noticing.
 *
 *  - sigprocmask/pthread_sigmask: the sampling signal is never blocked by the
 *    program (a thread that blocks "all signals" would otherwise pile up one
 *    queued real-time signal per sample, and its samples would wait in the
 *    ring until it unblocks);
 *  - sigaction/signal: a program that installs a handler for the sampling
 *    signal gets it: the profiler moves to a free real-time signal first, with
 *    one line saying so, and both keep working.
 *  - libunwind's calls while we unwind in the sampling handler are skipped:
 *    the handler's mask blocks every asynchronous signal already.
 * The library's own calls go around these wrappers: ap_sigaction, ap_sigmask.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define AP_API __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static sigaction_fn real_sigaction;
static pthread_mutex_t move_lock = PTHREAD_MUTEX_INITIALIZER;

/* Resolve the real functions once, outside any handler. Not async-signal-safe. */
void signals__init(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
}

/* The real sigaction. Async-signal-safe once signals__init() has run. */
int ap_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!real_sigaction)
		signals__init();
	return real_sigaction ? real_sigaction(sig, act, old) : -1;
}

/* The calling thread's signal mask, past the wrappers. Returns 0 or -errno. Async-signal-safe. */
int ap_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) < 0 ? -errno : 0;
}

/*
 * Block the sampling signal on the calling thread (around the library's own
 * writes from normal context, so its handler cannot run in the middle);
 * ap_sigmask(SIG_SETMASK, old, NULL) undoes it. Async-signal-safe.
 */
void ap_block_sampling(sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, autoprof.cfg.signo);
	ap_sigmask(SIG_BLOCK, &block, old);
}

/*
 * set, less the sampling signal, in copy; returns the set to use. Only the
 * program's calls are changed: libunwind blocks every signal around its
 * cache lock and restores the handler's mask after, and both must stand, or
 * a sample could interrupt libunwind on its own thread and deadlock on that
 * lock.
 */
static const sigset_t *without_ours(int how, const sigset_t *set, sigset_t *copy, void *caller)
{
	int signo = __atomic_load_n(&autoprof.cfg.signo, __ATOMIC_RELAXED);

	if (!set || how == SIG_UNBLOCK || !__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) ||
	    signo <= 0 || !sigismember(set, signo) || unwind__is_profiler_pc((uintptr_t)caller))
		return set;
	*copy = *set;
	sigdelset(copy, signo);
	return copy;
}

/*
 * Is this libunwind blocking signals around its cache lock while we unwind
 * in the sampling handler? Then the call is a no-op (the handler's mask
 * blocks them all), and *old gets a full set for the matching restore.
 * Async-signal-safe.
 */
static bool redundant_in_handler(sigset_t *old, void *caller)
{
	if (!unwind__in_handler() || !unwind__owns_pc((uintptr_t)caller))
		return false;
	if (old)
		sigfillset(old);
	return true;
}

AP_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	static sigmask_fn next;
	sigset_t copy;

	if (redundant_in_handler(old, __builtin_return_address(0)))
		return 0;

	if (!next)
		next = (sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(how, without_ours(how, set, &copy, __builtin_return_address(0)), old);
}

AP_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	static sigmask_fn next;
	sigset_t copy;

	if (redundant_in_handler(old, __builtin_return_address(0)))
		return 0;

	if (!next)
		next = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	if (!next)
		return ENOSYS;
	return next(how, without_ours(how, set, &copy, __builtin_return_address(0)), old);
}

/*
 * The program wants the sampling signal: move sampling to a free real-time
 * signal (one still at SIG_DFL), then let the program have its own.
 * Not async-signal-safe.
 */
static void move_if_ours(int sig)
{
	int from = autoprof.cfg.signo;

	if (sig != from || !__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&move_lock);
	for (int to = SIGRTMAX - 1; to >= SIGRTMIN && autoprof.cfg.signo == from; to--) {
		struct sigaction cur;

		if (to == from || ap_sigaction(to, NULL, &cur) < 0 || (cur.sa_flags & SA_SIGINFO) ||
		    cur.sa_handler != SIG_DFL)
			continue;
		if (sample__install(to))
			continue;
		__atomic_store_n(&autoprof.cfg.signo, to, __ATOMIC_RELEASE);
		thread__reroute(to);
		pr_warn("the program handles signal %d itself; profiling moves to signal %d", from,
			to);
	}
	pthread_mutex_unlock(&move_lock);
}

AP_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (act)
		move_if_ours(sig);
	return ap_sigaction(sig, act, old);
}

AP_API sighandler_t signal(int sig, sighandler_t handler)
{
	static signal_fn next;

	move_if_ours(sig);
	if (!next)
		next = (signal_fn)dlsym(RTLD_NEXT, "signal");
	if (!next) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return next(sig, handler);
}
