// SPDX-License-Identifier: MIT
/*
 * sideband.c - pass 1 of the session: every record counted (lost, throttled,
 * unknown, counters), the side-band records (MMAP, MMAP2, COMM, FORK, EXIT)
 * collected with their times, then applied to the machine in time order.
 */
#include "driver/driver.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Keep side-band record @r of file @file, at @time (a copy of it if sd->copy). */
static int push_side(struct sides *sd, u64 time, const struct record *r, u32 file)
{
	u64 off = r->off;

	if (array__reserve(&sd->v, &sd->cap, sd->nr + 1, sizeof(*sd->v)))
		return -ENOMEM;
	if (sd->copy) {
		if (array__reserve(&sd->bytes, &sd->cap_bytes, sd->nr_bytes + r->h.size, 1))
			return -ENOMEM;
		memcpy(sd->bytes + sd->nr_bytes, r->p, r->h.size);
		off = sd->nr_bytes;
		sd->nr_bytes += r->h.size;
	}
	sd->v[sd->nr++] = (struct rec_pos){time, off, file, 1};
	return 0;
}

/* The side-band record @rp of @sd into @r: its copy, or from its file. 0 or -EINVAL. */
static int side_record(const struct session *s, const struct sides *sd, const struct rec_pos *rp,
		       struct record *r)
{
	if (!sd->copy)
		return perf_file__record_at(&s->files[rp->file], rp->off, r);
	memcpy(&r->h, sd->bytes + rp->off, sizeof(r->h));
	r->p = sd->bytes + rp->off;
	r->off = rp->off;
	return 0;
}

/*
 * True if MMAP record @r of a session of many files is, byte for byte, one
 * already kept (the same record at the same time: a window's file repeats
 * every mapping of its process at time 0, and applying a record twice
 * changes nothing; COMMs come at their own times). Else remembers @r as the
 * one its repeats are compared with (pushed next, at index sd->nr).
 */
/* A hash of the @n bytes at @p, 8 at a time (records are whole words; a tail is hashed too). */
static u64 words_hash(const u8 *p, size_t n)
{
	u64 h = n, w;
	size_t i;

	for (i = 0; i < n; i += 8) {
		w = 0;
		if (n - i >= 8)
			w = ld64(p + i);
		else
			memcpy(&w, p + i, n - i);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

static bool repeated(const struct session *s, struct sides *sd, const struct record *r)
{
	u64 h = words_hash(r->p, r->h.size), idx;
	struct record was;

	if (kvmap__get(&sd->kept, h, r->h.size, &idx))
		return !side_record(s, sd, &sd->v[idx], &was) && was.h.size == r->h.size &&
		       !memcmp(was.p, r->p, r->h.size);
	kvmap__put(&sd->kept, h, r->h.size, sd->nr); /* without it (ENOMEM): kept twice */
	return false;
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

bool sideband__kernel_mode(u16 misc)
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

/* True when every file names its kernel release, and it is the running one. */
static bool kernel_named_here(const struct session *s)
{
	struct utsname u;
	size_t i;

	if (uname(&u) != 0 || !s->nr_files)
		return false;
	for (i = 0; i < s->nr_files; i++) {
		const char *rel = s->files[i].feat.osrelease;

		if (!rel || strcmp(rel, u.release) != 0)
			return false;
	}
	return true;
}

/* True for the side-band records pass 1 collects to build the machine. */
bool sideband__is_side(u32 type)
{
	return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
	       type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT;
}

/* Pass 1 for one record @r of file @fi: counters, and a side-band record to apply later. */
int sideband__scan_record(struct session *s, u32 fi, struct sides *sd, const struct record *r)
{
	struct perf_file *pf = &s->files[fi];
	u32 type = r->h.type;
	struct sample id;
	size_t body_end;
	int ret;

	if (s->opts.visit) {
		bool has_id = sample__record_ids(pf, r, &id, &body_end);

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
		s->aux_bytes += perf_file__trailing(r);
		return 0;
	}
	if (type >= PERF_RECORD_USER_TYPE_START)
		return 0;
	if (r->h.size < sample__fixed_size(type) ||
	    sample__id_parse(pf, r, sample__fixed_size(type), &id, &body_end)) {
		s->bad_records++;
		return 0;
	}
	if ((s->many || s->nr_files > 1) &&
	    (type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2) && repeated(s, sd, r))
		return 0;
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (sideband__kernel_mode(r->h.misc) && !s->opts.no_load &&
		    is_kernel_map(r->p,
				  sample__fixed_size(type) - (sample__mmap2_old_layout(r) ? 8 : 0),
				  body_end) &&
		    kernel_fits(s))
			kallsyms__prefetch(&s->hists.res.ksyms);
		/* fall through */
	case PERF_RECORD_COMM:
		if (push_side(sd, id.time, r, fi))
			return -ENOMEM;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (push_side(sd, REC(struct perf_record_fork, r).time, r, fi))
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
 * (see onewalk__process()). Returns 0 at the end, or -errno.
 */
int sideband__scan_file(struct session *s, u32 fi, struct sides *sd, u64 *pos, u64 gap)
{
	struct perf_file *pf = &s->files[fi];
	u64 quiet_from = *pos;
	struct record r;
	int ret;

	while ((ret = perf_file__next_record(pf, pos, &r)) > 0) {
		ret = sideband__scan_record(s, fi, sd, &r);
		if (ret)
			return ret;
		if (sideband__is_side(r.h.type))
			quiet_from = *pos;
		else if (gap && *pos - quiet_from >= gap)
			return 1;
	}
	if (ret < 0)
		session__warn(s, "%s: %s", pf->path, perf_file__error(pf));
	return 0;
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

/* Apply one side-band record (already validated by sideband__scan_file) to the machine. */
int sideband__apply(struct session *s, const struct sides *sides, const struct rec_pos *sd)
{
	const struct perf_file *pf = &s->files[sd->file];
	struct machine *m = &s->machine;
	struct record r;
	struct sample id;
	size_t fixed, body_end;
	const u8 *p;
	bool old;

	if (side_record(s, sides, sd, &r))
		return 0;
	fixed = sample__fixed_size(r.h.type);
	if (sample__id_parse(pf, &r, fixed, &id, &body_end))
		return 0;
	p = r.p;
	old = sample__mmap2_old_layout(&r);
	if (old)
		fixed -= 8;
	switch (r.h.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		/* MMAP2 starts as MMAP does: pid, tid, start, len, pgoff */
		struct perf_record_mmap mm = REC(struct perf_record_mmap, &r);

		if (sideband__kernel_mode(r.h.misc)) {
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

			util__hex(hex, m2.build_id, m2.build_id_size < 20 ? m2.build_id_size : 20);
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

/*
 * The kallsyms file perf's build-id cache keeps of the recorded kernel
 * (.build-id/xx/rest/kallsyms) into @path, when one file records the
 * kernel's build id and the cache has it. False otherwise.
 */
static bool cached_kallsyms(const struct session *s, char *path, size_t len)
{
	size_t i, k;

	for (i = 0; i < s->nr_files; i++) {
		const struct features *f = &s->files[i].feat;

		for (k = 0; k < f->nr_build_ids; k++) {
			if (strcmp(f->build_ids[k].path, "[kernel.kallsyms]") != 0)
				continue;
			return !buildid__cache_path(f->build_ids[k].hex, "kallsyms", path, len) &&
			       access(path, R_OK) == 0;
		}
	}
	return false;
}

/*
 * Name kernel addresses when a file has a kernel map: through /proc/kallsyms
 * when every file that names its kernel release names this machine's, else
 * through the kallsyms perf's build-id cache keeps of the recorded kernel.
 * A [vdso] without a build id is named from this machine's when every file
 * names this kernel (buildid__host_vdso).
 */
static void setup_kernel(struct session *s)
{
	char path[4096];

	buildid__host_vdso(kernel_named_here(s));
	if (!s->machine.kmap.present || s->opts.no_load)
		return;
	if (kernel_fits(s))
		kallsyms__enable(&s->hists.res.ksyms, s->machine.kmap.pgoff, NULL);
	else if (cached_kallsyms(s, path, sizeof(path)))
		kallsyms__enable(&s->hists.res.ksyms, s->machine.kmap.pgoff, path);
}

/*
 * Build the machine from the side-band records collected so far: sorted by
 * time (time 0 first: perf synthesizes the initial state at time 0), applied,
 * finished; then the kernel and the hists' settings for pass 2.
 */
int sideband__build_machine(struct session *s, struct sides *sd)
{
	bool many = s->nr_files > 1;
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
		err = sideband__apply(s, sd, &sd->v[i]);
	if (!err)
		err = machine__finish(&s->machine);
	s->machine.dsos.no_load = s->opts.no_load;
	setup_kernel(s);
	/* with many files (one walk of one file may build the machine again) */
	for (i = 0; many && i < s->nr_files; i++)
		features__drop_build_ids(&s->files[i].feat, false);
	s->hists.stacks.lines = s->opts.lines;
	s->hists.stacks.cpus = s->opts.cpus;
	return err;
}
