// SPDX-License-Identifier: MIT
/*
 * sighot.c - spends most of its CPU time in its own signal handler: an
 * interval timer's SIGALRM every 5 ms runs handler_work() for about 3 ms, on
 * the thread's stack or (with "alt") on an alternate signal stack. Profiles
 * of it show whether stacks are walked through signal frames into the
 * interrupted code. usage: sighot [SECONDS] [alt]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void handler_work(void)
{
	for (int i = 0; i < 8000000; i++)
		sink += (unsigned long)i * 7;
}

static void on_alarm(int signo)
{
	(void)signo;
	handler_work();
}

__attribute__((noinline)) void main_work(void)
{
	for (int i = 0; i < 100000; i++)
		sink += (unsigned long)i;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, start = now();
	struct itimerval every = {{0, 5000}, {0, 5000}};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	if (argc > 2 && !strcmp(argv[2], "alt")) {
		static char alt[64 * 1024];
		stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt)};

		if (sigaltstack(&ss, NULL))
			return 1;
		sa.sa_flags = SA_ONSTACK;
	}
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &every, NULL))
		return 1;
	while (now() - start < secs)
		main_work();
	puts("sighot: done");
	return 0;
}
