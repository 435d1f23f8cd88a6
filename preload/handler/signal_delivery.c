/* SPDX-License-Identifier: MIT */
/*
 * signal_delivery.c - a held signal reached one of our handlers: is it one
 * of our samples (or the kernel's SIGIO for our descriptors), or the
 * program's, and then what the program's disposition does with it (its
 * handler chained from ours, SIG_IGN, or the default action: die as the
 * program would, stop). Runs in signal handlers: everything here is
 * async-signal-safe. The dispositions are signal_table.c's (which
 * wrap/signals.c's wrappers keep), the shadow bit ap_shadow_signo (which
 * wrap/signal_masks.c's keep).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handler.h"

/* The kernel's SIGIOs for our descriptors, dropped. */
static unsigned long stray_sigios;

/*
 * Is this delivery one of our samples (or a late one, for a thread or a
 * number no longer sampled)? Our timers carry a magic value; perf events
 * signal readiness with si_code POLL_IN/POLL_HUP. Async-signal-safe.
 */
bool signal_delivery__is_sample(int sig, const siginfo_t *si)
{
	if (cputimer__is_ours(si))
		return true;
	return si->si_code >= POLL_IN && si->si_code <= POLL_HUP && signal_table__ever_sampled(sig);
}

/*
 * Is this SIGIO the kernel's, for one of our descriptors? When sampling is
 * (or was) on a real-time signal and the queue was full, the kernel sends a
 * plain SIGIO instead (fs/fcntl.c, send_sigio_to_task; si_code SI_KERNEL).
 * A program whose SIGIO is at SIG_DFL has no O_ASYNC descriptor of its own
 * (its first SIGIO would kill it), so that SIGIO is ours: counted, and
 * dropped. Async-signal-safe.
 */
bool signal_delivery__is_our_sigio(int sig, const siginfo_t *si)
{
	struct sigaction a;
	bool rt = false;

	if (sig != SIGIO || si->si_code != SI_KERNEL)
		return false;
	for (int s = SIGRTMIN; s <= SIGRTMAX && !rt; s++)
		rt = signal_table__ever_sampled(s);
	if (!rt || signal_table__read(SIGIO, &a) == AP_HOLD_NONE || a.sa_handler != SIG_DFL)
		return false;
	__atomic_fetch_add(&stray_sigios, 1, __ATOMIC_RELAXED);
	return true;
}

/* How many SIGIOs signal_delivery__is_our_sigio() dropped. */
unsigned long signal_delivery__stray_sigios(void)
{
	return __atomic_load_n(&stray_sigios, __ATOMIC_RELAXED);
}

/* What the kernel does by default with sig when it is not caught. */
enum dfl_action { DFL_TERM, DFL_IGN, DFL_STOP };

static enum dfl_action default_action(int sig)
{
	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
		return DFL_IGN;
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return DFL_STOP;
	default:
		return DFL_TERM;
	}
}

/*
 * Run the program's handler a for sig from inside ours, as the kernel would
 * have: its mask (the interrupted one, its sa_mask, sig itself unless
 * SA_NODEFER), SA_RESETHAND, SA_SIGINFO. Async-signal-safe.
 */
static void chain(int sig, siginfo_t *si, void *uc, const struct sigaction *a)
{
	ucontext_t *ctx = uc;
	sigset_t mask = ctx->uc_sigmask, saved;
	void (*fn)(int, siginfo_t *, void *) = a->sa_sigaction;
	void (*plain)(int) = a->sa_handler;
	int flags = a->sa_flags;

	if (flags & SA_RESETHAND)
		signal_table__reset_handler(sig, a->sa_handler);
	sigorset(&mask, &mask, &a->sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&mask, sig);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask, &saved, _NSIG / 8);
	if (flags & SA_SIGINFO)
		fn(sig, si, uc);
	else
		plain(sig);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
}

/* Threads that stepped aside for the program's own sampling signal (see below), and its number. */
static unsigned long stepped_aside;
static int stepped_signo;

/* How many threads stepped aside, and the number they stepped aside from (0: none). */
unsigned long signal_delivery__stepped_aside(int *signo)
{
	if (signo)
		*signo = __atomic_load_n(&stepped_signo, __ATOMIC_RELAXED);
	return __atomic_load_n(&stepped_aside, __ATOMIC_RELAXED);
}

/*
 * The program's own signal sig (not a sample) reached a thread on which the
 * program believes it blocked (the shadow bit): a program that blocks every
 * signal and reads them with signalfd or sigwait* sent it to itself. Give
 * it to the program as the kernel would have, pending and blocked: this
 * thread's sampler ends (its notifications would be read as the program's
 * signals otherwise), a notification of ours already pending is taken out,
 * the signal is blocked for real when the handler returns and queued again
 * with its siginfo. Counted, said at the end. False when the thread does
 * not believe it blocked. Async-signal-safe.
 */
static bool defer_to_program(int sig, siginfo_t *si, void *uc)
{
	pid_t pid = (pid_t)raw_syscall(SYS_getpid), tid = (pid_t)raw_syscall(SYS_gettid);
	struct timespec zero = {0, 0};
	siginfo_t again = *si, other[8];
	sigset_t one;
	int n = 0;

	if (ap_shadow_signo != sig)
		return false;
	if (sampler_arming__step_aside()) {
		__atomic_store_n(&stepped_signo, sig, __ATOMIC_RELAXED);
		__atomic_fetch_add(&stepped_aside, 1, __ATOMIC_RELAXED);
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	while (n < 8 && raw_syscall(SYS_rt_sigtimedwait, &one, &other[n], &zero, _NSIG / 8) > 0)
		if (!signal_delivery__is_sample(sig, &other[n]))
			n++; /* the program's: queued again after this one */
	sigaddset(&((ucontext_t *)uc)->uc_sigmask, sig);
	ap_shadow_signo = 0;
	/* Sent to this thread, or to the process (then to its shared queue,
	 * which only the main thread may fill with a kill()'s siginfo). */
	if (si->si_code != SI_TKILL && si->si_code >= 0 && tid != pid)
		again.si_code = SI_QUEUE;
	if (si->si_code == SI_TKILL)
		raw_syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &again);
	else if (raw_syscall(SYS_rt_sigqueueinfo, pid, sig, &again) < 0)
		raw_syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &again);
	for (int i = 0; i < n; i++)
		raw_syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &other[i]);
	return true;
}

/*
 * A held signal that is not a sample reached one of our handlers: give it
 * the program's disposition. errno is the interrupted code's on entry and
 * on return (the program's handler sees it as the kernel would leave it).
 * Async-signal-safe.
 */
void signal_delivery__deliver(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;

	if (signal_table__holder(sig) == AP_HOLD_SAMPLE && defer_to_program(sig, si, uc))
		return;
	signal_table__read(sig, &a);
	if (a.sa_handler == SIG_IGN)
		return;
	if (a.sa_handler != SIG_DFL) {
		chain(sig, si, uc, &a);
		return;
	}
	switch (default_action(sig)) {
	case DFL_IGN:
		return;
	case DFL_STOP:
		/* The stop is the kernel's; only the stop signal's number differs. */
		raw_syscall(SYS_tgkill, raw_syscall(SYS_getpid), raw_syscall(SYS_gettid), SIGSTOP);
		return;
	case DFL_TERM:
		sigdelset(&((ucontext_t *)uc)->uc_sigmask, sig);
		fatal__die(sig, si);
		return;
	}
}
