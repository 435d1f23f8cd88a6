/* libhot.c - a library that `life dlopen` loads, runs and unloads again. */
#include <stdint.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) uint64_t hot_in_plugin(double ms)
{
	double until = cpu_ms() + ms;
	uint64_t x = 5;

	while (cpu_ms() < until)
		for (int i = 0; i < 4096; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}
