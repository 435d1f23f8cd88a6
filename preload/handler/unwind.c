/* SPDX-License-Identifier: MIT */
/*
 * unwind.c - walk the interrupted user stack with libunwind.
 *
 * libunwind reads DWARF CFI (.eh_frame), so programs built without frame
 * pointers unwind fully. Its traps in a signal handler, and what we do
 * about them:
 *  - the first init loads libunwind (unwind_lib.c: not linked in), takes a
 *    mutex and opens a pipe: unwind__prime_thread() runs it outside any handler;
 *    at start only where a live stack is walked as a rule (a signal per
 *    sample, memory and off-CPU stacks, a start paused). A batched sampler
 *    walks its copies (cfi.c) and needs libunwind only now and then, for
 *    the program's stack under a sample of the handler's own work where
 *    the live walk cannot (2 samples in 1,000 of 4 threads, 1 in 350 of
 *    one): its process sets libunwind up as it makes its first thread (or
 *    for a thread whose sampler is not batched), so that the short
 *    processes of a build or a script do without (200-250 us and 20 system
 *    calls each in the VMs we measure). Until then a handler does not call
 *    libunwind (unwind__ready()): such a sample keeps its pc, counted as not
 *    unwound; so does one of a thread that `autoprof ctl start` re-arms,
 *    from its handler, with a signal per sample (its batched events did not
 *    fit) in a process that never had a second thread;
 *  - FDE lookup calls dl_iterate_phdr(), which takes the loader's lock: while
 *    we unwind, objects.c answers it from its own table, lock-free, and a
 *    dlclose in progress makes us skip the unwind (objects__enter);
 *  - a pc in the loader, libunwind, libgcc_s's unwinder (_Unwind_*: a stack
 *    mid-switch that libunwind faults on) or this library is not unwound:
 *    we keep the ip and count the sample (objects__kind, ranges found once);
 *  - names are never resolved here (unw_get_proc_name may malloc);
 *  - the walk is unw_backtrace(), libunwind's fast tracer: it caches each
 *    ip's frame layout (CFA = rsp or rbp + offset) in a per-thread table, so
 *    a warm sample costs a few loads per frame instead of a DWARF step. It
 *    starts in the handler and crosses the signal frame; we keep what
 *    follows the interrupted pc. The table (256 KB a thread, written whole:
 *    64 page faults) is made by unwind__prime_thread(), outside any handler,
 *    only where the fast trace is the usual walk (a signal per sample);
 *    memory samples walk their live stacks with memory_stack.c and come
 *    to libunwind (unwind__trace_here) only where it cannot; a batched
 *    sampler walks its stack copies with cfi.c and needs libunwind's walk
 *    only now and then, for the program's stack under a sample of the
 *    handler's own work. Without the table, and when the trace does not
 *    reach the signal frame, an unw_init_local2(UNW_INIT_SIGNAL_FRAME) +
 *    unw_step() walk does it;
 *  - libunwind blocks every signal with sigprocmask around its cache lock,
 *    twice per frame: in our handler, whose sa_mask already blocks them all,
 *    those calls are redundant, and the signals.c wrappers skip them while
 *    unwind__in_handler() says so (12 system calls per 6-frame sample).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>

#include "handler.h"
#include "settled.h"
#include "setup.h"
#include "unwind_lib.h"

/* Samples not unwound because their pc was in code that must not be (atomic). */
static uint64_t skipped_in_text;

/* Set while this thread unwinds inside the sampling handler. */
static AP_TLS bool unwinding_in_handler;

/*
 * What unw_backtrace() stores for a caller: its return address (bias 0, as
 * perf's chains have it) or one less (bias 1, added back); fast_trace is
 * false when a probe at start-up made sense of neither.
 */
static bool fast_trace;
static uintptr_t trace_bias;

/* Threads make their fast-trace table at start (unwind__init's want_trace). */
static bool want_trace;

/* libunwind's first init is done (init_once()): handlers may call it. */
static bool ready;

/*
 * Held over libunwind's first init and across every fork (unwind__init's
 * atfork handlers): the init holds libunwind's own mutex for 200-250 us, and
 * a child forked meanwhile by another thread would find it taken for good.
 * Every signal is blocked while it is held (fork_mask: the forking thread's
 * mask before), so no handler of the program forks or sets libunwind up on a
 * thread that holds it.
 */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static AP_TLS uint64_t fork_mask;

static void before_fork(void)
{
	uint64_t all = ~0ULL, old;

	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(old), 0, 0);
	pthread_mutex_lock(&init_lock);
	fork_mask = old;
}

static void after_fork(void)
{
	uint64_t old = fork_mask;

	pthread_mutex_unlock(&init_lock);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old), 0, 0);
}

/* libunwind's first init (unw_init_local's), every signal blocked meanwhile (a
 * fork from a handler of the program would wait for init_lock here). */
static void init_once(void)
{
	unw_context_t ctx;
	unw_cursor_t cursor;
	uint64_t all = ~0ULL, old;

	/* the load outside init_lock: a constructor of the program's that forks while
	 * another thread of it holds the loader's lock must not wait on it */
	if (!unwind_lib__load())
		return;
	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(old), 0, 0);
	pthread_mutex_lock(&init_lock);
	if (!unwind__ready() && unwind_lib__getcontext(&ctx) == 0 &&
	    unwind_lib.init_local(&cursor, &ctx) == 0)
		__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&init_lock);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old), 0, 0);
}

/* This thread's fast-trace table is made (outside any handler). */
static AP_TLS bool trace_ready;

/* Learn trace_bias from one unw_backtrace() whose answer is known. Not async-signal-safe. */
static __attribute__((noinline)) void probe_fast_trace(void)
{
	void *trace[4];
	int n = unwind_lib.backtrace(trace, 4);
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);

	/* trace[0] is in this function, trace[1] is its caller. */
	fast_trace = n >= 2 && ((uintptr_t)trace[1] == ret || (uintptr_t)trace[1] == ret - 1);
	trace_bias = fast_trace ? ret - (uintptr_t)trace[1] : 0;
	__asm__ volatile("" ::: "memory"); /* not a tail call: the caller's frame must stay */
}

/*
 * One-time set-up, outside any handler. libunwind's fast trace walks every
 * sample of a signal-per-sample sampler: each sampled thread makes its
 * table at start. Batched samplers walk their copies; memory samples and
 * off-CPU waits walk their live stacks (memory_stack.c, offcpu.c: libunwind
 * where they cannot), a start paused arms its threads later from a handler,
 * maybe with a signal per sample: libunwind is set up now where it may be
 * needed at once, else when the process makes its first thread, or for a
 * thread whose sampler turns out not batched (samplers__need_unwinder), or
 * never. Returns 0. Not async-signal-safe.
 */
int unwind__init(const struct ap_settled *cfg, bool paused)
{
	static bool registered;
	/* (off-CPU waits alone, with fp stacks: their fast trace is made at the first wait) */
	bool fast = (cfg->callgraph == AP_CG_LIBUNWIND || cfg->timer_mode || cfg->memory) &&
		    (cfg->timer_mode || !perf_event__batched(cfg));

	objects__init();
	chain__set_main_stack();
	want_trace = fast;
	if (!registered)
		registered = ap_atfork(before_fork, after_fork, after_fork) == 0;
	if (fast || cfg->memory || cfg->offcpu || paused)
		unwind__prime_thread();
	return 0;
}

/* Has libunwind been set up, so that a handler may walk with it? Async-signal-safe. */
bool unwind__ready(void)
{
	return __atomic_load_n(&ready, __ATOMIC_ACQUIRE);
}

/*
 * Make the calling thread's fast-trace table (and learn, once, what the
 * trace stores: probe_fast_trace), where unwind__init was not told every
 * thread needs one: a thread whose sampler is a signal per sample (its
 * batched events did not fit, or it starts paused). Outside any handler.
 * Not async-signal-safe.
 */
void unwind__prime_trace(void)
{
	static pthread_once_t probed = PTHREAD_ONCE_INIT;
	void *trace[2];

	if (trace_ready)
		return;
	if (!unwind__ready())
		init_once();
	if (!unwind__ready())
		return; /* libunwind could not be loaded (said once) */
	pthread_once(&probed, probe_fast_trace);
	if (fast_trace) {
		unwind_lib.backtrace(trace, 2);
		trace_ready = true;
	}
}

/*
 * Run one unwind on the calling thread so that libunwind's lazy, locking
 * initialisation (and, where wanted, this thread's trace table) is done
 * before the first signal. Not async-signal-safe.
 */
void unwind__prime_thread(void)
{
	static AP_TLS bool primed; /* a forked child's thread is its parent's, as ready is */
	unw_context_t ctx;
	unw_cursor_t cursor;

	if (!unwind__ready())
		init_once();
	if (want_trace)
		unwind__prime_trace();
	if (primed || !unwind__ready())
		return;
	if (unwind_lib__getcontext(&ctx) || unwind_lib.init_local(&cursor, &ctx))
		return;
	unwind_lib.step(&cursor);
	primed = true;
}

/* The interrupted pc (or, with sp, the stack pointer) of a signal context. */
static uintptr_t ucontext_reg(const ucontext_t *uc, bool sp)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[sp ? REG_RSP : REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)(sp ? uc->uc_mcontext.sp : uc->uc_mcontext.pc);
#else
#error "autoprof: add this architecture's pc and sp to ucontext_reg()"
#endif
}

/* Is pc in libunwind's code or in this library's? Async-signal-safe. */
bool unwind__is_profiler_pc(uintptr_t pc)
{
	return objects__kind(pc) & (AP_OBJ_UNWINDER | AP_OBJ_SELF);
}

/* Is pc in libunwind's own code? Async-signal-safe. */
bool unwind__owns_pc(uintptr_t pc)
{
	return objects__kind(pc) & AP_OBJ_UNWINDER;
}

/*
 * Is this thread unwinding from inside the sampling handler, where every
 * asynchronous signal is blocked already? Async-signal-safe.
 */
bool unwind__in_handler(void)
{
	return unwinding_in_handler;
}

/* The interrupted pc of a signal context. Async-signal-safe. */
uint64_t unwind__pc(void *ucontext)
{
	return ucontext_reg(ucontext, false);
}

/* The interrupted sp of a signal context. Async-signal-safe. */
uint64_t unwind__sp(void *ucontext)
{
	return ucontext_reg(ucontext, true);
}

/* The interrupted frame pointer of a signal context. Async-signal-safe. */
uint64_t unwind__bp(void *ucontext)
{
	const ucontext_t *uc = ucontext;

#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
	return (uint64_t)uc->uc_mcontext.regs[29];
#endif
}

/*
 * The signal return trampoline a handler's frame returns to (__restore_rt),
 * where the kernel stored it just below the signal context; 0 where it is
 * not kept on the stack. Async-signal-safe.
 */
uint64_t unwind__restorer(void *ucontext)
{
#if defined(__x86_64__)
	return *((const uint64_t *)ucontext - 1); /* struct rt_sigframe's pretcode */
#else
	(void)ucontext;
	return 0;
#endif
}

/*
 * The fast trace from here (in the handler) through the signal frame; the
 * part after the interrupted pc goes to ips. Returns the frames stored, or
 * 0 when the trace did not get past the signal frame. Async-signal-safe.
 */
static int fast_stack(uintptr_t pc, uint64_t *ips, int max, void **trace, int trace_max)
{
	int got, i = 0, n = 0;

	if (trace_max > max + AP_HANDLER_FRAMES)
		trace_max = max + AP_HANDLER_FRAMES;
	got = unwind_lib.backtrace(trace, trace_max);
	while (i < got && (uintptr_t)trace[i] != pc)
		i++;
	if (i == got)
		return 0;
	ips[n++] = pc;
	for (i++; i < got && n < max; i++)
		ips[n++] = (uintptr_t)trace[i] + trace_bias;
	return n;
}

/*
 * Store the interrupted pc and then the return addresses of its callers,
 * innermost first, from the signal handler's ucontext; trace is room for
 * trace_max raw entries; *slow says whether the DWARF walk had to do it.
 * Returns how many were stored (at least 1), or 0 when this context must
 * not be unwound. Only from the sampling handler,
 * whose mask blocks every asynchronous signal. Async-signal-safe under the
 * conditions in the file comment.
 */
int unwind__stack(void *ucontext, uint64_t *ips, int max, void **trace, int trace_max, bool *slow)
{
	ucontext_t *uc = ucontext;
	uintptr_t pc = ucontext_reg(uc, false);
	unw_cursor_t cursor;
	int n = 0;

	*slow = false;
	if (max <= 0 || !unwind__ready())
		return 0; /* a batched run that never needed libunwind: not set up */
	if (objects__kind(pc)) {
		/* the loader, an unwinder or this library: locks or a stack mid-switch */
		__atomic_fetch_add(&skipped_in_text, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (!objects__enter())
		return 0;   /* a dlclose is unmapping: no object may be read now */
	objects__learn(pc); /* a library loaded since: its unwind tables */
	unwinding_in_handler = true;
	if (fast_trace && trace_ready && trace && trace_max > 0)
		n = fast_stack(pc, ips, max, trace, trace_max);
	*slow = n == 0;
	if (n == 0 &&
	    unwind_lib.init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
		do {
			unw_word_t ip;

			if (unwind_lib.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			ips[n++] = ip;
		} while (n < max && unwind_lib.step(&cursor) > 0);
	}
	unwinding_in_handler = false;
	objects__leave();
	return n;
}

/*
 * The stack of the calling thread from here, for a sample taken in the
 * program's context with every signal blocked (session/memory.c): raw
 * entries in trace, *bias to add to a caller's entry to make it its return
 * address. The fast trace where this thread made its table (a thread whose
 * CPU samples are walked by it), else libunwind's DWARF steps: the table is
 * 64 pages written whole, not made for memory samples, which memory_stack.c
 * walks and which come here only where it cannot (a signal frame, a
 * coroutine's stack, a thread the library did not start). Returns the
 * entries, 0 while a dlclose unmaps.
 */
int unwind__trace_here(void **trace, int max, uintptr_t *bias)
{
	unw_context_t ctx;
	unw_cursor_t cursor;
	int got = 0;

	if (max <= 0 || !unwind__ready() || !objects__enter())
		return 0;
	unwinding_in_handler = true;
	*bias = 0;
	if (fast_trace && trace_ready) {
		got = unwind_lib.backtrace(trace, max);
		*bias = trace_bias;
	} else if (unwind_lib__getcontext(&ctx) == 0 && unwind_lib.init_local(&cursor, &ctx) == 0) {
		do {
			unw_word_t ip;

			if (unwind_lib.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			trace[got++] = (void *)ip; /* a caller's: its return address */
		} while (got < max && unwind_lib.step(&cursor) > 0);
	}
	unwinding_in_handler = false;
	objects__leave();
	return got;
}

/* Samples not unwound because they landed in the loader, an unwinder or this library. */
uint64_t unwind__skipped_in_text(void)
{
	return __atomic_load_n(&skipped_in_text, __ATOMIC_RELAXED);
}

/*
 * The fast trace from here, in the program's context (offcpu.c), into trace
 * (at most max entries): how many, 0 where libunwind is not set up. Not
 * async-signal-safe.
 */
int unwind__backtrace(void **trace, int max)
{
	return unwind__ready() ? unwind_lib.backtrace(trace, max) : 0;
}

/* Drop libunwind's cached frame layouts (an object was unloaded), where it is set up. */
void unwind__flush_cache(void)
{
	if (unwind__ready())
		unwind_lib.flush_cache(*unwind_lib.local_as, 0, 0);
}
