// memagg.c - a program that knows its allocations, for AUTOPROF_MEMORY with
// AUTOPROF_AGGREGATE: THREADS threads each run ROUNDS rounds of 5000
// allocations at two sites, sleeping SLEEP_MS milliseconds after each round
// (so that a run spans windows), with SIZES distinct block sizes:
//   churn   malloc(16 + i % SIZES), freed at once
//   keep    every 100th round step, malloc(100), never freed
// Usage: memagg THREADS ROUNDS SLEEP_MS SIZES
// Prints "site NAME BYTES_ALLOCATED BYTES_LEAKED BLOCKS_ALLOCATED" per site.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEPS 5000

static long rounds, sleep_ms, sizes;
static void *volatile sink;

__attribute__((noinline)) static void churn(size_t n)
{
	char *p = malloc(n);

	p[0] = 1;
	sink = p;
	free(p);
}

__attribute__((noinline)) static void *keep(void)
{
	char *p = malloc(100);

	p[0] = 1;
	return p;
}

static void *work(void *arg)
{
	void **kept = arg;
	struct timespec ts = {sleep_ms / 1000, sleep_ms % 1000 * 1000000};
	long k = 0;

	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < STEPS; i++) {
			churn(16 + (size_t)(i % sizes));
			if (i % 100 == 0)
				kept[k++] = keep();
		}
		if (sleep_ms)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads, churn_bytes = 0;
	pthread_t t[64];
	void ***kept;

	if (argc != 5 || (threads = atol(argv[1])) < 1 || threads > 64) {
		fprintf(stderr, "usage: memagg THREADS(1-64) ROUNDS SLEEP_MS SIZES\n");
		return 2;
	}
	rounds = atol(argv[2]);
	sleep_ms = atol(argv[3]);
	sizes = atol(argv[4]) > 0 ? atol(argv[4]) : 1;
	kept = calloc((size_t)threads, sizeof(*kept));
	for (long i = 0; i < threads; i++) {
		kept[i] = calloc((size_t)(rounds * (STEPS / 100) + 1), sizeof(void *));
		pthread_create(&t[i], NULL, work, kept[i]);
	}
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	for (long i = 0; i < STEPS; i++)
		churn_bytes += 16 + i % sizes;
	printf("site churn %ld 0 %ld\n", churn_bytes * rounds * threads, STEPS * rounds * threads);
	printf("site keep %ld %ld %ld\n", 100L * (STEPS / 100) * rounds * threads,
	       100L * (STEPS / 100) * rounds * threads, (STEPS / 100) * rounds * threads);
	return 0;
}
