// SPDX-License-Identifier: MIT
/*
 * samples.c - pass 2 of the session: every SAMPLE the filters keep, resolved
 * against the built machine and counted into the stacks and hists.
 */
#include "driver/driver.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>

static bool has_u32(const u32 *v, size_t nr, u32 x)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (v[i] == x)
			return true;
	}
	return false;
}

static bool has_str(const char *const *v, size_t nr, const char *x)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (!strcmp(v[i], x))
			return true;
	}
	return false;
}

/* True if sample @smp passes the pid, tid, comm and time filters. */
static bool keep_sample(const struct session *s, const struct sample *smp)
{
	const struct filter *f = &s->opts.filter;

	if (f->nr_pids && !has_u32(f->pids, f->nr_pids, smp->pid))
		return false;
	if (f->nr_tids && !has_u32(f->tids, f->nr_tids, smp->tid))
		return false;
	if (f->nr_comms &&
	    !has_str(f->comms, f->nr_comms,
		     machine__task_comm(&s->machine, smp->pid, smp->tid,
					machine__comm_idx(&s->machine, smp->tid, smp->time))))
		return false;
	if (f->has_time) {
		u64 rel;

		if (!smp->has_time || smp->time < s->first_time)
			return false;
		rel = smp->time - s->first_time;
		if (rel < f->time_from || rel >= f->time_to)
			return false;
	}
	return true;
}

/* True if the leaf @loc is in one of the objects of the library filter. */
static bool keep_object(const struct session *s, u32 loc)
{
	const struct filter *f = &s->opts.filter;
	const struct loc *l = &s->hists.res.locs[loc];
	const struct func *fn = &s->hists.res.funcs[l->fid];

	if (!f->nr_dsos)
		return true;
	if (has_str(f->dsos, f->nr_dsos, fn->object))
		return true;
	return fn->dso && has_str(f->dsos, f->nr_dsos, fn->dso->path);
}

/* Pass 2 for one SAMPLE record @r of @pf: into the stacks. Returns 0 or -ENOMEM. */
int samples__one(struct session *s, const struct perf_file *pf, const struct record *r)
{
	const struct filter *f = &s->opts.filter;
	const struct evattr *ea;
	struct sample smp;
	int err;
	u32 nr, frames[MAX_FRAMES];

	err = sample__parse(pf, r, &smp);
	if (err == -ENOENT) {
		s->unknown_id++;
		return 0;
	}
	if (err) {
		s->bad_samples++;
		return 0;
	}
	if ((f->nr_pids || f->nr_tids || f->nr_comms || f->has_time) && !keep_sample(s, &smp)) {
		s->filtered++;
		return 0;
	}
	ea = &pf->attrs[smp.attr];
	err = 1;
	if (__builtin_expect(ea->lbr_calls, 0)) { /* --call-graph lbr */
		const u8 *ents;
		u64 nr_ents;

		if (sample__branch_stack(pf, &smp, &ents, &nr_ents) == 0)
			err = resolver__lbr(&s->hists.res, &s->machine, &smp, ents, nr_ents, frames,
					    &nr);
	}
	if (err == 1)
		err = resolver__sample(&s->hists.res, &s->machine, &smp, frames, &nr);
	/* --call-graph dwarf: the user stack is unwound from the dump */
	if (!err && (ea->attr.sample_type & PERF_SAMPLE_STACK_USER) && !s->opts.no_load &&
	    (s->unwinder || (s->unwinder = unwind_dwarf__new())))
		err =
		    ustack__unwind(&s->hists.res, s->unwinder, &s->machine, pf, &smp, frames, &nr);
	if (err)
		return err;
	if (f->nr_dsos && !keep_object(s, frames[0])) {
		s->filtered++;
		return 0;
	}
	if (!smp.period && memory_events__weightless(s, pf, &smp))
		return 0; /* they weigh nothing: not a sample of the report */
	err = hists__add_stack(&s->hists, ea->hist, smp.pid, smp.tid,
			       machine__comm_idx(&s->machine, smp.tid, smp.time),
			       smp.has_cpu ? smp.cpu : UINT32_MAX, frames, nr, smp.period);
	if (!err && (ea->attr.sample_type & PERF_SAMPLE_WEIGHT)) /* alloc-objects, live-objects */
		err = memory_events__count(
		    s, pf, &smp, machine__comm_idx(&s->machine, smp.tid, smp.time), frames, nr);
	if (err)
		return err;
	s->nr_samples++;
	if (smp.has_time) {
		if (smp.time < s->first_time)
			s->first_time = smp.time;
		if (smp.time > s->last_time)
			s->last_time = smp.time;
	}
	return 0;
}

/* Pass 2 over the records of @pf before offset @end: every SAMPLE into the stacks. */
int samples__file(struct session *s, struct perf_file *pf, u64 end)
{
	u64 pos = pf->data_off;
	struct record r;
	int err;

	while (pos < end && perf_file__next_record(pf, &pos, &r) > 0) {
		if (r.h.type != PERF_RECORD_SAMPLE)
			continue;
		err = samples__one(s, pf, &r);
		if (err)
			return err;
	}
	return 0;
}
