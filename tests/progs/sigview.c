/* SPDX-License-Identifier: MIT */
/*
 * sigview MODE [ARG] - a program that looks hard at its own signals and
 * prints what it sees, to compare plain and profiled runs:
 *   disp     every signal's disposition read back, before and after setting
 *            a handler, SIG_IGN and SIG_DFL (sigaction, signal, sysv_signal)
 *   mask     masks read back after blocking broad and specific sets, in this
 *            thread and in a thread created meanwhile
 *   wait     sigwaitinfo, sigtimedwait and signalfd on SIGRTMIN+5 sent by
 *            sigqueue to itself
 *   chain    a handler on every real-time signal (as Go's runtime does),
 *            then SIGRTMIN+5 sent to itself: SA_SIGINFO, SA_RESETHAND
 *   ign      SIGRTMIN+5 ignored, then sent to itself
 *   kernel   every signal's disposition as the kernel stores it (raw
 *            rt_sigaction: handler, flags, restorer set or not, mask), first
 *            thing in main: inherited SIG_IGN reads back flags 0, no restorer
 *   kill SIG spin, then kill(getpid(), SIG)
 *   exec     block every signal, exec itself (execd: print the mask)
 *   spin MS  spin MS ms of CPU time (sent a signal from outside meanwhile)
 *   threads SIG [MS]  4 threads spin; after MS (2000) ms of CPU time in
 *            all, SIG to the process; prints the CPU time spent first
 * Each mode spins a little first so that samples are taken meanwhile.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Burn ms of this thread's CPU time. */
static void spin(double ms)
{
	double end = cpu_ms(CLOCK_THREAD_CPUTIME_ID) + ms;

	while (cpu_ms(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

static const char *kind(void (*h)(int))
{
	return h == SIG_DFL ? "DFL" : h == SIG_IGN ? "IGN" : "handler";
}

static void print_disp(const char *what, int sig, const struct sigaction *sa)
{
	printf("%s %d %s flags=%#x mask=%#lx\n", what, sig, kind(sa->sa_handler),
	       (unsigned)sa->sa_flags, *(const unsigned long *)&sa->sa_mask);
}

static void on_plain(int sig)
{
	(void)sig;
}

static void mode_disp(void)
{
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		struct sigaction sa, old;

		if (sig == 32 || sig == 33)
			continue; /* glibc's own */
		memset(&old, 0, sizeof(old));
		if (sigaction(sig, NULL, &old) == 0)
			print_disp("first", sig, &old);
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sa.sa_flags = SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGUSR2);
		sigaction(sig, &sa, &old);
		print_disp("set-dfl-old", sig, &old);
		sigaction(sig, NULL, &old);
		print_disp("dfl", sig, &old);
		printf("signal-ign %d %s\n", sig, kind(signal(sig, SIG_IGN)));
		printf("signal-h %d %s\n", sig, kind(signal(sig, on_plain)));
		sigaction(sig, NULL, &old);
		print_disp("h", sig, &old);
		printf("sysv-dfl %d %s\n", sig, kind(sysv_signal(sig, SIG_DFL)));
		sigaction(sig, NULL, &old);
		print_disp("end", sig, &old);
		if (sig % 8 == 0)
			spin(10);
	}
}

static void print_mask(const char *what)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	printf("%s:", what);
	for (int s = 1; s <= SIGRTMAX; s++)
		if (s != 32 && s != 33 && sigismember(&cur, s))
			printf(" %d", s);
	printf("\n");
}

static void *mask_thread(void *arg)
{
	(void)arg;
	print_mask("new thread");
	spin(20);
	print_mask("new thread after spin");
	return NULL;
}

static void mode_mask(void)
{
	sigset_t all, one, none, old;
	pthread_t th;

	sigfillset(&all);
	sigemptyset(&none);
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	print_mask("start");
	sigprocmask(SIG_BLOCK, &all, &old);
	spin(30);
	print_mask("all blocked");
	pthread_create(&th, NULL, mask_thread, NULL);
	pthread_join(th, NULL);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	print_mask("less SIGUSR1");
	{
		sigset_t prev = old;
		pthread_sigmask(SIG_SETMASK, &prev, &old);
	}
	printf("old has RTMIN+5: %d\n", sigismember(&old, SIGRTMIN + 5));
	print_mask("restored");
	sigaddset(&one, SIGRTMIN + 5);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	spin(30);
	print_mask("SIGUSR1 and RTMIN+5");
	sigprocmask(SIG_SETMASK, &none, &old);
	printf("old has RTMIN+5: %d\n", sigismember(&old, SIGRTMIN + 5));
	print_mask("end");
}

static void mode_wait(void)
{
	sigset_t set;
	siginfo_t si;
	struct timespec ts = {2, 0};
	union sigval v;
	struct signalfd_siginfo fdsi;
	int fd, sig;

	spin(30);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 5);
	sigprocmask(SIG_BLOCK, &set, NULL);
	spin(30);
	v.sival_int = 42;
	sigqueue(getpid(), SIGRTMIN + 5, v);
	sig = sigwaitinfo(&set, &si);
	printf("sigwaitinfo: %d code %d value %d\n", sig - SIGRTMIN, si.si_code,
	       si.si_value.sival_int);
	spin(30);
	v.sival_int = 43;
	sigqueue(getpid(), SIGRTMIN + 5, v);
	sig = sigtimedwait(&set, &si, &ts);
	printf("sigtimedwait: %d code %d value %d\n", sig - SIGRTMIN, si.si_code,
	       si.si_value.sival_int);
	spin(30);
	v.sival_int = 44;
	sigqueue(getpid(), SIGRTMIN + 5, v);
	sigwait(&set, &sig);
	printf("sigwait: %d\n", sig - SIGRTMIN);
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	spin(30);
	v.sival_int = 45;
	sigqueue(getpid(), SIGRTMIN + 5, v);
	if (read(fd, &fdsi, sizeof(fdsi)) == (ssize_t)sizeof(fdsi))
		printf("signalfd: %d code %d value %d\n", (int)fdsi.ssi_signo - SIGRTMIN,
		       (int)fdsi.ssi_code, (int)fdsi.ssi_int);
	spin(30);
	print_mask("end");
}

static volatile int got[80];
static volatile int got_value;

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got[sig]++;
	got_value = si->si_value.sival_int;
}

static void mode_chain(void)
{
	struct sigaction sa, old;
	union sigval v;
	int ran = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaction(s, &sa, NULL);
	spin(100);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
		v.sival_int = s * 3;
		sigqueue(getpid(), s, v);
		ran += got[s] == 1 && got_value == s * 3;
	}
	printf("handlers ran right for %d of %d signals\n", ran, SIGRTMAX - SIGRTMIN + 1);
	sigaction(SIGRTMAX, NULL, &old);
	print_disp("after", SIGRTMAX, &old);
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaction(s, &sa, NULL);
	spin(100);
	ran = 0;
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
		raise(s);
		sigaction(s, NULL, &old);
		ran += got[s] == 2 && old.sa_handler == SIG_DFL;
	}
	printf("reset-once handlers right for %d signals\n", ran);
	sigaction(SIGRTMAX, NULL, &old);
	print_disp("after resethand", SIGRTMAX, &old);
	spin(100);
	raise(SIGRTMAX); /* SIG_DFL now: dies of it */
	printf("still alive\n");
}

static void mode_ign(void)
{
	signal(SIGRTMIN + 5, SIG_IGN);
	spin(50);
	raise(SIGRTMIN + 5);
	kill(getpid(), SIGRTMIN + 5);
	spin(50);
	printf("alive\n");
}

/* The kernel's struct sigaction on x86-64 and most others. */
struct kernel_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

static void mode_kernel(void)
{
	for (int sig = 1; sig < 65; sig++) {
		struct kernel_sigaction k = {0};

		if (sig == SIGKILL || sig == SIGSTOP ||
		    syscall(SYS_rt_sigaction, sig, NULL, &k, sizeof(k.mask)) < 0)
			continue;
		printf("kernel %d %s flags %#lx restorer %s mask %#lx\n", sig,
		       kind((void (*)(int))k.handler), k.flags, k.restorer ? "set" : "NULL",
		       k.mask);
	}
}

static void *spinner(void *arg)
{
	(void)arg;
	for (;;)
		spin(1000);
	return NULL;
}

/* 4 threads spin; once the process has used 2 s of CPU, sig ends it mid-spin. */
static void mode_threads(int sig, double limit)
{
	pthread_t th[4];
	struct timespec ts = {0, 2000000};
	double used;

	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, spinner, NULL);
	while ((used = cpu_ms(CLOCK_PROCESS_CPUTIME_ID)) < limit)
		nanosleep(&ts, NULL);
	printf("cpu_ms %.0f\n", used);
	fflush(stdout);
	if (!sig)
		exit(0);
	kill(getpid(), sig);
	pause();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int arg = argc > 2 ? atoi(argv[2]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "disp"))
		mode_disp();
	else if (!strcmp(mode, "mask"))
		mode_mask();
	else if (!strcmp(mode, "wait"))
		mode_wait();
	else if (!strcmp(mode, "chain"))
		mode_chain();
	else if (!strcmp(mode, "kernel"))
		mode_kernel();
	else if (!strcmp(mode, "ign"))
		mode_ign();
	else if (!strcmp(mode, "kill")) {
		spin(100);
		kill(getpid(), arg);
		spin(10);
		printf("still alive\n");
	} else if (!strcmp(mode, "spin"))
		spin(arg);
	else if (!strcmp(mode, "exec")) {
		sigset_t all;

		sigfillset(&all);
		spin(30);
		sigprocmask(SIG_BLOCK, &all, NULL);
		execl("/proc/self/exe", argv[0], "execd", (char *)NULL);
		return 1;
	} else if (!strcmp(mode, "execd")) {
		print_mask("after exec");
		spin(50);
		print_mask("after spin");
	} else if (!strcmp(mode, "threads"))
		mode_threads(arg, argc > 3 ? atof(argv[3]) : 2000);
	else
		return 2;
	return 0;
}
