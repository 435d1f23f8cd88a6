/* SPDX-License-Identifier: MIT */
/*
 * gocheck.c - is this process a Go program without cgo? Its runtime installs
 * its handlers for every signal with raw rt_sigaction, makes its threads with
 * raw clone and ends with a raw exit_group: nothing the library interposes
 * sees any of it, so sampling from inside would leave a file with no sample.
 * Told by the main program's "Go" build-id note (a PT_NOTE) and the absence
 * of any DT_NEEDED library (a cgo program links libc and is profiled as any
 * other). Not async-signal-safe (dl_iterate_phdr).
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "internal.h"

#define NT_GO_BUILDID 4

/* Has the note segment at @p (@len bytes) a note of owner "Go" (Go writes "Go\0\0"), type 4? */
static bool go_note(const char *p, size_t len)
{
	size_t off = 0;

	while (off + sizeof(ElfW(Nhdr)) <= len) {
		const ElfW(Nhdr) *n = (const void *)(p + off);
		size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;

		if ((n->n_namesz == 3 || n->n_namesz == 4) && n->n_type == NT_GO_BUILDID &&
		    off + sizeof(*n) + 3 <= len && !memcmp(p + off + sizeof(*n), "Go", 3))
			return true;
		off += sizeof(*n) + name + desc;
	}
	return false;
}

/* dl_iterate_phdr's callback: the first object is the main program. */
static int main_program(struct dl_phdr_info *info, size_t size, void *data)
{
	bool *runtime_owned = data, go = false, needed = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *at = (const char *)(info->dlpi_addr + ph->p_vaddr);

		if (ph->p_type == PT_NOTE && go_note(at, ph->p_memsz))
			go = true;
		if (ph->p_type == PT_DYNAMIC)
			for (const ElfW(Dyn) *d = (const void *)at; d->d_tag != DT_NULL; d++)
				needed |= d->d_tag == DT_NEEDED;
	}
	*runtime_owned = go && !needed;
	return 1; /* the main program only */
}

bool gocheck__runtime_owned(void)
{
	bool owned = false;

	dl_iterate_phdr(main_program, &owned);
	return owned;
}
