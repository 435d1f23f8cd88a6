// SPDX-License-Identifier: MIT
/*
 * elffile.c - opening object files with libelf, and finding their separate
 * debug files where gdb and perf look: for each debug directory D
 * (--debug-dir, then /usr/lib/debug), D/.build-id/xx/yyyy.debug (Debian's
 * -dbgsym packages); the .gnu_debuglink name beside the object, in .debug/
 * beside it and under D/<the object's dir>/; last, when DEBUGINFOD_URLS is
 * set, the debuginfod servers by build id (elfutils' libdebuginfod, which
 * keeps what it fetched in its cache; loaded with dlopen() only then, as
 * libdw does: linked, it and libcurl's ~30 libraries were loaded and
 * relocated at every start of autoprof and autoprof-report). A debug file whose build id differs
 * from the object's is not used. The object itself is its path, or the copy
 * of the recorded build that perf's build-id cache keeps (buildid.c).
 */
#include "model/model.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Open @path as an ELF object. Only regular files are opened (O_NONBLOCK so
 * a FIFO named in a hostile file cannot block us). Returns 0 or -errno.
 */
int elffile__open(struct elf_handle *eh, const char *path)
{
	struct stat st;

	eh->elf = NULL;
	eh->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (eh->fd < 0)
		return -errno;
	if (fstat(eh->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(Elf64_Ehdr))
		goto fail;
	eh->elf = elf_begin(eh->fd, ELF_C_READ_MMAP, NULL);
	if (!eh->elf || elf_kind(eh->elf) != ELF_K_ELF)
		goto fail;
	return 0;
fail:
	if (eh->elf)
		elf_end(eh->elf);
	close(eh->fd);
	eh->elf = NULL;
	eh->fd = -1;
	return -ENOEXEC;
}

void elffile__close(struct elf_handle *eh)
{
	if (eh->elf)
		elf_end(eh->elf);
	if (eh->fd >= 0)
		close(eh->fd);
	eh->elf = NULL;
	eh->fd = -1;
}

/* The first section of @type (SHT_SYMTAB, SHT_DYNSYM) with a usable header, or NULL. */
Elf_Scn *elffile__section(Elf *elf, Elf64_Word type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == type && shdr->sh_entsize)
			return scn;
	}
	return NULL;
}

Elf_Scn *elffile__section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The GNU build id as lowercase hex into @hex; returns its length in bytes or 0. */
size_t elffile__build_id(Elf *elf, char hex[2 * BUILD_ID_MAX + 1])
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const u8 *desc = (const u8 *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) != 0 ||
			    nh.n_descsz == 0 || nh.n_descsz > BUILD_ID_MAX)
				continue;
			util__hex(hex, desc, nh.n_descsz);
			return nh.n_descsz;
		}
	}
	return 0;
}

/* Directories of separate debug files: those of --debug-dir first, then /usr/lib/debug. */
#define MAX_DEBUG_DIRS 8
static const char *debug_dirs[MAX_DEBUG_DIRS + 1];
static size_t nr_debug_dirs;

/* Look for debug files under @dir too (before /usr/lib/debug). Returns 0, or -E2BIG. */
int elffile__add_debug_dir(const char *dir)
{
	if (nr_debug_dirs == MAX_DEBUG_DIRS)
		return -E2BIG;
	debug_dirs[nr_debug_dirs++] = dir;
	return 0;
}

/* The @i-th debug directory, or NULL after the last. */
static const char *debug_dir(size_t i)
{
	if (i < nr_debug_dirs)
		return debug_dirs[i];
	return i == nr_debug_dirs ? "/usr/lib/debug" : NULL;
}

/*
 * True if @path opened into @eh has a .symtab with at least one entry or
 * .debug_info, and (when both say) the build id @want (hex, "" for any).
 */
static bool try_debug_file(struct elf_handle *eh, const char *path, const char *want)
{
	char hex[2 * BUILD_ID_MAX + 1];
	GElf_Shdr shdr;
	bool useful;

	if (elffile__open(eh, path) != 0)
		return false;
	useful = (elffile__section(eh->elf, SHT_SYMTAB, &shdr) && shdr.sh_size > shdr.sh_entsize) ||
		 ((elffile__section_by_name(eh->elf, ".debug_info", &shdr) &&
		   shdr.sh_type != SHT_NOBITS));
	if (useful && want[0] && elffile__build_id(eh->elf, hex) && strcmp(hex, want) != 0)
		useful = false; /* a debug file of another build */
	if (useful)
		return true;
	elffile__close(eh);
	return false;
}

/* libdebuginfod's client, opened on the first question (NULL: it could not be, said once). */
static struct {
	debuginfod_client *client;
	typeof(debuginfod_find_debuginfo) *find;
	bool failed;
} dbgd;

/*
 * Load libdebuginfod.so.1 with dlopen() and begin a client. False (and one
 * line on stderr the first time) when it is not installed or will not begin.
 */
static bool debuginfod_open(void)
{
	typeof(debuginfod_begin) *begin;
	void *lib;

	if (dbgd.client || dbgd.failed)
		return dbgd.client != NULL;
	dbgd.failed = true;
	lib = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "%s: DEBUGINFOD_URLS is set but debuginfod is not asked: %s\n",
			program_invocation_short_name, dlerror());
		return false;
	}
	begin = (typeof(begin))dlsym(lib, "debuginfod_begin");
	dbgd.find = (typeof(dbgd.find))dlsym(lib, "debuginfod_find_debuginfo");
	if (!begin || !dbgd.find || !(dbgd.client = begin())) {
		fprintf(stderr, "%s: DEBUGINFOD_URLS is set but debuginfod is not asked: %s\n",
			program_invocation_short_name,
			!begin || !dbgd.find ? "libdebuginfod.so.1 lacks debuginfod_begin or "
					       "debuginfod_find_debuginfo"
					     : "debuginfod_begin() failed");
		return false;
	}
	dbgd.failed = false;
	return true;
}

/*
 * The debug file of build id @hex from the debuginfod servers of
 * DEBUGINFOD_URLS (through libdebuginfod, which caches what it fetched),
 * only when that variable is set. True with @eh open.
 */
static bool try_debuginfod(struct elf_handle *eh, const char *hex)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	bool ok;
	int fd;

	if (!urls || !urls[0] || !hex[0] || !debuginfod_open())
		return false;
	fd = dbgd.find(dbgd.client, (const unsigned char *)hex, 0, &path);
	if (fd < 0)
		return false;
	close(fd);
	ok = path && try_debug_file(eh, path, hex);
	free(path);
	return ok;
}

/*
 * Find a separate debug file for @dso, where gdb and perf look: for each
 * debug directory D (--debug-dir, then /usr/lib/debug), D/.build-id/xx/
 * rest.debug; then the .gnu_debuglink name beside the object, in .debug/
 * beside it and under D/<the object's dir>/; last, debuginfod by build id.
 * Returns true with @eh open on success.
 */
bool elffile__debug_file(const struct dso *dso, Elf *elf, struct elf_handle *eh)
{
	char hex[2 * BUILD_ID_MAX + 1] = "", path[4096], dir[4096];
	const char *link = NULL, *d;
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *data;
	size_t len = elffile__build_id(elf, hex), i;

	if (!len)
		hex[0] = 0;
	for (i = 0; len >= 2 && (d = debug_dir(i)) != NULL; i++) {
		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", d, hex, hex + 2) <
			(int)sizeof(path) &&
		    try_debug_file(eh, path, hex))
			return true;
	}
	/* the debug file perf's build-id cache keeps (perf buildid-cache, debuginfod) */
	if (len >= 2 && !buildid__cache_path(hex, "debug", path, sizeof(path)) &&
	    try_debug_file(eh, path, hex))
		return true;
	scn = elffile__section_by_name(elf, ".gnu_debuglink", &shdr);
	if (scn && shdr.sh_type != SHT_NOBITS && (data = elf_getdata(scn, NULL)) != NULL &&
	    data->d_buf && data->d_size >= 2) {
		link = data->d_buf;
		if (strnlen(link, data->d_size) == data->d_size || strchr(link, '/'))
			link = NULL;
	}
	if (link) {
		snprintf(dir, sizeof(dir), "%s", dso->path);
		if (strrchr(dir, '/'))
			*strrchr(dir, '/') = 0;
		else
			strcpy(dir, ".");
		if (snprintf(path, sizeof(path), "%s/%s", dir, link) < (int)sizeof(path) &&
		    strcmp(path, dso->path) != 0 && try_debug_file(eh, path, hex))
			return true;
		if (snprintf(path, sizeof(path), "%s/.debug/%s", dir, link) < (int)sizeof(path) &&
		    try_debug_file(eh, path, hex))
			return true;
		for (i = 0; (d = debug_dir(i)) != NULL; i++) {
			if (snprintf(path, sizeof(path), "%s%s/%s", d, dir, link) <
				(int)sizeof(path) &&
			    try_debug_file(eh, path, hex))
				return true;
		}
	}
	return try_debuginfod(eh, hex);
}

/* Open the copy of build id @hex that perf's build-id cache keeps, its id checked. */
static bool try_cached_object(struct elf_handle *eh, const char *hex)
{
	static const char *const names[] = {"elf", "vdso", NULL};
	char path[4096], own[2 * BUILD_ID_MAX + 1];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (buildid__cache_path(hex, names[i], path, sizeof(path)) ||
		    elffile__open(eh, path) != 0)
			continue;
		if (elffile__build_id(eh->elf, own) && buildid__same(own, hex))
			return true;
		elffile__close(eh);
	}
	return false;
}

/*
 * Open @dso's object file into @eh: its path; when the file there is not
 * the build recorded (or is gone), the copy perf's build-id cache keeps of
 * that build; for [vdso], the cached copy or this machine's vdso when the
 * build ids match. The file at the path is used, as it is, when no copy of
 * the recorded build is found. Returns 0 or -errno.
 */
int elffile__open_object(const struct dso *dso, struct elf_handle *eh)
{
	char own[2 * BUILD_ID_MAX + 1];
	struct elf_handle other;
	int err = -ENOENT;

	eh->fd = -1;
	eh->elf = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	if (!dso->special) {
		err = elffile__open(eh, dso->path);
		if (!dso->build_id[0] || (!err && (!elffile__build_id(eh->elf, own) ||
						   buildid__same(own, dso->build_id))))
			return err;
		if (try_cached_object(&other, dso->build_id)) {
			elffile__close(eh);
			*eh = other;
			return 0;
		}
		return err; /* the file at the path, of another build, or none */
	}
	if (!dso__has_file(dso))
		return -ENOENT;
	if (try_cached_object(eh, dso->build_id) || buildid__own_vdso(eh, dso->build_id))
		return 0;
	return err;
}

/*
 * Open the ELF file that holds @dso's DWARF: the object itself when it has
 * .debug_info, else its separate debug file (build id, .gnu_debuglink).
 * Returns 0 with *fd and *elf (an Elf *) for the caller to elf_end() and
 * close(), or -errno.
 */
int elffile__open_dwarf(const struct dso *dso, int *fd, void **elf)
{
	struct elf_handle eh, dbg = {.fd = -1};
	GElf_Shdr shdr;
	int err;

	err = elffile__open_object(dso, &eh);
	if (err)
		return err;
	if (elffile__section_by_name(eh.elf, ".debug_info", &shdr) && shdr.sh_type != SHT_NOBITS) {
		*fd = eh.fd;
		*elf = eh.elf;
		return 0;
	}
	if (elffile__debug_file(dso, eh.elf, &dbg)) {
		elffile__close(&eh);
		if (elffile__section_by_name(dbg.elf, ".debug_info", &shdr) &&
		    shdr.sh_type != SHT_NOBITS) {
			*fd = dbg.fd;
			*elf = dbg.elf;
			return 0;
		}
		elffile__close(&dbg);
		return -ENOENT;
	}
	elffile__close(&eh);
	return -ENOENT;
}
