/* SPDX-License-Identifier: MIT */
/*
 * offcpu.c - off-CPU time (AUTOPROF_OFFCPU): where threads wait and how long.
 */
#include <string.h>
#include <time.h>

#include "internal.h"

/*
 * The file's attr of offcpu-time: a software event whose samples' period is
 * the nanoseconds a thread waited, in CLOCK_MONOTONIC time like the others.
 */
void offcpu__file_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr->sample_period = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}
