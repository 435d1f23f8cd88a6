// SPDX-License-Identifier: MIT
/*
 * events.c - event names as perf accepts them, to perf_event_attr fields:
 * perf's named events (include/autoprof/events.h), rNNNN raw codes, the
 * generic cache events (L1-dcache-load-misses, LLC-loads, dTLB-load-misses,
 * ...), the PMU's own names through libpfm4 (pmu_names.c), each with perf's
 * modifiers (:u, :k, :h, :p...). Not async-signal-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "autoprof/events.h"
#include "common.h"
#include "pmu_names.h"

static const struct {
	const char *name, *alias;
	uint32_t type;
	uint64_t config;
} event_table[] = {
#define EVENT_ROW(name, alias, type, config) {name, alias, type, config},
    AUTOPROF_EVENT_TABLE(EVENT_ROW)
#undef EVENT_ROW
};

/* perf's generic cache names, as perf's tools/perf/util/evsel.c spells them. */
static const struct {
	const char *name;
	unsigned id;
} caches[] = {
    {"L1-dcache", PERF_COUNT_HW_CACHE_L1D}, {"l1-d", PERF_COUNT_HW_CACHE_L1D},
    {"l1d", PERF_COUNT_HW_CACHE_L1D},	    {"L1-data", PERF_COUNT_HW_CACHE_L1D},
    {"L1-icache", PERF_COUNT_HW_CACHE_L1I}, {"l1-i", PERF_COUNT_HW_CACHE_L1I},
    {"l1i", PERF_COUNT_HW_CACHE_L1I},	    {"L1-instruction", PERF_COUNT_HW_CACHE_L1I},
    {"LLC", PERF_COUNT_HW_CACHE_LL},	    {"L2", PERF_COUNT_HW_CACHE_LL},
    {"dTLB", PERF_COUNT_HW_CACHE_DTLB},	    {"d-tlb", PERF_COUNT_HW_CACHE_DTLB},
    {"Data-TLB", PERF_COUNT_HW_CACHE_DTLB}, {"iTLB", PERF_COUNT_HW_CACHE_ITLB},
    {"i-tlb", PERF_COUNT_HW_CACHE_ITLB},    {"Instruction-TLB", PERF_COUNT_HW_CACHE_ITLB},
    {"branch", PERF_COUNT_HW_CACHE_BPU},    {"branches", PERF_COUNT_HW_CACHE_BPU},
    {"bpu", PERF_COUNT_HW_CACHE_BPU},	    {"btb", PERF_COUNT_HW_CACHE_BPU},
    {"bpc", PERF_COUNT_HW_CACHE_BPU},	    {"node", PERF_COUNT_HW_CACHE_NODE},
};

static const struct {
	const char *name;
	unsigned id;
} cache_ops[] = {
    {"load", PERF_COUNT_HW_CACHE_OP_READ},
    {"loads", PERF_COUNT_HW_CACHE_OP_READ},
    {"read", PERF_COUNT_HW_CACHE_OP_READ},
    {"store", PERF_COUNT_HW_CACHE_OP_WRITE},
    {"stores", PERF_COUNT_HW_CACHE_OP_WRITE},
    {"write", PERF_COUNT_HW_CACHE_OP_WRITE},
    {"prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH},
    {"prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH},
    {"speculative-read", PERF_COUNT_HW_CACHE_OP_PREFETCH},
    {"speculative-load", PERF_COUNT_HW_CACHE_OP_PREFETCH},
};

static const struct {
	const char *name;
	unsigned id;
} cache_results[] = {
    {"refs", PERF_COUNT_HW_CACHE_RESULT_ACCESS},     {"access", PERF_COUNT_HW_CACHE_RESULT_ACCESS},
    {"accesses", PERF_COUNT_HW_CACHE_RESULT_ACCESS}, {"misses", PERF_COUNT_HW_CACHE_RESULT_MISS},
    {"miss", PERF_COUNT_HW_CACHE_RESULT_MISS},
};

#define FIND(tab, s, len, out)                                                                     \
	({                                                                                         \
		bool found_ = false;                                                               \
		for (size_t i_ = 0; i_ < sizeof(tab) / sizeof(tab[0]); i_++)                       \
			if (strlen(tab[i_].name) == (len) &&                                       \
			    !strncasecmp(tab[i_].name, (s), (len))) {                              \
				*(out) = tab[i_].id;                                               \
				found_ = true;                                                     \
				break;                                                             \
			}                                                                          \
		found_;                                                                            \
	})

/* CACHE[-OP][-RESULT] (perf's spelling, any case). Returns true if @s is one. */
static bool parse_cache(const char *s, struct ap_event *ev)
{
	unsigned cache = 0, op = PERF_COUNT_HW_CACHE_OP_READ;
	unsigned result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	size_t best = 0;
	const char *rest;

	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		size_t n = strlen(caches[i].name);

		if (n > best && !strncasecmp(s, caches[i].name, n) && s[n] == '-') {
			best = n;
			cache = caches[i].id;
		}
	}
	if (!best)
		return false;
	rest = s + best + 1;
	/* "-OP-RESULT", "-OP" or "-RESULT"; ops may hold a dash (speculative-read). */
	for (size_t i = 0; i < sizeof(cache_ops) / sizeof(cache_ops[0]); i++) {
		size_t n = strlen(cache_ops[i].name);

		if (!strncasecmp(rest, cache_ops[i].name, n) && (!rest[n] || rest[n] == '-')) {
			op = cache_ops[i].id;
			rest += n + (rest[n] == '-');
			if (!*rest)
				goto done;
			break;
		}
	}
	if (!FIND(cache_results, rest, strlen(rest), &result))
		return false;
done:
	ev->type = PERF_TYPE_HW_CACHE;
	ev->config = cache | (op << 8) | (result << 16);
	return true;
}

/* perf's modifier letters after the last ':' (u, k, h, p, P, G, H, S, I, D). */
static bool parse_modifiers(const char *m, struct ap_event *ev)
{
	bool u = false, k = false, h = false;

	if (!*m || strspn(m, "ukhpPGHSID") != strlen(m))
		return false;
	for (; *m; m++) {
		switch (*m) {
		case 'u':
			u = true;
			break;
		case 'k':
			k = true;
			break;
		case 'h':
			h = true;
			break;
		case 'p':
			ev->precise = ev->precise < 3 ? (uint8_t)(ev->precise + 1) : 3;
			break;
		case 'P':
			ev->precise = 3;
			break;
		default: /* guest/host, S, I, D: nothing here needs them */
			break;
		}
	}
	if (u || k || h) {
		ev->levels = true;
		ev->excl_user = !u;
		ev->excl_kernel = !k;
		ev->excl_hv = !h;
	}
	return true;
}

/* @s without modifiers: perf's names, raw codes, cache events. */
static bool parse_perf_name(const char *s, struct ap_event *ev)
{
	if (s[0] == 'r' && s[1]) {
		char *end;
		unsigned long long v = strtoull(s + 1, &end, 16);

		if (!*end) {
			ev->type = PERF_TYPE_RAW;
			ev->config = v;
			return true;
		}
	}
	for (size_t i = 0; i < sizeof(event_table) / sizeof(event_table[0]); i++) {
		if (!strcmp(s, event_table[i].name) ||
		    (event_table[i].alias && !strcmp(s, event_table[i].alias))) {
			ev->type = event_table[i].type;
			ev->config = event_table[i].config;
			return true;
		}
	}
	return parse_cache(s, ev);
}

static int from_pmu(const char *s, struct ap_event *ev, char *why, size_t why_len)
{
	struct pmu_encoding enc;
	int err = pmu_names__encode(s, &enc, why, why_len);

	if (err)
		return err;
	ev->type = enc.type;
	ev->config = enc.config;
	ev->config1 = enc.config1;
	ev->config2 = enc.config2;
	if (enc.plm_named) {
		ev->levels = true;
		ev->excl_user = enc.excl_user;
		ev->excl_kernel = enc.excl_kernel;
		ev->excl_hv = enc.excl_hv;
	}
	ev->pmu_named = true;
	return 0;
}

int events__parse(const char *name, struct ap_event *ev, char *why, size_t why_len)
{
	char base[256];
	const char *colon = strrchr(name, ':');
	int err;

	memset(ev, 0, sizeof(*ev));
	why[0] = 0;
	if (!*name || strlen(name) >= sizeof(base)) {
		snprintf(why, why_len, "not an event name");
		return -EINVAL;
	}
	strcpy(base, name);
	if (colon && colon > name && colon[-1] != ':' &&
	    parse_modifiers(colon + 1, ev)) /* perf's EVENT:MODIFIERS */
		base[colon - name] = 0;
	if (parse_perf_name(base, ev))
		return 0;
	if (!from_pmu(base, ev, why, why_len))
		return 0;
	/* libpfm4's own spelling may end in a modifier it knows better (:u). */
	memset(ev, 0, sizeof(*ev));
	err = from_pmu(name, ev, why, why_len);
	if (err == -ENOENT && !why[0])
		snprintf(why, why_len,
			 "not an event perf or this machine's PMU knows (try cpu-clock, "
			 "task-clock, cycles, instructions, L1-dcache-load-misses, rNNNN, or a "
			 "PMU event name such as INST_RETIRED.ANY)");
	return err;
}

void events__apply(const struct ap_event *ev, struct perf_event_attr *attr)
{
	attr->type = ev->type;
	attr->config = ev->config;
	attr->config1 = ev->config1;
	attr->config2 = ev->config2;
	if (ev->levels) {
		attr->exclude_user = ev->excl_user;
		attr->exclude_kernel = ev->excl_kernel;
		attr->exclude_hv = ev->excl_hv;
	}
	if (ev->precise)
		attr->precise_ip = ev->precise;
}
