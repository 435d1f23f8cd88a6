/* SPDX-License-Identifier: MIT */
/*
 * signals.c - the program and the profiler share signals without noticing.
 *
 * The library holds some signals: the sampling signal (handler/on_signal.c) and the
 * signals whose default action ends the program (fatal.c). For a held
 * signal the kernel has our handler, and this file keeps the program's view
 * (in handler/signal_table.c, which the handlers read), the "virtual"
 * disposition: what the program set, or what the kernel had before we came
 * (SIG_DFL). The wrappers here (the dispositions), in
 * signal_masks.c (masks and waits) and handler/signal_delivery.c (a held signal in
 * our handler) show the program only that:
 *
 *  - sigaction/signal/bsd_signal/sysv_signal/siginterrupt: a held signal reads
 *    back as its virtual disposition. Setting SIG_DFL keeps our handler;
 *    setting a handler or SIG_IGN on a deadly signal gives the signal to the
 *    program; on the sampling signal it moves sampling to a free real-time
 *    signal first, or, when none is free (a Go runtime takes them all), keeps
 *    our handler and calls the program's from it (chaining, handler/signal_delivery.c).
 *  - a held signal that is not one of our samples (sent by kill, sigqueue,
 *    raise, a timer of the program...) gets the virtual disposition: SIG_DFL
 *    kills the program by that very signal after the file is finished,
 *    SIG_IGN drops it, a handler runs.
 *  - sigprocmask/pthread_sigmask: the kernel mask never holds the sampling
 *    signal when the program blocks a broad set (a thread blocking "all
 *    signals" would otherwise queue a real-time signal per sample); the
 *    program reads it back blocked all the same (a per-thread shadow bit).
 *    A set that names the sampling signal specifically (not a broad set),
 *    and sigwait/sigwaitinfo/sigtimedwait/signalfd on such a set, mean the
 *    program wants that number: sampling moves away first.
 *  - in a process that is not the session's (a vfork child, which shares our
 *    memory: Python's subprocess, posix_spawn, gdb), every wrapper is the
 *    plain real call and touches nothing of ours.
 *
 * Residual differences (documented in doc/limits.md):
 *  - a chained handler runs inside ours: SA_RESTART is ours (the kernel
 *    restarts system calls as our handler asks), the program's SA_ONSTACK is
 *    ours (we always ask for the alternate stack), and the kernel sees ours;
 *  - after sampling moved, samples already queued under the old number reach
 *    the program's new handler (at most one per thread), and a thread whose
 *    shadow bit blocked the old number has it unblocked in the kernel;
 *  - a program that routes its own fd's readiness to the sampling signal with
 *    F_SETSIG gets those signals dropped as samples (si_code POLL_*).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "signals.h"

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);
typedef int (*siginterrupt_fn)(int, int);

static sigaction_fn real_sigaction;
static signal_fn real_signal, real_sysv_signal;
static siginterrupt_fn real_siginterrupt;

/* The held signals (who holds each, the program's view of it) are handler/signal_table.c's. */
static void *restorer;	      /* glibc's sa_restorer, as the kernel reports it */
static sigset_t interest;     /* numbers the program showed it wants */
static sigset_t interrupting; /* siginterrupt(sig, 1): signal() without SA_RESTART */
static pid_t session_pid;     /* the process whose memory this is (not a vfork child's) */
static pthread_mutex_t move_lock = PTHREAD_MUTEX_INITIALIZER;

/* In a forked child the memory is its own: it is the session's process now. */
static void on_fork_child(void)
{
	session_pid = (pid_t)raw_syscall(SYS_getpid);
}

/*
 * Find the real functions (idempotent: it only stores what dlsym finds, the
 * same in a vfork child). Not async-signal-safe.
 */
static void resolve(void)
{
	if (__atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE))
		return;
	real_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
	real_sysv_signal = (signal_fn)dlsym(RTLD_NEXT, "sysv_signal");
	real_siginterrupt = (siginterrupt_fn)dlsym(RTLD_NEXT, "siginterrupt");
	__atomic_store_n(&real_sigaction, (sigaction_fn)dlsym(RTLD_NEXT, "sigaction"),
			 __ATOMIC_RELEASE);
	signal_table__set_sigaction(real_sigaction); /* the handlers' (fatal.c's) */
}

/*
 * At the session's start: this process owns the table; a forked child owns
 * its copy. Not async-signal-safe.
 */
void signals__init(void)
{
	static bool registered;

	session_pid = (pid_t)raw_syscall(SYS_getpid);
	if (!registered && ap_atfork(NULL, NULL, on_fork_child) == 0)
		registered = true;
	resolve();
	signal_masks__init();
}

/*
 * Is the caller outside the session's process, i.e. a vfork child sharing
 * our memory (or nothing was set up)? Then wrappers make the plain call.
 * The raw system call: no pid cache can lie. Async-signal-safe.
 */
bool signals__foreign(void)
{
	return !session_pid || (pid_t)raw_syscall(SYS_getpid) != session_pid;
}

/* The real sigaction. Async-signal-safe once signals__init() has run. */
int signals__sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn fn = __atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE);

	if (!fn) {
		resolve();
		fn = real_sigaction;
	}
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(sig, act, old);
}

/* The calling thread's signal mask, past the wrappers. Returns 0 or -errno. Async-signal-safe. */
int signals__sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return raw_syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) < 0 ? -errno : 0;
}

/*
 * Block the sampling signal on the calling thread (around the library's own
 * writes from normal context, so its handler cannot run in the middle);
 * signals__sigmask(SIG_SETMASK, old, NULL) undoes it. Async-signal-safe.
 */
void signals__block_sampling(sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, autoprof.signo);
	signals__sigmask(SIG_BLOCK, &block, old);
}

/*
 * What sigaction() hands back for a disposition: as glibc's does from the
 * kernel's (handler, flags, restorer, the kernel's 64 bits of mask; the
 * rest of *old untouched).
 */
static void put_old(struct sigaction *old, const struct sigaction *v)
{
	old->sa_handler = v->sa_handler;
	old->sa_flags = v->sa_flags;
	old->sa_restorer = v->sa_restorer;
	memcpy(&old->sa_mask, &v->sa_mask, _NSIG / 8);
}

/* act as the kernel would store it (and report it back). */
static void normalize(struct sigaction *v, const struct sigaction *act)
{
	*v = *act;
	v->sa_flags |= SA_RESTORER;
	v->sa_restorer = (void (*)(void))restorer;
	sigdelset(&v->sa_mask, SIGKILL);
	sigdelset(&v->sa_mask, SIGSTOP);
}

/*
 * Hold sig for `who` with our handler `ours`. A signal nobody holds is taken
 * only at SIG_DFL (or SIG_IGN, by the sampler only: an ignored deadly signal
 * must stay ignored across exec); its disposition becomes the virtual one; one
 * held already changes holder and keeps the program's view. Returns 0,
 * -EBUSY (the program handles it) or -errno. Not async-signal-safe.
 */
static int hold_locked(int sig, int who, const struct sigaction *ours)
{
	struct sigaction cur, back;
	int err = 0;

	if (sig <= 0 || sig >= _NSIG || sig == SIGKILL || sig == SIGSTOP)
		return -EINVAL;
	if (signal_table__holder(sig) == AP_HOLD_NONE) {
		if (signals__sigaction(sig, NULL, &cur) < 0)
			err = -errno;
		else if (cur.sa_handler != SIG_DFL &&
			 (cur.sa_handler != SIG_IGN || who == AP_HOLD_FATAL))
			err = -EBUSY; /* handled, or ignored, which exec must pass on */
		else
			*signal_table__virt(sig) = cur;
	}
	if (!err && signals__sigaction(sig, ours, NULL) < 0)
		err = -errno;
	if (!err) {
		signal_table__set_holder(sig, who);
		if (!restorer && signals__sigaction(sig, NULL, &back) == 0)
			restorer = (void *)back.sa_restorer;
	}
	return err;
}

int signals__hold(int sig, int who, const struct sigaction *ours)
{
	sigset_t old;
	int err;

	signal_table__enter(&old);
	err = hold_locked(sig, who, ours);
	signal_table__leave(&old);
	return err;
}

/*
 * signals__hold() for each of the n signals in sigs, the table taken once.
 * A signal nobody holds is read first and written only at SIG_DFL: an
 * exchange in one call would put an inherited SIG_IGN (nohup, sh background
 * jobs) or a handler with its own restorer back through glibc, which adds
 * SA_RESTORER and its restorer, and ignored signals would reach our handler
 * meanwhile. Not async-signal-safe.
 */
void signals__hold_all(const int *sigs, int n, int who, const struct sigaction *ours)
{
	sigset_t old;

	signal_table__enter(&old);
	for (int i = 0; i < n; i++) {
		hold_locked(sigs[i], who, ours);
	}
	signal_table__leave(&old);
}

/* Give sig back to the program with its virtual disposition. Not async-signal-safe. */
void signals__release(int sig)
{
	sigset_t old;

	if (sig <= 0 || sig >= _NSIG)
		return;
	signal_table__enter(&old);
	if (signal_table__holder(sig) != AP_HOLD_NONE) {
		signals__sigaction(sig, signal_table__virt(sig), NULL);
		signal_table__set_holder(sig, AP_HOLD_NONE);
	}
	signal_table__leave(&old);
}

/* Is sig free to carry samples: at SIG_DFL for the program, and never wanted by it? */
static bool free_for_sampling(int sig)
{
	struct sigaction cur;
	int who = signal_table__read(sig, &cur);

	if (who == AP_HOLD_SAMPLE || sigismember(&interest, sig))
		return false;
	if (who == AP_HOLD_NONE && signals__sigaction(sig, NULL, &cur) < 0)
		return false;
	return !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
}

/* The i-th signal sampling may move to (0 when there are no more). */
static int move_target(int i)
{
	static const int standard[] = {SIGPROF, SIGVTALRM};
	int n = (int)(sizeof(standard) / sizeof(standard[0]));

	if (i < n)
		return standard[i];
	return SIGRTMAX - (i - n) >= SIGRTMIN ? SIGRTMAX - (i - n) : 0;
}

/*
 * The program wants the sampling signal `from`: move sampling to a free
 * signal (move_target()); `from` stays held by fatal.c at the program's virtual
 * disposition (the caller then changes that as the program asked).
 * Returns true when sampling is no longer on `from`. Not async-signal-safe.
 */
static bool move_sampling(int from)
{
	bool moved = false;

	if (from != __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE) ||
	    signal_table__holder(from) != AP_HOLD_SAMPLE)
		return true;
	pthread_mutex_lock(&move_lock);
	/* Standard signals first (SIGPROF, then SIGVTALRM): pending at most once
	 * per thread, they cannot fill the real-time queue, and debuggers pass
	 * them silently; then the real-time ones, from the top. */
	for (int i = 0, to; (to = move_target(i)) && !moved; i++) {
		if (to == from || !free_for_sampling(to) || handlers__install_sample(to))
			continue;
		__atomic_store_n(&autoprof.signo, to, __ATOMIC_RELEASE);
		process_events__reroute(to);
		handlers__take_fatal(from);
		moved = true;
		pr_warn("the program handles signal %d itself; profiling moves to signal %d", from,
			to);
	}
	if (!moved) {
		static int said;

		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			pr_info("the program uses signal %d and no other signal is free; "
				"its handler runs from ours",
				from);
	}
	pthread_mutex_unlock(&move_lock);
	return moved;
}

/* Does set hold every real-time signal (a broad set, not a choice of ours)? */
bool signals__broad(const sigset_t *set)
{
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		if (!sigismember(set, s))
			return false;
	return true;
}

/* The program named these signals specifically: keep sampling off them. */
static void note_interest(const sigset_t *set)
{
	sigset_t old;

	signal_table__enter(&old);
	for (int s = 1; s < _NSIG; s++)
		if (sigismember(set, s))
			sigaddset(&interest, s);
	signal_table__leave(&old);
}

/*
 * A set the program passes to block or wait for signals: a specific one
 * naming the sampling signal moves sampling away (the number is the
 * program's); a broad one gets the sampling signal taken out, in copy.
 * Returns the set to pass on and sets *stripped. Not async-signal-safe.
 */
const sigset_t *signals__program_set(const sigset_t *set, sigset_t *copy, bool *stripped)
{
	int signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE);

	*stripped = false;
	if (!set || signal_table__holder(signo) != AP_HOLD_SAMPLE || !sigismember(set, signo))
		return set;
	if (!signals__broad(set)) {
		note_interest(set);
		if (move_sampling(signo))
			return set;
	}
	*copy = *set;
	sigdelset(copy, signo);
	*stripped = true;
	return copy;
}

/*
 * The program sets sig, which nobody holds (it had it, or ignored it). Back to SIG_DFL, a
 * deadly signal is held again at once, the program's view SIG_DFL: while the session is on
 * (its death finishes the file), and always on a number that ever carried samples, where one
 * queued before sampling moved may still arrive (at the kernel's SIG_DFL, even for a moment,
 * it killed the program: 7 of 30 runs flipping SIGVTALRM to SIG_IGN and back). The table is
 * the caller's. Returns 0 or -1 with errno, as sigaction.
 */
static int set_unheld(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction ours;

	if (act->sa_handler != SIG_DFL ||
	    !(__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) ||
	      signal_table__ever_sampled(sig)) ||
	    !handlers__fatal_for(sig, &ours) || (old && signals__sigaction(sig, NULL, old) < 0))
		return signals__sigaction(sig, act, old);
	normalize(signal_table__virt(sig), act);
	if (signals__sigaction(sig, &ours, NULL) < 0)
		return signals__sigaction(sig, act, NULL);
	signal_table__set_holder(sig, AP_HOLD_FATAL);
	return 0;
}

AP_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;
	sigset_t mask;
	int ret = 0;

	if (sig <= 0 || sig >= _NSIG || (act && signals__foreign()))
		return signals__sigaction(sig, act, old);
	if (!act) {
		/* A read: no lock. A vfork child reads its own table (it may have
		 * changed it with the plain calls it makes). */
		if (signal_table__read(sig, &prev) == AP_HOLD_NONE || signals__foreign())
			return signals__sigaction(sig, NULL, old);
		if (old)
			put_old(old, &prev);
		return 0;
	}
	if (act->sa_handler != SIG_DFL && signal_table__holder(sig) == AP_HOLD_SAMPLE) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, sig);
		note_interest(&one);
		move_sampling(sig);
	}
	signal_table__enter(&mask);
	switch (signal_table__holder(sig)) {
	case AP_HOLD_NONE:
		ret = set_unheld(sig, act, old);
		break;
	case AP_HOLD_FATAL:
		prev = *signal_table__virt(sig);
		if (act && act->sa_handler != SIG_DFL) {
			ret = signals__sigaction(sig, act, NULL);
			if (ret == 0)
				signal_table__set_holder(sig, AP_HOLD_NONE);
		} else if (act) {
			normalize(signal_table__virt(sig), act);
		}
		if (ret == 0 && old)
			put_old(old, &prev);
		break;
	case AP_HOLD_SAMPLE:
		/* Still ours: SIG_DFL, or no free signal to move to (chaining). */
		prev = *signal_table__virt(sig);
		if (act)
			normalize(signal_table__virt(sig), act);
		if (old)
			put_old(old, &prev);
		break;
	}
	signal_table__leave(&mask);
	return ret;
}

/* signal() and friends, through our sigaction: as glibc builds them. */
static sighandler_t set_handler(int sig, sighandler_t handler, int flags, bool mask_self)
{
	struct sigaction act, old;

	if (handler == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (mask_self)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

AP_API sighandler_t signal(int sig, sighandler_t handler)
{
	if (signals__foreign() && real_signal)
		return real_signal(sig, handler);
	return set_handler(
	    sig, handler,
	    sig > 0 && sig < _NSIG && sigismember(&interrupting, sig) ? 0 : SA_RESTART, true);
}

AP_API sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

AP_API sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (signals__foreign() && real_sysv_signal)
		return real_sysv_signal(sig, handler);
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}

AP_API sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return sysv_signal(sig, handler);
}

AP_API int siginterrupt(int sig, int flag)
{
	struct sigaction act;

	if (signals__foreign() && real_siginterrupt)
		return real_siginterrupt(sig, flag);
	if (sigaction(sig, NULL, &act) < 0)
		return -1;
	if (flag) {
		sigaddset(&interrupting, sig);
		act.sa_flags &= ~SA_RESTART;
	} else {
		sigdelset(&interrupting, sig);
		act.sa_flags |= SA_RESTART;
	}
	return sigaction(sig, &act, NULL);
}
