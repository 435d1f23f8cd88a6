/* SPDX-License-Identifier: MIT */
/*
 * hot.h - the computing part every hostile C/C++ program shares: hostile_hot
 * is where samples must land (tests/hostile.t looks for it in perf report).
 */
#ifndef HOSTILE_HOT_H
#define HOSTILE_HOT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Spin N rounds of integer mixing and return a value that depends only on N. */
__attribute__((noinline, unused)) static unsigned long hostile_hot(unsigned long n)
{
	volatile unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + (i ^ (x >> 17));
	return x;
}

#ifdef __cplusplus
}
#endif
#endif
