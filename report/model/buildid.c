// SPDX-License-Identifier: MIT
/*
 * buildid.c - where a recorded object is found by its build id besides its
 * path: the build-id cache `perf record` fills ($PERF_BUILDID_DIR, else
 * ~/.debug: .build-id/xx/rest is a link to the object's directory in the
 * cache, which holds "elf", "vdso", "debug" or "kallsyms"; perf before 4.x
 * linked .build-id/xx/rest to the file itself), and this machine's vdso,
 * read from our own process when its build id is the one recorded.
 */
#include "model/model.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/auxv.h>

/*
 * True if @file_hex, the build id an ELF file carries, is @recorded, the
 * one a perf.data file gives: perf pads ids shorter than 20 bytes with zeros.
 */
bool buildid__same(const char *file_hex, const char *recorded)
{
	size_t n = strlen(file_hex);

	if (!n || strncmp(file_hex, recorded, n) != 0)
		return false;
	for (recorded += n; *recorded; recorded++) {
		if (*recorded != '0')
			return false;
	}
	return true;
}

/* The build-id cache directory into @buf: $PERF_BUILDID_DIR, else $HOME/.debug. */
static bool cache_dir(char *buf, size_t len)
{
	const char *dir = getenv("PERF_BUILDID_DIR"), *home;

	if (dir && dir[0])
		return snprintf(buf, len, "%s", dir) < (int)len;
	home = getenv("HOME");
	return home && home[0] && snprintf(buf, len, "%s/.debug", home) < (int)len;
}

/*
 * The path of the file @name ("elf", "vdso", "debug"; NULL for the entry
 * itself, older perf's link to the file) that the build-id cache keeps for
 * build id @hex, into @buf. Returns 0, or
 * -ENOENT when there is no cache directory, the id is too short or the path
 * does not fit.
 */
int buildid__cache_path(const char *hex, const char *name, char *buf, size_t len)
{
	char dir[4096];
	int w;

	if (strlen(hex) < 4 || !cache_dir(dir, sizeof(dir)))
		return -ENOENT;
	w = name ? snprintf(buf, len, "%s/.build-id/%.2s/%s/%s", dir, hex, hex + 2, name)
		 : snprintf(buf, len, "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	return w > 0 && (size_t)w < len ? 0 : -ENOENT;
}

/* Whether a [vdso] recorded without a build id is this machine's (buildid__host_vdso). */
static bool host_vdso;

/*
 * A [vdso] recorded without a build id (perf's pipe mode writes none) is
 * this machine's when the files were recorded on this kernel: every file
 * names its release, and it is the running one (perf report takes its own
 * vdso for such a map whatever the kernel; we do when it is sure to fit).
 */
void buildid__host_vdso(bool same_kernel)
{
	host_vdso = same_kernel;
}

bool buildid__vdso_known(const char *hex)
{
	return hex[0] || host_vdso;
}

/*
 * This machine's vdso as an ELF image in our own memory, when its build id
 * is @hex (or @hex is "" and buildid__host_vdso() said the files are this
 * kernel's): opened into @eh (fd -1; the image lives as long as the
 * process). Returns true on success.
 */
bool buildid__own_vdso(struct elf_handle *eh, const char *hex)
{
	const Elf64_Ehdr *eh64 = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	char own[2 * BUILD_ID_MAX + 1];
	size_t size, i;

	eh->fd = -1;
	eh->elf = NULL;
	if (!eh64 || memcmp(eh64->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh64->e_ident[EI_CLASS] != ELFCLASS64)
		return false;
	/* the image: up to its section headers, or its last loaded byte if later */
	size = eh64->e_shoff + (size_t)eh64->e_shnum * eh64->e_shentsize;
	for (i = 0; i < eh64->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh64 + eh64->e_phoff) + i;

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	eh->elf = elf_memory((char *)eh64, size);
	if (!buildid__vdso_known(hex) || !eh->elf || elf_kind(eh->elf) != ELF_K_ELF ||
	    (hex[0] && (!elffile__build_id(eh->elf, own) || !buildid__same(own, hex)))) {
		elffile__close(eh);
		return false;
	}
	return true;
}
