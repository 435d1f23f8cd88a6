/* SPDX-License-Identifier: MIT */
/*
 * nofile.c THREADS LIMIT - under RLIMIT_NOFILE LIMIT with THREADS threads
 * alive, counts how many files the program can open.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hot.h"

static pthread_barrier_t up, down;

static void *worker(void *arg)
{
	(void)arg;
	hostile_hot(2000000UL);
	pthread_barrier_wait(&up);
	pthread_barrier_wait(&down);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 64;
	struct rlimit rl = {argc > 2 ? atol(argv[2]) : 1024, argc > 2 ? atol(argv[2]) : 1024};
	pthread_t *t = calloc(nthreads, sizeof(*t));
	int n = 0;

	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	pthread_barrier_init(&up, NULL, nthreads + 1);
	pthread_barrier_init(&down, NULL, nthreads + 1);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_barrier_wait(&up);
	hostile_hot(100000000UL);
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	printf("opened %d files with %d threads under a limit of %ld\n", n, nthreads,
	       (long)rl.rlim_cur);
	pthread_barrier_wait(&down);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	getrlimit(RLIMIT_NOFILE, &rl);
	printf("limit read back %ld %ld\n", (long)rl.rlim_cur, (long)rl.rlim_max);
	return 0;
}
