// SPDX-License-Identifier: MIT
/*
 * test-report-reader.c - the perf.data reader on small synthetic files.
 *
 * Each file is built in memory: one attr (or two), COMM, MMAP2 of this test
 * binary's own text, SAMPLEs with callchains into two functions below, then
 * HOSTNAME, CMDLINE and EVENT_DESC features. Variants break it in the ways a
 * killed writer or a hostile file would, and the checks look at what the
 * session read and which error or warning it gave.
 */
#include "../../report/driver/session.h"
#include "../../report/view/view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "synth.h"
#include "tap.h"

/* ---- the functions the synthetic samples point into ---- */

__attribute__((noinline, used)) int test_target_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline, used)) int test_other_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 5 + 2;
}

__attribute__((noinline, used)) int test_caller_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return test_target_fn(x) + test_other_fn(x);
}

/* ---- the synthetic file ---- */

#define PID	100
#define TID2	101
#define CHILD	200
#define ID_MAIN 42
#define ID_TWO	43
#define T0	1000000000ULL

enum {
	F_SIZE4 = 1 << 0,      /* a record of size 4 after the third sample */
	F_HUGE_NR = 1 << 1,    /* one sample claims 2^60 callchain entries */
	F_TWO_ATTRS = 1 << 2,  /* a second attr; one sample with an id of neither */
	F_EXEC = 1 << 3,       /* pid execs after the samples: a late sample is unresolved */
	F_FORK = 1 << 4,       /* pid forks CHILD, which samples in the inherited map */
	F_UNKNOWN = 1 << 5,    /* a record of unknown type 50 */
	F_CHILD_EXEC = 1 << 6, /* with F_FORK: CHILD execs, then samples in the old map */
	F_LATE_MAP = 1 << 7,   /* the MMAP2 is timed after every sample */
};

struct layout {
	size_t data_off, data_size, attr_off, third_sample_end;
};

static struct text_map self_map;

/* Find the executable mapping of this test binary that holds test_target_fn. */
static int find_self_map(void)
{
	return find_text_map((u64)(uintptr_t)&test_target_fn, &self_map);
}

/* A sample whose IP is its chain's first address (after the context marker). */
static void put_sample(struct buf *b, u16 misc, u64 id, u32 pid, u32 tid, u64 time, u64 period,
		       const u64 *chain, u64 nr, u64 claimed_nr)
{
	synth_sample(b, misc, id, chain[1], pid, tid, time, period, chain, nr, claimed_nr);
}

static void put_comm(struct buf *b, u32 pid, u32 tid, const char *name, u16 misc, u64 time)
{
	synth_comm(b, misc, pid, tid, name, time, ID_MAIN);
}

static void put_string(struct buf *b, const char *s)
{
	char pad[64] = "";
	u32 len = (u32)((strlen(s) + 1 + 63) / 64 * 64);

	put32(b, len);
	put(b, s, strlen(s));
	put(b, pad, len - strlen(s));
}

/*
 * Samples (period weights in brackets): 2 in test_target_fn [3 each] and 4
 * in test_other_fn [1 each], all called from test_caller_fn (one of them
 * recursing through it twice), 1 kernel sample [1], 1 on thread TID2.
 */
static void build(struct buf *b, unsigned flags, struct layout *lay)
{
	struct perf_file_header h = {0};
	struct perf_event_attr attr = {0};
	u64 target = (u64)(uintptr_t)&test_target_fn + 2;
	u64 other = (u64)(uintptr_t)&test_other_fn + 2;
	u64 caller_ret = (u64)(uintptr_t)&test_caller_fn + 3; /* resolves at addr - 1 */
	u64 chain_t[] = {PERF_CONTEXT_USER, target, caller_ret};
	u64 chain_o[] = {PERF_CONTEXT_USER, other, caller_ret, caller_ret};
	u64 chain_k[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000000ULL, PERF_CONTEXT_USER, target};
	size_t nr_attrs = flags & F_TWO_ATTRS ? 2 : 1, i, feat_table;

	memset(b, 0, sizeof(*b));
	h.magic = PERF_FILE_MAGIC;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct perf_file_attr);
	put(b, &h, sizeof(h));
	/* ids */
	put64(b, ID_MAIN);
	put64(b, ID_TWO);
	/* attrs */
	lay->attr_off = b->len;
	for (i = 0; i < nr_attrs; i++) {
		struct perf_file_attr fa = {0};

		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = i ? PERF_COUNT_SW_PAGE_FAULTS : PERF_COUNT_SW_CPU_CLOCK;
		attr.size = PERF_FILE_ATTR_SIZE;
		attr.sample_period = 1000;
		attr.sample_type = AUTOPROF_SAMPLE_TYPE;
		attr.sample_id_all = 1;
		memcpy(fa.attr, &attr, sizeof(fa.attr));
		fa.ids = (struct perf_file_section){sizeof(h) + 8 * i, 8};
		put(b, &fa, sizeof(fa));
	}
	/* data */
	lay->data_off = b->len;
	put_comm(b, PID, PID, "synthetic", 0, 0);
	synth_mmap2(b, &self_map, PID, flags & F_LATE_MAP ? T0 + 5000 : 0, ID_MAIN);
	if (flags & F_FORK) {
		put_hdr(b, PERF_RECORD_FORK, 0, sizeof(struct perf_record_fork) + 32);
		put32(b, CHILD);
		put32(b, PID);
		put32(b, CHILD);
		put32(b, PID);
		put64(b, T0 + 50);
		synth_trailer(b, CHILD, CHILD, T0 + 50, ID_MAIN);
	}

	put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, PID, PID, T0 + 100, 3, chain_t, 3, 3);
	put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, PID, PID, T0 + 200, 3, chain_t, 3, 3);
	put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, PID, PID, T0 + 300, 1, chain_o, 4, 4);
	lay->third_sample_end = b->len;
	if (flags & F_SIZE4)
		put_hdr(b, PERF_RECORD_SAMPLE, 0, 4);
	put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, PID, PID, T0 + 400, 1, chain_o, 4, 4);
	put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, PID, TID2, T0 + 500, 1, chain_o, 4, 4);
	put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, flags & F_FORK ? CHILD : PID,
		   flags & F_FORK ? CHILD : PID, T0 + 600, 1, chain_o, 4, 4);
	if (flags & F_CHILD_EXEC) {
		put_comm(b, CHILD, CHILD, "child", PERF_RECORD_MISC_COMM_EXEC, T0 + 650);
		put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, CHILD, CHILD, T0 + 660, 1, chain_o, 4,
			   4);
	}
	put_sample(b, PERF_RECORD_MISC_KERNEL, ID_MAIN, PID, PID, T0 + 700, 1, chain_k, 4, 4);
	if (flags & F_HUGE_NR)
		put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, PID, PID, T0 + 800, 1, chain_t, 3,
			   1ULL << 60);
	if (flags & F_TWO_ATTRS)
		put_sample(b, PERF_RECORD_MISC_USER, 999, PID, PID, T0 + 800, 1, chain_t, 3, 3);
	if (flags & F_EXEC) {
		put_comm(b, PID, PID, "newprog", PERF_RECORD_MISC_COMM_EXEC, T0 + 900);
		put_sample(b, PERF_RECORD_MISC_USER, ID_MAIN, PID, PID, T0 + 1000, 1, chain_t, 3,
			   3);
	}
	if (flags & F_UNKNOWN) {
		put_hdr(b, 50, 0, 16);
		put64(b, 0);
	}
	synth_losses(b, ID_MAIN, 5, 2, PID, T0 + 750, T0 + 760);
	put_hdr(b, PERF_RECORD_FINISHED_ROUND, 0, 8);
	lay->data_size = b->len - lay->data_off;

	/* features: HOSTNAME, CMDLINE, EVENT_DESC */
	feat_table = b->len;
	for (i = 0; i < 3; i++)
		put(b, &(struct perf_file_section){0}, 16);
	set64(b, feat_table, b->len);
	put_string(b, "testhost");
	set64(b, feat_table + 8, b->len - (size_t)ld64(b->p + feat_table));
	set64(b, feat_table + 16, b->len);
	put32(b, 3);
	put_string(b, "prog");
	put_string(b, "a");
	put_string(b, "b");
	set64(b, feat_table + 24, b->len - (size_t)ld64(b->p + feat_table + 16));
	set64(b, feat_table + 32, b->len);
	put32(b, 1);
	put32(b, PERF_FILE_ATTR_SIZE);
	put(b, &attr, PERF_FILE_ATTR_SIZE);
	put32(b, 1);
	put_string(b, "my-event");
	put64(b, ID_MAIN);
	set64(b, feat_table + 40, b->len - (size_t)ld64(b->p + feat_table + 32));

	h.attrs =
	    (struct perf_file_section){lay->attr_off, nr_attrs * sizeof(struct perf_file_attr)};
	h.data = (struct perf_file_section){lay->data_off, lay->data_size};
	h.adds_features[0] = (1ULL << PERF_FEAT_HOSTNAME) | (1ULL << PERF_FEAT_CMDLINE) |
			     (1ULL << PERF_FEAT_EVENT_DESC);
	memcpy(b->p, &h, sizeof(h));
}

static char tmp_path[64];

static void write_file(const void *p, size_t len)
{
	FILE *f = fopen(tmp_path, "wb");

	if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0)
		abort();
}

/* Load @len bytes of @p as a file into a fresh session; processes it if it opened. */
static int load(struct session *s, const void *p, size_t len)
{
	int err;

	write_file(p, len);
	if (session__init(s))
		abort();
	err = session__add_file(s, tmp_path);
	if (!err)
		err = session__process(s);
	return err;
}

static const struct func_stat *stat_named(const struct session *s, const char *name)
{
	const struct hist *hi = &s->hists.v[0];
	size_t i;

	for (i = 0; i < s->hists.res.nr_funcs && i < hi->nr_stats; i++) {
		if (!strcmp(s->hists.res.funcs[i].name, name))
			return &hi->stats[i];
	}
	return NULL;
}

static bool warned(const struct session *s, const char *what)
{
	size_t i;

	for (i = 0; i < s->nr_warnings; i++) {
		if (strstr(s->warnings[i], what))
			return true;
	}
	return false;
}

static void test_valid(void)
{
	struct session s;
	struct layout lay;
	struct buf b;
	const struct func_stat *t, *o, *c;
	char *text = NULL;
	size_t text_len = 0;
	FILE *mem;
	int err;

	build(&b, 0, &lay);
	err = load(&s, b.p, b.len);
	ok(err == 0, "valid file reads (%d %s)", err, s.err);
	ok(s.nr_files == 1 && s.files[0].nr_attrs == 1, "one attr");
	ok(s.hists.nr == 1 && !strcmp(s.hists.v[0].event, "my-event"),
	   "event name from EVENT_DESC");
	ok(s.files[0].feat.hostname && !strcmp(s.files[0].feat.hostname, "testhost"), "HOSTNAME");
	ok(s.files[0].feat.cmdline && !strcmp(s.files[0].feat.cmdline, "prog a b"), "CMDLINE");
	ok(s.nr_samples == 7 && s.hists.v[0].total_period == 11,
	   "7 samples, period 11 (%llu, %llu)", (unsigned long long)s.nr_samples,
	   (unsigned long long)s.hists.v[0].total_period);
	t = stat_named(&s, "test_target_fn");
	o = stat_named(&s, "test_other_fn");
	c = stat_named(&s, "test_caller_fn");
	ok(t && t->self_period == 6 && t->self_samples == 2,
	   "test_target_fn self: 2 samples, period 6");
	ok(o && o->self_period == 4 && o->self_samples == 4,
	   "test_other_fn self: 4 samples, period 4");
	ok(s.hists.v[0].stats[FUNC_KERNEL].self_samples == 1, "kernel sample resolves to [kernel]");
	ok(c && c->self_samples == 0 && c->total_samples == 6 && c->total_period == 10,
	   "caller counted once per sample in children, recursion deduped");
	ok(t && t->total_samples == 3,
	   "children of test_target_fn include the kernel sample's user part");
	ok(s.nr_procs_seen == 1 && s.nr_threads_seen == 2, "1 process, 2 threads seen");
	ok(s.first_time == T0 + 100 && s.last_time == T0 + 700, "sample time range");
	ok(s.lost == 5 && s.lost_samples == 2 && s.lost_total == 5,
	   "LOST and LOST_SAMPLES read, the larger counted (perf 6.x writes both)");
	ok(s.nr_warnings == 0, "no warnings (%s)", s.nr_warnings ? s.warnings[0] : "");
	mem = open_memstream(&text, &text_len);
	output__print(&s, &(struct report_opts){.top = 20, .children = true}, mem);
	fclose(mem);
	ok(text && strstr(text, " 54.55%         2  test_target_fn") &&
	       strstr(text, "Host:       testhost"),
	   "report prints period-weighted percentages and the host");
	free(text);
	session__exit(&s);

	/* Two copies of the file merge. */
	write_file(b.p, b.len);
	session__init(&s);
	err = session__add_file(&s, tmp_path);
	err = err ? err : session__add_file(&s, tmp_path);
	err = err ? err : session__process(&s);
	ok(!err && s.nr_samples == 14 && s.hists.nr == 1, "two files merge into one report");
	session__exit(&s);
	free(b.p);
}

static void test_truncated(void)
{
	struct session s;
	struct layout lay;
	struct buf b;
	int err;

	build(&b, 0, &lay);
	/* Cut the file 20 bytes into the fourth sample. */
	err = load(&s, b.p, lay.third_sample_end + 20);
	ok(err == 0 && s.nr_samples == 3, "truncated file: the 3 whole samples are read (%llu)",
	   (unsigned long long)s.nr_samples);
	ok(warned(&s, "data size in header is") && warned(&s, "offset"),
	   "truncated file: warns about data size and where it stopped");
	session__exit(&s);

	set64(&b, offsetof(struct perf_file_header, data.size), 0);
	err = load(&s, b.p, b.len);
	ok(err == 0 && s.nr_samples == 7 && warned(&s, "data size in header is 0, using"),
	   "data.size 0: rest of the file is data, with a warning");
	session__exit(&s);
	free(b.p);
}

static void test_bad_headers(void)
{
	struct session s;
	struct layout lay;
	struct buf b;
	int err;

	build(&b, 0, &lay);
	b.p[0] = 'X';
	err = load(&s, b.p, b.len);
	ok(err < 0 && strstr(s.err, "bad magic"), "bad magic is an error (%s)", s.err);
	session__exit(&s);

	set64(&b, 0, PERF_FILE_MAGIC_SWAPPED);
	err = load(&s, b.p, b.len);
	ok(err < 0 && strstr(s.err, "foreign byte order is not supported"), "swapped magic (%s)",
	   s.err);
	session__exit(&s);
	set64(&b, 0, PERF_FILE_MAGIC);

	set64(&b, offsetof(struct perf_file_header, attrs.offset), b.len + 8);
	err = load(&s, b.p, b.len);
	ok(err < 0 && strstr(s.err, "attrs section"), "attrs past EOF (%s)", s.err);
	session__exit(&s);
	set64(&b, offsetof(struct perf_file_header, attrs.offset), lay.attr_off);

	set64(&b, lay.attr_off + PERF_FILE_ATTR_SIZE, b.len);
	set64(&b, lay.attr_off + PERF_FILE_ATTR_SIZE + 8, 16);
	err = load(&s, b.p, b.len);
	ok(err < 0 && strstr(s.err, "ids"), "ids past EOF (%s)", s.err);
	session__exit(&s);
	set64(&b, lay.attr_off + PERF_FILE_ATTR_SIZE, sizeof(struct perf_file_header));
	set64(&b, lay.attr_off + PERF_FILE_ATTR_SIZE + 8, 8);

	set64(&b, offsetof(struct perf_file_header, attr_size), 0);
	err = load(&s, b.p, b.len);
	ok(err < 0 && strstr(s.err, "attr size"), "attr_size 0 (%s)", s.err);
	session__exit(&s);
	set64(&b, offsetof(struct perf_file_header, attr_size), sizeof(struct perf_file_attr));

	set64(&b, offsetof(struct perf_file_header, data.offset), 64);
	err = load(&s, b.p, b.len);
	ok(err < 0 && strstr(s.err, "overlaps the header"), "data inside the header (%s)", s.err);
	session__exit(&s);

	err = load(&s, b.p, 50);
	ok(err < 0 && strstr(s.err, "truncated header"), "50-byte file (%s)", s.err);
	session__exit(&s);
	free(b.p);
}

static void test_bad_records(void)
{
	struct session s;
	struct layout lay;
	struct buf b;
	char where[64];
	int err;

	build(&b, F_SIZE4, &lay);
	err = load(&s, b.p, b.len);
	snprintf(where, sizeof(where), "offset %zu", lay.third_sample_end);
	ok(err == 0 && s.nr_samples == 3, "size-4 record: samples before it are read (%llu)",
	   (unsigned long long)s.nr_samples);
	ok(warned(&s, where), "size-4 record: the warning says %s", where);
	session__exit(&s);
	free(b.p);

	build(&b, F_HUGE_NR, &lay);
	err = load(&s, b.p, b.len);
	ok(err == 0 && s.nr_samples == 7 && s.bad_samples == 1,
	   "callchain nr 2^60: that sample is skipped, the others read");
	session__exit(&s);
	free(b.p);

	build(&b, F_TWO_ATTRS | F_UNKNOWN, &lay);
	err = load(&s, b.p, b.len);
	ok(err == 0 && s.nr_samples == 7 && s.unknown_id == 1 && s.files[0].nr_attrs == 2,
	   "two attrs: a sample with an unknown id is counted and skipped");
	ok(s.unknown_records == 1 && warned(&s, "unknown type (50)"), "unknown record type warned");
	session__exit(&s);
	free(b.p);
}

static void test_exec_fork(void)
{
	struct session s;
	struct layout lay;
	struct buf b;
	const struct func_stat *t, *o;
	int err;

	build(&b, F_EXEC, &lay);
	err = load(&s, b.p, b.len);
	t = stat_named(&s, "test_target_fn");
	ok(err == 0 && s.nr_samples == 8 && t && t->self_samples == 2 &&
	       s.hists.v[0].stats[FUNC_UNKNOWN].self_samples == 1,
	   "exec ends the old maps: a later sample is [unknown]");
	session__exit(&s);
	free(b.p);

	build(&b, F_FORK, &lay);
	err = load(&s, b.p, b.len);
	o = stat_named(&s, "test_other_fn");
	ok(err == 0 && o && o->self_samples == 4 && s.nr_procs_seen == 2,
	   "forked child resolves through its parent's maps");
	session__exit(&s);
	free(b.p);

	build(&b, F_FORK | F_CHILD_EXEC, &lay);
	err = load(&s, b.p, b.len);
	o = stat_named(&s, "test_other_fn");
	ok(err == 0 && o && o->self_samples == 4 &&
	       s.hists.v[0].stats[FUNC_UNKNOWN].self_samples == 1,
	   "forked child sees its parent's maps until it execs");
	session__exit(&s);
	free(b.p);

	build(&b, F_LATE_MAP, &lay);
	err = load(&s, b.p, b.len);
	t = stat_named(&s, "test_target_fn");
	ok(err == 0 && t && t->self_samples == 2,
	   "a map recorded after its samples still resolves");
	session__exit(&s);
	free(b.p);
}

static void test_kvmap_symtab(void)
{
	struct kvmap m = {0};
	struct sym syms[] = {{0x100, 0x110, "a"}, {0x200, 0x300, "b"}, {0x300, 0x400, "c"}};
	struct symtab t = {syms, 3, NULL};
	u64 i, v, bad = 0;

	for (i = 0; i < 20000; i++)
		kvmap__put(&m, i * 7919, i & 3, i);
	for (i = 0; i < 20000; i++)
		bad += !kvmap__get(&m, i * 7919, i & 3, &v) || v != i;
	ok(bad == 0 && m.nr == 20000 && !kvmap__get(&m, 1, 5, &v), "kvmap: 20000 keys");
	kvmap__exit(&m);
	ok(symbols__lookup(&t, 0x105) == &syms[0] && !symbols__lookup(&t, 0x150) &&
	       symbols__lookup(&t, 0x300) == &syms[2] && !symbols__lookup(&t, 0xff),
	   "symtab lookup honours sizes");
}

/*
 * A forked child sees its parent's maps as of the fork only, whatever the
 * parent looked up since (the lookup's one-entry cache must not leak a map
 * the parent made after the fork).
 */
static void test_fork_map_cache(void)
{
	struct machine m = {0};
	const struct map *before, *parent, *after;
	struct proc *child, *par;

	m.dsos.no_load = true;
	machine__mmap(&m, 100, 0x1000, 0x1000, 0, "/libA", 5, true, 0);
	machine__fork(&m, 200, 100, 200, 100, 10);
	machine__mmap(&m, 100, 0x5000, 0x1000, 0, "/libB", 5, true, 20);
	machine__finish(&m);
	child = machine__find_proc(&m, 200);
	par = machine__find_proc(&m, 100);
	before = machine__proc_find_map(child, 0x5100, 30, machine__proc_epoch(child, 30));
	parent = machine__proc_find_map(par, 0x5100, 30, machine__proc_epoch(par, 30));
	after = machine__proc_find_map(child, 0x5100, 30, machine__proc_epoch(child, 30));
	ok(!before && parent && !after,
	   "a child does not see a map its parent made after the fork, before or after the "
	   "parent's own lookup");
	ok(machine__proc_find_map(child, 0x1100, 30, machine__proc_epoch(child, 30)) != NULL,
	   "a child sees its parent's maps from before the fork");
	machine__exit(&m);
}

/*
 * Maps that lie over each other (an ELF file mapped whole, its segment over
 * it, a later map over part of that): the latest map valid at the time wins,
 * and machine__map_decides() says for how long a map is the answer at all its
 * addresses, so the lookup's shortcut and the resolver's frame cache never
 * keep a map that a later one covers.
 */
static void test_overlap_maps(void)
{
	struct machine m = {0};
	const struct map *whole, *seg, *late;
	struct proc *p;
	u32 e;

	m.dsos.no_load = true;
	machine__mmap(&m, 100, 0x1000, 0x5000, 0, "/whole", 6, true, 5);
	machine__mmap(&m, 100, 0x2000, 0x1000, 0x1000, "/seg", 4, true, 10);
	machine__mmap(&m, 100, 0x2800, 0x100, 0, "/late", 5, true, 50);
	machine__finish(&m);
	p = machine__find_proc(&m, 100);
	e = machine__proc_epoch(p, 20);
	whole = machine__proc_find_map(p, 0x1100, 20, e);
	seg = machine__proc_find_map(p, 0x2100, 20, e);
	ok(whole && seg && whole != seg && !strcmp(seg->dso->short_name, "seg") &&
	       machine__proc_find_map(p, 0x2850, 20, e) == seg,
	   "a segment mapped over a whole file is the map of its addresses");
	late = machine__proc_find_map(p, 0x2850, 60, e);
	ok(late && late != seg && machine__proc_find_map(p, 0x2100, 60, e) == seg,
	   "a later map over part of the segment wins there from its time on, even right "
	   "after a lookup in the segment");
	ok(machine__map_decides(seg, 20) && !machine__map_decides(seg, 50) &&
	       !machine__map_decides(seg, 5) && machine__map_decides(whole, 7) &&
	       !machine__map_decides(whole, 20) && machine__map_decides(late, 60),
	   "machine__map_decides: a map decides its addresses from its time until one lies over "
	   "it");
	machine__exit(&m);
}

int main(void)
{
	snprintf(tmp_path, sizeof(tmp_path), "/tmp/test-report-reader.%d.data", (int)getpid());
	plan(43);
	if (find_self_map() != 0) {
		diag("cannot find this binary's text mapping");
		return 1;
	}
	test_valid();
	test_truncated();
	test_bad_headers();
	test_bad_records();
	test_exec_fork();
	test_kvmap_symtab();
	test_fork_map_cache();
	test_overlap_maps();
	unlink(tmp_path);
	return tap_done();
}
