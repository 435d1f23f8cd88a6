// SPDX-License-Identifier: MIT
/*
 * render_pprof.c - --pprof FILE: pprof's profile.proto, gzip-compressed, as
 * `go tool pprof`, Pyroscope and Parca read it.
 *
 * One Sample per (event, thread, stack) entry, its values the sample count
 * and the period of each sampled event (zero for the other events), with
 * pid, tid and thread name labels. Locations are the stacks' code addresses
 * (the session keeps them: main.c sets session_opts.lines), each with its
 * function and libdw source line; Functions carry the demangled name, the
 * symbol's own (mangled) name and the source file. Each object file is one
 * Mapping with its GNU build id; as our addresses are file offsets (the same
 * library sits at different addresses in different processes), mapping N
 * starts at the synthetic address N << 40 with file_offset 0, so that
 * address - memory_start + file_offset is the file offset a symbolizer wants.
 * The kernel's addresses are its own, in one [kernel.kallsyms] mapping.
 *
 * The wire format is written by proto.c: pprof's schema is small and Debian
 * has no C library for it that does not need generated code.
 */
#include "view/view.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "proto.h"

/* profile.proto's field numbers. */
enum {
	P_SAMPLE_TYPE = 1,
	P_SAMPLE,
	P_MAPPING,
	P_LOCATION,
	P_FUNCTION,
	P_STRING_TABLE,
	P_TIME_NANOS = 9,
	P_DURATION_NANOS,
	P_PERIOD_TYPE,
	P_PERIOD,
	P_COMMENT,
	P_DEFAULT_SAMPLE_TYPE,
};

#define MAPPING_SHIFT 40
#define NONE	      UINT32_MAX

struct pprof {
	struct session *s;
	struct strset strs;
	struct pbuf prof, msg, sub;
	int *evs; /* the hists written, in value order */
	size_t nr_evs;
	u32 *path;
	u64 *ids;
	u8 *loc_used, *func_used;
	u64 *dso_max; /* per dso id: largest offset + 1 used, 0: none */
	u64 kmin, kmax;
	bool kernel;
	int err;
};

/* The id of @str in the string table (0 for "" or when out of memory). */
static u64 str(struct pprof *p, const char *s)
{
	u32 id = 0;

	if (s && *s && strset__intern(&p->strs, s, strlen(s), &id) && !p->err)
		p->err = -ENOMEM;
	return id;
}

/* ValueType {type, unit} as field @field of the profile. */
static void value_type(struct pprof *p, u32 field, const char *type, const char *unit)
{
	proto__reset(&p->msg);
	proto__varint(&p->msg, 1, str(p, type));
	proto__varint(&p->msg, 2, str(p, unit));
	proto__message(&p->prof, field, &p->msg);
}

/* The period's value type of event @ev: "cpu"/"nanoseconds" for the clocks,
 * pprof's heap names for the memory events (read/memory_names.c). */
static const char *period_name(struct pprof *p, const char *ev)
{
	const char *unit, *mem = memory_names__pprof_name(ev, &unit);

	return mem ? mem : p->nr_evs == 1 && event_units__cpu_clock(ev) ? "cpu" : ev;
}

static void sample_types(struct pprof *p, int main_hist)
{
	char name[300];
	size_t i;

	for (i = 0; i < p->nr_evs; i++) {
		const char *ev = p->s->hists.v[p->evs[i]].event;

		if (p->nr_evs == 1)
			snprintf(name, sizeof(name), "samples");
		else
			snprintf(name, sizeof(name), "%s-samples", ev);
		value_type(p, P_SAMPLE_TYPE, name, "count");
		value_type(p, P_SAMPLE_TYPE, period_name(p, ev), event_units__period_unit(ev));
		if (p->evs[i] == main_hist) {
			const struct hist *h = &p->s->hists.v[main_hist];

			value_type(p, P_PERIOD_TYPE, period_name(p, ev),
				   event_units__period_unit(ev));
			proto__varint(&p->prof, P_PERIOD,
				      h->nr_samples
					  ? (h->total_period + h->nr_samples / 2) / h->nr_samples
					  : 0);
			proto__varint(&p->prof, P_DEFAULT_SAMPLE_TYPE, str(p, period_name(p, ev)));
		}
	}
}

/* A label {key, str} or {key, num} into p->sub (the sample being built). */
static void label(struct pprof *p, const char *key, const char *s, u64 num)
{
	proto__reset(&p->msg);
	proto__varint(&p->msg, 1, str(p, key));
	if (s)
		proto__varint(&p->msg, 2, str(p, s));
	else
		proto__varint(&p->msg, 3, num);
	proto__message(&p->sub, 3, &p->msg);
}

/*
 * The location id of stack node @node at @depth (0: the leaf): its code
 * address, else its function. loc_used notes 1 for a leaf, 2 for a caller.
 */
static u64 node_loc(struct pprof *p, u32 node, u32 depth)
{
	const struct stack_node *n = &p->s->hists.stacks.nodes[node];

	if (n->loc != NONE) {
		p->loc_used[n->loc] |= depth ? 2 : 1;
		return (u64)n->loc + 1;
	}
	p->func_used[n->fid] = 1;
	return (u64)p->s->hists.res.nr_locs + n->fid + 1;
}

static void samples(struct pprof *p)
{
	const struct stacks *st = &p->s->hists.stacks;
	u64 vals[64];
	size_t i, k;

	for (i = 0; i < st->nr_entries && !p->err; i++) {
		const struct entry *e = &st->entries[i];
		const struct task *t = &st->tasks[e->task];
		const char *comm;
		u32 n, d, m;

		for (k = 0; k < p->nr_evs && p->evs[k] != (int)e->hist; k++)
			;
		if (k == p->nr_evs || !e->samples)
			continue;
		n = stacks__path(st, e->node, p->path);
		for (d = 0, m = 0; d < n; d++) { /* leaf first, as pprof wants */
			u32 loc = st->nodes[p->path[d]].loc, nx;

			p->ids[m++] = node_loc(p, p->path[d], d);
			/* the functions it was inlined into are Lines of its Location */
			nx = loc != NONE ? p->s->hists.res.locs[loc].next : NONE_LOC;
			while (nx != NONE_LOC && d + 1 < n && st->nodes[p->path[d + 1]].loc == nx) {
				d++;
				nx = p->s->hists.res.locs[nx].next;
			}
		}
		n = m;
		memset(vals, 0, 2 * p->nr_evs * sizeof(*vals));
		vals[2 * k] = e->samples;
		vals[2 * k + 1] = e->period;
		proto__reset(&p->sub);
		proto__packed(&p->sub, 1, p->ids, n);
		proto__packed(&p->sub, 2, vals, 2 * p->nr_evs);
		label(p, "pid", NULL, t->pid);
		label(p, "tid", NULL, t->tid);
		comm = machine__task_comm(&p->s->machine, t->pid, t->tid, t->comm);
		if (comm && *comm)
			label(p, "thread", comm, 0);
		proto__message(&p->prof, P_SAMPLE, &p->sub);
	}
}

/* "file.c:123" split into the file and the line; false when @buf is empty. */
static bool split_srcline(char *buf, long *line)
{
	char *colon = strrchr(buf, ':');

	*line = 0;
	if (!buf[0])
		return false;
	if (colon) {
		*line = strtol(colon + 1, NULL, 10);
		*colon = 0;
	}
	return true;
}

/*
 * Location @id of function @fid at code address @l (NULL: the function
 * itself). A return address (@caller_only) takes the line of the call
 * before it, as perf does.
 */
static void one_location(struct pprof *p, u64 id, u32 fid, const struct loc *l, bool caller_only)
{
	const struct func *fn = &p->s->hists.res.funcs[fid];
	char buf[SRCLINE_MAX];
	u64 vaddr;
	long line = 0;
	u32 nx;

	proto__reset(&p->sub);
	proto__varint(&p->sub, 1, id);
	if (l && l->dso) {
		proto__varint(&p->sub, 2, (u64)l->dso->id + 1);
		proto__varint(&p->sub, 3, ((u64)l->dso->id + 1) << MAPPING_SHIFT | l->off);
		if (l->off + 1 > p->dso_max[l->dso->id])
			p->dso_max[l->dso->id] = l->off + 1;
		if (!p->s->opts.no_load && !l->dso->special &&
		    dso__vaddr(l->dso, l->off - (caller_only && l->off), &vaddr) == 0 &&
		    srcline__find_depth(l->dso, vaddr, l->depth, buf, sizeof(buf)) == 0)
			split_srcline(buf, &line);
	} else if (l && fn->obj == OBJ_KERNEL) {
		proto__varint(&p->sub, 2, p->s->machine.dsos.nr + 1);
		proto__varint(&p->sub, 3, l->off);
		if (!p->kernel || l->off < p->kmin)
			p->kmin = l->off;
		if (!p->kernel || l->off + 1 > p->kmax)
			p->kmax = l->off + 1;
		p->kernel = true;
	}
	proto__reset(&p->msg);
	proto__varint(&p->msg, 1, (u64)fid + 1);
	proto__varint_nz(&p->msg, 2, (u64)line);
	proto__message(&p->sub, 4, &p->msg);
	p->func_used[fid] = 1;
	/* An inlined function's Location: a Line for each function it is inlined into, outward. */
	for (nx = l && l->depth == 0 ? l->next : NONE_LOC; nx != NONE_LOC;
	     nx = p->s->hists.res.locs[nx].next) {
		const struct loc *c = &p->s->hists.res.locs[nx];

		line = 0;
		if (!p->s->opts.no_load &&
		    dso__vaddr(c->dso, c->off - (caller_only && c->off), &vaddr) == 0 &&
		    srcline__find_depth(c->dso, vaddr, c->depth, buf, sizeof(buf)) == 0)
			split_srcline(buf, &line);
		proto__reset(&p->msg);
		proto__varint(&p->msg, 1, (u64)c->fid + 1);
		proto__varint_nz(&p->msg, 2, (u64)line);
		proto__message(&p->sub, 4, &p->msg);
		p->func_used[c->fid] = 1;
	}
	proto__message(&p->prof, P_LOCATION, &p->sub);
}

static void locations(struct pprof *p)
{
	const struct resolver *r = &p->s->hists.res;
	size_t i;

	for (i = 0; i < r->nr_locs; i++) {
		if (p->loc_used[i])
			one_location(p, (u64)i + 1, r->locs[i].fid, &r->locs[i],
				     p->loc_used[i] == 2);
	}
}

static void func_locations(struct pprof *p, const u8 *direct)
{
	const struct resolver *r = &p->s->hists.res;
	size_t i;

	for (i = 0; i < r->nr_funcs; i++) {
		if (direct[i])
			one_location(p, (u64)r->nr_locs + i + 1, (u32)i, NULL, false);
	}
}

static void functions(struct pprof *p)
{
	const struct resolver *r = &p->s->hists.res;
	char buf[SRCLINE_MAX];
	size_t i;

	for (i = 0; i < r->nr_funcs && !p->err; i++) {
		const struct func *fn = &r->funcs[i];
		const char *sysname = fn->name;
		long line = 0;

		if (!p->func_used[i])
			continue;
		if (fn->has_sym && fn->dso && fn->dso->symtab.nr) {
			const struct sym *sym = symbols__lookup(&fn->dso->symtab, fn->vaddr);

			if (sym && sym->start == fn->vaddr)
				sysname = sym->name;
		}
		output__func_source(p->s, (u32)i, buf, sizeof(buf));
		split_srcline(buf, &line);
		proto__reset(&p->sub);
		proto__varint(&p->sub, 1, (u64)i + 1);
		proto__varint(&p->sub, 2, str(p, fn->name));
		proto__varint(&p->sub, 3, str(p, sysname));
		proto__varint_nz(&p->sub, 4, str(p, buf));
		proto__varint_nz(&p->sub, 5, (u64)line);
		proto__message(&p->prof, P_FUNCTION, &p->sub);
	}
}

/* The GNU build id of @path as lowercase hex into @hex ("" if none). */
static void build_id(const char *path, char *hex, size_t len)
{
	const void *id = NULL;
	ssize_t n, i;
	Elf *elf;
	int fd;

	hex[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	for (i = 0; i < n && (size_t)(2 * i + 2) < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const u8 *)id)[i]);
	elf_end(elf);
	close(fd);
}

static void mappings(struct pprof *p)
{
	const struct dsos *d = &p->s->machine.dsos;
	char hex[2 * 64 + 1];
	size_t i;

	for (i = 0; i < d->nr && !p->err; i++) {
		const struct dso *dso = d->v[i];
		u64 start = ((u64)dso->id + 1) << MAPPING_SHIFT;

		if (!p->dso_max[dso->id])
			continue;
		hex[0] = 0;
		if (!p->s->opts.no_load && !dso->special && !dso->jitmap)
			build_id(dso->path, hex, sizeof(hex));
		proto__reset(&p->sub);
		proto__varint(&p->sub, 1, (u64)dso->id + 1);
		proto__varint(&p->sub, 2, start);
		proto__varint(&p->sub, 3, start + p->dso_max[dso->id]);
		proto__varint(&p->sub, 4, 0);
		proto__varint(&p->sub, 5, str(p, dso->path));
		proto__varint_nz(&p->sub, 6, str(p, hex));
		proto__varint(&p->sub, 7, 1);
		proto__varint(&p->sub, 8, 1);
		proto__varint(&p->sub, 9, !dso->special);
		proto__message(&p->prof, P_MAPPING, &p->sub);
	}
	if (p->kernel) {
		proto__reset(&p->sub);
		proto__varint(&p->sub, 1, d->nr + 1);
		proto__varint(&p->sub, 2, p->kmin);
		proto__varint(&p->sub, 3, p->kmax);
		proto__varint(&p->sub, 5, str(p, "[kernel.kallsyms]"));
		proto__varint(&p->sub, 7, 1);
		proto__message(&p->prof, P_MAPPING, &p->sub);
	}
}

/* Wall-clock start: the first file's modification time less the samples' span. */
static void times(struct pprof *p)
{
	const struct session *s = p->s;
	u64 dur = s->first_time <= s->last_time ? s->last_time - s->first_time : 0;
	struct stat st;

	proto__varint_nz(&p->prof, P_DURATION_NANOS, dur);
	if (s->nr_files && stat(s->files[0].path, &st) == 0) {
		u64 mtime = (u64)st.st_mtim.tv_sec * 1000000000ULL + (u64)st.st_mtim.tv_nsec;

		proto__varint_nz(&p->prof, P_TIME_NANOS, mtime > dur ? mtime - dur : 0);
	}
}

/* Compress @len bytes at @buf into @out as one gzip member. Returns 0 or -errno. */
static int gzip_to(FILE *out, const u8 *buf, size_t len)
{
	u8 chunk[65536];
	z_stream z = {0};
	int ret;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len; /* profiles under 4 GiB */
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			break;
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			ret = Z_ERRNO;
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : ret == Z_ERRNO ? -EIO : -ENOMEM;
}

/* The reader, then each command of the files once (a day of windows: a few commands in 11,520). */
static void comments(struct pprof *p)
{
	struct kvmap seen = {0};
	u64 id, was;
	size_t i;

	proto__varint(&p->prof, P_COMMENT, str(p, "autoprof-report"));
	for (i = 0; i < p->s->nr_files; i++) {
		if (!p->s->files[i].feat.cmdline)
			continue;
		id = str(p, p->s->files[i].feat.cmdline);
		if (kvmap__get(&seen, id, 0, &was))
			continue;
		kvmap__put(&seen, id, 0, 0); /* without it (ENOMEM): said again */
		proto__varint(&p->prof, P_COMMENT, id);
	}
	kvmap__exit(&seen);
}

static int alloc(struct pprof *p)
{
	const struct session *s = p->s;

	p->evs = calloc(s->hists.nr + 1, sizeof(*p->evs));
	p->path = malloc(MAX_FRAMES * sizeof(*p->path));
	p->ids = malloc(MAX_FRAMES * sizeof(*p->ids));
	p->loc_used = calloc(s->hists.res.nr_locs + 1, 1);
	p->func_used = calloc(s->hists.res.nr_funcs + 1, 1);
	p->dso_max = calloc(s->machine.dsos.nr + 1, sizeof(*p->dso_max));
	return p->evs && p->path && p->ids && p->loc_used && p->func_used && p->dso_max ? 0
											: -ENOMEM;
}

static void release(struct pprof *p)
{
	free(p->evs);
	free(p->path);
	free(p->ids);
	free(p->loc_used);
	free(p->func_used);
	free(p->dso_max);
	strset__exit(&p->strs);
	proto__free(&p->prof);
	proto__free(&p->msg);
	proto__free(&p->sub);
}

/*
 * Write every sampled event of @s (or only --event's) as a gzipped pprof
 * profile to @out. Returns 0, -ENOMEM or -EIO.
 */
int render_pprof(struct session *s, const struct report_opts *o, FILE *out)
{
	struct pprof p = {.s = s};
	int main_hist = session__main_hist(s, o->event);
	u8 *direct = NULL;
	size_t i;
	int err;

	err = alloc(&p);
	for (i = 0; i < s->hists.nr && !err; i++) {
		if (s->hists.v[i].nr_samples && (!o->event || (int)i == main_hist))
			p.evs[p.nr_evs++] = (int)i;
	}
	if (!err && p.nr_evs > 32)
		p.nr_evs = 32; /* the value array's bound; more events is not a real file */
	if (!err) {
		sample_types(&p, main_hist);
		samples(&p);
		/* Functions reached only through function nodes get a location of their own. */
		direct = malloc(s->hists.res.nr_funcs + 1);
		if (!direct)
			err = -ENOMEM;
	}
	if (!err) {
		memcpy(direct, p.func_used, s->hists.res.nr_funcs + 1);
		locations(&p);
		func_locations(&p, direct);
		functions(&p);
		mappings(&p);
		times(&p);
		comments(&p);
		for (i = 0; i < p.strs.nr || i == 0; i++) {
			const char *v = i < p.strs.nr ? strset__str(&p.strs, (u32)i) : "";

			proto__string(&p.prof, P_STRING_TABLE, v ? v : "");
		}
		err = p.err ? p.err : p.prof.err;
	}
	if (!err)
		err = gzip_to(out, p.prof.p, p.prof.len);
	free(direct);
	release(&p);
	return err;
}
