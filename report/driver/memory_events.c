// SPDX-License-Identifier: MIT
/*
 * memory_events.c - the objects of autoprof's memory events (AUTOPROF_MEMORY,
 * the library's session/memory.c; their names: read/memory_names.c). Each
 * alloc-bytes or live-bytes SAMPLE's period is the estimated bytes it stands
 * for and its WEIGHT field the block's size, so period / weight is the
 * estimated number of blocks (objects). The reader counts those objects as
 * samples of two events of its own, alloc-objects and live-objects, at the
 * same stack: every view and export then shows objects beside bytes
 * (-e alloc-objects).
 */
#include "driver/driver.h"

#include <errno.h>
#include <string.h>

#include "autoprof/events.h"

/* Fields between CALLCHAIN and WEIGHT that this reader does not step over. */
#define BEFORE_WEIGHT                                                                              \
	(PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |                      \
	 PERF_SAMPLE_STACK_USER)

/*
 * Is this SAMPLE a memory record of period 0: a live set that a later one
 * in the same file retired (ctl dump, exec), the mark of an empty live set,
 * or an alloc-bytes record of address 0 whose size is the bytes the process
 * allocated before its memory profile started (constructors run before
 * libautoprof.so's)? Such records weigh nothing (perf report adds 0 bytes
 * for them, and lists a stack that has only those at 0.00%); the reader
 * leaves them out of its samples, counting them (s->memory_zero: a file
 * with a mark has a live set, if an empty one; s->memory_before: the bytes
 * before, which the views state). One at AP_MEMORY_UNSEEN_ADDR holds the
 * anonymous memory the process held at its end that the wrappers did not
 * see (s->memory_unseen: said once, and by the views).
 */
bool memory_events__weightless(struct session *s, const struct perf_file *pf,
			       const struct sample *smp)
{
	const struct evattr *ea = &pf->attrs[smp->attr];

	const char *objects_ev;

	if (smp->period || !(ea->attr.sample_type & PERF_SAMPLE_WEIGHT) || ea->hist < 0 ||
	    !(objects_ev = memory_names__objects_of(s->hists.v[ea->hist].event)))
		return false;
	if (!strcmp(objects_ev, "alloc-objects") && !smp->addr &&
	    !(ea->attr.sample_type & BEFORE_WEIGHT) && smp->end - smp->rest >= 8) {
		s->memory_before += ld64(smp->rest);
		return true;
	}
	if (!strcmp(objects_ev, "alloc-objects") && smp->addr == AP_MEMORY_UNSEEN_ADDR &&
	    !(ea->attr.sample_type & BEFORE_WEIGHT) && smp->end - smp->rest >= 8) {
		if (!s->memory_unseen) /* once for a run's files */
			session__warn(
			    s,
			    "%s: %.1f MiB of the anonymous memory its process held at the "
			    "end did not come through malloc & co (an allocator the "
			    "library cannot see): not in the memory profile",
			    pf->path, (double)ld64(smp->rest) / (1 << 20));
		s->memory_unseen += ld64(smp->rest);
		return true;
	}
	s->memory_zero++;
	return true;
}

int memory_events__count(struct session *s, const struct perf_file *pf, const struct sample *smp,
			 u32 comm, const u32 *frames, u32 nr)
{
	const struct evattr *ea = &pf->attrs[smp->attr];
	const char *objects_ev;
	u64 size, objects;
	int h;

	if (!(ea->attr.sample_type & PERF_SAMPLE_WEIGHT) ||
	    (ea->attr.sample_type & BEFORE_WEIGHT) || ea->hist < 0 ||
	    !(objects_ev = memory_names__objects_of(s->hists.v[ea->hist].event)) ||
	    smp->end - smp->rest < 8)
		return 0;
	size = ld64(smp->rest);
	if (!size)
		return 0;
	/* one allocation's record holds its block; a merged one (AUTOPROF_AGGREGATE) address 0 */
	if (!smp->addr && (ea->attr.sample_type & PERF_SAMPLE_ADDR) &&
	    !strcmp(objects_ev, "alloc-objects"))
		s->memory_merged = true;
	objects = (smp->period + size / 2) / size;
	h = hists__findnew_event(&s->hists, objects_ev);
	if (h < 0)
		return h;
	return hists__add_stack(&s->hists, h, smp->pid, smp->tid, comm,
				smp->has_cpu ? smp->cpu : UINT32_MAX, frames, nr,
				objects ? objects : 1);
}

void memory_events__note_mark(struct session *s, const struct perf_file *pf, const char *name)
{
	const char *why;

	if (strncmp(name, AP_MEMORY_MARK, strlen(AP_MEMORY_MARK)))
		return;
	why = !strcmp(name, AP_MEMORY_MARK_NO_LIBRARY)
		  ? "libautoprof-memory.so was not preloaded (record with autoprof --memory, or "
		    "both libautoprof.so and libautoprof-memory.so in LD_PRELOAD)"
	      : !strcmp(name, AP_MEMORY_MARK_OUT_OF_REACH)
		  ? "the program's malloc and free did not reach libautoprof-memory.so (an "
		    "allocator linked into the program, or a tool that replaces them)"
	      : !strcmp(name, AP_MEMORY_MARK_NO_TABLE)
		  ? "the library could not map its live table (the program's address space "
		    "too small: RLIMIT_AS, ulimit -v)"
		  : name + strlen(AP_MEMORY_MARK);
	for (size_t i = 0; i < s->nr_warnings; i++) /* once for a run's files */
		if (strstr(s->warnings[i], why))
			return;
	session__warn(s,
		      "%s: a memory profile was asked for (AUTOPROF_MEMORY) and not recorded: %s",
		      pf->path, why);
}
