/* SPDX-License-Identifier: MIT */
/*
 * object_notes.c - what objects.c reads from a loaded object's own program
 * headers when it adds it to its table: the GNU build id (PT_NOTE), for
 * the MMAP2 records, and where its .eh_frame_hdr and the segment holding
 * it are (PT_GNU_EH_FRAME), for cfi.c's rules. Reads mapped memory only:
 * async-signal-safe.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "objects.h"

/* The GNU build id in the object's notes, if they are in its mapped range. Async-signal-safe. */
void object_notes__build_id(struct object *o)
{
	for (int i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *ph = &o->phdr[i];
		uintptr_t p = o->bias + ph->p_vaddr, end = p + ph->p_memsz;
		size_t align = ph->p_align == 8 ? 8 : 4;

		if (ph->p_type != PT_NOTE || p < o->lo || end > o->hi)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			uintptr_t name = p + sizeof(*nh);
			uintptr_t desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));

			p = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
			if (p > end || p < desc)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp((const void *)name, "GNU", 4) && nh->n_descsz > 0 &&
			    nh->n_descsz <= sizeof(o->bid)) {
				memcpy(o->bid, (const void *)desc, nh->n_descsz);
				o->bid_size = (uint8_t)nh->n_descsz;
				return;
			}
		}
	}
}

/*
 * Where o's .eh_frame_hdr is (PT_GNU_EH_FRAME) and where the loaded segment
 * holding it ends (.eh_frame follows it there). Async-signal-safe.
 */
void object_notes__eh_frame(struct object *o)
{
	o->eh_hdr = o->eh_end = NULL;
	for (int i = 0; i < o->phnum; i++) {
		if (o->phdr[i].p_type != PT_GNU_EH_FRAME)
			continue;
		o->eh_hdr = (const uint8_t *)(o->bias + o->phdr[i].p_vaddr);
		for (int j = 0; j < o->phnum; j++) {
			const ElfW(Phdr) *ph = &o->phdr[j];
			uintptr_t lo = o->bias + ph->p_vaddr, hi = lo + ph->p_filesz;

			if (ph->p_type == PT_LOAD && (uintptr_t)o->eh_hdr >= lo &&
			    (uintptr_t)o->eh_hdr < hi)
				o->eh_end = (const uint8_t *)hi;
		}
		if (!o->eh_end)
			o->eh_hdr = NULL;
		return;
	}
}
