/* SPDX-License-Identifier: MIT */
/*
 * record.c - lay out the records we write, in the file's sample format.
 *
 * Every attr we write has sample_type AUTOPROF_SAMPLE_TYPE and sample_id_all,
 * so each non-sample record ends with struct autoprof_sample_id. Each builder
 * writes into buf (cap bytes) and returns the record size, a multiple of 8, or
 * 0 when it does not fit. All are async-signal-safe.
 */
#include <string.h>

#include "handler.h"

static void *put_trailer(void *p, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct autoprof_sample_id id = {
	    .pid = pid, .tid = tid, .time = time, .cpu = 0, .res = 0, .id = AP_SAMPLE_ID};

	memcpy(p, &id, sizeof(id));
	return (char *)p + sizeof(id);
}

/*
 * Copy s (at most padded - 1 bytes of it, never read past them) with its
 * NUL, zero-padded to padded bytes; returns padded.
 */
static size_t put_string(void *p, const char *s, size_t padded)
{
	size_t n = strnlen(s, padded - 1);

	memcpy(p, s, n);
	memset((char *)p + n, 0, padded - n);
	return padded;
}

/* The header of a record of @size bytes at @buf; false (nothing written) past @cap. */
static bool put_header(void *buf, size_t cap, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = (uint16_t)size};

	if (size > cap || size > UINT16_MAX)
		return false;
	memcpy(buf, &h, sizeof(h));
	return true;
}

/* A SAMPLE (of kernel or user code); chain holds nr entries, with context markers. */
size_t record__sample(void *buf, size_t cap, bool kernel, uint64_t ip, uint32_t pid, uint32_t tid,
		      uint64_t time, uint32_t cpu, uint64_t period, const uint64_t *chain,
		      unsigned nr)
{
	size_t size = sizeof(struct perf_event_header) + 7 * sizeof(uint64_t) + nr * 8;
	uint64_t *p = (uint64_t *)((struct perf_event_header *)buf + 1);

	if (!put_header(buf, cap, PERF_RECORD_SAMPLE,
			kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER, size))
		return 0;
	*p++ = AP_SAMPLE_ID;		  /* IDENTIFIER */
	*p++ = ip;			  /* IP */
	*p++ = (uint64_t)tid << 32 | pid; /* TID: u32 pid, u32 tid */
	*p++ = time;			  /* TIME */
	*p++ = cpu;			  /* CPU: u32 cpu, u32 res */
	*p++ = period;			  /* PERIOD */
	*p++ = nr;			  /* CALLCHAIN */
	memcpy(p, chain, nr * sizeof(uint64_t));
	return size;
}

size_t record__comm(void *buf, size_t cap, uint32_t pid, uint32_t tid, const char *comm,
		    uint64_t time, bool exec)
{
	size_t name = PERF_ALIGN8(strnlen(comm, 15) + 1);
	size_t size = sizeof(struct perf_record_comm) + name + sizeof(struct autoprof_sample_id);
	struct perf_record_comm *r = buf;

	if (!put_header(r, cap, PERF_RECORD_COMM,
			PERF_RECORD_MISC_USER | (exec ? PERF_RECORD_MISC_COMM_EXEC : 0), size))
		return 0;
	r->pid = pid;
	r->tid = tid;
	put_string(r->comm, comm, name); /* at most 15 bytes: name is 8 or 16 */
	put_trailer(r->comm + name, pid, tid, time);
	return size;
}

/*
 * An MMAP2 of a user mapping; with build_id_size > 0 it carries the build id
 * (PERF_RECORD_MISC_MMAP_BUILD_ID) in place of the device and inode.
 */
size_t record__mmap2(void *buf, size_t cap, uint32_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino, uint32_t prot,
		     uint32_t flags, const char *filename, uint64_t time, const uint8_t *build_id,
		     unsigned build_id_size)
{
	size_t name = PERF_ALIGN8(strlen(filename) + 1);
	size_t size = sizeof(struct perf_record_mmap2) + name + sizeof(struct autoprof_sample_id);
	struct perf_record_mmap2 *r = buf;

	if (size > cap || size > UINT16_MAX)
		return 0;
	memset(r, 0, sizeof(*r));
	put_header(r, cap, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, size);
	r->pid = pid;
	r->tid = pid;
	r->start = start;
	r->len = len;
	r->pgoff = pgoff;
	if (build_id_size && build_id_size <= sizeof(r->build_id)) {
		/* The object names itself: perf finds it by build id, even when
		 * the file ends before the build-id feature section. */
		r->header.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		r->build_id_size = (uint8_t)build_id_size;
		memcpy(r->build_id, build_id, build_id_size);
	} else {
		r->maj = maj;
		r->min = min;
		r->ino = ino;
	}
	r->prot = prot;
	r->flags = flags;
	put_string(r->filename, filename, name);
	put_trailer(r->filename + name, pid, pid, time);
	return size;
}

size_t record__lost(void *buf, size_t cap, uint32_t pid, uint32_t tid, uint64_t time, uint64_t lost)
{
	size_t size = sizeof(struct perf_record_lost) + sizeof(struct autoprof_sample_id);
	struct perf_record_lost *r = buf;

	if (!put_header(r, cap, PERF_RECORD_LOST, PERF_RECORD_MISC_USER, size))
		return 0;
	r->id = AP_SAMPLE_ID;
	r->lost = lost;
	put_trailer(r + 1, pid, tid, time);
	return size;
}

/* THROTTLE or UNTHROTTLE (type), at time. */
size_t record__throttle(void *buf, size_t cap, uint32_t type, uint32_t pid, uint32_t tid,
			uint64_t time)
{
	size_t size = sizeof(struct perf_record_throttle) + sizeof(struct autoprof_sample_id);
	struct perf_record_throttle *r = buf;

	if (!put_header(r, cap, type, PERF_RECORD_MISC_USER, size))
		return 0;
	r->time = time;
	r->id = AP_SAMPLE_ID;
	r->stream_id = AP_SAMPLE_ID;
	put_trailer(r + 1, pid, tid, time);
	return size;
}

/*
 * The kernel's text as perf synthesizes it: an MMAP of "[kernel.kallsyms]_text"
 * for pid -1 whose pgoff is the address of _text (perf relocates kallsyms by it).
 */
size_t record__kernel_mmap(void *buf, size_t cap, uint64_t start, uint64_t len)
{
	static const char name[] = "[kernel.kallsyms]_text";
	size_t fname = PERF_ALIGN8(sizeof(name));
	size_t size = sizeof(struct perf_record_mmap) + fname + sizeof(struct autoprof_sample_id);
	struct perf_record_mmap *r = buf;

	if (size > cap)
		return 0;
	memset(r, 0, sizeof(*r));
	put_header(r, cap, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, size);
	r->pid = UINT32_MAX;
	r->tid = 0;
	r->start = start;
	r->len = len;
	r->pgoff = start;
	put_string(r->filename, name, fname);
	put_trailer(r->filename + fname, UINT32_MAX, 0, 0);
	return size;
}
