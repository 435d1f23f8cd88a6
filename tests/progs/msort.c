// SPDX-License-Identifier: MIT
/*
 * msort.c - a recursive merge sort for the aiming tests (report-aim.t):
 * msort() calls itself about 20 deep on every round (recursion folding),
 * merge() is where its time goes (hot source lines), and spin() is a
 * separate hot loop beside it (--focus, --ignore, --hide), called from main
 * (a third of its time) and spin_twice (two thirds): two callers.
 * Usage: msort [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 18)

static int a[N], tmp[N];

/* Merge the sorted halves [lo, mid) and [mid, hi) of a. */
__attribute__((noinline)) static void merge(int lo, int mid, int hi)
{
	int i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < hi)
		tmp[k++] = a[j++];
	for (k = lo; k < hi; k++)
		a[k] = tmp[k];
}

/* Sort a[lo, hi) by halving down to single elements. */
__attribute__((noinline)) static void msort(int lo, int hi)
{
	int mid;

	if (hi - lo < 2)
		return;
	mid = lo + (hi - lo) / 2;
	msort(lo, mid);
	msort(mid, hi);
	merge(lo, mid, hi);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

/* A loop of its own; three calls a round take about as long as one sort. */
__attribute__((noinline)) static unsigned spin(unsigned seed)
{
	unsigned x = seed, i;

	for (i = 0; i < 4000000; i++)
		x = x * 1103515245u + 12345u;
	return x;
}

/* spin's second caller (two calls; not a tail call). */
__attribute__((noinline)) static unsigned spin_twice(unsigned seed)
{
	return spin(spin(seed)) + 1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, r, i;
	unsigned seed = 1, sum = 0;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < N; i++) {
			seed = seed * 1103515245u + 12345u;
			a[i] = (int)(seed >> 8);
		}
		msort(0, N);
		for (i = 1; i < N; i++)
			sum += a[i - 1] > a[i];
		seed = spin_twice(spin(seed));
	}
	printf("%u %u\n", sum, seed);
	return sum != 0;
}
