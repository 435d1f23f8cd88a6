// SPDX-License-Identifier: MIT
/*
 * test-report-records.c - record types other perf builds write, on small
 * synthetic files: LOST and LOST_SAMPLES for the same losses (perf 6.x),
 * AUX data after an AUXTRACE record in file mode (Intel PT), a comm that
 * changes over time (an exec), and a file cut inside a record (the report
 * says how much of it was read).
 */
#include "../../report/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "synth.h"
#include "tap.h"

#define PID 300
#define ID  7
#define T0  1000000000ULL

static char tmp_path[64];

static void put_trailer(struct buf *b, u32 pid, u32 tid, u64 time)
{
	struct autoprof_sample_id t = {pid, tid, time, 0, 0, ID};

	put(b, &t, sizeof(t));
}

/* A sample at @ip with no callchain (IDENTIFIER IP TID TIME CPU PERIOD CALLCHAIN). */
static void put_sample(struct buf *b, u64 time)
{
	put_hdr(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 8 + 8 * 7);
	put64(b, ID);
	put64(b, 0x400000);
	put32(b, PID);
	put32(b, PID);
	put64(b, time);
	put64(b, 0);
	put64(b, 1);
	put64(b, 0);
}

static void put_comm(struct buf *b, const char *name, u16 misc, u64 time)
{
	char comm[16] = "";

	snprintf(comm, sizeof(comm), "%s", name);
	put_hdr(b, PERF_RECORD_COMM, misc, 8 + 8 + 16 + 32);
	put32(b, PID);
	put32(b, PID);
	put(b, comm, sizeof(comm));
	put_trailer(b, PID, PID, time);
}

/*
 * The file: "perf" samples twice, execs "echo", which samples twice; an
 * AUXTRACE record with 64 bytes of trace data between; 5 samples lost, told
 * by both a LOST and a LOST_SAMPLES record. @cut: bytes cut off the end.
 */
static void build(struct buf *b, size_t cut)
{
	struct perf_file_header h = {0};
	struct perf_event_attr attr = {0};
	struct perf_file_attr fa = {0};
	size_t data_off;

	memset(b, 0, sizeof(*b));
	h.magic = PERF_FILE_MAGIC;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct perf_file_attr);
	put(b, &h, sizeof(h));
	put64(b, ID);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = PERF_FILE_ATTR_SIZE;
	attr.sample_period = 1000;
	attr.sample_type = AUTOPROF_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	memcpy(fa.attr, &attr, sizeof(fa.attr));
	fa.ids = (struct perf_file_section){sizeof(h), 8};
	h.attrs = (struct perf_file_section){b->len, sizeof(fa)};
	put(b, &fa, sizeof(fa));
	data_off = b->len;
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
	put_hdr(b, PERF_RECORD_LOST, 0, 24 + 32);
	put64(b, ID);
	put64(b, 5);
	put_trailer(b, PID, PID, T0 + 60);
	put_hdr(b, PERF_RECORD_LOST_SAMPLES, 0, 16 + 32);
	put64(b, 5);
	put_trailer(b, PID, PID, T0 + 60);
	b->len -= cut;
	h.data = (struct perf_file_section){data_off, b->len - data_off};
	memcpy(b->p, &h, sizeof(h));
}

static int load(struct session *s, const struct buf *b)
{
	FILE *f = fopen(tmp_path, "wb");
	int err;

	if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0)
		abort();
	if (session__init(s))
		abort();
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

	build(&b, 0);
	err = load(&s, &b);
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

	build(&b, 20); /* into the LOST_SAMPLES record */
	err = load(&s, &b);
	ok(err == 0 && session__incomplete(&s) && s.read_bytes < s.data_bytes,
	   "a cut file reads in part and says so (%llu of %llu bytes)",
	   (unsigned long long)s.read_bytes, (unsigned long long)s.data_bytes);
	mem = open_memstream(&text, &len);
	report__print_header(&s, mem);
	fclose(mem);
	ok(text && strstr(text, "\nRead:       ") && strstr(text, "\nWarning:    "),
	   "the header says how much was read and why");
	free(text);
	session__exit(&s);
	free(b.p);
}

int main(void)
{
	snprintf(tmp_path, sizeof(tmp_path), "/tmp/test-report-records.%d.data", (int)getpid());
	plan(7);
	test_whole();
	test_cut();
	unlink(tmp_path);
	return tap_done();
}
