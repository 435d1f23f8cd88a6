// SPDX-License-Identifier: MIT
/*
 * inlined.c - a hot function inlined into its caller: mix() is always
 * inlined into checksum(), itself inlined into run() (noinline), so with
 * -O2 -g the samples' addresses are in run()'s code but in mix()'s lines.
 * Usage: inlined [ROUNDS] (default 40).
 */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) unsigned mix(unsigned h, unsigned x)
{
	for (int i = 0; i < 64; i++)
		h = (h ^ x) * 16777619u + (h >> 7);
	return h;
}

static inline __attribute__((always_inline)) unsigned checksum(const unsigned *v, int n)
{
	unsigned h = 2166136261u;

	for (int i = 0; i < n; i++)
		h = mix(h, v[i]);
	return h;
}

__attribute__((noinline)) static unsigned run(const unsigned *v, int n, long rounds)
{
	unsigned acc = 0;

	for (long r = 0; r < rounds; r++)
		acc += checksum(v, n) + (unsigned)r;
	return acc;
}

int main(int argc, char **argv)
{
	static unsigned v[4096];
	long rounds = argc > 1 ? atol(argv[1]) : 40;

	for (int i = 0; i < 4096; i++)
		v[i] = (unsigned)i * 2654435761u;
	printf("%u\n", run(v, 4096, rounds * 10));
	return 0;
}
