/* SPDX-License-Identifier: MIT */
/*
 * Unit test: FILE.stat, the counter totals as `perf stat record` lays out its
 * file (stat_records__write in preload/session/stat_records.c): the header, one attr
 * and one id per counter read, the records THREAD_MAP, CPU_MAP, STAT_CONFIG,
 * STAT (one per counter) and STAT_ROUND, and the feature sections, each read
 * back here by a parser written from the kernel's perf.data format
 * (tools/perf/Documentation/perf.data-file-format.txt), not from the writer.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"

#define FIRST_ID 100

static uint8_t *file;
static size_t file_len;

static bool slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	free(file);
	file = NULL;
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	file = malloc((size_t)st.st_size + 1);
	file_len = (size_t)st.st_size;
	if (!file || read(fd, file, file_len) != (ssize_t)file_len) {
		close(fd);
		return false;
	}
	close(fd);
	return true;
}

/* A perf string (u32 length, a multiple of 64 with room for the NUL, then the zero-padded bytes).
 */
static bool perf_string(const uint8_t *p, size_t room, const char *want, size_t *used)
{
	size_t n = strlen(want);
	uint32_t len;

	if (room < 4)
		return false;
	memcpy(&len, p, 4);
	*used = 4 + (size_t)len;
	if (len % 64 || len <= n || 4 + (size_t)len > room || memcmp(p + 4, want, n))
		return false;
	for (size_t i = 4 + n; i < 4 + (size_t)len; i++)
		if (p[i])
			return false;
	return true;
}

static const struct perf_file_section *feature(const struct perf_file_header *h, int bit)
{
	const struct perf_file_section *table =
	    (const void *)(file + h->data.offset + h->data.size);
	int idx = 0;

	if (!(h->adds_features[bit / 64] & (1ULL << (bit % 64))))
		return NULL;
	for (int b = 0; b < bit; b++)
		idx += !!(h->adds_features[b / 64] & (1ULL << (b % 64)));
	return &table[idx];
}

int main(int argc, char **argv)
{
	static struct ap_counters cs;
	static struct writer w;
	char dir[] = "/tmp/autoprof-stat.XXXXXX", path[PATH_MAX + 8];
	const struct perf_file_header *h;
	const struct perf_file_attr *fa;
	const struct perf_file_section *sec;
	struct utsname uts;
	struct stat st;
	size_t pos, used;
	int want_ids[4] = {FIRST_ID + 0, FIRST_ID + 1, FIRST_ID + 3}, types = 0, stats = 0;
	bool attrs_ok = true, stats_ok = true, desc_ok;

	/* Run again with an argument of 64 bytes, the length at which a perf string
	 * needs a second 64-byte block for its NUL (the CMDLINE feature below). */
	if (argc == 1) {
		static char arg64[65];

		memset(arg64, 'x', 64);
		execv("/proc/self/exe", (char *[]){argv[0], arg64, NULL});
	}
	plan(15);
	ap_quiet = true;
	if (!mkdtemp(dir) ||
	    counting__parse(&cs, "task-clock,page-faults,cycles,instructions") != 0 || cs.n != 4)
		return 1;
	autoprof.pid = getpid();
	uname(&uts);
	/* read: task-clock, page-faults and instructions; cycles unsupported here */
	for (int i = 0; i < 4; i++) {
		cs.c[i].valid = true;
		cs.c[i].raw = 1000 * (uint64_t)(i + 1);
		cs.c[i].ena = 5000 + (uint64_t)i;
		cs.c[i].run = 4000 + (uint64_t)i;
	}
	cs.c[2].unsupported = true;
	snprintf(w.path, sizeof(w.path), "%s/perf.data", dir);
	snprintf(path, sizeof(path), "%s.stat", w.path);

	ok(stat_records__write(&w, &cs, FIRST_ID, 123456789) == 0 && slurp(path),
	   "stat_records__write writes FILE.stat beside FILE");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "FILE.stat has mode 0600");
	h = (const void *)file;
	ok(file_len >= sizeof(*h) && h->magic == PERF_FILE_MAGIC && h->size == sizeof(*h) &&
	       h->attr_size == sizeof(struct perf_file_attr) &&
	       h->attrs.size == 3 * sizeof(struct perf_file_attr) &&
	       h->data.offset + h->data.size <= file_len,
	   "header: perf's magic, three attrs (the unsupported counter left out), data inside");

	fa = (const void *)(file + h->attrs.offset);
	for (int i = 0; i < 3; i++) {
		const struct perf_event_attr *a = (const void *)fa[i].attr;
		int c = i < 2 ? i : 3;
		uint64_t id;

		memcpy(&id, file + fa[i].ids.offset, 8);
		attrs_ok &= a->size == PERF_FILE_ATTR_SIZE && a->type == cs.c[c].attr.type &&
			    a->config == cs.c[c].attr.config &&
			    a->sample_type == PERF_SAMPLE_IDENTIFIER &&
			    a->read_format ==
				(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING) &&
			    !a->sample_id_all && fa[i].ids.size == 8 && id == (uint64_t)want_ids[i];
	}
	ok(attrs_ok, "each attr: the counter's event, IDENTIFIER, enabled/running times, its id "
		     "(first id + its index)");

	/* The data section: THREAD_MAP, CPU_MAP, STAT_CONFIG, 3 STAT, STAT_ROUND, tiling it. */
	pos = h->data.offset;
	while (pos + 8 <= h->data.offset + h->data.size) {
		const struct perf_event_header *r = (const void *)(file + pos);
		const uint8_t *p = file + pos;

		if (r->size < 8 || r->size % 8)
			break;
		if (types == 0) {
			uint64_t nr, pid;

			memcpy(&nr, p + 8, 8);
			memcpy(&pid, p + 16, 8);
			ok(r->type == PERF_RECORD_THREAD_MAP && r->size == 40 && nr == 1 &&
			       pid == (uint64_t)getpid(),
			   "THREAD_MAP: one thread, this process");
		} else if (types == 1) {
			uint16_t m[4];

			memcpy(m, p + 8, 8);
			ok(r->type == PERF_RECORD_CPU_MAP && r->size == 16 && m[0] == 0 &&
			       m[1] == 1 && m[2] == UINT16_MAX,
			   "CPU_MAP: a list of one CPU, -1 (any CPU: per-task counters)");
		} else if (types == 2) {
			const struct perf_record_stat_config *c = (const void *)p;

			ok(r->type == PERF_RECORD_STAT_CONFIG && c->nr == 3 &&
			       r->size == 16 + 3 * 16 &&
			       c->data[0].tag == PERF_STAT_CONFIG_TERM_AGGR_MODE &&
			       c->data[0].val == 1 &&
			       c->data[1].tag == PERF_STAT_CONFIG_TERM_INTERVAL &&
			       c->data[1].val == 0 &&
			       c->data[2].tag == PERF_STAT_CONFIG_TERM_SCALE && c->data[2].val == 1,
			   "STAT_CONFIG: aggregation global, no interval, scaled");
		} else if (r->type == PERF_RECORD_STAT) {
			const struct perf_record_stat *s = (const void *)p;
			int c = stats < 2 ? stats : 3;

			stats_ok &= r->size == 48 && s->id == (uint64_t)want_ids[stats] &&
				    s->cpu == UINT32_MAX && s->thread == 0 &&
				    s->val == cs.c[c].raw && s->ena == cs.c[c].ena &&
				    s->run == cs.c[c].run;
			stats++;
		} else if (r->type == PERF_RECORD_STAT_ROUND) {
			const struct perf_record_stat_round *rd = (const void *)p;

			ok(r->size == 24 && rd->type == PERF_STAT_ROUND_TYPE_FINAL &&
			       rd->time == 123456789 && stats == 3,
			   "STAT_ROUND: final, at the elapsed time, after the STATs");
		}
		types++;
		pos += r->size;
	}
	ok(stats == 3 && stats_ok,
	   "STAT: one per counter read, with its id, value, enabled and "
	   "running times, any CPU, thread 0 (%d)",
	   stats);
	ok(pos == h->data.offset + h->data.size && types == 7,
	   "the 7 records tile the data section exactly (%d)", types);

	/* The features: perf stat record's, the STAT bit saying what the file is. */
	ok(feature(h, PERF_FEAT_STAT) && feature(h, PERF_FEAT_CMDLINE) &&
	       feature(h, PERF_FEAT_EVENT_DESC) && !feature(h, PERF_FEAT_BUILD_ID),
	   "features: HOSTNAME, OSRELEASE, ARCH, CMDLINE, EVENT_DESC and STAT");
	sec = feature(h, PERF_FEAT_HOSTNAME);
	ok(sec && sec->offset + sec->size <= file_len &&
	       perf_string(file + sec->offset, sec->size, uts.nodename, &used) && used == sec->size,
	   "HOSTNAME: a perf string of uname's node name");
	sec = feature(h, PERF_FEAT_CMDLINE);
	{
		const uint8_t *p = sec ? file + sec->offset : NULL, *end = p ? p + sec->size : NULL;
		bool cmd_ok = sec && sec->offset + sec->size <= file_len;
		uint32_t nr = 0;

		if (cmd_ok) {
			memcpy(&nr, p, 4);
			p += 4;
			cmd_ok = nr == (uint32_t)argc + 1 &&
				 perf_string(p, (size_t)(end - p), "autoprof", &used);
			p += used;
			for (int i = 0; i < argc && cmd_ok; i++) {
				cmd_ok = perf_string(p, (size_t)(end - p), argv[i], &used);
				p += used;
			}
			cmd_ok = cmd_ok && p == end;
		}
		ok(cmd_ok,
		   "CMDLINE: 'autoprof' and the %d arguments, perf strings (a 64-byte one "
		   "too)",
		   argc);
	}
	sec = feature(h, PERF_FEAT_EVENT_DESC);
	desc_ok = sec && sec->offset + sec->size <= file_len;
	if (desc_ok) {
		const uint8_t *p = file + sec->offset, *end = p + sec->size;
		uint32_t nr, size;

		memcpy(&nr, p, 4);
		memcpy(&size, p + 4, 4);
		p += 8;
		desc_ok = nr == 3 && size == PERF_FILE_ATTR_SIZE;
		for (uint32_t i = 0; i < nr && desc_ok; i++) {
			struct perf_event_attr a; /* (unaligned in the section: copied) */
			int c = i < 2 ? (int)i : 3;
			uint32_t nr_ids;
			uint64_t id;

			desc_ok = (size_t)(end - p) >= size + 4;
			memset(&a, 0, sizeof(a));
			memcpy(&a, p, desc_ok ? PERF_FILE_ATTR_SIZE : 0);
			desc_ok = desc_ok && a.config == cs.c[c].attr.config &&
				  a.read_format == (PERF_FORMAT_TOTAL_TIME_ENABLED |
						    PERF_FORMAT_TOTAL_TIME_RUNNING);
			p += size;
			memcpy(&nr_ids, p, 4);
			p += 4;
			desc_ok = desc_ok && nr_ids == 1 &&
				  perf_string(p, (size_t)(end - p), cs.c[c].name, &used);
			p += used;
			memcpy(&id, p, 8);
			p += 8;
			desc_ok = desc_ok && id == (uint64_t)want_ids[i] && p <= end;
		}
		desc_ok = desc_ok && p == end;
	}
	ok(desc_ok, "EVENT_DESC: each attr with one id and the counter's name");

	/* Nothing read: no file, and a stale one is removed. */
	for (int i = 0; i < 4; i++)
		cs.c[i].valid = false;
	ok(stat_records__write(&w, &cs, FIRST_ID, 1) == 0 && access(path, F_OK) != 0,
	   "no counter read: no FILE.stat, the stale one removed");
	unlink(path);
	rmdir(dir);
	free(file);
	return tap_done();
}
