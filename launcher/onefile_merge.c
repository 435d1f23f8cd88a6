/* SPDX-License-Identifier: MIT */
/*
 * onefile_merge.c - the perf.data files of one run merged into one, laid out
 * as perf record lays out its file: header, event ids, attrs, the records in
 * time order, the feature sections. Reads the inputs with the report's
 * reader (report/read: validated offsets, mapped files); built with -Ireport.
 *
 * Ids: every image's file numbers its events from 1 (the sampling event is
 * id 1 in each), so equal attrs keep one id set; an id that a different
 * attr already holds is given a fresh number, rewritten in each record that
 * carries it (the SAMPLE's IDENTIFIER and ID words, the sample_id trailer,
 * LOST's id). Time: perf report orders the records of a file by time (in
 * rounds, or all at once without FINISHED_ROUND) but hands a record of time
 * 0 on at once: the maps an image's file starts with (time 0) would reach
 * perf before the earlier image's samples of the same pid. Each such record
 * takes the earliest time of the records after it in its file, and the
 * output is sorted by time: a FINISHED_ROUND every ROUND_RECORDS records
 * bounds what a reader queues.
 * Not async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onefile_merge.h"

#define ROUND_RECORDS 16384 /* records between two FINISHED_ROUND, as perf record's flushes */

static int fail(struct merge *m, int err, const char *fmt, const char *arg)
{
	snprintf(m->why, m->cap, fmt, arg, strerror(-err));
	return err;
}

int onefile_merge__put(struct merge *m, const void *p, size_t n)
{
	errno = 0;
	if (n && fwrite(p, 1, n, m->out) != n)
		return errno ? -errno : -EIO; /* (EFBIG, ENOSPC: said as they are) */
	m->pos += n;
	return 0;
}

int onefile_merge__pad8(struct merge *m)
{
	static const char zero[8];

	return onefile_merge__put(m, zero, (8 - m->pos % 8) % 8);
}
/* @a and @b count as one event: equal but for the period a timer run measured. */
static bool same_attr(const struct evattr *a, const struct mattr *b)
{
	struct perf_event_attr x = a->attr, y = b->attr;

	if (strcmp(a->name ? a->name : "", b->name ? b->name : ""))
		return false;
	if ((x.sample_type & PERF_SAMPLE_PERIOD) && (y.sample_type & PERF_SAMPLE_PERIOD)) {
		x.freq = y.freq = 0; /* each sample carries its period */
		x.sample_period = y.sample_period = 0;
	}
	x.size = y.size = 0;
	return !memcmp(&x, &y, PERF_FILE_ATTR_SIZE);
}

/* Which output attr holds id @id, or -1. */
static long holder(const struct merge *m, u64 id)
{
	for (size_t a = 0; a < m->nr_attrs; a++)
		for (size_t i = 0; i < m->attrs[a].nr_ids; i++)
			if (m->attrs[a].ids[i] == id)
				return (long)a;
	return -1;
}

/* Fold input @in's attrs into the output's; note how its ids map. Returns 0 or -ENOMEM. */
static int fold_attrs(struct merge *m, struct input *in)
{
	const struct perf_file_header *h = &in->pf.hdr;

	in->attr_to = calloc(in->pf.nr_attrs + 1, sizeof(*in->attr_to));
	if (!in->attr_to)
		return -ENOMEM;
	for (size_t i = 0; i < in->pf.nr_attrs; i++) {
		const u8 *entry = in->pf.base + h->attrs.offset + i * h->attr_size;
		struct perf_file_section ids;
		struct mattr *ma = NULL;
		size_t a;

		memcpy(&ids, entry + h->attr_size - sizeof(ids), sizeof(ids));
		for (a = 0; a < m->nr_attrs && !ma; a++)
			if (same_attr(&in->pf.attrs[i], &m->attrs[a]))
				ma = &m->attrs[a];
		if (!ma) {
			if (array__reserve(&m->attrs, &m->cap_attrs, m->nr_attrs + 1,
					   sizeof(*m->attrs)))
				return -ENOMEM;
			a = m->nr_attrs++;
			ma = &m->attrs[a];
			memset(ma, 0, sizeof(*ma));
			ma->attr = in->pf.attrs[i].attr;
			ma->name = in->pf.attrs[i].name;
		} else {
			a = (size_t)(ma - m->attrs);
			ma->periods_differ |=
			    ma->attr.sample_period != in->pf.attrs[i].attr.sample_period ||
			    ma->attr.freq != in->pf.attrs[i].attr.freq;
		}
		in->attr_to[i] = a;
		for (u64 k = 0; k < ids.size / 8; k++) {
			u64 id = ld64(in->pf.base + ids.offset + k * 8), to = id;
			long who = holder(m, id);

			if (who >= 0 && (size_t)who != a)
				to = m->next_id++;
			if (who != (long)a) {
				if (array__reserve(&ma->ids, &ma->cap_ids, ma->nr_ids + 1, 8))
					return -ENOMEM;
				ma->ids[ma->nr_ids++] = to;
			}
			if (array__reserve(&in->map, &in->cap_map, in->nr_map + 1, 16))
				return -ENOMEM;
			in->map[in->nr_map][0] = id;
			in->map[in->nr_map][1] = to;
			in->remap |= to != id;
			in->nr_map++;
		}
	}
	return 0;
}

/* Input @in's id @id in the output. */
static u64 map_id(const struct input *in, u64 id)
{
	for (size_t i = 0; i < in->nr_map; i++)
		if (in->map[i][0] == id)
			return in->map[i][1];
	return id;
}

/* Offsets in a SAMPLE body of its IDENTIFIER, ID and TIME words (-1: none). */
static void sample_offsets(u64 type, long *ident, long *id, long *time)
{
	long at = sizeof(struct perf_event_header);

	*ident = *id = *time = -1;
	if (type & PERF_SAMPLE_IDENTIFIER)
		*ident = at, at += 8;
	at += type & PERF_SAMPLE_IP ? 8 : 0;
	at += type & PERF_SAMPLE_TID ? 8 : 0;
	if (type & PERF_SAMPLE_TIME)
		*time = at, at += 8;
	at += type & PERF_SAMPLE_ADDR ? 8 : 0;
	if (type & PERF_SAMPLE_ID)
		*id = at;
}

/* Offsets in a record of @size bytes of its trailer's IDENTIFIER, ID and TIME words. */
static void trailer_offsets(u64 type, size_t size, long *ident, long *id, long *time)
{
	long at = (long)size - __builtin_popcountll(type & TRAILER_BITS) * 8;

	*ident = *id = *time = -1;
	at += type & PERF_SAMPLE_TID ? 8 : 0;
	if (type & PERF_SAMPLE_TIME)
		*time = at, at += 8;
	if (type & PERF_SAMPLE_ID)
		*id = at;
	if (type & PERF_SAMPLE_IDENTIFIER)
		*ident = (long)size - 8;
}

/* Is record @r one the output leaves out (rounds: the output is sorted; ids: renumbered)? */
static bool dropped(const struct record *r)
{
	switch (r->h.type) {
	case PERF_RECORD_FINISHED_ROUND:
	case PERF_RECORD_FINISHED_INIT:
	case PERF_RECORD_ID_INDEX:
	case PERF_RECORD_HEADER_ATTR:
	case PERF_RECORD_HEADER_EVENT_TYPE:
	case PERF_RECORD_HEADER_FEATURE:
		return true;
	default:
		return false;
	}
}

/*
 * Index every record of input @f in file order with its time (has_time 2:
 * a time word of 0 to be given the earliest time after it). Returns 0 or -ENOMEM.
 */
static int index_input(struct merge *m, u32 f)
{
	struct input *in = &m->in[f];
	size_t first = m->nr_idx;
	u64 pos = in->pf.data_off, carry = 0;
	struct record record, *r = &record;

	while (perf_file__next_record(&in->pf, &pos, &record) > 0) {
		struct sample id;
		size_t body_end;
		struct rec_pos *p;

		if (dropped(&record))
			continue;
		if (array__reserve(&m->idx, &m->cap_idx, m->nr_idx + 1, sizeof(*m->idx)))
			return -ENOMEM;
		p = &m->idx[m->nr_idx++];
		*p = (struct rec_pos){0, r->off, f, 0};
		if (!sample__record_ids(&in->pf, &record, &id, &body_end))
			continue;
		if (id.has_time) {
			p->time = id.time;
			p->has_time = id.time ? 1 : 2;
		}
		if (r->h.type == PERF_RECORD_SAMPLE && (size_t)id.attr < in->pf.nr_attrs) {
			struct mattr *ma = &m->attrs[in->attr_to[id.attr]];

			ma->samples++;
			ma->period_sum += id.period;
		}
	}
	/* a record without a time takes the earliest of the records after it in its file (not
	 * the next one's: an aggregated file's merged records carry their first sample's time and
	 * come after records of later times); the last ones: the one before */
	carry = UINT64_MAX;
	for (size_t i = m->nr_idx; i-- > first;)
		if (m->idx[i].has_time == 1)
			carry = m->idx[i].time < carry ? m->idx[i].time : carry;
		else
			m->idx[i].time = carry == UINT64_MAX ? 0 : carry;
	carry = 0;
	for (size_t i = first; i < m->nr_idx; i++)
		if (m->idx[i].has_time == 1)
			carry = m->idx[i].time;
		else if (!m->idx[i].time)
			m->idx[i].time = carry;
	return 0;
}

/* Write record @p of input @in with its ids mapped and, for has_time 2, its time set. */
static int write_record(struct merge *m, const struct input *in, const struct rec_pos *p)
{
	static u8 buf[65536];
	struct record record, *r = &record;
	long ident, id, time;

	if (perf_file__record_at(&in->pf, p->off, &record))
		return -EINVAL;
	if (!in->remap && p->has_time != 2)
		return onefile_merge__put(m, r->p, r->h.size);
	memcpy(buf, r->p, r->h.size);
	if (r->h.type == PERF_RECORD_SAMPLE)
		sample_offsets(in->sample_type, &ident, &id, &time);
	else if (r->h.type < PERF_RECORD_USER_TYPE_START && in->pf.sample_id_all &&
		 r->h.size >= sample__fixed_size(r->h.type) +
				  8 * (size_t)__builtin_popcountll(in->sample_type & TRAILER_BITS))
		trailer_offsets(in->sample_type, r->h.size, &ident, &id, &time);
	else
		ident = id = time = -1;
	if (in->remap) {
		u64 v;

		for (int k = 0; k < 2; k++) {
			long at = k ? id : ident;

			if (at >= 0 && (size_t)at + 8 <= r->h.size) {
				v = map_id(in, ld64(buf + at));
				memcpy(buf + at, &v, 8);
			}
		}
		if (r->h.type == PERF_RECORD_LOST && r->h.size >= 16) {
			v = map_id(in, ld64(buf + 8));
			memcpy(buf + 8, &v, 8);
		}
	}
	if (p->has_time == 2 && time >= 0 && (size_t)time + 8 <= r->h.size)
		memcpy(buf + time, &p->time, 8);
	return onefile_merge__put(m, buf, r->h.size);
}

/* Open the inputs, fold their attrs. Returns 0 or -errno, said. */
static int open_inputs(struct merge *m, const char *const *paths)
{
	char warn[256];

	for (size_t f = 0; f < m->nr_in; f++) {
		struct input *in = &m->in[f];
		int err = perf_file__open(&in->pf, paths[f]);

		if (!err && in->pf.pipe)
			err = perf_file__fail(&in->pf, -EINVAL, "a pipe-mode file");
		if (err) {
			snprintf(m->why, m->cap, "%s: %s", paths[f], perf_file__error(&in->pf));
			return err;
		}
		if (features__read(&in->pf, warn, sizeof(warn)) == -ENOMEM)
			return fail(m, -ENOMEM, "%s: %s", paths[f]);
		/* perf record -z: records compressed; the output holds them plain */
		if (in->pf.feat.has_comp &&
		    (err = stream__expand(&in->pf, in->pf.data_off, in->pf.data_end)) != 0) {
			snprintf(m->why, m->cap, "%s: %s", paths[f], perf_file__error(&in->pf));
			return err;
		}
		for (size_t i = 0; i < in->pf.nr_attrs; i++) {
			u64 ids = in->pf.attrs[i].attr.sample_type;

			if (!in->pf.attrs[i].name &&
			    !(in->pf.attrs[i].name = evname__from_attr(&in->pf.attrs[i].attr)))
				return fail(m, -ENOMEM, "%s: %s", paths[f]);
			if (i == 0)
				in->sample_type = ids;
			else if ((ids ^ in->sample_type) & (TRAILER_BITS | PERF_SAMPLE_IP))
				return fail(m, -EINVAL,
					    "%s: its events lay out their ids apart (%s)",
					    paths[f]);
		}
	}
	for (size_t f = 0; f < m->nr_in; f++)
		for (size_t i = 0; i < m->in[f].pf.nr_attrs; i++) {
			struct perf_file_section ids;
			const struct perf_file_header *h = &m->in[f].pf.hdr;

			memcpy(&ids,
			       m->in[f].pf.base + h->attrs.offset + (i + 1) * h->attr_size -
				   sizeof(ids),
			       sizeof(ids));
			for (u64 k = 0; k < ids.size / 8; k++)
				if (ld64(m->in[f].pf.base + ids.offset + k * 8) >= m->next_id)
					m->next_id =
					    ld64(m->in[f].pf.base + ids.offset + k * 8) + 1;
		}
	for (size_t f = 0; f < m->nr_in; f++) {
		if (fold_attrs(m, &m->in[f]))
			return fail(m, -ENOMEM, "%s: %s", paths[f]);
		if (m->in[f].remap && !(m->in[f].sample_type & PERF_SAMPLE_IDENTIFIER))
			return fail(m, -EINVAL, "%s: its event ids cannot be renumbered (%s)",
				    paths[f]);
		m->res->remapped_files += m->in[f].remap;
	}
	/* perf reads several events of one file by their IDENTIFIER, all with sample_id_all
	 * or none (evlist__valid_sample_type, evlist__valid_sample_id_all) */
	for (size_t a = 0; m->nr_attrs > 1 && a < m->nr_attrs; a++)
		if (!(m->attrs[a].attr.sample_type & PERF_SAMPLE_IDENTIFIER) ||
		    m->attrs[a].attr.sample_id_all != m->attrs[0].attr.sample_id_all)
			return fail(
			    m, -EINVAL,
			    "%s: the files' events differ and perf could not tell their "
			    "samples apart in one file (they carry no sample identifier)%.0s",
			    paths[0]);
	return 0;
}

/* Header, ids, attrs, records, features into m->out. Returns 0 or -errno, said. */
static int write_all(struct merge *m, const char *out, char *const *argv)
{
	struct perf_file_header h = {.magic = PERF_FILE_MAGIC, .size = sizeof(h)};
	u64 ids_at = sizeof(h);
	int err = onefile_merge__put(m, &h, sizeof(h));

	for (size_t a = 0; !err && a < m->nr_attrs; a++)
		err = onefile_merge__put(m, m->attrs[a].ids, m->attrs[a].nr_ids * 8);
	h.attr_size = sizeof(struct perf_file_attr);
	h.attrs = (struct perf_file_section){m->pos, m->nr_attrs * h.attr_size};
	for (size_t a = 0; !err && a < m->nr_attrs; a++) {
		struct perf_file_attr fa;

		memset(&fa, 0, sizeof(fa));
		memcpy(fa.attr, &m->attrs[a].attr, PERF_FILE_ATTR_SIZE);
		((struct perf_event_attr *)fa.attr)->size = PERF_FILE_ATTR_SIZE;
		fa.ids = (struct perf_file_section){ids_at, m->attrs[a].nr_ids * 8};
		ids_at += fa.ids.size;
		err = onefile_merge__put(m, &fa, sizeof(fa));
	}
	h.data.offset = m->pos;
	for (size_t i = 0; !err && i < m->nr_idx; i++) {
		static const struct perf_event_header round = {PERF_RECORD_FINISHED_ROUND, 0, 8};
		const struct rec_pos *p = &m->idx[i];

		/* sorted: a round may end anywhere; readers then queue ROUND_RECORDS at most */
		if (i && i % ROUND_RECORDS == 0)
			err = onefile_merge__put(m, &round, sizeof(round));
		err = err ?: write_record(m, &m->in[p->file], p);
		if (p->time && (!m->res->first_time || p->time < m->res->first_time))
			m->res->first_time = p->time;
		if (p->time > m->res->last_time)
			m->res->last_time = p->time;
	}
	m->res->records = m->nr_idx;
	m->res->attrs = m->nr_attrs;
	h.data.size = m->pos - h.data.offset;
	err = err ?: onefile_features__write(m, &h, argv);
	/* No fsync: the per-image files were not synced either (nor does perf record
	 * sync its file), and it made every merged run wait for the disk (4.7 ms on
	 * ext4 here) before the rename and the closing line. */
	if (!err && pwrite(fileno(m->out), &h, sizeof(h), 0) != sizeof(h))
		err = -errno;
	return err ? fail(m, err, "%s: %s", out) : 0;
}

int onefile_merge__files(const char *const *paths, size_t nr, const char *out, char *const *argv,
			 struct onefile_merged *res, char *why, size_t cap)
{
	struct merge m = {.nr_in = nr, .next_id = 1, .res = res, .why = why, .cap = cap};
	int fd, err;

	memset(res, 0, sizeof(*res));
	why[0] = 0;
	m.in = calloc(nr ? nr : 1, sizeof(*m.in));
	if (!m.in)
		return fail(&m, -ENOMEM, "%s: %s", out);
	err = open_inputs(&m, paths);
	for (u32 f = 0; !err && f < nr; f++)
		if (index_input(&m, f))
			err = fail(&m, -ENOMEM, "%s: %s", paths[f]);
	for (size_t a = 0; !err && a < m.nr_attrs; a++)
		if (m.attrs[a].periods_differ &&
		    m.attrs[a].samples) { /* as the library's timers do */
			m.attrs[a].attr.freq = 0;
			m.attrs[a].attr.sample_period =
			    (m.attrs[a].period_sum + m.attrs[a].samples / 2) / m.attrs[a].samples;
		}
	if (!err) {
		qsort(m.idx, m.nr_idx, sizeof(*m.idx), rec_pos__cmp);
		fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		m.out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!m.out) {
			err = fail(&m, -errno, "%s: %s", out);
			if (fd >= 0)
				close(fd);
		} else {
			setvbuf(m.out, NULL, _IOFBF, 1 << 20);
			err = write_all(&m, out, argv);
			errno = 0;
			if (fclose(m.out) && !err)
				err = fail(&m, errno ? -errno : -EIO, "%s: %s", out);
			if (err)
				unlink(out);
		}
	}
	for (size_t f = 0; f < nr; f++) {
		perf_file__close(&m.in[f].pf);
		free(m.in[f].map);
		free(m.in[f].attr_to);
	}
	for (size_t a = 0; a < m.nr_attrs; a++)
		free(m.attrs[a].ids);
	free(m.attrs);
	free(m.idx);
	free(m.in);
	return err;
}
