/*
 * split.c - a CPU-bound program with a known split: about 2/3 of its time in
 * heavy_two_thirds() and 1/3 in light_one_third(), both called through
 * work_loop() from main(). Built -O2 without frame pointers by the Makefile.
 *
 * usage: split [milliseconds]   (default 1000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

/* One unit of work: a dependent chain of multiply-adds the compiler cannot fold. */
static inline __attribute__((always_inline)) uint64_t spin(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t heavy_two_thirds(uint64_t x)
{
	x = spin(x, 2000);
	x = spin(x ^ 1, 2000);
	return x;
}

__attribute__((noinline)) uint64_t light_one_third(uint64_t x)
{
	return spin(x ^ 2, 2000);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static __attribute__((noinline)) uint64_t work_loop(double ms)
{
	uint64_t x = 42;
	double start = now_ms();

	/* Each pass is a few microseconds, far below the sampling period, so
	 * samples cannot alias with the loop; the clock is read every 256 passes. */
	while (now_ms() - start < ms) {
		for (int i = 0; i < 256; i++) {
			x = heavy_two_thirds(x);
			x = light_one_third(x);
		}
	}
	return x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;

	sink = work_loop(ms);
	printf("split: done\n");
	return 0;
}
