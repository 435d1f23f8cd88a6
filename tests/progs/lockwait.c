/*
 * lockwait.c - one function, locked_update(), that both waits for a mutex
 * and sleeps, for tests/offcpu-leaf.t: two threads run it ROUNDS times; each
 * holds the lock for 2 ms of sleep (usleep inside the lock), so the other
 * waits for it in pthread_mutex_lock, then sleeps 1 ms more outside it
 * (nanosleep). An off-CPU profile tells the three apart only by the
 * blocking call: pthread_mutex_lock, usleep and nanosleep, all under
 * locked_update. A third thread reads a pipe the main thread writes at the end;
 * a fourth parks ROUNDS times 1 ms on a futex of its own through syscall(),
 * as Rust's std and other runtimes do, in park().
 *
 * usage: lockwait [rounds]   (default 100)
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds = 100, pipefd[2];
static volatile unsigned long counter;

static __attribute__((noinline)) void locked_update(void)
{
	struct timespec ts = {0, 1000000};

	pthread_mutex_lock(&lock);
	counter++;
	usleep(2000);
	pthread_mutex_unlock(&lock);
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++)
		locked_update();
	return NULL;
}

static __attribute__((noinline)) void *reader(void *arg)
{
	char c;

	(void)arg;
	if (read(pipefd[0], &c, 1) != 1)
		perror("lockwait: read");
	return NULL;
}

/* A futex wait of 1 ms that nothing wakes (ETIMEDOUT), through syscall(). */
static __attribute__((noinline)) void park(void)
{
	static int word;
	struct timespec ts = {0, 1000000};

	syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

static void *parker(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++)
		park();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (pipe(pipefd) < 0)
		return 1;
	pthread_create(&th[2], NULL, reader, NULL);
	pthread_create(&th[3], NULL, parker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_join(th[3], NULL);
	if (write(pipefd[1], "x", 1) != 1)
		return 1;
	pthread_join(th[2], NULL);
	printf("lockwait: %lu updates\n", counter);
	return 0;
}
