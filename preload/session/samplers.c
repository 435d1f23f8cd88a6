/* SPDX-License-Identifier: MIT */
/*
 * samplers.c - starting and stopping the sampling of threads: a thread's
 * sampler is one mapping (its state, record buffer, aggregation table and
 * the handler's own stack), made when it starts, with its events
 * (sampler_events.c) and its slot in the registry (registry.c). A thread is
 * stopped exactly once, by itself (thread exit) or by the thread that ends
 * the process (samplers__stop_all).
 *
 * A thread costs no file descriptor: its event's fd is closed as soon as the
 * ring is mapped, the signal routed and the event enabled. The mapping keeps
 * the event alive, its overflow signals keep coming (the owner and signal
 * are the open file's, not the fd's), and munmap ends it. The CPU-time timer
 * of the fallback needs no fd either.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "samplers.h"

/* Records a thread builds before it writes them out. */
#define RECORD_BUF_BYTES (64 * 1024)
/* The handler's own stack (own_stack.c) and the guard page below it. */
#define HANDLER_STACK_BYTES (64 * 1024)
#define GUARD_BYTES	    4096
#define PAGE_UP(x)	    (((x) + 4095) & ~(size_t)4095)

/* The first record of a thread: its name, before its event is enabled. */
static void put_comm(struct ap_thread *t, pid_t tid)
{
	char name[32] = "", path[64];

	if (!tid) {
		prctl(PR_GET_NAME, name);
	} else {
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
		raw_syscall__read_file(path, name, sizeof(name));
		name[strcspn(name, "\n")] = 0;
	}
	t->len += record__comm(t->buf + t->len, t->cap - t->len, (uint32_t)autoprof.pid,
			       (uint32_t)t->tid, name, ap_now(), false);
}

/*
 * Set up sampling of thread tid (the caller when tid is 0): event, ring,
 * signal routing, registry entry; the event is enabled last. Returns the
 * thread or NULL with *err set. Not async-signal-safe.
 */
static struct ap_thread *thread_open(pid_t tid, int *err)
{
	size_t body =
	    PAGE_UP(PERF_ALIGN8(sizeof(struct ap_thread)) + RECORD_BUF_BYTES + AP_SCRATCH_BYTES);
	size_t agg = aggregate__bytes(&autoprof.sampler); /* AUTOPROF_AGGREGATE's table */
	size_t len = body + agg + GUARD_BYTES + HANDLER_STACK_BYTES;
	bool paused = __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST);
	int signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE), now;
	struct ap_thread *t;
	sigset_t all, mask;
	int sample_fd = -1; /* batched: the sampling event (t->fd is its tick's) */
	void *mem;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	t = mem;
	t->mem = mem;
	t->mem_len = len;
	t->buf = (char *)mem + PERF_ALIGN8(sizeof(*t));
	t->cap = RECORD_BUF_BYTES;
	t->scratch = t->buf + RECORD_BUF_BYTES;
	t->sampler = &autoprof.sampler;
	/* The handler's own stack, at the end, above a guard page (own_stack.c). */
	t->stack_top = (char *)mem + len;
	mprotect((char *)mem + body + agg, GUARD_BYTES, PROT_NONE);
	t->tid = tid ? tid : gettid();
	t->last_flush = ap_now();
	t->agg = agg ? aggregate__place((char *)mem + body, agg, t->last_flush) : NULL;

	t->fd = -1;
	t->ramp_fd = -1;
	if (autoprof.cfg->timer_mode) {
		/* A POSIX CPU-time timer, created by the thread itself. */
		*err = tid ? -EOPNOTSUPP : cputimer__open(t);
		if (*err)
			goto out_mem;
	} else if (paused) {
		/* Started paused (AUTOPROF_START=0, `autoprof ctl PID stop`): no
		 * event until sampling starts (sampler_arming__sync). */
	} else {
		/* Batched where the sampler says so and the rings fit, else a
		 * signal per sample. */
		t->batched = autoprof.sampler.batched &&
			     sampler_events__open_batched(t, tid, &sample_fd, &t->fd) == 0;
		if (!t->batched) {
			*err = sampler_events__open_plain(t, tid);
			if (*err)
				goto out_mem;
			samplers__need_unwinder(); /* before its first sample */
		}
	}
	t->handle = tid ? 0 : pthread_self();
	put_comm(t, tid);
	/* In the registry and enabled under its lock: a reroute (the program took
	 * the sampling signal, process_events__reroute) reopens every thread's
	 * events, and between the two it closed the ones enabled here (EBADF: a
	 * thread of execfam sigflip unprofiled, 1 run in 300 under load); one
	 * before the add is done below. Every signal blocked meanwhile: a
	 * handler of the program's on this thread that exits or takes the
	 * sampling signal would wait for the lock this thread holds. */
	sigfillset(&all);
	signals__sigmask(SIG_BLOCK, &all, &mask);
	registry__lock();
	*err = registry__add(t);
	if (*err)
		goto out_unlock;
	if (!tid)
		ap_self = t;
	*err = t->is_timer ? (paused ? 0 : cputimer__start(t))
	       : t->fd < 0 ? 0
	       : (sample_fd >= 0 && ioctl(sample_fd, PERF_EVENT_IOC_ENABLE, 0) < 0) ||
		       ioctl(t->fd, PERF_EVENT_IOC_ENABLE, 0) < 0
		   ? -errno
		   : 0;
	if (*err) {
		if (!tid)
			ap_self = NULL;
		registry__drop(t);
		goto out_unlock;
	}
	offcpu__thread_start(t, tid); /* AUTOPROF_OFFCPU */
	/* The event lives on in its mapping; t->fd stays as the number its
	 * signals carry in si_fd, never used again. */
	if (t->fd >= 0)
		raw_syscall(SYS_close, t->fd);
	if (sample_fd >= 0)
		raw_syscall(SYS_close, sample_fd);
	/* a reroute between the open and the add passed t by: what it does, now */
	if ((now = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE)) != signo)
		process_events__reroute_thread(t, now);
	registry__unlock();
	signals__sigmask(SIG_SETMASK, &mask, NULL);
	/* A `ctl start` or `stop` that went over the registry before t was in
	 * it: make t follow it now. */
	if (paused != __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST) &&
	    registry__grab(t, false)) {
		sampler_arming__sync(t, __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST));
		registry__release(t);
		if (!t->batched)
			samplers__need_unwinder();
	}
	return t;

out_unlock:
	registry__unlock();
	signals__sigmask(SIG_SETMASK, &mask, NULL);
	ring__unmap(&t->ring);
	ring__unmap(&t->tick);
	sampler_events__end_ramp(t);
	if (t->is_timer)
		cputimer__close(t);
	if (t->fd >= 0)
		raw_syscall(SYS_close, t->fd);
	if (sample_fd >= 0)
		raw_syscall(SYS_close, sample_fd);
out_mem:
	munmap(mem, len);
	return NULL;
}

/*
 * libunwind's set-up (set_up) with the sampling signal blocked, and, where
 * it loaded libunwind, its records and liblzma's written to the file then
 * (object_records__write_loaded): the samples taken meanwhile, drained
 * after, would put them in this thread's buffer, with its last samples.
 */
static void unwinder_set_up(void (*set_up)(void))
{
	uint64_t mask = 1ULL << (autoprof.signo - 1), old;

	if (unwind__ready()) { /* loaded before: no records to write */
		set_up();
		return;
	}
	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &old, sizeof(old), 0, 0);
	set_up();
	if (unwind__ready() && __atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE))
		object_records__write_loaded(&autoprof.writer, autoprof.pid, autoprof.signo);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old), 0, 0);
}

/*
 * Start sampling the calling thread. Returns 0 or -errno (nothing is left
 * behind on failure). Not async-signal-safe.
 */
int samplers__start(void)
{
	struct ap_thread *t;
	int err;

	if (autoprof.cfg->callgraph == AP_CG_LIBUNWIND && !autoprof.sampler.batched)
		unwinder_set_up(unwind__prime_thread);
	t = thread_open(0, &err);
	/* A signal per sample (batched events that did not fit, a paused start)
	 * walks the live stack at every sample: with the fast trace. */
	if (t && !t->batched && !t->is_timer && autoprof.cfg->callgraph == AP_CG_LIBUNWIND)
		unwinder_set_up(unwind__prime_trace);
	return t ? 0 : err;
}

/*
 * Start sampling another thread of this process that already exists (found
 * in /proc/self/task at start-up). Its handler finds it by fd.
 * Returns 0 or -errno. Not async-signal-safe.
 */
int samplers__attach(pid_t tid)
{
	int err;

	return thread_open(tid, &err) ? 0 : err;
}

/* Sample the threads that started before us (another library's constructor). Not AS-safe. */
void samplers__attach_others(void)
{
	pid_t self = gettid();
	struct dirent *e;
	struct stat st;
	DIR *d;

	/* The task folder's link count is 2 + the threads: a single-threaded
	 * process (nearly every one) need not list it. */
	if (stat("/proc/self/task", &st) == 0 && st.st_nlink == 3)
		return;
	d = opendir("/proc/self/task");
	if (!d)
		return;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		int err;

		if (tid <= 0 || tid == self)
			continue;
		err = samplers__attach(tid);
		if (err)
			pr_warn("cannot sample thread %d: %s", (int)tid, strerror(-err));
	}
	closedir(d);
	samplers__need_unwinder(); /* threads: as a second one's creation does */
}

/*
 * libunwind set up (unwind__init) for a walk of a live stack that may come:
 * a thread whose sampler is a signal per sample, or a process with more than
 * one thread, where the live walk of the handler's own work sometimes needs
 * it. Called before the thread samples, or at the process's first
 * pthread_create (threads.c), while it is one thread: libunwind's pipe2
 * takes two low fd numbers for a moment, which threads opening files then
 * would see (hostile.t nofile). Not async-signal-safe.
 */
void samplers__need_unwinder(void)
{
	if (autoprof.cfg->callgraph == AP_CG_LIBUNWIND)
		unwinder_set_up(unwind__prime_thread);
}

/*
 * After a successful claim: stop t's timer, wait (bounded) for its handler
 * to leave, keep the samples still in its ring, write everything out, then
 * unmap the ring, which ends the event (its handler, if a last signal comes,
 * sees `closed` and leaves). Only the owner frees the memory (the owner may
 * still look at it otherwise).
 */
static void finish(struct ap_thread *t, bool own)
{
	if (t->is_timer)
		cputimer__close(t);
	/* On its own thread a handler cannot be running: in_handler set means
	 * one was unwound out of (by a cancellation point or longjmp in code it
	 * called); the ring is whole, its tail not yet moved. */
	if (own)
		__atomic_compare_exchange_n(&t->in_handler, &(int){1}, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	if (registry__wait_handler(t))
		on_signal__drain(t, NULL);
	buffer__flush(t);
	aggregate__emit_all(t);
	t->stats.copy_end = t->batched ? t->copy_bytes : 0;
	buffer__fold_stats(&autoprof.stats, &t->stats);
	ring__unmap(&t->tick);
	sampler_events__end_ramp(t);
	ring__unmap(&t->ring);
	if (own) {
		offcpu__close_event(t); /* only here: its wrappers read it unclaimed */
		ap_self = NULL;
		registry__wait_visitors();
		munmap(t->mem, t->mem_len);
	}
}

/*
 * Stop sampling the calling thread (at its exit), unless the thread ending
 * the process already did. Not async-signal-safe.
 */
void samplers__stop_self(void)
{
	struct ap_thread *t = ap_self;
	sigset_t old;
	bool mine;

	if (!t)
		return;
	signals__block_sampling(&old);
	registry__lock();
	mine = registry__claim(t);
	registry__unlock();
	if (mine)
		finish(t, true);
	ap_self = NULL;
	signals__sigmask(SIG_SETMASK, &old, NULL);
}

/* One thread's records out, its sampler kept (registry__visit). Async-signal-safe. */
static void flush_kept(struct ap_thread *t, void *arg)
{
	if (t->ring.page)
		on_signal__drain(t, NULL); /* as finish(): a batched ring's stacks are in copies */
	aggregate__emit_all(t);
	buffer__flush(t);
	buffer__fold_stats(arg, &t->stats);
}

/*
 * Before an exec, which may fail: every thread's records out, its sampler kept (the threads
 * sample on if the exec fails; the kernel ends them if it succeeds), their counts so far summed
 * into *sum. A thread's buffer that is held (by the code a handler of the program interrupted on
 * the calling thread: a memory sample) is left as it is. Not async-signal-safe.
 */
void samplers__flush_all(struct ap_stats *sum)
{
	sigset_t old;

	memset(sum, 0, sizeof(*sum));
	signals__block_sampling(&old);
	registry__visit(flush_kept, sum);
	signals__sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * The calling thread's sampler, kept across an exec from a handler that interrupted the
 * profiler on this thread (lifecycle.c): its event ended for the exec (armed false: one that
 * fired inside a successful execve would leave the next image a signal it does not handle),
 * or made again after a failed one (armed true, unless sampling is paused). Only when the
 * interrupted code holds its buffer (a memory sample, which touches no ring) or nothing does;
 * a visitor's hold leaves it as it is. Not async-signal-safe.
 */
void samplers__arm_self(bool armed)
{
	struct ap_thread *t = ap_self;
	bool grabbed;
	int cur = 0;
	sigset_t old;

	if (!t)
		return;
	signals__block_sampling(&old);
	/* held as its own (1), else cur is 1 (the interrupted code's hold) or 2 (a visitor's) */
	grabbed = __atomic_compare_exchange_n(&t->in_handler, &cur, 1, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST);
	if (grabbed || cur == 1)
		sampler_arming__sync(t,
				     !armed || __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST));
	if (grabbed)
		registry__release(t);
	signals__sigmask(SIG_SETMASK, &old, NULL);
	if (armed && !t->batched)
		samplers__need_unwinder(); /* its batched events did not fit */
}

/* Stop every thread still sampling; the process is ending. Returns how many there were but
 * the calling thread. Not async-signal-safe. */
int samplers__stop_all(void)
{
	sigset_t old;
	int top, others = 0;

	samplers__stop_self();
	signals__block_sampling(&old);
	top = registry__top();
	for (int i = 0; i <= top; i++) {
		struct ap_thread *t;
		bool mine = false;

		registry__lock();
		t = registry__at(i);
		if (t)
			mine = registry__claim(t);
		registry__unlock();
		if (mine) {
			finish(t, false);
			others++;
		}
	}
	signals__sigmask(SIG_SETMASK, &old, NULL);
	return others;
}

/* The kernel tid of a thread of ours, or 0 when it is not one we sample. Not async-signal-safe. */
pid_t samplers__tid_of(pthread_t handle)
{
	pid_t tid = 0;

	if (pthread_equal(handle, pthread_self()))
		return gettid();
	registry__lock();
	for (int i = 0, top = registry__top(); i <= top && !tid; i++) {
		struct ap_thread *t = registry__at(i);

		if (t && t->handle && pthread_equal(t->handle, handle))
			tid = t->tid;
	}
	registry__unlock();
	return tid;
}

/* Record that thread tid is now called name (a COMM record). Not async-signal-safe. */
void samplers__rename(pid_t tid, const char *name)
{
	struct ap_thread *t = ap_self;
	char rec[128];
	size_t n;
	sigset_t old;

	if (tid <= 0 || !name)
		return;
	n = record__comm(rec, sizeof(rec), (uint32_t)autoprof.pid, (uint32_t)tid, name, ap_now(),
			 false);
	signals__block_sampling(&old);
	if (t && registry__grab(t, true)) { /* a visitor may be flushing t's buffer */
		memcpy(buffer__reserve(t, n), rec, n);
		t->len += n;
		registry__release(t);
	} else {
		writer__append(&autoprof.writer, rec, n);
	}
	signals__sigmask(SIG_SETMASK, &old, NULL);
}

/* Say once that some thread could not be sampled, and why. Not async-signal-safe. */
void samplers__warn_once(int err)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pr_warn("cannot sample a new thread: %s; it runs unprofiled (said once)",
			strerror(-err));
}
