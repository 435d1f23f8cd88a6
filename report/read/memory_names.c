// SPDX-License-Identifier: MIT
/*
 * memory_names.c - the names of autoprof's memory events (AUTOPROF_MEMORY,
 * the library's session/memory.c): alloc-bytes, the allocations sampled, and
 * live-bytes, the sampled blocks still allocated at the end; the objects
 * events the reader derives from them (alloc-objects, live-objects:
 * driver/memory_events.c) and pprof's names for the four (alloc_space,
 * alloc_objects, inuse_space, inuse_objects).
 */
#include "read/read.h"

#include <string.h>

static const struct {
	const char *event, *objects, *pprof, *pprof_objects;
} kinds[] = {
    {"alloc-bytes", "alloc-objects", "alloc_space", "alloc_objects"},
    {"live-bytes", "live-objects", "inuse_space", "inuse_objects"},
};

/* The objects event derived from the memory event @ev (bytes), or NULL. */
const char *memory_names__objects_of(const char *ev)
{
	for (size_t i = 0; ev && i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(ev, kinds[i].event))
			return kinds[i].objects;
	return NULL;
}

/* Is @ev an event the reader derives from the memory events (alloc-objects, live-objects)? */
bool memory_names__derived(const char *ev)
{
	for (size_t i = 0; ev && i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(ev, kinds[i].objects))
			return true;
	return false;
}

/* Is @ev one of the memory events, in bytes (alloc-bytes, live-bytes)? */
bool memory_names__in_bytes(const char *ev)
{
	return memory_names__objects_of(ev) != NULL;
}

/*
 * pprof's name of the memory event @ev (bytes or objects) and its unit in
 * *@unit; NULL for other events.
 */
const char *memory_names__pprof_name(const char *ev, const char **unit)
{
	for (size_t i = 0; ev && i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(ev, kinds[i].event)) {
			*unit = "bytes";
			return kinds[i].pprof;
		}
		if (!strcmp(ev, kinds[i].objects)) {
			*unit = "count";
			return kinds[i].pprof_objects;
		}
	}
	return NULL;
}

/*
 * The column title of the memory event @ev's totals in the text views
 * ("Bytes" or "Objects": its period, not its records), or NULL for other events.
 */
const char *memory_names__column(const char *ev)
{
	for (size_t i = 0; ev && i < ARRAY_SIZE(kinds); i++) {
		if (!strcmp(ev, kinds[i].event))
			return "Bytes";
		if (!strcmp(ev, kinds[i].objects))
			return "Objects";
	}
	return NULL;
}
