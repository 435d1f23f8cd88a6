// SPDX-License-Identifier: MIT
/*
 * test-report-built.c - the records the library's builders lay out
 * (record__sample, record__comm, record__mmap2, record__kernel_mmap,
 * record__lost, record__throttle: preload/handler/record.c, linked here as
 * the launcher links it) read back by the reader: record by record with its
 * parser (perf_file__open_mem, perf_file__next_record, sample__parse,
 * sample__record_ids, REC), then as a whole report (session__process), in a
 * perf.data laid out in memory around them.
 */
#include "../../report/driver/session.h"
#include "../../report/view/view.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../preload/handler/handler.h"
#include "synth.h"
#include "tap.h"

#define PID 4242
#define T0  2000000000ULL
#define KIP 0xffffffff81000100ULL

static char tmp_path[64];
static struct text_map text;

__attribute__((noinline)) void built_target_fn(void)
{
	asm volatile("nop; nop; nop; nop; nop; nop; nop; nop" ::: "memory");
}

__attribute__((noinline)) void built_caller_fn(void)
{
	built_target_fn();
	asm volatile("" ::: "memory");
}

/* What went into the file, to compare with what comes out. */
struct sent {
	uint32_t type, pid, tid;
	uint64_t time, ip, period, chain[8];
	unsigned nr;
	size_t body; /* non-sample records: bytes before the trailer */
};
static struct sent sent[16];
static int nr_sent;

static void add(struct buf *b, const void *rec, size_t n, struct sent s)
{
	if (!n)
		abort(); /* a builder refused: the test's own room is too small */
	put(b, rec, n);
	sent[nr_sent++] = s;
}

static void add_sample(struct buf *b, bool kernel, uint32_t tid, uint64_t time,
		       const uint64_t *chain, unsigned nr)
{
	uint8_t rec[256];
	struct sent s = {.type = PERF_RECORD_SAMPLE,
			 .pid = PID,
			 .tid = tid,
			 .time = time,
			 .ip = kernel ? KIP : chain[1],
			 .period = 10,
			 .nr = nr};

	memcpy(s.chain, chain, nr * 8);
	add(b, rec,
	    record__sample(rec, sizeof(rec), kernel, s.ip, PID, tid, time, 1, 10, chain, nr), s);
}

static void build(struct buf *b)
{
	uint64_t ip = (uint64_t)(uintptr_t)built_target_fn + 1,
		 caller = (uint64_t)(uintptr_t)built_caller_fn + 4;
	uint64_t user[3] = {PERF_CONTEXT_USER, ip, caller};
	uint64_t kern[5] = {PERF_CONTEXT_KERNEL, KIP, PERF_CONTEXT_USER, ip, caller};
	uint8_t rec[8192];
	size_t data_off;

	nr_sent = 0;
	data_off = synth_file_start(b, AP_SAMPLE_ID, 10);

	add(b, rec, record__kernel_mmap(rec, sizeof(rec), 0xffffffff81000000ULL, 0x1000000),
	    (struct sent){.type = PERF_RECORD_MMAP, .pid = UINT32_MAX, .tid = 0, .body = 40 + 24});
	add(b, rec, record__comm(rec, sizeof(rec), PID, PID, "builtprog", T0, false),
	    (struct sent){
		.type = PERF_RECORD_COMM, .pid = PID, .tid = PID, .time = T0, .body = 16 + 16});
	add(b, rec,
	    record__mmap2(rec, sizeof(rec), PID, text.start, text.end - text.start, text.pgoff, 0,
			  0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, text.path, T0, NULL, 0),
	    (struct sent){.type = PERF_RECORD_MMAP2,
			  .pid = PID,
			  .tid = PID,
			  .time = T0,
			  .body = 72 + PERF_ALIGN8(strlen(text.path) + 1)});
	add(b, rec, record__comm(rec, sizeof(rec), PID, PID + 1, "worker", T0 + 1, false),
	    (struct sent){.type = PERF_RECORD_COMM,
			  .pid = PID,
			  .tid = PID + 1,
			  .time = T0 + 1,
			  .body = 16 + 8});
	add_sample(b, false, PID, T0 + 10, user, 3);
	add_sample(b, false, PID, T0 + 20, user, 3);
	add_sample(b, false, PID + 1, T0 + 30, user, 3);
	add_sample(b, true, PID, T0 + 40, kern, 5);
	add(b, rec, record__lost(rec, sizeof(rec), PID, PID, T0 + 50, 4),
	    (struct sent){
		.type = PERF_RECORD_LOST, .pid = PID, .tid = PID, .time = T0 + 50, .body = 24});
	add(b, rec, record__throttle(rec, sizeof(rec), PERF_RECORD_THROTTLE, PID, PID, T0 + 60),
	    (struct sent){
		.type = PERF_RECORD_THROTTLE, .pid = PID, .tid = PID, .time = T0 + 60, .body = 32});
	add(b, rec, record__throttle(rec, sizeof(rec), PERF_RECORD_UNTHROTTLE, PID, PID, T0 + 70),
	    (struct sent){.type = PERF_RECORD_UNTHROTTLE,
			  .pid = PID,
			  .tid = PID,
			  .time = T0 + 70,
			  .body = 32});
	synth_file_end(b, data_off);
}

/* Each record through the reader's parser, against what was sent. */
static void test_records(const struct buf *b)
{
	struct perf_file pf;
	struct record r;
	uint64_t pos;
	int i = 0, got, samples_ok = 0, ids_ok = 0, bodies_ok = 0, types_ok = 0;
	bool comm_ok = false, mmap2_ok = false, kmap_ok = false, lost_ok = false;

	got = perf_file__open_mem(&pf, "built", b->p, b->len);
	ok(got == 0, "the reader opens the file (%s)", got ? perf_file__error(&pf) : "");
	pos = pf.data_off;
	while ((got = perf_file__next_record(&pf, &pos, &r)) == 1 && i < nr_sent) {
		const struct sent *s = &sent[i++];
		struct sample smp, id;
		size_t body_end = 0;

		types_ok += r.h.type == s->type;
		if (r.h.type == PERF_RECORD_SAMPLE) {
			samples_ok +=
			    sample__parse(&pf, &r, &smp) == 0 && smp.ip == s->ip &&
			    smp.pid == s->pid && smp.tid == s->tid && smp.time == s->time &&
			    smp.cpu == 1 && smp.period == s->period && smp.id == AP_SAMPLE_ID &&
			    smp.nr_chain == s->nr && !memcmp(smp.chain, s->chain, s->nr * 8) &&
			    smp.misc ==
				(s->ip == KIP ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
			continue;
		}
		memset(&id, 0, sizeof(id));
		if (sample__record_ids(&pf, &r, &id, &body_end))
			ids_ok += id.pid == s->pid && id.tid == s->tid && id.time == s->time &&
				  id.id == AP_SAMPLE_ID;
		bodies_ok += body_end == s->body;
		if (r.h.type == PERF_RECORD_COMM && s->tid == PID) {
			struct perf_record_comm c = REC(struct perf_record_comm, &r);

			comm_ok = c.pid == PID && c.tid == PID &&
				  !strcmp((const char *)r.p + sizeof(c), "builtprog");
		} else if (r.h.type == PERF_RECORD_MMAP2) {
			struct perf_record_mmap2 m = REC(struct perf_record_mmap2, &r);

			mmap2_ok = !sample__mmap2_old_layout(&r) && m.start == text.start &&
				   m.len == text.end - text.start && m.pgoff == text.pgoff &&
				   m.prot == (PROT_READ | PROT_EXEC) &&
				   !strcmp((const char *)r.p + sizeof(m), text.path);
		} else if (r.h.type == PERF_RECORD_MMAP) {
			struct perf_record_mmap m = REC(struct perf_record_mmap, &r);

			kmap_ok = m.pid == UINT32_MAX && m.start == 0xffffffff81000000ULL &&
				  !strcmp((const char *)r.p + sizeof(m), "[kernel.kallsyms]_text");
		} else if (r.h.type == PERF_RECORD_LOST) {
			lost_ok = REC(struct perf_record_lost, &r).lost == 4;
		}
	}
	ok(got == 0 && i == nr_sent && pos == pf.data_end && types_ok == nr_sent,
	   "every record read in turn, and they tile the data section (%d of %d)", i, nr_sent);
	ok(samples_ok == 4,
	   "SAMPLE: ip, pid/tid, time, cpu, period, id, misc and chain as built (%d "
	   "of 4)",
	   samples_ok);
	ok(ids_ok == nr_sent - 4 && bodies_ok == nr_sent - 4,
	   "every other record's sample_id_all trailer: pid, tid, time, id, where the body ends "
	   "(%d, "
	   "%d of %d)",
	   ids_ok, bodies_ok, nr_sent - 4);
	ok(comm_ok && mmap2_ok && kmap_ok && lost_ok,
	   "COMM, MMAP2 (current layout), the kernel MMAP and LOST decode to what was built");
	perf_file__close(&pf);
}

static const struct func_stat *stat_named(const struct session *s, const char *name)
{
	const struct hist *hi = &s->hists.v[0];

	for (size_t i = 0; i < s->hists.res.nr_funcs && i < hi->nr_stats; i++)
		if (!strcmp(s->hists.res.funcs[i].name, name))
			return &hi->stats[i];
	return NULL;
}

/* Self samples in the kernel: named from /proc/kallsyms where it is readable, else [kernel]. */
static uint64_t kernel_self(const struct session *s)
{
	const struct hist *hi = &s->hists.v[0];
	uint64_t n = 0;

	for (size_t i = 0; i < s->hists.res.nr_funcs && i < hi->nr_stats; i++)
		if (i == FUNC_KERNEL || !strncmp(s->hists.res.funcs[i].object, "[kernel", 7))
			n += hi->stats[i].self_samples;
	return n;
}

/* The whole file as autoprof-report reads it. */
static void test_session(const struct buf *b)
{
	struct session s;
	const struct func_stat *t, *c;
	FILE *f = fopen(tmp_path, "wb");
	int err;

	if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0)
		abort();
	if (session__init(&s))
		abort();
	err = session__add_file(&s, tmp_path);
	if (!err)
		err = session__process(&s);
	ok(err == 0 && s.nr_warnings == 0 && s.bad_samples == 0 && s.bad_records == 0 &&
	       s.unknown_records == 0,
	   "the report reads it without a warning (%d %s%s)", err, s.err,
	   s.nr_warnings ? s.warnings[0] : "");
	ok(s.nr_samples == 4 && s.lost_total == 4 && s.throttle == 1 && s.unthrottle == 1 &&
	       s.first_time == T0 + 10 && s.last_time == T0 + 40,
	   "4 samples, 4 lost, a throttle and an unthrottle, the time range");
	t = stat_named(&s, "built_target_fn");
	c = stat_named(&s, "built_caller_fn");
	ok(t && t->self_samples == 3 && c && c->total_samples == 4 && kernel_self(&s) == 1,
	   "the MMAP2 maps the samples to this binary's functions; the kernel sample to [kernel] "
	   "(%llu, %llu, %llu)",
	   (unsigned long long)(t ? t->self_samples : 0),
	   (unsigned long long)(c ? c->total_samples : 0), (unsigned long long)kernel_self(&s));
	ok(s.nr_procs_seen == 1 && s.nr_threads_seen == 2, "1 process, 2 threads (the COMMs)");
	session__exit(&s);
}

int main(void)
{
	struct buf b;
	int fd;

	plan(9);
	snprintf(tmp_path, sizeof(tmp_path), "/tmp/autoprof-built.XXXXXX");
	fd = mkstemp(tmp_path);
	if (fd < 0 || find_text_map((uint64_t)(uintptr_t)built_target_fn, &text) != 0)
		return 1;
	close(fd);
	build(&b);
	test_records(&b);
	test_session(&b);
	unlink(tmp_path);
	free(b.p);
	return tap_done();
}
