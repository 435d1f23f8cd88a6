/*
 * fdcancel.c - deferred cancellation of busy threads, several rounds: each
 * round starts N threads that compute and reach a cancellation point now and
 * then, cancels them all and joins them. A sampling handler that contains a
 * cancellation point is unwound mid-write, and the profiler then hangs.
 *
 * usage: fdcancel [threads] [rounds]   (default 50 threads, 5 rounds)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

/* Busy until cancelled: the loop reaches pthread_testcancel every few microseconds. */
static void *spin_until_cancelled(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	for (;;) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink += x;
		pthread_testcancel();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50, rounds = argc > 2 ? atoi(argv[2]) : 5;
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	int cancelled = 0;

	for (int r = 0; r < rounds; r++) {
		struct timespec nap = {0, 20 * 1000 * 1000};

		for (int i = 0; i < n; i++)
			pthread_create(&th[i], NULL, spin_until_cancelled, (void *)(uintptr_t)i);
		nanosleep(&nap, NULL);
		for (int i = 0; i < n; i++)
			pthread_cancel(th[i]);
		for (int i = 0; i < n; i++) {
			void *ret;

			pthread_join(th[i], &ret);
			cancelled += ret == PTHREAD_CANCELED;
		}
	}
	printf("cancelled %d of %d threads\n", cancelled, n * rounds);
	free(th);
	return 0;
}
