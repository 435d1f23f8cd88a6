/*
 * life.c - the ways a real program lives and ends, one per mode, each after
 * burning some CPU in a function of its own so a profile has something to
 * show. The profiler must keep every sample and change nothing of what the
 * program does: its output, exit status and death by signal.
 *
 * usage: life MODE [dir-of-build/progs]
 *   fork       a child burns in child_work() and exits; the parent waits
 *   forkexec   a child execs split; the parent waits
 *   spawn      posix_spawn of split with an environment of its own (no LD_PRELOAD)
 *   system     system("split 100")
 *   execfail   execv of a script whose interpreter is missing fails; the program goes on
 *   exec       the process itself execs split (same pid)
 *   dlopen     dlopen libhot.so, run hot_in_plugin(), dlclose it, go on
 *   sigint, sigterm, sigsegv, abort, _exit, threadexit (another thread calls exit(4))
 *   sigprof    its own SIGPROF handler with setitimer(ITIMER_PROF); burns until 11
 *              ticks (at most 3 s of CPU) and prints whether they came
 *   closeall   close_range(3, ~0U) mid-run, then goes on burning
 *   fds        checks that fds 3..9 are free at start
 *   sleep      burns 1.5 s more, then sleeps 30 s (for SIGKILL tests)
 *   takesig    installs its own handler for SIGPROF (the profiler's default signal),
 *              raises it, then burns in after_work()
 *   blockall   a thread that blocks every signal burns in child_work()
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nointerp.h"

static volatile uint64_t sink;
static volatile int *volatile bad_pointer; /* NULL: writing through it faults */
static volatile int prof_ticks;

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Each burner computes something different, so the compiler cannot fold them into one. */
#define BURNER(name, seed)                                                                         \
	static __attribute__((noinline, noclone)) void name(double ms)                             \
	{                                                                                          \
		double until = thread_cpu_ms() + ms;                                               \
		uint64_t x = seed;                                                                 \
                                                                                                   \
		while (thread_cpu_ms() < until)                                                    \
			for (int i = 0; i < 4096; i++)                                             \
				x = x * 6364136223846793005ULL + (seed);                           \
		sink = x;                                                                          \
	}

BURNER(parent_work, 11)
BURNER(child_work, 13)
BURNER(after_work, 17)

static void on_prof(int sig)
{
	(void)sig;
	prof_ticks++;
}

static volatile sig_atomic_t got_rt;

static void on_rt(int sig)
{
	(void)sig;
	got_rt = 1;
}

static void *blocked_thread(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	child_work(300);
	return NULL;
}

static void *exit_from_thread(void *arg)
{
	(void)arg;
	child_work(100);
	exit(4);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	const char *dir = argc > 2 ? argv[2] : ".";
	char split[4096], lib[4096];
	pid_t pid;
	int status;

	snprintf(split, sizeof(split), "%s/split", dir);
	snprintf(lib, sizeof(lib), "%s/libhot.so", dir);
	if (!strcmp(mode, "fds")) {
		for (int fd = 3; fd <= 9; fd++)
			if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
				printf("fd %d is open\n", fd);
				return 1;
			}
		printf("fds 3..9 free\n");
		return 0;
	}
	parent_work(150);
	if (!strcmp(mode, "fork")) {
		pid = fork();
		if (pid == 0) {
			child_work(150);
			exit(0);
		}
		waitpid(pid, &status, 0);
		printf("fork: child exited %d\n", WEXITSTATUS(status));
	} else if (!strcmp(mode, "forkexec")) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execl(split, split, "150", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		printf("forkexec: child exited %d\n", WEXITSTATUS(status));
	} else if (!strcmp(mode, "spawn")) {
		char *args[] = {split, "150", NULL};
		char *env[] = {"PATH=/usr/bin:/bin", NULL};

		fflush(stdout);
		if (posix_spawn(&pid, split, NULL, NULL, args, env))
			return 1;
		waitpid(pid, &status, 0);
		printf("spawn: child exited %d\n", WEXITSTATUS(status));
	} else if (!strcmp(mode, "system")) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "%s 150", split);
		fflush(stdout);
		status = system(cmd);
		printf("system: exited %d\n", WEXITSTATUS(status));
	} else if (!strcmp(mode, "execfail")) {
		execl(nointerp_path(), "program", (char *)NULL); /* fails after its lookup */
		printf("execfail: %s\n", strerror(errno));
		after_work(150);
	} else if (!strcmp(mode, "exec")) {
		fflush(stdout);
		execl(split, split, "150", (char *)NULL);
		return 127;
	} else if (!strcmp(mode, "dlopen")) {
		void *h = dlopen(lib, RTLD_NOW);
		uint64_t (*hot)(double);

		if (!h) {
			printf("dlopen: %s\n", dlerror());
			return 1;
		}
		hot = (uint64_t(*)(double))dlsym(h, "hot_in_plugin");
		sink = hot(200);
		dlclose(h);
		after_work(50);
		printf("dlopen: done\n");
	} else if (!strcmp(mode, "sigint")) {
		printf("sigint\n");
		fflush(stdout);
		kill(getpid(), SIGINT);
	} else if (!strcmp(mode, "sigterm")) {
		printf("sigterm\n");
		fflush(stdout);
		kill(getpid(), SIGTERM);
	} else if (!strcmp(mode, "sigsegv")) {
		printf("sigsegv\n");
		fflush(stdout);
		*bad_pointer = 1;
	} else if (!strcmp(mode, "abort")) {
		printf("abort\n");
		fflush(stdout);
		abort();
	} else if (!strcmp(mode, "_exit")) {
		printf("_exit\n");
		fflush(stdout);
		_exit(3);
	} else if (!strcmp(mode, "threadexit")) {
		pthread_t th;

		pthread_create(&th, NULL, exit_from_thread, NULL);
		for (;;)
			after_work(10);
	} else if (!strcmp(mode, "sigprof")) {
		struct itimerval it = {{0, 4000}, {0, 4000}};

		signal(SIGPROF, on_prof);
		setitimer(ITIMER_PROF, &it, NULL);
		/*
		 * ITIMER_PROF expires on the kernel's tick, for the task the tick
		 * finds running: on a loaded machine short time slices fall between
		 * ticks and 300 ms of CPU can bring none (seen with and without the
		 * library in make check). Burn on until 11 ticks, at most 3 s of CPU.
		 */
		for (int spent = 0; prof_ticks <= 10 && spent < 3000; spent += 50)
			after_work(50);
		printf("sigprof: %s\n", prof_ticks > 10 ? "ticks" : "no ticks");
	} else if (!strcmp(mode, "closeall")) {
		close_range(3, ~0U, 0);
		after_work(150);
		printf("closeall: done\n");
	} else if (!strcmp(mode, "takesig")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_rt;
		sigaction(SIGPROF, &sa, NULL);
		raise(SIGPROF);
		after_work(200);
		printf("takesig: handler %s\n", got_rt ? "ran" : "did not run");
	} else if (!strcmp(mode, "blockall")) {
		pthread_t th;

		pthread_create(&th, NULL, blocked_thread, NULL);
		pthread_join(th, NULL);
		printf("blockall: done\n");
	} else if (!strcmp(mode, "sleep")) {
		after_work(1500);
		printf("sleeping\n");
		fflush(stdout);
		sleep(30);
	} else {
		fprintf(stderr, "life: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
