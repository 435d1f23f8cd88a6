/* SPDX-License-Identifier: MIT */
/*
 * cancel.c - 50 threads compute with deferred cancellation and are
 * cancelled with pthread_cancel; every join must see PTHREAD_CANCELED.
 * The workers hit cancellation points (pthread_testcancel, write to
 * /dev/null) between slices of computation.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "hot.h"

#define N 50

static pthread_barrier_t ready;
static int devnull;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&ready);
	for (;;) {
		hostile_hot(200000);
		write(devnull, "x", 1);
		pthread_testcancel();
	}
	return NULL;
}

int main(void)
{
	pthread_t t[N];
	int cancelled = 0;

	devnull = open("/dev/null", O_WRONLY);
	pthread_barrier_init(&ready, NULL, N + 1);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_barrier_wait(&ready);
	hostile_hot(100000000UL);
	for (int i = 0; i < N; i++)
		pthread_cancel(t[i]);
	for (int i = 0; i < N; i++) {
		void *r;

		pthread_join(t[i], &r);
		cancelled += r == PTHREAD_CANCELED;
	}
	printf("cancelled %d of %d\n", cancelled, N);
	return 0;
}
