/*
 * libearly.c - a preloaded library whose constructor starts a busy thread
 * before the profiler's constructor runs, to check that threads existing at
 * start-up are found and sampled too.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static pthread_t early;

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void early_thread_work(void)
{
	uint64_t x = 9;

	usleep(50000); /* let the profiler start meanwhile */
	while (thread_cpu_ms() < 300)
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
	pthread_create(&early, NULL, run, NULL);
}

__attribute__((destructor)) static void join_early_thread(void)
{
	pthread_join(early, NULL);
}
