// SPDX-License-Identifier: MIT
/*
 * stat_sibling.c - the counter totals autoprof keeps beside a profile: FILE.stat,
 * a `perf stat record` file (THREAD_MAP, CPU_MAP, STAT_CONFIG, STAT,
 * STAT_ROUND records; attrs named by EVENT_DESC). The profile itself holds
 * only what a perf record file holds, so perf script and hotspot read it as
 * one; the totals join the report's counters from here.
 */
#include "driver/driver.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Counters of a sibling are kept apart from those of the profiles by this file-number bit. */
#define SIBLING_FILE (1u << 31)

/* Note the stat file @st as counted. Returns 0 or -ENOMEM. */
static int note_counted(struct session *s, const struct stat *st)
{
	return kvmap__put(&s->stats_read, (u64)st->st_dev, (u64)st->st_ino, 1);
}

/*
 * Has @path already been counted as a stat file of this session (the
 * FILE.stat of an input, named as an input too, as perf.data* does)?
 */
bool stat_sibling__seen(const struct session *s, const char *path)
{
	struct stat st;
	u64 v;

	return stat(path, &st) == 0 &&
	       kvmap__get(&s->stats_read, (u64)st.st_dev, (u64)st.st_ino, &v);
}

/*
 * Read FILE.stat beside file @fi of @s (a file opened by path, not a pipe,
 * not a stat file itself) into the session's counters. No sibling: nothing.
 * Returns 0 (a damaged sibling is a warning) or -ENOMEM.
 */
int stat_sibling__read(struct session *s, u32 fi)
{
	const struct perf_file *main_pf = &s->files[fi];
	struct perf_file pf;
	struct record r;
	struct stat st;
	char *path, warn[256];
	u64 pos;
	int ret = 0;

	if (main_pf->pipe || !main_pf->path)
		return 0;
	if (main_pf->feat.has_stat) { /* a stat file named as an input: counted as such */
		if (stat(main_pf->path, &st) == 0 && note_counted(s, &st))
			return -ENOMEM;
		return 0;
	}
	if (asprintf(&path, "%s.stat", main_pf->path) < 0)
		return -ENOMEM;
	if (stat(path, &st) || stat_sibling__seen(s, path)) {
		free(path); /* none, or named as an input before its profile */
		return 0;
	}
	if (note_counted(s, &st)) {
		free(path);
		return -ENOMEM;
	}
	memset(&pf, 0, sizeof(pf));
	if (perf_file__open(&pf, path)) {
		session__warn(s, "%s: %s; its counter totals are left out", path,
			      perf_file__error(&pf));
		goto out;
	}
	if (features__read(&pf, warn, sizeof(warn)) == -ENOMEM) {
		ret = -ENOMEM;
		goto out;
	}
	if (!pf.feat.has_stat) {
		session__warn(s, "%s: not a perf stat record file; left out", path);
		goto out;
	}
	for (size_t i = 0; i < pf.nr_attrs; i++) {
		if (!pf.attrs[i].name)
			pf.attrs[i].name = evname__from_attr(&pf.attrs[i].attr);
		if (!pf.attrs[i].name) {
			ret = -ENOMEM;
			goto out;
		}
	}
	pos = pf.data_off;
	while (perf_file__next_record(&pf, &pos, &r) > 0) {
		int err = 0;

		if (r.h.type == PERF_RECORD_STAT)
			err = counters__stat(&s->counters, &pf, fi | SIBLING_FILE, &r);
		else if (r.h.type == PERF_RECORD_STAT_ROUND)
			err = counters__round(&s->counters, &r);
		if (err == -ENOMEM) {
			ret = err;
			break;
		}
		s->bad_records += err != 0;
	}
out:
	perf_file__close(&pf);
	free(path);
	return ret;
}
