/* SPDX-License-Identifier: MIT */
/*
 * misc.c MODE - programs that check what they get back:
 *   errno     errno after failing calls the profiler may wrap, and errno
 *             kept across computation in threads (handlers must restore it).
 *   altstack  handlers on a sigaltstack: a SIGUSR1 handler checks it runs
 *             there, a SIGSEGV handler catches a stack overflow.
 *   sigwait   blocks every signal in every thread, computes in threads and
 *             takes SIGUSR1 and SIGTERM (sent by a thread) with sigwait.
 *   longjmp   siglongjmp out of a SIGSEGV handler 2000 times while
 *             computing, and longjmp (mask kept blocked) out of SIGALRM.
 *   env       prints its environment sorted, less LD_PRELOAD and AUTOPROF_*.
 *   rlimit    sets and reads back several rlimits, then uses them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hot.h"

extern char **environ;

#define E(call, want)                                                                              \
	do {                                                                                       \
		errno = 0;                                                                         \
		long r_ = (long)(call);                                                            \
		int e_ = errno;                                                                    \
		printf("%-40s -> %ld errno %s%s\n", #call, r_, strerrorname_np(e_) ?: "0",         \
		       e_ == (want) ? "" : " (unexpected)");                                       \
	} while (0)

static void *errno_keeper(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < 2000; i++) {
		errno = 1000 + i;
		hostile_hot(50000UL);
		bad += errno != 1000 + i;
	}
	return (void *)bad;
}

static int errno_mode(void)
{
	pthread_t t[2];
	sigset_t m;
	long bad = 0;
	pid_t pid;
	char *args[] = {"/nonexistent", NULL};

	E(close(-1), EBADF);
	E(close(1000), EBADF);
	E(close(4000), EBADF);
	E(dup2(1, -1), EBADF);
	E(dup2(4000, 5), EBADF);
	E(dup3(1, 1, 0), EINVAL);
	E(fcntl(4000, F_DUPFD, 0), EBADF);
	E(sigaction(SIGKILL, &(struct sigaction){.sa_handler = SIG_IGN}, NULL), EINVAL);
	E(sigaction(0, NULL, NULL), EINVAL);
	E(sigaction(65, NULL, NULL), EINVAL);
	E(signal(SIGSTOP, SIG_IGN) == SIG_ERR, EINVAL);
	E(sigprocmask(99, &m, NULL), EINVAL);
	E(pthread_sigmask(99, &m, NULL), 0);
	E(prctl(9999, 0, 0, 0, 0), EINVAL);
	E(execv("/nonexistent", args), ENOENT);
	E(posix_spawn(&pid, "/nonexistent", NULL, NULL, args, environ), ENOENT);
	E(dlopen("/nonexistent.so", RTLD_NOW) != NULL, 0);
	E(close_range(5, 3, 0), EINVAL);
	E(syscall(SYS_close_range, 3, 2, 0), EINVAL);
	E(setrlimit(RLIMIT_NOFILE, &(struct rlimit){10, 5}), EINVAL);
	E(open("/nonexistent/x", O_RDONLY), ENOENT);
	E(sigaltstack(&(stack_t){.ss_size = 10}, NULL), ENOMEM);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, errno_keeper, NULL);
	for (int i = 0; i < 2; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("errno changed under the program %ld times\n", bad);
	return 0;
}

static char *alt_lo, *alt_hi;
static volatile sig_atomic_t on_alt, segv_caught;
static sigjmp_buf jb;

static void usr1_on_alt(int sig)
{
	char here;

	(void)sig;
	on_alt += &here >= alt_lo && &here < alt_hi;
}

static void segv_to_jump(int sig)
{
	(void)sig;
	segv_caught++;
	siglongjmp(jb, 1);
}

__attribute__((noinline)) static int recurse(volatile char *p, int depth)
{
	volatile char buf[512];

	if (depth > (1 << 30))
		return 0;

	buf[0] = p ? p[0] + 1 : 0;
	return recurse(buf, depth + 1) + buf[0];
}

static int altstack_mode(void)
{
	size_t size = 1 << 16;
	stack_t ss = {.ss_sp = malloc(size), .ss_size = size}, back;
	struct sigaction sa;

	alt_lo = ss.ss_sp;
	alt_hi = alt_lo + size;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_on_alt;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = segv_to_jump;
	sa.sa_flags = SA_ONSTACK | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	for (int i = 0; i < 200; i++) {
		hostile_hot(1000000UL);
		raise(SIGUSR1);
	}
	printf("usr1 handler ran on the alternate stack %d of 200 times\n", on_alt);
	if (sigsetjmp(jb, 1) == 0)
		recurse(NULL, 0);
	printf("stack overflow caught %d\n", segv_caught);
	sigaltstack(NULL, &back);
	printf("sigaltstack read back: same %d size %zu flags %d\n", back.ss_sp == ss.ss_sp,
	       back.ss_size, back.ss_flags);
	return 0;
}

static void *sigwait_worker(void *arg)
{
	long i = (long)arg;

	hostile_hot(150000000UL);
	if (i == 0) {
		kill(getpid(), SIGUSR1);
		hostile_hot(50000000UL);
		kill(getpid(), SIGTERM);
	}
	return NULL;
}

static int sigwait_mode(void)
{
	sigset_t all;
	pthread_t t[2];

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, sigwait_worker, (void *)i);
	for (;;) {
		int s = 0;

		if (sigwait(&all, &s))
			return 1;
		printf("sigwait: %d\n", s);
		if (s == SIGTERM)
			break;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static void alrm_jump(int sig)
{
	(void)sig;
	longjmp(jb, 2);
}

static int longjmp_mode(void)
{
	struct sigaction sa;
	volatile int jumps = 0;
	sigset_t m;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = segv_to_jump;
	sigaction(SIGSEGV, &sa, NULL);
	while (jumps < 2000) {
		if (sigsetjmp(jb, 1) == 0) {
			hostile_hot(100000UL);
			*(volatile int *)(uintptr_t)(jumps & 1) = 1;
		} else {
			jumps++;
		}
	}
	printf("jumped out of SIGSEGV %d times\n", jumps);
	sa.sa_handler = alrm_jump;
	sigaction(SIGALRM, &sa, NULL);
	if (setjmp(*(jmp_buf *)&jb) == 0) {
		ualarm(100000, 0);
		for (;;)
			hostile_hot(1000000UL);
	}
	sigprocmask(SIG_SETMASK, NULL, &m);
	printf("after longjmp out of SIGALRM: SIGALRM blocked %d, SIGSEGV blocked %d\n",
	       sigismember(&m, SIGALRM), sigismember(&m, SIGSEGV));
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int env_mode(void)
{
	int n = 0;
	char **v;

	hostile_hot(100000000UL);
	for (char **e = environ; *e; e++)
		n++;
	v = calloc(n + 1, sizeof(*v));
	memcpy(v, environ, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp);
	for (int i = 0; i < n; i++)
		if (strncmp(v[i], "LD_PRELOAD=", 11) && strncmp(v[i], "AUTOPROF_", 9))
			printf("%s\n", v[i]);
	fflush(stdout);
	return system("env | grep -v -e ^LD_PRELOAD= -e ^AUTOPROF_ -e ^_= -e ^SHLVL= "
		      "-e ^PWD= -e ^OLDPWD= | sort") != 0;
}

static void *tiny_worker(void *arg)
{
	return (void *)(hostile_hot(50000000UL) & (long)arg);
}

static int rlimit_mode(void)
{
	static const int which[] = {RLIMIT_NOFILE, RLIMIT_CORE,	      RLIMIT_STACK,
				    RLIMIT_NPROC,  RLIMIT_SIGPENDING, RLIMIT_MEMLOCK};
	struct rlimit rl;
	int n = 0;

	for (unsigned i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		getrlimit(which[i], &rl);
		if (rl.rlim_cur > 64 && rl.rlim_cur != RLIM_INFINITY)
			rl.rlim_cur = rl.rlim_cur / 2;
		else if (rl.rlim_cur == RLIM_INFINITY)
			rl.rlim_cur = 1 << 20;
		setrlimit(which[i], &rl);
		getrlimit(which[i], &rl);
		printf("rlimit %d: %ld\n", which[i], (long)rl.rlim_cur);
	}
	rl.rlim_cur = rl.rlim_max = 24;
	setrlimit(RLIMIT_NOFILE, &rl);
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, tiny_worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	printf("opened %d files under RLIMIT_NOFILE 24\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "errno";

	if (!strcmp(mode, "errno"))
		return errno_mode();
	if (!strcmp(mode, "altstack"))
		return altstack_mode();
	if (!strcmp(mode, "sigwait"))
		return sigwait_mode();
	if (!strcmp(mode, "longjmp"))
		return longjmp_mode();
	if (!strcmp(mode, "env"))
		return env_mode();
	if (!strcmp(mode, "rlimit"))
		return rlimit_mode();
	return 2;
}
