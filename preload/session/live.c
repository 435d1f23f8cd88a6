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
 * live_set.c writes the live set from these tables (live_tables.h).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "live_tables.h"

/*
 * The tables start small and double as they fill: a slot is found by hash,
 * so a table's inserts touch all of its pages soon, and each page's first
 * touch is a page fault (13 us in the VMs we measure on). Starting with
 * 1,024 slots a shard, four threads of small mallocs faulted in 478 pages
 * of tables that never held more than a few hundred blocks.
 */
#define MIN_BLOCKS (4096 / sizeof(struct live_block)) /* per shard: a page */
#define MAX_BLOCKS (1ULL << 20)			      /* per shard: 2^26 slots in all */
#define MIN_STACKS (1ULL << 10)
_Static_assert((MIN_BLOCKS & (MIN_BLOCKS - 1)) == 0, "a shard's table is a power of two");
#define MAX_STACKS   (1ULL << 24)
#define FRAMES	     (1ULL << 26) /* u64 entries reserved for stacks: 512 MiB of address space */
#define MIN_FRAMES   (1ULL << 16) /* at least (512 KiB) when the address space is limited */
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

uint64_t *ap_live_filter;
static uint16_t *filter_counts; /* the live blocks per filter bit; under its word's shard's lock */

struct shard live_shards[SHARDS] AP_LARGE_BSS;
static uintptr_t stack_lock;	   /* for adding a stack; finding one takes no lock */
uintptr_t live_snap_lock;	   /* a live set being written (live_set.c) */
static struct stack_table *stacks; /* atomic pointer; its count under stack_lock: */
static uint64_t stack_count;
static uint64_t stacks_retired;	 /* bytes of the tables grown out of (kept: readers) */
uint64_t *live_frames;		 /* append-only, never moved: read without the lock */
static uint64_t frames_cap;	 /* its entries: FRAMES, or fewer in a small address space */
static uint64_t frames_used = 1; /* offset 0 is the unknown stack */
static uint64_t untracked;	 /* blocks not followed: a table was full; atomic */
static uint64_t stacks_lost;	 /* samples whose stack was not kept: a table was full; atomic */

void *live__map(uint64_t bytes)
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
	uint64_t *filter = live__map(FILTER_SLOTS / 8);
	struct rlimit as;

	filter_counts = live__map(FILTER_SLOTS * sizeof(*filter_counts));

	stacks = live__map(sizeof(*stacks) + MIN_STACKS * sizeof(stacks->s[0]));
	/* the frames' reservation counts in RLIMIT_AS: under a limit, at most a 16th of
	 * it (the program's allocations must not fail for us), fewer if that fails */
	frames_cap = FRAMES;
	if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY)
		while (frames_cap > MIN_FRAMES &&
		       frames_cap * sizeof(*live_frames) > as.rlim_cur / 16)
			frames_cap /= 2;
	for (; frames_cap >= MIN_FRAMES; frames_cap /= 2)
		if ((live_frames = live__map(frames_cap * sizeof(*live_frames))))
			break;
	if (!filter || !filter_counts || !stacks || !live_frames || live_set__init())
		return -ENOMEM;
	stacks->mask = MIN_STACKS - 1;
	for (unsigned i = 0; i < SHARDS; i++) {
		live_shards[i].v = live__map(MIN_BLOCKS * sizeof(*live_shards[i].v));
		if (!live_shards[i].v)
			return -ENOMEM;
		live_shards[i].mask = MIN_BLOCKS - 1;
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

void live__spin_lock(uintptr_t *l)
{
	while (!try_once(l))
		if (!ap_sandboxed) /* no system call in seccomp (a free of a sampled block) */
			sched_yield();
}

/*
 * The lock, waited for SPIN_TRIES yields at most (from a handler), not at all
 * when this thread holds it (the handler interrupted its holder).
 * Async-signal-safe.
 */
bool live__spin_trylock(uintptr_t *l)
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

void live__spin_unlock(uintptr_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Every lock, for fork (the child's copy is then whole; a live set being written is
 * finished first). The thread holds none. Not async-signal-safe. */
void live__lock_all(void)
{
	live__spin_lock(&live_snap_lock);
	live__spin_lock(&stack_lock);
	for (unsigned i = 0; i < SHARDS; i++)
		live__spin_lock(&live_shards[i].lock);
}

void live__unlock_all(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		live__spin_unlock(&live_shards[i].lock);
	live__spin_unlock(&stack_lock);
	live__spin_unlock(&live_snap_lock);
}

/*
 * The shard of the blocks at addr: the shard of addr's word of the filter
 * (bits 10 to 15 of the address), so that a word's bits change under one
 * lock, its shard's, with plain stores (free reads them without a lock).
 */
static struct shard *shard_of(uint64_t addr)
{
	return &live_shards[(live__filter_index(addr) >> 6) & (SHARDS - 1)];
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

		live__spin_lock(&s->lock);
		filter_counts[live__filter_index(a)] = UINT16_MAX - 1;
		filter_add(a, 1); /* to the maximum, where it stays */
		live__spin_unlock(&s->lock);
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

	if (cap > MAX_STACKS || !(bigger = live__map(sizeof(*bigger) + cap * sizeof(bigger->s[0]))))
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
		    !memcmp(live_frames + off + 1, ips, (size_t)nr * 8))
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
		live__spin_lock(&stack_lock);
		/* Again, locked: slot i (maybe of a stale table) may hold another. */
		t = stacks;
		i = find_stack(t, h, ips, nr);
		if (!t->s[i].off && (stack_count + 1 <= (stacks->mask + 1) / 2 || grow_stacks())) {
			t = stacks;
			i = find_stack(t, h, ips, nr);
			added = !t->s[i].off && frames_used + nr + 1 <= frames_cap &&
				frames_used + nr + 1 <= UINT32_MAX;
		}
		if (added) {
			live_frames[frames_used] = nr;
			memcpy(live_frames + frames_used + 1, ips, (size_t)nr * 8);
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
		live__spin_unlock(&stack_lock);
		if (!id) { /* the tables are full */
			__atomic_fetch_add(&stacks_lost, 1, __ATOMIC_RELAXED);
			return 0;
		}
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

	if (cap > MAX_BLOCKS || !(bigger = live__map(cap * sizeof(*bigger))))
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
static uint32_t own_mark = 1; /* live__own(); a forked child's is new (live__forked) */

uint32_t live__own(void)
{
	return own_mark;
}

void live__forked(void)
{
	own_mark++; /* (above every ancestor's: they are the blocks it inherits) */
}

void live__insert(const struct live_block *b)
{
	struct shard *s = shard_of(b->addr);
	uint64_t i;

	if (!b->addr)
		return;
	live__spin_lock(&s->lock);
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
	if (!b->owner) /* (one put back keeps its mark) */
		s->v[i].owner = own_mark;
out:
	live__spin_unlock(&s->lock);
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

	live__spin_lock(&s->lock);
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
	live__spin_unlock(&s->lock);
	return had;
}

/* The bytes of the tables in use (the filter counted whole): the profiler's own memory. */
uint64_t live__footprint(void)
{
	uint64_t n = FILTER_SLOTS / 8 + FILTER_SLOTS * sizeof(*filter_counts) + sizeof(*stacks) +
		     (stacks->mask + 1) * sizeof(stacks->s[0]) +
		     __atomic_load_n(&stacks_retired, __ATOMIC_RELAXED) +
		     __atomic_load_n(&frames_used, __ATOMIC_RELAXED) * sizeof(*live_frames);

	for (unsigned i = 0; i < SHARDS; i++)
		n += (__atomic_load_n(&live_shards[i].mask, __ATOMIC_RELAXED) + 1) *
		     sizeof(struct live_block);
	return n;
}

uint64_t live__untracked(void)
{
	return __atomic_load_n(&untracked, __ATOMIC_RELAXED);
}

uint64_t live__stacks_lost(void)
{
	return __atomic_load_n(&stacks_lost, __ATOMIC_RELAXED);
}

/*
 * Hold every shard, waiting (wait) or, from a handler, a bounded time
 * (false then, holding none). Async-signal-safe when !wait.
 */
bool live__hold_shards(bool wait)
{
	for (unsigned i = 0; i < SHARDS; i++) {
		if (wait) {
			live__spin_lock(&live_shards[i].lock);
		} else if (!live__spin_trylock(&live_shards[i].lock)) {
			while (i--)
				live__spin_unlock(&live_shards[i].lock);
			return false;
		}
	}
	return true;
}

void live__release_shards(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		live__spin_unlock(&live_shards[i].lock);
}

/* Empty shard k (its blocks and their filter bits; the pinned bits stay): its
 * holder, gone, may have left it half changed. Returns the blocks dropped. */
static uint64_t drop_shard(unsigned k)
{
	struct shard *s = &live_shards[k];
	struct live_block *v = live__map(MIN_BLOCKS * sizeof(*v));
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
	if (live_snap_lock && live_snap_lock != mark()) {
		live_set__drop_kept(); /* the parent's file's, maybe half kept: left alone */
		live_snap_lock = 0;
	}
	for (unsigned k = 0; k < SHARDS; k++) {
		if (!live_shards[k].lock || live_shards[k].lock == mark())
			continue;
		dropped += drop_shard(k);
		live_shards[k].lock = 0;
	}
	return dropped;
}
