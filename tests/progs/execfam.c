/* SPDX-License-Identifier: MIT */
/*
 * execfam.c - the exec family's less common doors, succeeding and failing
 * (tests/preload-execfail.t). Each mode spins 100 ms of CPU time in
 * spin_site() first, so that the image has samples of its own.
 *   execfam execveat     execveat(AT_FDCWD, "/bin/sh", sh -c 'exit 3')
 *   execfam sysexec      the same through syscall(SYS_execve)
 *   execfam sysexecat    the same through syscall(SYS_execveat)
 *   execfam fail KIND    an exec that fails, then 100 ms more in
 *                        after_site() (which calls spin_site()), exit 0;
 *                        prints "KIND ret errno" (errno as the call left
 *                        it): KIND execve (nointerp.h's script: ENOENT
 *                        after the library finished its file), missing
 *                        (execve of a missing file: ENOENT before it would),
 *                        execveat (the script), fexecve (an fd of /dev/null:
 *                        EACCES), fexecvebad (fd 99: EBADF), sysexec (the script),
 *                        spawn (posix_spawn of a missing file: its error),
 *                        vfork (vfork, execve of a missing file, _exit(127):
 *                        the child's status)
 *   execfam threads      two threads spin in worker_site() while the main
 *                        thread's execve of the script fails, then in
 *                        worker_after() for 200 ms of CPU time each
 *   execfam threadsidle  the same, the two threads asleep until the exec
 *                        failed (the image has no sample at its exec: it
 *                        hands its name on, and goes on in its file)
 *   execfam storm N      4 threads each execve the script N times at once,
 *                        then after_site() 100 ms; prints "storm FAILED
 *                        ERRNO" (the execs that failed, the last errno) and
 *                        "pid PID", then waits (at most 20 s) for a file
 *                        ./storm.go before it exits 0
 *   execfam cancel       20 rounds of 4 threads that execve the script in a
 *                        loop (pthread_testcancel between), cancelled and
 *                        joined after 2 ms; prints "cancel done"
 *   execfam forksig      fork and wait 300 times while another thread sends
 *                        SIGUSR1 every ms, whose handler execs the script
 *                        (an exec inside fork(), async-signal-safe); prints
 *                        "forksig done"
 *   execfam sigflip      for 100 ms the main thread sets SIGPROF and
 *                        SIGVTALRM to SIG_IGN and back to what it read
 *                        (SIG_DFL), while one thread spins and another
 *                        execs the script in a loop; no timer is armed, so
 *                        without the library no such signal exists; prints
 *                        "sigflip done"
 *   execfam exitrace US  4 threads and main start together: main spins US
 *                        microseconds and exit(42)s, thread k spins k*200 us
 *                        and execs sh -c 'exit 5' (status 5 or 42, a race)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nointerp.h"

extern char **environ;
static volatile unsigned long sink;

__attribute__((noinline)) void spin_site(double seconds)
{
	struct timespec a, b;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

/* The work after a failed exec: its samples tell that profiling went on. */
__attribute__((noinline)) void after_site(double seconds)
{
	spin_site(seconds);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static volatile int execd;

static int idle;

__attribute__((noinline)) void worker_site(void)
{
	while (!execd)
		if (idle)
			usleep(1000);
		else
			for (int i = 0; i < 10000; i++)
				sink += (unsigned long)i;
}

__attribute__((noinline)) void worker_after(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < 0.2);
}

static void *worker(void *arg)
{
	(void)arg;
	worker_site();
	worker_after();
	return NULL;
}

/* The main thread's exec fails while two more threads work. */
static int threads(void)
{
	char *args[] = {"missing", NULL};
	pthread_t th[2];
	int ret, err;

	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	if (!idle)
		spin_site(0.05);
	ret = execve(nointerp_path(), args, environ);
	err = errno;
	execd = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("threads %d %d\n", ret, err);
	return 0;
}

static int storm_n, storm_failed, storm_errno;

static void *storm_thread(void *arg)
{
	char *args[] = {"missing", NULL};

	for (int i = 0; i < storm_n; i++)
		if (execve((const char *)arg, args, environ) < 0) {
			__atomic_add_fetch(&storm_failed, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&storm_errno, errno, __ATOMIC_RELAXED);
		}
	return NULL;
}

/* Four threads' execs that fail at once; then wait to be looked at (autoprof ctl). */
static int storm(int n)
{
	const char *script = nointerp_path();
	pthread_t th[4];

	storm_n = n;
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, storm_thread, (void *)script);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	after_site(0.1);
	printf("storm %d %d\npid %d\n", storm_failed, storm_errno, (int)getpid());
	fflush(stdout);
	for (int i = 0; i < 2000 && access("storm.go", F_OK); i++)
		usleep(10000);
	return 0;
}

static void *cancel_thread(void *arg)
{
	char *args[] = {"missing", NULL};

	for (;;) {
		execve((const char *)arg, args, environ);
		pthread_testcancel();
	}
	return NULL;
}

/* Threads cancelled while they exec (execve is no cancellation point; the wrappers' work is). */
static int cancel(void)
{
	const char *script = nointerp_path();
	struct timespec ts = {0, 2000000};
	pthread_t th[4];

	for (int r = 0; r < 20; r++) {
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, cancel_thread, (void *)script);
		nanosleep(&ts, NULL);
		for (int i = 0; i < 4; i++)
			pthread_cancel(th[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
	}
	puts("cancel done");
	return 0;
}

static const char *forksig_script;
static volatile int forksig_over;

static void forksig_handler(int sig)
{
	char *args[] = {"missing", NULL};
	int saved = errno;

	(void)sig;
	execve(forksig_script, args, environ);
	errno = saved;
}

static void *forksig_thread(void *arg)
{
	struct timespec ts = {0, 1000000};

	while (!forksig_over) {
		pthread_kill(*(pthread_t *)arg, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* A handler's exec that interrupts fork() (the atfork handlers hold their locks). */
static int forksig(void)
{
	pthread_t self = pthread_self(), th;

	forksig_script = nointerp_path();
	signal(SIGUSR1, forksig_handler);
	pthread_create(&th, NULL, forksig_thread, &self);
	for (int i = 0; i < 300; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	forksig_over = 1;
	pthread_join(th, NULL);
	puts("forksig done");
	return 0;
}

static volatile int sigflip_over;

static void *sigflip_spin(void *arg)
{
	while (!sigflip_over)
		spin_site(0.001);
	return arg;
}

static void *sigflip_exec(void *arg)
{
	char *args[] = {"missing", NULL};

	while (!sigflip_over)
		execve(arg, args, environ);
	return NULL;
}

/* The sampling signal, and the one it moves to, taken and given back while execs fail. */
static int sigflip(void)
{
	const int sigs[] = {SIGPROF, SIGVTALRM};
	struct sigaction ign, old;
	struct timespec t0, t1;
	pthread_t th[2];

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	pthread_create(&th[0], NULL, sigflip_spin, NULL);
	pthread_create(&th[1], NULL, sigflip_exec, (void *)nointerp_path());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 2; i++) {
			sigaction(sigs[i], &ign, &old);
			sigaction(sigs[i], &old, NULL);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 100);
	sigflip_over = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	puts("sigflip done");
	return 0;
}

static pthread_barrier_t exitrace_start;

/* Spin us microseconds by the monotonic clock. */
static void exitrace_spin(long us)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t1);
	while ((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void *exitrace_thread(void *arg)
{
	char *sh[] = {"sh", "-c", "exit 5", NULL};

	pthread_barrier_wait(&exitrace_start);
	exitrace_spin(200 * (long)arg);
	execve("/bin/sh", sh, environ);
	return NULL;
}

/* Execs of other threads racing the main thread's exit. */
static int exitrace(long us)
{
	pthread_t th;

	pthread_barrier_init(&exitrace_start, NULL, 5);
	for (long k = 1; k <= 4; k++)
		pthread_create(&th, NULL, exitrace_thread, (void *)k);
	pthread_barrier_wait(&exitrace_start);
	exitrace_spin(us);
	exit(42);
}

static int fail(const char *kind)
{
	static const char missing[] = "/nonexistent/execfam-missing";
	const char *script = nointerp_path();
	char *args[] = {"missing", NULL};
	long ret = 0;
	int st = 0;
	pid_t pid;

	errno = 0;
	if (!strcmp(kind, "execve")) {
		ret = execve(script, args, environ);
	} else if (!strcmp(kind, "missing")) {
		ret = execve(missing, args, environ);
	} else if (!strcmp(kind, "execveat")) {
		ret = execveat(AT_FDCWD, script, args, environ, 0);
	} else if (!strcmp(kind, "fexecve")) {
		ret = fexecve(open("/dev/null", O_RDONLY | O_CLOEXEC), args, environ);
	} else if (!strcmp(kind, "fexecvebad")) {
		ret = fexecve(99, args, environ);
	} else if (!strcmp(kind, "sysexec")) {
		ret = syscall(SYS_execve, script, args, environ);
	} else if (!strcmp(kind, "spawn")) {
		ret = posix_spawn(&pid, missing, NULL, NULL, args, environ);
		if (!ret)
			waitpid(pid, &st, 0);
		ret = ret ? ret : st;
	} else if (!strcmp(kind, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execve(missing, args, environ);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		ret = st;
	} else {
		return 2;
	}
	printf("%s %ld %d\n", kind, ret, errno);
	fflush(stdout);
	after_site(0.1);
	return 0;
}

int main(int argc, char **argv)
{
	char *sh[] = {"sh", "-c", "exit 3", NULL};

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "exitrace") && argc > 2)
		return exitrace(atol(argv[2])); /* at once: the race is in its first ms */
	if (!strcmp(argv[1], "threadsidle")) {
		idle = 1;
		return threads();
	}
	spin_site(0.1);
	if (!strcmp(argv[1], "execveat"))
		execveat(AT_FDCWD, "/bin/sh", sh, environ, 0);
	else if (!strcmp(argv[1], "sysexec"))
		syscall(SYS_execve, "/bin/sh", sh, environ);
	else if (!strcmp(argv[1], "sysexecat"))
		syscall(SYS_execveat, AT_FDCWD, "/bin/sh", sh, environ, 0);
	else if (!strcmp(argv[1], "threads"))
		return threads();
	else if (!strcmp(argv[1], "fail") && argc > 2)
		return fail(argv[2]);
	else if (!strcmp(argv[1], "storm") && argc > 2)
		return storm(atoi(argv[2]));
	else if (!strcmp(argv[1], "cancel"))
		return cancel();
	else if (!strcmp(argv[1], "forksig"))
		return forksig();
	else if (!strcmp(argv[1], "sigflip"))
		return sigflip();
	return 2;
}
