/*
 * cputime.c - a process tree with a known CPU time: two threads and main
 * burn CPU, a forked child burns CPU and exits; the program then prints the
 * CPU time it measured itself (its own CLOCK_PROCESS_CPUTIME_ID plus the
 * child's, from wait4), to compare with a profiler's inherited task-clock.
 *
 * usage: cputime [milliseconds per part]   (default 200)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double part_ms;
static volatile uint64_t sink;

static double clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static __attribute__((noinline)) void burn(void)
{
	double until = clock_ms(CLOCK_THREAD_CPUTIME_ID) + part_ms;
	uint64_t x = 7;

	while (clock_ms(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 4096; i++)
			x = x * 6364136223846793005ULL + 1;
	sink = x;
}

static void *thread_main(void *arg)
{
	(void)arg;
	burn();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	struct rusage ru;
	pid_t child;
	int status;

	part_ms = argc > 1 ? atof(argv[1]) : 200;
	child = fork();
	if (child == 0) {
		burn();
		_exit(0);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, thread_main, NULL);
	burn();
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (child < 0 || wait4(child, &status, 0, &ru) != child)
		return 1;
	printf("cpu_ms=%.1f\n", clock_ms(CLOCK_PROCESS_CPUTIME_ID) + ru.ru_utime.tv_sec * 1e3 +
				    ru.ru_utime.tv_usec / 1e3 + ru.ru_stime.tv_sec * 1e3 +
				    ru.ru_stime.tv_usec / 1e3);
	return 0;
}
