/* SPDX-License-Identifier: MIT */
/*
 * dlrace.c LIB SECONDS - two threads dlopen/dlclose LIB in a loop for
 * SECONDS of wall time while computing a little between; prints whether
 * every call worked (the count varies with speed, so it is not printed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hot.h"

static const char *lib;
static double seconds;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *loop(void *arg)
{
	long bad = 0;
	double end = now() + seconds;

	(void)arg;
	while (now() < end) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		int (*f)(int) = h ? (int (*)(int))dlsym(h, "hostplug_value") : NULL;

		if (!f || f(2) != 7)
			bad++;
		hostile_hot(20000);
		if (h && dlclose(h))
			bad++;
	}
	return (void *)bad;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long bad = 0;

	if (argc < 3)
		return 2;
	lib = argv[1];
	seconds = atof(argv[2]);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, loop, NULL);
	for (int i = 0; i < 2; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("failures %ld\n", bad);
	return 0;
}
