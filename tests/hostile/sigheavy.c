/* SPDX-License-Identifier: MIT */
/*
 * sigheavy.c MODE - signal-heavy programs:
 *   sigchld  a SIGCHLD handler reaps 40 computing children; the parent
 *            waits in a sigsuspend loop.
 *   timers   setitimer ITIMER_REAL (SIGALRM) ticks counted in a
 *            sigsuspend loop, then ITIMER_PROF and ITIMER_VIRTUAL
 *            ticks counted while computing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hot.h"

#define KIDS 40

static volatile sig_atomic_t reaped, status_sum, ticks;

static void on_chld(int sig)
{
	int st, e = errno;
	pid_t p;

	(void)sig;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		reaped++;
		status_sum += WIFEXITED(st) ? WEXITSTATUS(st) : 1000;
	}
	errno = e;
}

static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

static int count_ticks(int which, int sig, int want)
{
	struct itimerval it = {{0, 4000}, {0, 4000}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sigaction(sig, &sa, NULL);
	ticks = 0;
	setitimer(which, &it, NULL);
	if (which == ITIMER_REAL) {
		sigset_t block, old;

		sigemptyset(&block);
		sigaddset(&block, sig);
		sigprocmask(SIG_BLOCK, &block, &old);
		while (ticks < want)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
	} else {
		while (ticks < want)
			hostile_hot(100000UL);
	}
	setitimer(which, &off, NULL);
	return ticks >= want;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sigchld";

	if (!strcmp(mode, "sigchld")) {
		struct sigaction sa;
		sigset_t block, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_chld;
		sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
		sigaction(SIGCHLD, &sa, NULL);
		sigemptyset(&block);
		sigaddset(&block, SIGCHLD);
		sigprocmask(SIG_BLOCK, &block, &old);
		for (int i = 0; i < KIDS; i++) {
			pid_t p = fork();

			if (p == 0) {
				hostile_hot(3000000UL);
				_exit(i % 7);
			}
			if (p < 0)
				perror("fork");
		}
		hostile_hot(100000000UL);
		while (reaped < KIDS)
			sigsuspend(&old);
		printf("reaped %d children, status sum %d\n", reaped, status_sum);
		return 0;
	}
	if (!strcmp(mode, "timers")) {
		printf("real ticks %s\n", count_ticks(ITIMER_REAL, SIGALRM, 50) ? "ok" : "short");
		printf("prof ticks %s\n", count_ticks(ITIMER_PROF, SIGPROF, 50) ? "ok" : "short");
		printf("virtual ticks %s\n",
		       count_ticks(ITIMER_VIRTUAL, SIGVTALRM, 50) ? "ok" : "short");
		return 0;
	}
	return 2;
}
