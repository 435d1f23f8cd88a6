/* SPDX-License-Identifier: MIT */
/*
 * file_host.c - the host's feature sections, the same in both writers (the
 * library's file_features.c, the launcher's perf_out.c): host name, OS
 * release, the writer's version, architecture, total memory, and the clock
 * the samples are timed by (CLOCKID, CLOCK_DATA). The CPU counts and
 * description (file_host__nrcpus, file_host__cpudesc), fixed for a boot, are
 * kept with the machine's description for the next images (file_machine.c).
 * Laid out as perf record lays them out. Not async-signal-safe.
 */
#include <stdbool.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "blob.h"
#include "internal.h"

#define AUTOPROF_VERSION_STRING "autoprof 0.1"

/* NRCPUS: the CPUs the kernel may run (possible) and those online. True. */
bool file_host__nrcpus(struct blob *b)
{
	blob_u32(b, (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
	blob_u32(b, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
	return true;
}

/* CPUDESC: the first "model name" of /proc/cpuinfo, or "unknown". True. */
bool file_host__cpudesc(struct blob *b)
{
	char buf[16384], *line, *colon;

	if (raw_syscall__read_file("/proc/cpuinfo", buf, sizeof(buf)) > 0 &&
	    (line = strstr(buf, "model name")) && (colon = strchr(line, ':'))) {
		char *end = strchr(colon, '\n');

		if (end)
			*end = 0;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		blob_string(b, colon);
		return true;
	}
	blob_string(b, "unknown");
	return true;
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static void feat_clock_data(struct blob *b)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	blob_u32(b, 1);
	blob_u32(b, CLOCK_MONOTONIC);
	blob_u64(b, ns_of(&real));
	blob_u64(b, ns_of(&mono));
}

bool file_host__feature(int feat, struct blob *b)
{
	static struct utsname uts; /* one uname for the three features of a layout */
	static bool uts_read;
	struct sysinfo si;
	struct timespec res;

	switch (feat) {
	case PERF_FEAT_HOSTNAME:
	case PERF_FEAT_OSRELEASE:
	case PERF_FEAT_ARCH:
		if (feat == PERF_FEAT_HOSTNAME || !uts_read) /* the first of them in a layout */
			uts_read = uname(&uts) == 0;
		blob_string(b, feat == PERF_FEAT_HOSTNAME    ? uts.nodename
			       : feat == PERF_FEAT_OSRELEASE ? uts.release
							     : uts.machine);
		return true;
	case PERF_FEAT_VERSION:
		blob_string(b, AUTOPROF_VERSION_STRING);
		return true;
	case PERF_FEAT_TOTAL_MEM:
		blob_u64(b, sysinfo(&si) ? 0 : (uint64_t)si.totalram * si.mem_unit / 1024);
		return true;
	case PERF_FEAT_CLOCKID:
		clock_getres(CLOCK_MONOTONIC, &res);
		blob_u64(b, ns_of(&res));
		return true;
	case PERF_FEAT_CLOCK_DATA:
		feat_clock_data(b);
		return true;
	default:
		return false;
	}
}
