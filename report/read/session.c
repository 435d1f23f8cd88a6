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
 * A single file is read in (mostly) one walk instead, with the same result:
 * see spec_process().
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
		ea->lbr_calls = (ea->attr.sample_type & PERF_SAMPLE_BRANCH_STACK) &&
				(ea->attr.sample_type & PERF_SAMPLE_CALLCHAIN) &&
				(ea->attr.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
		if ((ea->attr.sample_type & PERF_SAMPLE_READ) &&
		    (ea->attr.read_format & PERF_FORMAT_GROUP) && !s->read_noted) {
			s->read_noted = true;
			session__warn(s,
				      "%s: event %s samples its group's counters (perf record "
				      "-e '{...}:S'): only its own samples are counted; the "
				      "values read for the group's other events are not "
				      "(perf report shows them as their own events)",
				      pf->path, ea->name);
		}
		if ((ea->attr.sample_type & PERF_SAMPLE_BRANCH_STACK) && !ea->lbr_calls &&
		    !s->branch_noted) {
			s->branch_noted = true;
			session__warn(s,
				      "%s: event %s has branch stacks (perf record -b/-j): "
				      "not shown; the views count samples as perf report "
				      "--no-branch-stack does",
				      pf->path, ea->name);
		}
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
	int err;

	if (stat_sibling__seen(s, path))
		return 0; /* FILE.stat named too (perf.data*): its totals are counted once */
	err = add_file(s, path, NULL, 0);
	if (!err)
		err = stat_sibling__read(s, (u32)(s->nr_files - 1));
	if (err == -ENOMEM)
		return fail(s, err, path, "out of memory");
	return err;
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

/* True for the side-band records pass 1 collects to build the machine. */
static bool is_side(u32 type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
	       type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT;
}

/* Pass 1 for one record @r of file @fi: counters, and a side-band record to apply later. */
static int scan_record(struct session *s, u32 fi, struct sides *sd, const struct record *r)
{
	struct perf_file *pf = &s->files[fi];
	u32 type = r->h.type;
	struct sample id;
	size_t body_end;
	int ret;

	if (s->opts.visit) {
		bool has_id = record__ids(pf, r, &id, &body_end);

		ret = s->opts.visit(s->opts.visit_arg, fi, r, has_id ? &id : NULL);
		if (ret)
			return ret;
	}
	s->nr_records++;
	if (type < PERF_RECORD_LAST_KNOWN)
		s->type_counts[type]++;
	if (type == PERF_RECORD_SAMPLE) {
		u16 mode = r->h.misc & PERF_RECORD_MISC_CPUMODE_MASK;

		if (__builtin_expect(mode == PERF_RECORD_MISC_GUEST_KERNEL ||
					 mode == PERF_RECORD_MISC_GUEST_USER,
				     0))
			s->guest_samples++;
		if (s->opts.filter.has_time && !sample__parse(pf, r, &id) && id.has_time &&
		    id.time < s->first_time)
			s->first_time = id.time;
		return 0;
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
		return 0;
	}
	if (type == PERF_RECORD_STAT) {
		ret = counters__stat(&s->counters, pf, fi, r);
		if (ret == -ENOMEM)
			return ret;
		s->bad_records += ret != 0;
		return 0;
	}
	if (type == PERF_RECORD_STAT_ROUND) {
		s->bad_records += counters__round(&s->counters, r) != 0;
		return 0;
	}
	if (type == PERF_RECORD_AUXTRACE) {
		s->aux_records++;
		s->aux_bytes += record__trailing(r);
		return 0;
	}
	if (type >= PERF_RECORD_USER_TYPE_START)
		return 0;
	if (r->h.size < record__fixed_size(type) ||
	    sample_id__parse(pf, r, record__fixed_size(type), &id, &body_end)) {
		s->bad_records++;
		return 0;
	}
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (kernel_mode(r->h.misc) && !s->opts.no_load &&
		    is_kernel_map(r->p, record__fixed_size(type) - (mmap2__old_layout(r) ? 8 : 0),
				  body_end) &&
		    kernel_fits(s))
			kernel_syms__prefetch(&s->hists.res.ksyms);
		/* fall through */
	case PERF_RECORD_COMM:
		if (sides__push(sd, id.time, r->off, fi))
			return -ENOMEM;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (sides__push(sd, REC(struct perf_record_fork, r).time, r->off, fi))
			return -ENOMEM;
		break;
	case PERF_RECORD_LOST:
		s->lost += REC(struct perf_record_lost, r).lost;
		pf->lost += REC(struct perf_record_lost, r).lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		s->lost_samples += REC(struct perf_record_lost_samples, r).lost;
		pf->lost_samples += REC(struct perf_record_lost_samples, r).lost;
		break;
	case PERF_RECORD_THROTTLE:
		s->throttle++;
		break;
	case PERF_RECORD_AUX: /* flags after aux_offset, aux_size */
		if (r->h.size >= 32 && (ld64(r->p + 24) & PERF_AUX_FLAG_TRUNCATED))
			s->aux_truncated++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		s->unthrottle++;
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Pass 1 over file @fi from *pos: counters, and the side-band records to
 * apply later. With @gap not 0, stops early at a checkpoint (returns 1,
 * *pos there) once @gap bytes of records followed the last side-band record
 * (see spec_process()). Returns 0 at the end, or -errno.
 */
static int scan_file(struct session *s, u32 fi, struct sides *sd, u64 *pos, u64 gap)
{
	struct perf_file *pf = &s->files[fi];
	u64 quiet_from = *pos;
	struct record r;
	int ret;

	while ((ret = perf_file__next_record(pf, pos, &r)) > 0) {
		ret = scan_record(s, fi, sd, &r);
		if (ret)
			return ret;
		if (is_side(r.h.type))
			quiet_from = *pos;
		else if (gap && *pos - quiet_from >= gap)
			return 1;
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

/*
 * A kernel module's mapping (perf synthesizes one per module, named by its
 * path): a map of the kernel's process (pid MACHINE_KERNEL_PID) of a dso
 * named as perf names modules, "[ext4]", never opened (the .ko files here
 * are not the recording machine's).
 */
static int add_module(struct machine *m, const struct perf_record_mmap *mm, const char *name,
		      size_t len, u64 time)
{
	const char *base, *end;
	char mod[64];
	size_t i, n;

	len = strnlen(name, len);
	base = memrchr(name, '/', len);
	base = base ? base + 1 : name;
	end = memchr(base, '.', len - (size_t)(base - name));
	n = end ? (size_t)(end - base) : len - (size_t)(base - name);
	if (base[0] == '[') /* already "[name]" */
		n = strnlen(base, len - (size_t)(base - name));
	if (!n || n > sizeof(mod) - 3)
		return 0;
	if (base[0] == '[') {
		memcpy(mod, base, n);
	} else {
		mod[0] = '[';
		for (i = 0; i < n; i++) /* perf: module names with '_' for '-' */
			mod[i + 1] = base[i] == '-' ? '_' : base[i];
		mod[++n] = ']';
		n++;
	}
	m->has_modules = true;
	return machine__mmap(m, MACHINE_KERNEL_PID, mm->start, mm->len, 0, mod, n, true, time);
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
	bool old;

	if (perf_file__record_at(pf, sd->off, &r))
		return 0;
	fixed = record__fixed_size(r.h.type);
	if (sample_id__parse(pf, &r, fixed, &id, &body_end))
		return 0;
	p = r.p;
	old = mmap2__old_layout(&r);
	if (old)
		fixed -= 8;
	switch (r.h.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		/* MMAP2 starts as MMAP does: pid, tid, start, len, pgoff */
		struct perf_record_mmap mm = REC(struct perf_record_mmap, &r);

		if (kernel_mode(r.h.misc)) {
			if (is_kernel_map(p, fixed, body_end))
				note_kernel_map(m, &r, fixed, body_end);
			else
				return add_module(m, &mm, (const char *)p + fixed, body_end - fixed,
						  sd->time);
			return 0;
		}
		if (r.h.type == PERF_RECORD_MMAP2 && (r.h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
		    !old) {
			struct perf_record_mmap2 m2 = REC(struct perf_record_mmap2, &r);
			char hex[41];
			size_t k;

			for (k = 0; k < m2.build_id_size && k < 20; k++)
				sprintf(hex + 2 * k, "%02x", m2.build_id[k]);
			hex[2 * k] = 0;
			if (dsos__set_build_id(&m->dsos, (const char *)p + fixed, body_end - fixed,
					       hex))
				return -ENOMEM;
		}
		/* exec: an MMAP without the DATA flag, an MMAP2 with PROT_EXEC (or no prot) */
		return machine__mmap(m, mm.pid, mm.start, mm.len, mm.pgoff, (const char *)p + fixed,
				     body_end - fixed,
				     r.h.type == PERF_RECORD_MMAP
					 ? !(r.h.misc & PERF_RECORD_MISC_MMAP_DATA)
					 : old ||
					       (REC(struct perf_record_mmap2, &r).prot & PROT_EXEC),
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
static int sample_one(struct session *s, const struct perf_file *pf, const struct record *r)
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
	    (s->unwinder || (s->unwinder = unwinder__new())))
		err = resolver__unwind_user(&s->hists.res, s->unwinder, &s->machine, pf, &smp,
					    frames, &nr);
	if (err)
		return err;
	if (f->nr_dsos && !keep_object(s, frames[0])) {
		s->filtered++;
		return 0;
	}
	err = hists__add_stack(&s->hists, ea->hist, smp.pid, smp.tid,
			       machine__comm_idx(&s->machine, smp.tid, smp.time),
			       smp.has_cpu ? smp.cpu : UINT32_MAX, frames, nr, smp.period);
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
static int sample_file(struct session *s, struct perf_file *pf, u64 end)
{
	u64 pos = pf->data_off;
	struct record r;
	int err;

	while (pos < end && perf_file__next_record(pf, &pos, &r) > 0) {
		if (r.h.type != PERF_RECORD_SAMPLE)
			continue;
		err = sample_one(s, pf, &r);
		if (err)
			return err;
	}
	return 0;
}

static void setup_kernel(struct session *s);

/*
 * Build the machine from the side-band records collected so far: sorted by
 * time (time 0 first: perf synthesizes the initial state at time 0), applied,
 * finished; then the kernel and the hists' settings for pass 2.
 */
static int build_machine(struct session *s, struct sides *sd)
{
	size_t i;
	int err = 0;

	if (sd->nr)
		qsort(sd->v, sd->nr, sizeof(*sd->v), rec_pos__cmp);
	for (i = 0; i < s->nr_files && !err; i++) {
		const struct features *f = &s->files[i].feat;
		size_t k;

		for (k = 0; k < f->nr_build_ids && !err; k++)
			err = dsos__set_build_id(&s->machine.dsos, f->build_ids[k].path,
						 strlen(f->build_ids[k].path), f->build_ids[k].hex);
	}
	for (i = 0; i < sd->nr && !err; i++)
		err = apply_side(s, &sd->v[i]);
	if (!err)
		err = machine__finish(&s->machine);
	s->machine.dsos.no_load = s->opts.no_load;
	setup_kernel(s);
	s->hists.stacks.lines = s->opts.lines;
	s->hists.stacks.cpus = s->opts.cpus;
	return err;
}

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

/* True if session @s may take the one-pass path: see spec_process(). */
static bool spec_fits(const struct session *s)
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
	size_t fixed = record__fixed_size(PERF_RECORD_COMM), body_end, len;
	const struct thread *t;
	struct perf_record_comm c;
	struct sample id;
	const char *name, *cur;

	if ((r->h.misc & PERF_RECORD_MISC_COMM_EXEC) || r->h.size < fixed ||
	    sample_id__parse(pf, r, fixed, &id, &body_end))
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

	if (!is_side(r->h.type))
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
	unwinder__free(s->unwinder);
	s->unwinder = NULL;
	s->nr_samples = s->filtered = s->unknown_id = s->bad_samples = 0;
	s->first_time = UINT64_MAX;
	s->last_time = 0;
	err = hists__init(&s->hists);
	s->hists.aim = s->opts.aim;
	for (i = 0; i < s->nr_files && !err; i++)
		err = name_attrs(s, &s->files[i]);
	if (!err && kallsyms)
		kernel_syms__prefetch(&s->hists.res.ksyms);
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
		err = scan_record(s, 0, sd, &r);
		if (!err && r.h.type == PERF_RECORD_SAMPLE)
			err = sample_one(s, pf, &r);
		if (err)
			return err;
	}
	if (ret < 0)
		session__warn(s, "%s: %s", pf->path, pf->err);
	return 0;
}

/*
 * Both passes over the one file of @s in (mostly) one walk, see SPEC_GAP.
 * Returns 1 if done (the machine built, the samples read, @sd all applied),
 * 0 if pass 1 went to the end instead (the caller goes on as for two passes),
 * or -errno.
 */
static int spec_process(struct session *s, struct sides *sd)
{
	struct perf_file *pf = &s->files[0];
	const char *env = getenv("AUTOPROF_REPORT_SPEC_GAP");
	u64 gap = env ? strtoull(env, NULL, 0) : SPEC_GAP;
	u64 pos = pf->data_off, start;
	size_t nr_pre, i;
	int tries, err;

	for (tries = 0; tries < SPEC_TRIES && gap; tries++, gap *= 8) {
		err = scan_file(s, 0, sd, &pos, gap);
		if (err <= 0)
			return err; /* the end: no checkpoint, pass 1 is complete */
		start = pos;
		nr_pre = sd->nr;
		err = build_machine(s, sd);
		if (!err)
			err = sample_file(s, pf, start);
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
				err = apply_side(s, &sd->v[i]);
			return err ? err : 1;
		}
		err = spec_undo(s);
		if (err)
			return err;
		/* a retry reads the samples up to its checkpoint again: only early on */
		if (pos - pf->data_off > (pf->walk_end - pf->data_off) / 8)
			break;
	}
	return scan_file(s, 0, sd, &pos, 0);
}

static void warn_totals(struct session *s)
{
	if (s->aux_records)
		session__warn(s,
			      "%llu AUXTRACE records (%llu bytes of AUX-area trace data: Intel PT, "
			      "BTS, CoreSight, SPE) not decoded%s: perf report --itrace would "
			      "synthesize samples from them; these numbers count the sampled "
			      "records only",
			      (unsigned long long)s->aux_records, (unsigned long long)s->aux_bytes,
			      s->aux_truncated ? " (and some were truncated when recorded)" : "");
	if (s->guest_samples)
		session__warn(s,
			      "%llu guest samples (perf kvm record) are shown as [unknown]: guest "
			      "kernels and programs are not resolved",
			      (unsigned long long)s->guest_samples);
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

/* The period of one sample of @a: its fixed period, or 1 s / freq for the CPU clocks; else 0. */
static u64 ea_period(const struct perf_event_attr *a)
{
	if (!a->freq)
		return a->sample_period;
	if (a->type == PERF_TYPE_SOFTWARE && a->sample_freq &&
	    (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK))
		return 1000000000ULL / a->sample_freq;
	return 0;
}

/*
 * The samples the records stand for: per event with one sample period in
 * every file, its total period over that period when the records carry more
 * than 1.1 periods each on average (autoprof's aggregated files merge a
 * stack's samples into one record); else its records.
 */
static void count_stands_for(struct session *s)
{
	size_t h, i, j;

	s->stands_for = 0;
	for (h = 0; h < s->hists.nr; h++) {
		u64 period = 0, n = s->hists.v[h].nr_samples;
		bool fixed = n > 0;

		for (i = 0; i < s->nr_files && fixed; i++) {
			for (j = 0; j < s->files[i].nr_attrs && fixed; j++) {
				const struct evattr *ea = &s->files[i].attrs[j];

				if (ea->hist != (int)h)
					continue;
				u64 p = ea_period(&ea->attr);

				if (!p || (period && period != p))
					fixed = false;
				period = p;
			}
		}
		if (fixed && period && s->hists.v[h].total_period / period > n + n / 10)
			n = (s->hists.v[h].total_period + period / 2) / period;
		s->stands_for += n;
	}
	if (s->stands_for < s->nr_samples)
		s->stands_for = s->nr_samples;
}

/* Add file @pf's losses and the share of its records read to the session's totals. */
static void account_file(struct session *s, const struct perf_file *pf)
{
	u64 off = pf->orig_end ? pf->orig_off : pf->data_off;
	u64 end = pf->orig_end ? pf->orig_end : pf->data_end, total = end > off ? end - off : 0;
	u64 read = total;

	s->lost_total += pf->lost > pf->lost_samples ? pf->lost : pf->lost_samples;
	if (pf->stop_at)
		read = pf->stop_at - off;
	else if (pf->walk_end < pf->data_end) /* stopped in an expanded stream: its share */
		read = (u64)((double)total * (double)(pf->walk_end - pf->data_off) /
			     (double)(pf->data_end - pf->data_off));
	s->data_bytes += total;
	s->read_bytes += read;
}

/*
 * Run both passes over every added file. Returns 0 or -ENOMEM (with s->err
 * set); problems in the data become warnings.
 */
int session__process(struct session *s)
{
	struct sides sd = {0};
	bool spec = spec_fits(s);
	size_t i;
	int err = 0, done = 0;
	u64 pos;

	/* --focus, --hide...: the stack filter (aggregate/aim.c) */
	s->hists.aim = s->opts.aim;
	if (spec) /* pass 1 of the one file (0), and maybe pass 2 (1) */
		err = done = spec_process(s, &sd);
	for (i = 0; i < s->nr_files && !err && !spec; i++) {
		pos = s->files[i].data_off;
		err = scan_file(s, (u32)i, &sd, &pos, 0);
	}
	if (!err && !done)
		err = build_machine(s, &sd);
	for (i = 0; i < s->nr_files && !err && !done; i++)
		err = sample_file(s, &s->files[i], UINT64_MAX);
	if (err > 0)
		err = 0;
	free(sd.v);
	for (i = 0; i < s->nr_files; i++)
		account_file(s, &s->files[i]);
	if (!err)
		err = hists__finish(&s->hists);
	if (!err)
		err = counters__finish(&s->counters);
	if (!err)
		err = count_tasks(s);
	if (!err)
		count_stands_for(s);
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

bool session__incomplete(const struct session *s)
{
	return s->nr_warnings || s->read_bytes < s->data_bytes;
}

void session__print_gaps(const struct session *s, FILE *out)
{
	size_t i;

	if (s->read_bytes < s->data_bytes)
		fprintf(out,
			"Read:       %.2f%% of the records (%llu of %llu bytes): the numbers "
			"cover that part only\n",
			100.0 * (double)s->read_bytes / (double)s->data_bytes,
			(unsigned long long)s->read_bytes, (unsigned long long)s->data_bytes);
	for (i = 0; i < s->nr_warnings; i++)
		fprintf(out, "Warning:    %s\n", s->warnings[i]);
	if (s->dropped_warnings)
		fprintf(out, "Warning:    %zu more warnings not shown\n", s->dropped_warnings);
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
	kvmap__exit(&s->stats_read);
	memset(s, 0, sizeof(*s));
}
