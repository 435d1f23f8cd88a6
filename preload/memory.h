/* SPDX-License-Identifier: MIT */
/*
 * memory.h - native memory profiles (AUTOPROF_MEMORY): allocations sampled
 * by bytes, and what of them is still live.
 *
 *   memlib/alloc.c     malloc & co interposed, the real ones found without
 *                      allocating (a static arena serves dlsym's own calls):
 *                      libautoprof-memory.so, preloaded for memory profiles
 *                      only (memory_link.h: how the two libraries link)
 *   session/memory_link.c  libautoprof.so's side of that link
 *   session/memory.c   the Poisson sampling, each sample's record of
 *                      alloc-bytes; the attrs; start, stop, fork
 *   session/memory_stack.c  each sample's stack, walked on the live stack
 *   session/live.c     the sampled blocks still live, by address, and their
 *                      stacks (live_tables.h)
 *   session/live_set.c  the live set written as live-bytes records
 *
 * Sampling (tcmalloc's and heapprofd's scheme): each thread counts down the
 * bytes it allocates from an exponentially distributed interval of mean T
 * (AUTOPROF_MEMORY_INTERVAL); an allocation of n < T bytes that crosses k
 * interval ends is a sample weighing k * T bytes, so the estimate per stack
 * is unbiased (E[k] = n / T); an allocation of n >= T bytes is always a
 * sample, of its n bytes exactly. T = 1 records every allocation.
 *
 * Records: SAMPLE records of the attrs alloc-bytes and live-bytes, with
 * PERF_SAMPLE_ADDR (the block) and PERF_SAMPLE_WEIGHT (its size in bytes)
 * added to the file's sample layout; the period is the estimated bytes, and
 * period / weight the estimated objects.
 */
#ifndef AUTOPROF_MEMORY_H
#define AUTOPROF_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "memory_link.h"

/* The sample layout of the memory attrs: the file's, with the block and its size. */
#define AP_MEMORY_SAMPLE_TYPE (AUTOPROF_SAMPLE_TYPE | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT)
/* Where a memory SAMPLE record's period is (memory_sample__put's layout). */
#define AP_MEMORY_PERIOD_AT 56

extern AP_TLS struct ap_mem_thread ap_mem;
/* Allocations are sampled (set at start, cleared at stop); the mean interval. */
extern bool ap_mem_on;
extern uint64_t ap_mem_interval;

/*
 * Raise the thread's guard (nested): its allocations and frees pass through.
 * A handler that interrupts these (and raises the guard itself) sees the
 * guard up before left is parked, and left restored before the guard is
 * down: the signal fences keep the compiler to that order.
 */
static inline void memory__guard_up(void)
{
	if (ap_mem.busy++)
		return;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ap_mem.held = ap_mem.left;
	ap_mem.left = INT64_MAX;
}

static inline void memory__guard_down(void)
{
	if (ap_mem.busy == 1)
		ap_mem.left = ap_mem.held;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ap_mem.busy--;
}

/* ---- session/memory_link.c ---- */

/*
 * libautoprof-memory.so's controls, found once (AUTOPROF_MEMORY): NULL when
 * it is not preloaded (said once, with the LD_PRELOAD that loads it). Not
 * async-signal-safe.
 */
const struct ap_memory_lib *memory_link__find(void);
/*
 * Is this process the first of its run to say that allocations are not
 * profiled? Then it marks the run (AUTOPROF_MEMORY_SAID, inherited by its
 * descendants, kept across their execs), so that a tree of processes with
 * the same lack says it once; a process with a lack of its own (a program
 * with its allocator linked in) below one that had none still says it. Call
 * at start (setenv). Not async-signal-safe.
 */
bool memory_link__say_first(void);
/*
 * The calling thread's bytes allocated while not sampling, since its first
 * allocation or the last call (the library's count starts again); 0 without
 * the library. Links to it quietly. Not async-signal-safe.
 */
uint64_t memory_link__idle_take(void);
/* The controls found by memory_link__find(), or NULL. Async-signal-safe. */
const struct ap_memory_lib *memory_link__lib(void);
/* The path libautoprof-memory.so was loaded from, or "" when it was not. Not async-signal-safe. */
const char *memory_link__path(void);

/* ---- session/memory_unseen.c ---- */

/* At the image's first start: the anonymous memory the process holds (one read of
 * /proc/self/status). Not async-signal-safe. */
void memory_unseen__start(void);
/* In a forked child (its counts start from zero): its own start, read again. No lock, no
 * allocation (a child of a fork from a signal handler). */
void memory_unseen__fork_child(void);
/*
 * At the image's end, seen: the bytes the wrappers saw allocated (estimated). When the
 * anonymous memory grew by far more than that, says so once (most of it came from an
 * allocator the library cannot see) and returns the bytes not seen, else 0. Not
 * async-signal-safe (a warning's formatting).
 */
uint64_t memory_unseen__check(uint64_t seen);

/* ---- session/memory.c ---- */

/* The attrs alloc-bytes and live-bytes, appended to the file's n events. Returns the new count. */
int memory__file_events(struct writer_event *events, int n);
/*
 * At the start of libautoprof.so's constructor, before it allocates (AUTOPROF_MEMORY on):
 * the bytes this thread allocated so far, which memory__start() states in the file.
 */
void memory__mark(void);
/* Start sampling allocations (AUTOPROF_MEMORY), after the session's file is open. */
void memory__start(void);
/*
 * Stop sampling; write the live set as live-bytes records (w: the session's
 * file). more: the file may go on after it (before an exec, which can fail):
 * the set is kept, and the next one written to the file retires it.
 */
void memory__stop(struct writer *w, bool more);
/*
 * A failed exec of an image whose file was removed for it (a descendant that handed its name
 * on): the new file's counts start from zero, and what the image allocated before the exec
 * (its records went with the removed file; its blocks still live stay in the live set) is
 * stated in it as not in the profile, with what the removed file stated. After the file is
 * open, before memory__start().
 */
void memory__exec_fresh(void);
/* The same from a deadly signal's handler: the live set if its lock is free. Async-signal-safe. */
void memory__stop_emergency(struct writer *w);
/* A window's end: its file gets the live set, if the table is free soon. Async-signal-safe. */
void memory__snapshot(struct writer *w);
/* ctl dump: the file gets the live set of now, which a later one retires. Async-signal-safe. */
void memory__dump(struct writer *w);
/* Allocation samples this image recorded (a file with some is not empty). */
uint64_t memory__samples(void);
/*
 * Did this image take allocation samples and allocate at least one mean
 * interval's bytes, and at least AP_MEM_KEEPS_FILE: the calling thread's
 * counted exactly (not at random: a shell's few allocations sampled by
 * chance do not count), the other threads' estimated from their samples?
 * Not async-signal-safe.
 */
#define AP_MEM_KEEPS_FILE (512 * 1024)
bool memory__an_interval(void);
/*
 * The slow path of an allocation of n bytes at p (not NULL), called from ret:
 * the thread's count-down reached 0, or n is at least the interval, or the
 * thread's count is not set up. Keeps errno. Not async-signal-safe.
 */
void memory__allocated(void *p, size_t n, uintptr_t ret);

/* ---- session/memory_agg.c: AUTOPROF_AGGREGATE for alloc-bytes ---- */

/* Map the process's table (threads without a sampler) when merging. 0 or -errno. */
int memory_agg__start(void);
/* An alloc-bytes record built in t's buffer (t entered), stack its chain's id in live.c's table
 * (0: none): the bytes to keep, 0 when merged. Async-signal-safe. */
size_t memory_agg__fold(struct ap_thread *t, void *rec, size_t len, uint32_t stack);
/* The same on a thread without a sampler (every signal blocked): true when merged.
 * Async-signal-safe. */
bool memory_agg__fold_shared(void *rec, size_t len, uint64_t now, uint32_t stack);
/* Write the process's table out (waited for a bounded time). Async-signal-safe. */
void memory_agg__flush(void);
/* In a forked child: empty the process's table (the parent's records). */
void memory_agg__forget(void);
/* The image's end: the table written, the times it filled early counted in autoprof.stats. */
void memory_agg__stop(void);

/*
 * The block at p leaves the program (free, or realloc before the real call):
 * take it out of the live table into *b if it was sampled. Returns whether it
 * was. Not async-signal-safe.
 */
bool memory__take(void *p, struct live_block *b);
/* Put back a block memory__take() took (the realloc that would free it failed). */
void memory__put_back(const struct live_block *b);

/* ---- session/memory_stack.c ---- */

/* Once before sampling: operator new's code, what a thread's exit needs. Not async-signal-safe. */
void memory_stack__init(void);
void memory_stack__find_new(void);
/*
 * A thread the library starts, before the program's code runs on it: its
 * stack's bounds asked of glibc now (never in a sample). Nothing before
 * memory_stack__init(). Not async-signal-safe.
 */
void memory_stack__thread_start(void);
/* Is pc in C++'s operator new (a sample's stack starts at its caller)? */
bool memory_stack__in_new(uint64_t pc);
/*
 * The allocation's stack into out (at most max): return addresses from the
 * frame that returns to ret on, walked with .eh_frame rules on the live
 * stack. Returns the entries, -1 when ret is not on the stack, 0 when
 * libunwind must walk. Not async-signal-safe.
 */
int memory_stack__chain(uint64_t ret, uint64_t *out, int max);

/* ---- session/live.c ---- */

int live__init(void);
/* Pin [addr, addr + len) in the filter for good (memlib/alloc.c's arena). Not async-signal-safe. */
void live__filter_pin(uint64_t addr, uint64_t len);
/* The id of a stack (0: unknown); *first: its first use in file generation gen. */
uint32_t live__stack_id(const uint64_t *chain, unsigned nr, uint32_t gen, bool *first);
void live__insert(const struct live_block *b);
/* This process's mark on the blocks it samples (a forked child's blocks of its parent have
 * the parent's); live__forked() gives a forked child its own. */
uint32_t live__own(void);
void live__forked(void);
bool live__take(uint64_t addr, struct live_block *out);
/* Every lock of the tables, waited for (fork; the thread holds none). Not async-signal-safe. */
void live__lock_all(void);
void live__unlock_all(void);
/* A child forked without live__lock_all(): the locks of the threads it does not have freed,
 * what they were changing dropped (returned: the sampled blocks). Async-signal-safe. */
uint64_t live__fork_child_inside(void);
/* Sampled blocks not followed (the blocks' table full), samples whose stack was not kept (the
 * stacks' tables full: their live bytes at an unknown stack). */
uint64_t live__untracked(void);
uint64_t live__stacks_lost(void);
uint64_t live__footprint(void);

/* ---- session/memory_sample.c ---- */

/* The calling thread's generator seeded and its first gap drawn (into ap_mem.left and drawn). */
void memory_sample__seed(void);
/* The bytes to the thread's next sample: geometric of mean ap_mem_interval, at least 1. */
int64_t memory_sample__gap(void);
/*
 * Lay out a SAMPLE of a memory attr (AP_MEMORY_SAMPLE_TYPE) into buf: id, ip, pid/tid, time,
 * the block's address, period (estimated bytes), the chain, the block's size as the weight.
 * Returns its size, or 0 when it does not fit in cap. Async-signal-safe.
 */
size_t memory_sample__put(void *buf, size_t cap, uint64_t id, uint32_t pid, uint32_t tid,
			  uint64_t time, uint64_t addr, uint64_t period, const uint64_t *chain,
			  unsigned nr, uint64_t size);
/* State n bytes not in the profile in w's file (attr id, at addr). Written? */
bool memory_sample__note(struct writer *w, uint64_t id, uint64_t n, uint64_t addr);

/* ---- session/live_set.c ---- */

/*
 * The live set into w as live-bytes records of attr id, by stack and size
 * (live_set.c tells how); *blocks and *bytes: what it held. wait: for the
 * tables (else a bounded time: -EBUSY); keep: retired by the next (ctl dump);
 * own: only the blocks this process sampled (an exec's: a forked child's copy of
 * its parent's blocks goes with the exec, and is its parent's to say). 0 or -errno.
 * Async-signal-safe when !wait.
 */
int live_set__write(struct writer *w, uint64_t id, uint32_t pid, uint64_t time, uint64_t *blocks,
		    uint64_t *bytes, bool wait, bool keep, bool own);
/* Forget the kept live set without retiring it: its file is no longer this image's (removed,
 * or replaced); not when this thread's interrupted code holds it. Not async-signal-safe. */
void live_set__forget(void);
/* Say (at the image's end) what the live tables could not hold. Not async-signal-safe. */
void live_set__say_full(void);

/* live.c's filter (memory_link.h tells its layout). */
extern uint64_t *ap_live_filter;

#endif /* AUTOPROF_MEMORY_H */
