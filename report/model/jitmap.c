// SPDX-License-Identifier: MIT
/*
 * jitmap.c - symbols of JIT code from /tmp/perf-PID.map, the text file that
 * node --perf-basic-prof, python3.12 -X perf, perf-map-agent and others
 * write: one "START SIZE name" line per function, START and SIZE in hex,
 * at absolute addresses of process PID.
 *
 * As in perf (map__new()), an executable mapping that is anonymous
 * (//anon, /dev/zero, /anon_hugepage, [anon:...]), has no object
 * ([heap], [stack...], /SYSV...) or is a memfd is looked up in that file.
 * Like perf, a file not owned by us or root is ignored.
 */
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* True if a mapping named @name (@len bytes, maybe unterminated) holds JIT code when executable. */
bool jitmap__is_anon(const char *name, size_t len)
{
	static const char *const prefixes[] = {"//anon", "/dev/zero", "/anon_hugepage", "[anon:",
					       "[heap]", "[stack",    "/SYSV",		"/memfd:"};
	size_t i;

	len = strnlen(name, len);
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t n = strlen(prefixes[i]);

		if (len >= n && !memcmp(name, prefixes[i], n))
			return true;
	}
	return false;
}

/* True if @path names a perf map: /tmp/perf-<digits>.map. */
bool jitmap__is_path(const char *path)
{
	const char *p = path + 10;

	if (strncmp(path, "/tmp/perf-", 10) != 0 || *p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return !strcmp(p, ".map");
}

struct jit_sym {
	u64 start, size;
	size_t name; /* offset in the name buffer */
	size_t line; /* input order: the later line wins at one address */
};

static int jit_sym_cmp(const void *pa, const void *pb)
{
	const struct jit_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? 1 : -1; /* later first */
}

/* Parse one "START SIZE name" line into @s (name offset relative to @line); false if malformed. */
static bool parse_line(char *line, struct jit_sym *s, size_t *name_off)
{
	char *end, *p = line;

	s->start = strtoull(p, &end, 16);
	if (end == p || (*end != ' ' && *end != '\t'))
		return false;
	p = end;
	s->size = strtoull(p, &end, 16);
	if (end == p || (*end != ' ' && *end != '\t') || !s->size)
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	if (!*end)
		return false;
	*name_off = (size_t)(end - line);
	return true;
}

/* Read the whole regular file @fd; returns a NUL-terminated malloc'ed buffer or NULL. */
static char *slurp(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t got;

	while (buf) {
		if (array__reserve(&buf, &cap, n + 2, 1))
			break;
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		if (got == 0) {
			buf[n] = 0;
			*len = n;
			return buf;
		}
		n += (size_t)got;
	}
	free(buf);
	return NULL;
}

/*
 * Load @dso (a /tmp/perf-PID.map path) as one identity segment and its
 * symbols. Returns 0, -ENOENT when the file is missing or not ours, or
 * -ENOMEM.
 */
int jitmap__load(struct dso *dso)
{
	struct jit_sym *v = NULL;
	size_t nr = 0, cap = 0, len = 0, i, out, names = 0, lineno = 0;
	char *buf, *line, *next, *arena;
	struct stat st;
	int fd;

	fd = open(dso->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid && st.st_uid != geteuid())) {
		close(fd);
		return -ENOENT;
	}
	buf = slurp(fd, &len);
	close(fd);
	if (!buf)
		return -ENOMEM;
	dso->segs = calloc(1, sizeof(*dso->segs));
	if (!dso->segs)
		goto nomem;
	dso->segs[0] = (struct load_seg){.offset = 0, .filesz = UINT64_MAX, .vaddr = 0};
	dso->nr_segs = 1;
	for (line = buf; line < buf + len; line = next) {
		struct jit_sym s;
		size_t off;

		next = memchr(line, '\n', (size_t)(buf + len - line));
		if (next)
			*next++ = 0;
		else
			next = buf + len;
		if (!parse_line(line, &s, &off))
			continue;
		if (array__reserve(&v, &cap, nr + 1, sizeof(*v)))
			goto nomem;
		s.name = (size_t)(line - buf) + off;
		s.line = lineno++;
		v[nr++] = s;
	}
	if (nr > 1)
		qsort(v, nr, sizeof(*v), jit_sym_cmp);
	for (i = 0, out = 0; i < nr; i++) {
		if (out && v[out - 1].start == v[i].start)
			continue; /* an older line for the same address */
		v[out++] = v[i];
		names += strlen(buf + v[i].name) + 1;
	}
	dso->symtab.syms = calloc(out ? out : 1, sizeof(*dso->symtab.syms));
	arena = malloc(names ? names : 1);
	if (!dso->symtab.syms || !arena) {
		free(arena);
		goto nomem;
	}
	dso->symtab.names = arena;
	for (i = 0; i < out; i++) {
		size_t n = strlen(buf + v[i].name) + 1;
		u64 end = v[i].start + v[i].size < v[i].start ? UINT64_MAX : v[i].start + v[i].size;

		memcpy(arena, buf + v[i].name, n);
		dso->symtab.syms[i] = (struct sym){v[i].start, end, arena};
		arena += n;
	}
	dso->symtab.nr = out;
	free(v);
	free(buf);
	return 0;
nomem:
	free(v);
	free(buf);
	symbols__exit_table(&dso->symtab);
	return -ENOMEM;
}
