/* libldplug.c - the small library tests/preload-loader.t loads and unloads. */
#include <stdint.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spin for ms of this thread's CPU time; returns a value that depends on the work. */
__attribute__((noinline)) uint64_t plug_work(double ms)
{
	double until = cpu_ms() + ms;
	uint64_t x = 7;

	do
		for (int i = 0; i < 2048; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	while (cpu_ms() < until);
	return x;
}

/* A constant, to check that the library found is this one. */
int plug_id(void)
{
	return 4242;
}
