/* SPDX-License-Identifier: MIT */
/*
 * file_features.c - the feature sections perf reads after the data: command
 * line, event names, sample time range and the build ids of every loaded
 * object (so perf checks it opens the same binary); the host's (file_host.c)
 * and the machine's (file_machine.c) come from their files.
 *
 * Laid out when the file is opened and again at the end (in a forked child,
 * before exec, at _exit: maybe inside a program's signal handler that
 * interrupted malloc, so in memory of our own: blob.h, handler/pages.h); the
 * writer writes them after the data at every append.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blob.h"
#include "internal.h"

/*
 * The recording command, as perf writes its own: "autoprof" and the
 * program's arguments (hotspot shows the words after the first as the
 * command; perf report --header shows them all).
 */
static void feat_cmdline(struct blob *b)
{
	char buf[8192];
	ssize_t len = raw_syscall__read_file("/proc/self/cmdline", buf, sizeof(buf));
	uint32_t n = 1;

	if (len > 0 && buf[len - 1])
		buf[len - 1] = 0; /* cut short: end the last argument */
	for (ssize_t i = 0; i < len; i++)
		n += buf[i] == 0;
	blob_u32(b, n);
	blob_string(b, "autoprof");
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
		blob_string(b, buf + i);
}

static void feat_event_desc(struct blob *b, const struct writer *w)
{
	blob_u32(b, (uint32_t)w->nr_events);
	blob_u32(b, PERF_FILE_ATTR_SIZE);
	for (int i = 0; i < w->nr_events; i++) {
		blob_put(b, &w->events[i].attr, PERF_FILE_ATTR_SIZE);
		blob_u32(b, 1);
		blob_string(b, w->events[i].name);
		blob_u64(b, w->events[i].id);
	}
}

/*
 * The file names of the objects the last layout named: an object still
 * loaded at the same address under the same name is not resolved again
 * (realpath() is a readlink per path component: 32 system calls a layout
 * for a no-op C program, 4 objects).
 */
struct known_path {
	uintptr_t addr;
	char *name, *path;
};
static struct known_path *known;
static size_t nr_known, cap_known;

/* A copy of s in memory of our own (strdup would take libc's heap: see blob.h); NULL when out
 * of memory. */
static char *copy(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pages__alloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

/* The address of info's first executable segment (0: none). */
static uintptr_t first_text(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X))
			return info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	return 0;
}

/* The file of the object info names, into path; false when there is none (deleted since). */
static bool object_path(const struct dl_phdr_info *info, char *path)
{
	struct known_path *k;

	for (size_t i = 0; i < nr_known; i++)
		if (known[i].addr == info->dlpi_addr && !strcmp(known[i].name, info->dlpi_name)) {
			strcpy(path, known[i].path);
			return true;
		}
	if (strncmp(info->dlpi_name, "linux-vdso", 10) &&
	    strncmp(info->dlpi_name, "linux-gate", 10) &&
	    mappings__file_at(first_text(info), path, PATH_MAX)) {
		/* the kernel's name, from the reading the file's records came from */
	} else if (!info->dlpi_name[0]) {
		ssize_t n = readlink("/proc/self/exe", path, PATH_MAX - 1);

		if (n <= 0)
			return false;
		path[n] = 0;
	} else if (!strncmp(info->dlpi_name, "linux-vdso", 10) ||
		   !strncmp(info->dlpi_name, "linux-gate", 10)) {
		strcpy(path, "[vdso]"); /* as perf names it: readers find its copy by build id */
	} else if (!realpath(info->dlpi_name, path)) {
		return false;
	}
	if (nr_known == cap_known) {
		size_t cap = cap_known ? 2 * cap_known : 16;
		struct known_path *more = pages__realloc(known, cap * sizeof(*known));

		if (!more)
			return true;
		known = more;
		cap_known = cap;
	}
	k = &known[nr_known];
	k->addr = info->dlpi_addr;
	k->name = copy(info->dlpi_name);
	k->path = copy(path);
	if (k->name && k->path)
		nr_known++;
	else {
		pages__free(k->name);
		pages__free(k->path);
	}
	return true;
}

/* One BUILD_ID entry per loaded object that has a GNU build-id note. */
static int add_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct blob *b = data;
	char path[PATH_MAX];
	(void)size;

	if (!object_path(info, path))
		return 0; /* objects deleted since */

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const char *name = p + sizeof(*nh);
			const unsigned char *desc =
			    (const void *)(name + ((nh->n_namesz + 3) & ~3u));

			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
			if (p > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= 20) {
				blob_build_id(b, path, desc, nh->n_descsz);
				return 0;
			}
		}
	}
	return 0;
}

/*
 * The BUILD_ID body as last laid out, and the loader's counts of objects
 * loaded and unloaded then: while they stay the same (no dlopen, no
 * dlclose), the body is too, and the objects' notes and program headers are
 * not read again (in a forked child, whose file-backed pages the kernel maps
 * anew, that was a page fault each).
 */
static struct blob bids;
static unsigned long long bids_adds, bids_subs;

static int loader_counts(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *c = data;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the counts are in every entry: the first is enough */
}

/* Append the BUILD_ID body of the objects loaded now to b. */
static void build_ids(struct blob *b)
{
	unsigned long long c[2] = {0, 0};

	dl_iterate_phdr(loader_counts, c);
	if (!c[0] || !bids.len || c[0] != bids_adds || c[1] != bids_subs) {
		struct blob fresh = {0};

		dl_iterate_phdr(add_build_id, &fresh);
		if (fresh.err) {
			blob_free(&fresh);
			dl_iterate_phdr(add_build_id, b); /* out of memory: not kept */
			return;
		}
		blob_free(&bids);
		bids = fresh;
		bids_adds = c[0];
		bids_subs = c[1];
	}
	blob_put(b, bids.p, bids.len);
}

/*
 * The host's features (file_host.c) and the command line, read once per
 * image (uname, sysconf's /sys files, /proc/cpuinfo, sysinfo,
 * /proc/self/cmdline: 20 system calls a layout; the command line read again
 * at the end of a forked child's file); CLOCK_DATA, a reading of
 * the clocks, is made at each layout.
 */
static struct blob host[PERF_FEAT_PMU_CAPS + 1], cmdline;
static pid_t cmdline_pid; /* the process whose command line cmdline holds */
static signed char host_said[PERF_FEAT_PMU_CAPS + 1]; /* 0 unknown, 1 said, -1 not the host's */

/* Append the host's feature feat to b as file_host__feature() would; false when not the host's. */
static bool host_feature(int feat, struct blob *b)
{
	if (feat < 0 || feat > PERF_FEAT_PMU_CAPS || feat == PERF_FEAT_CLOCK_DATA)
		return file_host__feature(feat, b);
	if (!host_said[feat]) {
		struct blob c = {0};

		if (!file_host__feature(feat, &c))
			host_said[feat] = -1;
		else if (c.err)
			return file_host__feature(feat, b); /* out of memory: not kept */
		else {
			host[feat] = c;
			host_said[feat] = 1;
		}
	}
	if (host_said[feat] < 0)
		return false;
	blob_put(b, host[feat].p, host[feat].len);
	return true;
}

/* The longest machine description in the features rewritten after every flush. */
#define MACHINE_EARLY_MAX 8192
#define NR_FEATURES	  MACHINE_NR_FEATURES

/*
 * Lay out every feature body into a new writer_features (build ids of the
 * objects loaded now). Returns it, or NULL (out of memory). Not
 * async-signal-safe.
 */
static struct writer_features *prepare(struct writer *w, bool final)
{
	struct writer_features *p = pages__alloc(sizeof(*p));
	struct blob body = {0};

	if (!p)
		return NULL;
	p->sample_time = SIZE_MAX;
	for (int i = 0; i < NR_FEATURES; i++) {
		size_t start = body.len;
		bool have = true;

		switch (file_machine__feature_order[i]) {
		case PERF_FEAT_BUILD_ID:
			build_ids(&body);
			break;
		case PERF_FEAT_CMDLINE:
			/* A forked child's file reads its own at its end: nginx or
			 * postgres children write their title over argv. */
			if (!cmdline.len || (final && cmdline_pid != getpid())) {
				cmdline.len = 0;
				feat_cmdline(&cmdline);
				cmdline_pid = getpid();
			}
			blob_put(&body, cmdline.p, cmdline.len);
			break;
		case PERF_FEAT_EVENT_DESC:
			feat_event_desc(&body, w);
			break;
		case PERF_FEAT_SAMPLE_TIME:
			p->sample_time = body.len;
			blob_u64(&body, 0); /* filled in by the writer at each write */
			blob_u64(&body, 0);
			break;
		default: /* the host's and the machine's description */
			have = host_feature(file_machine__feature_order[i], &body) ||
			       file_machine__feature(file_machine__feature_order[i], &body,
						     final ? 0 : MACHINE_EARLY_MAX);
			break;
		}
		if (!have)
			continue;
		p->rel[p->n] = start;
		p->size[p->n] = body.len - start;
		p->n++;
		p->bits[file_machine__feature_order[i] / 64] |=
		    1ULL << (file_machine__feature_order[i] % 64);
	}
	file_machine__keep(); /* the machine's description for the next images */
	if (body.err) {
		blob_free(&body);
		pages__free(p);
		return NULL;
	}
	p->body = body.p;
	p->len = body.len;
	return p;
}

static void release(const struct writer_features *p)
{
	if (p) {
		pages__free(p->body);
		pages__free(p);
	}
}

/*
 * A set the writer no longer has, freed RETIRED installs later: a program's
 * signal handler that execs (or _exits) may have interrupted an append of
 * the same thread, which holds the set it read (the writer's lock is taken
 * over by its own thread); the exec path installs twice (the finish, a
 * failed exec's new file), and the interrupted append reads its set once it
 * resumes. Freed at once (unmapped), that read was a SIGSEGV (sigheap
 * execmiss with --memory --memory-interval 1); in libc's heap it was a read
 * of freed memory.
 */
#define RETIRED 4
static void retire(const struct writer_features *p)
{
	static const struct writer_features *ring[RETIRED];
	static unsigned next;

	if (!p)
		return;
	release(ring[next % RETIRED]);
	ring[next++ % RETIRED] = p;
}

/*
 * Give the writer the features as they are now, so that every append from
 * here on leaves a finished file (@final: every section, however long; else
 * a long machine description waits for the final set). They are written by
 * the caller's next step (the first records, the finish), not here: five
 * system calls fewer each. Returns 0 or -ENOMEM. Not async-signal-safe.
 */
static int install(struct writer *w, bool final)
{
	static const struct writer_features *current; /* the last set given to a writer */
	struct writer_features *p = prepare(w, final);
	const struct writer_features *old;

	if (!p)
		return -ENOMEM;
	old = writer__set_features(w, p, false);
	if (old == p) {
		release(p); /* the writer is busy: it keeps the features it has */
		return -EBUSY;
	}
	/* One writer per process: a set that writer no longer has (a new file,
	 * a forked child's) is no one's. */
	if (old && old != current)
		retire(old);
	retire(current);
	current = p;
	return 0;
}

/* The features at the file's start: see install(). Not async-signal-safe. */
int file_features__early(struct writer *w)
{
	return install(w, false);
}

/*
 * Finish the file: the features again (build ids of everything loaded by
 * now, the samples' time range) and the final header. Returns 0 or -errno.
 * Not async-signal-safe.
 */
int file_features__write(struct writer *w)
{
	writer__note_times(w, autoprof.stats.first_time, autoprof.stats.last_time);
	install(w, true); /* on failure the earlier features stay */
	return writer__finish(w, true);
}

/*
 * Finish the file from a signal handler: the features laid out earlier.
 * Async-signal-safe.
 */
int file_features__write_emergency(struct writer *w)
{
	writer__note_times(w, autoprof.stats.first_time, autoprof.stats.last_time);
	return writer__finish(w, false);
}
