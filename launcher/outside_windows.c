/* SPDX-License-Identifier: MIT */
/*
 * outside_windows.c - AUTOPROF_WINDOW in outside mode (outside.h): one
 * complete perf.data per window of time, named as the library names them
 * (FILE.<UTC start of the window>, common/window_stamp.c), the oldest beyond
 * AUTOPROF_KEEP removed.
 *
 * Windows follow each other from the command's exec (or the attach). As in
 * the library, a window ends at the first sample past its end: the file is
 * finished (features) and the next one starts with what a reader needs to
 * name that sample: the side-band records (MMAP/MMAP2, COMM, FORK) of every
 * process and thread still alive, kept here as the rings deliver them (an
 * exec drops its process's maps, an exit its records). A window in which
 * nothing was sampled leaves no file. Not async-signal-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outside.h"

/* The pid at 8 and tid at 12 of MMAP, MMAP2 and COMM; FORK and EXIT: pid 8, tid 16. */
static void ids_of(const struct perf_event_header *h, uint32_t *pid, uint32_t *tid)
{
	const char *p = (const char *)h;

	memcpy(pid, p + 8, 4);
	memcpy(tid, p + ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) ? 16 : 12),
	       4);
}

/* Drop the kept records that @drop says so of; keep the others in order. */
static void sweep(struct outside_windows *w,
		  bool (*drop)(const struct perf_event_header *, uint32_t, uint32_t), uint32_t pid,
		  uint32_t tid)
{
	size_t out = 0;

	for (size_t off = 0; off < w->state_len;) {
		const struct perf_event_header *h = (const void *)(w->state + off);
		size_t size = h->size;

		if (!drop(h, pid, tid)) {
			memmove(w->state + out, h, size);
			out += size;
		}
		off += size;
	}
	w->state_len = out;
}

static bool of_process(const struct perf_event_header *h, uint32_t pid, uint32_t tid)
{
	uint32_t p, t;

	(void)tid;
	ids_of(h, &p, &t);
	return p == pid;
}

static bool maps_of_process(const struct perf_event_header *h, uint32_t pid, uint32_t tid)
{
	return (h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2) &&
	       of_process(h, pid, tid);
}

static bool of_thread(const struct perf_event_header *h, uint32_t pid, uint32_t tid)
{
	uint32_t p, t;

	(void)pid;
	ids_of(h, &p, &t);
	return t == tid && (h->type == PERF_RECORD_COMM || h->type == PERF_RECORD_FORK);
}

static bool name_of_thread(const struct perf_event_header *h, uint32_t pid, uint32_t tid)
{
	return h->type == PERF_RECORD_COMM && of_thread(h, pid, tid);
}

/* pout's note: keep the records a window's file starts with (see the top). */
static void note(void *ctx, const struct perf_event_header *h)
{
	struct outside_windows *w = ctx;
	uint32_t pid, tid;

	if (w->replaying || h->size < 24)
		return;
	switch (h->type) {
	case PERF_RECORD_EXIT:
		ids_of(h, &pid, &tid);
		sweep(w, pid == tid ? of_process : of_thread, pid, tid);
		return;
	case PERF_RECORD_COMM:
		ids_of(h, &pid, &tid);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			sweep(w, maps_of_process, pid, tid); /* the old image's maps */
		sweep(w, name_of_thread, pid, tid);	     /* its former name */
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
		break;
	default:
		return;
	}
	if (w->state_len + h->size > w->state_cap) {
		size_t cap = w->state_cap ? w->state_cap * 2 : 65536;
		char *p;

		while (cap < w->state_len + h->size)
			cap *= 2;
		p = realloc(w->state, cap);
		if (!p)
			return;
		w->state = p;
		w->state_cap = cap;
	}
	memcpy(w->state + w->state_len, h, h->size);
	w->state_len += h->size;
}

/* base + "." + @stamp into @out; false when too long. */
static bool join(const struct outside_windows *w, const char *stamp, char *out, size_t cap)
{
	return snprintf(out, cap, "%s.%s", w->base, stamp) < (int)cap;
}

/* Remember the new file's stamp; remove the oldest file beyond AUTOPROF_KEEP. */
static void keep(struct outside_windows *w, const char *stamp)
{
	char path[sizeof(w->base) + AP_STAMP_LEN + 2];

	if (!w->keep || !w->kept)
		return;
	if (w->kept_count == w->keep) {
		if (join(w, w->kept[w->kept_head], path, sizeof(path)))
			unlink(path);
		w->kept_head = (w->kept_head + 1) % w->keep;
		w->kept_count--;
	}
	memcpy(w->kept[(w->kept_head + w->kept_count) % w->keep], stamp, AP_STAMP_LEN);
	w->kept_count++;
}

int outside_windows__init(struct outside_windows *w, const struct ap_config *cfg, const char *path,
			  uint64_t now, char *out, size_t cap)
{
	char stamp[AP_STAMP_LEN];

	memset(w, 0, sizeof(*w));
	w->len = cfg->window_ns;
	if (!w->len)
		return snprintf(out, cap, "%s", path) < (int)cap ? 0 : -ENAMETOOLONG;
	if (snprintf(w->base, sizeof(w->base), "%s", path) >= (int)sizeof(w->base))
		return -ENAMETOOLONG;
	w->keep = cfg->keep;
	if (w->keep && !(w->kept = calloc(w->keep, AP_STAMP_LEN)))
		return -ENOMEM;
	w->first = now;
	w->end = now + w->len;
	window_stamp__utc(now, stamp);
	if (!join(w, stamp, out, cap))
		return -ENAMETOOLONG;
	keep(w, stamp);
	return 0;
}

void outside_windows__attach(struct outside_windows *w, struct perf_out *o)
{
	if (!w->len)
		return;
	o->note = note;
	o->note_ctx = w;
}

int outside_windows__rotate(struct outside_windows *w, struct perf_out *o, uint64_t time)
{
	char stamp[AP_STAMP_LEN], path[sizeof(w->base) + AP_STAMP_LEN + 2];
	uint64_t start = w->first + (time - w->first) / w->len * w->len;
	int err;

	w->end = start + w->len;
	window_stamp__utc(start, stamp);
	if (!join(w, stamp, path, sizeof(path)))
		return -ENAMETOOLONG;
	err = perf_out__rotate(o, path);
	if (o->fd < 0)
		return err ? err : -EBADF;
	w->replaying = true;
	if (w->state_len)
		perf_out__add(o, w->state, w->state_len);
	w->replaying = false;
	keep(w, stamp);
	return err;
}

void outside_windows__free(struct outside_windows *w)
{
	free(w->state);
	free(w->kept);
	w->state = NULL;
	w->kept = NULL;
}
