/* SPDX-License-Identifier: MIT */
/*
 * memory_agg.c - AUTOPROF_AGGREGATE for the alloc-bytes records (memory.c):
 * one record per thread, stack and block size per window, its period the
 * summed estimated bytes and its weight the size, so that period / weight
 * is still the estimated number of blocks; the time is its first
 * allocation's, the block's address 0 (a merged record stands for many).
 *
 * A sampled thread's records merge in its own table (handler/aggregate.c,
 * the CPU samples' table: the same windows, 0.2 s doubling to 10 s, and the
 * same ends: a window's end, a ctl dump, the thread's or the image's end),
 * which memory.c's sample reaches with the thread's buffer entered, so its
 * handler leaves the table alone meanwhile. A thread without a sampler (one
 * started before the library) merges in one table for the process, mapped
 * here at start (never the allocator we watch), under a spin lock of ours
 * taken with every signal blocked: a handler that writes it out (a window's
 * end, a ctl dump, a deadly signal) waits for it a bounded time only, and
 * when it cannot have it, its records go to the next file instead. A table
 * that fills before its window's end is written early (counted: the end of
 * the run says how often); nothing is dropped.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "memory.h"

/* Where a memory record's block address is (memory_sample__put's layout). */
#define ADDR_AT 40

static bool merging; /* AUTOPROF_AGGREGATE (and not _CHECK): set at start */
static struct ap_sampler shared_sampler;
static struct ap_thread shared; /* the process's table: only agg, sampler, stats used */
static int shared_lock;

/*
 * Map the process's table when the records merge (once; a fork's child
 * inherits it, emptied). 0 or -errno. Not async-signal-safe.
 */
int memory_agg__start(void)
{
	size_t len;
	void *mem;

	merging = autoprof.cfg->aggregate && !autoprof.cfg->aggregate_check;
	if (!merging || shared.agg)
		return 0;
	shared_sampler.writer = &autoprof.writer;
	shared_sampler.aggregate = true;
	len = aggregate__bytes(&shared_sampler);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	shared.sampler = &shared_sampler;
	shared.agg = aggregate__place(mem, len, ap_now());
	return 0;
}

/*
 * The key's hash of an alloc-bytes record at rec whose chain has the id
 * stack in live.c's table (0: none, then the record is hashed): the id, the
 * block's size (the record's last word) and the thread: equal records, equal
 * ids. Async-signal-safe.
 */
static uint64_t key_hash(const void *rec, size_t len, uint32_t stack)
{
	uint64_t size, tid;

	if (!stack)
		return 0;
	memcpy(&size, (const char *)rec + len - 8, 8);
	memcpy(&tid, (const char *)rec + 24, 8);
	return ((uint64_t)stack * 0x9E3779B97F4A7C15ULL ^ size * 0xff51afd7ed558ccdULL ^ tid) | 1;
}

/*
 * The alloc-bytes record of len bytes at rec, just built in t's buffer (t
 * entered), its chain's id stack: the bytes to keep there, 0 when it merged.
 * Async-signal-safe.
 */
size_t memory_agg__fold(struct ap_thread *t, void *rec, size_t len, uint32_t stack)
{
	static const uint64_t none;

	if (!merging || !len)
		return len;
	memcpy((char *)rec + ADDR_AT, &none, 8);
	return aggregate__fold_at(t, rec, len, AP_MEMORY_PERIOD_AT, key_hash(rec, len, stack));
}

/*
 * The same for a thread without a sampler (memory.c holds its lock for such
 * threads, every signal blocked): false when rec is to be written as it is.
 * Async-signal-safe.
 */
bool memory_agg__fold_shared(void *rec, size_t len, uint64_t now, uint32_t stack)
{
	static const uint64_t none;
	bool merged;

	if (!merging || !shared.agg || !len)
		return false;
	memcpy((char *)rec + ADDR_AT, &none, 8);
	while (__atomic_exchange_n(&shared_lock, 1, __ATOMIC_ACQUIRE))
		raw_syscall(SYS_sched_yield); /* a handler writing the table out */
	aggregate__maybe_emit(&shared, now);
	merged =
	    !aggregate__fold_at(&shared, rec, len, AP_MEMORY_PERIOD_AT, key_hash(rec, len, stack));
	__atomic_store_n(&shared_lock, 0, __ATOMIC_RELEASE);
	return merged;
}

/*
 * Write the process's table out (a window's end, a ctl dump, the image's
 * end, from a handler too): its holder has every signal blocked and waits
 * for nothing of ours, so the lock is waited for a bounded time; when it is
 * not had, the records stay for the next file. Async-signal-safe.
 */
void memory_agg__flush(void)
{
	int i;

	if (!shared.agg)
		return;
	for (i = 0; i < 1000 && __atomic_exchange_n(&shared_lock, 1, __ATOMIC_ACQUIRE); i++)
		raw_syscall(SYS_sched_yield);
	if (i == 1000)
		return;
	aggregate__emit_all(&shared);
	__atomic_store_n(&shared_lock, 0, __ATOMIC_RELEASE);
}

/* A forked child: the parent's records in the process's table are not its own. */
void memory_agg__forget(void)
{
	shared_lock = 0;
	aggregate__drop(&shared, ap_now());
	shared.stats.agg_full = 0;
}

/* The image's end: the process's table written out, the times it filled early added to the
 * image's (summary.c says them). Not async-signal-safe. */
void memory_agg__stop(void)
{
	memory_agg__flush();
	autoprof.stats.agg_full += __atomic_exchange_n(&shared.stats.agg_full, 0, __ATOMIC_RELAXED);
}
