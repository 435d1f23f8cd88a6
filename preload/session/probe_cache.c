/* SPDX-License-Identifier: MIT */
/*
 * probe_cache.c - a missing hardware event is probed once per run, not once
 * per process.
 *
 * Settling probes the sampling event (settle.c). On a machine without a PMU
 * (a VM) the default `cycles` fails with ENOENT (or EOPNOTSUPP, ENODEV) and
 * cpu-clock stands in. That failure is the machine's: the run's first
 * process passes it to its descendants in AUTOPROF_PROBED (the attr's hash
 * and the error), and a descendant probing the very same attr takes the
 * answer instead of a perf_event_open. Only that refusal is kept: a probe
 * that succeeded is made again in each process (a sandbox in a descendant,
 * seccomp or a lower perf_event_paranoid, must still send it to the
 * timers), and any other attr (another rate, event or stack size) is probed
 * as before.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* The last refusal of a missing event this process probed itself: its attr's hash, its error. */
static uint64_t found_hash;
static int found_err;

/* FNV-1a over the attr's bytes: the same attr, the same hash. */
static uint64_t attr_hash(const struct perf_event_attr *attr)
{
	const unsigned char *p = (const unsigned char *)attr;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < sizeof(*attr); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* Is err the kernel saying the event does not exist here? */
static bool missing(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

int probe_cache__probe(const struct perf_event_attr *attr)
{
	const char *kept = ap_env(AP_ENV_PROBED);
	uint64_t hash = attr_hash(attr), kept_hash;
	int kept_err, err;

	if (kept && sscanf(kept, "%" SCNx64 ":%d", &kept_hash, &kept_err) == 2 &&
	    kept_hash == hash && missing(-kept_err))
		return -kept_err;
	err = perf_event__probe(attr);
	if (missing(err)) {
		found_hash = hash;
		found_err = -err;
	}
	return err;
}

void probe_cache__export(void)
{
	char buf[40];

	if (!found_err)
		return;
	snprintf(buf, sizeof(buf), "%" PRIx64 ":%d", found_hash, found_err);
	setenv(ap_env_name(AP_ENV_PROBED), buf, 1);
}
