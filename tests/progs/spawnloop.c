/* SPDX-License-Identifier: MIT */
/*
 * spawnloop.c - creates and joins threads that do nothing, for about the CPU
 * time asked: most of its samples are in libc's pthread_create, which libc
 * exports under two versions at one address (pthread_create@GLIBC_2.2.5 and
 * pthread_create@@GLIBC_2.34): a reader must name it as perf does.
 *
 * usage: spawnloop [milliseconds of the main thread's CPU]   (default 300)
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 300, used;
	struct timespec ts;

	do {
		for (int i = 0; i < 100; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, nothing, NULL) == 0)
				pthread_join(t, NULL);
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		used = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	} while (used < ms);
	return 0;
}
