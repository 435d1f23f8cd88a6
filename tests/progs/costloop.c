/*
 * costloop.c - fixed CPU-bound work at a chosen stack depth, for the
 * per-sample cost benchmark (scripts/bench/cost.py) and tests/cost.t.
 * Each thread descends DEPTH frames (descend -> descend -> ... -> spin)
 * and then runs a hot loop with no calls, so every sample lands in spin()
 * under DEPTH frames of descend() under worker() and main(). Built -O2
 * without frame pointers by the Makefile.
 *
 * usage: costloop [seconds-of-work [depth [threads [depth2]]]]   (defaults 1.0, 1, 1)
 *        (with depth2, the second half of each thread's work runs under
 *        depth2 frames: a program whose stacks deepen midway)
 *        (the work is a fixed number of iterations, calibrated so that
 *        1.0 is about a second of CPU on this class of machine)
 * With COSTLOOP_CPU set, the CPU seconds the threads spent in the work (each
 * thread's own clock, summed) are printed on stderr as "work-cpu SECONDS":
 * the reference for the rate a profiler delivers, without start-up and exit.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS	 64
#define ITERS_PER_SECOND 400000000.0

static volatile uint64_t sink;
static long iterations;
static int depth, depth2 = -1;
static uint64_t work_ns; /* summed over the threads (atomically) */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The hot loop: a dependent multiply/xor chain, no calls. */
static __attribute__((noinline)) uint64_t spin(long n, uint64_t x)
{
	for (long i = 0; i < n; i++) {
		x ^= (uint64_t)i;
		x *= 0x9e3779b97f4a7c15ULL;
		x ^= x >> 31;
	}
	return x;
}

/* One more frame above spin(); never a tail call (the result is used after). */
static __attribute__((noinline)) uint64_t descend(int level, long n, uint64_t x)
{
	uint64_t r;

	if (level <= 0)
		r = spin(n, x);
	else
		r = descend(level - 1, n, x + (uint64_t)level);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static void *worker(void *arg)
{
	uint64_t t0 = thread_cpu_ns();
	uint64_t r;

	if (depth2 < 0) {
		r = descend(depth, iterations, (uint64_t)(uintptr_t)arg);
	} else {
		r = descend(depth, iterations / 2, (uint64_t)(uintptr_t)arg);
		r += descend(depth2, iterations - iterations / 2, r);
	}

	__atomic_add_fetch(&work_ns, thread_cpu_ns() - t0, __ATOMIC_RELAXED);
	sink += r;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t tid[MAX_THREADS];

	depth = argc > 2 ? atoi(argv[2]) : 1;
	depth2 = argc > 4 ? atoi(argv[4]) : -1;
	if (seconds <= 0 || depth < 0 || depth > 10000 || threads < 1 || threads > MAX_THREADS ||
	    depth2 > 10000 || (argc > 4 && depth2 < 0)) {
		fprintf(stderr, "usage: costloop [seconds [depth [threads [depth2]]]]\n");
		return 2;
	}
	iterations = (long)(seconds * ITERS_PER_SECOND / threads);
	if (threads == 1) {
		worker((void *)1);
	} else {
		for (int i = 0; i < threads; i++)
			if (pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
				return 1;
		for (int i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
	}
	printf("%llu\n", (unsigned long long)(sink & 0xff));
	if (getenv("COSTLOOP_CPU"))
		fprintf(stderr, "work-cpu %.4f\n", (double)work_ns / 1e9);
	return 0;
}
