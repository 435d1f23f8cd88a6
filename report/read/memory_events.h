/* SPDX-License-Identifier: MIT */
/*
 * memory_events.h - autoprof's memory events (alloc-bytes, live-bytes) and
 * the objects events the reader derives from them (memory_events.c).
 */
#ifndef AUTOPROF_REPORT_MEMORY_EVENTS_H
#define AUTOPROF_REPORT_MEMORY_EVENTS_H

#include "internal.h"

bool memory_events__in_bytes(const char *ev);
bool memory_events__derived(const char *ev);
const char *memory_events__pprof_name(const char *ev, const char **unit);
const char *memory_events__column(const char *ev);
int memory_events__count(struct session *s, const struct perf_file *pf, const struct sample *smp,
			 u32 comm, const u32 *frames, u32 nr);

#endif /* AUTOPROF_REPORT_MEMORY_EVENTS_H */
