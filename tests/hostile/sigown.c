/* SPDX-License-Identifier: MIT */
/*
 * sigown.c MODE [ROUNDS] - programs that own their signals (issue 21). Each
 * computes between deliveries and prints every signal it got, in order, so a
 * profiled run must print exactly what a plain run prints.
 *   signalfd     every signal blocked; each round queues SIGRTMIN+0..+8 (the
 *                old sampling number +5 among them) with a value, raises
 *                SIGPROF, SIGUSR1, SIGVTALRM and SIGIO, and reads them all
 *                back from a signalfd of every signal.
 *   sigwaitinfo  the same, read with sigwaitinfo.
 *   sigtimedwait the same, read with sigtimedwait (a 5 s limit: a signal
 *                lost is a line "lost").
 *   handlers     a handler on every catchable signal; each round raises
 *                each of them once (SIGRTMIN+N queued with a value); the
 *                handlers count, the counts are printed.
 *   threads      signalfd mode while 2 threads that block everything compute.
 * Exit 0; 3 when a read failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "hot.h"

#define RT_SENT 9

static volatile sig_atomic_t got[_NSIG];
static volatile sig_atomic_t stop;

static void on_any(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig >= SIGRTMIN && si->si_code == SI_QUEUE && si->si_value.sival_int != sig * 7)
		return; /* not the value we queued: not counted */
	got[sig]++;
}

/* The signals one round sends, in the order a read gets them back (lowest first). */
static int round_signals(int *out)
{
	int n = 0;

	out[n++] = SIGUSR1;
	out[n++] = SIGVTALRM;
	out[n++] = SIGPROF;
	out[n++] = SIGIO;
	for (int i = 0; i < RT_SENT; i++)
		out[n++] = SIGRTMIN + i;
	return n;
}

static void send_round(void)
{
	union sigval v;

	raise(SIGUSR1);
	raise(SIGVTALRM);
	raise(SIGPROF);
	raise(SIGIO);
	for (int i = 0; i < RT_SENT; i++) {
		v.sival_int = (SIGRTMIN + i) * 7;
		if (sigqueue(getpid(), SIGRTMIN + i, v) < 0) {
			printf("sigqueue %d: %s\n", SIGRTMIN + i, strerror(errno));
			exit(3);
		}
	}
}

static void *blocked_worker(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!stop)
		hostile_hot(200000);
	return NULL;
}

/* Read one signal the way mode says; 0 when none came within 5 s. */
static int read_one(const char *mode, int sfd, const sigset_t *all, int *value)
{
	siginfo_t si;
	struct timespec limit = {5, 0};
	int sig;

	*value = 0;
	if (sfd >= 0) {
		struct signalfd_siginfo ssi;

		if (read(sfd, &ssi, sizeof(ssi)) != sizeof(ssi))
			return 0;
		*value = ssi.ssi_int;
		return (int)ssi.ssi_signo;
	}
	if (!strcmp(mode, "sigwaitinfo"))
		sig = sigwaitinfo(all, &si);
	else
		sig = sigtimedwait(all, &si, &limit);
	if (sig <= 0)
		return 0;
	*value = si.si_value.sival_int;
	return sig;
}

static int own_reads(const char *mode, int rounds)
{
	pthread_t th[2];
	int nth = !strcmp(mode, "threads") ? 2 : 0, sfd = -1, list[64], n = round_signals(list);
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	for (int i = 0; i < nth; i++)
		pthread_create(&th[i], NULL, blocked_worker, NULL);
	if (!strcmp(mode, "signalfd") || nth) {
		sfd = signalfd(-1, &all, SFD_CLOEXEC);
		if (sfd < 0) {
			printf("signalfd: %s\n", strerror(errno));
			return 3;
		}
	}
	for (int r = 0; r < rounds; r++) {
		hostile_hot(3000000);
		send_round();
		hostile_hot(1000000);
		printf("round %d:", r);
		for (int i = 0; i < n; i++) {
			int value, sig = read_one(mode, sfd, &all, &value);

			if (!sig) {
				printf(" lost\n");
				return 3;
			}
			if (sig >= SIGRTMIN)
				printf(" RTMIN+%d=%d", sig - SIGRTMIN, value == sig * 7);
			else
				printf(" %d", sig);
		}
		printf("\n");
	}
	/* Nothing else is pending: no signal of ours reached the program. */
	{
		sigset_t pend;

		sigpending(&pend);
		for (int s = 1; s < _NSIG; s++)
			if (sigismember(&pend, s))
				printf("also pending: %d\n", s);
	}
	stop = 1;
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int handlers(int rounds)
{
	struct sigaction sa;
	int sent[_NSIG] = {0};

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_any;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int s = 1; s < _NSIG; s++)
		sigaction(s, &sa, NULL); /* KILL, STOP and glibc's own fail */
	for (int r = 0; r < rounds; r++) {
		hostile_hot(3000000);
		for (int s = 1; s < _NSIG; s++) {
			struct sigaction cur;
			union sigval v = {.sival_int = s * 7};

			if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &cur) < 0 ||
			    cur.sa_sigaction != on_any)
				continue;
			if (s >= SIGRTMIN ? sigqueue(getpid(), s, v) : raise(s)) {
				printf("send %d: %s\n", s, strerror(errno));
				return 3;
			}
			sent[s]++;
		}
	}
	for (int s = 1; s < _NSIG; s++)
		if (sent[s] || got[s])
			printf("signal %d: sent %d got %d\n", s, sent[s], (int)got[s]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "signalfd";
	int rounds = argc > 2 ? atoi(argv[2]) : 5, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "handlers"))
		rc = handlers(rounds);
	else if (!strcmp(mode, "signalfd") || !strcmp(mode, "sigwaitinfo") ||
		 !strcmp(mode, "sigtimedwait") || !strcmp(mode, "threads"))
		rc = own_reads(mode, rounds);
	else {
		fprintf(stderr, "sigown: unknown mode %s\n", mode);
		return 2;
	}
	return rc;
}
