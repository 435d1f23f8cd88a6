/* SPDX-License-Identifier: MIT */
/*
 * attach.c - -p/-t: the targets, their threads, and what the process was
 * before the attach as records (perf record's synthesized COMM and MMAP2):
 * the kernel reports only what happens after the events are opened.
 * Not async-signal-safe.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "autoprof/perf_file.h"
#include "common.h"
#include "handler/handler.h"
#include "outside.h"

int attach__parse(const char *list, pid_t *out, int cap, const char *flag)
{
	const char *p = list;
	int n = 0;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v <= 0 || v > 0x3fffffff || (*end && *end != ',') || n == cap) {
			fprintf(stderr,
				"autoprof: %s '%s': expected a list of ids, such as 1234,5678\n",
				flag, list);
			return -1;
		}
		out[n++] = (pid_t)v;
		p = *end ? end + 1 : end;
	}
	if (!n)
		fprintf(stderr, "autoprof: %s: no id given\n", flag);
	return n ? n : -1;
}

int attach__threads(pid_t pid, pid_t *out, int cap)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < cap)
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			out[n++] = (pid_t)atoi(e->d_name);
	closedir(d);
	return n;
}

/* A record with @body (@len bytes) and the sample_id trailer of thread @pid/@tid. */
static void emit(struct perf_out *o, struct unwind_user *uw, uint32_t type, uint16_t misc,
		 const void *body, size_t len, uint32_t pid, uint32_t tid, uint64_t time)
{
	char rec[8 + 4200 + sizeof(struct autoprof_sample_id)];
	struct perf_event_header *h = (void *)rec;
	struct autoprof_sample_id id = {.pid = pid, .tid = tid, .time = time, .id = o->ids[0]};
	size_t body_len = PERF_ALIGN8(len);

	if (body_len > 4200)
		return;
	memset(rec, 0, sizeof(rec));
	memcpy(rec + 8, body, len);
	memcpy(rec + 8 + body_len, &id, sizeof(id));
	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)(8 + body_len + sizeof(id));
	unwind_user__record(uw, h, time);
	perf_out__add(o, rec, h->size);
}

static void synth_comms(struct perf_out *o, pid_t pid, struct unwind_user *uw, uint64_t t)
{
	pid_t tids[4096];
	int n = attach__threads(pid, tids, 4096);

	for (int i = 0; i < n; i++) {
		struct {
			uint32_t pid, tid;
			char comm[24];
		} c = {(uint32_t)pid, (uint32_t)tids[i], ""};
		char path[64];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tids[i]);
		len = raw_syscall__read_file(path, c.comm, 16);
		if (len <= 0)
			continue;
		c.comm[len - 1 < 15 ? len - 1 : 15] = 0; /* its newline */
		emit(o, uw, PERF_RECORD_COMM, 0, &c, 8 + strlen(c.comm) + 1, (uint32_t)pid,
		     (uint32_t)tids[i], t);
	}
}

/* The executable mappings of /proc/PID/maps as MMAP2 records. */
static void synth_maps(struct perf_out *o, pid_t pid, struct unwind_user *uw, uint64_t t)
{
	char path[64], line[4608];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct {
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_gen;
			uint32_t prot, flags;
			char name[4096];
		} m;
		unsigned long long lo, hi, off, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;

		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &maj,
			   &min, &ino, &name_at) < 7 ||
		    perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(m.name, sizeof(m.name), "%s", name_at ? line + name_at : "//anon");
		if (!m.name[0])
			snprintf(m.name, sizeof(m.name), "//anon");
		m.pid = m.tid = (uint32_t)pid;
		m.start = lo;
		m.len = hi - lo;
		m.pgoff = off;
		m.maj = maj;
		m.min = min;
		m.ino = ino;
		m.prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) |
			 (perms[1] == 'w' ? PROT_WRITE : 0);
		m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		perf_out__note_file(o, m.name);
		emit(o, uw, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &m,
		     offsetof(__typeof__(m), name) + strlen(m.name) + 1, (uint32_t)pid,
		     (uint32_t)pid, t);
	}
	fclose(f);
}

/* Time 0, as perf synthesizes them: what was there before the first sample. */
void attach__synthesize(struct perf_out *o, pid_t pid, struct unwind_user *uw)
{
	uint64_t t = 0;

	synth_comms(o, pid, uw, t);
	synth_maps(o, pid, uw, t);
}

/*
 * Where the kernel's map ends, as perf's does (and the library's
 * mappings.c): at the lowest module's address, else at the top.
 */
static uint64_t kernel_map_end(void)
{
	FILE *f = fopen("/proc/modules", "re");
	uint64_t end = ~0ULL;
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		const char *at = strrchr(line, ' ');
		unsigned long long addr;

		if (at && sscanf(at, " 0x%llx", &addr) == 1 && addr && addr < end)
			end = addr;
	}
	if (f)
		fclose(f);
	return end;
}

bool attach__kernel_map(struct perf_out *o)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	uint64_t text = 0, end = kernel_map_end();
	char line[512], rec[256];
	size_t n;

	while (f && !text && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, "_text"))
			text = addr;
	}
	if (f)
		fclose(f);
	if (!text || end <= text)
		return false;
	/* The library's record (handler/record.c), with this file's event id. */
	n = record__kernel_mmap(rec, sizeof(rec), text, end - text);
	if (!n)
		return false;
	memcpy(rec + n - 8, &o->ids[0], 8);
	perf_out__add(o, rec, n);
	return true;
}
