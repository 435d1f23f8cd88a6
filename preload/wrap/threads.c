/* SPDX-License-Identifier: MIT */
/*
 * threads.c - the thread functions we wrap (found with dlsym(RTLD_NEXT)):
 *  - pthread_create: every new thread samples itself from its first
 *    instruction to its exit (return, pthread_exit or cancellation: a TSD
 *    destructor stops it);
 *  - pthread_setname_np, prctl(PR_SET_NAME): a COMM record with the new name;
 *  - prctl(PR_SET_SECCOMP): the thread stops sampling first (samplers.c).
 * dlopen and dlmopen are not wrapped: glibc searches the RUNPATH ($ORIGIN) of
 * their caller, which must stay the program's. objects.c learns of new
 * objects from the samples that land in them and wraps dlclose.
 * When profiling is off each wrapper is a plain call of the real function.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "memory.h"
#include "wrap.h"

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*pthread_setname_fn)(pthread_t, const char *);
typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);

static pthread_key_t exit_key;
static bool have_exit_key;

struct start {
	void *(*fn)(void *);
	void *arg;
	int shadow;	/* the creator's shadow-blocked sampling signal (signals.c) */
	bool sandboxed; /* the creator is in seccomp: so is the thread (its filter inherited) */
};

/*
 * What a new thread is handed, in one of these slots: claimed by its
 * creator, given back by the thread as it copies it. Not malloc'd: a free()
 * on a thread that never allocated makes glibc give it an arena of its own
 * (tcache_init: a 64 MiB reservation and a page fault per thread that the
 * program itself never asked for). malloc only when every slot is in flight.
 */
#define START_SLOTS 64
static struct start start_slots[START_SLOTS] AP_LARGE_BSS;
static int start_used[START_SLOTS]; /* atomic */

static struct start *start_claim(void)
{
	for (int i = 0; i < START_SLOTS; i++)
		if (!__atomic_load_n(&start_used[i], __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&start_used[i], 1, __ATOMIC_ACQUIRE))
			return &start_slots[i];
	return malloc(sizeof(struct start));
}

static void start_release(struct start *s)
{
	if (s >= start_slots && s < start_slots + START_SLOTS)
		__atomic_store_n(&start_used[s - start_slots], 0, __ATOMIC_RELEASE);
	else
		free(s);
}

static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void on_thread_exit(void *unused)
{
	(void)unused;
	samplers__stop_self();
}

/* Called once from lifecycle__start(), before any thread is wrapped. Not async-signal-safe. */
void threads__init(void)
{
	if (!have_exit_key && pthread_key_create(&exit_key, on_thread_exit) == 0)
		have_exit_key = true;
}

#define EXEC_RESTART_WAIT_NS                                                                       \
	100000000ULL /* at most a new thread waits for a failed exec's file                        \
		      */

static void *start_routine(void *p)
{
	struct start s = *(struct start *)p;
	int err;

	start_release(p);
	if (s.sandboxed) { /* no sampler, and no system call of ours (memory.c, live.c) */
		ap_sandboxed = true;
		return s.fn(s.arg);
	}
	signal_masks__set_shadow(s.shadow);
	/* a failed exec's new file is being opened: a moment (bounded: the thread
	 * opening it may be stopped, or below this one's real-time priority) */
	for (uint64_t until = 0; __atomic_load_n(&autoprof.exec_restart, __ATOMIC_ACQUIRE);) {
		uint64_t now = ap_now();

		if (!until)
			until = now + EXEC_RESTART_WAIT_NS;
		else if (now >= until)
			break; /* not sampled unless the restart is over (active) */
		sched_yield();
	}
	/* (during an exec of another thread too: if it fails, this one samples on with the rest) */
	if (__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&autoprof.exec_window, __ATOMIC_ACQUIRE)) {
		memory_stack__thread_start(); /* AUTOPROF_MEMORY: the stack's bounds, now */
		err = samplers__start();
		if (!err)
			pthread_setspecific(exit_key, (void *)1);
		else
			samplers__warn_once(err);
	}
	return s.fn(s.arg);
}

AP_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	static pthread_create_fn next;
	struct start *s;
	int err;

	if (!next)
		next = (pthread_create_fn)real("pthread_create");
	if (!next)
		return EAGAIN;
	if (!__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) || !have_exit_key)
		return next(thread, attr, fn, arg);
	s = start_claim();
	if (!s)
		return next(thread, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	/* a sandboxed thread's threads inherit its filter: they are marked, not sampled */
	s->sandboxed = process_events__sandboxed();
	s->shadow = s->sandboxed ? 0 : signal_masks__shadow();
	if (!s->sandboxed)
		samplers__need_unwinder(); /* the process's last moment as one thread, if first */
	err = next(thread, attr, start_routine, s);
	if (err)
		start_release(s);
	return err;
}

AP_API int pthread_setname_np(pthread_t thread, const char *name)
{
	static pthread_setname_fn next;
	int err;

	if (!next)
		next = (pthread_setname_fn)real("pthread_setname_np");
	if (!next)
		return ENOSYS;
	err = next(thread, name);
	if (!err && __atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE))
		samplers__rename(samplers__tid_of(thread), name);
	return err;
}

AP_API int prctl(int option, ...)
{
	static prctl_fn next;
	unsigned long a[4];
	va_list ap_list;
	int ret;

	va_start(ap_list, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap_list, unsigned long);
	va_end(ap_list);
	if (!next)
		next = (prctl_fn)real("prctl");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (option == PR_SET_SECCOMP &&
	    (a[0] == SECCOMP_MODE_STRICT || a[0] == SECCOMP_MODE_FILTER))
		process_events__before_seccomp(false);
	ret = next(option, a[0], a[1], a[2], a[3]);
	if (ret == 0 && option == PR_SET_NAME &&
	    __atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE))
		samplers__rename(gettid(), (const char *)a[0]);
	return ret;
}
