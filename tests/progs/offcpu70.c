/*
 * offcpu70.c - a program that waits 70% of its time in one function: a loop
 * of 7 ms waits in wait_here() and 3 ms of CPU work in work_here(), for the
 * off-CPU tests (tests/offcpu.t). It checks that no wait is cut short (an
 * error such as EINTR, or a wake-up before the time) and prints how many
 * were, and the share of its time it really spent in wait_here(): the time
 * there (CLOCK_MONOTONIC) over that plus its CPU time from main() on (the
 * loader's and a preloaded profiler's start-up come before any sample: with
 * them the share was 1-3 points low in a fresh root, cold caches).
 *
 * usage: offcpu70 [nanosleep|cond|poll|read] [rounds]   (defaults nanosleep, 100)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_NS 7000000L
#define WORK_NS 3000000L

static volatile uint64_t sink;
static int cut_short;
static uint64_t waited; /* ns spent in wait_here */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int pipefd[2];

static uint64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Write one byte into the pipe every WAIT_NS (for the read mode). */
static void *writer(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts = {0, WAIT_NS};
		char c = 0;

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		if (write(pipefd[1], &c, 1) != 1)
			return NULL;
	}
}

/* A timed wait on a condition variable nobody signals: ETIMEDOUT is the only right end. */
static int cond_wait(void)
{
	struct timespec until;
	int r;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += WAIT_NS;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lock);
	do
		r = pthread_cond_timedwait(&cond, &lock, &until);
	while (r == 0);
	pthread_mutex_unlock(&lock);
	return r == ETIMEDOUT ? 0 : -1;
}

static __attribute__((noinline)) void wait_here(const char *how)
{
	uint64_t t0 = now(CLOCK_MONOTONIC), dt;
	struct timespec ts = {0, WAIT_NS};
	char c;
	int bad;

	if (!strcmp(how, "nanosleep"))
		bad = nanosleep(&ts, NULL) != 0;
	else if (!strcmp(how, "cond"))
		bad = cond_wait() != 0;
	else if (!strcmp(how, "poll"))
		bad = poll(NULL, 0, WAIT_NS / 1000000) != 0;
	else
		bad = read(pipefd[0], &c, 1) != 1;
	dt = now(CLOCK_MONOTONIC) - t0;
	/* a timed wait that ends early was cut short (the pipe's writer sets its own pace) */
	if (bad || (strcmp(how, "read") && dt < WAIT_NS - 100000))
		cut_short++;
	waited += dt;
}

static __attribute__((noinline)) void work_here(void)
{
	uint64_t until = now(CLOCK_THREAD_CPUTIME_ID) + WORK_NS, x = 1;

	while (now(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "nanosleep";
	int rounds = argc > 2 ? atoi(argv[2]) : 100;
	uint64_t cpu, cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
	pthread_t th;

	if (!strcmp(how, "read") && (pipe(pipefd) < 0 || pthread_create(&th, NULL, writer, NULL)))
		return 1;
	for (int i = 0; i < rounds; i++) {
		wait_here(how);
		work_here();
	}
	cpu = now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	printf("offcpu70 %s: %d rounds, %d waits cut short\n", how, rounds, cut_short);
	fprintf(stderr, "share %.2f\n", 100.0 * (double)waited / (double)(waited + cpu));
	return cut_short != 0;
}
