/*
 * threads.c - four busy threads, each in a function of its own and with a
 * name of its own, each burning the same CPU time; on 2 cores a profiler must
 * give them equal shares. Thread 1 ends with pthread_exit, thread 2 names
 * itself with prctl(PR_SET_NAME), the others with pthread_setname_np.
 *
 * usage: threads [milliseconds of CPU per thread]   (default 500)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static double cpu_ms;
static volatile uint64_t sink[4];

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define BURN(x)                                                                                    \
	do {                                                                                       \
		for (int i = 0; i < 4096; i++)                                                     \
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;                   \
	} while (0)

static __attribute__((noinline)) uint64_t burn_alpha(double until)
{
	uint64_t x = 1;

	while (thread_cpu_ms() < until)
		BURN(x);
	return x;
}

static __attribute__((noinline)) uint64_t burn_beta(double until)
{
	uint64_t x = 2;

	while (thread_cpu_ms() < until)
		BURN(x);
	return x;
}

static __attribute__((noinline)) uint64_t burn_gamma(double until)
{
	uint64_t x = 3;

	while (thread_cpu_ms() < until)
		BURN(x);
	return x;
}

static __attribute__((noinline)) uint64_t burn_delta(double until)
{
	uint64_t x = 4;

	while (thread_cpu_ms() < until)
		BURN(x);
	return x;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "busy-%ld", id);
	if (id == 2)
		prctl(PR_SET_NAME, name);
	else
		pthread_setname_np(pthread_self(), name);
	switch (id) {
	case 0:
		sink[0] = burn_alpha(cpu_ms);
		break;
	case 1:
		sink[1] = burn_beta(cpu_ms);
		pthread_exit(NULL);
	case 2:
		sink[2] = burn_gamma(cpu_ms);
		break;
	default:
		sink[3] = burn_delta(cpu_ms);
		break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];

	cpu_ms = argc > 1 ? atof(argv[1]) : 500;
	for (long i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("threads: done\n");
	return 0;
}
