/* SPDX-License-Identifier: MIT */
/*
 * file_summary.c - what one profile holds, for the launcher's closing
 * lines: its process (the first COMM record), its command (the CMDLINE
 * feature, without the recorder's own first word), its samples and lost
 * samples. Reads the header and walks the record headers of the data section
 * only.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autoprof/perf_file.h"
#include "common.h"
#include "launcher.h"

/* The feature section of bit @feat, or false (sections follow the data, in bit order). */
static bool feature(const uint8_t *p, size_t size, const struct perf_file_header *h, int feat,
		    struct perf_file_section *out)
{
	uint64_t at = h->data.offset + h->data.size;
	int idx = 0;

	if (!(h->adds_features[feat / 64] >> (feat % 64) & 1))
		return false;
	for (int b = 0; b < feat; b++)
		idx += (int)(h->adds_features[b / 64] >> (b % 64) & 1);
	at += (uint64_t)idx * sizeof(*out);
	if (at > size || size - at < sizeof(*out))
		return false;
	memcpy(out, p + at, sizeof(*out));
	return out->offset <= size && out->size <= size - out->offset;
}

/* The CMDLINE feature as one line: arguments joined by spaces, "autoprof" dropped. */
static void read_cmdline(const uint8_t *p, const struct perf_file_section *s, char *out, size_t cap)
{
	const uint8_t *c = p + s->offset, *end = c + s->size;
	uint32_t n, len;
	size_t used = 0;

	out[0] = 0;
	if (end - c < 4)
		return;
	memcpy(&n, c, 4);
	c += 4;
	for (uint32_t i = 0; i < n && end - c >= 4; i++) {
		const char *arg;

		memcpy(&len, c, 4);
		c += 4;
		if ((size_t)(end - c) < len)
			break;
		arg = (const char *)c;
		c += len;
		if (i == 0 && !strncmp(arg, "autoprof", len))
			continue;
		if (used + 1 < cap)
			used += (size_t)snprintf(out + used, cap - used, "%s%.*s", used ? " " : "",
						 (int)strnlen(arg, len), arg);
	}
	if (used >= cap)
		out[cap - 1] = 0;
}

static int cmp_id(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Is @id one of the CPU-time event's @ids (sorted)? */
static bool is_clock_id(const uint64_t *ids, size_t n, uint64_t id)
{
	return bsearch(&id, ids, n, sizeof(*ids), cmp_id) != NULL;
}

/*
 * The id of the file's first event when it counts CPU time in ns (cpu-clock,
 * task-clock: its samples' periods add up to the time they stand for), else 0.
 */
static uint64_t clock_event_id(const uint8_t *p, size_t size, const struct perf_file_header *h,
			       uint64_t *period, uint64_t **ids, size_t *nr_ids)
{
	struct perf_event_attr ea;
	struct perf_file_attr a;
	uint32_t type;
	uint64_t config, id;
	size_t n;

	*ids = NULL;
	*nr_ids = 0;
	if (h->attr_size != sizeof(a) || h->attrs.size < sizeof(a) || h->attrs.offset > size ||
	    size - h->attrs.offset < sizeof(a))
		return 0;
	memcpy(&a, p + h->attrs.offset, sizeof(a));
	memcpy(&type, a.attr, 4);
	memcpy(&config, a.attr + 8, 8);
	if (type != PERF_TYPE_SOFTWARE ||
	    (config != PERF_COUNT_SW_CPU_CLOCK && config != PERF_COUNT_SW_TASK_CLOCK) ||
	    a.ids.size < 8 || a.ids.offset > size || size - a.ids.offset < a.ids.size)
		return 0;
	memcpy(&id, p + a.ids.offset, 8);
	n = (size_t)(a.ids.size / 8);
	if ((*ids = malloc(n * sizeof(**ids)))) {
		memcpy(*ids, p + a.ids.offset, n * sizeof(**ids));
		qsort(*ids, n, sizeof(**ids), cmp_id);
		*nr_ids = n;
	}
	memset(&ea, 0, sizeof(ea));
	memcpy(&ea, a.attr, sizeof(ea) < sizeof(a.attr) ? sizeof(ea) : sizeof(a.attr));
	/* The ns one sample stands for: its period, or one tick of its frequency. */
	*period =
	    ea.freq ? (ea.sample_freq ? 1000000000ULL / ea.sample_freq : 0) : ea.sample_period;
	return id;
}

/* Does this run merge samples (AUTOPROF_AGGREGATE, --aggregate)? */
static bool merging(void)
{
	return launcher__options()->aggregate;
}

#define SUMMARY_DROP_BYTES (8u << 20) /* pages handed back every 8 MiB read (a power of 2) */
/* Fill @s from @path: with @counts its samples and lost samples too (a pass over the data). */
static int summarise(const char *path, struct file_summary *s, bool counts)
{
	struct perf_file_header h;
	struct perf_file_section sec;
	const uint8_t *p;
	uint64_t pos, end, dropped;
	struct stat st;
	uint64_t clock_id, period = 0, *clock_ids = NULL;
	size_t nr_clock_ids = 0;
	bool one_attr;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(h)) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	memcpy(&h, p, sizeof(h));
	if (h.magic != PERF_FILE_MAGIC || h.data.offset > (uint64_t)st.st_size) {
		munmap((void *)p, (size_t)st.st_size);
		return -1;
	}
	clock_id = clock_event_id(p, (size_t)st.st_size, &h, &period, &clock_ids, &nr_clock_ids);
	/* One attr (outside mode: one event per CPU, each with its id): every sample is its. */
	one_attr = h.attrs.size == h.attr_size;
	end = h.data.offset + h.data.size;
	if (end > (uint64_t)st.st_size || end < h.data.offset)
		end = (uint64_t)st.st_size;
	(void)madvise((void *)p, (size_t)st.st_size, MADV_SEQUENTIAL);
	for (pos = h.data.offset, dropped = 0; pos + sizeof(struct perf_event_header) <= end;) {
		struct perf_event_header eh;
		uint64_t v;

		/* Hand back the pages read (a file of 900 MB is not held resident). */
		if (pos - dropped >= SUMMARY_DROP_BYTES) {
			uint64_t to = pos & ~(uint64_t)(SUMMARY_DROP_BYTES - 1);

			(void)madvise((void *)(p + dropped), (size_t)(to - dropped), MADV_DONTNEED);
			dropped = to;
		}
		memcpy(&eh, p + pos, sizeof(eh));
		if (eh.size < sizeof(eh) || pos + eh.size > end)
			break;
		if (eh.type == PERF_RECORD_SAMPLE) {
			/* IDENTIFIER, IP, TID, TIME, CPU, PERIOD (record.c's layout) */
			memcpy(&v, p + pos + 8, 8);
			/* A sample of another event (off-CPU, memory): counted apart. */
			if (clock_id && !one_attr && nr_clock_ids && eh.size >= 16 &&
			    !is_clock_id(clock_ids, nr_clock_ids, v)) {
				s->other++;
				pos += eh.size;
				continue;
			}
			s->samples++;
			if (clock_id && eh.size >= 56 &&
			    (one_attr || nr_clock_ids || v == clock_id)) {
				memcpy(&v, p + pos + 48, 8);
				s->clock_ns += v;
				s->clock_samples++;
			}
		} else if (eh.type == PERF_RECORD_LOST && eh.size >= 24) {
			memcpy(&v, p + pos + 16, 8);
			s->lost += v;
		} else if (eh.type == PERF_RECORD_LOST_SAMPLES && eh.size >= 16) {
			memcpy(&v, p + pos + 8, 8);
			s->lost += v;
		} else if (eh.type == PERF_RECORD_COMM && !s->pid && eh.size >= 17) {
			uint32_t pid;

			memcpy(&pid, p + pos + 8, 4);
			s->pid = (int)pid;
			if (!counts)
				break;
		}
		pos += eh.size;
	}
	/* An aggregated file (AUTOPROF_AGGREGATE): each record merges samples of one
	 * stack, its period their sum; count the samples, as autoprof-report does. */
	if (merging() && period && s->clock_samples &&
	    s->clock_ns / period > s->clock_samples * 11 / 10) {
		uint64_t n = (s->clock_ns + period / 2) / period;

		s->samples += n - s->clock_samples;
		s->clock_samples = n;
	}
	if (feature(p, (size_t)st.st_size, &h, PERF_FEAT_CMDLINE, &sec))
		read_cmdline(p, &sec, s->cmd, sizeof(s->cmd));
	munmap((void *)p, (size_t)st.st_size);
	free(clock_ids);
	return 0;
}

/*
 * Fill @s from the profile at @path. Returns 0, or -1 when it is not a
 * perf.data file this can read (then only the name is known).
 */
int file_summary__read(const char *path, struct file_summary *s)
{
	return summarise(path, s, true);
}

int file_summary__read_head(const char *path, struct file_summary *s)
{
	return summarise(path, s, false);
}
