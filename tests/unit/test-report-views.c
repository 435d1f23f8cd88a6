// SPDX-License-Identifier: MIT
/*
 * test-report-views.c - the views and exports on a small synthetic file.
 *
 * The file: one cpu-clock attr and one task-clock counter, two threads
 * ("main" and "worker") of one process, MMAP2 of this binary's text, and
 * samples with call chains main_fn -> mid_fn -> leaf_a / leaf_b, plus STAT
 * records and a STAT_ROUND FINAL. Every view is rendered to memory and
 * checked for the numbers the file implies.
 */
#include "../../report/driver/session.h"
#include "../../report/view/view.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "synth.h"
#include "tap.h"

__attribute__((noinline, used)) int leaf_a(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline, used)) int leaf_b(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 2;
}

__attribute__((noinline, used)) int mid_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return leaf_a(x) + leaf_b(x);
}

__attribute__((noinline, used)) int main_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return mid_fn(x) * 2;
}

#define PID	 300
#define TID2	 301
#define ID_CLK	 7
#define ID_TASK	 8
#define T0	 5000000000ULL
#define ELAPSED	 2000000000ULL
#define TASK_CLK 1500000000ULL

static struct text_map self_map;

static int find_self_map(void)
{
	return find_text_map((u64)(uintptr_t)&leaf_a, &self_map);
}

/* A sample in @tid whose leaf is @leaf, called from mid_fn, main_fn. */
static void put_sample(struct buf *b, u32 tid, u64 time, u64 leaf)
{
	u64 chain[] = {PERF_CONTEXT_USER, leaf, (u64)(uintptr_t)&mid_fn + 3,
		       (u64)(uintptr_t)&main_fn + 3};

	synth_sample(b, PERF_RECORD_MISC_USER, ID_CLK, leaf, PID, tid, time, 1000, chain,
		     ARRAY_SIZE(chain), ARRAY_SIZE(chain));
}

static void put_comm(struct buf *b, u32 tid, const char *name)
{
	synth_comm(b, 0, PID, tid, name, 0, ID_CLK);
}

static void put_stat(struct buf *b, u64 id, u32 thread, u64 val)
{
	put_hdr(b, PERF_RECORD_STAT, 0, sizeof(struct perf_record_stat));
	put64(b, id);
	put32(b, 0);
	put32(b, thread);
	put64(b, val);
	put64(b, ELAPSED);
	put64(b, ELAPSED / 2); /* multiplexed: ran half the time */
}

/* 6 samples in main (4 leaf_a, 2 leaf_b), 4 in worker (leaf_b), 10 ms apart. */
static void build(struct buf *b)
{
	struct perf_file_header h = {0};
	u64 a = (u64)(uintptr_t)&leaf_a + 2, lb = (u64)(uintptr_t)&leaf_b + 2;
	size_t data_off, i;

	memset(b, 0, sizeof(*b));
	h.magic = PERF_FILE_MAGIC;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct perf_file_attr);
	put(b, &h, sizeof(h));
	put64(b, ID_CLK);
	put64(b, ID_TASK);
	for (i = 0; i < 2; i++) {
		struct perf_event_attr attr = {0};
		struct perf_file_attr fa = {0};

		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = i ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK;
		attr.size = PERF_FILE_ATTR_SIZE;
		attr.sample_period = 1000;
		attr.sample_type = i ? PERF_SAMPLE_IDENTIFIER : AUTOPROF_SAMPLE_TYPE;
		attr.sample_id_all = 1;
		memcpy(fa.attr, &attr, sizeof(fa.attr));
		fa.ids = (struct perf_file_section){sizeof(h) + 8 * i, 8};
		put(b, &fa, sizeof(fa));
	}
	data_off = b->len;
	put_comm(b, PID, "main");
	put_comm(b, TID2, "worker");
	synth_mmap2(b, &self_map, PID, 0, ID_CLK);
	for (i = 0; i < 10; i++)
		put_sample(b, i < 6 ? PID : TID2, T0 + i * 10000000ULL, i < 4 ? a : lb);
	put_stat(b, ID_TASK, 0, TASK_CLK / 2);
	put_stat(b, ID_TASK, 1, TASK_CLK / 4);
	put_stat(b, ID_TASK, 1, TASK_CLK / 2); /* replaces the value before */
	put_hdr(b, PERF_RECORD_STAT_ROUND, 0, sizeof(struct perf_record_stat_round));
	put64(b, PERF_STAT_ROUND_TYPE_FINAL);
	put64(b, ELAPSED);
	h.attrs = (struct perf_file_section){sizeof(h) + 16, 2 * sizeof(struct perf_file_attr)};
	h.data = (struct perf_file_section){data_off, b->len - data_off};
	memcpy(b->p, &h, sizeof(h));
}

static struct buf file;

static int load(struct session *s, const struct session_opts *so)
{
	if (session__init(s))
		abort();
	if (so)
		s->opts = *so;
	if (session__add_buffer(s, "views.data", file.p, file.len))
		return -1;
	return session__process(s);
}

/* Run @fn into a memory stream; returns the malloc'ed text. */
#define CAPTURE(text, call)                                                                        \
	do {                                                                                       \
		size_t _len;                                                                       \
		FILE *out = open_memstream(&(text), &_len);                                        \
		call;                                                                              \
		fclose(out);                                                                       \
	} while (0)

static struct report_opts opts(void)
{
	return (struct report_opts){.top = 20, .children = true, .min_pct = 0.5};
}

static void test_default(void)
{
	struct session s;
	struct report_opts o = opts();
	char *text = NULL;

	ok(load(&s, NULL) == 0 && s.nr_samples == 10, "10 samples read (%s)", s.err);
	CAPTURE(text, output__print(&s, &o, out));
	ok(strstr(text, " 40.00%         4  leaf_a") && strstr(text, " 60.00%         6  leaf_b"),
	   "self table: leaf_a 40%%, leaf_b 60%%");
	ok(strstr(text, "100.00%        10  main_fn") && strstr(text, "100.00%        10  mid_fn"),
	   "total table: callers count every sample");
	ok(strstr(text, "Event:      cpu-clock\n") && !strstr(text, "task-clock (0 samples)"),
	   "counter-only attrs are not listed as sampled events");
	/* 1500 ms counted in half the time: scaled to 3000 ms, as perf stat does. */
	ok(strstr(text, "3000.00 msec task-clock") && strstr(text, "1.500 CPUs utilized") &&
	       strstr(text, "(multiplexed: ran 50.00%)"),
	   "counters: last value per thread summed and scaled, CPUs utilized, multiplexing");
	ok(strstr(text, "2.000 s elapsed") && strstr(text, "Threads:    2"),
	   "header: elapsed from STAT_ROUND, two threads");
	free(text);

	o.sort = (struct sort_spec){{SK_THREAD}, 1};
	CAPTURE(text, output__print(&s, &o, out));
	ok(strstr(text, " 60.00%         6  main/300") &&
	       strstr(text, " 40.00%         4  worker/301") && !strstr(text, "by total"),
	   "--sort thread: comm/tid rows, no total table");
	free(text);
	o.sort = (struct sort_spec){{SK_PROCESS, SK_FUNC}, 2};
	CAPTURE(text, output__print(&s, &o, out));
	ok(strstr(text, "main/300") && strstr(text, "leaf_b") && strstr(text, "by total"),
	   "--sort process,function: comm/pid rows with functions");
	free(text);
	session__exit(&s);
}

static void test_views(void)
{
	struct session s;
	struct report_opts o = opts();
	char *text = NULL, *p;
	unsigned long long sum = 0, n;

	load(&s, NULL);
	CAPTURE(text, render_folded(&s, &o, out));
	for (p = text; (p = strchr(p, ' ')) && sscanf(p, " %llu", &n) == 1; p++)
		sum += n;
	ok(sum == 10 && strstr(text, "main_fn;mid_fn;leaf_a 4\n") &&
	       strstr(text, "main_fn;mid_fn;leaf_b 6\n"),
	   "folded: two stacks whose counts sum to the samples (%llu)", sum);
	free(text);

	CAPTURE(text, render_tree(&s, &o, out));
	ok(strstr(text, "100.00%  main_fn") && strstr(text, "  100.00%  mid_fn  (10)") &&
	       strstr(text, "    60.00%  leaf_b  (6)"),
	   "tree: callees of main_fn");
	free(text);
	o.callers = true;
	o.top = 20;
	CAPTURE(text, render_tree(&s, &o, out));
	p = text ? strstr(text, "40.00%  leaf_a") : NULL;
	ok(p && strstr(p, "  40.00%  mid_fn  (4)") && strstr(p, "    40.00%  main_fn  (4)"),
	   "tree --callers: leaf_a <- mid_fn <- main_fn");
	free(text);
	o.callers = false;
	o.min_pct = 50;
	CAPTURE(text, render_tree(&s, &o, out));
	ok(text && !strstr(text, "leaf_a") && strstr(text, "leaf_b"), "tree: --min-percent cuts");
	free(text);
	o.min_pct = 0.5;

	CAPTURE(text, render_flame(&s, &o, out));
	ok(text && strstr(text, "<svg") && strstr(text, "data-name=\"leaf_b\"") &&
	       strstr(text, "leaf_a [") && strstr(text, "(4 samples, 40.00%)") &&
	       strstr(text, "width=\"708.00\"") && strstr(text, "]]></script>"),
	   "flame graph: frames with titles and widths proportional to samples");
	free(text);

	CAPTURE(text, render_json(&s, &o, out));
	ok(text && strstr(text, "\"samples\": 10,") &&
	       strstr(text, "{\"function\": \"leaf_b\", \"object\": ") &&
	       strstr(text, "\"self_samples\": 6,") && strstr(text, "\"name\": \"task-clock\""),
	   "json: header, counters and rows");
	free(text);
	session__exit(&s);
}

static void test_filters_diff(void)
{
	struct session s, s2;
	struct session_opts so = {0};
	struct report_opts o = opts();
	char *text = NULL;

	so.filter.tids[0] = TID2;
	so.filter.nr_tids = 1;
	load(&s, &so);
	ok(s.nr_samples == 4 && s.filtered == 6, "--tid keeps the worker's 4 samples");
	session__exit(&s);
	so = (struct session_opts){0};
	so.filter.comms[0] = "main";
	so.filter.nr_comms = 1;
	load(&s, &so);
	ok(s.nr_samples == 6, "--comm main keeps 6 samples");
	session__exit(&s);
	so = (struct session_opts){0};
	so.filter.has_time = true;
	so.filter.time_from = 20000000;
	so.filter.time_to = 50000000;
	load(&s, &so);
	ok(s.nr_samples == 3, "--time 0.02,0.05 keeps 3 samples (%llu)",
	   (unsigned long long)s.nr_samples);
	session__exit(&s);
	so = (struct session_opts){0};
	so.filter.dsos[0] = "nothing.so";
	so.filter.nr_dsos = 1;
	load(&s, &so);
	ok(s.nr_samples == 0 && s.filtered == 10, "--dso of an unmapped library keeps nothing");
	session__exit(&s);

	load(&s, NULL);
	so = (struct session_opts){0};
	so.filter.tids[0] = TID2;
	so.filter.nr_tids = 1;
	load(&s2, &so);
	CAPTURE(text, render_diff(&s, &s, &o, out));
	ok(text && strstr(text, "No change"), "diff of a profile with itself: no change");
	free(text);
	CAPTURE(text, render_diff(&s, &s2, &o, out));
	ok(text && strstr(text, " 40.00%    0.00%  -40.00  leaf_a") &&
	       strstr(text, " 60.00%  100.00%  +40.00  leaf_b"),
	   "diff: leaf_a shrank and leaf_b grew by 40 points");
	free(text);
	session__exit(&s2);
	session__exit(&s);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void test_csv(void)
{
	struct session s;
	struct report_opts o = opts();
	char dir[64], path[128], err[256];
	struct csv_overview ov = {0};
	struct session_opts so = {0};
	int ret;

	snprintf(dir, sizeof(dir), "/tmp/test-report-views.%d", (int)getpid());
	render_csv__overview_attach(&so, &ov);
	load(&s, &so);
	ret = render_csv(&s, &o, dir, err, sizeof(err));
	ok(ret == 0, "csv: four files written (%s)", ret ? err : "");
	snprintf(path, sizeof(path), "%s/overview.csv", dir);
	ok(count_lines(path) == 1 + 17, "overview.csv: a header and 17 records (%d)",
	   count_lines(path));
	unlink(path);
	snprintf(path, sizeof(path), "%s/stat.csv", dir);
	ok(count_lines(path) == 1 + 5, "stat.csv: COMM, SAMPLE, MMAP2, STAT, STAT_ROUND");
	unlink(path);
	snprintf(path, sizeof(path), "%s/processes.csv", dir);
	ok(count_lines(path) == 2, "processes.csv: one process");
	unlink(path);
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	ok(count_lines(path) == 1 + 4, "results.csv: four functions");
	unlink(path);
	rmdir(dir);
	session__exit(&s);
	render_csv__overview_exit(&ov);
}

static void test_parsers(void)
{
	struct sort_spec ss;
	struct strset set = {0};
	u32 a = 0, b = 0, c = 1;

	ok(rows__parse_spec(&ss, "dso,sym,tid") == 0 && ss.nr == 3 && ss.k[0] == SK_DSO &&
	       ss.k[2] == SK_THREAD,
	   "sort keys and their aliases parse");
	ok(rows__parse_spec(&ss, "function,function") && rows__parse_spec(&ss, "nope") &&
	       rows__parse_spec(&ss, "") && rows__parse_spec(&ss, "pid,") &&
	       rows__parse_spec(&ss, "function,dso,tid,pid,comm"),
	   "bad sort lists are refused");
	strset__intern(&set, "abc", 3, &a);
	strset__intern(&set, "abcdef", 3, &b);
	strset__intern(&set, "", 0, &c);
	ok(a == b && a != 0 && c == 0 && !strcmp(strset__str(&set, a), "abc"),
	   "strset interns by content");
	strset__exit(&set);
}

int main(void)
{
	plan(28);
	if (find_self_map() != 0) {
		diag("cannot find this binary's text mapping");
		return 1;
	}
	build(&file);
	test_default();
	test_views();
	test_filters_diff();
	test_csv();
	test_parsers();
	free(file.p);
	return tap_done();
}
