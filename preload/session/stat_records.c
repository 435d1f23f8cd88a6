/* SPDX-License-Identifier: MIT */
/*
 * stat_records.c - the counter totals: in a sibling file FILE.stat laid out
 * as `perf stat record` writes one (so `perf stat report -i FILE.stat` prints
 * them, autoprof-report finds them beside FILE, and perf script, hotspot and
 * the Firefox Profiler see in FILE only what a perf record file holds), and
 * perf-stat style on stderr when AUTOPROF_STAT=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "handler/whole_file.h"
#include "internal.h"

/* perf's enum aggr_mode value for one total over everything (AGGR_GLOBAL). */
#define AGGR_GLOBAL 1

#define THREAD_MAP_BYTES 40 /* header, u64 nr = 1, {u64 pid; char comm[16]} */
#define CPU_MAP_BYTES	 16 /* header, u16 type = CPUS, u16 nr = 1, u16 cpu = -1, pad */

#define STAT_SUFFIX   ".stat"
#define STAT_FILE_CAP 32768 /* header, attrs, ids, records, features */
#define CMDLINE_CAP   4096  /* the command line kept in the CMDLINE feature */

/* The file under construction: a fixed buffer (this may run in a signal handler). */
struct sbuf {
	char *p;
	size_t len, cap;
	bool full;
};

/* Append n bytes (zeroes when data is NULL). Async-signal-safe. */
static void *sb_put(struct sbuf *b, const void *data, size_t n)
{
	char *at = b->p + b->len;

	if (b->full || n > b->cap - b->len) {
		b->full = true;
		return NULL;
	}
	if (data)
		memcpy(at, data, n);
	else
		memset(at, 0, n);
	b->len += n;
	return at;
}

/* perf's string: u32 length rounded up to 64, then the zero-padded bytes. Async-signal-safe. */
static void sb_string(struct sbuf *b, const char *s, size_t n)
{
	uint32_t len =
	    (uint32_t)((n + 1 + PERF_FILE_NAME_ALIGN - 1) & ~(size_t)(PERF_FILE_NAME_ALIGN - 1));
	char *p;

	sb_put(b, &len, 4);
	p = sb_put(b, NULL, len);
	if (p)
		memcpy(p, s, n);
}

/* FILE.stat beside the writer's file; false when the name does not fit. Async-signal-safe. */
static bool stat_path(const struct writer *w, char *out, size_t cap)
{
	size_t n = strlen(w->path);

	if (!n || n + sizeof(STAT_SUFFIX) > cap)
		return false;
	memcpy(out, w->path, n);
	memcpy(out + n, STAT_SUFFIX, sizeof(STAT_SUFFIX));
	return true;
}

/* Remove FILE.stat (a stale one before a new run, or one of an empty image). Async-signal-safe. */
void stat_records__remove(const struct writer *w)
{
	char path[PATH_MAX];
	int saved = errno;

	if (stat_path(w, path, sizeof(path)))
		raw_syscall(SYS_unlinkat, AT_FDCWD, path, 0);
	errno = saved;
}

/*
 * THREAD_MAP and CPU_MAP records: the counters are per task (this process
 * and what it inherits to) on any CPU, which perf encodes as one thread and
 * the CPU "-1". perf stat report needs them to place the STAT records.
 * Async-signal-safe.
 */
static void put_maps(struct sbuf *b)
{
	struct perf_event_header h = {PERF_RECORD_THREAD_MAP, 0, THREAD_MAP_BYTES};
	uint64_t nr = 1, pid = (uint64_t)autoprof.pid;
	uint16_t cpus[4] = {0 /* PERF_CPU_MAP__CPUS */, 1, UINT16_MAX, 0};
	char comm[16] = "";

	prctl(PR_GET_NAME, comm);
	sb_put(b, &h, sizeof(h));
	sb_put(b, &nr, 8);
	sb_put(b, &pid, 8);
	sb_put(b, comm, 16);
	h = (struct perf_event_header){PERF_RECORD_CPU_MAP, 0, CPU_MAP_BYTES};
	sb_put(b, &h, sizeof(h));
	sb_put(b, cpus, sizeof(cpus));
}

/*
 * An attr as perf stat record writes it: the event, read_format with the
 * enabled/running times, sample_type IDENTIFIER (the same layout for every
 * attr of the file), laid out at dst, which need not be aligned (EVENT_DESC
 * puts its attrs after 4-byte fields). Async-signal-safe.
 */
static void stat_attr(void *dst, const struct perf_event_attr *src)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	memcpy(&a, src, PERF_FILE_ATTR_SIZE);
	a.size = PERF_FILE_ATTR_SIZE;
	a.sample_type = PERF_SAMPLE_IDENTIFIER;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.sample_id_all = 0;
	memcpy(dst, &a, PERF_FILE_ATTR_SIZE);
}

/* One event of the stat file: its attr, id, name and totals. */
struct stat_event {
	const struct perf_event_attr *attr;
	const char *name;
	uint64_t id, val, ena, run;
};

/* STAT_CONFIG, one STAT per event, the final STAT_ROUND. Async-signal-safe. */
static void put_stats(struct sbuf *b, const struct stat_event *ev, int n, uint64_t elapsed)
{
	struct perf_record_stat_config cfg = {
	    .header = {PERF_RECORD_STAT_CONFIG, 0, sizeof(cfg) + 3 * sizeof(cfg.data[0])}, .nr = 3};
	struct perf_record_stat_config_entry terms[3] = {
	    {PERF_STAT_CONFIG_TERM_AGGR_MODE, AGGR_GLOBAL},
	    {PERF_STAT_CONFIG_TERM_INTERVAL, 0},
	    {PERF_STAT_CONFIG_TERM_SCALE, 1}};
	struct perf_record_stat_round round = {.header = {PERF_RECORD_STAT_ROUND, 0, sizeof(round)},
					       .type = PERF_STAT_ROUND_TYPE_FINAL,
					       .time = elapsed};

	sb_put(b, &cfg, sizeof(cfg));
	sb_put(b, terms, sizeof(terms));
	for (int i = 0; i < n; i++) {
		struct perf_record_stat st = {.header = {PERF_RECORD_STAT, 0, sizeof(st)},
					      .id = ev[i].id,
					      .cpu = UINT32_MAX, /* any CPU: a per-task counter */
					      .val = ev[i].val,
					      .ena = ev[i].ena,
					      .run = ev[i].run};

		sb_put(b, &st, sizeof(st));
	}
	sb_put(b, &round, sizeof(round));
}

/*
 * The CMDLINE feature: "autoprof" and the program's arguments (perf writes
 * its own command line there; readers such as hotspot drop the first word).
 * Async-signal-safe.
 */
static void put_cmdline(struct sbuf *b)
{
	static char cmd[CMDLINE_CAP] AP_LARGE_BSS;
	uint32_t n = 1;
	ssize_t len = 0, r;
	int fd = (int)raw_syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	while (fd >= 0 && len < (ssize_t)sizeof(cmd) - 1 &&
	       (r = raw_syscall(SYS_read, fd, cmd + len, sizeof(cmd) - 1 - (size_t)len)) > 0)
		len += r;
	if (fd >= 0)
		raw_syscall(SYS_close, fd);
	if (len > 0 && cmd[len - 1])
		cmd[len++] = 0; /* cut short: end the last argument */
	for (ssize_t i = 0; i < len; i++)
		n += cmd[i] == 0;
	sb_put(b, &n, 4);
	sb_string(b, "autoprof", 8);
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(cmd + i) + 1)
		sb_string(b, cmd + i, strlen(cmd + i));
}

/* The EVENT_DESC feature: each attr with its name and id. Async-signal-safe. */
static void put_event_desc(struct sbuf *b, const struct stat_event *ev, int n)
{
	uint32_t nr = (uint32_t)n, size = PERF_FILE_ATTR_SIZE, one = 1;

	sb_put(b, &nr, 4);
	sb_put(b, &size, 4);
	for (int i = 0; i < n; i++) {
		void *a = sb_put(b, NULL, PERF_FILE_ATTR_SIZE);

		if (a)
			stat_attr(a, ev[i].attr);
		sb_put(b, &one, 4);
		sb_string(b, ev[i].name, strlen(ev[i].name));
		sb_put(b, &ev[i].id, 8);
	}
}

static const int stat_features[] = {PERF_FEAT_HOSTNAME, PERF_FEAT_OSRELEASE,  PERF_FEAT_ARCH,
				    PERF_FEAT_CMDLINE,	PERF_FEAT_EVENT_DESC, PERF_FEAT_STAT};
#define NR_STAT_FEATURES (int)(sizeof(stat_features) / sizeof(stat_features[0]))

/* The feature sections after the data: table, then bodies. Async-signal-safe. */
static void put_features(struct sbuf *b, struct perf_file_header *h, const struct stat_event *ev,
			 int n)
{
	size_t table = b->len;
	struct utsname uts;

	memset(&uts, 0, sizeof(uts));
	raw_syscall(SYS_uname, &uts);
	sb_put(b, NULL, NR_STAT_FEATURES * sizeof(struct perf_file_section));
	for (int i = 0; i < NR_STAT_FEATURES; i++) {
		struct perf_file_section s = {.offset = b->len};
		int f = stat_features[i];

		if (f == PERF_FEAT_HOSTNAME)
			sb_string(b, uts.nodename, strlen(uts.nodename));
		else if (f == PERF_FEAT_OSRELEASE)
			sb_string(b, uts.release, strlen(uts.release));
		else if (f == PERF_FEAT_ARCH)
			sb_string(b, uts.machine, strlen(uts.machine));
		else if (f == PERF_FEAT_CMDLINE)
			put_cmdline(b);
		else if (f == PERF_FEAT_EVENT_DESC)
			put_event_desc(b, ev, n);
		/* PERF_FEAT_STAT: no body, its bit says "perf stat record data" */
		s.size = b->len - s.offset;
		if (!b->full)
			memcpy(b->p + table + (size_t)i * sizeof(s), &s, sizeof(s));
		h->adds_features[f / 64] |= 1ULL << (f % 64);
	}
}

/*
 * Write len bytes at buf as the file path, replacing one there: made unnamed
 * and linked when whole (whole_file.h), or (!unnamed) by its name. 0 or
 * -errno. Async-signal-safe; one caller at a time (stat_records__write's).
 */
static int put_whole(const char *path, const char *buf, size_t len, bool unnamed)
{
	static char dir[PATH_MAX] AP_LARGE_BSS;
	int fd, err = 0;

	fd = unnamed
		 ? whole_file__open(path, dir)
		 : (int)raw_syscall(SYS_openat, AT_FDCWD, path,
				    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return unnamed ? fd : -errno;
	for (size_t done = 0; done < len;) {
		ssize_t r = raw_syscall(SYS_write, fd, buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)r;
	}
	if (!err && unnamed) {
		err = whole_file__link(fd, path);
		if (err == -EEXIST) { /* an earlier image's totals: replaced */
			raw_syscall(SYS_unlinkat, AT_FDCWD, path, 0);
			err = whole_file__link(fd, path);
		}
	}
	raw_syscall(SYS_close, fd);
	if (err && !unnamed)
		raw_syscall(SYS_unlinkat, AT_FDCWD, path, 0);
	return err;
}

/*
 * Write FILE.stat: every counter read, with perf stat record's records
 * (THREAD_MAP, CPU_MAP, STAT_CONFIG, STAT, STAT_ROUND) and features. The
 * sampling event is not among them: its samples are in FILE, and a process
 * tree's samples are spread over its files. Nothing when there are no
 * counters (a forked child: its totals belong to the process that opened
 * the inherited counters); a stale FILE.stat is removed then. Returns 0 or
 * -errno. Async-signal-safe (the emergency path of a deadly signal writes
 * the totals this way): one caller at a time, the one that ended the session.
 */
int stat_records__write(struct writer *w, const struct ap_counters *cs, int first_id,
			uint64_t elapsed)
{
	static char file[STAT_FILE_CAP] AP_LARGE_BSS;
	static struct stat_event ev[AP_MAX_COUNTERS];
	struct sbuf b = {file, 0, sizeof(file), false};
	struct perf_file_header h = {.magic = PERF_FILE_MAGIC,
				     .size = sizeof(h),
				     .attr_size = sizeof(struct perf_file_attr)};
	char path[PATH_MAX];
	int n = 0, saved = errno, err;
	size_t ids;

	for (int i = 0; i < cs->n; i++) {
		const struct ap_counter *c = &cs->c[i];

		if (c->valid && !c->unsupported)
			ev[n++] = (struct stat_event){&c->attr, c->name, (uint64_t)(first_id + i),
						      c->raw,	c->ena,	 c->run};
	}
	if (!n || !stat_path(w, path, sizeof(path))) {
		stat_records__remove(w);
		return 0;
	}
	sb_put(&b, NULL, sizeof(h));
	h.attrs = (struct perf_file_section){b.len, (uint64_t)n * sizeof(struct perf_file_attr)};
	ids = b.len + h.attrs.size;
	for (int i = 0; i < n; i++) {
		struct perf_file_attr fa;

		memset(&fa, 0, sizeof(fa));
		stat_attr(fa.attr, ev[i].attr);
		fa.ids = (struct perf_file_section){ids + (size_t)i * 8, 8};
		sb_put(&b, &fa, sizeof(fa));
	}
	for (int i = 0; i < n; i++)
		sb_put(&b, &ev[i].id, 8);
	h.data.offset = b.len;
	put_maps(&b);
	put_stats(&b, ev, n, elapsed);
	h.data.size = b.len - h.data.offset;
	put_features(&b, &h, ev, n);
	if (b.full) {
		errno = saved;
		return -ENOSPC;
	}
	memcpy(file, &h, sizeof(h));
	if (!raw_syscall__fits_fsize(b.len)) { /* the program's RLIMIT_FSIZE: no SIGXFSZ of ours */
		errno = saved;
		return -EFBIG;
	}
	err = put_whole(path, file, b.len, true);
	if (err)
		err = put_whole(path, file, b.len, false);
	errno = saved;
	return err;
}

static const struct ap_counter *find(const struct ap_counters *cs, const char *name)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].valid && !strcmp(cs->c[i].name, name))
			return &cs->c[i];
	return NULL;
}

/* 1234567 -> "1,234,567" */
static const char *grouped(uint64_t v, char *buf, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < cap; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

/*
 * Print the totals like `perf stat`: value, name, a derived ratio, and the
 * share of time a multiplexed counter ran. One write per line, on stderr.
 * Nothing when there are no counters: a forked child's totals belong to the
 * process that opened the inherited counters, which prints them once.
 * Not async-signal-safe (stdio formats %f): at a normal exit only, never
 * from a signal handler.
 */
void stat_records__print(const struct ap_counters *cs, uint64_t elapsed_ns)
{
	const struct ap_counter *clock = find(cs, "task-clock");
	const struct ap_counter *cycles = find(cs, "cycles");
	const struct ap_counter *branches = find(cs, "branches");
	const struct ap_counter *refs = find(cs, "cache-references");
	double secs = (double)elapsed_ns / 1e9;
	char cmd[512], line[256], num[48];
	ssize_t n;

	if (!cs->n)
		return;
	n = raw_syscall__read_file("/proc/self/cmdline", cmd, sizeof(cmd));
	for (ssize_t i = 0; i < n - 1; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	dprintf(STDERR_FILENO, "\n Performance counter stats for '%s' (autoprof):\n\n", cmd);
	for (int i = 0; i < cs->n; i++) {
		const struct ap_counter *c = &cs->c[i];
		char ratio[64] = "";
		int len;

		if (!c->valid || (c->ena && !c->run)) { /* lacking, or never scheduled */
			dprintf(STDERR_FILENO, "   %15s      %-24s\n",
				c->valid ? "<not counted>" : "<not supported>", c->name);
			continue;
		}
		if (!strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock")) {
			len = snprintf(line, sizeof(line), "%18.2f msec %-24s",
				       (double)c->value / 1e6, c->name);
			if (elapsed_ns)
				snprintf(ratio, sizeof(ratio), "#  %7.3f CPUs utilized",
					 (double)c->value / (double)elapsed_ns);
		} else {
			len = snprintf(line, sizeof(line), "%18s      %-24s",
				       grouped(c->value, num, sizeof(num)), c->name);
			if (!strcmp(c->name, "instructions") && cycles && cycles->value)
				snprintf(ratio, sizeof(ratio), "#  %7.2f  insn per cycle",
					 (double)c->value / (double)cycles->value);
			else if (!strcmp(c->name, "branch-misses") && branches && branches->value)
				snprintf(ratio, sizeof(ratio), "#  %6.2f%% of all branches",
					 100.0 * (double)c->value / (double)branches->value);
			else if (!strcmp(c->name, "cache-misses") && refs && refs->value)
				snprintf(ratio, sizeof(ratio), "#  %6.2f%% of all cache refs",
					 100.0 * (double)c->value / (double)refs->value);
			else if (!strcmp(c->name, "cycles") && clock && clock->value)
				snprintf(ratio, sizeof(ratio), "#  %7.3f GHz",
					 (double)c->value / (double)clock->value);
			else if (secs > 0)
				snprintf(ratio, sizeof(ratio), "#  %9.3f /sec",
					 (double)c->value / secs);
		}
		if (c->run < c->ena && c->ena)
			dprintf(STDERR_FILENO, "%s %-32s (%.2f%%)\n", line, ratio,
				100.0 * (double)c->run / (double)c->ena);
		else
			dprintf(STDERR_FILENO, "%.*s %s\n", len, line, ratio);
	}
	dprintf(STDERR_FILENO, "\n %17.9f seconds time elapsed\n\n", secs);
}
