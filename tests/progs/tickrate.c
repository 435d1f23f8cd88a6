/*
 * tickrate.c - the reference for the timer source's tests: how many signals a
 * per-thread CPU-time timer asking for 1 kHz delivers here per CPU-second.
 * The kernel checks CPU-time timers on its tick, so the answer depends on the
 * kernel (CONFIG_HZ) and the machine, not on the profiler.
 *
 * usage: tickrate [milliseconds of CPU]   (default 1000); prints signals per CPU-second
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t fired;

static void on_tick(int sig)
{
	(void)sig;
	fired++;
}

static double thread_cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double want = (argc > 1 ? atof(argv[1]) : 1000) / 1e3, start;
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGPROF};
	struct itimerspec its = {.it_interval = {0, 1000000}, .it_value = {0, 1000000}};
	volatile unsigned long sink = 0;
	timer_t timer;

	signal(SIGPROF, on_tick);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) ||
	    timer_settime(timer, 0, &its, NULL))
		return perror("timer"), 1;
	start = thread_cpu();
	while (thread_cpu() - start < want)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
	printf("%.0f\n", fired / (thread_cpu() - start));
	return 0;
}
