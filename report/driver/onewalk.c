// SPDX-License-Identifier: MIT
/*
 * onewalk.c - both passes of a one-file session in (mostly) one walk of its
 * records, with the result of two passes (see onewalk__process()).
 */
#include "autoprof/env.h"
#include "driver/driver.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>

/*
 * One pass instead of two (every page of the file is mapped once, not twice:
 * on a --call-graph dwarf file that costs more than the unwinding, on others
 * a fifth of the time).
 * Records carrying side-band information come early in a perf.data file
 * (the synthesized state, then the threads as they start). Pass 1 stops at a
 * checkpoint once a stretch of records without any follows the last one;
 * the machine is built from what it has, the samples up to the checkpoint
 * are read (a short stretch read twice), and from there one walk does both
 * passes. This gives exactly what two passes give as long as the machine
 * cannot change: any MMAP, MMAP2 or FORK record after the checkpoint, a
 * COMM that could (comm_unchanged()), or an EXIT the machine would order
 * before one already applied, undoes the samples read (spec_undo()) and
 * pass 1 goes on from that record. Other EXITs only set a process's exit
 * time, which samples never look at; they and the harmless COMMs are
 * applied at the end, in the order two passes would apply them.
 * An undo wastes the samples read so far, so a walk is retried (with a
 * longer stretch) only if it was undone in the first eighth of the file: a
 * file with side-band records late costs at most one more reading of the
 * samples than two passes.
 */
#define SPEC_GAP   (1ULL << 20) /* the first stretch; each retry waits 8 times longer */
#define SPEC_TRIES 3

/* True if session @s may take the one-pass path: see onewalk__process(). */
bool onewalk__fits(const struct session *s)
{
	return s->nr_files == 1 && !s->opts.visit && !s->opts.filter.has_time && !s->files[0].pipe;
}

/*
 * True if COMM record @r (not an exec), met after the checkpoint, changes
 * nothing a sample looks at and nothing two passes would order otherwise:
 * it names its thread as the machine already does (machine__comm_of(),
 * which falls back on the process's name for a thread it does not know), or
 * it names a thread no record named before and no --comm filter asks for
 * names while samples are read (the names are looked up after). Autoprof's
 * own files record a thread's name with its last samples, at the end.
 */
static bool comm_unchanged(const struct session *s, const struct record *r)
{
	const struct perf_file *pf = &s->files[0];
	size_t fixed = sample__fixed_size(PERF_RECORD_COMM), body_end, len;
	const struct thread *t;
	struct perf_record_comm c;
	struct sample id;
	const char *name, *cur;

	if ((r->h.misc & PERF_RECORD_MISC_COMM_EXEC) || r->h.size < fixed ||
	    sample__id_parse(pf, r, fixed, &id, &body_end))
		return false;
	c = REC(struct perf_record_comm, r);
	name = (const char *)r->p + fixed;
	len = strnlen(name, body_end - fixed);
	if (len >= sizeof(((struct thread *)0)->comm))
		return false;
	t = machine__find_thread(&s->machine, c.tid);
	if (!s->opts.filter.nr_comms && (!t || !t->comm[0]))
		return true;
	cur = machine__comm_of(&s->machine, c.pid, c.tid);
	return strlen(cur) == len && !memcmp(cur, name, len);
}

/* True if record @r, met after the checkpoint, leaves the machine as it is for samples. */
static bool spec_harmless(struct session *s, const struct record *r, u64 max_time)
{
	struct perf_record_fork f;

	if (!sideband__is_side(r->h.type))
		return true;
	if (r->h.type == PERF_RECORD_COMM)
		return comm_unchanged(s, r);
	if (r->h.type != PERF_RECORD_EXIT)
		return false;
	f = REC(struct perf_record_fork, r);
	/* a thread's exit changes nothing; a process's sets its exit time */
	return f.pid != f.tid || (f.time >= max_time && machine__find_proc(&s->machine, f.pid));
}

/*
 * Forget the samples read and the machine built, as if pass 1 had only
 * been run so far. Returns 0 or -ENOMEM.
 */
static int spec_undo(struct session *s)
{
	bool kallsyms = s->hists.res.ksyms.running || s->hists.res.ksyms.k.loaded;
	size_t i;
	int err;

	hists__exit(&s->hists);
	machine__exit(&s->machine);
	unwind_dwarf__free(s->unwinder);
	s->unwinder = NULL;
	s->nr_samples = s->filtered = s->unknown_id = s->bad_samples = 0;
	s->first_time = UINT64_MAX;
	s->last_time = 0;
	err = hists__init(&s->hists);
	s->hists.aim = s->opts.aim;
	for (i = 0; i < s->nr_files && !err; i++)
		err = session__name_attrs(s, &s->files[i]);
	if (!err && kallsyms)
		kallsyms__prefetch(&s->hists.res.ksyms);
	return err;
}

/*
 * Pass 1 and pass 2 in one walk from *pos, the checkpoint, with the machine
 * built. Returns 0 at the end of the data, 1 with *pos at a record that
 * could change the machine (not consumed), or -errno.
 */
static int spec_walk(struct session *s, struct sides *sd, u64 *pos)
{
	struct perf_file *pf = &s->files[0];
	u64 max_time = sd->nr ? sd->v[sd->nr - 1].time : 0;
	struct record r;
	int ret, err;
	u64 at;

	for (at = *pos; (ret = perf_file__next_record(pf, pos, &r)) > 0; at = *pos) {
		if (!spec_harmless(s, &r, max_time)) {
			*pos = at;
			return 1;
		}
		err = sideband__scan_record(s, 0, sd, &r);
		if (!err && r.h.type == PERF_RECORD_SAMPLE)
			err = samples__one(s, pf, &r);
		if (err)
			return err;
	}
	if (ret < 0)
		session__warn(s, "%s: %s", pf->path, perf_file__error(pf));
	return 0;
}

/*
 * Both passes over the one file of @s in (mostly) one walk, see SPEC_GAP.
 * Returns 1 if done (the machine built, the samples read, @sd all applied),
 * 0 if pass 1 went to the end instead (the caller goes on as for two passes),
 * or -errno.
 */
int onewalk__process(struct session *s, struct sides *sd)
{
	struct perf_file *pf = &s->files[0];
	const char *env = ap_env(AP_ENV_REPORT_SPEC_GAP);
	u64 gap = env ? strtoull(env, NULL, 0) : SPEC_GAP;
	u64 pos = pf->data_off, start;
	size_t nr_pre, i;
	int tries, err;

	for (tries = 0; tries < SPEC_TRIES && gap; tries++, gap *= 8) {
		err = sideband__scan_file(s, 0, sd, &pos, gap);
		if (err <= 0)
			return err; /* the end: no checkpoint, pass 1 is complete */
		start = pos;
		nr_pre = sd->nr;
		err = sideband__build_machine(s, sd);
		if (!err)
			err = samples__file(s, pf, start);
		if (!err)
			err = spec_walk(s, sd, &pos);
		if (err < 0)
			return err;
		if (!err) {
			/* only harmless EXITs and COMMs came after the checkpoint: apply them */
			if (sd->nr > nr_pre)
				qsort(sd->v + nr_pre, sd->nr - nr_pre, sizeof(*sd->v),
				      rec_pos__cmp);
			for (i = nr_pre; i < sd->nr && !err; i++)
				err = sideband__apply(s, sd, &sd->v[i]);
			return err ? err : 1;
		}
		err = spec_undo(s);
		if (err)
			return err;
		/* a retry reads the samples up to its checkpoint again: only early on */
		if (pos - pf->data_off > (pf->walk_end - pf->data_off) / 8)
			break;
	}
	return sideband__scan_file(s, 0, sd, &pos, 0);
}
