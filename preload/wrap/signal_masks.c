/* SPDX-License-Identifier: MIT */
/*
 * signal_masks.c - the program's signal masks and waits: sigprocmask and
 * pthread_sigmask never block the sampling signal in the kernel for a broad
 * set, while the program reads it back blocked (the thread's shadow bit);
 * a set naming the sampling signal, and sigwait, sigwaitinfo, sigtimedwait
 * and signalfd on it, move sampling away first (signals.c); the mask the
 * program believes it has is the one an exec'd image inherits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "signals.h"

typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);
typedef int (*signalfd_fn)(int, const sigset_t *, int);

static sigmask_fn real_sigprocmask, real_pthread_sigmask;
static sigtimedwait_fn real_sigtimedwait;
static signalfd_fn real_signalfd;

/* The sampling signal the program believes blocked on this thread (0: none). */

/* Find the real functions (idempotent: dlsym finds the same each time). Not async-signal-safe. */
static void resolve(void)
{
	static const struct {
		const char *name;
		void **fn;
	} reals[] = {
	    {"sigprocmask", (void **)&real_sigprocmask},
	    {"pthread_sigmask", (void **)&real_pthread_sigmask},
	    {"sigtimedwait", (void **)&real_sigtimedwait},
	    {"signalfd", (void **)&real_signalfd},
	};

	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		if (!__atomic_load_n(reals[i].fn, __ATOMIC_ACQUIRE))
			__atomic_store_n(reals[i].fn, dlsym(RTLD_NEXT, reals[i].name),
					 __ATOMIC_RELEASE);
}

void signal_masks__init(void)
{
	resolve();
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

/*
 * The program's sigprocmask/pthread_sigmask (next): the kernel never gets
 * the sampling signal in a broad set; the thread's shadow bit remembers that
 * the program blocked it, and the old set read back shows it. Returns what
 * next returns.
 */
static int program_mask(sigmask_fn next, int how, const sigset_t *set, sigset_t *old, void *caller)
{
	int signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE);
	bool stripped = false, named;
	const sigset_t *use = set;
	sigset_t copy;
	int shadow = ap_shadow_signo, ret;

	if (signal_table__holder(signo) != AP_HOLD_SAMPLE ||
	    unwind__is_profiler_pc((uintptr_t)caller))
		return next(how, set, old);
	named = set && sigismember(set, signo);
	/* Only a call that changes our state needs to know it is not in a vfork
	 * child (a system call); reading the shadow bit back is right in one too. */
	if ((named || (set && how == SIG_SETMASK && shadow)) && signals__foreign())
		return next(how, set, old);
	if (set && how != SIG_UNBLOCK && named) {
		use = signals__program_set(set, &copy, &stripped);
		signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE);
	}
	ret = next(how, use, old);
	if (ret != 0)
		return ret;
	if (old && shadow && shadow == signo)
		sigaddset(old, signo);
	if (!set)
		return ret;
	if (how == SIG_SETMASK)
		ap_shadow_signo = stripped ? signo : 0;
	else if (how == SIG_BLOCK && stripped)
		ap_shadow_signo = signo;
	else if (how == SIG_UNBLOCK && named)
		ap_shadow_signo = 0;
	return ret;
}

AP_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (redundant_in_handler(old, __builtin_return_address(0)))
		return 0;
	if (!real_sigprocmask)
		resolve();
	if (!real_sigprocmask) {
		errno = ENOSYS;
		return -1;
	}
	return program_mask(real_sigprocmask, how, set, old, __builtin_return_address(0));
}

AP_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (redundant_in_handler(old, __builtin_return_address(0)))
		return 0;
	if (!real_pthread_sigmask)
		resolve();
	if (!real_pthread_sigmask)
		return ENOSYS;
	return program_mask(real_pthread_sigmask, how, set, old, __builtin_return_address(0));
}

/*
 * At the first install on the starting thread: an image exec'd with the
 * sampling signal blocked (the program blocked it, or a broad set, before
 * exec) keeps it blocked in its own view only. Not async-signal-safe.
 */
void signal_masks__adopt(int signo)
{
	sigset_t cur, one;

	if (signals__sigmask(SIG_BLOCK, NULL, &cur) || !sigismember(&cur, signo))
		return;
	sigemptyset(&one);
	sigaddset(&one, signo);
	signals__sigmask(SIG_UNBLOCK, &one, NULL);
	ap_shadow_signo = signo;
}

/* The calling thread's shadow bit, for a thread it creates (threads.c). */
int signal_masks__shadow(void)
{
	return ap_shadow_signo;
}

void signal_masks__set_shadow(int signo)
{
	ap_shadow_signo = signo;
}

/*
 * Before a real exec: the next image inherits the mask the program believes
 * it has (the shadow bit becomes a real block); after a failed exec the
 * kernel mask goes back. Works in a vfork child (only its own mask changes).
 * Async-signal-safe.
 */
void signal_masks__before_exec(sigset_t *saved)
{
	sigset_t add;

	signals__sigmask(SIG_BLOCK, NULL, saved);
	if (!ap_shadow_signo)
		return;
	sigemptyset(&add);
	sigaddset(&add, ap_shadow_signo);
	signals__sigmask(SIG_BLOCK, &add, NULL);
}

void signal_masks__exec_failed(const sigset_t *saved)
{
	signals__sigmask(SIG_SETMASK, saved, NULL);
}

/*
 * A wait set of the program (sigwait & co, signalfd): a specific one naming
 * the sampling signal moves sampling away (signals__program_set()); a broad one is
 * passed whole (see program_wait() and signalfd()).
 */
static const sigset_t *wait_set(const sigset_t *set, sigset_t *copy)
{
	bool stripped;

	if (signals__foreign() || !set || signals__broad(set))
		return set;
	return signals__program_set(set, copy, &stripped);
}

/*
 * A wait of the program for the signals of set (sigwait & co), with the
 * sampling signal left in a broad set: the program may send it to itself
 * (signals.c's defer_to_program() makes it pending); a notification of
 * ours that the wait took instead is dropped and the wait goes on (until
 * the deadline, for a timed wait). Returns what sigtimedwait returns.
 */
static int program_wait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	sigset_t copy;
	siginfo_t mine;
	const sigset_t *use = wait_set(set, &copy);
	struct timespec now, end = {0, 0}, left;
	int sig;

	if (!info)
		info = &mine;
	if (timeout) {
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += timeout->tv_sec;
		end.tv_nsec += timeout->tv_nsec;
		if (end.tv_nsec >= 1000000000L) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000L;
		}
	}
	for (;;) {
		if (timeout) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = end.tv_sec - now.tv_sec;
			left.tv_nsec = end.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
			if (left.tv_sec < 0)
				left.tv_sec = left.tv_nsec = 0;
		}
		sig = real_sigtimedwait(use, info, timeout ? &left : NULL);
		if (sig <= 0 || signals__foreign() || signal_table__holder(sig) != AP_HOLD_SAMPLE ||
		    !signal_delivery__is_sample(sig, info))
			return sig;
	}
}

AP_API int sigwait(const sigset_t *set, int *sig)
{
	int got;

	if (!real_sigtimedwait)
		resolve();
	if (!real_sigtimedwait)
		return ENOSYS;
	do
		got = program_wait(set, NULL, NULL);
	while (got < 0 && errno == EINTR); /* sigwait does not fail with EINTR */
	if (got < 0)
		return errno;
	*sig = got;
	return 0;
}

AP_API int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	return sigtimedwait(set, info, NULL); /* as glibc's: no timeout */
}

AP_API int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	if (!real_sigtimedwait)
		resolve();
	if (!real_sigtimedwait) {
		errno = ENOSYS;
		return -1;
	}
	return program_wait(set, info, timeout);
}

/*
 * signalfd: a broad mask keeps the sampling signal (the program may send it
 * to itself, defer_to_program()): our notifications are delivered to our
 * handler as soon as they are raised (user time only: the thread never
 * reaches a read of the fd with one pending), so the fd reads the program's.
 */
AP_API int signalfd(int fd, const sigset_t *mask, int flags)
{
	sigset_t copy;

	if (!real_signalfd)
		resolve();
	if (!real_signalfd) {
		errno = ENOSYS;
		return -1;
	}
	return real_signalfd(fd, wait_set(mask, &copy), flags);
}
