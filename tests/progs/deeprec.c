/*
 * deeprec.c - a deep recursion for the flame graph's tall-graph tests: each
 * call of descend() goes one level deeper until DEPTH, where it spins, so
 * every sample's stack is DEPTH frames or more (a flame graph 2000+ px tall
 * at the default stack depth of 127).
 *
 * usage: deeprec [seconds] [depth]   (default 0.3 s, depth 200)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) unsigned long descend(int level, int depth, double until)
{
	volatile unsigned long x = (unsigned long)level;

	if (level < depth)
		return descend(level + 1, depth, until) + x;
	while (now() < until)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	int depth = argc > 2 ? atoi(argv[2]) : 200;
	unsigned long r = descend(0, depth, now() + seconds);

	printf("deeprec: done %lu\n", r & 1);
	return 0;
}
