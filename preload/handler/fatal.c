/* SPDX-License-Identifier: MIT */
/*
 * fatal.c - the signals that end a program at their default action: finish
 * the file, put the default action back and let the signal do what it would
 * have done, so the exit status, the core dump and the shell's view of the
 * death are unchanged.
 *
 * Only signals still at SIG_DFL when profiling starts are taken; a handler
 * the program installs later replaces ours, and the program's own exit path
 * (exit, _exit) then finishes the file. SIGKILL cannot be caught: the file on
 * disk is readable up to the last flush at every moment anyway.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static const int deadly[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGSEGV,
			     SIGABRT, SIGBUS,  SIGFPE,  SIGILL};
#define NR_DEADLY (int)(sizeof(deadly) / sizeof(deadly[0]))

static bool taken[NR_DEADLY];

/* Faults the kernel raises at an instruction: returning re-runs it. */
static bool is_fault(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) &&
	       si->si_code > 0;
}

static void on_deadly(int sig, siginfo_t *si, void *ucontext)
{
	struct sigaction dfl;
	int saved = errno;
	(void)ucontext;

	autoprof__emergency_stop();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	ap_sigaction(sig, &dfl, NULL);
	/* A fault happens again on return; any other signal is sent again, and
	 * arrives, now deadly, as soon as this handler returns. */
	if (!is_fault(sig, si))
		syscall(SYS_tgkill, getpid(), gettid(), sig);
	errno = saved;
}

/* Take every deadly signal that is still at its default action. Not async-signal-safe. */
void fatal__install(void)
{
	for (int i = 0; i < NR_DEADLY; i++) {
		struct sigaction old, sa;

		if (taken[i] || ap_sigaction(deadly[i], NULL, &old) < 0)
			continue;
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_deadly;
		sa.sa_flags = SA_SIGINFO;
		sigfillset(&sa.sa_mask); /* nothing else runs on this thread meanwhile */
		taken[i] = ap_sigaction(deadly[i], &sa, NULL) == 0;
	}
}
