// SPDX-License-Identifier: MIT
/*
 * kvmap.c - an open-addressing hash table keyed by a pair of u64s.
 *
 * Used for every lookup on the hot path (address cache, function table,
 * id -> attr, pid/tid -> index), so it is flat and linear-probing with a
 * load factor of at most 1/2. There is no delete.
 */
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>

/* One multiply-xorshift round over both keys: cheap, and good enough for linear probing. */
static inline size_t slot_of(u64 a, u64 b, size_t cap)
{
	u64 h = (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL);

	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 29;
	return (size_t)(h & (cap - 1));
}

/* Store *val for key (a, b). Returns 1 when found, 0 when not. */
int kvmap__get(const struct kvmap *m, u64 a, u64 b, u64 *val)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = slot_of(a, b, m->cap);; i = (i + 1) & (m->cap - 1)) {
		const struct kvmap_slot *sl = &m->slots[i];

		if (!sl->used)
			return 0;
		if (sl->a == a && sl->b == b) {
			*val = sl->val;
			return 1;
		}
	}
}

static int grow(struct kvmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 8, i; /* small: a file's id map has an id or two */
	struct kvmap_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		const struct kvmap_slot *sl = &m->slots[i];
		size_t j;

		if (!sl->used)
			continue;
		for (j = slot_of(sl->a, sl->b, ncap); ns[j].used; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *sl;
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

/* Insert or overwrite key (a, b). Returns 0 or -ENOMEM. */
int kvmap__put(struct kvmap *m, u64 a, u64 b, u64 val)
{
	size_t i;

	if ((m->nr + 1) * 2 > m->cap) {
		int err = grow(m);

		if (err)
			return err;
	}
	for (i = slot_of(a, b, m->cap);; i = (i + 1) & (m->cap - 1)) {
		struct kvmap_slot *sl = &m->slots[i];

		if (!sl->used) {
			*sl = (struct kvmap_slot){.a = a, .b = b, .val = val, .used = 1};
			m->nr++;
			return 0;
		}
		if (sl->a == a && sl->b == b) {
			sl->val = val;
			return 0;
		}
	}
}

void kvmap__exit(struct kvmap *m)
{
	free(m->slots);
	*m = (struct kvmap){0};
}
