/* SPDX-License-Identifier: MIT */
/*
 * memory.c - AUTOPROF_MEMORY: allocations sampled by bytes (memory.h tells
 * the scheme), each sample a SAMPLE record of alloc-bytes at the stack of
 * the allocation's caller, and the sampled blocks kept in live.c's table
 * until they are freed; at the image's end what is left is written as
 * live-bytes records.
 *
 * A sample is taken in the program's context, on the allocating thread,
 * with the thread's guard up (memory__guard_up(): what libunwind and we allocate
 * passes straight through, uncounted, and so do the allocations and frees
 * of a handler of the program that interrupts us, which therefore never
 * waits for a table we hold) and the thread's buffer claimed with
 * buffer__enter() (our sampling handler then leaves the thread alone: its
 * records wait in the ring for the next signal). The stack, from the
 * allocator's caller on, is walked by memory_stack.c with the objects'
 * .eh_frame rules (read from our lock-free table of objects), or by
 * libunwind's fast trace where that walk cannot follow. The record goes to the thread's
 * buffer; a thread without one (started before the library, or whose
 * buffer a visitor holds) writes through a static buffer, with every signal
 * blocked (raw rt_sigprocmask: the program's view of its mask is its own).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "autoprof/events.h"
#include "memory.h"

AP_TLS struct ap_mem_thread ap_mem;
bool ap_mem_on;
uint64_t ap_mem_interval = 512 * 1024;

static uint64_t alloc_id, live_id;		  /* the attrs' ids in the file, 0: none */
static uint64_t samples, sampled_bytes, unplaced; /* atomic */
static uint64_t paused_bytes;	  /* estimated, allocated while paused (ctl stop); atomic */
static uint64_t snapshots_missed; /* windows without their live set; atomic */
static uint64_t dumps_missed;	  /* ctl dumps without a live set; atomic */
static uint64_t fork_dropped;	  /* the parent's sampled blocks a child dropped (fork_inside) */
/* Bytes allocated before sampling: the starting thread's (memory__mark()), others' (atomic). */
static uint64_t start_mark, pre_start;
/* The bytes note_bytes() stated in the image's file (memory__exec_fresh() states them again);
 * the sampled bytes of files that a failed exec's fresh start left behind. */
static uint64_t stated, restated;

#define MAX_RECORD (128 + (AP_MAX_CHAIN + 2) * 8)
#define MAX_TRACE  (AP_MAX_CHAIN + 32)

/* The chain and trace of samples on threads without a buffer, under shared_lock. */
static int shared_lock;
static uint64_t shared_chain[AP_MAX_CHAIN + 2] AP_LARGE_BSS;
static void *shared_trace[MAX_TRACE] AP_LARGE_BSS;
static char shared_record[MAX_RECORD] AP_LARGE_BSS;

/* Block every signal (raw: the program's view of its mask stays its own). */
static void block_all(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
}

static void restore(const sigset_t *old)
{
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

/*
 * The allocation's stack into chain (PERF_CONTEXT_USER first), from the
 * frame that returns to ret (the allocator's caller) on: walked by
 * memory_stack.c (own: the thread's buffer is entered), else with
 * libunwind's fast trace. Returns the entries, at least 2.
 */
static __attribute__((noinline)) unsigned caller_chain(uint64_t *chain, void **trace,
						       unsigned depth, uintptr_t ret, bool own)
{
	uintptr_t bias = 0;
	int got = 0, i = 0;
	unsigned n = 0;

	chain[n++] = PERF_CONTEXT_USER;
	if (autoprof.cfg->callgraph == AP_CG_NONE) /* AUTOPROF_CALLGRAPH=none: the caller only */
		goto caller;
	if (own) {
		got = memory_stack__chain(ret, chain + 1, (int)depth);
		if (got > 0)
			return (unsigned)got + 1;
		if (got < 0)
			goto caller;
	}
	got = unwind__trace_here(trace, (int)depth + 24, &bias);
	while (i < got && (uintptr_t)trace[i] + bias != ret)
		i++;
	if (i == got)
		goto caller; /* not found (no fast trace, a dlclose) */
	while (i + 1 < got && memory_stack__in_new((uintptr_t)trace[i] + bias - 1))
		i++; /* operator new's caller allocated */
	for (; i < got && n < depth + 1; i++)
		chain[n++] = (uintptr_t)trace[i] + bias;
	__asm__ volatile("" ::: "memory"); /* not a tail call: our frame must stay */
	return n;
caller:
	chain[n++] = ret;
	return n;
}

/* Put a sample's record in t's buffer (entered), the objects it touches first
 * when the stack is new to this file (a stack seen before had them noted). */
static void to_thread(struct ap_thread *t, const struct live_block *b, const uint64_t *chain,
		      unsigned nr, uint64_t now, bool first)
{
	char *out;
	size_t n;

	if (first || !b->stack)
		object_records__note(t, chain, nr);
	out = buffer__reserve(t, MAX_RECORD);
	n = memory_sample__put(out, MAX_RECORD, alloc_id, t->sampler->pid, (uint32_t)t->tid, now,
			       b->addr, b->weight, chain, nr, b->size);
	t->len += memory_agg__fold(t, out, n, b->stack); /* AUTOPROF_AGGREGATE: merged, or kept */
	if (!t->stats.first_time)
		t->stats.first_time = now;
	if (now > t->stats.last_time)
		t->stats.last_time = now;
	buffer__maybe_flush(t);
}

/*
 * Is this the profiler's own allocation: called from this library or from
 * libunwind? (Through libc, as getline or opendir do for us, they are ours
 * too; those happen outside sampling or under the guard: at start, at stop,
 * in a forked child before memory.c's fork handler lowers it.)
 */
static bool ours(uintptr_t ret)
{
	return objects__kind(ret) & (AP_OBJ_SELF | AP_OBJ_UNWINDER);
}

/* Record a sampled block of weight estimated bytes: its stack, the live table, the record. */
static __attribute__((noinline)) void take_sample(struct live_block *b, uintptr_t ret)
{
	struct ap_thread *t = ap_self;
	unsigned depth = autoprof.cfg->stack_depth, nr;
	uint64_t now = ap_now();

	if (ours(ret))
		return;
	if (t && buffer__enter(t)) {
		uint64_t *chain = (uint64_t *)(t->scratch + AP_RING_COPY_BYTES);
		void **trace = (void **)(t->scratch + AP_RING_COPY_BYTES + AP_CHAIN_BYTES);

		bool first;

		nr = caller_chain(chain, trace, depth, ret, true);
		b->stack = live__stack_id(chain + 1, nr - 1, (uint32_t)objects__file_gen(), &first);
		live__insert(b);
		to_thread(t, b, chain, nr, now, first);
		buffer__leave(t);
	} else {
		sigset_t old;
		size_t n;

		block_all(&old); /* the handler must not come in while we append to the file */
		while (__atomic_exchange_n(&shared_lock, 1, __ATOMIC_ACQUIRE))
			sched_yield();
		nr = caller_chain(shared_chain, shared_trace, depth, ret, false);
		b->stack = live__stack_id(shared_chain + 1, nr - 1, 0, NULL);
		live__insert(b);
		n = memory_sample__put(shared_record, sizeof(shared_record), alloc_id,
				       (uint32_t)autoprof.pid, (uint32_t)raw_syscall(SYS_gettid),
				       now, b->addr, b->weight, shared_chain, nr, b->size);
		if (n && !memory_agg__fold_shared(shared_record, n, now, b->stack))
			writer__append(&autoprof.writer, shared_record, n);
		writer__note_times(&autoprof.writer, now, now);
		__atomic_store_n(&shared_lock, 0, __ATOMIC_RELEASE);
		restore(&old);
		__atomic_fetch_add(&unplaced, 1, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&samples, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sampled_bytes, b->weight, __ATOMIC_RELAXED);
	__asm__ volatile("" ::: "memory");
}

/*
 * The slow path of an allocation of n bytes at p (memlib/alloc.c's counted()):
 * the count-down reached 0, or n is at least the interval, or this is the
 * thread's first allocation. Keeps errno. Not async-signal-safe.
 */
__attribute__((noinline)) void memory__allocated(void *p, size_t n, uintptr_t ret)
{
	struct live_block b = {.addr = (uintptr_t)p, .size = n ? n : 1};
	uint64_t k = 0;
	int saved;

	if (ap_mem.busy || !__atomic_load_n(&ap_mem_on, __ATOMIC_RELAXED))
		return;	    /* inside the profiler (a block of at least the interval), or stopped */
	if (ap_sandboxed) { /* in seccomp: no sample (they make system calls), count parked */
		ap_mem.left = INT64_MAX;
		return;
	}
	saved = errno;
	if (!ap_mem.rng) { /* its bytes before sampling started: stated at the end */
		__atomic_fetch_add(&pre_start, memory_link__lib()->idle_take(), __ATOMIC_RELAXED);
		memory_sample__seed();
		if (b.size < ap_mem_interval)
			ap_mem.left -= (int64_t)b.size;
	}
	if (b.size >= ap_mem_interval) {
		b.weight = b.size; /* always sampled, exactly */
		ap_mem.drawn += (int64_t)b.size;
	} else {
		while (ap_mem.left <= 0) {
			int64_t d = memory_sample__gap();

			k++;
			ap_mem.left += d;
			ap_mem.drawn += d;
		}
		b.weight = k * ap_mem_interval;
	}
	ap_mem.sampled += b.weight;
	/* paused (ctl stop) or stopping: the count goes on, the sample is not taken */
	if (b.weight && __atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) && !autoprof.paused) {
		memory__guard_up();
		take_sample(&b, ret);
		memory__guard_down();
	} else if (b.weight) { /* not in the profile, but seen (memory_unseen.c) */
		__atomic_fetch_add(&paused_bytes, b.weight, __ATOMIC_RELAXED);
	}
	errno = saved;
	__asm__ volatile("" ::: "memory");
}

/* The guard is up while a table is held: a handler of the program that frees
 * or allocates on this thread meanwhile passes straight through. */
bool memory__take(void *p, struct live_block *b)
{
	bool had;

	if (ap_mem.busy)
		return false; /* a handler of the program, inside the profiler: passes through */
	memory__guard_up();
	had = live__take((uintptr_t)p, b);
	memory__guard_down();
	return had;
}

void memory__put_back(const struct live_block *b)
{
	memory__guard_up();
	live__insert(b);
	memory__guard_down();
}

/* Append one attr (a software event whose samples carry the block and its size). */
static int add(struct writer_event *events, int n, const char *name, uint64_t *id)
{
	struct perf_event_attr *attr = &events[n].attr;

	if (n >= AP_MAX_EVENTS)
		return n;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_period = 0; /* no fixed period: each sample's is its bytes */
	attr->sample_type = AP_MEMORY_SAMPLE_TYPE;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	events[n].id = (uint64_t)n + 1;
	snprintf(events[n].name, sizeof(events[n].name), "%s", name);
	*id = events[n].id;
	return n + 1;
}

/*
 * The attrs of the file about to be opened: none when memory is not
 * profiled, or the mark of why it cannot be (said once). The first call
 * maps the live table.
 */
int memory__file_events(struct writer_event *events, int n)
{
	static int refused = -1;
	static const char *why; /* the mark's name when refused */
	uint64_t mark;
	int err;

	alloc_id = live_id = 0;
	if (!autoprof.cfg->memory)
		return n;
	if (refused < 0) {
		const struct ap_memory_lib *lib = memory_link__find(); /* its absence said */

		refused = !lib || !lib->interposed();
		why = !lib ? AP_MEMORY_MARK_NO_LIBRARY : AP_MEMORY_MARK_OUT_OF_REACH;
		if (lib && refused && memory_link__say_first())
			pr_warn("AUTOPROF_MEMORY: the program's malloc and free do not reach the "
				"library (an allocator linked into the program, or a tool such as "
				"valgrind that replaces them); allocations not profiled");
		if (!refused && (err = live__init())) { /* an address space too small (RLIMIT_AS) */
			refused = 1;
			why = AP_MEMORY_MARK_NO_TABLE;
			pr_warn("AUTOPROF_MEMORY: cannot map the live table: %s; allocations not "
				"profiled",
				strerror(-err));
		}
	}
	if (refused) /* the file says why it has no memory events: an event of that name */
		return add(events, n, why, &mark);
	n = add(events, n, "alloc-bytes", &alloc_id);
	n = add(events, n, "live-bytes", &live_id);
	return n;
}

/*
 * fork: every lock of the tables is held across it (memory.c's first, then
 * live.c's, in the order their holders take them), so the child's copy is
 * whole. Not when the fork comes from a handler that interrupted this
 * thread inside the profiler (its guard was up already): the interrupted
 * code may hold a lock, or wait for one another thread holds, so nothing is
 * waited for; the child frees the locks of the threads it does not have
 * (live__fork_child_inside()), and the parent has nothing to release.
 */
static void before_fork(void)
{
	bool inside = ap_mem.busy;

	memory__guard_up();
	if (inside)
		return;
	while (__atomic_exchange_n(&shared_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield(); /* its holder has every signal blocked and waits for live.c only */
	live__lock_all();
}

/* The guard raised by before_fork, and ours at the fork: did before_fork lock? */
static bool fork_locked(void)
{
	return ap_mem.busy == 1;
}

static void after_fork(void)
{
	if (fork_locked()) {
		live__unlock_all();
		__atomic_store_n(&shared_lock, 0, __ATOMIC_RELEASE);
	}
	memory__guard_down();
}

/*
 * The child's live set starts as the parent's (but what a thread the child
 * does not have was changing); its samples and file are its own, and so is
 * its draw (a preforked worker does not sample in step with its siblings).
 */
static void after_fork_child(void)
{
	samples = sampled_bytes = unplaced = pre_start = paused_bytes = stated = restated = 0;
	ap_mem.sampled = 0;
	memory_agg__forget();
	if (ap_mem.rng) { /* the countdown restored by the guard's end: drawn anew (and drawn,
			   * so the forking thread's bytes are its parent's) */
		memory_sample__seed();
		ap_mem.held = ap_mem.left;
		ap_mem.left = INT64_MAX;
	}
	if (!fork_locked()) {
		shared_lock = 0; /* its holder had every signal blocked: another thread */
		fork_dropped += live__fork_child_inside();
	}
	live__forked(); /* the blocks it samples from now on are its own */
	memory_unseen__fork_child();
	after_fork();
}

void memory__mark(void)
{
	const char *on = ap_env(AP_ENV_MEMORY); /* (the configuration is not read yet) */

	if (on && ap_env_word_on(on))
		start_mark = memory_link__idle_take();
}

/*
 * State n bytes not in the profile in w's file (memory_sample__note): at address 0 those
 * allocated before sampling started (counted in stated), at AP_MEMORY_UNSEEN_ADDR the
 * anonymous memory the wrappers did not see (memory_unseen.c). Not async-signal-safe.
 */
static void note_bytes(struct writer *w, uint64_t n, uint64_t addr)
{
	if (memory_sample__note(w, alloc_id, n, addr) && !addr)
		stated += n;
}

/* A failed exec of an image whose file was removed for it: counts from zero in the new one,
 * which states what the image allocated before (memory.h). Not async-signal-safe. */
void memory__exec_fresh(void)
{
	uint64_t all = __atomic_exchange_n(&sampled_bytes, 0, __ATOMIC_RELAXED), n = stated;
	int64_t own = ap_mem.rng ? ap_mem.drawn - ap_mem.left : 0; /* exact: this thread's */

	if (!autoprof.cfg->memory || !alloc_id)
		return;
	n += own > 0 ? (uint64_t)own : 0;
	n += all > ap_mem.sampled ? all - ap_mem.sampled : 0; /* other threads', estimated */
	__atomic_store_n(&samples, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&unplaced, 0, __ATOMIC_RELAXED);
	ap_mem.sampled = 0;
	ap_mem.drawn = ap_mem.left; /* its own bytes counted from here */
	stated = 0;
	restated += all; /* still seen by the wrappers (memory_unseen__check) */
	note_bytes(&autoprof.writer, n, 0);
}

void memory__start(void)
{
	static bool once, started;
	int err;

	if (!autoprof.cfg->memory || !alloc_id)
		return;
	if (!once) { /* the live table is mapped (memory__file_events) */
		ap_atfork(before_fork, after_fork, after_fork_child);
		memory_stack__init();
		memory_stack__find_new();
		once = true;
	}
	err = memory_agg__start();
	if (err)
		pr_warn("AUTOPROF_AGGREGATE: cannot map the memory records' table: %s; the "
			"alloc-bytes records of threads without a sampler are not merged",
			strerror(-err));
	ap_mem_interval = autoprof.cfg->memory_interval;
	__atomic_store_n(&ap_mem_on, true, __ATOMIC_RELEASE);
	memory_link__lib()->sampling(true, ap_mem_interval, ap_live_filter);
	if (!started) { /* the image's first start (not again after a failed exec) */
		started = true;
		memory_link__idle_take(); /* the profiler's own, since memory__mark() */
		note_bytes(&autoprof.writer, start_mark, 0);
		memory_unseen__start();
	}
}

/*
 * A deadly signal ends the process: write the live set unless the table is
 * in use (by the thread the signal interrupted, or another: then the file
 * has no live-bytes, and nothing waits). Async-signal-safe.
 */
void memory__stop_emergency(struct writer *w)
{
	uint64_t blocks, bytes;

	if (!__atomic_exchange_n(&ap_mem_on, false, __ATOMIC_ACQ_REL))
		return;
	memory_link__lib()->sampling(false, 0, NULL);
	memory__guard_up();
	memory_agg__flush();
	live_set__write(w, live_id, (uint32_t)autoprof.pid, ap_now(), &blocks, &bytes, false, false,
			false);
	memory__guard_down();
}

/*
 * A window ends (windows.c, from a handler, before its file is finished):
 * the file gets the live set of now. The table's lock is waited for a
 * bounded time only (its holder runs our code with signals blocked, and
 * waits for nothing of the handler's); a window whose live set could not be
 * written is counted and said at the end. Async-signal-safe.
 */
void memory__snapshot(struct writer *w)
{
	uint64_t blocks, bytes;

	if (!__atomic_load_n(&ap_mem_on, __ATOMIC_ACQUIRE) || !live_id)
		return;
	memory__guard_up();
	memory_agg__flush();
	if (live_set__write(w, live_id, (uint32_t)autoprof.pid, ap_now(), &blocks, &bytes, false,
			    false, false))
		__atomic_fetch_add(&snapshots_missed, 1, __ATOMIC_RELAXED);
	memory__guard_down();
}

/*
 * `autoprof ctl PID dump` (control.c, from a handler, after every thread's
 * buffer is flushed): the file gets the live set of now, as live-bytes
 * records; the live set written next to the same file (another dump, a
 * window's end, the image's end) retires it in place (its periods set to 0),
 * so that the file always holds one live set that counts. The tables are
 * waited for a bounded time only (missed dumps are counted and said at the
 * end). Async-signal-safe.
 */
void memory__dump(struct writer *w)
{
	uint64_t blocks, bytes;

	if (!__atomic_load_n(&ap_mem_on, __ATOMIC_ACQUIRE) || !live_id)
		return;
	memory__guard_up();
	memory_agg__flush();
	if (live_set__write(w, live_id, (uint32_t)autoprof.pid, ap_now(), &blocks, &bytes, false,
			    true, false)) /* busy, or no memory for the records */
		__atomic_fetch_add(&dumps_missed, 1, __ATOMIC_RELAXED);
	memory__guard_down();
}

uint64_t memory__samples(void)
{
	return __atomic_load_n(&samples, __ATOMIC_RELAXED);
}

/* Does the image's file stay (lifecycle.c removes a descendant's without samples)? */
static bool keeps_file(void)
{
	return samples || autoprof.stats.samples || autoprof.top;
}

bool memory__an_interval(void)
{
	uint64_t all = __atomic_load_n(&sampled_bytes, __ATOMIC_RELAXED);
	int64_t left = ap_mem.busy ? ap_mem.held : ap_mem.left; /* the guard parks it in held */
	int64_t own = ap_mem.rng ? ap_mem.drawn - left : 0;	/* exact */
	/* at small intervals too, a wrapper's few allocations (env: about 19 KB) are not enough */
	uint64_t least = ap_mem_interval > AP_MEM_KEEPS_FILE ? ap_mem_interval : AP_MEM_KEEPS_FILE;

	if (!__atomic_load_n(&samples, __ATOMIC_RELAXED))
		return false;
	return own >= (int64_t)least || (all > ap_mem.sampled && all - ap_mem.sampled >= least);
}

/*
 * The image's end (exit, exec). From a handler that interrupted this thread
 * inside the profiler (its guard up: an exec or exit in a signal handler),
 * the tables are waited for a bounded time only, and not at all when the
 * interrupted code holds them: the live set is then not written, and said.
 */
void memory__stop(struct writer *w, bool more)
{
	static bool said_busy; /* a handler's exec that fails on every tick says it once */
	uint64_t blocks = 0, bytes = 0, before;
	bool inside = ap_mem.busy, held;
	int err;

	if (!__atomic_exchange_n(&ap_mem_on, false, __ATOMIC_ACQ_REL))
		return;
	memory_link__lib()->sampling(false, 0, NULL);
	memory__guard_up();
	memory_agg__stop();
	/* a write of this thread's that an exec's handler interrupted resumes if the exec fails */
	held = writer_lock__held_here(w);
	err = held ? -EBUSY
		   : live_set__write(w, live_id, (uint32_t)autoprof.pid, ap_now(), &blocks, &bytes,
				     !inside, more, more);
	memory__guard_down();
	if (err == -EBUSY && (inside || held)) {
		if (keeps_file() && !__atomic_exchange_n(&said_busy, true, __ATOMIC_RELAXED))
			pr_warn("AUTOPROF_MEMORY: the live set is not in the file: the image "
				"ended in a signal handler that interrupted the profiler%s",
				more ? " (said once)" : "");
	} else if (err && err != -EFBIG) { /* past RLIMIT_FSIZE: the file's end says it once */
		pr_warn("AUTOPROF_MEMORY: writing the live set failed: %s", strerror(-err));
	}
	if (!held) {
		before = __atomic_exchange_n(&pre_start, 0, __ATOMIC_RELAXED);
		note_bytes(w, before, 0);
		note_bytes(w,
			   memory_unseen__check(sampled_bytes + paused_bytes + before + start_mark +
						restated),
			   AP_MEMORY_UNSEEN_ADDR);
	}
	pr_info(
	    "memory: %llu allocation samples (%llu bytes estimated, interval %llu), "
	    "%llu sampled blocks live at the end (%llu bytes estimated); the profiler's tables: "
	    "%.1f MiB%s",
	    (unsigned long long)samples, (unsigned long long)sampled_bytes,
	    (unsigned long long)ap_mem_interval, (unsigned long long)blocks,
	    (unsigned long long)bytes, (double)live__footprint() / (1 << 20),
	    unplaced ? "; some on threads without a sampler" : "");
	if (snapshots_missed)
		pr_warn("AUTOPROF_MEMORY: %llu windows' files have no live set (%s)",
			(unsigned long long)snapshots_missed,
			"the table was busy, or memory short");
	if (dumps_missed)
		pr_warn("AUTOPROF_MEMORY: %llu ctl dumps wrote no live set (%s)",
			(unsigned long long)dumps_missed, "the table was busy, or memory short");
	if (fork_dropped && keeps_file())
		pr_warn("AUTOPROF_MEMORY: %llu sampled blocks of the parent's live set dropped: "
			"forked in a signal handler while another thread was changing the table",
			(unsigned long long)fork_dropped);
	live_set__say_full();
}
