/* SPDX-License-Identifier: MIT */
/*
 * mappings.c - describe the process's executable mappings as MMAP2 records, from
 * /proc/self/maps, the way perf record synthesizes them for a running task,
 * once per file (objects loaded later: objects.c). Not async-signal-safe, but
 * off libc's heap and stdio (handler/pages.h, raw reads): a forked child reads
 * its mappings here, and a program may fork from a signal handler that
 * interrupted malloc.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "handler/pages.h"
#include "internal.h"

/* Read a number in base 16 or 10 at *p, up to the first other character; false when none. */
static bool parse_num(const char **p, unsigned base, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	for (;; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else
			break;
		v = v * base + d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* Step over the character c at *p; false when another is there. */
static bool parse_char(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/*
 * Parse one maps line ("start-end perms pgoff maj:min ino   name") into its
 * fields; returns 0, or -EINVAL for a line that is not executable or not a
 * mapping a sample can land in. By hand: sscanf took 4,000 instructions a
 * line, a third of the library's start-up.
 */
static int parse_line(char *line, uint64_t *start, uint64_t *end, uint64_t *pgoff, uint32_t *maj,
		      uint32_t *min, uint64_t *ino, uint32_t *prot, uint32_t *flags, char **name)
{
	const char *p = line, *perms;
	uint64_t ma, mi;

	if (!parse_num(&p, 16, start) || !parse_char(&p, '-') || !parse_num(&p, 16, end) ||
	    !parse_char(&p, ' '))
		return -EINVAL;
	perms = p;
	if (strnlen(perms, 4) < 4 || perms[2] != 'x')
		return -EINVAL; /* not executable: no record (checked first: most lines) */
	p += 4;
	if (!parse_char(&p, ' ') || !parse_num(&p, 16, pgoff) || !parse_char(&p, ' ') ||
	    !parse_num(&p, 16, &ma) || !parse_char(&p, ':') || !parse_num(&p, 16, &mi) ||
	    !parse_char(&p, ' ') || !parse_num(&p, 10, ino))
		return -EINVAL;
	*maj = (uint32_t)ma;
	*min = (uint32_t)mi;
	while (*p == ' ')
		p++;
	*name = line + (p - line);
	(*name)[strcspn(*name, "\n")] = 0;
	if (!strcmp(*name, "[vsyscall]"))
		return -EINVAL; /* a kernel address, never sampled in user mode */
	if (!**name)
		*name = "//anon";
	*prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
	*flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	return 0;
}

/* An executable mapping of the reading, as its MMAP2 record describes it. */
struct map_line {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min, prot, flags;
	const char *name; /* in maps */
};

/* /proc/self/maps as read at the start of a file (mappings__load), until its records are written:
 * the text, and its executable mappings in order. */
static char *maps;
static struct map_line *lines;
static size_t nr_lines;

/* Drop the reading. */
static void drop_maps(void)
{
	pages__free(maps);
	pages__free(lines);
	maps = NULL;
	lines = NULL;
	nr_lines = 0;
}

/* Index the executable mappings of the text in maps (which the names now end in). 0 or -ENOMEM. */
static int index_maps(void)
{
	size_t cap = 0;

	for (char *line = maps; *line;) {
		char *next = strchr(line, '\n');
		struct map_line m;
		char *name;

		if (next)
			*next++ = 0;
		else
			next = line + strlen(line);
		if (!parse_line(line, &m.start, &m.end, &m.pgoff, &m.maj, &m.min, &m.ino, &m.prot,
				&m.flags, &name)) {
			if (nr_lines == cap) {
				struct map_line *more = pages__realloc(
				    lines, (cap = cap ? 2 * cap : 32) * sizeof(*lines));

				if (!more)
					return -ENOMEM;
				lines = more;
			}
			m.name = name;
			lines[nr_lines++] = m;
		}
		line = next;
	}
	return 0;
}

/* Read /proc/self/maps whole and index it. Returns 0 or -errno. */
static int load_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t cap = 16384, len = 0;
	char *buf = NULL;
	ssize_t n;

	drop_maps();
	if (fd < 0)
		return -errno;
	for (;;) {
		if (!buf || cap - len < 4097) {
			char *more = pages__realloc(buf, cap *= 2);

			if (!more) {
				pages__free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = more;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0) {
		int err = -errno;

		pages__free(buf);
		return err;
	}
	buf[len] = 0;
	maps = buf;
	if (index_maps()) {
		drop_maps();
		return -ENOMEM;
	}
	return 0;
}

/*
 * Read this process's mappings for the file about to start: its MMAP2
 * records (mappings__write_all) and the file names of the objects its
 * features name (mappings__file_at) come from this one reading. Not
 * async-signal-safe.
 */
void mappings__load(void)
{
	load_maps();
}

/*
 * The file mapped (executable) at addr, as the kernel names it (symbolic
 * links resolved), from the reading mappings__load() made for the file
 * starting now; false when there is none, or when the file was deleted.
 * Not async-signal-safe.
 */
bool mappings__file_at(uintptr_t addr, char *out, size_t cap)
{
	for (size_t i = 0; i < nr_lines; i++) {
		const struct map_line *m = &lines[i];

		if (addr >= m->start && addr < m->end)
			return m->name[0] == '/' && !strstr(m->name, " (deleted)") &&
			       snprintf(out, cap, "%s", m->name) < (int)cap;
	}
	return false;
}

/*
 * Append an MMAP2 record for every executable mapping of this process, at
 * time 0 (perf applies them before any sample), each with its object's build
 * id where the object table knows it; the reading is dropped then. Returns 0
 * or -errno. Objects loaded later are described by objects.c, one by one.
 * Not async-signal-safe.
 */
static int write_maps(struct writer *w, pid_t pid)
{
	size_t cap = 64 * 1024, len = 0;
	char *buf;
	int err = 0;

	if (!maps && (err = load_maps()))
		return err; /* not loaded for this file (mappings__load) */
	buf = pages__alloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr_lines && !err; i++) {
		const struct map_line *m = &lines[i];
		uint8_t bid[20];
		unsigned bid_size = m->name[0] == '/' ? objects__build_id(m->start, bid) : 0;
		size_t n = record__mmap2(buf + len, cap - len, (uint32_t)pid, m->start,
					 m->end - m->start, m->pgoff, m->maj, m->min, m->ino,
					 m->prot, m->flags, m->name, 0, bid, bid_size);

		if (!n) {
			err = writer__append(w, buf, len);
			len = 0;
			n = record__mmap2(buf, cap, (uint32_t)pid, m->start, m->end - m->start,
					  m->pgoff, m->maj, m->min, m->ino, m->prot, m->flags,
					  m->name, 0, bid, bid_size);
		}
		len += n;
	}
	if (!err)
		err = writer__append(w, buf, len);
	pages__free(buf);
out:
	drop_maps();
	return err;
}

/*
 * Call fn(line, arg) on each line of the file at path (its newline cut; a
 * line longer than the buffer is skipped) until fn returns true. Raw reads
 * into memory of our own: stdio's FILE and buffer would come from libc's
 * heap. Returns 0, or -errno when the file cannot be read.
 */
static int each_line(const char *path, bool (*fn)(char *line, void *arg), void *arg)
{
	const size_t cap = 64 * 1024;
	char *buf = pages__alloc(cap);
	size_t len = 0;
	bool stop = false, skip = false;
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pages__free(buf);
		return err;
	}
	while (!stop) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		char *line = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0) {
			buf[len] = 0;
			if (len && !skip)
				fn(buf, arg); /* the last line, without its newline */
			break;
		}
		len += (size_t)n;
		while (!stop && (nl = memchr(line, '\n', (size_t)(buf + len - line)))) {
			*nl = 0;
			if (!skip)
				stop = fn(line, arg);
			skip = false;
			line = nl + 1;
		}
		if (line == buf && len == cap - 1) {
			skip = true; /* a line longer than the buffer: its rest is skipped too */
			len = 0;
			continue;
		}
		len = (size_t)(buf + len - line);
		memmove(buf, line, len);
	}
	close(fd);
	pages__free(buf);
	return err;
}

/* each_line() of /proc/modules: the lowest module address into *(uint64_t *)arg. */
static bool module_line(char *line, void *arg)
{
	uint64_t *end = arg;
	const char *at = strrchr(line, ' ');
	unsigned long long addr;

	if (at && sscanf(at, " 0x%llx", &addr) == 1 && addr && addr < *end)
		*end = addr;
	return false;
}

/*
 * Where the kernel's map ends, as perf's does: at the lowest module's
 * address (/proc/modules), else (no modules, or addresses hidden) at the top
 * of the address space.
 */
static uint64_t kernel_map_end(void)
{
	uint64_t end = ~0ULL;

	each_line("/proc/modules", module_line, &end);
	return end;
}

/* each_line() of /proc/kallsyms: _text's address into *(uint64_t *)arg, then stop. */
static bool kallsyms_line(char *line, void *arg)
{
	uint64_t *text = arg;
	unsigned long long addr;
	char type, name[256];

	if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && !strcmp(name, "_text"))
		*text = addr;
	return *text != 0;
}

/*
 * With kernel samples: the kernel's text as one MMAP (perf then symbolises
 * from /proc/kallsyms), from _text to the kernel map's end (kernel_map_end).
 * _text is among kallsyms' first lines: the file is read up to it only (the
 * kernel formats the rest, 100k+ lines, only if read: 60 ms of the program's
 * start-up when it was). Returns 0, or -ENOENT when kallsyms hides the
 * addresses (kptr_restrict).
 */
int mappings__write_kernel(struct writer *w)
{
	uint64_t text = 0, end;
	char rec[256];
	size_t n;
	int err = each_line("/proc/kallsyms", kallsyms_line, &text);

	if (err)
		return err;
	end = kernel_map_end();
	if (!text || end <= text)
		return -ENOENT;
	n = record__kernel_mmap(rec, sizeof(rec), text, end - text);
	return writer__append(w, rec, n);
}

/*
 * At the start of a file: every executable mapping, at time 0; the object
 * table counts every object loaded now as described. Not async-signal-safe.
 */
int mappings__write_all(struct writer *w, pid_t pid)
{
	objects__refresh(true);
	return write_maps(w, pid);
}
