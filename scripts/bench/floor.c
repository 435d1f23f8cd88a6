/*
 * floor.c - the kernel's sampling cost floor, for scripts/bench/overhead.py.
 *
 * An LD_PRELOAD library that gives every thread of the program what
 * libautoprof.so gives it at the kernel level, and nothing more: a per-thread
 * cpu-clock sampling event (pid 0, cpu -1, frequency mode, IP|TID|TIME|PERIOD,
 * user space only, CLOCK_MONOTONIC timestamps) with a 1 + 1 page ring. There
 * is no signal, no reader and no file: the ring fills after a few dozen
 * samples and the kernel then drops every further record. What is left is the
 * cost of the timer interrupt and of preparing each sample, which no
 * perf_event_open based profiler can avoid.
 *
 * With FLOOR_SIGNAL=1 every sample also raises the overflow signal that a
 * signal-based profiler such as autoprof needs (wakeup_events 1, F_SETOWN_EX
 * to the thread, F_SETSIG SIGRTMIN+5) and a handler that does nothing but
 * mark the ring read: the kernel's cost of one signal per sample (the
 * wake-up's irq_work, the signal frame with the FPU state, sigreturn), which
 * any profiler of that design pays before doing any work of its own.
 *
 * The main thread's event is opened in a constructor, every other thread's at
 * its first instruction by interposing pthread_create (dlsym RTLD_NEXT), and
 * closed at thread exit (a TSD destructor, so pthread_exit counts too).
 *
 *   FLOOR_FREQ    samples per second of thread CPU time (default 1000)
 *   FLOOR_SIGNAL  1: an overflow signal per sample, with an empty handler
 *   FLOOR_DEBUG   1: one line on stderr per event opened and closed
 *   FLOOR_WAKEUP  N: one signal per N samples (wakeup_events N, with
 *                 FLOOR_SIGNAL), the ring sized for them: what batching costs
 *   FLOOR_STACK   BYTES: each sample also carries the user registers and
 *                 BYTES of user stack (PERF_SAMPLE_REGS_USER|STACK_USER), the
 *                 kernel's cost of the snippets a batched unwinder reads
 *   FLOOR_TICK    N: with FLOOR_SIGNAL, the signal comes from a second
 *                 cpu-clock event once per N samples (autoprof's batching);
 *                 the sampling event raises none
 *   FLOOR_PAGES   data pages of the ring (a power of two; default 1, or
 *                 enough for the batch when FLOOR_WAKEUP is set)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct floor_thread {
	int fd, tick;
	void *ring;
	size_t ring_size;
};

static unsigned long floor_freq = 1000;
static int floor_debug;
static int floor_signal;
static int floor_on;
static unsigned floor_wakeup = 1;
static unsigned floor_stack;
static unsigned floor_pages = 1; /* data pages */
static unsigned floor_tick;	 /* FLOOR_TICK */
static pthread_key_t floor_key;
static __thread struct floor_thread floor_self = {.fd = -1, .tick = -1};
static __thread unsigned long floor_signals; /* overflow signals taken */

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct start_args {
	void *(*routine)(void *);
	void *arg;
};

static void floor_open(void)
{
	struct perf_event_attr attr;
	long page = sysconf(_SC_PAGESIZE);
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = floor_freq;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.wakeup_events = floor_signal ? floor_wakeup : 0;
	if (floor_stack) {
		attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr.sample_regs_user = 0xff0fff; /* x86-64: ax..r15 (no segments, flags) */
		attr.sample_stack_user = floor_stack;
	}

	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (floor_debug)
			fprintf(stderr, "floor: tid %d: perf_event_open: %s\n", (int)tid,
				strerror(errno));
		return;
	}
	floor_self.ring_size = (size_t)page * (1 + floor_pages);
	floor_self.ring =
	    mmap(NULL, floor_self.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (floor_self.ring == MAP_FAILED) {
		if (floor_debug)
			fprintf(stderr, "floor: tid %d: mmap: %s\n", (int)tid, strerror(errno));
		floor_self.ring = NULL;
		close(fd);
		return;
	}
	floor_self.fd = fd;
	if (floor_signal && floor_tick > 1) {
		/* autoprof's batching: the signal comes from a second cpu-clock
		 * event, once per floor_tick samples; the sampling event has none. */
		struct perf_event_attr tick;
		struct f_owner_ex owner = {F_OWNER_TID, tid};

		memset(&tick, 0, sizeof(tick));
		tick.size = sizeof(tick);
		tick.type = PERF_TYPE_SOFTWARE;
		tick.config = PERF_COUNT_SW_CPU_CLOCK;
		tick.sample_period = 1000000000ULL / floor_freq * floor_tick;
		tick.wakeup_events = 1;
		floor_self.tick =
		    (int)syscall(SYS_perf_event_open, &tick, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (floor_self.tick < 0 || fcntl(floor_self.tick, F_SETOWN_EX, &owner) ||
		    fcntl(floor_self.tick, F_SETSIG, SIGRTMIN + 5) ||
		    fcntl(floor_self.tick, F_SETFL, fcntl(floor_self.tick, F_GETFL) | O_ASYNC))
			fprintf(stderr, "floor: tid %d: tick: %s\n", (int)tid, strerror(errno));
	} else if (floor_signal) {
		struct f_owner_ex owner = {F_OWNER_TID, tid};

		if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, SIGRTMIN + 5) ||
		    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC))
			fprintf(stderr, "floor: tid %d: fcntl: %s\n", (int)tid, strerror(errno));
	}
	/* Any non-NULL value makes the destructor run at thread exit. */
	pthread_setspecific(floor_key, &floor_self);
	if (floor_debug)
		fprintf(stderr, "floor: tid %d: cpu-clock at %lu Hz, fd %d, %d-page ring\n",
			(int)tid, floor_freq, fd, 1 + floor_pages);
}

static void floor_close(void)
{
	void *ring = floor_self.ring;
	sigset_t block, old;

	if (floor_self.fd < 0)
		return;
	/* A signal between the munmap and the close would have the handler
	 * write to the unmapped ring (a SIGSEGV in 1 run of 25 at thread exit
	 * with FLOOR_TICK): no signal meanwhile, and the ring forgotten first. */
	sigemptyset(&block);
	sigaddset(&block, SIGRTMIN + 5);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if (floor_debug) {
		struct perf_event_mmap_page *meta = floor_self.ring;

		fprintf(stderr, "floor: tid %d: closing fd %d (data_head %llu, %lu signals)\n",
			(int)syscall(SYS_gettid), floor_self.fd,
			(unsigned long long)__atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE),
			floor_signals);
	}
	floor_self.ring = NULL;
	if (floor_self.tick >= 0)
		close(floor_self.tick);
	close(floor_self.fd);
	munmap(ring, floor_self.ring_size);
	floor_self.tick = -1;
	floor_self.fd = -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void floor_key_destructor(void *unused)
{
	(void)unused;
	floor_close();
}

/* The overflow signal's handler: mark everything in this thread's ring read. */
static void on_overflow(int signo, siginfo_t *si, void *uc)
{
	struct perf_event_mmap_page *meta = floor_self.ring;

	(void)signo, (void)si, (void)uc;
	floor_signals++;
	if (meta)
		__atomic_store_n(&meta->data_tail,
				 __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
}

static void *floor_start(void *p)
{
	struct start_args args = *(struct start_args *)p;

	free(p);
	if (floor_on)
		floor_open();
	return args.routine(args.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *),
		   void *arg)
{
	static pthread_create_fn real;
	pthread_create_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	struct start_args *args;
	int err;

	if (!fn) {
		fn = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
		if (!fn)
			return EAGAIN;
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	if (!floor_on)
		return fn(thread, attr, routine, arg);
	args = malloc(sizeof(*args));
	if (!args)
		return EAGAIN;
	args->routine = routine;
	args->arg = arg;
	err = fn(thread, attr, floor_start, args);
	if (err)
		free(args);
	return err;
}

__attribute__((constructor)) static void floor_init(void)
{
	const char *s = getenv("FLOOR_FREQ");
	const char *d = getenv("FLOOR_DEBUG");
	const char *sig = getenv("FLOOR_SIGNAL");

	const char *w = getenv("FLOOR_WAKEUP");
	const char *st = getenv("FLOOR_STACK");
	const char *pg = getenv("FLOOR_PAGES");
	const char *tk = getenv("FLOOR_TICK");

	floor_debug = d && *d && strcmp(d, "0") != 0;
	if (tk && *tk)
		floor_tick = (unsigned)strtoul(tk, NULL, 10);
	if (floor_tick > 1)
		floor_wakeup = floor_tick; /* the ring's size */
	if (w && *w)
		floor_wakeup = (unsigned)strtoul(w, NULL, 10) ?: 1;
	if (st && *st)
		floor_stack = ((unsigned)strtoul(st, NULL, 10) + 7) & ~7U;
	/* room for two batches of samples of about 100 bytes plus the snippet */
	while ((size_t)floor_pages * 4096 < 2ULL * floor_wakeup * (128 + floor_stack + 200) &&
	       floor_pages < 1024)
		floor_pages *= 2;
	if (pg && *pg)
		floor_pages = (unsigned)strtoul(pg, NULL, 10) ?: 1;
	floor_signal = sig && *sig && strcmp(sig, "0") != 0;
	if (floor_signal) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_overflow;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&sa.sa_mask);
		if (sigaction(SIGRTMIN + 5, &sa, NULL)) {
			fprintf(stderr, "floor: sigaction: %s; not sampling\n", strerror(errno));
			return;
		}
	}
	if (s && *s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (*end || v == 0) {
			fprintf(stderr, "floor: bad FLOOR_FREQ=%s; not sampling\n", s);
			return;
		}
		floor_freq = v;
	}
	if (pthread_key_create(&floor_key, floor_key_destructor))
		return;
	floor_on = 1;
	floor_open();
}

__attribute__((destructor)) static void floor_fini(void)
{
	floor_close();
}
