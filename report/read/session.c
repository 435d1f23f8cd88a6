// SPDX-License-Identifier: MIT
/*
 * session.c - read one or more perf.data files into one report.
 *
 * Two passes over the records of every file:
 *  1. count LOST/THROTTLE/unknown records and collect the side-band records
 *     (MMAP, MMAP2, COMM, FORK) with their times; sort those by time (time 0
 *     first: perf synthesizes the initial state at time 0) and apply them to
 *     the machine. Ordering in the file never matters this way.
 *  2. resolve and count every SAMPLE against the complete machine.
 * Only the side-band records are kept in memory; samples are streamed into
 * the stack trie (stacks.c), then per-function totals are computed once.
 * Counters (STAT records) are summed in pass 1.
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>

/* The side-band records to apply in time order. */
struct sides {
	struct rec_pos *v;
	size_t nr, cap;
};

int session__init(struct session *s)
{
	memset(s, 0, sizeof(*s));
	s->first_time = UINT64_MAX;
	return hists__init(&s->hists);
}

/* Queue a warning for main() to print; quietly counts the ones past MAX_WARNINGS. */
void session__warn(struct session *s, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (s->nr_warnings == MAX_WARNINGS) {
		s->dropped_warnings++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) >= 0)
		s->warnings[s->nr_warnings++] = msg;
	va_end(ap);
}

static int fail(struct session *s, int err, const char *path, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", path, what);
	return err;
}

/* Name each attr (EVENT_DESC, else from type/config) and give it its event's counters. */
static int name_attrs(struct session *s, struct perf_file *pf)
{
	size_t i;

	for (i = 0; i < pf->nr_attrs; i++) {
		struct evattr *ea = &pf->attrs[i];

		if (!ea->name)
			ea->name = evname__from_attr(&ea->attr);
		if (!ea->name)
			return -ENOMEM;
		ea->hist = hists__findnew_event(&s->hists, ea->name);
		if (ea->hist < 0)
			return ea->hist;
	}
	return 0;
}

/* Add the file @path, or the @len bytes at @buf named @path if @buf is not NULL. */
static int add_file(struct session *s, const char *path, const void *buf, size_t len)
{
	struct perf_file *pf;
	char warn[256];
	int err;

	if (array__reserve(&s->files, &s->cap_files, s->nr_files + 1, sizeof(*s->files)))
		return fail(s, -ENOMEM, path, "out of memory");
	pf = &s->files[s->nr_files];
	err = buf ? perf_file__open_mem(pf, path, buf, len) : perf_file__open(pf, path);
	if (err) {
		fail(s, err, path, pf->err);
		perf_file__close(pf);
		return err;
	}
	s->nr_files++;
	if (pf->warn[0])
		session__warn(s, "%s: %s", path, pf->warn);
	err = features__read(pf, warn, sizeof(warn));
	if (err == -ENOMEM)
		return fail(s, err, path, "out of memory");
	if (err)
		session__warn(s, "%s: %s", path, warn);
	if (!pf->pipe && pf->feat.has_comp) {
		/* perf record -z: the data section expanded into plain records */
		err = stream__expand(pf, pf->data_off, pf->data_end);
		if (err)
			return fail(s, err, path, pf->err);
		if (pf->warn[0])
			session__warn(s, "%s: %s", path, pf->warn);
	}
	err = name_attrs(s, pf);
	if (err)
		return fail(s, err, path, "out of memory");
	return 0;
}

/*
 * Open and validate @path and add it to the report. Returns 0, or -errno
 * with "path: reason" in s->err. Recoverable problems become warnings.
 */
int session__add_file(struct session *s, const char *path)
{
	return add_file(s, path, NULL, 0);
}

/* As session__add_file() for @len bytes at @buf, which must outlive the session. */
int session__add_buffer(struct session *s, const char *name, const void *buf, size_t len)
{
	return add_file(s, name, buf, len);
}

static int sides__push(struct sides *sd, u64 time, u64 off, u32 file)
{
	if (array__reserve(&sd->v, &sd->cap, sd->nr + 1, sizeof(*sd->v)))
		return -ENOMEM;
	sd->v[sd->nr++] = (struct rec_pos){time, off, file, 1};
	return 0;
}

static bool known_type(u32 type)
{
	return (type >= PERF_RECORD_MMAP && type <= PERF_RECORD_AUX_OUTPUT_HW_ID) ||
	       (type >= PERF_RECORD_USER_TYPE_START && type < PERF_RECORD_LAST_KNOWN);
}

static void note_unknown(struct session *s, u32 type)
{
	size_t i;

	s->unknown_records++;
	for (i = 0; i < ARRAY_SIZE(s->unknown_types); i++) {
		if (s->unknown_types[i] == type)
			return;
		if (!s->unknown_types[i]) {
			s->unknown_types[i] = type;
			return;
		}
	}
}

static bool kernel_mode(u16 misc)
{
	u16 mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL;
}

/* True if the MMAP body names the kernel's own text ("[kernel.kallsyms]_text"). */
static bool is_kernel_map(const u8 *p, size_t fixed, size_t body_end)
{
	static const char prefix[] = "[kernel.kallsyms]";

	return body_end - fixed >= sizeof(prefix) - 1 &&
	       !memcmp(p + fixed, prefix, sizeof(prefix) - 1);
}

/* True unless a file names a kernel release other than the running one. */
static bool kernel_fits(const struct session *s)
{
	struct utsname u;
	size_t i;

	if (uname(&u) != 0)
		return false;
	for (i = 0; i < s->nr_files; i++) {
		const char *rel = s->files[i].feat.osrelease;

		if (rel && strcmp(rel, u.release) != 0)
			return false;
	}
	return true;
}

/* Pass 1 over one file: counters, and the side-band records to apply later. */
static int scan_file(struct session *s, u32 fi, struct sides *sd)
{
	struct perf_file *pf = &s->files[fi];
	u64 pos = pf->data_off;
	struct record r;
	struct sample id;
	size_t body_end;
	int ret;

	while ((ret = perf_file__next_record(pf, &pos, &r)) > 0) {
		u32 type = r.h.type;

		if (s->opts.visit) {
			bool has_id = record__ids(pf, &r, &id, &body_end);

			ret = s->opts.visit(s->opts.visit_arg, fi, &r, has_id ? &id : NULL);
			if (ret)
				return ret;
		}
		s->nr_records++;
		if (type < PERF_RECORD_LAST_KNOWN)
			s->type_counts[type]++;
		if (type == PERF_RECORD_SAMPLE) {
			if (s->opts.filter.has_time && !sample__parse(pf, &r, &id) && id.has_time &&
			    id.time < s->first_time)
				s->first_time = id.time;
			continue;
		}
		if (type == PERF_RECORD_COMPRESSED) {
			snprintf(s->err, sizeof(s->err),
				 "%s: COMPRESSED records (perf record -z) without a usable "
				 "HEADER_COMPRESSED feature: cannot read them",
				 pf->path);
			return -EINVAL;
		}
		if (!known_type(type)) {
			note_unknown(s, type);
			continue;
		}
		if (type == PERF_RECORD_STAT) {
			ret = counters__stat(&s->counters, pf, fi, &r);
			if (ret == -ENOMEM)
				return ret;
			s->bad_records += ret != 0;
			continue;
		}
		if (type == PERF_RECORD_STAT_ROUND) {
			s->bad_records += counters__round(&s->counters, &r) != 0;
			continue;
		}
		if (type >= PERF_RECORD_USER_TYPE_START)
			continue;
		if (r.h.size < record__fixed_size(type) ||
		    sample_id__parse(pf, &r, record__fixed_size(type), &id, &body_end)) {
			s->bad_records++;
			continue;
		}
		switch (type) {
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			if (kernel_mode(r.h.misc) && !s->opts.no_load &&
			    is_kernel_map(r.p, record__fixed_size(type), body_end) &&
			    kernel_fits(s))
				kernel_syms__prefetch(&s->hists.res.ksyms);
			/* fall through */
		case PERF_RECORD_COMM:
			if (sides__push(sd, id.time, r.off, fi))
				return -ENOMEM;
			break;
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			if (sides__push(sd, REC(struct perf_record_fork, &r).time, r.off, fi))
				return -ENOMEM;
			break;
		case PERF_RECORD_LOST:
			s->lost += REC(struct perf_record_lost, &r).lost;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			s->lost_samples += REC(struct perf_record_lost_samples, &r).lost;
			break;
		case PERF_RECORD_THROTTLE:
			s->throttle++;
			break;
		case PERF_RECORD_UNTHROTTLE:
			s->unthrottle++;
			break;
		default:
			break;
		}
	}
	if (ret < 0)
		session__warn(s, "%s: %s", pf->path, pf->err);
	return 0;
}

int rec_pos__cmp(const void *pa, const void *pb)
{
	const struct rec_pos *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* Remember the kernel's own text mapping ("[kernel.kallsyms]_text"), not modules'. */
static void note_kernel_map(struct machine *m, const struct record *r, size_t fixed,
			    size_t body_end)
{
	struct perf_record_mmap mm = REC(struct perf_record_mmap, r);

	if (!is_kernel_map(r->p, fixed, body_end) || m->kmap.present)
		return;
	m->kmap = (struct kmap){
	    .present = true, .start = mm.start, .end = mm.start + mm.len, .pgoff = mm.pgoff};
}

/* Apply one side-band record (already validated by scan_file) to the machine. */
static int apply_side(struct session *s, const struct rec_pos *sd)
{
	const struct perf_file *pf = &s->files[sd->file];
	struct machine *m = &s->machine;
	struct record r;
	struct sample id;
	size_t fixed, body_end;
	const u8 *p;

	if (perf_file__record_at(pf, sd->off, &r))
		return 0;
	fixed = record__fixed_size(r.h.type);
	if (sample_id__parse(pf, &r, fixed, &id, &body_end))
		return 0;
	p = r.p;
	switch (r.h.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		/* MMAP2 starts as MMAP does: pid, tid, start, len, pgoff */
		struct perf_record_mmap mm = REC(struct perf_record_mmap, &r);

		if (kernel_mode(r.h.misc)) {
			note_kernel_map(m, &r, fixed, body_end);
			return 0;
		}
		/* exec: an MMAP without the DATA flag, an MMAP2 with PROT_EXEC */
		return machine__mmap(m, mm.pid, mm.start, mm.len, mm.pgoff, (const char *)p + fixed,
				     body_end - fixed,
				     r.h.type == PERF_RECORD_MMAP
					 ? !(r.h.misc & PERF_RECORD_MISC_MMAP_DATA)
					 : (REC(struct perf_record_mmap2, &r).prot & PROT_EXEC) !=
					       0,
				     sd->time);
	}
	case PERF_RECORD_COMM: {
		struct perf_record_comm c = REC(struct perf_record_comm, &r);

		return machine__comm(m, c.pid, c.tid, (const char *)p + fixed, body_end - fixed,
				     r.h.misc & PERF_RECORD_MISC_COMM_EXEC, sd->time);
	}
	case PERF_RECORD_FORK: {
		struct perf_record_fork f = REC(struct perf_record_fork, &r);

		return machine__fork(m, f.pid, f.ppid, f.tid, f.ptid, sd->time);
	}
	case PERF_RECORD_EXIT: {
		struct perf_record_fork f = REC(struct perf_record_fork, &r);

		return machine__exit_task(m, f.pid, f.tid, sd->time);
	}
	default:
		return 0;
	}
}

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
	    !has_str(f->comms, f->nr_comms, machine__comm_of(&s->machine, smp->pid, smp->tid)))
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

/* Pass 2 over one file: every SAMPLE into the stacks. */
static int sample_file(struct session *s, struct perf_file *pf)
{
	const struct filter *f = &s->opts.filter;
	bool filtered = f->nr_pids || f->nr_tids || f->nr_comms || f->has_time;
	u64 pos = pf->data_off;
	struct record r;
	struct sample smp;
	int ret, err;
	u32 nr, frames[MAX_FRAMES];

	while ((ret = perf_file__next_record(pf, &pos, &r)) > 0) {
		const struct evattr *ea;

		if (r.h.type != PERF_RECORD_SAMPLE)
			continue;
		err = sample__parse(pf, &r, &smp);
		if (err == -ENOENT) {
			s->unknown_id++;
			continue;
		}
		if (err) {
			s->bad_samples++;
			continue;
		}
		if (filtered && !keep_sample(s, &smp)) {
			s->filtered++;
			continue;
		}
		ea = &pf->attrs[smp.attr];
		err = resolver__sample(&s->hists.res, &s->machine, &smp, frames, &nr);
		/* --call-graph dwarf: the user stack is unwound from the dump */
		if (!err && (ea->attr.sample_type & PERF_SAMPLE_STACK_USER) && !s->opts.no_load &&
		    (s->unwinder || (s->unwinder = unwinder__new())))
			err = resolver__unwind_user(&s->hists.res, s->unwinder, &s->machine, pf,
						    &smp, frames, &nr);
		if (err)
			return err;
		if (f->nr_dsos && !keep_object(s, frames[0])) {
			s->filtered++;
			continue;
		}
		err =
		    hists__add_stack(&s->hists, ea->hist, smp.pid, smp.tid, frames, nr, smp.period);
		if (err)
			return err;
		s->nr_samples++;
		if (smp.has_time) {
			if (smp.time < s->first_time)
				s->first_time = smp.time;
			if (smp.time > s->last_time)
				s->last_time = smp.time;
		}
	}
	return 0;
}

static void warn_totals(struct session *s)
{
	if (s->unknown_id)
		session__warn(s, "%llu samples with an id not present in the header were skipped",
			      (unsigned long long)s->unknown_id);
	if (s->bad_samples)
		session__warn(s, "%llu malformed samples were skipped",
			      (unsigned long long)s->bad_samples);
	if (unwinder__failed(s->unwinder))
		session__warn(s, "%llu dwarf samples had no user stack beyond the sampled address",
			      (unsigned long long)unwinder__failed(s->unwinder));
	if (s->bad_records)
		session__warn(s, "%llu malformed records were skipped",
			      (unsigned long long)s->bad_records);
	if (s->unknown_records)
		session__warn(s, "%llu records of unknown type (%u%s%s) were skipped",
			      (unsigned long long)s->unknown_records, s->unknown_types[0],
			      s->unknown_types[1] ? ", " : "", s->unknown_types[1] ? "..." : "");
}

/*
 * Use /proc/kallsyms for kernel addresses only when a file has a kernel map
 * and every file that names its kernel release names this machine's.
 */
static void setup_kernel(struct session *s)
{
	if (!s->machine.kmap.present || s->opts.no_load || !kernel_fits(s))
		return;
	kernel_syms__enable(&s->hists.res.ksyms, s->machine.kmap.pgoff);
}

/* Processes and threads that have samples. */
static int count_tasks(struct session *s)
{
	struct kvmap pids = {0};
	struct kvmap tids = {0};
	size_t i;
	int err = 0;

	for (i = 0; i < s->hists.stacks.nr_tasks && !err; i++) {
		err = kvmap__put(&pids, s->hists.stacks.tasks[i].pid, 0, 0);
		if (!err)
			err = kvmap__put(&tids, s->hists.stacks.tasks[i].tid, 0, 0);
	}
	s->nr_procs_seen = pids.nr;
	s->nr_threads_seen = tids.nr;
	kvmap__exit(&pids);
	kvmap__exit(&tids);
	return err;
}

/*
 * Run both passes over every added file. Returns 0 or -ENOMEM (with s->err
 * set); problems in the data become warnings.
 */
int session__process(struct session *s)
{
	struct sides sd = {0};
	size_t i;
	int err = 0;

	for (i = 0; i < s->nr_files && !err; i++)
		err = scan_file(s, (u32)i, &sd);
	if (!err && sd.nr)
		qsort(sd.v, sd.nr, sizeof(*sd.v), rec_pos__cmp);
	for (i = 0; i < sd.nr && !err; i++)
		err = apply_side(s, &sd.v[i]);
	free(sd.v);
	if (!err)
		err = machine__finish(&s->machine);
	s->machine.dsos.no_load = s->opts.no_load;
	setup_kernel(s);
	s->hists.stacks.lines = s->opts.lines;
	for (i = 0; i < s->nr_files && !err; i++)
		err = sample_file(s, &s->files[i]);
	if (!err)
		err = hists__finish(&s->hists);
	if (!err)
		err = counters__finish(&s->counters);
	if (!err)
		err = count_tasks(s);
	if (err) {
		if (!s->err[0])
			snprintf(s->err, sizeof(s->err), "%s", strerror(-err));
		return err;
	}
	warn_totals(s);
	if (!s->nr_samples && s->unknown_records) {
		/* nothing read but records we cannot read: no silent empty report */
		snprintf(s->err, sizeof(s->err),
			 "no samples read, and %llu records of a type not supported (%u) "
			 "were skipped",
			 (unsigned long long)s->unknown_records, s->unknown_types[0]);
		return -ENOTSUP;
	}
	return 0;
}

/*
 * The hist the views show: the event named @event, else the first with
 * samples, else 0. Returns -1 if @event names no event.
 */
int session__main_hist(const struct session *s, const char *event)
{
	size_t i;

	for (i = 0; i < s->hists.nr; i++) {
		if (event ? !strcmp(s->hists.v[i].event, event) : s->hists.v[i].nr_samples > 0)
			return (int)i;
	}
	return event ? -1 : 0;
}

void session__exit(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nr_files; i++)
		perf_file__close(&s->files[i]);
	free(s->files);
	for (i = 0; i < s->nr_warnings; i++)
		free(s->warnings[i]);
	machine__exit(&s->machine);
	hists__exit(&s->hists);
	unwinder__free(s->unwinder);
	counters__exit(&s->counters);
	memset(s, 0, sizeof(*s));
}
