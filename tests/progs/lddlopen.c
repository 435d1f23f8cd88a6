/*
 * lddlopen.c - dlopen/dlclose storms for tests/preload-loader.t.
 *   lddlopen threads LIB SECONDS MS: two threads dlopen LIB, call plug_work(MS),
 *       dlclose it, in a loop for SECONDS; prints "done".
 *   lddlopen bench LIB COUNT: COUNT dlopen/dlclose pairs in one thread; prints
 *       "done" and the elapsed ns on stderr.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *lib;
static double seconds, work_ms;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One dlopen, a call into the library, one dlclose; returns 0 or 1 on failure. */
static int cycle(double ms)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	uint64_t (*work)(double);
	int (*id)(void);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	work = (uint64_t(*)(double))dlsym(h, "plug_work");
	id = (int (*)(void))dlsym(h, "plug_id");
	if (!work || !id || id() != 4242) {
		fprintf(stderr, "dlsym failed\n");
		return 1;
	}
	if (ms > 0)
		work(ms);
	if (dlclose(h)) {
		fprintf(stderr, "dlclose: %s\n", dlerror());
		return 1;
	}
	return 0;
}

static void *storm(void *arg)
{
	double end = now_s() + seconds;
	long bad = 0;

	(void)arg;
	while (now_s() < end && !bad)
		bad += cycle(work_ms);
	return (void *)bad;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "threads")) {
		pthread_t t[2];
		void *r0, *r1;

		lib = argv[2];
		seconds = atof(argv[3]);
		work_ms = atof(argv[4]);
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, storm, NULL))
				return 2;
		pthread_join(t[0], &r0);
		pthread_join(t[1], &r1);
		if (r0 || r1)
			return 1;
		puts("done");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "bench")) {
		long n = atol(argv[3]);
		double t0;

		lib = argv[2];
		t0 = now_s();
		for (long i = 0; i < n; i++)
			if (cycle(0))
				return 1;
		fprintf(stderr, "ns %.0f\n", (now_s() - t0) * 1e9);
		puts("done");
		return 0;
	}
	fprintf(stderr, "usage: lddlopen threads LIB SECONDS MS | bench LIB COUNT\n");
	return 2;
}
