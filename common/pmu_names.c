// SPDX-License-Identifier: MIT
/*
 * pmu_names.c - PMU event names through libpfm4 (see pmu_names.h).
 *
 * libpfm4 spells events EVENT:UMASK:modifier=value, optionally behind a PMU
 * name (skl::INST_RETIRED:ANY_P). perf and Intel's manuals spell them
 * EVENT.UMASK; the fixed counters have names of their own in libpfm4
 * (INST_RETIRED.ANY is INSTRUCTION_RETIRED). Not async-signal-safe.
 *
 * libpfm4 is loaded (dlopen) the first time a name needs it, not linked:
 * relocating its tables (41k relocations) took 0.8-3.7 ms of every profiled
 * process's start-up, which perf's own names never need.
 */
#include "pmu_names.h"

#include <dlfcn.h>
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Intel's fixed-counter names, which libpfm4 calls otherwise. */
static const struct {
	const char *intel, *pfm;
} fixed_names[] = {
    {"INST_RETIRED.ANY", "INSTRUCTION_RETIRED"},
    {"CPU_CLK_UNHALTED.THREAD", "UNHALTED_CORE_CYCLES"},
    {"CPU_CLK_UNHALTED.CORE", "UNHALTED_CORE_CYCLES"},
    {"CPU_CLK_UNHALTED.REF_TSC", "UNHALTED_REFERENCE_CYCLES"},
};

/* The libpfm4 functions used here, from libpfm.so.4 once loaded (pfm_ready()). */
static struct {
	__typeof__(pfm_initialize) *initialize;
	__typeof__(pfm_get_os_event_encoding) *get_os_event_encoding;
	__typeof__(pfm_get_event_info) *get_event_info;
	__typeof__(pfm_get_pmu_info) *get_pmu_info;
	__typeof__(pfm_get_event_next) *get_event_next;
	__typeof__(pfm_get_event_attr_info) *get_event_attr_info;
	__typeof__(pfm_strerror) *strerror;
} pfm;
static char pfm_why[160]; /* why libpfm4 is not there, once tried */

/* Load and initialize libpfm4 (once); false, with pfm_why said, if it cannot be. */
static int pfm_ready(void)
{
	static int state; /* 0 not tried, 1 ready, -1 failed */
	void *h;

	if (state)
		return state > 0;
	state = -1;
	h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(pfm_why, sizeof(pfm_why), "libpfm4 (libpfm.so.4) cannot be loaded: %s",
			 dlerror());
		return 0;
	}
#define PFM_SYM(f) (*(void **)&pfm.f = dlsym(h, "pfm_" #f)) != NULL
	if (!(PFM_SYM(initialize) && PFM_SYM(get_os_event_encoding) && PFM_SYM(get_event_info) &&
	      PFM_SYM(get_pmu_info) && PFM_SYM(get_event_next) && PFM_SYM(get_event_attr_info) &&
	      PFM_SYM(strerror))) {
#undef PFM_SYM
		snprintf(pfm_why, sizeof(pfm_why), "libpfm.so.4 lacks a function autoprof uses");
		return 0;
	}
	if (pfm.initialize() != PFM_SUCCESS) {
		snprintf(pfm_why, sizeof(pfm_why), "libpfm4 does not initialize here");
		return 0;
	}
	state = 1;
	return 1;
}

/* Ask libpfm4 for @name exactly. Returns a pfm_err_t. */
static int try_encode(const char *name, struct pmu_encoding *enc)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	pfm_event_info_t info;
	pfm_pmu_info_t pinfo;
	int err;

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	err = pfm.get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (err != PFM_SUCCESS)
		return err;
	enc->type = attr.type;
	enc->config = attr.config;
	enc->config1 = attr.config1;
	enc->config2 = attr.config2;
	enc->excl_user = attr.exclude_user;
	enc->excl_kernel = attr.exclude_kernel;
	enc->excl_hv = attr.exclude_hv;
	enc->pmu[0] = 0;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.size = sizeof(pinfo);
	if (pfm.get_event_info(arg.idx, PFM_OS_NONE, &info) == PFM_SUCCESS &&
	    pfm.get_pmu_info(info.pmu, &pinfo) == PFM_SUCCESS && pinfo.name)
		snprintf(enc->pmu, sizeof(enc->pmu), "%s", pinfo.name);
	return PFM_SUCCESS;
}

/* True if @name sets privilege levels itself (a u, k or h modifier). */
static bool names_levels(const char *name)
{
	const char *p = strchr(name, ':');

	for (; p; p = strchr(p + 1, ':')) {
		if (p[1] == ':') { /* the PMU prefix */
			p++;
			continue;
		}
		if (strchr("ukh", p[1]) && (p[2] == 0 || p[2] == ':' || p[2] == '='))
			return true;
	}
	return false;
}

/*
 * The name of the processor core PMU libpfm4 found on this machine (or was
 * told to fake), or NULL.
 */
static const char *core_pmu(void)
{
	pfm_pmu_info_t info;
	int pmu;

	pfm_for_all_pmus(pmu)
	{
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm.get_pmu_info((pfm_pmu_t)pmu, &info) == PFM_SUCCESS && info.is_present &&
		    info.type == PFM_PMU_TYPE_CORE)
			return info.name;
	}
	return NULL;
}

int pmu_names__encode(const char *name, struct pmu_encoding *enc, char *why, size_t why_len)
{
	char alt[256];
	size_t i;
	int err;

	why[0] = 0;
	if (!pfm_ready()) {
		snprintf(why, why_len, "not an event perf knows (PMU event names need %s)",
			 pfm_why);
		return -ENOENT;
	}
	memset(enc, 0, sizeof(*enc));
	err = try_encode(name, enc);
	if (err != PFM_SUCCESS) {
		/* Intel's fixed counters, then EVENT.UMASK as EVENT:UMASK (every dot). */
		for (i = 0; i < sizeof(fixed_names) / sizeof(fixed_names[0]); i++) {
			size_t n = strlen(fixed_names[i].intel);

			if (!strncmp(name, fixed_names[i].intel, n) &&
			    (name[n] == 0 || name[n] == ':') &&
			    (size_t)snprintf(alt, sizeof(alt), "%s%s", fixed_names[i].pfm,
					     name + n) < sizeof(alt)) {
				err = try_encode(alt, enc);
				break;
			}
		}
	}
	if (err != PFM_SUCCESS && strchr(name, '.') && strlen(name) < sizeof(alt)) {
		int err2;

		for (i = 0; name[i]; i++)
			alt[i] = name[i] == '.' ? ':' : name[i];
		alt[i] = 0;
		err2 = try_encode(alt, enc);
		if (err2 == PFM_SUCCESS || err == PFM_ERR_NOTFOUND)
			err = err2;
	}
	if (err == PFM_SUCCESS) {
		enc->plm_named = names_levels(name);
		return 0;
	}
	if (err == PFM_ERR_NOTFOUND || err == PFM_ERR_NOTSUPP) {
		const char *pmu = core_pmu();

		if (pmu)
			snprintf(why, why_len,
				 "not an event perf knows, nor one of this CPU's PMU events "
				 "(libpfm4 model %s)",
				 pmu);
		else
			snprintf(why, why_len,
				 "not an event perf knows, and libpfm4 finds no hardware PMU here "
				 "to look the name up in");
		return -ENOENT;
	}
	snprintf(why, why_len, "%s", pfm.strerror(err));
	return -EINVAL;
}

/* One line "  NAME  description", NAME filtered by @filter. Returns 1 if printed. */
static int list_one(FILE *out, const char *filter, const char *name, const char *desc)
{
	if (filter && !strcasestr(name, filter))
		return 0;
	fprintf(out, "  %-44s %s\n", name, desc ? desc : "");
	return 1;
}

int pmu_names__list(FILE *out, const char *filter)
{
	int pmu, n = 0, cores = 0;

	if (!pfm_ready())
		return -1;
	pfm_for_all_pmus(pmu)
	{
		pfm_pmu_info_t pinfo;

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm.get_pmu_info((pfm_pmu_t)pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present ||
		    pinfo.type != PFM_PMU_TYPE_CORE)
			continue;
		cores++;
		fprintf(out, "\nPMU events of this CPU (libpfm4 model %s: %s):\n", pinfo.name,
			pinfo.desc ? pinfo.desc : "");
		for (int idx = pinfo.first_event; idx != -1; idx = pfm.get_event_next(idx)) {
			pfm_event_info_t info;
			int umasks = 0;

			memset(&info, 0, sizeof(info));
			info.size = sizeof(info);
			if (pfm.get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
				continue;
			for (int a = 0; a < info.nattrs; a++) {
				pfm_event_attr_info_t ainfo;
				char name[256];

				memset(&ainfo, 0, sizeof(ainfo));
				ainfo.size = sizeof(ainfo);
				if (pfm.get_event_attr_info(idx, a, PFM_OS_NONE, &ainfo) !=
					PFM_SUCCESS ||
				    ainfo.type != PFM_ATTR_UMASK)
					continue;
				umasks++;
				snprintf(name, sizeof(name), "%s.%s", info.name, ainfo.name);
				n += list_one(out, filter, name, ainfo.desc);
			}
			if (!umasks)
				n += list_one(out, filter, info.name, info.desc);
		}
	}
	return cores ? n : -1;
}
