// SPDX-License-Identifier: MIT
/*
 * test-report-records.c - record types other perf builds write, on small
 * synthetic files: LOST and LOST_SAMPLES for the same losses (perf 6.x),
 * AUX data after an AUXTRACE record in file mode (Intel PT), a comm that
 * changes over time (an exec), and a file cut inside a record (the report
 * says how much of it was read).
 */
#include "../../report/driver/session.h"
#include "../../report/view/view.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "synth.h"
#include "tap.h"

#define PID 300
#define ID  7
#define T0  1000000000ULL

static char tmp_path[64];

/* A sample at @ip with no callchain. */
static void put_sample_at(struct buf *b, u16 misc, u64 ip, u64 time)
{
	synth_sample(b, misc, ID, ip, PID, PID, time, 1, NULL, 0, 0);
}

static void put_sample(struct buf *b, u64 time)
{
	put_sample_at(b, PERF_RECORD_MISC_USER, 0x400000, time);
}

/* A kernel MMAP of pid -1 (the kernel's text, a module), as perf synthesizes them. */
static void put_kmap(struct buf *b, u64 start, u64 len, const char *name)
{
	char path[64] = "";

	snprintf(path, sizeof(path), "%s", name);
	put_hdr(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 40 + 64 + 32);
	put32(b, UINT32_MAX);
	put32(b, 0);
	put64(b, start);
	put64(b, len);
	put64(b, 0);
	put(b, path, sizeof(path));
	synth_trailer(b, UINT32_MAX, 0, 0, ID);
}

static void put_comm(struct buf *b, const char *name, u16 misc, u64 time)
{
	synth_comm(b, misc, PID, PID, name, time, ID);
}

/*
 * The file: "perf" samples twice, execs "echo", which samples twice; an
 * AUXTRACE record with 64 bytes of trace data between; 5 samples lost, told
 * by both a LOST and a LOST_SAMPLES record. @cut: bytes cut off the end.
 */
static void build(struct buf *b, size_t cut, bool kernel)
{
	size_t data_off;

	data_off = synth_file_start(b, ID, 1000);
	if (kernel) {
		put_kmap(b, 0xffffffff81000000ULL, 0x1000000, "[kernel.kallsyms]_text");
		put_kmap(b, 0xffffffffc0000000ULL, 0x10000,
			 "/lib/modules/6.1/kernel/fs/ext4/ext4.ko");
		put_sample_at(b, PERF_RECORD_MISC_KERNEL, 0xffffffff81000100ULL, T0 + 1);
		put_sample_at(b, PERF_RECORD_MISC_KERNEL, 0xffffffffc0000100ULL, T0 + 2);
		put_sample_at(b, PERF_RECORD_MISC_KERNEL, 0xffff888000001000ULL, T0 + 3);
	}
	put_comm(b, "perf", 0, T0);
	put_sample(b, T0 + 10);
	put_sample(b, T0 + 20);
	/* AUXTRACE: size, offset, reference, idx, tid, cpu, reserved; then the data */
	put_hdr(b, PERF_RECORD_AUXTRACE, 0, sizeof(struct perf_record_auxtrace));
	put64(b, 64);
	put64(b, 0);
	put64(b, 0);
	put32(b, 0);
	put32(b, PID);
	put32(b, 0);
	put32(b, 0);
	for (int i = 0; i < 8; i++)
		put64(b, 0xffffffffffffffffULL); /* read as a record: size 65535, past the end */
	put_comm(b, "echo", PERF_RECORD_MISC_COMM_EXEC, T0 + 30);
	put_sample(b, T0 + 40);
	put_sample(b, T0 + 50);
	synth_losses(b, ID, 5, 5, PID, T0 + 60, T0 + 60);
	b->len -= cut;
	synth_file_end(b, data_off);
}

static int load(struct session *s, const struct buf *b, bool no_load)
{
	FILE *f = fopen(tmp_path, "wb");
	int err;

	if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0)
		abort();
	if (session__init(s))
		abort();
	s->opts.no_load = no_load; /* never /proc/kallsyms: the recording kernel is not this one */
	err = session__add_file(s, tmp_path);
	if (!err)
		err = session__process(s);
	return err;
}

/* The samples the tasks named @comm at their time have. */
static u64 samples_named(const struct session *s, const char *comm)
{
	u64 n = 0;

	for (size_t i = 0; i < s->hists.stacks.nr_tasks; i++) {
		const struct task *t = &s->hists.stacks.tasks[i];

		if (!strcmp(machine__task_comm(&s->machine, t->pid, t->tid, t->comm), comm))
			n += t->samples;
	}
	return n;
}

static void test_whole(void)
{
	struct session s;
	struct buf b;
	int err;

	build(&b, 0, false);
	err = load(&s, &b, false);
	ok(err == 0, "the file reads (%d %s)", err, s.err);
	ok(s.nr_samples == 4, "the AUX data after AUXTRACE is skipped: 4 samples (%llu)",
	   (unsigned long long)s.nr_samples);
	ok(s.lost_total == 5, "LOST and LOST_SAMPLES for the same losses: 5 lost, not 10 (%llu)",
	   (unsigned long long)s.lost_total);
	ok(s.read_bytes == s.data_bytes && s.nr_warnings == 1 &&
	       strstr(s.warnings[0], "1 AUXTRACE records (64 bytes"),
	   "every record read; the undecoded AUX data said (%s)",
	   s.nr_warnings ? s.warnings[0] : "");
	ok(samples_named(&s, "perf") == 2 && samples_named(&s, "echo") == 2,
	   "the comm at each sample's time: perf 2, echo 2 (%llu, %llu)",
	   (unsigned long long)samples_named(&s, "perf"),
	   (unsigned long long)samples_named(&s, "echo"));
	session__exit(&s);
	free(b.p);
}

static void test_cut(void)
{
	struct session s;
	struct buf b;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int err;

	build(&b, 20, false); /* into the LOST_SAMPLES record */
	err = load(&s, &b, false);
	ok(err == 0 && session__incomplete(&s) && s.read_bytes < s.data_bytes,
	   "a cut file reads in part and says so (%llu of %llu bytes)",
	   (unsigned long long)s.read_bytes, (unsigned long long)s.data_bytes);
	mem = open_memstream(&text, &len);
	output__print_header(&s, mem);
	fclose(mem);
	ok(text && strstr(text, "\nRead:       ") && strstr(text, "\nWarning:    "),
	   "the header says how much was read and why");
	free(text);
	session__exit(&s);
	free(b.p);
}

/* The self samples of the function whose object is @object. */
static u64 self_in(const struct session *s, const char *object)
{
	const struct hist *hi = &s->hists.v[0];
	u64 n = 0;

	for (size_t i = 0; i < s->hists.res.nr_funcs && i < hi->nr_stats; i++) {
		if (!strcmp(s->hists.res.funcs[i].object, object))
			n += hi->stats[i].self_samples;
	}
	return n;
}

static void test_kernel(void)
{
	struct session s;
	struct buf b;
	int err;

	build(&b, 0, true);
	err = load(&s, &b, true);
	ok(err == 0 && s.nr_samples == 7, "kernel maps read (%d %s, %llu samples)", err, s.err,
	   (unsigned long long)s.nr_samples);
	ok(self_in(&s, "[ext4]") == 1, "a module's sample is in [ext4], as perf names it (%llu)",
	   (unsigned long long)self_in(&s, "[ext4]"));
	ok(s.hists.v[0].stats[FUNC_KERNEL].self_samples == 1 &&
	       s.hists.v[0].stats[FUNC_UNKNOWN].self_samples ==
		   5, /* and the 4 unmapped user ones */
	   "the kernel's text in [kernel], an address below it [unknown] (%llu, %llu)",
	   (unsigned long long)s.hists.v[0].stats[FUNC_KERNEL].self_samples,
	   (unsigned long long)s.hists.v[0].stats[FUNC_UNKNOWN].self_samples);
	session__exit(&s);
	free(b.p);
}

int main(void)
{
	snprintf(tmp_path, sizeof(tmp_path), "/tmp/test-report-records.%d.data", (int)getpid());
	plan(10);
	test_whole();
	test_cut();
	test_kernel();
	unlink(tmp_path);
	return tap_done();
}
