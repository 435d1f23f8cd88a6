/* Four threads race through jemalloc's mallocx, rallocx, dallocx and
 * sdallocx from their first calls on (each entry point looked up by
 * whichever thread comes first), linked with libjemalloc.so.2: at
 * --memory-interval 1, work() allocates 4 x 7485000 bytes and leaves none
 * live (memory-allocx.t). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void *mallocx(size_t size, int flags);
void *rallocx(void *p, size_t size, int flags);
void dallocx(void *p, int flags);
void sdallocx(void *p, size_t size, int flags);

static pthread_barrier_t go;

/* 5000 x mallocx(16 + i % 1000), rallocx'd to 32 + i % 2000; 2500 x malloc(100) */
static __attribute__((noinline)) void *work(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&go);
	for (int i = 0; i < 5000; i++) {
		void *p = rallocx(mallocx(16 + i % 1000, 0), 32 + i % 2000, 0);

		if (i & 1) {
			dallocx(p, 0);
		} else {
			sdallocx(malloc(100), 100, 0);
			free(p);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t[4];

	pthread_barrier_init(&go, NULL, 4);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}
