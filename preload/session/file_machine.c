/* SPDX-License-Identifier: MIT */
/*
 * file_machine.c - the machine's description in the feature sections, laid
 * out as perf record lays it out (tools/perf/util/header.c): CPUID, CPU and
 * NUMA topology, PMU mappings, caches, memory blocks, and the empty BPF and
 * PMU-capability sections perf writes when it has nothing for them. Read
 * from /proc and /sys once per process image (forked children keep it), and
 * kept for the next images in the user's control directory (machine_cache):
 * the hundred or so sysfs files took 0.9 ms of every process's start-up.
 * Not async-signal-safe.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "blob.h"
#include "internal.h"

const int file_machine__feature_order[MACHINE_NR_FEATURES] = {
    PERF_FEAT_BUILD_ID,	     PERF_FEAT_HOSTNAME,     PERF_FEAT_OSRELEASE,
    PERF_FEAT_VERSION,	     PERF_FEAT_ARCH,	     PERF_FEAT_NRCPUS,
    PERF_FEAT_CPUDESC,	     PERF_FEAT_CPUID,	     PERF_FEAT_TOTAL_MEM,
    PERF_FEAT_CMDLINE,	     PERF_FEAT_EVENT_DESC,   PERF_FEAT_CPU_TOPOLOGY,
    PERF_FEAT_NUMA_TOPOLOGY, PERF_FEAT_PMU_MAPPINGS, PERF_FEAT_CACHE,
    PERF_FEAT_SAMPLE_TIME,   PERF_FEAT_MEM_TOPOLOGY, PERF_FEAT_CLOCKID,
    PERF_FEAT_BPF_PROG_INFO, PERF_FEAT_BPF_BTF,	     PERF_FEAT_CLOCK_DATA,
    PERF_FEAT_PMU_CAPS};

#define CPU_SYS	   "/sys/devices/system/cpu"
#define NODE_SYS   "/sys/devices/system/node"
#define MAX_LISTS  1024
#define MAX_CACHES 512

/* A small sysfs or proc file, without its final newline; false when absent. */
static bool read_line(const char *path, char *buf, size_t cap)
{
	ssize_t n = raw_syscall__read_file(path, buf, cap);

	if (n <= 0)
		return false;
	buf[n < (ssize_t)cap ? n : (ssize_t)cap - 1] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

static bool read_cpu_file(int cpu, const char *name, char *buf, size_t cap)
{
	char path[256];

	snprintf(path, sizeof(path), CPU_SYS "/cpu%d/%s", cpu, name);
	return read_line(path, buf, cap);
}

/* A number from a sysfs file, or -1 (as perf records an unknown id). */
static uint32_t read_cpu_id(int cpu, const char *name)
{
	char buf[32];

	return read_cpu_file(cpu, name, buf, sizeof(buf)) ? (uint32_t)atoi(buf) : UINT32_MAX;
}

/* The CPUs perf lists: 0 .. the highest present CPU (glibc reads a file each time: once). */
static int nr_cpus(void)
{
	static int n;

	if (!n) {
		long conf = sysconf(_SC_NPROCESSORS_CONF);

		n = conf > 0 ? (int)conf : 1;
	}
	return n;
}

static bool online(int cpu)
{
	char buf[8];

	return cpu == 0 || !read_cpu_file(cpu, "online", buf, sizeof(buf)) || buf[0] == '1';
}

/* CPUID as perf's get_cpuid(): "vendor,family,model,stepping" (x86) or the MIDR (arm64). */
static bool feat_cpuid(struct blob *b)
{
	static char info[65536] AP_LARGE_BSS;
	char out[128], *v = NULL, *f = NULL, *m = NULL, *s = NULL;
	ssize_t n = raw_syscall__read_file("/proc/cpuinfo", info, sizeof(info) - 1);

	if (read_line(CPU_SYS "/cpu0/regs/identification/midr_el1", out, sizeof(out))) {
		blob_string(b, out);
		return true;
	}
	if (n <= 0)
		return false;
	info[n] = 0;
	for (char *line = strtok(info, "\n"); line && !(v && f && m && s);
	     line = strtok(NULL, "\n")) {
		char *colon = strchr(line, ':');
		char **slot = !strncmp(line, "vendor_id", 9)	 ? &v
			      : !strncmp(line, "cpu family", 10) ? &f
			      : !strncmp(line, "model\t", 6)	 ? &m
			      : !strncmp(line, "stepping", 8)	 ? &s
								 : NULL;

		if (slot && colon && !*slot)
			*slot = colon + 1 + strspn(colon + 1, " \t");
	}
	if (!v || !f || !m || !s)
		return false;
	snprintf(out, sizeof(out), "%s,%s,%s,%s", v, f, m, s);
	blob_string(b, out);
	return true;
}

/* Each CPU's @file (a CPU list), once per distinct list, in CPU order. */
static void sibling_lists(struct blob *b, const char *file, const char *old_file)
{
	static char lists[MAX_LISTS][128] AP_LARGE_BSS;
	uint32_t n = 0;

	for (int cpu = 0; cpu < nr_cpus(); cpu++) {
		char buf[128];
		uint32_t i;

		if (!online(cpu) ||
		    (!read_cpu_file(cpu, file, buf, sizeof(buf)) &&
		     (!old_file || !read_cpu_file(cpu, old_file, buf, sizeof(buf)))))
			continue;
		for (i = 0; i < n && strcmp(lists[i], buf); i++)
			;
		if (i == n && n < MAX_LISTS)
			snprintf(lists[n++], sizeof(lists[0]), "%s", buf);
	}
	blob_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		blob_string(b, lists[i]);
}

/* Sockets, cores (thread siblings), each CPU's core and socket, dies (x86). */
static bool feat_cpu_topology(struct blob *b)
{
	struct utsname uts;
	char buf[128];
	bool dies;

	uname(&uts);
	dies = !strcmp(uts.machine, "x86_64") &&
	       read_cpu_file(0, "topology/die_cpus_list", buf, sizeof(buf));
	sibling_lists(b, "topology/package_cpus_list", "topology/core_siblings_list");
	sibling_lists(b, "topology/core_cpus_list", "topology/thread_siblings_list");
	for (int cpu = 0; cpu < nr_cpus(); cpu++) {
		blob_u32(b, read_cpu_id(cpu, "topology/core_id"));
		blob_u32(b, read_cpu_id(cpu, "topology/physical_package_id"));
	}
	if (dies) {
		sibling_lists(b, "topology/die_cpus_list", NULL);
		for (int cpu = 0; cpu < nr_cpus(); cpu++)
			blob_u32(b, read_cpu_id(cpu, "topology/die_id"));
	}
	return true;
}

/* A "Node N MemTotal:   123 kB" line's number, or 0. */
static uint64_t meminfo_kb(const char *info, const char *key)
{
	const char *at = strstr(info, key);

	return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

/* The online nodes of a "0-1,4" list, in order; returns how many (at most cap). */
static int node_list(int *nodes, int cap)
{
	char buf[256], *p = buf;
	int n = 0;

	if (!read_line(NODE_SYS "/online", buf, sizeof(buf)))
		return 0;
	while (*p && n < cap) {
		long lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		for (long i = lo; i <= hi && n < cap; i++)
			nodes[n++] = (int)i;
		if (*p != ',')
			break;
		p++;
	}
	return n;
}

/* Each online node: its number, total and free memory in kB, and its CPUs. */
static bool feat_numa(struct blob *b)
{
	int nodes[256], n = node_list(nodes, 256);

	if (!n)
		return false;
	blob_u32(b, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		char path[256], info[4096] = "", cpus[256] = "";
		ssize_t len;

		snprintf(path, sizeof(path), NODE_SYS "/node%d/meminfo", nodes[i]);
		len = raw_syscall__read_file(path, info, sizeof(info) - 1);
		info[len > 0 ? len : 0] = 0;
		snprintf(path, sizeof(path), NODE_SYS "/node%d/cpulist", nodes[i]);
		read_line(path, cpus, sizeof(cpus));
		blob_u32(b, (uint32_t)nodes[i]);
		blob_u64(b, meminfo_kb(info, "MemTotal:"));
		blob_u64(b, meminfo_kb(info, "MemFree:"));
		blob_string(b, cpus);
	}
	return true;
}

/* Every PMU the kernel lists, in directory order (as perf scans them): type and name. */
static bool feat_pmu_mappings(struct blob *b)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	size_t count_at = b->len;
	uint32_t n = 0;
	struct dirent *e;

	if (!d)
		return false;
	blob_u32(b, 0);
	while ((e = readdir(d))) {
		char path[512], type[32];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", e->d_name);
		if (!read_line(path, type, sizeof(type)))
			continue;
		blob_u32(b, (uint32_t)atoi(type));
		blob_string(b, e->d_name);
		n++;
	}
	closedir(d);
	if (!b->err)
		memcpy(b->p + count_at, &n, sizeof(n));
	return true;
}

struct cache {
	uint32_t level, line, sets, ways;
	char type[32], size[32], map[128];
};

static int cache_level_cmp(const void *a, const void *b)
{
	const struct cache *x = a, *y = b;

	return (x->level > y->level) - (x->level < y->level);
}

/* Each distinct cache (level, type, CPUs sharing it), by level, CPU order within a level. */
static bool feat_cache(struct blob *b)
{
	static struct cache v[MAX_CACHES] AP_LARGE_BSS;
	size_t n = 0;

	for (int cpu = 0; cpu < nr_cpus(); cpu++) {
		for (int idx = 0; idx < 10 && n < MAX_CACHES; idx++) {
			struct cache c;
			char name[64], buf[32];
			size_t i;

#define CACHE_FILE(f, out)                                                                         \
	(snprintf(name, sizeof(name), "cache/index%d/" f, idx),                                    \
	 read_cpu_file(cpu, name, out, sizeof(out)))
			memset(&c, 0, sizeof(c));
			if (!CACHE_FILE("level", buf))
				break;
			c.level = (uint32_t)atoi(buf);
			c.line = CACHE_FILE("coherency_line_size", buf) ? (uint32_t)atoi(buf) : 0;
			c.sets = CACHE_FILE("number_of_sets", buf) ? (uint32_t)atoi(buf) : 0;
			c.ways = CACHE_FILE("ways_of_associativity", buf) ? (uint32_t)atoi(buf) : 0;
			if (!CACHE_FILE("type", c.type) || !CACHE_FILE("size", c.size) ||
			    !CACHE_FILE("shared_cpu_list", c.map))
				continue;
#undef CACHE_FILE
			for (i = 0; i < n; i++)
				if (v[i].level == c.level && !strcmp(v[i].type, c.type) &&
				    !strcmp(v[i].map, c.map))
					break;
			if (i == n)
				v[n++] = c;
		}
	}
	/* none (a VM without /sys/devices/system/cpu/cpu0/cache): version 1 and
	 * no caches, as perf writes it */
	/* insertion sort: stable, so the CPU order stays within a level */
	for (size_t i = 1; i < n; i++) {
		struct cache c = v[i];
		size_t j = i;

		for (; j > 0 && cache_level_cmp(&v[j - 1], &c) > 0; j--)
			v[j] = v[j - 1];
		v[j] = c;
	}
	blob_u32(b, 1); /* version */
	blob_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		blob_u32(b, v[i].level);
		blob_u32(b, v[i].line);
		blob_u32(b, v[i].sets);
		blob_u32(b, v[i].ways);
		blob_string(b, v[i].type);
		blob_string(b, v[i].size);
		blob_string(b, v[i].map);
	}
	return true;
}

/* One node's memory blocks (memoryN entries) as perf's bitmap: bits, then u64 words. */
static void node_blocks(struct blob *b, int node)
{
	char path[256];
	uint64_t *words = NULL, size = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), NODE_SYS "/node%d", node);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		uint64_t i;

		if (strncmp(e->d_name, "memory", 6) || e->d_name[6] < '0' || e->d_name[6] > '9')
			continue;
		i = strtoull(e->d_name + 6, NULL, 10);
		if (i + 1 > size) {
			uint64_t *w = realloc(words, ((i + 64) / 64) * 8);

			if (!w)
				continue;
			memset(w + (size + 63) / 64, 0, ((i + 64) / 64 - (size + 63) / 64) * 8);
			words = w;
			size = i + 1;
		}
		words[i / 64] |= 1ULL << (i % 64);
	}
	if (d)
		closedir(d);
	blob_u64(b, (uint64_t)node);
	blob_u64(b, size);
	blob_u64(b, size);
	for (uint64_t i = 0; i < (size + 63) / 64; i++)
		blob_u64(b, words[i]);
	free(words);
}

/* Memory block size, then each online node's blocks. */
static bool feat_mem_topology(struct blob *b)
{
	int nodes[256], n = node_list(nodes, 256);
	char buf[64];

	if (!n || !read_line("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)))
		return false;
	blob_u64(b, 1); /* version */
	blob_u64(b, strtoull(buf, NULL, 16));
	blob_u64(b, (uint64_t)n);
	for (int i = 0; i < n; i++)
		node_blocks(b, nodes[i]);
	return true;
}

/* The features described from /proc and /sys, kept in machine_cache (the CPU
 * counts and description too: /proc/cpuinfo and two sysfs files were read
 * by every image, ten system calls and the kernel's text for every CPU). */
static const int described[] = {
    PERF_FEAT_CPUID, PERF_FEAT_CPU_TOPOLOGY, PERF_FEAT_NUMA_TOPOLOGY, PERF_FEAT_PMU_MAPPINGS,
    PERF_FEAT_CACHE, PERF_FEAT_MEM_TOPOLOGY, PERF_FEAT_NRCPUS,	      PERF_FEAT_CPUDESC};
#define NR_DESCRIBED (int)(sizeof(described) / sizeof(described[0]))
#define CACHE_MAGIC  "autoprof machine 3\n" /* 3: CACHE said where no cache is listed */

static struct blob cache[PERF_FEAT_PMU_CAPS + 1];
static bool done[PERF_FEAT_PMU_CAPS + 1], have[PERF_FEAT_PMU_CAPS + 1];
static bool cache_tried, cache_used;

/*
 * What the described features depend on: the boot, the CPUs and NUMA nodes
 * online (hot-plugging changes them). Into @key; false when unknown.
 */
static bool machine_key(char *key, size_t cap)
{
	char boot[64], cpus[256], nodes[256];

	if (!read_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) ||
	    !read_line(CPU_SYS "/online", cpus, sizeof(cpus)))
		return false;
	if (!read_line(NODE_SYS "/online", nodes, sizeof(nodes)))
		nodes[0] = 0;
	return (size_t)snprintf(key, cap, "%s %s %s\n", boot, cpus, nodes) < cap;
}

/* The cache file's path (in the user's control directory); false when there is none. */
static bool cache_path(char *path, size_t cap)
{
	char dir[PATH_MAX];

	return control__dir(dir, sizeof(dir)) == 0 &&
	       (size_t)snprintf(path, cap, "%s/machine", dir) < cap;
}

/*
 * Take the described features from the cache file an earlier image of this
 * boot wrote, if its key is this machine's: CACHE_MAGIC, the key, then per
 * feature its number, whether the machine says it, its length and body.
 */
static void load_cache(void)
{
	char path[PATH_MAX + 16], key[600], *buf = NULL;
	size_t klen, mlen = strlen(CACHE_MAGIC), off;
	struct blob got[NR_DESCRIBED];
	bool said[NR_DESCRIBED];
	struct stat st;
	int fd, i;

	cache_tried = true;
	if (!machine_key(key, sizeof(key)) || !cache_path(path, sizeof(path)))
		return;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() && st.st_size > 0 &&
	    st.st_size < (1 << 20) && (buf = malloc((size_t)st.st_size)) &&
	    read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	klen = strlen(key);
	if (!buf || (size_t)st.st_size < mlen + klen || memcmp(buf, CACHE_MAGIC, mlen) ||
	    memcmp(buf + mlen, key, klen)) {
		free(buf);
		return;
	}
	memset(got, 0, sizeof(got));
	off = mlen + klen;
	for (i = 0; i < NR_DESCRIBED; i++) {
		uint32_t feat, len;

		if ((size_t)st.st_size - off < 9)
			break;
		memcpy(&feat, buf + off, 4);
		said[i] = buf[off + 4];
		memcpy(&len, buf + off + 5, 4);
		off += 9;
		if (feat != (uint32_t)described[i] || len > (size_t)st.st_size - off)
			break;
		blob_put(&got[i], buf + off, len);
		off += len;
	}
	bool whole = i == NR_DESCRIBED && off == (size_t)st.st_size;

	for (int j = 0; whole && j < NR_DESCRIBED; j++)
		whole = !got[j].err;
	if (whole) {
		for (i = 0; i < NR_DESCRIBED; i++) {
			cache[described[i]] = got[i];
			have[described[i]] = said[i];
			done[described[i]] = true;
		}
		cache_used = true;
	} else {
		for (int j = 0; j < NR_DESCRIBED; j++)
			blob_free(&got[j]);
	}
	free(buf);
}

/* The body of feature @feat, read once and kept; NULL when this machine does not say. */
static const struct blob *body_of(int feat)
{
	struct blob *c;

	if (feat < 0 || feat > PERF_FEAT_PMU_CAPS)
		return NULL;
	if (!cache_tried)
		load_cache();
	c = &cache[feat];
	if (!done[feat]) {
		switch (feat) {
		case PERF_FEAT_NRCPUS:
			have[feat] = file_host__nrcpus(c);
			break;
		case PERF_FEAT_CPUDESC:
			have[feat] = file_host__cpudesc(c);
			break;
		case PERF_FEAT_CPUID:
			have[feat] = feat_cpuid(c);
			break;
		case PERF_FEAT_CPU_TOPOLOGY:
			have[feat] = feat_cpu_topology(c);
			break;
		case PERF_FEAT_NUMA_TOPOLOGY:
			have[feat] = feat_numa(c);
			break;
		case PERF_FEAT_PMU_MAPPINGS:
			have[feat] = feat_pmu_mappings(c);
			break;
		case PERF_FEAT_CACHE:
			have[feat] = feat_cache(c);
			break;
		case PERF_FEAT_MEM_TOPOLOGY:
			have[feat] = feat_mem_topology(c);
			break;
		case PERF_FEAT_BPF_PROG_INFO:
		case PERF_FEAT_BPF_BTF:
		case PERF_FEAT_PMU_CAPS:
			blob_u32(c, 0); /* none recorded, as perf writes it */
			have[feat] = true;
			break;
		}
		if (c->err) {
			blob_free(c);
			return NULL; /* out of memory: try again next time */
		}
		done[feat] = true;
	}
	return have[feat] ? c : NULL;
}

/*
 * Once every described feature was read from /proc and /sys, keep them in
 * the cache file for the next images (written whole to a temporary name,
 * then renamed over the old: a reader sees one or the other). Quietly does
 * nothing when it cannot.
 */
void file_machine__keep(void)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 48], key[600];
	struct blob b = {0};
	int fd, i;

	if (cache_used)
		return;
	cache_used = true; /* once */
	for (i = 0; i < NR_DESCRIBED; i++)
		if (!done[described[i]])
			return;
	if (!machine_key(key, sizeof(key)) || !cache_path(path, sizeof(path)) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= sizeof(tmp))
		return;
	blob_put(&b, CACHE_MAGIC, strlen(CACHE_MAGIC));
	blob_put(&b, key, strlen(key));
	for (i = 0; i < NR_DESCRIBED; i++) {
		const struct blob *c = &cache[described[i]];
		uint32_t feat = (uint32_t)described[i], len = (uint32_t)c->len;
		uint8_t said = have[described[i]];

		blob_put(&b, &feat, 4);
		blob_put(&b, &said, 1);
		blob_put(&b, &len, 4);
		blob_put(&b, c->p, c->len);
	}
	fd = b.err || !raw_syscall__fits_fsize(b.len) /* RLIMIT_FSIZE: no SIGXFSZ of ours */
		 ? -1
		 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = write(fd, b.p, b.len) == (ssize_t)b.len;

		if (close(fd) < 0 || !ok || rename(tmp, path) < 0)
			unlink(tmp);
	}
	blob_free(&b);
}

/*
 * Append the body of feature @feat to @b; false when this machine does not
 * say (the feature is left out, as perf leaves it out), or when @max_len is
 * not 0 and the body is longer (a many-CPU machine's caches: the writer
 * rewrites the early features after every flush, so such a body waits for
 * the final write).
 */
bool file_machine__feature(int feat, struct blob *b, size_t max_len)
{
	const struct blob *c = body_of(feat);

	if (!c || (max_len && c->len > max_len))
		return false;
	blob_put(b, c->p, c->len);
	return true;
}
