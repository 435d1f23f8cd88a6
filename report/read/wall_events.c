// SPDX-License-Identifier: MIT
/*
 * wall_events.c - events whose period is wall-clock time, not a count:
 * autoprof's offcpu-time (AUTOPROF_OFFCPU, the library's session/offcpu.c),
 * one record per wait, its period the nanoseconds waited. The views show
 * them in seconds, the exports in nanoseconds, and a record is one wait,
 * never a number of samples.
 */
#include "read/read.h"

#include <string.h>

bool wall_events__is(const char *ev)
{
	return ev && !strcmp(ev, "offcpu-time");
}
