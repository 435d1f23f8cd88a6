// memcases.c - the allocator's functions and the hard cases of AUTOPROF_MEMORY,
// each at a site of its own with known sizes. Usage: memcases MODE
//   funcs    each allocator function once per site, 100 times: every block
//            is leaked except those of free_site; prints "usable OK" when
//            malloc_usable_size saw at least the size asked for
//   realloc  moving_site mallocs a 1000-byte block, and grow_site reallocs it
//            to 1 MiB (it moves: a block sits after it), leaked
//   threads  maker() allocates 20000 blocks of 512 bytes that another thread
//            frees; kept() 100 blocks of 777 bytes that stay
//   fork     before_fork() leaks 100 x 1000 bytes, then the child leaks
//            in_child() 100 x 3000 bytes and exits; the parent waits
//   term     before_term() leaks 10 x 1 MiB, then the program raises SIGTERM
//   windows  step() leaks 1 MiB, then spins for 300 ms of CPU time, 4 times
//   dump F   dump_keep() leaks 100 x 2000 bytes, dump_gone() allocates 100 x
//            3000 bytes; prints "ready", waits (20 s at most) for file F to
//            exist (the test runs `autoprof ctl PID dump` meanwhile), frees
//            dump_gone's blocks and exits
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *keep[1 << 16]; /* not static: the allocations must stay */
int nkeep;

extern void *__libc_malloc(size_t);

#define SITE(name, expr)                                                                           \
	__attribute__((noinline)) void name(void)                                                  \
	{                                                                                          \
		for (int i = 0; i < 100; i++)                                                      \
			keep[nkeep++] = (expr);                                                    \
	}

SITE(malloc_site, malloc(1001))
SITE(calloc_site, calloc(3, 1002))
SITE(realloc_site, realloc(NULL, 1003))
SITE(reallocarray_site, reallocarray(NULL, 4, 1004))
SITE(aligned_alloc_site, aligned_alloc(64, 1024 * 5))
SITE(memalign_site, memalign(128, 1006))
SITE(valloc_site, valloc(1007))
SITE(pvalloc_site, pvalloc(1008))
SITE(libc_malloc_site, __libc_malloc(1009))

__attribute__((noinline)) void posix_memalign_site(void)
{
	for (int i = 0; i < 100; i++)
		if (posix_memalign(&keep[nkeep++], 256, 1010))
			abort();
}

__attribute__((noinline)) void free_site(void)
{
	for (int i = 0; i < 100; i++) {
		char *p = malloc(1011);
		p[0] = 1;
		keep[nkeep] = p;
		free(p);
	}
}

static int funcs(void)
{
	int good = 1;

	malloc_site();
	calloc_site();
	realloc_site();
	reallocarray_site();
	aligned_alloc_site();
	memalign_site();
	valloc_site();
	pvalloc_site();
	libc_malloc_site();
	posix_memalign_site();
	free_site();
	for (int i = 0; i < 100; i++)
		good &= malloc_usable_size(keep[i]) >= 1001;
	printf("usable %s\n", good ? "OK" : "WRONG");
	return 0;
}

static char *volatile last; /* a store after the call: no tail call, the site is on the stack */

__attribute__((noinline)) char *moving_site(void)
{
	char *p = malloc(1000);

	last = p;
	return p;
}

__attribute__((noinline)) char *grow_site(char *p)
{
	char *q = realloc(p, 1 << 20);

	last = q;
	return q;
}

static int moves(void)
{
	char *p = moving_site(), *q;

	memset(p, 7, 1000);
	keep[0] = malloc(1000); /* after p: p cannot grow in place */
	q = grow_site(p);
	printf("moved %s, contents %s\n", q != p ? "yes" : "no", q[999] == 7 ? "kept" : "LOST");
	keep[1] = q;
	return 0;
}

#define HANDED 20000
static char *handed[HANDED];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int made, freed;

__attribute__((noinline)) static void maker(void)
{
	for (int i = 0; i < HANDED; i++) {
		char *p = malloc(512);
		p[0] = 1;
		pthread_mutex_lock(&lock);
		handed[made++] = p;
		pthread_mutex_unlock(&lock);
	}
}

__attribute__((noinline)) void kept(void)
{
	for (int i = 0; i < 100; i++)
		keep[nkeep++] = malloc(777);
}

static void *freer(void *arg)
{
	(void)arg;
	while (freed < HANDED) {
		char *p = NULL;

		pthread_mutex_lock(&lock);
		if (freed < made)
			p = handed[freed++];
		pthread_mutex_unlock(&lock);
		if (p)
			free(p);
	}
	return NULL;
}

static void *making(void *arg)
{
	(void)arg;
	maker();
	kept();
	return NULL;
}

static int threads(void)
{
	pthread_t a, b;

	pthread_create(&b, NULL, freer, NULL);
	pthread_create(&a, NULL, making, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("freed %d of %d\n", freed, made);
	return 0;
}

__attribute__((noinline)) void before_fork(void)
{
	for (int i = 0; i < 100; i++)
		keep[nkeep++] = malloc(1000);
}

__attribute__((noinline)) void in_child(void)
{
	for (int i = 0; i < 100; i++)
		keep[nkeep++] = malloc(3000);
}

static int forks(void)
{
	int status;
	pid_t pid;

	before_fork();
	pid = fork();
	if (pid == 0) {
		in_child();
		exit(0);
	}
	waitpid(pid, &status, 0);
	printf("child %d exited %d\n", (int)pid, WEXITSTATUS(status));
	return 0;
}

__attribute__((noinline)) void before_term(void)
{
	for (int i = 0; i < 10; i++)
		keep[nkeep++] = malloc(1 << 20);
}

__attribute__((noinline)) void step(void)
{
	keep[nkeep++] = malloc(1 << 20);
}

static int windows(void)
{
	for (int i = 0; i < 4; i++) {
		clock_t end = clock() + CLOCKS_PER_SEC * 3 / 10;

		step();
		while (clock() < end)
			;
	}
	return 0;
}

__attribute__((noinline)) void dump_keep(void)
{
	for (int i = 0; i < 100; i++)
		keep[nkeep++] = malloc(2000);
}

static void *gone[100];

__attribute__((noinline)) void dump_gone(void)
{
	for (int i = 0; i < 100; i++)
		gone[i] = malloc(3000);
}

static int dumps(const char *go)
{
	struct timespec tick = {0, 10 * 1000 * 1000};

	dump_keep();
	dump_gone();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < 2000 && access(go, F_OK); i++)
		nanosleep(&tick, NULL);
	for (int i = 0; i < 100; i++)
		free(gone[i]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "funcs";

	if (!strcmp(mode, "funcs"))
		return funcs();
	if (!strcmp(mode, "realloc"))
		return moves();
	if (!strcmp(mode, "threads"))
		return threads();
	if (!strcmp(mode, "fork"))
		return forks();
	if (!strcmp(mode, "windows"))
		return windows();
	if (!strcmp(mode, "dump") && argc > 2)
		return dumps(argv[2]);
	if (!strcmp(mode, "term")) {
		before_term();
		fflush(stdout);
		raise(SIGTERM);
		return 0;
	}
	fprintf(stderr, "memcases: unknown mode %s\n", mode);
	return 2;
}
