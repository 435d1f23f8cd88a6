// libearlyalloc.c - preloaded after the library, starts a thread from its
// constructor, before the profiler's own constructor samples threads (so the
// thread has no sampler of its own: its allocation samples go to the file
// directly). The thread leaks 1000 blocks of 1000 bytes in early_alloc().
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

void *early_kept[1000]; /* not static: the allocations must stay */

__attribute__((noinline)) void early_alloc(void)
{
	for (int i = 0; i < 1000; i++)
		early_kept[i] = malloc(1000);
}

static void *run(void *arg)
{
	(void)arg;
	usleep(100000);
	early_alloc();
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, run, NULL) == 0)
		pthread_detach(t);
}
