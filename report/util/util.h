/* SPDX-License-Identifier: MIT */
/*
 * util.h - the containers every part of autoprof-report uses (report/util/):
 *   kvmap.c   a hash table keyed by two u64s (ids, addresses, pids)
 *   strset.c  interned strings (comms, source lines) with u32 ids
 *   array.c   the one growable-array helper
 * and the basic types and loads all of them share (u8..u64, ld64, ld32).
 * The bottom of the reader: includes no other report header.
 */
#ifndef AUTOPROF_REPORT_UTIL_H
#define AUTOPROF_REPORT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Unaligned native-endian loads: record payloads need not be aligned in a bad file. */
static inline u64 ld64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u32 ld32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Write @n bytes at @in as 2 * @n lowercase hex digits and a 0 into @out (a build id's text). */
static inline void util__hex(char *out, const u8 *in, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = 0;
}

/* ---- kvmap.c: open addressing, keys (a, b), u64 values ---- */

struct kvmap_slot {
	u64 a, b;
	u64 val;
	u64 used;
};

struct kvmap {
	struct kvmap_slot *slots;
	size_t cap; /* power of two, 0 when empty */
	size_t nr;
};

int kvmap__get(const struct kvmap *m, u64 a, u64 b, u64 *val);
int kvmap__put(struct kvmap *m, u64 a, u64 b, u64 val);
void kvmap__exit(struct kvmap *m);

/* ---- strset.c: interned strings, id 0 is "" ---- */

struct strset {
	char **v;
	size_t nr, cap;
	struct kvmap idx; /* (hash, salt) -> id */
};

int strset__intern(struct strset *ss, const char *str, size_t len, u32 *id);
const char *strset__str(const struct strset *ss, u32 id);
void strset__exit(struct strset *ss);
/* FNV-1a of the @len bytes at @p: the strings' hash, and any bytes'. */
u64 strset__hash(const void *p, size_t len);

/* ---- util/array.c ---- */

int array__reserve(void *pv, size_t *cap, size_t need, size_t elem);

/*
 * How many of the @n elements of @size bytes at @base, sorted by the u64 each
 * starts with, start at or below @key: the element holding @key, if any, is
 * the one before that index (symbols, maps, address ranges).
 */
static inline size_t array__upper(const void *base, size_t n, size_t size, u64 key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ld64((const char *)base + mid * size) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif /* AUTOPROF_REPORT_UTIL_H */
