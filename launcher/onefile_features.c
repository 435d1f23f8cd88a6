/* SPDX-License-Identifier: MIT */
/*
 * onefile_features.c - the feature sections of a merged file
 * (onefile_merge.c): those of the run's first file, with the build ids of
 * every file (each object once), EVENT_DESC of the merged attrs, the span of
 * every file's sample times and the command as the user gave it. Strings are
 * written as perf writes them (u32 length padded to 64, the bytes, zeros).
 * Built with -Ireport. Not async-signal-safe.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "onefile_merge.h"

/* A string as perf writes one: u32 length (padded), the bytes, zeros. */
static int put_string(struct merge *m, const char *s)
{
	static const char zero[NAME_ALIGN];
	u32 n = (u32)strlen(s) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	if (onefile_merge__put(m, &len, 4) || onefile_merge__put(m, s, n))
		return -EIO;
	return onefile_merge__put(m, zero, len - n);
}

static int put_cmdline(struct merge *m, char *const *argv)
{
	u32 n = 1;
	int err;

	while (argv[n - 1])
		n++;
	err = onefile_merge__put(m, &n, 4) ?: put_string(m, "autoprof");
	for (u32 i = 0; !err && i + 1 < n; i++)
		err = put_string(m, argv[i]);
	return err;
}

static int put_event_desc(struct merge *m)
{
	u32 nr = (u32)m->nr_attrs, size = PERF_FILE_ATTR_SIZE;
	int err = onefile_merge__put(m, &nr, 4) ?: onefile_merge__put(m, &size, 4);

	for (size_t a = 0; !err && a < m->nr_attrs; a++) {
		struct perf_event_attr attr = m->attrs[a].attr;
		u32 nr_ids = (u32)m->attrs[a].nr_ids;

		attr.size = PERF_FILE_ATTR_SIZE;
		err = onefile_merge__put(m, &attr, PERF_FILE_ATTR_SIZE) ?: onefile_merge__put(m, &nr_ids, 4)
		    ?: put_string(m, m->attrs[a].name ? m->attrs[a].name : "")
		    ?: onefile_merge__put(m, m->attrs[a].ids, nr_ids * 8);
	}
	return err;
}

/* Every input's BUILD_ID records, each (name and id) once. */
static int put_build_ids(struct merge *m)
{
	const size_t fixed = sizeof(struct perf_record_build_id);
	struct strset seen = {0};
	int err = 0;

	for (size_t f = 0; f < m->nr_in && !err; f++) {
		u64 len = 0;
		const u8 *p = run_files__feature(&m->in[f].pf, PERF_FEAT_BUILD_ID, &len);

		while (p && !err && len >= fixed) {
			u16 size;
			char key[PATH_MAX + 64];
			size_t before = seen.nr;
			u32 sid;

			memcpy(&size, p + 6, 2);
			if (size < fixed || size > len)
				break;
			snprintf(key, sizeof(key), "%.*s|",
				 (int)strnlen((const char *)p + fixed, size - fixed),
				 (const char *)p + fixed);
			for (size_t i = 0; i < 20; i++)
				snprintf(key + strlen(key), 3, "%02x", p[12 + i]);
			if (strset__intern(&seen, key, strlen(key), &sid))
				err = -ENOMEM;
			else if (seen.nr != before) {
				err = onefile_merge__put(m, p, size);
				m->res->build_ids++;
			}
			p += size;
			len -= size;
		}
	}
	strset__exit(&seen);
	return err;
}

/* The span of every input's sample times (SAMPLE_TIME: first, last). */
static int put_sample_time(struct merge *m)
{
	u64 t[2] = {UINT64_MAX, 0};

	for (size_t f = 0; f < m->nr_in; f++) {
		u64 len = 0;
		const u8 *p = run_files__feature(&m->in[f].pf, PERF_FEAT_SAMPLE_TIME, &len);

		if (!p || len < 16)
			continue;
		if (ld64(p) && ld64(p) < t[0])
			t[0] = ld64(p);
		if (ld64(p + 8) > t[1])
			t[1] = ld64(p + 8);
	}
	if (t[0] == UINT64_MAX)
		t[0] = 0;
	return onefile_merge__put(m, t, sizeof(t));
}

/*
 * The feature sections after the data: those the output makes itself, the
 * others as the first input that has them gives them. Sets the header's bits.
 */
int onefile_features__write(struct merge *m, struct perf_file_header *h, char *const *argv)
{
	struct perf_file_section sec[PERF_FEAT_BITS];
	u64 table;
	int nr = 0, err;

	for (int bit = 1; bit < PERF_FEAT_BITS; bit++) {
		u64 len;
		bool any = (bit == PERF_FEAT_CMDLINE && argv) || bit == PERF_FEAT_EVENT_DESC;

		if (bit == PERF_FEAT_COMPRESSED || bit == PERF_FEAT_GROUP_DESC ||
		    bit == PERF_FEAT_STAT || bit == PERF_FEAT_DIR_FORMAT ||
		    bit == PERF_FEAT_AUXTRACE)
			continue; /* records stored plain; attrs renumbered; no stat, dir, aux */
		for (size_t f = 0; f < m->nr_in && !any; f++)
			any = run_files__feature(&m->in[f].pf, bit, &len) != NULL;
		if (any)
			h->adds_features[bit / 64] |= 1ULL << (bit % 64);
	}
	for (int bit = 0; bit < PERF_FEAT_BITS; bit++)
		nr += (int)(h->adds_features[bit / 64] >> (bit % 64) & 1);
	table = m->pos;
	memset(sec, 0, sizeof(sec));
	err = onefile_merge__put(m, sec, (size_t)nr * sizeof(sec[0]));
	for (int bit = 0, i = 0; !err && bit < PERF_FEAT_BITS; bit++) {
		if (!(h->adds_features[bit / 64] >> (bit % 64) & 1))
			continue;
		sec[i].offset = m->pos;
		if (bit == PERF_FEAT_CMDLINE && argv)
			err = put_cmdline(m, argv);
		else if (bit == PERF_FEAT_EVENT_DESC)
			err = put_event_desc(m);
		else if (bit == PERF_FEAT_BUILD_ID)
			err = put_build_ids(m);
		else if (bit == PERF_FEAT_SAMPLE_TIME)
			err = put_sample_time(m);
		else {
			const u8 *p = NULL;
			u64 len = 0;

			for (size_t f = 0; f < m->nr_in && !p; f++)
				p = run_files__feature(&m->in[f].pf, bit, &len);
			err = onefile_merge__put(m, p, len);
		}
		sec[i].size = m->pos - sec[i].offset;
		err = err ?: onefile_merge__pad8(m);
		i++;
	}
	if (err || fflush(m->out) ||
	    pwrite(fileno(m->out), sec, (size_t)nr * sizeof(sec[0]), (off_t)table) !=
		(ssize_t)(nr * sizeof(sec[0])))
		return err ?: -errno;
	return 0;
}
