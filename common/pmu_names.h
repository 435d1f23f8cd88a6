/* SPDX-License-Identifier: MIT */
/*
 * pmu_names.h - the PMU's own event names (INST_RETIRED.ANY,
 * MEM_LOAD_RETIRED.L3_MISS:c=2, amd64_fam19h_zen3::RETIRED_INSTRUCTIONS)
 * encoded by libpfm4. Kept apart from common.h because libpfm4's headers carry
 * their own struct perf_event_attr, which clashes with the kernel's.
 */
#ifndef AUTOPROF_PMU_NAMES_H
#define AUTOPROF_PMU_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pmu_encoding {
	uint32_t type;
	uint64_t config, config1, config2;
	bool excl_user, excl_kernel, excl_hv; /* from modifiers in the name (u, k, h) */
	bool plm_named;			      /* the name chose its levels itself */
	char pmu[32];			      /* libpfm4's PMU name, e.g. "skl" */
};

/*
 * Encode @name with libpfm4 (initialised on first use; LIBPFM_FORCE_PMU picks
 * a PMU model for tests). Perf's dotted spellings (EVENT.UMASK) and Intel's
 * fixed-counter names are tried too. Returns 0, -ENOENT (no such event on
 * this machine's PMUs), or -EINVAL with @why set (a bad modifier). Not
 * async-signal-safe.
 */
int pmu_names__encode(const char *name, struct pmu_encoding *enc, char *why, size_t why_len);

/*
 * Print the events of this machine's core PMUs (or the forced model), one
 * per line as EVENT.UMASK with its description, those containing @filter
 * (case-insensitive; NULL: all). Returns how many were printed, or -1 when
 * libpfm4 knows no core PMU here.
 */
int pmu_names__list(FILE *out, const char *filter);

#endif /* AUTOPROF_PMU_NAMES_H */
