/* SPDX-License-Identifier: MIT */
/*
 * util.h - the containers every part of autoprof-report uses (report/util/):
 *   kvmap.c   a hash table keyed by two u64s (ids, addresses, pids)
 *   strset.c  interned strings (comms, source lines) with u32 ids
 *   array.c   the one growable-array helper
 * Included by internal.h after the basic types (u8..u64).
 */
#ifndef AUTOPROF_REPORT_UTIL_H
#define AUTOPROF_REPORT_UTIL_H

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

/* ---- util/array.c ---- */

int array__reserve(void *pv, size_t *cap, size_t need, size_t elem);

#endif /* AUTOPROF_REPORT_UTIL_H */
