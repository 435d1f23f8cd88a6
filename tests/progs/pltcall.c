// SPDX-License-Identifier: MIT
/*
 * pltcall.c - spends a visible share of its time in PLT stubs: a tight loop
 * of calls to a tiny libc function (build with -fno-builtin so strlen is a
 * call through strlen@plt). usage: pltcall [MILLIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 100) * 1000000L;
	const char *volatile s = "x";
	size_t sum = 0;

	for (long i = 0; i < n; i++)
		sum += strlen(s);
	printf("%zu\n", sum);
	return 0;
}
