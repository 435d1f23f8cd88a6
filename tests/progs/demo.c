/*
 * demo.c - the program `make demo` profiles: a little of everything a real
 * program does. A sieve of primes, qsort() through libc with a comparison
 * callback, a string hash table, and a recursive function; about 1.5 s of
 * CPU in all, built -O2 without frame pointers.
 *
 * usage: demo [scale]   (default 1.0)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) long count_primes(long n)
{
	char *composite = calloc((size_t)n + 1, 1);
	long count = 0;

	for (long i = 2; i <= n; i++) {
		if (composite[i])
			continue;
		count++;
		for (long j = i * i; j <= n; j += i)
			composite[j] = 1;
	}
	free(composite);
	return count;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static __attribute__((noinline)) double sort_numbers(size_t n)
{
	double *v = malloc(n * sizeof(*v));
	uint64_t s = 88172645463325252ULL;
	double median;

	for (size_t i = 0; i < n; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		v[i] = (double)(s >> 11) / 9007199254740992.0;
	}
	qsort(v, n, sizeof(*v), compare_doubles);
	median = v[n / 2];
	free(v);
	return median;
}

struct entry {
	char key[16];
	long count;
	struct entry *next;
};

static __attribute__((noinline)) uint32_t hash_string(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static __attribute__((noinline)) long count_words(long n)
{
	enum { BUCKETS = 1 << 14 };
	struct entry **table = calloc(BUCKETS, sizeof(*table));
	struct entry *pool = calloc(BUCKETS * 4, sizeof(*pool));
	long distinct = 0, used = 0;

	for (long i = 0; i < n; i++) {
		char key[16];
		struct entry *e;
		uint32_t h;

		snprintf(key, sizeof(key), "w%ld", (i * 7919) % (BUCKETS * 2));
		h = hash_string(key) & (BUCKETS - 1);
		for (e = table[h]; e && strcmp(e->key, key); e = e->next)
			;
		if (!e) {
			e = &pool[used++];
			strcpy(e->key, key);
			e->next = table[h];
			table[h] = e;
			distinct++;
		}
		e->count++;
	}
	free(pool);
	free(table);
	return distinct;
}

static __attribute__((noinline)) long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	long primes = count_primes((long)(60e6 * scale));
	double median = sort_numbers((size_t)(3e6 * scale));
	long words = count_words((long)(3e6 * scale));
	long f = fib(30 + (scale >= 1.0 ? 2 : 0));

	printf("demo: %ld primes, median %.3f, %ld distinct words, fib %ld\n", primes, median,
	       words, f);
	return 0;
}
