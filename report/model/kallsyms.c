// SPDX-License-Identifier: MIT
/*
 * kallsyms.c - kernel function names from /proc/kallsyms (or, for a file
 * from another kernel, the copy perf's build-id cache keeps of its kallsyms).
 *
 * Read once, only when a file has a kernel map that fits this machine (in a
 * thread of its own: struct kernel_syms, at the end). The file is read whole and its text kept
 * as the name arena; text symbols (t, T, w, W) are kept in one sorted array
 * of pointers into it; module symbols lose their "[module]" suffix. A file
 * listing only zero addresses (kptr_restrict) counts as unreadable.
 *
 * The kernel takes 40-50 ms to list /proc/kallsyms, more than reading a
 * whole ordinary perf.data takes, so the sorted table is also kept in a
 * cache file ($XDG_CACHE_HOME or ~/.cache, autoprof/kallsyms) stamped with
 * the boot id and a hash of /proc/modules: it is used only while both are
 * unchanged (same boot, same modules at the same addresses), and only when
 * it is ours (cachedir.c: this user's file in this user's folder, no link).
 */
#include "autoprof/env.h"
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* /proc/kallsyms is read in pieces of this size into one growing buffer. */
#define READ_CHUNK (1u << 20)

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* The symbol's type letter sits two bytes before its name ("addr T name"). */
static bool global(const struct ksym *k)
{
	return k->name[-2] >= 'A' && k->name[-2] <= 'Z';
}

/*
 * By address; among aliases the one perf would show first: global (upper
 * case type) over local, fewer leading '_', the longer name.
 */
static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	int ua, ub;
	size_t la, lb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (global(a) != global(b))
		return global(a) ? -1 : 1;
	ua = underscores(a->name);
	ub = underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la > lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The whole of @fd (closed; -1 gives NULL) in one NUL-terminated malloc'ed buffer, or NULL. */
static char *read_fd(int fd, size_t *len)
{
	size_t cap = 0, used = 0;
	char *buf = NULL;
	ssize_t n;

	if (fd < 0)
		return NULL;
	for (;;) {
		if (array__reserve(&buf, &cap, used + READ_CHUNK + 1, 1))
			goto fail;
		n = read(fd, buf + used, READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = 0;
	*len = used;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

/* The whole of @path, as read_fd(). */
static char *read_all(const char *path, size_t *len)
{
	return read_fd(open(path, O_RDONLY | O_CLOEXEC), len);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse the line at *pp ("ffffffff81000000 T _text\t[mod]\n"), cutting it
 * into a NUL-terminated name in place, and step *pp to the next line.
 * Returns true for a well-formed line.
 */
static bool parse_line(char **pp, u64 *addr, char *type, char **name)
{
	char *p = *pp, *eol = strchr(p, '\n'), *n;
	int digits = 0, v;

	if (eol)
		*eol = 0;
	*pp = eol ? eol + 1 : p + strlen(p);
	*addr = 0;
	while ((v = hexval(*p)) >= 0 && digits < 16) {
		*addr = *addr << 4 | (u64)v;
		p++;
		digits++;
	}
	if (!digits || p[0] != ' ' || !p[1] || p[2] != ' ')
		return false;
	*type = p[1];
	n = p + 3;
	n[strcspn(n, " \t")] = 0;
	if (!*n)
		return false;
	*name = n;
	return true;
}

#define CACHE_MAGIC 0x314d59534b504100ULL /* "\0APKSYM1" */

/* The cache file's header; nr {addr, name offset} pairs and the names follow. */
struct cache_hdr {
	u64 magic, stamp, nr, text, names_len;
};

/* FNV-1a of @len bytes at @p, continuing from @h. */
static u64 fnv(u64 h, const char *p, size_t len)
{
	while (len--) {
		h ^= (u8)*p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * What the cached table must match: the boot id and /proc/modules (names,
 * sizes and load addresses). Returns 0, or -ENOENT without a boot id.
 */
static int cache_stamp(u64 *stamp)
{
	size_t len;
	char *s = read_all("/proc/sys/kernel/random/boot_id", &len);
	u64 h = 0xcbf29ce484222325ULL ^ (u64)getuid();

	if (!s || len < 16) {
		free(s);
		return -ENOENT;
	}
	h = fnv(h, s, len);
	free(s);
	s = read_all("/proc/modules", &len);
	if (s)
		h = fnv(h, s, len);
	free(s);
	*stamp = h;
	return 0;
}

/* Fill @k from the cache file if it carries @stamp. Returns 0 or -ENOENT. */
static int cache_load(struct kallsyms *k, u64 stamp)
{
	int dir = cachedir__open(false);
	struct cache_hdr h;
	size_t len, i, tab;
	const u64 *pairs;
	char *buf;

	if (dir < 0)
		return -ENOENT;
	buf = read_fd(cachedir__file(dir, "kallsyms"), &len);
	close(dir);
	if (!buf)
		return -ENOENT;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, buf, sizeof(h));
	tab = sizeof(h) + h.nr * 16;
	if (h.magic != CACHE_MAGIC || h.stamp != stamp || !h.nr || h.nr > len / 16 || tab > len ||
	    h.names_len != len - tab || buf[len - 1])
		goto bad;
	k->syms = malloc(h.nr * sizeof(*k->syms));
	if (!k->syms)
		goto bad;
	pairs = (const u64 *)(buf + sizeof(h));
	for (i = 0; i < h.nr; i++) {
		u64 off = ld64(pairs + 2 * i + 1);

		if (off >= h.names_len) {
			free(k->syms);
			k->syms = NULL;
			goto bad;
		}
		k->syms[i] = (struct ksym){ld64(pairs + 2 * i), buf + tab + off};
	}
	k->nr = h.nr;
	k->text = h.text;
	k->arena = buf;
	return 0;
bad:
	free(buf);
	return -ENOENT;
}

/* Write @k's table to the cache file (a temporary file renamed over it); errors are ignored. */
static void cache_store(const struct kallsyms *k, u64 stamp)
{
	char tmp[64];
	struct cache_hdr h = {CACHE_MAGIC, stamp, k->nr, k->text, 0};
	u64 *pairs;
	FILE *f;
	size_t i;
	int dir = cachedir__open(true), fd;

	if (dir < 0)
		return;
	pairs = malloc(k->nr * 16);
	if (!pairs) {
		close(dir);
		return;
	}
	for (i = 0; i < k->nr; i++) {
		pairs[2 * i] = k->syms[i].addr;
		pairs[2 * i + 1] = h.names_len;
		h.names_len += strlen(k->syms[i].name) + 1;
	}
	fd = cachedir__tmp(dir, "kallsyms", tmp, sizeof(tmp));
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0) {
			close(fd);
			unlinkat(dir, tmp, 0);
		}
		free(pairs);
		close(dir);
		return;
	}
	fwrite(&h, sizeof(h), 1, f);
	fwrite(pairs, 16, k->nr, f);
	for (i = 0; i < k->nr; i++)
		fwrite(k->syms[i].name, strlen(k->syms[i].name) + 1, 1, f);
	free(pairs);
	if (fclose(f) || renameat(dir, tmp, dir, "kallsyms"))
		unlinkat(dir, tmp, 0);
	close(dir);
}

/*
 * Load the kernel's text symbols: from the cache file when it matches this
 * boot and these modules, else from /proc/kallsyms (then refreshing the
 * cache). Returns what kallsyms__load() returns.
 */
int kallsyms__load_cached(struct kallsyms *k)
{
	u64 stamp;
	int err;

	memset(k, 0, sizeof(*k));
	k->loaded = true;
	if (ap_env(AP_ENV_NO_KSYM_CACHE) || cache_stamp(&stamp))
		return kallsyms__load(k, "/proc/kallsyms");
	if (!cache_load(k, stamp))
		return 0;
	err = kallsyms__load(k, "/proc/kallsyms");
	if (!err)
		cache_store(k, stamp);
	return err;
}

/*
 * Load the text symbols of @path (normally /proc/kallsyms). Returns 0,
 * -ENOENT if there is nothing usable (unreadable, or every address 0),
 * or -ENOMEM. The file's text is kept as the name arena.
 */
int kallsyms__load(struct kallsyms *k, const char *path)
{
	size_t cap = 0, len, i, out;
	bool sorted = true;
	char *p;

	memset(k, 0, sizeof(*k));
	k->loaded = true;
	k->arena = read_all(path, &len);
	if (!k->arena)
		return -ENOENT;
	for (p = k->arena; *p;) {
		char type, *name;
		u64 addr;

		if (!parse_line(&p, &addr, &type, &name))
			continue;
		if (!k->text && !strcmp(name, "_text"))
			k->text = addr;
		if (!addr || (type != 't' && type != 'T' && type != 'w' && type != 'W'))
			continue;
		if (array__reserve(&k->syms, &cap, k->nr + 1, sizeof(*k->syms))) {
			kallsyms__exit(k);
			return -ENOMEM;
		}
		if (k->nr && addr < k->syms[k->nr - 1].addr)
			sorted = false;
		k->syms[k->nr++] = (struct ksym){addr, name};
	}
	if (!k->nr) {
		kallsyms__exit(k);
		k->loaded = true;
		return -ENOENT;
	}
	/* The kernel lists its own symbols in address order; modules may not be. */
	if (!sorted)
		qsort(k->syms, k->nr, sizeof(*k->syms), ksym_cmp);
	/* Keep the preferred alias at each address. */
	for (i = 0, out = 0; i < k->nr; i++) {
		if (out && k->syms[out - 1].addr == k->syms[i].addr) {
			if (ksym_cmp(&k->syms[i], &k->syms[out - 1]) < 0)
				k->syms[out - 1] = k->syms[i];
			continue;
		}
		k->syms[out++] = k->syms[i];
	}
	k->nr = out;
	return 0;
}

/* The last symbol at or below @addr, or NULL (also past the last symbol by 1 MiB). */
const struct ksym *kallsyms__lookup(const struct kallsyms *k, u64 addr)
{
	size_t lo = array__upper(k->syms, k->nr, sizeof(*k->syms), addr);

	if (lo == 0)
		return NULL;
	if (lo == k->nr && addr - k->syms[lo - 1].addr > (1u << 20))
		return NULL;
	return &k->syms[lo - 1];
}

void kallsyms__exit(struct kallsyms *k)
{
	free(k->syms);
	free(k->arena);
	memset(k, 0, sizeof(*k));
}

/* ---- kernel_syms: the table of one session, loaded in the background ---- */

static void *kernel_syms_thread(void *arg)
{
	struct kernel_syms *ks = arg;

	kallsyms__load_cached(&ks->k);
	return NULL;
}

/*
 * Start reading /proc/kallsyms in a thread, before it is known to be needed:
 * the kernel takes tens of milliseconds to list it, which the record passes
 * can hide. Nothing else touches ks->k until the thread is joined.
 */
void kallsyms__prefetch(struct kernel_syms *ks)
{
	if (ks->running || ks->k.loaded)
		return;
	ks->running = pthread_create(&ks->thread, NULL, kernel_syms_thread, ks) == 0;
}

static void kernel_syms__join(struct kernel_syms *ks)
{
	if (ks->running) {
		pthread_join(ks->thread, NULL);
		ks->running = false;
	}
}

/*
 * Resolve kernel addresses through /proc/kallsyms from now on (@path NULL:
 * the files have a kernel map that fits this machine), or through the
 * kallsyms file @path (copied: perf's cached copy of the recorded kernel's).
 * The kernel map's MMAP had page offset @pgoff (where _text was when the
 * file was written).
 */
void kallsyms__enable(struct kernel_syms *ks, u64 pgoff, const char *path)
{
	ks->enabled = true;
	ks->pgoff = pgoff;
	if (path) {
		snprintf(ks->path, sizeof(ks->path), "%s", path);
		ks->enabled = strlen(path) < sizeof(ks->path);
	}
}

/*
 * True when kernel addresses can be named: enabled, and the table loaded
 * (joined from the prefetch thread, or read now, the first time) and not
 * empty. An empty table disables the object for good.
 */
bool kallsyms__ready(struct kernel_syms *ks)
{
	if (!ks->enabled)
		return false;
	if (ks->ready)
		return true;
	kernel_syms__join(ks);
	if (ks->path[0]) {
		kallsyms__exit(
		    &ks->k); /* a prefetched /proc/kallsyms is not the recorded kernel's */
		ks->k.loaded = true;
		kallsyms__load(&ks->k, ks->path);
	} else if (!ks->k.loaded) {
		kallsyms__load_cached(&ks->k);
	}
	if (!ks->k.nr) {
		ks->enabled = false;
		return false;
	}
	if (ks->k.text && ks->pgoff)
		ks->reloc = ks->k.text - ks->pgoff;
	ks->ready = true;
	return true;
}

/*
 * The symbol of kernel address @addr, as the files have it (relocated to
 * this boot's addresses here), or NULL. Only after kallsyms__ready().
 */
const struct ksym *kallsyms__find(const struct kernel_syms *ks, u64 addr)
{
	return kallsyms__lookup(&ks->k, addr + ks->reloc);
}

/* Join the prefetch thread if it runs and free the table. */
void kallsyms__syms_exit(struct kernel_syms *ks)
{
	kernel_syms__join(ks);
	kallsyms__exit(&ks->k);
	memset(ks, 0, sizeof(*ks));
}
