/* SPDX-License-Identifier: MIT */
/*
 * fatal.c - the signals that end a program at their default action: finish
 * the file, put the default action back and let the signal do what it would
 * have done, so the exit status, the core dump and the shell's view of the
 * death are unchanged.
 *
 * Every signal whose default action terminates the process (with or without
 * a core) is taken while it is at SIG_DFL, and the program still reads it as
 * SIG_DFL (signals.c keeps its view); a handler or SIG_IGN the program sets
 * gives the signal back to it, and the program's own exit path (exit, _exit)
 * then finishes the file. SIGKILL cannot be caught: the file on disk is
 * readable up to the last flush at every moment anyway.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handler.h"

/* What finishes the file (session/lifecycle.c's emergency stop), or NULL. */
static void (*emergency_stop)(void);

/* Register stop, before the handlers are installed. Not async-signal-safe. */
void fatal__set_stop(void (*stop)(void))
{
	__atomic_store_n(&emergency_stop, stop, __ATOMIC_RELEASE);
}

/* Faults the kernel raises at an instruction: returning re-runs it. */
static bool is_fault(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) &&
	       si->si_code > 0;
}

/*
 * Die of sig as the program would have: finish the file (records and
 * features; nothing is printed), put SIG_DFL back and send the signal again
 * with the same siginfo, to arrive as soon as the handler returns. A fault
 * needs no sending: its instruction runs again. Async-signal-safe.
 */
void fatal__die(int sig, siginfo_t *si)
{
	struct sigaction dfl;
	pid_t pid = (pid_t)raw_syscall(SYS_getpid), tid = (pid_t)raw_syscall(SYS_gettid);
	void (*stop)(void) = __atomic_load_n(&emergency_stop, __ATOMIC_ACQUIRE);

	if (stop)
		stop();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	signal_table__sigaction(sig, &dfl, NULL);
	if (is_fault(sig, si))
		return;
	if (raw_syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) < 0)
		raw_syscall(SYS_tgkill, pid, tid, sig);
}

/* A held signal arrived: a late sample is dropped, anything else is the program's. */
void fatal__on_deadly(int sig, siginfo_t *si, void *ucontext)
{
	int saved = errno;

	if (!signal_delivery__is_our_sigio(sig, si) && !signal_delivery__is_sample(sig, si))
		signal_delivery__deliver(sig, si, ucontext);
	errno = saved;
}
