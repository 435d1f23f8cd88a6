// SPDX-License-Identifier: MIT
/*
 * evname.c - a perf-style event name from an attr's type and config, used
 * when the file has no EVENT_DESC feature.
 */
#include "read/read.h"

#include <stdlib.h>

static const char *const hw_names[] = {
    [PERF_COUNT_HW_CPU_CYCLES] = "cycles",
    [PERF_COUNT_HW_INSTRUCTIONS] = "instructions",
    [PERF_COUNT_HW_CACHE_REFERENCES] = "cache-references",
    [PERF_COUNT_HW_CACHE_MISSES] = "cache-misses",
    [PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branches",
    [PERF_COUNT_HW_BRANCH_MISSES] = "branch-misses",
    [PERF_COUNT_HW_BUS_CYCLES] = "bus-cycles",
    [PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = "stalled-cycles-frontend",
    [PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = "stalled-cycles-backend",
    [PERF_COUNT_HW_REF_CPU_CYCLES] = "ref-cycles",
};

static const char *const sw_names[] = {
    [PERF_COUNT_SW_CPU_CLOCK] = "cpu-clock",
    [PERF_COUNT_SW_TASK_CLOCK] = "task-clock",
    [PERF_COUNT_SW_PAGE_FAULTS] = "page-faults",
    [PERF_COUNT_SW_CONTEXT_SWITCHES] = "context-switches",
    [PERF_COUNT_SW_CPU_MIGRATIONS] = "cpu-migrations",
    [PERF_COUNT_SW_PAGE_FAULTS_MIN] = "minor-faults",
    [PERF_COUNT_SW_PAGE_FAULTS_MAJ] = "major-faults",
    [PERF_COUNT_SW_ALIGNMENT_FAULTS] = "alignment-faults",
    [PERF_COUNT_SW_EMULATION_FAULTS] = "emulation-faults",
    [PERF_COUNT_SW_DUMMY] = "dummy",
    [PERF_COUNT_SW_BPF_OUTPUT] = "bpf-output",
    [11] = "cgroup-switches",
};

/* A malloc'ed name for @attr: "cycles", "cpu-clock", "r1a2", ...; NULL if out of memory. */
char *evname__from_attr(const struct perf_event_attr *attr)
{
	const char *name = NULL;
	char *out = NULL;
	int ret;

	if (attr->type == PERF_TYPE_HARDWARE && attr->config < ARRAY_SIZE(hw_names))
		name = hw_names[attr->config];
	else if (attr->type == PERF_TYPE_SOFTWARE && attr->config < ARRAY_SIZE(sw_names))
		name = sw_names[attr->config];
	if (name)
		return strdup(name);
	switch (attr->type) {
	case PERF_TYPE_RAW:
		ret = asprintf(&out, "r%llx", (unsigned long long)attr->config);
		break;
	case PERF_TYPE_TRACEPOINT:
		ret = asprintf(&out, "tracepoint:%llu", (unsigned long long)attr->config);
		break;
	case PERF_TYPE_HW_CACHE:
		ret = asprintf(&out, "hw-cache:0x%llx", (unsigned long long)attr->config);
		break;
	case PERF_TYPE_BREAKPOINT:
		ret = asprintf(&out, "mem:0x%llx", (unsigned long long)attr->bp_addr);
		break;
	default:
		ret = asprintf(&out, "type%u:0x%llx", attr->type, (unsigned long long)attr->config);
		break;
	}
	return ret < 0 ? NULL : out;
}

static const char *const record_names[PERF_RECORD_LAST_KNOWN] = {
    [PERF_RECORD_MMAP] = "MMAP",
    [PERF_RECORD_LOST] = "LOST",
    [PERF_RECORD_COMM] = "COMM",
    [PERF_RECORD_EXIT] = "EXIT",
    [PERF_RECORD_THROTTLE] = "THROTTLE",
    [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
    [PERF_RECORD_FORK] = "FORK",
    [PERF_RECORD_READ] = "READ",
    [PERF_RECORD_SAMPLE] = "SAMPLE",
    [PERF_RECORD_MMAP2] = "MMAP2",
    [11] = "AUX",
    [12] = "ITRACE_START",
    [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
    [14] = "SWITCH",
    [15] = "SWITCH_CPU_WIDE",
    [16] = "NAMESPACES",
    [17] = "KSYMBOL",
    [18] = "BPF_EVENT",
    [19] = "CGROUP",
    [20] = "TEXT_POKE",
    [21] = "AUX_OUTPUT_HW_ID",
    [64] = "HEADER_ATTR",
    [65] = "HEADER_EVENT_TYPE",
    [66] = "HEADER_TRACING_DATA",
    [67] = "HEADER_BUILD_ID",
    [68] = "FINISHED_ROUND",
    [69] = "ID_INDEX",
    [70] = "AUXTRACE_INFO",
    [71] = "AUXTRACE",
    [72] = "AUXTRACE_ERROR",
    [73] = "THREAD_MAP",
    [74] = "CPU_MAP",
    [75] = "STAT_CONFIG",
    [76] = "STAT",
    [77] = "STAT_ROUND",
    [78] = "EVENT_UPDATE",
    [79] = "TIME_CONV",
    [80] = "HEADER_FEATURE",
    [81] = "COMPRESSED",
    [82] = "FINISHED_INIT",
};

/* perf's name of record type @type ("SAMPLE", "MMAP2", ...), or NULL if unknown. */
const char *evname__record_type(u32 type)
{
	return type < ARRAY_SIZE(record_names) ? record_names[type] : NULL;
}
