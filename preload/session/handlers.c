/* SPDX-License-Identifier: MIT */
/*
 * handlers.c - installing the handler layer's two handlers: the sampling
 * signal's (handler/on_signal.c) and the deadly signals' (handler/fatal.c),
 * through signals.c, which keeps the program's view of every signal we hold.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "internal.h"

static int installed_signo;

/*
 * Install the overflow handler for signo, unless the program already handles
 * that signal (signals.c keeps the program's view of it). Returns 0 or
 * -EBUSY / -errno. Not async-signal-safe.
 */
int handlers__install_sample(int signo)
{
	struct sigaction sa;
	int err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal__handle;
	/* SA_ONSTACK: never run on a stack the program did not mean for signals
	 * (Go runs C code on small goroutine stacks and aborts otherwise). */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	/* Every asynchronous signal waits the few microseconds the handler takes:
	 * a Ctrl-C until this thread's buffer is whole, and a program's handler
	 * that unwinds with libunwind until we release its cache lock. This is
	 * what libunwind's own sigprocmask calls would do, at no cost: the
	 * kernel sets the mask as it delivers the signal. Faults stay deliverable. */
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	sigdelset(&sa.sa_mask, SIGILL);
	sigdelset(&sa.sa_mask, SIGFPE);
	sigdelset(&sa.sa_mask, SIGTRAP);
	sigdelset(&sa.sa_mask, SIGSYS);
	signal_table__note_sampling(signo);
	err = signals__hold(signo, AP_HOLD_SAMPLE, &sa);
	if (err)
		return err;
	if (!installed_signo)
		signal_masks__adopt(signo);
	installed_signo = signo;
	return 0;
}

/* Put back the disposition the program had. Not async-signal-safe. */
void handlers__uninstall_sample(void)
{
	if (installed_signo)
		signals__release(installed_signo);
	installed_signo = 0;
}

/* The classic signals whose default action ends the process; plus the real-time ones. */
static const int deadly[] = {SIGINT,  SIGTERM, SIGHUP,	  SIGQUIT,  SIGSEGV, SIGABRT,
			     SIGBUS,  SIGFPE,  SIGILL,	  SIGPIPE,  SIGALRM, SIGUSR1,
			     SIGUSR2, SIGPROF, SIGVTALRM, SIGXCPU,  SIGXFSZ, SIGSYS,
			     SIGTRAP, SIGIO,   SIGPWR,	  SIGSTKFLT};
#define NR_DEADLY (int)(sizeof(deadly) / sizeof(deadly[0]))

/* The deadly handler's disposition. */
static void fatal_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = fatal__on_deadly;
	sa->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigfillset(&sa->sa_mask); /* nothing else runs on this thread meanwhile */
}

/* Does sig's default action leave the program running (or can it not be caught)? */
static bool harmless(int sig)
{
	return sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGCONT ||
	       sig == SIGURG || sig == SIGWINCH || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/*
 * The deadly handler's disposition for sig, in sa; false (nothing to hold) when sig's default
 * action does not end the program.
 */
bool handlers__fatal_for(int sig, struct sigaction *sa)
{
	if (harmless(sig))
		return false;
	fatal_action(sa);
	return true;
}

/* Take sig with the deadly handler, keeping the program's view. Not async-signal-safe. */
void handlers__take_fatal(int sig)
{
	struct sigaction sa;

	if (handlers__fatal_for(sig, &sa))
		signals__hold(sig, AP_HOLD_FATAL, &sa);
}

/*
 * Take every deadly signal that is still at its default action, the
 * real-time ones too (except the sampling signal), in one pass over the
 * signal table. Not async-signal-safe.
 */
void handlers__install_fatal(void)
{
	int sigs[NR_DEADLY + 64], n = 0;
	struct sigaction sa;

	for (int i = 0; i < NR_DEADLY; i++)
		if (deadly[i] != autoprof.signo && signal_table__holder(deadly[i]) == AP_HOLD_NONE)
			sigs[n++] = deadly[i];
	for (int sig = SIGRTMIN; sig <= SIGRTMAX && n < (int)(sizeof(sigs) / sizeof(sigs[0]));
	     sig++)
		if (sig != autoprof.signo && signal_table__holder(sig) == AP_HOLD_NONE)
			sigs[n++] = sig;
	fatal_action(&sa);
	signals__hold_all(sigs, n, AP_HOLD_FATAL, &sa);
}
