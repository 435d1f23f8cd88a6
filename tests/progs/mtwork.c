/*
 * mtwork.c - a fixed amount of multi-threaded work, for the overhead
 * benchmark (scripts/bench/overhead.py): NTHREADS threads each run the same
 * number of iterations of a small compute kernel reached through a few call
 * levels (worker -> run_blocks -> mix_block -> mix_word), so a slowdown shows
 * as more CPU and wall time, never as less work. About 1.5 s of CPU in all.
 * Built -O2 without frame pointers by the Makefile.
 *
 * usage: mtwork [scale [threads]]   (defaults 1.0 and 4)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 64
#define BLOCK_WORDS 64

static volatile uint64_t sink;

/* Leaf: a dependent chain of multiply/xor-shift rounds the compiler cannot fold. */
static __attribute__((noinline)) uint64_t mix_word(uint64_t x, uint64_t k)
{
	for (int i = 0; i < 8; i++) {
		x ^= k;
		x *= 0x9e3779b97f4a7c15ULL;
		x ^= x >> 29;
	}
	return x;
}

static __attribute__((noinline)) uint64_t mix_block(uint64_t *block, uint64_t seed)
{
	uint64_t acc = seed;

	for (int i = 0; i < BLOCK_WORDS; i++) {
		block[i] = mix_word(block[i] + acc, (uint64_t)i);
		acc += block[i] | 1;
	}
	return acc;
}

static __attribute__((noinline)) uint64_t run_blocks(long blocks, uint64_t seed)
{
	uint64_t block[BLOCK_WORDS];
	uint64_t acc = seed;

	for (int i = 0; i < BLOCK_WORDS; i++)
		block[i] = seed + (uint64_t)i;
	for (long b = 0; b < blocks; b++)
		acc ^= mix_block(block, acc + (uint64_t)b);
	return acc;
}

struct job {
	long blocks;
	uint64_t seed;
	uint64_t result;
};

static void *worker(void *p)
{
	struct job *job = p;

	job->result = run_blocks(job->blocks, job->seed);
	return NULL;
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	int nthreads = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t tids[MAX_THREADS];
	struct job jobs[MAX_THREADS];
	uint64_t total = 0;

	if (scale <= 0 || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: mtwork [scale [threads (1..%d)]]\n", MAX_THREADS);
		return 2;
	}
	for (int t = 0; t < nthreads; t++) {
		jobs[t].blocks = (long)(300000 * scale);
		jobs[t].seed = 0x1234567ULL * (uint64_t)(t + 1);
		if (pthread_create(&tids[t], NULL, worker, &jobs[t])) {
			fprintf(stderr, "mtwork: pthread_create failed\n");
			return 1;
		}
	}
	for (int t = 0; t < nthreads; t++) {
		pthread_join(tids[t], NULL);
		total ^= jobs[t].result;
	}
	sink = total;
	printf("mtwork: %d threads x %ld blocks, result %016llx\n", nthreads, jobs[0].blocks,
	       (unsigned long long)total);
	return 0;
}
