/*
 * libearly.c - a preloaded library whose constructor starts a busy thread
 * before the profiler's constructor runs, to check that threads existing at
 * start-up are found and sampled too.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static pthread_t early;
static char output[4096]; /* the profile's path: it exists once the profiler has started */

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void early_thread_work(void)
{
	uint64_t x = 9;
	double start;

	/* Let the profiler start meanwhile (a busy machine may take long). */
	for (int i = 0; i < 5000 && (!output[0] || access(output, F_OK)); i++)
		usleep(1000);
	start = thread_cpu_ms();
	while (thread_cpu_ms() - start < 300)
		for (int i = 0; i < 4096; i++)
			x = x * 6364136223846793005ULL + 19;
	sink = x;
}

static void *run(void *arg)
{
	(void)arg;
	early_thread_work();
	return NULL;
}

__attribute__((constructor)) static void start_early_thread(void)
{
	const char *out = getenv("AUTOPROF_OUTPUT");

	snprintf(output, sizeof(output), "%s", out ? out : "");
	pthread_create(&early, NULL, run, NULL);
}

__attribute__((destructor)) static void join_early_thread(void)
{
	pthread_join(early, NULL);
}
