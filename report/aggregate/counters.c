// SPDX-License-Identifier: MIT
/*
 * counters.c - counter totals from STAT and STAT_ROUND records (perf stat
 * record files, and the counters autoprof stores beside its samples).
 *
 * A STAT record holds the running value of one counter for one (cpu,
 * thread) pair; later records for the same pair replace earlier ones, so
 * the totals are the last value of every pair, summed. Counters merge across
 * files by event name. The elapsed time is the STAT_ROUND FINAL time.
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdlib.h>

#define STAT_SIZE  sizeof(struct perf_record_stat)
#define ROUND_SIZE sizeof(struct perf_record_stat_round)

static int findnew_counter(struct counters *c, const char *name, u32 *idx)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		if (!strcmp(c->v[i].name, name)) {
			*idx = (u32)i;
			return 0;
		}
	}
	if (array__reserve(&c->v, &c->cap, c->nr + 1, sizeof(*c->v)))
		return -ENOMEM;
	c->v[c->nr] = (struct counter){.name = strdup(name)};
	if (!c->v[c->nr].name)
		return -ENOMEM;
	*idx = (u32)c->nr++;
	return 0;
}

/*
 * Take the STAT record @r of file number @file. Returns 0 (a record that is
 * too short or names no attr of the file is ignored: -EINVAL) or -ENOMEM.
 */
int counters__stat(struct counters *c, const struct perf_file *pf, u32 file, const struct record *r)
{
	struct perf_record_stat st;
	struct counter_val *cv;
	u64 key_a, val;
	u32 cnt;
	int attr, err;

	if (r->h.size < STAT_SIZE)
		return -EINVAL;
	memcpy(&st, r->p, STAT_SIZE);
	attr = perf_file__attr_of_id(pf, st.id);
	if (attr < 0)
		return -EINVAL;
	c->nr_stat++;
	key_a = (u64)file << 32 | (u32)attr;
	if (kvmap__get(&c->val_idx, key_a, (u64)st.cpu << 32 | st.thread, &val)) {
		cv = &c->vals[val];
	} else {
		if (kvmap__get(&c->attr_idx, file, (u32)attr, &val)) {
			cnt = (u32)val;
		} else {
			err = findnew_counter(c, pf->attrs[attr].name ? pf->attrs[attr].name : "?",
					      &cnt);
			if (!err)
				err = kvmap__put(&c->attr_idx, file, (u32)attr, cnt);
			if (err)
				return err;
		}
		if (array__reserve(&c->vals, &c->cap_vals, c->nr_vals + 1, sizeof(*c->vals)))
			return -ENOMEM;
		err = kvmap__put(&c->val_idx, key_a, (u64)st.cpu << 32 | st.thread, c->nr_vals);
		if (err)
			return err;
		cv = &c->vals[c->nr_vals++];
		cv->counter = cnt;
	}
	cv->val = st.val;
	cv->ena = st.ena;
	cv->run = st.run;
	return 0;
}

/* Take the STAT_ROUND record @r. Returns 0 or -EINVAL if it is too short. */
int counters__round(struct counters *c, const struct record *r)
{
	struct perf_record_stat_round rd;

	if (r->h.size < ROUND_SIZE)
		return -EINVAL;
	memcpy(&rd, r->p, ROUND_SIZE);
	if (rd.type == PERF_STAT_ROUND_TYPE_FINAL) {
		c->has_final = true;
		if (rd.time > c->elapsed_ns)
			c->elapsed_ns = rd.time;
	}
	return 0;
}

static u64 add_sat(u64 a, u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Sum the last value of every (file, attr, cpu, thread) into its counter. */
int counters__finish(struct counters *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		c->v[i].val = c->v[i].ena = c->v[i].run = 0;
	for (i = 0; i < c->nr_vals; i++) {
		struct counter *cn = &c->v[c->vals[i].counter];

		cn->val = add_sat(cn->val, c->vals[i].val);
		cn->ena = add_sat(cn->ena, c->vals[i].ena);
		cn->run = add_sat(cn->run, c->vals[i].run);
	}
	return 0;
}

/* The counter named @name, or NULL. */
const struct counter *counters__find(const struct counters *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	}
	return NULL;
}

void counters__exit(struct counters *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		free(c->v[i].name);
	free(c->v);
	free(c->vals);
	kvmap__exit(&c->val_idx);
	kvmap__exit(&c->attr_idx);
	memset(c, 0, sizeof(*c));
}
