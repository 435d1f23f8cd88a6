// SPDX-License-Identifier: MIT
/*
 * chain_cache.c - the locations of a whole sample's ip and callchain, kept
 * by the raw addresses: a sample whose (process, exec epoch, cpumode, ip,
 * callchain) were seen before gets the same locations with one hash and
 * one compare, instead of a frame cache probe per frame (resolver.c).
 *
 * Only for processes where (epoch, address) decides the map (proc->simple)
 * and for kernel-only samples: there every frame's location is a function
 * of those values alone, so the answer is the one resolver__sample() would
 * compute again. Direct-mapped; an entry owns copies of the raw chain and
 * of the locations, so the memory grows with distinct chains, up to the
 * table's size.
 */
#include "aggregate/aggregate.h"

#include <stdlib.h>

#define CHAIN_CACHE_BITS 12
#define CHAIN_MAX	 128 /* longer chains are not kept */
/*
 * Every CHAIN_WINDOW lookups, the cache is dropped for good if under half
 * of them hit: files whose chains rarely repeat (perf record -g of code
 * without frame pointers: the callers are stack garbage) would pay for the
 * hashing and copying for nothing.
 */
#define CHAIN_WINDOW 16384

struct chain_ent {
	u64 hash, key;
	u32 nr_raw, nr_out;
	u64 *raw;
	u32 *out;
};

/* The cache key of sample @s of process key @pkey: cpumode and whether it has an ip. */
static u64 sample_key(const struct sample *s, u64 pkey)
{
	return pkey ^ ((u64)(s->misc & PERF_RECORD_MISC_CPUMODE_MASK) << 48) ^
	       ((u64)s->has_ip << 63);
}

static u64 mix(u64 h, u64 v)
{
	return (h ^ v) * 0x9e3779b97f4a7c15ULL;
}

/*
 * Look up sample @s of process key @pkey (pid | epoch << 32). True if its
 * chain is kept: its locations are then *out[0..*nr). Otherwise *slot is
 * the entry to keep it in with chain_cache__store(), and *hash its hash;
 * *slot is NULL if @s is not kept (too long, or out of memory).
 */
bool chain_cache__find(struct resolver *r, const struct sample *s, u64 pkey,
		       struct chain_ent **slot, u64 *hash, const u32 **out, u32 *nr)
{
	u64 h = sample_key(s, pkey), i;
	struct chain_ent *e;

	*slot = NULL;
	if (r->chain_off || s->nr_chain > CHAIN_MAX)
		return false;
	if (++r->chain_tries == CHAIN_WINDOW) {
		if (r->chain_hits < CHAIN_WINDOW / 2) {
			chain_cache__free(r);
			r->chain_off = true;
			return false;
		}
		r->chain_tries = r->chain_hits = 0;
	}
	if (!r->chain_cache) {
		r->chain_cache = calloc(1ULL << CHAIN_CACHE_BITS, sizeof(*r->chain_cache));
		if (!r->chain_cache)
			return false;
	}
	h = mix(h, s->has_ip ? s->ip : 0);
	for (i = 0; i < s->nr_chain; i++)
		h = mix(h, sample__chain(s, i));
	h = mix(h, s->nr_chain);
	*hash = h;
	e = &r->chain_cache[h >> (64 - CHAIN_CACHE_BITS)];
	*slot = e;
	if (!e->raw || e->hash != h || e->key != sample_key(s, pkey) ||
	    e->nr_raw != s->nr_chain + 1 || e->raw[0] != (s->has_ip ? s->ip : 0))
		return false;
	for (i = 0; i < s->nr_chain; i++) {
		if (e->raw[i + 1] != sample__chain(s, i))
			return false;
	}
	*out = e->out;
	*nr = e->nr_out;
	r->chain_hits++;
	return true;
}

/*
 * Keep in @e (from chain_cache__find(), @hash its hash) that sample @s of
 * process key @pkey resolves to @frames[0..@nr). Quietly keeps nothing when
 * out of memory.
 */
void chain_cache__store(struct chain_ent *e, u64 hash, const struct sample *s, u64 pkey,
			const u32 *frames, u32 nr)
{
	u64 *raw = malloc((s->nr_chain + 1) * sizeof(*raw));
	u32 *out = malloc((nr ? nr : 1) * sizeof(*out));
	u64 i;

	if (!raw || !out) {
		free(raw);
		free(out);
		return;
	}
	raw[0] = s->has_ip ? s->ip : 0;
	for (i = 0; i < s->nr_chain; i++)
		raw[i + 1] = sample__chain(s, i);
	memcpy(out, frames, nr * sizeof(*out));
	free(e->raw);
	free(e->out);
	*e = (struct chain_ent){.hash = hash,
				.key = sample_key(s, pkey),
				.nr_raw = (u32)s->nr_chain + 1,
				.nr_out = nr,
				.raw = raw,
				.out = out};
}

void chain_cache__free(struct resolver *r)
{
	size_t i;

	if (!r->chain_cache)
		return;
	for (i = 0; i < 1ULL << CHAIN_CACHE_BITS; i++) {
		free(r->chain_cache[i].raw);
		free(r->chain_cache[i].out);
	}
	free(r->chain_cache);
	r->chain_cache = NULL;
}
