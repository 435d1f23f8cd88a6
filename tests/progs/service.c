/*
 * service.c - a small long-running service for tests/service-*.t: BUSY
 * worker threads spin in busy_loop() for BUSY_S seconds of wall time, then
 * wait on a condition variable (blocked, with their last samples still in
 * their buffers); a clock thread sleeps TOTAL_S seconds and then writes a
 * byte to a pipe on which the main thread is blocked in read(). Every
 * interrupted call is retried and counted: the last line says how many
 * calls saw EINTR (a transparent profiler leaves that at 0).
 *
 * usage: service BUSY BUSY_S TOTAL_S
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static double busy_s, total_s;
static volatile unsigned long sink;
static int eintr;
static int done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void busy_loop(double until)
{
	while (now() < until)
		for (int i = 0; i < 10000; i++)
			sink = sink * 31 + (unsigned long)i;
}

static void *worker(void *arg)
{
	(void)arg;
	busy_loop(now() + busy_s);
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *clock_thread(void *arg)
{
	struct timespec ts = {(time_t)total_s, (long)((total_s - (double)(time_t)total_s) * 1e9)};

	(void)arg;
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		__atomic_fetch_add(&eintr, 1, __ATOMIC_RELAXED);
	while (write(fds[1], "x", 1) < 0)
		if (errno == EINTR)
			__atomic_fetch_add(&eintr, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	int busy = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t w[64], c;
	char byte;

	busy_s = argc > 2 ? atof(argv[2]) : 1;
	total_s = argc > 3 ? atof(argv[3]) : 2;
	if (busy > 64 || pipe(fds))
		return 2;
	for (int i = 0; i < busy; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	pthread_create(&c, NULL, clock_thread, NULL);
	while (read(fds[0], &byte, 1) < 0)
		if (errno == EINTR)
			__atomic_fetch_add(&eintr, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < busy; i++)
		pthread_join(w[i], NULL);
	pthread_join(c, NULL);
	printf("service: done, %d interrupted calls\n", eintr);
	return 0;
}
