/* SPDX-License-Identifier: MIT */
/*
 * elf_interp.c - does a program have a dynamic loader? A statically linked
 * ELF program (no PT_INTERP: static or static-pie, Go with CGO_ENABLED=0)
 * never reads LD_PRELOAD. Used by the launcher to choose outside mode
 * (launcher/static_check.c) and by the library to say that a program it
 * execs is one it cannot enter (preload/wrap/exec_note.c). Reads with
 * pread only and allocates nothing: usable in a vfork child.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

bool elf_interp__resolve(const char *command, char *out, size_t cap)
{
	const char *path = getenv("PATH");

	if (strchr(command, '/'))
		return snprintf(out, cap, "%s", command) < (int)cap;
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *colon = strchrnul(p, ':');
		int len = (int)(colon - p);

		if (snprintf(out, cap, "%.*s%s%s", len, p, len ? "/" : "", command) < (int)cap &&
		    access(out, X_OK) == 0)
			return true;
		if (!*colon)
			return false;
		p = colon;
	}
}

int elf_interp__has(int fd)
{
	unsigned char ident[EI_NIDENT];
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;
	uint64_t phoff;
	unsigned phnum, phentsize;

	if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG))
		return -1;
	if (ident[EI_CLASS] == ELFCLASS64) {
		if (pread(fd, &e64, sizeof(e64), 0) != (ssize_t)sizeof(e64))
			return -1;
		phoff = e64.e_phoff, phnum = e64.e_phnum, phentsize = e64.e_phentsize;
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		if (pread(fd, &e32, sizeof(e32), 0) != (ssize_t)sizeof(e32))
			return -1;
		phoff = e32.e_phoff, phnum = e32.e_phnum, phentsize = e32.e_phentsize;
	} else {
		return -1;
	}
	if (phentsize < sizeof(uint32_t) || phnum > 4096)
		return -1;
	for (unsigned i = 0; i < phnum; i++) {
		uint32_t type;

		if (pread(fd, &type, sizeof(type), (off_t)(phoff + (uint64_t)i * phentsize)) !=
		    (ssize_t)sizeof(type))
			return -1;
		if (type == PT_INTERP)
			return 1;
	}
	return 0;
}

bool elf_interp__static_program(const char *path)
{
	const char *base = strrchr(path, '/');
	int fd, interp;

	base = base ? base + 1 : path;
	/* The dynamic loader itself has no PT_INTERP; run directly, it loads the library. */
	if ((!strncmp(base, "ld-", 3) && strstr(base, ".so")) || !strncmp(base, "ld.so", 5))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	interp = elf_interp__has(fd);
	close(fd);
	return interp == 0;
}
