// SPDX-License-Identifier: MIT
/*
 * event_units.c - what an event's period counts: nanoseconds for the CPU
 * clocks (cpu-clock, task-clock) and for wall-clock time, autoprof's
 * offcpu-time (AUTOPROF_OFFCPU, the library's session/offcpu.c: one record
 * per wait, its period the nanoseconds waited); bytes or objects for the
 * memory events (memory_names.c); else events. The views show wall-clock
 * time in seconds, the exports (pprof, speedscope, JSON) say the unit, and a
 * wall-clock record is one wait, never a number of samples.
 */
#include "read/read.h"

#include <string.h>

bool event_units__wall(const char *ev)
{
	return ev && !strcmp(ev, "offcpu-time");
}

bool event_units__cpu_clock(const char *ev)
{
	return ev && (!strncmp(ev, "cpu-clock", 9) || !strncmp(ev, "task-clock", 10));
}

const char *event_units__period_unit(const char *ev)
{
	const char *unit;

	if (memory_names__pprof_name(ev, &unit))
		return unit;
	return event_units__cpu_clock(ev) || event_units__wall(ev) ? "nanoseconds" : "count";
}
