/*
 * asynccancel.c - threads in asynchronous cancellation, deep in a recursion
 * (a profiler's handler takes a while to walk them), cancelled while they
 * run: every pthread_join must give PTHREAD_CANCELED. Prints "not canceled N".
 * usage: asynccancel [rounds]   (default 1000; 2 threads a round)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static volatile int stop; /* never set: the threads end by cancellation */

static __attribute__((noinline)) void deep(int n)
{
	if (n > 0) {
		deep(n - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	while (!stop)
		;
}
static void *run(void *a)
{
	(void)a;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	deep(150);
	return NULL;
}
int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000, bad = 0;
	for (int k = 0; k < rounds; k++) {
		pthread_t t[2];
		void *r;
		for (int j = 0; j < 2; j++)
			pthread_create(&t[j], NULL, run, NULL);
		usleep(300);
		for (int j = 0; j < 2; j++)
			pthread_cancel(t[j]);
		for (int j = 0; j < 2; j++) {
			r = (void *)7;
			pthread_join(t[j], &r);
			bad += r != PTHREAD_CANCELED;
		}
	}
	printf("not canceled %d\n", bad);
	return 0;
}
