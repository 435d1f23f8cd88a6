/* SPDX-License-Identifier: MIT */
/*
 * cputimer.c - the fallback sample source: a POSIX CPU-time timer per thread
 * (timer_create(CLOCK_THREAD_CPUTIME_ID) with SIGEV_THREAD_ID), for machines
 * where perf_event_open is refused (seccomp as in Docker's default profile,
 * perf_event_paranoid 3 or more), or when AUTOPROF_MODE=timer asks for it.
 *
 * The rate and the signal are the thread's sampler's (t->sampler), set before
 * its timer is made. The signal goes through the same handler, unwinder and writer, recorded as
 * a cpu-clock event. CPU-time timers expire on the scheduler tick (250 Hz on
 * a typical kernel), so the rate asked for may not be the rate delivered:
 * every sample carries the thread CPU time that really passed since the one
 * before as its period, and the file's attr is given the delivered average
 * period at the end, never the asked one.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "handler.h"
#include "settled.h"
#include "setup.h"

#define TIMER_MAGIC 0x41505446 /* "APTF" in si_value: the signal is our timer's */

/* Create t's timer on clock (t's CPU clock), not armed yet. Returns 0 or -errno. */
static int create(struct ap_thread *t, clockid_t clock)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = __atomic_load_n(t->sampler->signo, __ATOMIC_RELAXED);
	sev.sigev_value.sival_int = TIMER_MAGIC;
	sev._sigev_un._tid = t->tid;
	if (timer_create(clock, &sev, &t->timer) < 0)
		return -errno;
	t->is_timer = true;
	return 0;
}

/* Create the calling thread's timer for t, not armed yet. Returns 0 or -errno. */
int cputimer__open(struct ap_thread *t)
{
	return create(t, CLOCK_THREAD_CPUTIME_ID);
}

/* Arm t's timer at the configured rate. Returns 0 or -errno. */
static int arm(struct ap_thread *t)
{
	uint64_t ns = t->sampler->cfg->interval_ns;
	struct itimerspec its = {
	    .it_interval = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)},
	    .it_value = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)},
	};

	if (timer_settime(t->timer, 0, &its, NULL) < 0)
		return -errno;
	return 0;
}

/* Arm the calling thread's timer; its next sample's period counts from now. */
int cputimer__start(struct ap_thread *t)
{
	t->last_cpu = ap_thread_cpu_ns();
	return arm(t);
}

/*
 * Arm (on) or disarm t's timer, from any thread: the period of t's next
 * sample counts from now, read on t's own CPU clock (the kernel's clock id
 * for a thread: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). The caller holds
 * t. Returns 0 or -errno. Async-signal-safe (system calls only).
 */
int cputimer__set_armed(struct ap_thread *t, bool on)
{
	uint64_t ns = t->sampler->cfg->interval_ns;
	struct itimerspec its = {{0, 0}, {0, 0}};
	clockid_t clock = (clockid_t)((~(unsigned)t->tid << 3) | 6);
	struct timespec now;

	if (on) {
		its.it_interval =
		    (struct timespec){(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
		its.it_value = its.it_interval;
		if (raw_syscall(SYS_clock_gettime, clock, &now) == 0)
			t->last_cpu = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	}
	if (raw_syscall(SYS_timer_settime, (long)(intptr_t)t->timer, 0, &its, NULL) < 0)
		return -errno;
	return 0;
}

/* Delete t's timer. Async-signal-safe (timer_delete is a system call). */
void cputimer__close(struct ap_thread *t)
{
	if (t->is_timer)
		raw_syscall(SYS_timer_delete, (long)(intptr_t)t->timer);
	t->is_timer = false;
}

/* Is this siginfo our timer's? Async-signal-safe. */
bool cputimer__is_ours(const siginfo_t *si)
{
	return si->si_code == SI_TIMER && si->si_value.sival_int == TIMER_MAGIC;
}

/*
 * One timer sample of the calling thread, from the signal's context: its
 * true period is the thread CPU time since the last one. Async-signal-safe.
 */
void cputimer__sample(struct ap_thread *t, void *ucontext)
{
	uint64_t now_cpu = ap_thread_cpu_ns();
	uint64_t period = now_cpu - t->last_cpu;
	unsigned cpu = 0;

	t->last_cpu = now_cpu;
	if (raw_syscall(SYS_getcpu, &cpu, NULL, NULL) < 0)
		cpu = 0;
	on_signal__from_context(t, ucontext, ap_now(), cpu, period ? period : 1);
}

/*
 * Replace t's timer by one that sends the current sampling signal (called
 * from another thread: t's own CPU clock comes from its pthread handle),
 * armed as the old one was (a paused thread's is not: it sampled while
 * paused). Not async-signal-safe.
 */
void cputimer__retarget(struct ap_thread *t)
{
	struct itimerspec was = {{0, 0}, {0, 0}};
	clockid_t clock;
	bool armed;

	if (!t->handle || pthread_getcpuclockid(t->handle, &clock))
		return;
	armed = t->is_timer && timer_gettime(t->timer, &was) == 0 &&
		(was.it_interval.tv_sec || was.it_interval.tv_nsec);
	cputimer__close(t);
	if (create(t, clock) == 0 && armed)
		arm(t);
}
