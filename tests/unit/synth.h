/* SPDX-License-Identifier: MIT */
/*
 * synth.h - what the report unit tests share to build perf.data files in
 * memory: a growable byte buffer with typed appenders, and the executable
 * mapping of the test binary itself (so samples resolve against a real ELF).
 * Include after report/driver/session.h.
 */
#ifndef AUTOPROF_TEST_SYNTH_H
#define AUTOPROF_TEST_SYNTH_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	u8 *p;
	size_t len, cap;
};

static inline void put(struct buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static inline void put64(struct buf *b, u64 v)
{
	put(b, &v, 8);
}

static inline void put32(struct buf *b, u32 v)
{
	put(b, &v, 4);
}

static inline void set64(struct buf *b, size_t off, u64 v)
{
	memcpy(b->p + off, &v, 8);
}

static inline void put_hdr(struct buf *b, u32 type, u16 misc, u16 size)
{
	struct perf_event_header h = {type, misc, size};

	put(b, &h, sizeof(h));
}

/* The sample_id trailer (AUTOPROF_SAMPLE_TYPE) a non-sample record ends with. */
static inline void synth_trailer(struct buf *b, u32 pid, u32 tid, u64 time, u64 id)
{
	struct autoprof_sample_id t = {pid, tid, time, 0, 0, id};

	put(b, &t, sizeof(t));
}

/*
 * A SAMPLE in AUTOPROF_SAMPLE_TYPE (IDENTIFIER IP TID TIME CPU PERIOD
 * CALLCHAIN) on CPU 0: the @nr entries at @chain, the callchain claiming
 * @claimed_nr (a bad file's may claim more than it holds).
 */
static inline void synth_sample(struct buf *b, u16 misc, u64 id, u64 ip, u32 pid, u32 tid, u64 time,
				u64 period, const u64 *chain, u64 nr, u64 claimed_nr)
{
	put_hdr(b, PERF_RECORD_SAMPLE, misc, (u16)(8 + 8 * 7 + 8 * nr));
	put64(b, id);
	put64(b, ip);
	put32(b, pid);
	put32(b, tid);
	put64(b, time);
	put64(b, 0);
	put64(b, period);
	put64(b, claimed_nr);
	if (nr)
		put(b, chain, nr * 8);
}

/* A COMM of @pid/@tid named @name (its 16 bytes), with the trailer of @id. */
static inline void synth_comm(struct buf *b, u16 misc, u32 pid, u32 tid, const char *name, u64 time,
			      u64 id)
{
	char comm[16] = "";

	snprintf(comm, sizeof(comm), "%s", name);
	put_hdr(b, PERF_RECORD_COMM, misc, 8 + 8 + 16 + 32);
	put32(b, pid);
	put32(b, tid);
	put(b, comm, sizeof(comm));
	synth_trailer(b, pid, tid, time, id);
}

/* A LOST of @lost records of event @id, then a LOST_SAMPLES of @lost_samples. */
static inline void synth_losses(struct buf *b, u64 id, u64 lost, u64 lost_samples, u32 pid,
				u64 time, u64 time_samples)
{
	put_hdr(b, PERF_RECORD_LOST, 0, 24 + 32);
	put64(b, id);
	put64(b, lost);
	synth_trailer(b, pid, pid, time, id);
	put_hdr(b, PERF_RECORD_LOST_SAMPLES, 0, 16 + 32);
	put64(b, lost_samples);
	synth_trailer(b, pid, pid, time_samples, id);
}

/*
 * The start of a perf.data file in @b (emptied first): its header, one
 * sample id @id and one cpu-clock attr of @period sampling
 * AUTOPROF_SAMPLE_TYPE. Returns the offset of the data section, which
 * synth_file_end() closes.
 */
static inline size_t synth_file_start(struct buf *b, u64 id, u64 period)
{
	struct perf_file_header h = {0};
	struct perf_event_attr attr = {0};
	struct perf_file_attr fa = {0};

	memset(b, 0, sizeof(*b));
	h.magic = PERF_FILE_MAGIC;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct perf_file_attr);
	put(b, &h, sizeof(h));
	put64(b, id);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.size = PERF_FILE_ATTR_SIZE;
	attr.sample_period = period;
	attr.sample_type = AUTOPROF_SAMPLE_TYPE;
	attr.sample_id_all = 1;
	memcpy(fa.attr, &attr, sizeof(fa.attr));
	fa.ids = (struct perf_file_section){sizeof(h), 8};
	put(b, &fa, sizeof(fa));
	return b->len;
}

/* The header of the file in @b rewritten: attrs, and data from @data_off to the end. */
static inline void synth_file_end(struct buf *b, size_t data_off)
{
	struct perf_file_header h = {0};

	h.magic = PERF_FILE_MAGIC;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct perf_file_attr);
	h.attrs = (struct perf_file_section){sizeof(h) + 8, sizeof(struct perf_file_attr)};
	h.data = (struct perf_file_section){data_off, b->len - data_off};
	memcpy(b->p, &h, sizeof(h));
}

struct text_map {
	u64 start, end, pgoff;
	char path[4096];
};

/* Find the executable mapping of this process that holds address want. Returns 0 or -errno. */
static inline int find_text_map(u64 want, struct text_map *map)
{
	char line[4300];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], path[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, path) <
		    4)
			continue;
		if (want >= s && want < e && perms[2] == 'x') {
			map->start = s;
			map->end = e;
			map->pgoff = off;
			snprintf(map->path, sizeof(map->path), "%s", path);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

/* The MMAP2 of @map (r-x, private) in process @pid at @time, with the trailer of @id. */
static inline void synth_mmap2(struct buf *b, const struct text_map *map, u32 pid, u64 time, u64 id)
{
	size_t len = strlen(map->path);

	put_hdr(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
		(u16)(sizeof(struct perf_record_mmap2) + PERF_ALIGN8(len + 1) +
		      sizeof(struct autoprof_sample_id)));
	put32(b, pid);
	put32(b, pid);
	put64(b, map->start);
	put64(b, map->end - map->start);
	put64(b, map->pgoff);
	put(b, (u8[24]){0}, 24);	   /* maj, min, ino, ino_generation */
	put(b, (u8[8]){5, 0, 0, 0, 2}, 8); /* prot r-x, flags private */
	put(b, map->path, len + 1);
	put(b, (u8[8]){0}, PERF_ALIGN8(len + 1) - len - 1);
	synth_trailer(b, pid, pid, time, id);
}

#endif /* AUTOPROF_TEST_SYNTH_H */
