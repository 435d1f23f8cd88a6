/* SPDX-License-Identifier: MIT */
/*
 * process_events.c - what happens to every sampler when the process meets
 * something abrupt: a deadly signal (the emergency stop, from its handler),
 * the program taking the sampling signal (every event reopened on another),
 * and a thread entering seccomp (it stops first, so that the profiler makes
 * no system call the sandbox forbids).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "samplers.h"

/*
 * From a deadly signal's handler: stop every thread as samplers__stop_all()
 * does, but never block: the registry lock is only tried (the interrupted
 * code may hold it), a handler that does not leave is not waited for long,
 * and nothing is freed. Async-signal-safe.
 */
void process_events__stop_all_emergency(void)
{
	int top = registry__top();
	bool locked = false;

	for (int i = 0; i < 1000 && !(locked = registry__trylock()); i++)
		raw_syscall(SYS_sched_yield);
	for (int i = 0; i <= top; i++) {
		struct ap_thread *t = registry__at(i);

		if (!t || !registry__claim(t))
			continue;
		if (t->is_timer)
			cputimer__close(t);
		if (t == ap_self ? !__atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST)
				 : registry__wait_handler(t))
			on_signal__drain(t, NULL);
		buffer__flush(t);
		aggregate__emit_all(t);
		buffer__fold_stats(&autoprof.stats, &t->stats);
	}
	if (locked)
		registry__unlock();
}

/* Send t's overflow signal as signo from now on; a timer thread gets a new timer on its own CPU
 * clock. The caller holds the registry lock. Not async-signal-safe. */
void process_events__reroute_thread(struct ap_thread *t, int signo)
{
	if (!t->is_timer)
		sampler_events__reopen(t, signo);
	else
		cputimer__retarget(t);
}

/*
 * Send every thread's overflow signal as signo from now on (the program took
 * the old one). Not async-signal-safe.
 */
void process_events__reroute(int signo)
{
	registry__lock();
	for (int i = 0, top = registry__top(); i <= top; i++) {
		struct ap_thread *t = registry__at(i);

		if (t)
			process_events__reroute_thread(t, signo);
	}
	registry__unlock();
	control__publish(); /* `autoprof ctl` sends the new number from now on */
}

/* Did the calling thread enter seccomp (strict or a filter)? (Its flag, ap_sandboxed, is the
 * handler's: handler/registry.c.) Async-signal-safe. */
bool process_events__sandboxed(void)
{
	return ap_sandboxed;
}

/*
 * The calling thread is about to enter seccomp (strict mode, or a filter that
 * may refuse or kill our system calls): flush and stop its sampler, consume
 * any sampling signal already pending, and make no system call on it from
 * then on. With all_threads (SECCOMP_FILTER_FLAG_TSYNC) the whole session is
 * finished now. Says once why. Not async-signal-safe.
 */
void process_events__before_seccomp(bool all_threads)
{
	static int said;
	struct timespec zero = {0, 0};
	sigset_t old, ours;

	if (ap_sandboxed || !__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) ||
	    getpid() != autoprof.pid)
		return;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pr_warn("the program enters seccomp; %s stops being profiled first, so that the "
			"profiler makes no system call the sandbox forbids (said once)",
			all_threads ? "every thread" : "that thread");
	if (all_threads) {
		lifecycle__stop();
		ap_sandboxed = true;
		return;
	}
	signals__block_sampling(&old);
	samplers__stop_self();
	sigemptyset(&ours);
	sigaddset(&ours, autoprof.signo);
	while (raw_syscall(SYS_rt_sigtimedwait, &ours, NULL, &zero, _NSIG / 8) > 0)
		; /* a sample signal already queued would run our handler under the sandbox */
	ap_sandboxed = true;
	signals__sigmask(SIG_SETMASK, &old, NULL);
}
