/* SPDX-License-Identifier: MIT */
/*
 * live.c - the sampled blocks still live (AUTOPROF_MEMORY), by address, and
 * the stacks they were allocated at, deduplicated.
 *
 * Three tables in memory of our own (mmap: never the allocator we watch,
 * and copied whole into a forked child, whose live set starts as its
 * parent's):
 *  - blocks: open addressing by address, linear probing, deletion by
 *    backward shift; doubled at half full, up to MAX_BLOCKS;
 *  - stacks: open addressing by the chain's hash, each an offset into frames,
 *    an array of [nr, ip...] reserved once (MAP_NORESERVE) and filled as
 *    stacks come; a stack's id is its offset (0: unknown);
 *  - the filter (ap_live_filter): per hash of an address, how many live
 *    blocks have it; every free reads it without the lock, and only a
 *    non-zero count sends the free to the table.
 * One lock for all, a spin lock of ours taken with every signal blocked and
 * never held across a call into the program or the allocator (memory.c).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "memory.h"

#define MIN_BLOCKS   (1ULL << 16)
#define MAX_BLOCKS   (1ULL << 26)
#define MIN_STACKS   (1ULL << 14)
#define MAX_STACKS   (1ULL << 24)
#define FRAMES	     (1ULL << 26) /* u64 entries reserved for stacks: 512 MiB of address space */
#define FILTER_SLOTS (1ULL << AP_LIVE_FILTER_BITS)
#define WRITE_BUF    (256 * 1024)
#define RECORD_ROOM  (128 + (AP_MAX_CHAIN + 2) * 8)

struct stack_slot {
	uint64_t hash;
	uint32_t off, nr; /* off 0: empty */
};

uint32_t *ap_live_filter;

static struct live_block *blocks;
static uint64_t block_mask, block_count;
static struct stack_slot *stacks;
static uint64_t stack_mask, stack_count;
static uint64_t *frames;
static uint64_t frames_used = 1; /* offset 0 is the unknown stack */
static uint64_t untracked;	 /* blocks not followed: the table was full */
static int lock;

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
	uint32_t *filter = map(FILTER_SLOTS * sizeof(*filter));

	blocks = map(MIN_BLOCKS * sizeof(*blocks));
	stacks = map(MIN_STACKS * sizeof(*stacks));
	frames = map(FRAMES * sizeof(*frames));
	if (!filter || !blocks || !stacks || !frames)
		return -ENOMEM;
	block_mask = MIN_BLOCKS - 1;
	stack_mask = MIN_STACKS - 1;
	__atomic_store_n(&ap_live_filter, filter, __ATOMIC_RELEASE);
	return 0;
}

void live__lock(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* Take the lock if it is free (a deadly signal's handler cannot wait). Async-signal-safe. */
bool live__trylock(void)
{
	return !__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE);
}

void live__unlock(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
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

/* Double the stack slots. Returns false when they cannot grow. */
static bool grow_stacks(void)
{
	uint64_t cap = (stack_mask + 1) * 2, mask = cap - 1;
	struct stack_slot *bigger;

	if (cap > MAX_STACKS || !(bigger = map(cap * sizeof(*bigger))))
		return false;
	for (uint64_t i = 0; i <= stack_mask; i++) {
		uint64_t j = stacks[i].hash & mask;

		if (!stacks[i].off)
			continue;
		while (bigger[j].off)
			j = (j + 1) & mask;
		bigger[j] = stacks[i];
	}
	munmap(stacks, (stack_mask + 1) * sizeof(*stacks));
	stacks = bigger;
	stack_mask = mask;
	return true;
}

/*
 * The id of the stack of nr ips (innermost first), added if new; 0 when the
 * tables are full. Under the lock.
 */
uint32_t live__stack_id(const uint64_t *ips, unsigned nr)
{
	uint64_t h = hash_chain(ips, nr), i;

	if (stack_count + 1 > (stack_mask + 1) / 2 && !grow_stacks())
		return 0;
	for (i = h & stack_mask; stacks[i].off; i = (i + 1) & stack_mask)
		if (stacks[i].hash == h && stacks[i].nr == nr &&
		    !memcmp(frames + stacks[i].off + 1, ips, (size_t)nr * 8))
			return stacks[i].off;
	if (frames_used + nr + 1 > FRAMES || frames_used + nr + 1 > UINT32_MAX)
		return 0;
	stacks[i] = (struct stack_slot){.hash = h, .off = (uint32_t)frames_used, .nr = nr};
	frames[frames_used] = nr;
	memcpy(frames + frames_used + 1, ips, (size_t)nr * 8);
	frames_used += nr + 1;
	stack_count++;
	return stacks[i].off;
}

/* Double the block slots. Returns false when they cannot grow. */
static bool grow_blocks(void)
{
	uint64_t cap = (block_mask + 1) * 2, mask = cap - 1;
	struct live_block *bigger;

	if (cap > MAX_BLOCKS || !(bigger = map(cap * sizeof(*bigger))))
		return false;
	for (uint64_t i = 0; i <= block_mask; i++) {
		uint64_t j;

		if (!blocks[i].addr)
			continue;
		for (j = block_home(blocks[i].addr, mask); bigger[j].addr; j = (j + 1) & mask)
			;
		bigger[j] = blocks[i];
	}
	munmap(blocks, (block_mask + 1) * sizeof(*blocks));
	blocks = bigger;
	block_mask = mask;
	return true;
}

/* The slot of addr, or of the empty slot where it would go. Under the lock. */
static uint64_t find(uint64_t addr)
{
	uint64_t i = block_home(addr, block_mask);

	while (blocks[i].addr && blocks[i].addr != addr)
		i = (i + 1) & block_mask;
	return i;
}

/*
 * Add a sampled block (one already at its address replaces it: its free was
 * not seen). Under the lock, before the block's address reaches the program.
 */
void live__insert(const struct live_block *b)
{
	uint64_t i;

	if (!b->addr)
		return;
	if (block_count + 1 > (block_mask + 1) / 2 && !grow_blocks()) {
		untracked++;
		return;
	}
	i = find(b->addr);
	if (!blocks[i].addr) {
		block_count++;
		__atomic_fetch_add(&ap_live_filter[live__filter_index(b->addr)], 1,
				   __ATOMIC_RELAXED);
	}
	blocks[i] = *b;
}

/* Take the block at addr out into *out: false when it is not a sampled live one. Under the lock. */
bool live__take(uint64_t addr, struct live_block *out)
{
	uint64_t i = find(addr), j, home;

	if (!blocks[i].addr)
		return false;
	*out = blocks[i];
	__atomic_fetch_sub(&ap_live_filter[live__filter_index(addr)], 1, __ATOMIC_RELAXED);
	block_count--;
	/* backward shift: move up each later entry whose home is not between the hole and it */
	for (j = (i + 1) & block_mask; blocks[j].addr; j = (j + 1) & block_mask) {
		home = block_home(blocks[j].addr, block_mask);
		if (((j - home) & block_mask) >= ((j - i) & block_mask)) {
			blocks[i] = blocks[j];
			i = j;
		}
	}
	blocks[i] = (struct live_block){0};
	return true;
}

uint64_t live__untracked(void)
{
	return untracked;
}

/* A (stack, size) pair of the live set, merged for the records. */
struct merged {
	uint64_t size, weight, count;
	uint32_t stack, used;
};

/* Fill the merge table (cap slots, a power of 2) from the blocks. */
static void merge(struct merged *m, uint64_t cap)
{
	for (uint64_t i = 0; i <= block_mask; i++) {
		const struct live_block *b = &blocks[i];
		uint64_t j;

		if (!b->addr)
			continue;
		j = (b->stack * 0x9E3779B97F4A7C15ULL ^ b->size * 0xC2B2AE3D27D4EB4FULL) >> 17;
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

/*
 * Write the live set to w as SAMPLE records of the attr id: one per stack
 * and block size, its period the estimated bytes still live, its weight the
 * size; *blocks and *bytes get the sampled blocks and the estimated bytes.
 * Under the lock. Returns 0 or -errno.
 */
int live__write(struct writer *w, uint64_t id, uint32_t pid, uint64_t time, uint64_t *nblocks,
		uint64_t *bytes)
{
	uint64_t cap = 16, chain[AP_MAX_CHAIN + 2];
	struct merged *m;
	char *buf;
	size_t len = 0;
	int err = 0;

	*nblocks = block_count;
	*bytes = 0;
	if (!block_count || !id)
		return 0;
	while (cap < block_count * 2)
		cap *= 2;
	m = map(cap * sizeof(*m));
	buf = map(WRITE_BUF);
	if (!m || !buf) {
		err = -ENOMEM;
		goto out;
	}
	merge(m, cap);
	for (uint64_t i = 0; i < cap && !err; i++) {
		unsigned nr = 1;

		if (!m[i].used)
			continue;
		*bytes += m[i].weight;
		chain[0] = PERF_CONTEXT_USER;
		if (m[i].stack) {
			uint64_t n = frames[m[i].stack];

			if (n > AP_MAX_CHAIN)
				n = AP_MAX_CHAIN;
			memcpy(chain + 1, frames + m[i].stack + 1, n * 8);
			nr += (unsigned)n;
		}
		if (nr == 1)
			chain[nr++] = 0;
		if (len + RECORD_ROOM > WRITE_BUF) {
			err = writer__append(w, buf, len);
			len = 0;
		}
		len += memory__put_sample(buf + len, WRITE_BUF - len, id, pid, pid, time, 0,
					  m[i].weight, chain, nr, m[i].size);
	}
	if (!err && len)
		err = writer__append(w, buf, len);
	writer__note_times(w, time, time);
out:
	if (m)
		munmap(m, cap * sizeof(*m));
	if (buf)
		munmap(buf, WRITE_BUF);
	return err;
}
