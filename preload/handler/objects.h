/* SPDX-License-Identifier: MIT */
/*
 * objects.h - the table of loaded objects (objects.c) as object_notes.c and
 * object_records.c read it to describe them and write their MMAP2 records.
 */
#ifndef AUTOPROF_HANDLER_OBJECTS_H
#define AUTOPROF_HANDLER_OBJECTS_H

#include <link.h>

#include "handler.h"
#include "setup.h"

#define MAX_OBJECTS 1024
#define MAX_SPECIAL 32
#define PAGE	    4096ULL

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };

struct object {
	int state; /* SLOT_*; atomic */
	uintptr_t lo, hi, bias;
	const ElfW(Phdr) * phdr;
	uint16_t phnum;
	uint8_t kind, bid_size;
	uint8_t bid[20];
	uint64_t loaded_after;		/* a time at which it was not loaded yet */
	const uint8_t *eh_hdr, *eh_end; /* .eh_frame_hdr, the end of its segment (or NULL) */
	char *name;	   /* its path, in room of name_cap bytes (objects.c: packed apart) */
	uint32_t name_cap; /* kept with the slot: a reused slot's name fits it again */
};

/* The object holding pc, or NULL; hint is where to look first. Async-signal-safe. */
struct object *objects__lookup(uintptr_t pc, struct object *hint);
/* Slots ever claimed, and slot i's object when ready (else NULL). Async-signal-safe. */
int objects__count(void);
struct object *objects__at(int i);
/* The current file's generation. Async-signal-safe. */
int objects__file_gen(void);
/* The file generation o's MMAP2 records went to (atomic). Kept apart from the slots, with the
 * refreshes' marks: a refresh in a forked child wrote a page of each slot (a copy each). */
int *objects__written_gen(const struct object *o);

/* object_notes.c: o's build id, and its .eh_frame_hdr and the end of the segment holding it
 * (NULL when it has none), from its program headers. Async-signal-safe. */
void object_notes__build_id(struct object *o);
void object_notes__eh_frame(struct object *o);

/* object_records.c: every object this file lacks, written now, with the sampling signal signo
 * blocked meanwhile. Caller holds the sync lock. Not async-signal-safe. */
void object_records__write_unwritten(struct writer *w, pid_t pid, int signo);

#endif
