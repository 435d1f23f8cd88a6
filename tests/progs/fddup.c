/*
 * fddup.c - a program that takes descriptor numbers the profiler may hold.
 *
 * usage: fddup MODE
 *   dup2    dup2, dup3 and fcntl(F_DUPFD/F_DUPFD_CLOEXEC) of its own file onto
 *           1000..1010, writes one byte through each, computes, and prints the
 *           numbers it got and what its file holds;
 *   pipe    dup2s a pipe's write end onto 1000..1010, closes them all and
 *           reads the pipe to its end (EOF only if no copy is left open);
 *   rawclose  closes 1000..1023 with raw close system calls, dup2s (raw) its
 *           own file onto them, computes, and prints what its file holds;
 *   rlimit [N]  RLIMIT_NOFILE 1024, N threads started (default 64), then opens
 *           /dev/null until it cannot, and prints how many it opened;
 *   tight WHEN  RLIMIT_NOFILE 16/16 (the hard limit too) set before the fork
 *           (WHEN=before), in the child after it (after), or before the child
 *           execs itself as "tight count" (exec); the child opens /dev/null
 *           until it cannot, then its two threads and itself compute with
 *           every number taken, and it prints how many it opened; the parent
 *           then does the same and prints its count;
 *   tight count  the exec'd child's part alone.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

/* Compute for about ms milliseconds of CPU time (the profiler flushes meanwhile). */
static void burn(int ms)
{
	struct timespec ts;
	double end, now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 + ms;
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005ULL + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	} while (now < end);
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 ? -1 : (long)st.st_size;
}

static int mode_dup2(void)
{
	int fd = open("own.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644), got[14], n = 0;

	for (int target = 1000; target <= 1006; target++)
		got[n++] = dup2(fd, target);
	for (int target = 1007; target <= 1010; target++)
		got[n++] = dup3(fd, target, O_CLOEXEC);
	for (int target = 1000; target <= 1010; target++)
		if (write(target, "x", 1) != 1)
			printf("write to %d failed\n", target);
	burn(400);
	for (int target = 1000; target <= 1010; target++)
		close(target);
	got[n++] = fcntl(fd, F_DUPFD, 1000);
	got[n++] = fcntl(fd, F_DUPFD_CLOEXEC, 1000);
	got[n++] = fcntl(fd, F_DUPFD, 999);
	if (write(got[n - 3], "y", 1) != 1)
		printf("write failed\n");
	burn(300);
	for (int i = 0; i < n; i++)
		printf("%d%s", got[i], i + 1 < n ? " " : "\n");
	printf("cloexec of %d: %d\n", got[n - 2], fcntl(got[n - 2], F_GETFD) & FD_CLOEXEC);
	printf("own.txt holds %ld bytes\n", file_size("own.txt"));
	return 0;
}

static int mode_pipe(void)
{
	int p[2];
	char buf[64];
	ssize_t r, total = 0;

	if (pipe(p))
		return 1;
	for (int target = 1000; target <= 1010; target++)
		if (dup2(p[1], target) != target)
			printf("dup2 onto %d failed\n", target);
	close(p[1]);
	burn(300);
	for (int target = 1000; target <= 1010; target++) {
		if (write(target, "z", 1) != 1)
			printf("write to %d failed\n", target);
		close(target);
	}
	while ((r = read(p[0], buf, sizeof(buf))) > 0)
		total += r;
	printf("read %zd bytes, then end of file\n", total);
	return 0;
}

static int mode_rawclose(void)
{
	int fd = open("own.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	burn(100);
	for (int target = 1000; target <= 1023; target++) {
		syscall(SYS_close, target);
		syscall(SYS_dup2, fd, target);
	}
	if (write(fd, "abc", 3) != 3)
		printf("write failed\n");
	burn(500);
	printf("own.txt holds %ld bytes\n", file_size("own.txt"));
	return 0;
}

static pthread_barrier_t ready, done;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	return NULL;
}

static int mode_rlimit(int n)
{
	struct rlimit rl = {1024, 1024};
	pthread_t th[256];
	int opened = 0;

	if (n < 0 || n > 256 || setrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	pthread_barrier_init(&ready, NULL, (unsigned)n + 1);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, waiter, NULL);
	pthread_barrier_wait(&ready);
	while (open("/dev/null", O_RDONLY) >= 0)
		opened++;
	pthread_barrier_wait(&done);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("opened %d files with %d threads running\n", opened, n);
	return 0;
}

static pthread_barrier_t up, go;

static void *burner(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&up);
	pthread_barrier_wait(&go);
	burn(100);
	return NULL;
}

/*
 * Start two threads (sampled from their start), open /dev/null until
 * refused, then compute on all three with every number taken: their samples
 * are written while the program holds every fd its limit allows.
 */
static int fill_and_burn(const char *who)
{
	pthread_t th[2];
	int opened = 0;

	burn(100);
	pthread_barrier_init(&up, NULL, 3);
	pthread_barrier_init(&go, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, burner, NULL);
	pthread_barrier_wait(&up);
	while (open("/dev/null", O_RDONLY) >= 0)
		opened++;
	pthread_barrier_wait(&go);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	burn(100);
	printf("%s opened %d files under RLIMIT_NOFILE 16/16\n", who, opened);
	fflush(stdout);
	return 0;
}

static int mode_tight(const char *when, const char *self)
{
	struct rlimit rl = {16, 16};
	int status = 0;
	pid_t pid;

	if (!strcmp(when, "count"))
		return fill_and_burn("child");
	if (strcmp(when, "after") && setrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!strcmp(when, "exec")) {
			execl(self, self, "tight", "count", (char *)NULL);
			_exit(127);
		}
		if (!strcmp(when, "after") && setrlimit(RLIMIT_NOFILE, &rl))
			_exit(1);
		exit(fill_and_burn("child"));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return 1;
	if (!strcmp(when, "after") && setrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	return fill_and_burn("parent");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "dup2"))
		return mode_dup2();
	if (!strcmp(mode, "pipe"))
		return mode_pipe();
	if (!strcmp(mode, "rawclose"))
		return mode_rawclose();
	if (!strcmp(mode, "rlimit"))
		return mode_rlimit(argc > 2 ? atoi(argv[2]) : 64);
	if (!strcmp(mode, "tight") && argc > 2)
		return mode_tight(argv[2], argv[0]);
	fprintf(stderr, "usage: fddup dup2|pipe|rawclose|rlimit|tight WHEN\n");
	return 2;
}
