/* SPDX-License-Identifier: MIT */
/*
 * live_set.c - the live set written as live-bytes records (AUTOPROF_MEMORY):
 * live.c's sampled blocks merged by stack and size, one record per pair,
 * at the image's end, a window's end, a deadly signal and ctl dump.
 *
 * The merge table and the records are in memory mapped for each write,
 * sized by the blocks. When that mapping fails (the program used up its
 * address space, RLIMIT_AS: most often the very run whose leaks matter), a
 * reserve mapped at the start serves instead: the pairs are merged a part at
 * a time (the parts chosen by their hash's top bits, doubled until each
 * part's pairs fit the reserve's table), each part's records written through
 * the reserve's buffer, the blocks held throughout. A ctl dump's live set
 * (kept to be retired later) needs its records whole: it waits for memory.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "live_tables.h"

#define SPARE_SLOTS   (1ULL << 12) /* the reserve's merge table: 128 KiB */
#define SPARE_BYTES   (64 * 1024)  /* the reserve's records' buffer: any one record fits */
#define MAX_PART_BITS 16	   /* at most 65536 parts: 200 million pairs */
#define PART_MIX      0xff51afd7ed558ccdULL

/* A (stack, size) pair of the live set, merged for the records. */
struct merged {
	uint64_t size, weight, count;
	uint32_t stack, used;
};

static struct merged *spare_m; /* the reserve: mapped once, used under snap_lock */
static char *spare_buf;

int live_set__init(void)
{
	if (!spare_m)
		spare_m = live__map(SPARE_SLOTS * sizeof(*spare_m));
	if (!spare_buf)
		spare_buf = live__map(SPARE_BYTES);
	return spare_m && spare_buf ? 0 : -ENOMEM;
}

static uint64_t pair_hash(const struct live_block *b)
{
	return b->stack * 0x9E3779B97F4A7C15ULL ^ b->size * 0xC2B2AE3D27D4EB4FULL;
}

/*
 * Fill the merge table (cap slots, a power of 2, zeroed) from the blocks
 * (all shards held) whose pair is in part of the 2^bits parts. Returns
 * false when the part's pairs fill more than 3/4 of the table.
 */
static uint32_t only_owner; /* merge(): the blocks of this mark only (0: all) */

static bool merge(struct merged *m, uint64_t cap, unsigned bits, uint64_t part)
{
	uint64_t used = 0;

	for (unsigned k = 0; k < SHARDS; k++) {
		const struct shard *s = &live_shards[k];

		for (uint64_t i = 0; i <= s->mask; i++) {
			const struct live_block *b = &s->v[i];
			uint64_t h, j;

			if (!b->addr || (only_owner && b->owner != only_owner))
				continue;
			h = pair_hash(b);
			if (bits && (h * PART_MIX) >> (64 - bits) != part)
				continue;
			for (j = (h >> 17) & (cap - 1); m[j].used; j = (j + 1) & (cap - 1))
				if (m[j].stack == b->stack && m[j].size == b->size)
					break;
			if (!m[j].used) {
				if (++used > cap - cap / 4)
					return false;
				m[j].used = 1;
				m[j].stack = b->stack;
				m[j].size = b->size;
			}
			m[j].weight += b->weight;
			m[j].count++;
		}
	}
	return true;
}

/*
 * The last live set written to the middle of a file (ctl dump; an exec's, the
 * file going on if the exec fails), kept until a later live set is written to
 * the same file: the earlier one is then retired in place (every record's
 * period set to 0, its size unchanged), so that a file holds one live set
 * that weighs: its latest. Under live_snap_lock (live.c's: fork takes it).
 */
static struct {
	char *buf;
	size_t len, cap;
	uint64_t at, dev, ino;
} kept;

/* Retire the kept live set if it is in w's file (NULL: none), and forget it. Under the lock. */
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

void live_set__forget(void)
{
	memory__guard_up(); /* a handler's fork meanwhile waits for no lock of ours */
	if (live__spin_trylock(
		&live_snap_lock)) { /* not when this thread's interrupted code holds it */
		retire(NULL);
		live__spin_unlock(&live_snap_lock);
	}
	memory__guard_down();
}

void live_set__drop_kept(void)
{
	kept.buf = NULL;
}

/* The chain of merged entry e into chain (PERF_CONTEXT_USER first); returns its entries. */
static unsigned chain_of(const struct merged *e, uint64_t *chain)
{
	unsigned nr = 1;

	chain[0] = PERF_CONTEXT_USER;
	if (e->stack) {
		uint64_t n = live_frames[e->stack];

		if (n > AP_MAX_CHAIN)
			n = AP_MAX_CHAIN;
		memcpy(chain + 1, live_frames + e->stack + 1, n * 8);
		nr += (unsigned)n;
	}
	if (nr == 1)
		chain[nr++] = 0;
	return nr;
}

/* Where records go: a buffer appended to w when full (or all in one, sized for them). */
struct out {
	struct writer *w;
	char *buf;
	size_t len, cap;
	uint64_t id, time, bytes;
	uint32_t pid;
};

/* The records of m's pairs (cap slots) into o, appended to o->w as the buffer fills. 0 or -errno.
 */
static int emit(struct out *o, const struct merged *m, uint64_t cap)
{
	uint64_t chain[AP_MAX_CHAIN + 2];

	for (uint64_t i = 0; i < cap; i++) {
		unsigned nr;
		size_t n;

		if (!m[i].used)
			continue;
		nr = chain_of(&m[i], chain);
		n = memory_sample__put(o->buf + o->len, o->cap - o->len, o->id, o->pid, o->pid,
				       o->time, 0, m[i].weight, chain, nr, m[i].size);
		if (!n && o->len) { /* full: out with it */
			int err = writer__append(o->w, o->buf, o->len);

			if (err)
				return err;
			o->len = 0;
			n = memory_sample__put(o->buf, o->cap, o->id, o->pid, o->pid, o->time, 0,
					       m[i].weight, chain, nr, m[i].size);
		}
		o->len += n;
		o->bytes += m[i].weight;
	}
	return 0;
}

/*
 * Memory short: the live set through the reserve, a part of the pairs at a
 * time (the shards held). 0 or -errno (-ENOMEM: more pairs than the parts
 * hold; those written stay).
 */
static int write_parts(struct out *o)
{
	unsigned bits = 0;
	uint64_t part = 0;
	int err = 0;

	o->buf = spare_buf;
	o->cap = SPARE_BYTES;
	while (!err && part < (1ULL << bits)) {
		memset(spare_m, 0, SPARE_SLOTS * sizeof(*spare_m));
		if (!merge(spare_m, SPARE_SLOTS, bits, part)) {
			if (bits == MAX_PART_BITS)
				return -ENOMEM;
			bits++; /* this part in two: parts 2 * part and 2 * part + 1 of twice as
				   many */
			part *= 2;
			continue;
		}
		err = emit(o, spare_m, SPARE_SLOTS);
		part++;
	}
	if (!err && o->len)
		err = writer__append(o->w, o->buf, o->len);
	return err;
}

/*
 * Write the live set to w as SAMPLE records of the attr id: one per stack
 * and block size, its period the estimated bytes still live, its weight the
 * size; *blocks and *bytes get the sampled blocks and the estimated bytes.
 * The tables are held while the set is merged: waited for (wait), or a
 * bounded time from a handler. An empty live set is one record of period 0
 * and size 0 (its mark). A live set written earlier to the same file
 * by a call with keep is retired first; with keep, this one is kept to be
 * retired by the next (a set in the middle of the file: ctl dump, exec). Returns 0
 * or -errno (-EBUSY: not held). Async-signal-safe when !wait.
 */
int live_set__write(struct writer *w, uint64_t id, uint32_t pid, uint64_t time, uint64_t *nblocks,
		    uint64_t *bytes, bool wait, bool keep, bool own)
{
	uint64_t cap = 16, count = 0, chain[AP_MAX_CHAIN + 2];
	struct out o = {.w = w, .id = id, .time = time, .pid = pid};
	struct merged *m = NULL;
	int err = 0;

	*nblocks = *bytes = 0;
	if (!id)
		return 0;
	if (wait)
		live__spin_lock(&live_snap_lock);
	else if (!live__spin_trylock(&live_snap_lock))
		return -EBUSY;
	if (!live__hold_shards(wait)) {
		live__spin_unlock(&live_snap_lock);
		return -EBUSY;
	}
	only_owner = own ? live__own() : 0;
	for (unsigned i = 0; i < SHARDS; i++) {
		if (!own) {
			count += live_shards[i].count;
			continue;
		}
		for (uint64_t j = 0; j <= live_shards[i].mask; j++)
			count +=
			    live_shards[i].v[j].addr && live_shards[i].v[j].owner == only_owner;
	}
	*nblocks = count;
	while (cap < count * 2)
		cap *= 2;
	m = count ? live__map(cap * sizeof(*m)) : NULL;
	if (count && !m && (keep || !spare_m)) {
		live__release_shards();
		err = -ENOMEM;
		goto out;
	}
	if (m)
		merge(m, cap, 0, 0);
	if (!count || m)
		live__release_shards(); /* the stacks' frames never move: read without a lock */
	/* the earlier kept set is retired only once this one is sure to be written (retire()
	 * before each write below): a set that cannot be written leaves the earlier one weighing */
	if (!count) { /* the mark of an empty live set: readers tell it from none written */
		uint64_t mark[2] = {PERF_CONTEXT_USER, 0};
		char rec[128];
		size_t len =
		    memory_sample__put(rec, sizeof(rec), id, pid, pid, time, 0, 0, mark, 2, 0);

		retire(w);
		err = writer__append(w, rec, len);
		goto out;
	}
	if (!m) { /* memory short: through the reserve, the shards held */
		retire(w);
		err = write_parts(&o);
		live__release_shards();
		goto times;
	}
	for (uint64_t i = 0; i < cap; i++) /* the records' size, to write them in one append */
		if (m[i].used)
			o.cap +=
			    sizeof(struct perf_event_header) + 9 * 8 + chain_of(&m[i], chain) * 8;
	o.cap = (o.cap + 4095) & ~(size_t)4095;
	o.buf = live__map(o.cap);
	if (!o.buf) {
		if (keep || !spare_buf) {
			err = -ENOMEM;
			goto out;
		}
		retire(w);
		o.buf = spare_buf; /* memory short: written in pieces */
		o.cap = SPARE_BYTES;
		err = emit(&o, m, cap);
		if (!err && o.len)
			err = writer__append(w, o.buf, o.len);
		o.buf = NULL;
		goto times;
	}
	retire(w);
	emit(&o, m, cap); /* sized for all: one append */
	err = writer__append_at(w, o.buf, o.len, &kept.at);
	if (!err && keep) {
		kept.buf = o.buf;
		kept.len = o.len;
		kept.cap = o.cap;
		kept.dev = w->dev;
		kept.ino = w->ino;
		o.buf = NULL;
	}
times:
	*bytes = o.bytes;
	writer__note_times(w, time, time);
out:
	live__spin_unlock(&live_snap_lock);
	if (m)
		munmap(m, cap * sizeof(*m));
	if (o.buf)
		munmap(o.buf, o.cap);
	return err;
}

/* Say what the live tables could not hold: blocks not followed, stacks lost. */
void live_set__say_full(void)
{
	if (live__untracked())
		pr_warn(
		    "AUTOPROF_MEMORY: the live table was full: %llu sampled blocks not followed "
		    "(their frees unmatched)",
		    (unsigned long long)live__untracked());
	if (live__stacks_lost())
		pr_warn("AUTOPROF_MEMORY: the stacks' table was full: %llu sampled blocks kept "
			"without their stack (live bytes at an unknown stack)",
			(unsigned long long)live__stacks_lost());
}
