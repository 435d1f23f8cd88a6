/*
 * endings.c - ways to end that run none of the profiler's exit code, and
 * sandboxes that forbid its system calls. Each computes first (in busy(),
 * long enough for the profiler to flush), then:
 *
 * usage: endings MODE
 *   quick_exit  prints from an at_quick_exit handler, quick_exit(3);
 *   exit_group  syscall(SYS_exit_group, 4);
 *   sigkill     kill(getpid(), SIGKILL);
 *   strict      prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT), then computes,
 *               writes a line and leaves with SYS_exit (all strict mode allows);
 *   filter      a seccomp filter on every thread (TSYNC, through syscall())
 *               that kills the process on pwrite64, pwritev, ioctl and
 *               perf_event_open, then computes, prints and exits 0.
 * and the endings that do run it (endings-load.t runs them all under load):
 *   spin        computes until a signal ends it;
 *   exit        exit(5);   _exit  _exit(6);   abort  abort(3);
 *   exec        execs itself as `endings exit` (the next image computes too);
 *   forkexit    exit(7) while two threads fork (children _exit at once) in a loop;
 *   killexit N [MS]  N children one after another, each computing MS (5) ms of wall
 *               time and exiting, SIGKILLed at a random moment from 0.8 MS to 1.4 MS after
 *               its fork: some in the middle of the profiler's end;
 *   startkill N [MS]  N programs one after another, each `endings exit` with
 *               LD_PRELOAD=$START_PRELOAD and AUTOPROF_OUTPUT=sk.I.data, SIGKILLed at a
 *               random moment in its first MS (10) ms: some in the middle of the
 *               profiler's start.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

/* About ms milliseconds of CPU, counted in loop rounds calibrated before any sandbox. */
static __attribute__((noinline)) void busy(long rounds)
{
	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005ULL + 1;
}

static long rounds_for(int ms)
{
	struct timespec a, b;
	long n = 8;
	double took;

	for (;;) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		busy(n);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		took = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
		if (took > 20)
			return (long)(n * ms / took) + 1;
		n *= 2;
	}
}

/* forkexit's threads: fork, the child leaves at once, the parent reaps it; forever. */
static void *forker(void *unused)
{
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return unused;
}

static void said_at_quick_exit(void)
{
	printf("at_quick_exit handler ran\n");
	fflush(stdout);
}

static int install_filter(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pwrite64, 4, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pwritev, 3, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

static long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

/* killexit: see the top. */
static int kill_exits(int n, long ms)
{
	srand((unsigned)getpid());
	for (int i = 0; i < n; i++) {
		long t0 = now_us(), wait;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			while (now_us() - t0 < ms * 1000)
				sink++;
			exit(0);
		}
		wait = ms * 800 + rand() % (ms * 600) - (now_us() - t0);
		if (wait > 0)
			usleep((useconds_t)wait);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	printf("killexit: %d children\n", n);
	return 0;
}

/* startkill: see the top. */
static int start_kills(int n, long ms)
{
	const char *lib = getenv("START_PRELOAD");

	srand((unsigned)getpid());
	for (int i = 0; i < n; i++) {
		char out[64];
		pid_t pid;

		snprintf(out, sizeof(out), "sk.%d.data", i);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			setenv("LD_PRELOAD", lib ? lib : "", 1);
			setenv("AUTOPROF_OUTPUT", out, 1);
			execl("/proc/self/exe", "endings", "exit", (char *)NULL);
			_exit(127);
		}
		usleep((useconds_t)(rand() % (ms * 1000)));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	printf("startkill: %d programs\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long rounds;

	if (!strcmp(mode, "killexit"))
		return kill_exits(argc > 2 ? atoi(argv[2]) : 100, argc > 3 ? atol(argv[3]) : 5);
	if (!strcmp(mode, "startkill"))
		return start_kills(argc > 2 ? atoi(argv[2]) : 100, argc > 3 ? atol(argv[3]) : 10);
	rounds = rounds_for(600);

	if (!strcmp(mode, "strict")) {
		static const char msg[] = "strict mode: computed and wrote\n";

		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			return 1;
		busy(rounds);
		syscall(SYS_write, 1, msg, sizeof(msg) - 1);
		syscall(SYS_exit, 0);
	}
	if (!strcmp(mode, "filter")) {
		if (install_filter())
			return 1;
		busy(rounds);
		printf("filter: computed\n");
		return 0;
	}
	if (!strcmp(mode, "spin")) {
		printf("spinning\n");
		fflush(stdout);
		for (;;)
			busy(rounds);
	}
	busy(rounds);
	if (!strcmp(mode, "exit")) {
		printf("exit next\n");
		exit(5);
	}
	if (!strcmp(mode, "_exit")) {
		printf("_exit next\n");
		fflush(stdout);
		_exit(6);
	}
	if (!strcmp(mode, "abort")) {
		printf("abort next\n");
		fflush(stdout);
		abort();
	}
	if (!strcmp(mode, "exec")) {
		printf("exec next\n");
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "exit", (char *)NULL);
		return 1;
	}
	if (!strcmp(mode, "forkexit")) {
		pthread_t t;

		for (int i = 0; i < 2; i++)
			if (pthread_create(&t, NULL, forker, NULL))
				return 1;
		usleep(20000);
		printf("exit while forking next\n");
		exit(7);
	}
	if (!strcmp(mode, "quick_exit")) {
		at_quick_exit(said_at_quick_exit);
		printf("quick_exit next\n");
		fflush(stdout);
		quick_exit(3);
	}
	if (!strcmp(mode, "exit_group")) {
		printf("exit_group next\n");
		fflush(stdout);
		syscall(SYS_exit_group, 4);
	}
	if (!strcmp(mode, "sigkill")) {
		printf("SIGKILL next\n");
		fflush(stdout);
		kill(getpid(), SIGKILL);
	}
	fprintf(stderr,
		"usage: endings "
		"quick_exit|exit_group|sigkill|strict|filter|spin|exit|_exit|abort|exec|forkexit|"
		"killexit N|startkill N\n");
	return 2;
}
