/* SPDX-License-Identifier: MIT */
/*
 * live.c - the sampled blocks still live (AUTOPROF_MEMORY), by address, and
 * the stacks they were allocated at, deduplicated.
 *
 * Three tables in memory of our own (mmap: never the allocator we watch;
 * copied whole into a forked child, whose live set starts as its parent's):
 *  - blocks: open addressing by address, linear probing, deletion by
 *    backward shift; doubled at half full, up to MAX_BLOCKS;
 *  - stacks: open addressing by the chain's hash, each an offset into frames,
 *    an array of [nr, ip...] reserved once (MAP_NORESERVE) and filled as
 *    stacks come; a stack's id is its offset (0: unknown);
 *  - the filter (ap_live_filter): per 16-byte address modulo 1 MiB, a bit set while
 *    some live block has it (the counts behind the bits are 16-bit, sticky
 *    at their maximum); every free reads its bit without a lock, and only a
 *    set bit sends the free to the table.
 * Locks: one per shard of the blocks (64, by bits 10 to 15 of the address,
 * so threads rarely wait for each other; a shard's lock also covers the
 * filter's words of its addresses) and one for adding a stack (a stack
 * seen before is found without a lock); spin locks of ours, never
 * held across a call into the program or the allocator; a handler (a
 * window's end, a deadly signal) waits for them a bounded time only.
 * A lock's word is its holder's mark (the address of its thread's ap_mem,
 * which a forked child's thread keeps): a handler that interrupted its own
 * thread's holder does not wait for it, and a child forked from such a
 * handler tells the locks of its interrupted code from those of threads it
 * does not have (live__fork_child_inside()).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memory.h"

#define SHARD_BITS   6 /* 64 tables of blocks, by address: threads rarely wait for each other */
#define SHARDS	     (1U << SHARD_BITS)
#define MIN_BLOCKS   (1ULL << 10) /* per shard */
#define MAX_BLOCKS   (1ULL << 20) /* per shard: 2^26 slots in all */
#define MIN_STACKS   (1ULL << 14)
#define MAX_STACKS   (1ULL << 24)
#define FRAMES	     (1ULL << 26) /* u64 entries reserved for stacks: 512 MiB of address space */
#define FILTER_SLOTS (1ULL << AP_LIVE_FILTER_BITS)
#define SPIN_TRIES   1000 /* a handler's bounded wait for a lock (sched_yield each) */

struct stack_slot {
	uint64_t hash;
	uint32_t off, nr;  /* off 0: empty; set last (release), never changed after */
	uint32_t gen, pad; /* gen: the last file generation that asked for it (relaxed) */
};

struct stack_table { /* published whole (release); a grown one replaces it, the old one kept */
	uint64_t mask;
	struct stack_slot s[];
};

struct shard {
	uintptr_t lock; /* 0, or the holder's mark */
	struct live_block *v;
	uint64_t mask, count;
} __attribute__((aligned(64)));

uint64_t *ap_live_filter;
static uint16_t *filter_counts; /* the live blocks per filter bit; under its word's shard's lock */

static struct shard shards[SHARDS];
static uintptr_t stack_lock;	   /* for adding a stack; finding one takes no lock */
static struct stack_table *stacks; /* atomic pointer; its count under stack_lock: */
static uint64_t stack_count;
static uint64_t stacks_retired;	 /* bytes of the tables grown out of (kept: readers) */
static uint64_t *frames;	 /* append-only, never moved: read without the lock */
static uint64_t frames_used = 1; /* offset 0 is the unknown stack */
static uint64_t untracked;	 /* blocks not followed: a table was full; atomic */
static uintptr_t snap_lock;	 /* a live set being written (live__write) */

static void *map(uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Map the tables (once, before sampling starts). Returns 0 or -errno. Not
 * async-signal-safe.
 */
int live__init(void)
{
	uint64_t *filter = map(FILTER_SLOTS / 8);

	filter_counts = map(FILTER_SLOTS * sizeof(*filter_counts));

	stacks = map(sizeof(*stacks) + MIN_STACKS * sizeof(stacks->s[0]));
	frames = map(FRAMES * sizeof(*frames));
	if (!filter || !filter_counts || !stacks || !frames)
		return -ENOMEM;
	stacks->mask = MIN_STACKS - 1;
	for (unsigned i = 0; i < SHARDS; i++) {
		shards[i].v = map(MIN_BLOCKS * sizeof(*shards[i].v));
		if (!shards[i].v)
			return -ENOMEM;
		shards[i].mask = MIN_BLOCKS - 1;
	}
	__atomic_store_n(&ap_live_filter, filter, __ATOMIC_SEQ_CST); /* the wrappers' (pins) */
	return 0;
}

/* This thread's mark in the locks it holds: its ap_mem's address (a forked child's too). */
static uintptr_t mark(void)
{
	return (uintptr_t)&ap_mem;
}

static bool try_once(uintptr_t *l)
{
	uintptr_t free = 0;

	return __atomic_compare_exchange_n(l, &free, mark(), false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static void spin_lock(uintptr_t *l)
{
	while (!try_once(l))
		sched_yield();
}

/*
 * The lock, waited for SPIN_TRIES yields at most (from a handler), not at all
 * when this thread holds it (the handler interrupted its holder).
 * Async-signal-safe.
 */
static bool spin_trylock(uintptr_t *l)
{
	for (int i = 0; i < SPIN_TRIES; i++) {
		if (try_once(l))
			return true;
		if (__atomic_load_n(l, __ATOMIC_RELAXED) == mark())
			return false;
		raw_syscall(SYS_sched_yield);
	}
	return false;
}

static void spin_unlock(uintptr_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Every lock, for fork (the child's copy is then whole; a live set being written is
 * finished first). The thread holds none. Not async-signal-safe. */
void live__lock_all(void)
{
	spin_lock(&snap_lock);
	spin_lock(&stack_lock);
	for (unsigned i = 0; i < SHARDS; i++)
		spin_lock(&shards[i].lock);
}

void live__unlock_all(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		spin_unlock(&shards[i].lock);
	spin_unlock(&stack_lock);
	spin_unlock(&snap_lock);
}

/*
 * The shard of the blocks at addr: the shard of addr's word of the filter
 * (bits 10 to 15 of the address), so that a word's bits change under one
 * lock, its shard's, with plain stores (free reads them without a lock).
 */
static struct shard *shard_of(uint64_t addr)
{
	return &shards[(live__filter_index(addr) >> 6) & (SHARDS - 1)];
}

/*
 * Add d (1 or -1) to the live blocks of addr's filter bit (a count at its
 * maximum stays there), the bit set while the count is not 0. Under addr's
 * shard's lock, the only writer of the bit's word.
 */
static void filter_add(uint64_t addr, int d)
{
	uint32_t i = live__filter_index(addr);
	uint16_t *c = &filter_counts[i];
	uint64_t *w = &ap_live_filter[i >> 6], bit = 1ULL << (i & 63);

	if (*c == UINT16_MAX || (d < 0 && !*c))
		return;
	*c = (uint16_t)(*c + d);
	__atomic_store_n(w, *c ? *w | bit : *w & ~bit, __ATOMIC_RELEASE);
}

/*
 * Set the filter's bits of [addr, addr + len) for good (their counts at the
 * maximum, which no free lowers): memlib/alloc.c's arena blocks, whose frees the
 * wrapper then sends to its slow path. Nothing before live__init(). Not
 * async-signal-safe.
 */
void live__filter_pin(uint64_t addr, uint64_t len)
{
	if (!__atomic_load_n(&ap_live_filter, __ATOMIC_SEQ_CST))
		return;
	memory__guard_up(); /* a fork in a handler that comes in meanwhile waits for no lock */
	for (uint64_t a = addr & ~(uint64_t)15; a < addr + len; a += 16) {
		struct shard *s = shard_of(a);

		spin_lock(&s->lock);
		filter_counts[live__filter_index(a)] = UINT16_MAX - 1;
		filter_add(a, 1); /* to the maximum, where it stays */
		spin_unlock(&s->lock);
	}
	memory__guard_down();
}

static uint64_t block_home(uint64_t addr, uint64_t mask)
{
	return ((addr >> 4) * 0x9E3779B97F4A7C15ULL >> 20) & mask;
}

static uint64_t hash_chain(const uint64_t *ips, unsigned nr)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ nr;

	for (unsigned i = 0; i < nr; i++)
		h = (h ^ ips[i]) * 0x100000001b3ULL ^ (h >> 29);
	return h ? h : 1;
}

/* Double the stack slots (under stack_lock; the old table is kept: a thread
 * may be reading it). Returns false when they cannot grow. */
static bool grow_stacks(void)
{
	struct stack_table *t = stacks, *bigger;
	uint64_t cap = (t->mask + 1) * 2, mask = cap - 1;

	if (cap > MAX_STACKS || !(bigger = map(sizeof(*bigger) + cap * sizeof(bigger->s[0]))))
		return false;
	bigger->mask = mask;
	for (uint64_t i = 0; i <= t->mask; i++) {
		uint64_t j = t->s[i].hash & mask;

		if (!t->s[i].off)
			continue;
		while (bigger->s[j].off)
			j = (j + 1) & mask;
		bigger->s[j] = t->s[i];
	}
	__atomic_store_n(&stacks, bigger, __ATOMIC_RELEASE);
	__atomic_add_fetch(&stacks_retired, sizeof(*t) + (t->mask + 1) * sizeof(t->s[0]),
			   __ATOMIC_RELAXED);
	return true;
}

/* The slot of the stack of nr ips and hash h in t, or of the empty slot where it would go. */
static uint64_t find_stack(const struct stack_table *t, uint64_t h, const uint64_t *ips,
			   unsigned nr)
{
	uint64_t i = h & t->mask;
	uint32_t off;

	for (; (off = __atomic_load_n(&t->s[i].off, __ATOMIC_ACQUIRE)); i = (i + 1) & t->mask)
		if (t->s[i].hash == h && t->s[i].nr == nr &&
		    !memcmp(frames + off + 1, ips, (size_t)nr * 8))
			break;
	return i;
}

/*
 * The id of the stack of nr ips (innermost first), added if new; 0 when the
 * tables are full. *first (if not NULL): this is the stack's first use in
 * file generation gen (its objects' records may be missing from that file;
 * two threads may both be told so). A stack seen before is found without a
 * lock; a new one is added under the stacks' lock. Not async-signal-safe.
 */
uint32_t live__stack_id(const uint64_t *ips, unsigned nr, uint32_t gen, bool *first)
{
	uint64_t h = hash_chain(ips, nr), i;
	struct stack_table *t = __atomic_load_n(&stacks, __ATOMIC_ACQUIRE);
	struct stack_slot *slot;
	bool added = false;
	uint32_t id;

	i = find_stack(t, h, ips, nr);
	if (!__atomic_load_n(&t->s[i].off, __ATOMIC_ACQUIRE)) {
		spin_lock(&stack_lock);
		/* Again, locked: slot i (maybe of a stale table) may hold another. */
		t = stacks;
		i = find_stack(t, h, ips, nr);
		if (!t->s[i].off && (stack_count + 1 <= (stacks->mask + 1) / 2 || grow_stacks())) {
			t = stacks;
			i = find_stack(t, h, ips, nr);
			added = !t->s[i].off && frames_used + nr + 1 <= FRAMES &&
				frames_used + nr + 1 <= UINT32_MAX;
		}
		if (added) {
			frames[frames_used] = nr;
			memcpy(frames + frames_used + 1, ips, (size_t)nr * 8);
			t->s[i].hash = h;
			t->s[i].nr = nr;
			id = (uint32_t)frames_used;
			/* the frames taken before the stack is published: a thread
			 * gone here (a fork) leaves no published stack's frames free */
			__atomic_store_n(&frames_used, frames_used + nr + 1, __ATOMIC_RELAXED);
			__atomic_store_n(&t->s[i].off, id, __ATOMIC_RELEASE);
			stack_count++;
		}
		/* Read under the lock: once it is released, an empty slot i (this
		 * stack not added: the tables full) may take another thread's stack. */
		id = t->s[i].off;
		spin_unlock(&stack_lock);
		if (!id)
			return 0; /* the tables are full */
	}
	slot = &t->s[i];
	id = slot->off;
	if (first)
		*first = added || __atomic_load_n(&slot->gen, __ATOMIC_RELAXED) != gen;
	__atomic_store_n(&slot->gen, gen, __ATOMIC_RELAXED);
	return id;
}

/* Double a shard's slots (under its lock). Returns false when they cannot grow. */
static bool grow_blocks(struct shard *s)
{
	uint64_t cap = (s->mask + 1) * 2, mask = cap - 1;
	struct live_block *bigger;

	if (cap > MAX_BLOCKS || !(bigger = map(cap * sizeof(*bigger))))
		return false;
	for (uint64_t i = 0; i <= s->mask; i++) {
		uint64_t j;

		if (!s->v[i].addr)
			continue;
		for (j = block_home(s->v[i].addr, mask); bigger[j].addr; j = (j + 1) & mask)
			;
		bigger[j] = s->v[i];
	}
	munmap(s->v, (s->mask + 1) * sizeof(*s->v));
	s->v = bigger;
	s->mask = mask;
	return true;
}

/* The slot of addr in s, or of the empty slot where it would go. Under s's lock. */
static uint64_t find(const struct shard *s, uint64_t addr)
{
	uint64_t i = block_home(addr, s->mask);

	while (s->v[i].addr && s->v[i].addr != addr)
		i = (i + 1) & s->mask;
	return i;
}

/*
 * Add a sampled block (one already at its address replaces it: its free was
 * not seen), before its address reaches the program. Takes its shard's lock.
 * Not async-signal-safe.
 */
void live__insert(const struct live_block *b)
{
	struct shard *s = shard_of(b->addr);
	uint64_t i;

	if (!b->addr)
		return;
	spin_lock(&s->lock);
	if (s->count + 1 > (s->mask + 1) / 2 && !grow_blocks(s)) {
		__atomic_fetch_add(&untracked, 1, __ATOMIC_RELAXED);
		goto out;
	}
	i = find(s, b->addr);
	if (!s->v[i].addr) {
		s->count++;
		filter_add(b->addr, 1);
	}
	s->v[i] = *b;
out:
	spin_unlock(&s->lock);
}

/*
 * Take the block at addr out into *out: false when it is not a sampled live
 * one. Takes its shard's lock. Not async-signal-safe.
 */
bool live__take(uint64_t addr, struct live_block *out)
{
	struct shard *s = shard_of(addr);
	uint64_t i, j, home;
	bool had = false;

	spin_lock(&s->lock);
	i = find(s, addr);
	if (!s->v[i].addr)
		goto out;
	had = true;
	*out = s->v[i];
	filter_add(addr, -1);
	s->count--;
	/* backward shift: move up each later entry whose home is not between the hole and it */
	for (j = (i + 1) & s->mask; s->v[j].addr; j = (j + 1) & s->mask) {
		home = block_home(s->v[j].addr, s->mask);
		if (((j - home) & s->mask) >= ((j - i) & s->mask)) {
			s->v[i] = s->v[j];
			i = j;
		}
	}
	s->v[i] = (struct live_block){0};
out:
	spin_unlock(&s->lock);
	return had;
}

/* The bytes of the tables in use (the filter counted whole): the profiler's own memory. */
uint64_t live__footprint(void)
{
	uint64_t n = FILTER_SLOTS / 8 + FILTER_SLOTS * sizeof(*filter_counts) + sizeof(*stacks) +
		     (stacks->mask + 1) * sizeof(stacks->s[0]) +
		     __atomic_load_n(&stacks_retired, __ATOMIC_RELAXED) +
		     __atomic_load_n(&frames_used, __ATOMIC_RELAXED) * sizeof(*frames);

	for (unsigned i = 0; i < SHARDS; i++)
		n += (__atomic_load_n(&shards[i].mask, __ATOMIC_RELAXED) + 1) *
		     sizeof(struct live_block);
	return n;
}

uint64_t live__untracked(void)
{
	return __atomic_load_n(&untracked, __ATOMIC_RELAXED);
}

/* A (stack, size) pair of the live set, merged for the records. */
struct merged {
	uint64_t size, weight, count;
	uint32_t stack, used;
};

/* Fill the merge table (cap slots, a power of 2) from the blocks (all shards held). */
static void merge(struct merged *m, uint64_t cap)
{
	for (unsigned k = 0; k < SHARDS; k++) {
		const struct shard *s = &shards[k];

		for (uint64_t i = 0; i <= s->mask; i++) {
			const struct live_block *b = &s->v[i];
			uint64_t j;

			if (!b->addr)
				continue;
			j = (b->stack * 0x9E3779B97F4A7C15ULL ^ b->size * 0xC2B2AE3D27D4EB4FULL) >>
			    17;
			for (j &= cap - 1; m[j].used; j = (j + 1) & (cap - 1))
				if (m[j].stack == b->stack && m[j].size == b->size)
					break;
			m[j].used = 1;
			m[j].stack = b->stack;
			m[j].size = b->size;
			m[j].weight += b->weight;
			m[j].count++;
		}
	}
}

/*
 * Hold every shard, waiting (wait) or, from a handler, a bounded time
 * (false then, holding none). Async-signal-safe when !wait.
 */
static bool hold_shards(bool wait)
{
	for (unsigned i = 0; i < SHARDS; i++) {
		if (wait) {
			spin_lock(&shards[i].lock);
		} else if (!spin_trylock(&shards[i].lock)) {
			while (i--)
				spin_unlock(&shards[i].lock);
			return false;
		}
	}
	return true;
}

static void release_shards(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		spin_unlock(&shards[i].lock);
}

/*
 * The last live set written to the middle of a file (ctl dump; an exec's, the file going on
 * if the exec fails), kept until a later live set is written to the same file: the earlier
 * one is then retired in place (every record's period set to 0, its size unchanged), so that
 * a file holds one live set that weighs: its latest. Under snap_lock.
 */
static struct {
	char *buf;
	size_t len, cap;
	uint64_t at, dev, ino;
} kept;

/* Retire the kept live set if it is in w's file (NULL: none), and forget it. Under snap_lock. */
static void retire(struct writer *w)
{
	struct perf_event_header h;

	if (!kept.buf)
		return;
	if (w && kept.dev == w->dev && kept.ino == w->ino) {
		for (size_t off = 0; off + AP_MEMORY_PERIOD_AT + 8 <= kept.len; off += h.size) {
			memcpy(&h, kept.buf + off, sizeof(h));
			if (h.size < AP_MEMORY_PERIOD_AT + 8)
				break;
			memset(kept.buf + off + AP_MEMORY_PERIOD_AT, 0, 8);
		}
		writer__patch(w, kept.at, kept.buf, kept.len);
	}
	munmap(kept.buf, kept.cap);
	kept.buf = NULL;
}

void live__forget(void)
{
	spin_lock(&snap_lock);
	retire(NULL);
	spin_unlock(&snap_lock);
}

/* The chain of merged entry e into chain (PERF_CONTEXT_USER first); returns its entries. */
static unsigned chain_of(const struct merged *e, uint64_t *chain)
{
	unsigned nr = 1;

	chain[0] = PERF_CONTEXT_USER;
	if (e->stack) {
		uint64_t n = frames[e->stack];

		if (n > AP_MAX_CHAIN)
			n = AP_MAX_CHAIN;
		memcpy(chain + 1, frames + e->stack + 1, n * 8);
		nr += (unsigned)n;
	}
	if (nr == 1)
		chain[nr++] = 0;
	return nr;
}

/*
 * Write the live set to w as SAMPLE records of the attr id: one per stack and block size, its
 * period the estimated bytes still live, its weight the size; *blocks and *bytes get the
 * sampled blocks and the estimated bytes. The tables are held while the set is merged: waited
 * for (wait), or a bounded time from a handler. An empty live set is one record of period 0
 * and size 0 (its mark). A live set written earlier to the same file by a call with keep is
 * retired first; with keep, this one is kept to be retired by the next (a set in the middle of
 * the file: ctl dump, exec). Returns 0 or -errno (-EBUSY: not held). Async-signal-safe when
 * !wait.
 */
int live__write(struct writer *w, uint64_t id, uint32_t pid, uint64_t time, uint64_t *nblocks,
		uint64_t *bytes, bool wait, bool keep)
{
	uint64_t cap = 16, count = 0, chain[AP_MAX_CHAIN + 2];
	struct merged *m = NULL;
	size_t len = 0, room = 0;
	char *buf = NULL;
	int err = 0;

	*nblocks = *bytes = 0;
	if (!id)
		return 0;
	if (wait)
		spin_lock(&snap_lock);
	else if (!spin_trylock(&snap_lock))
		return -EBUSY;
	if (!hold_shards(wait)) {
		spin_unlock(&snap_lock);
		return -EBUSY;
	}
	for (unsigned i = 0; i < SHARDS; i++)
		count += shards[i].count;
	*nblocks = count;
	while (cap < count * 2)
		cap *= 2;
	m = count ? map(cap * sizeof(*m)) : NULL;
	if (m)
		merge(m, cap);
	release_shards(); /* the stacks' frames never move: read without a lock */
	retire(w);
	if (!count) { /* the mark of an empty live set: readers tell it from none written */
		uint64_t mark[2] = {PERF_CONTEXT_USER, 0};
		char rec[128];

		len = memory__put_sample(rec, sizeof(rec), id, pid, pid, time, 0, 0, mark, 2, 0);
		err = writer__append(w, rec, len);
		len = 0;
		goto out;
	}
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < cap; i++) /* the records' size, to write them in one append */
		if (m[i].used)
			room +=
			    sizeof(struct perf_event_header) + 9 * 8 + chain_of(&m[i], chain) * 8;
	room = (room + 4095) & ~(size_t)4095;
	buf = map(room);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < cap; i++) {
		unsigned nr;

		if (!m[i].used)
			continue;
		*bytes += m[i].weight;
		nr = chain_of(&m[i], chain);
		len += memory__put_sample(buf + len, room - len, id, pid, pid, time, 0, m[i].weight,
					  chain, nr, m[i].size);
	}
	err = writer__append_at(w, buf, len, &kept.at);
	writer__note_times(w, time, time);
	if (!err && keep) {
		kept.buf = buf;
		kept.len = len;
		kept.cap = room;
		kept.dev = w->dev;
		kept.ino = w->ino;
		buf = NULL;
	}
out:
	spin_unlock(&snap_lock);
	if (m)
		munmap(m, cap * sizeof(*m));
	if (buf)
		munmap(buf, room);
	return err;
}

/* Empty shard k (its blocks and their filter bits; the pinned bits stay): its
 * holder, gone, may have left it half changed. Returns the blocks dropped. */
static uint64_t drop_shard(unsigned k)
{
	struct shard *s = &shards[k];
	struct live_block *v = map(MIN_BLOCKS * sizeof(*v));
	uint64_t dropped = s->count;

	for (uint32_t w = k; w < FILTER_SLOTS / 64; w += SHARDS) { /* its words (shard_of) */
		uint64_t bits = 0;

		for (unsigned b = 0; b < 64; b++) {
			uint16_t *c = &filter_counts[w * 64 + b];

			if (*c != UINT16_MAX)
				*c = 0;
			bits |= (uint64_t)(*c != 0) << b;
		}
		__atomic_store_n(&ap_live_filter[w], bits, __ATOMIC_RELEASE);
	}
	if (v) { /* the old table is left alone: it may be half grown, or unmapped */
		s->v = v;
		s->mask = MIN_BLOCKS - 1;
	} else {
		memset(s->v, 0, (s->mask + 1) * sizeof(*s->v));
	}
	s->count = 0;
	return dropped;
}

/*
 * In a child forked without live__lock_all() (from a handler that
 * interrupted this thread inside the profiler): the locks of threads the
 * child does not have are freed, and what they were changing is dropped (a
 * shard's blocks, the live set being written); the locks of this thread's
 * interrupted code stay its own (it goes on when the handler returns).
 * Returns the sampled blocks dropped. Async-signal-safe.
 */
uint64_t live__fork_child_inside(void)
{
	uint64_t dropped = 0;

	if (stack_lock && stack_lock != mark())
		stack_lock = 0; /* a stack is published whole, or not at all */
	if (snap_lock && snap_lock != mark()) {
		kept.buf = NULL; /* the parent's file's, maybe half kept: left alone */
		snap_lock = 0;
	}
	for (unsigned k = 0; k < SHARDS; k++) {
		if (!shards[k].lock || shards[k].lock == mark())
			continue;
		dropped += drop_shard(k);
		shards[k].lock = 0;
	}
	return dropped;
}
