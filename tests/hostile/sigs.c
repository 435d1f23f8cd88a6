/* SPDX-License-Identifier: MIT */
/*
 * sigs.c MODE - a program that owns signals:
 *   all       reads every disposition at start, handles every signal, computes,
 *             then raises each one: deliveries must be exactly its own.
 *   mask      sets a mask, computes, reads it back (main thread and a thread).
 *   signalfd  blocks every signal, reads them through a signalfd.
 *   sigwait   blocks a few, reads them with sigwaitinfo / sigtimedwait.
 *   external  handles nothing and computes until killed from outside
 *             (the test sends SIGRTMIN+5).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "hot.h"

static volatile sig_atomic_t counts[_NSIG];

static void on_sig(int sig)
{
	counts[sig]++;
}

static int skip_sig(int s)
{
	return s == SIGKILL || s == SIGSTOP || (s > 31 && s < SIGRTMIN);
}

static void print_mask(const char *who, const sigset_t *m)
{
	printf("%s:", who);
	for (int s = 1; s < _NSIG; s++)
		if (sigismember(m, s) == 1)
			printf(" %d", s);
	printf("\n");
}

static void *mask_thread(void *arg)
{
	sigset_t m;

	(void)arg;
	hostile_hot(50000000UL);
	pthread_sigmask(SIG_SETMASK, NULL, &m);
	print_mask("thread mask", &m);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	sigset_t m;

	if (!strcmp(mode, "all")) {
		struct sigaction sa;
		int failed = 0;

		for (int s = 1; s < _NSIG; s++) {
			struct sigaction old;

			if (skip_sig(s))
				continue;
			if (sigaction(s, NULL, &old))
				printf("sigaction(%d) read failed: %s\n", s, strerror(errno));
			else if (old.sa_handler != SIG_DFL || old.sa_flags)
				printf("signal %d not default at start (flags %#x)\n", s,
				       (unsigned)old.sa_flags);
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sig;
		sa.sa_flags = SA_RESTART;
		for (int s = 1; s < _NSIG; s++)
			if (!skip_sig(s) && sigaction(s, &sa, NULL))
				failed++;
		printf("sigaction failures %d\n", failed);
		hostile_hot(300000000UL);
		for (int s = 1; s < _NSIG; s++)
			if (counts[s])
				printf("signal %d arrived %d times unasked\n", s, counts[s]);
		for (int s = 1; s < _NSIG; s++) {
			int before;

			if (skip_sig(s))
				continue;
			before = counts[s];
			raise(s);
			if (counts[s] != before + 1)
				printf("raise(%d): %d deliveries\n", s, counts[s] - before);
		}
		for (int s = 1; s < _NSIG; s++) {
			struct sigaction old;

			if (!skip_sig(s) && (sigaction(s, NULL, &old) || old.sa_handler != on_sig))
				printf("signal %d: handler read back is not ours\n", s);
		}
		printf("all done\n");
		return 0;
	}
	if (!strcmp(mode, "mask")) {
		pthread_t t;

		sigemptyset(&m);
		sigaddset(&m, SIGUSR1);
		sigaddset(&m, SIGTERM);
		sigaddset(&m, SIGRTMIN + 3);
		sigaddset(&m, SIGRTMIN + 5);
		sigaddset(&m, SIGPROF);
		sigprocmask(SIG_SETMASK, &m, NULL);
		pthread_create(&t, NULL, mask_thread, NULL);
		hostile_hot(200000000UL);
		pthread_join(t, NULL);
		sigprocmask(SIG_SETMASK, NULL, &m);
		print_mask("main mask", &m);
		sigprocmask(SIG_BLOCK, NULL, &m);
		print_mask("main mask again", &m);
		sigfillset(&m);
		sigprocmask(SIG_SETMASK, &m, NULL);
		hostile_hot(100000000UL);
		sigprocmask(SIG_SETMASK, NULL, &m);
		print_mask("full mask", &m);
		sigpending(&m);
		print_mask("pending", &m);
		return 0;
	}
	if (!strcmp(mode, "signalfd")) {
		struct signalfd_siginfo si;
		int fd, got[_NSIG] = {0};

		sigfillset(&m);
		sigprocmask(SIG_SETMASK, &m, NULL);
		fd = signalfd(-1, &m, SFD_NONBLOCK);
		hostile_hot(300000000UL);
		raise(SIGUSR1);
		raise(SIGUSR2);
		raise(SIGRTMIN + 1);
		while (read(fd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo < _NSIG)
				got[si.ssi_signo]++;
		printf("signalfd read:");
		for (int s = 1; s < _NSIG; s++)
			if (got[s])
				printf(" %d(x%d)", s, got[s]);
		printf("\n");
		return 0;
	}
	if (!strcmp(mode, "sigwait")) {
		struct timespec zero = {0, 0};
		siginfo_t si;
		int s;

		sigemptyset(&m);
		sigaddset(&m, SIGUSR1);
		sigaddset(&m, SIGUSR2);
		sigprocmask(SIG_BLOCK, &m, NULL);
		hostile_hot(200000000UL);
		raise(SIGUSR2);
		raise(SIGUSR1);
		s = sigwaitinfo(&m, &si);
		printf("sigwaitinfo %d code %d\n", s, si.si_code);
		s = sigwaitinfo(&m, &si);
		printf("sigwaitinfo %d\n", s);
		sigfillset(&m);
		sigprocmask(SIG_BLOCK, &m, NULL);
		hostile_hot(200000000UL);
		errno = 0;
		while ((s = sigtimedwait(&m, &si, &zero)) > 0)
			printf("sigtimedwait got unasked signal %d\n", s);
		printf("sigtimedwait then: %s\n", strerror(errno));
		return 0;
	}
	if (!strcmp(mode, "external")) {
		for (int i = 0; i < 1000; i++)
			hostile_hot(10000000UL);
		printf("never killed\n");
		return 4;
	}
	return 2;
}
