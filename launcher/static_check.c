/* SPDX-License-Identifier: MIT */
/*
 * static_check.c - does the command have a dynamic loader? A statically
 * linked ELF program (no PT_INTERP: static or static-pie) never reads
 * LD_PRELOAD, so the library cannot enter it. A Go program (static or not)
 * takes every signal with raw system calls and makes its threads with raw
 * clone: the library cannot sample it either. Both are profiled from outside.
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "launcher.h"

/* The ELF file @command runs (found as execvp would), opened read-only; -1 when it cannot be. */
static int open_command(const char *command)
{
	char path[PATH_MAX];

	if (!elf_interp__resolve(command, path, sizeof(path)))
		return -1;
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * Is @command a statically linked ELF program (no dynamic loader, so no
 * LD_PRELOAD)? False for scripts, dynamic programs and what cannot be read.
 */
bool static_check__is_static(const char *command)
{
	int fd = open_command(command), interp;

	if (fd < 0)
		return false;
	interp = elf_interp__has(fd);
	close(fd);
	return interp == 0;
}

/* Has the ELF file at @fd a section named one of @names? */
static bool has_section(int fd, const char *const *names)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;
	Elf *e;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
		if (e)
			elf_end(e);
		return false;
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		for (const char *const *n = names; *n && !found; n++)
			found = !strcmp(name, *n);
	}
	elf_end(e);
	return found;
}

/*
 * Is @command a Go program: its build id note, its build info or its pc-line
 * table (kept by `go build -ldflags=-s` too)? False for what cannot be read.
 */
bool static_check__is_go(const char *command)
{
	static const char *const go_sections[] = {".note.go.buildid", ".go.buildinfo", ".gopclntab",
						  NULL};
	int fd = open_command(command);
	bool go;

	if (fd < 0)
		return false;
	go = has_section(fd, go_sections);
	close(fd);
	return go;
}

/*
 * Why the library cannot profile @command: "static" (no dynamic loader),
 * "go" (a Go program), or NULL (it can, or @command cannot be read). One
 * look at the file: static_check__is_static() then static_check__is_go().
 */
const char *static_check__kind(const char *command)
{
	static const char *const go_sections[] = {".note.go.buildid", ".go.buildinfo", ".gopclntab",
						  NULL};
	int fd = open_command(command);
	const char *kind = NULL;

	if (fd < 0)
		return NULL;
	if (elf_interp__has(fd) == 0)
		kind = "static";
	else if (has_section(fd, go_sections))
		kind = "go";
	close(fd);
	return kind;
}

/* Has the ELF file at @fd a DT_NEEDED entry (a library it links)? */
static bool has_needed(int fd)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *e;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++)
			found = gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED;
	}
	if (e)
		elf_end(e);
	return found;
}

/*
 * Does @command link C libraries (DT_NEEDED: a cgo Go program, whose C code
 * may keep no frame pointers)? False for what cannot be read.
 */
bool static_check__links_libraries(const char *command)
{
	int fd = open_command(command);
	bool needed;

	if (fd < 0)
		return false;
	needed = has_needed(fd);
	close(fd);
	return needed;
}
