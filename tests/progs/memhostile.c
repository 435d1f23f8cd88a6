// memhostile.c - hostile cases for memory profiles (tests/memory-hostile.t),
// each at sites of its own with known sizes. Usage: memhostile MODE
//   oom   sets RLIMIT_AS to its address space now plus 64 MiB, leaks 6000
//         blocks of distinct sizes (18 MB) at leak_known (prints "site leak_known
//         BYTES"), then fills the address space at fill (1 MiB blocks, then
//         64 KiB, then 4 KiB, until malloc fails: "fill BYTES", which
//         differs from run to run) and exits with status 3, as a program
//         that ran out of memory does
//   seccomp  a thread enters a seccomp filter that kills the process on
//         gettid, getpid, sched_yield, write, pwrite64, writev and openat,
//         then allocates and frees (box_churn), frees every block the main
//         thread allocated (main_made, 2000 x 1000 bytes), leaks 10 x 1000
//         bytes (box_leak) and starts a thread that does the same
//         (inheriting the filter); the main thread leaks 5 x 3000 bytes
//         (main_leak) and prints "site NAME BYTES" for the leaks
//   fsize  sets RLIMIT_FSIZE to 256 KiB (for files of its own), then
//         allocates and frees 200000 blocks (churn) and leaks 12345 bytes
//         (fsize_leak): a memory profile of every allocation outgrows the
//         limit, the program must not get SIGXFSZ for it
//   exitsig  forks 100 children that each allocate and free in a loop
//         until a timer's handler calls exit(0) (2 to 5 ms in): prints
//         "children 100 hung H bad B", H those still there after 10 s
//         (killed), B those that ended otherwise than with status 0
//   forksig  allocates and frees in a loop while a timer's handler (every
//         20 ms) forks a child that exits at once, 30 times; then leaks
//         5 x 1000 bytes (forksig_leak): prints "forks 30 bad B"
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The address space mapped now (statm's first field), in bytes. */
static size_t address_space(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	size_t pages = 0;

	if (f) {
		if (fscanf(f, "%zu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * 4096;
}

void *volatile last; /* not static: the allocations must stay */

__attribute__((noinline)) size_t leak_known(void)
{
	size_t bytes = 0;

	for (size_t i = 0; i < 6000; i++) {
		last = malloc(16 + i);
		if (!last)
			return 0;
		bytes += 16 + i;
	}
	return bytes;
}

__attribute__((noinline)) size_t fill(size_t size)
{
	size_t bytes = 0;

	while ((last = malloc(size)))
		bytes += size;
	return bytes;
}

static int oom(void)
{
	struct rlimit r = {address_space() + (64 << 20), RLIM_INFINITY};
	size_t filled = 0;

	if (setrlimit(RLIMIT_AS, &r)) {
		perror("setrlimit");
		return 1;
	}
	printf("site leak_known %zu\n", leak_known());
	for (size_t size = 1 << 20; size >= 4096; size /= 16) {
		filled += fill(size);
		if (errno != ENOMEM)
			printf("malloc failed with errno %d, not ENOMEM\n", errno);
	}
	printf("fill %zu\n", filled);
	return 3;
}

#define KILL_ON(nr)                                                                                \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                           \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

static void sandbox(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    KILL_ON(SYS_gettid),
	    KILL_ON(SYS_getpid),
	    KILL_ON(SYS_sched_yield),
	    KILL_ON(SYS_write),
	    KILL_ON(SYS_pwrite64),
	    KILL_ON(SYS_writev),
	    KILL_ON(SYS_openat),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		abort();
}

static void *main_blocks[2000];
static void *box_kept[20];

__attribute__((noinline)) void main_made(void)
{
	for (int i = 0; i < 2000; i++)
		main_blocks[i] = malloc(1000);
}

__attribute__((noinline)) void main_leak(void)
{
	for (int i = 0; i < 5; i++)
		last = malloc(3000);
}

__attribute__((noinline)) void box_churn(void)
{
	for (int i = 0; i < 20000; i++)
		free(malloc(16 + i % 4000));
}

__attribute__((noinline)) void box_leak(int h)
{
	for (int i = 0; i < 10; i++)
		box_kept[h * 10 + i] = malloc(1000);
}

/* In the sandbox (inherited or entered): churn, free the main thread's blocks (half each), leak. */
static void *boxed(void *half)
{
	int h = (int)(long)half;

	box_churn();
	for (int i = h * 1000; i < (h + 1) * 1000; i++)
		free(main_blocks[i]);
	box_leak(h);
	return NULL;
}

static void *boxer(void *unused)
{
	pthread_t t;

	(void)unused;
	sandbox();
	boxed((void *)0L);
	if (pthread_create(&t, NULL, boxed, (void *)1L) || pthread_join(t, NULL))
		abort();
	return NULL;
}

static int seccomp(void)
{
	pthread_t t;

	main_made();
	main_leak();
	if (pthread_create(&t, NULL, boxer, NULL) || pthread_join(t, NULL))
		return 1;
	printf("site main_leak 15000\nsite box_leak 20000\nsite main_made 0\n");
	return 0;
}

__attribute__((noinline)) void churn(void)
{
	for (int i = 0; i < 200000; i++) {
		last = malloc(16 + i % 1000);
		free(last);
	}
}

__attribute__((noinline)) void fsize_leak(void)
{
	last = malloc(12345);
}

static int fsize(void)
{
	struct rlimit r = {256 << 10, 256 << 10};

	if (setrlimit(RLIMIT_FSIZE, &r))
		return 1;
	churn();
	fsize_leak();
	printf("done\n");
	return 0;
}

static void exit_now(int signo)
{
	(void)signo;
	exit(0);
}

__attribute__((noinline)) void until_exit(int k)
{
	struct itimerval it = {{0, 0}, {0, 2000 + (k * 37) % 3000}};

	signal(SIGALRM, exit_now);
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned i = 0;; i++) {
		last = malloc(16 + i % 200);
		free(last);
	}
}

static int exitsig(void)
{
	int hung = 0, bad = 0;

	for (int k = 0; k < 100; k++) {
		pid_t c = fork(), r = 0;
		int st = 0;

		if (c == 0)
			until_exit(k);
		for (int w = 0; w < 1000 && !(r = waitpid(c, &st, WNOHANG)); w++)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
		if (!r) {
			hung++;
			kill(c, SIGKILL);
			waitpid(c, &st, 0);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			bad++;
		}
	}
	printf("children 100 hung %d bad %d\n", hung, bad);
	return 0;
}

static volatile int forks, forks_bad;

static void fork_now(int signo)
{
	int saved = errno, st;
	pid_t c;

	(void)signo;
	c = fork();
	if (c == 0)
		_exit(0);
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
		forks_bad++;
	forks++;
	errno = saved;
}

__attribute__((noinline)) void forksig_leak(void)
{
	for (int i = 0; i < 5; i++)
		last = malloc(1000);
}

static int forksig(void)
{
	struct sigaction sa = {.sa_handler = fork_now, .sa_flags = SA_RESTART};
	struct itimerval it = {{0, 20000}, {0, 20000}}, off = {{0, 0}, {0, 0}};

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned i = 0; forks < 30; i++) {
		last = malloc(16 + i % 200);
		free(last);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	forksig_leak();
	printf("forks 30 bad %d\n", forks_bad);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "oom"))
		return oom();
	if (!strcmp(mode, "seccomp"))
		return seccomp();
	if (!strcmp(mode, "fsize"))
		return fsize();
	if (!strcmp(mode, "exitsig"))
		return exitsig();
	if (!strcmp(mode, "forksig"))
		return forksig();
	fprintf(stderr, "usage: memhostile oom|seccomp|fsize|exitsig|forksig\n");
	return 2;
}
