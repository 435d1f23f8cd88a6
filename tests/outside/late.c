/* SPDX-License-Identifier: MIT */
/*
 * late.c - the process outside.t attaches to with -p: the main thread
 * computes in late_burn for a third of SECONDS (argv[1]), then starts a
 * second thread (after the attach) that computes in late_thread while the
 * main thread computes on; both end after SECONDS in all.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void late_burn(double secs)
{
	double end = now() + secs;

	do
		for (int i = 0; i < 100000; i++)
			sink += i * 0.5;
	while (now() < end);
}

__attribute__((noinline)) void *late_thread(void *arg)
{
	late_burn(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, part = secs / 3;
	pthread_t t;

	late_burn(part);
	if (pthread_create(&t, NULL, late_thread, &part))
		return 1;
	late_burn(part);
	pthread_join(t, NULL);
	late_burn(part);
	return 0;
}
