// memtruth.c - a program that knows its own allocations, for AUTOPROF_MEMORY.
// Each site is a function of its own that allocates a known number of bytes
// (the requested sizes summed), and frees them all or leaks a known part:
//   churn_small   ALLOC_SMALL bytes in 200-byte mallocs, each freed at once
//   churn_large   ALLOC_LARGE bytes in 3000-byte mallocs, freed in batches
//   churn_calloc  ALLOC_CALLOC bytes in calloc(50, 100), freed
//   leak_small    LEAK_SMALL bytes in 100-byte mallocs, never freed
//   leak_big      LEAK_BIG bytes in 4 MiB mallocs, never freed
//   grow          realloc of one block in 4 KiB steps, freed at the end
// Usage: memtruth [SCALE] (default 1): every count is divided by SCALE.
// It prints each site's bytes allocated and leaked: "site NAME ALLOC LEAK".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long scale = 1;

static void *volatile sink;

__attribute__((noinline)) static unsigned long churn_small(void)
{
	long n = 3000000 / scale;

	for (long i = 0; i < n; i++) {
		char *p = malloc(200);
		p[0] = (char)i;
		sink = p;
		free(p);
	}
	return (unsigned long)n * 200;
}

__attribute__((noinline)) static unsigned long churn_large(void)
{
	long n = 200000 / scale;
	char *batch[64];

	for (long i = 0; i < n; i++) {
		batch[i % 64] = malloc(3000);
		batch[i % 64][0] = 1;
		if (i % 64 == 63 || i == n - 1)
			for (long j = 0; j <= i % 64; j++)
				free(batch[j]);
	}
	sink = batch[0];
	return (unsigned long)n * 3000;
}

__attribute__((noinline)) static unsigned long churn_calloc(void)
{
	long n = 100000 / scale;

	for (long i = 0; i < n; i++) {
		char *p = calloc(50, 100);
		sink = p;
		free(p);
	}
	return (unsigned long)n * 5000;
}

void *leaked[1 << 20]; /* not static: the mallocs must stay */
long nleaked;

__attribute__((noinline)) static unsigned long leak_small(void)
{
	long n = 30000 / (scale > 10 ? 10 : scale);

	for (long i = 0; i < n; i++)
		leaked[nleaked++] = malloc(100);
	return (unsigned long)n * 100;
}

__attribute__((noinline)) static unsigned long leak_big(void)
{
	for (int i = 0; i < 4; i++) {
		leaked[nleaked] = malloc(4 << 20);
		memset(leaked[nleaked++], 1, 4096);
	}
	return 4UL << 22;
}

__attribute__((noinline)) static unsigned long grow(void)
{
	long steps = 300 / (scale > 10 ? 10 : scale);
	unsigned long total = 0;
	char *p = NULL;

	for (long i = 1; i <= steps; i++) {
		p = realloc(p, (size_t)i * 4096);
		p[0] = 1;
		total += (unsigned long)i * 4096;
	}
	free(p);
	return total;
}

int main(int argc, char **argv)
{
	unsigned long a;

	if (argc > 1)
		scale = atol(argv[1]) > 0 ? atol(argv[1]) : 1;
	a = churn_small();
	printf("site churn_small %lu 0\n", a);
	a = churn_large();
	printf("site churn_large %lu 0\n", a);
	a = churn_calloc();
	printf("site churn_calloc %lu 0\n", a);
	a = leak_small();
	printf("site leak_small %lu %lu\n", a, a);
	a = leak_big();
	printf("site leak_big %lu %lu\n", a, a);
	a = grow();
	printf("site grow %lu 0\n", a);
	return 0;
}
