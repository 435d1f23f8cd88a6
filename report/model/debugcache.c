// SPDX-License-Identifier: MIT
/*
 * debugcache.c - the unpacked copy of a compressed debug file, kept by
 * build id: $XDG_CACHE_HOME/autoprof/debug/<build id> (else
 * ~/.cache/autoprof/debug/). Debian's -dbgsym files (libc's: 2.3 MB of
 * .debug_info packed, 5.8 MB unpacked) are SHF_COMPRESSED: every reader of
 * their lines and inlined functions inflates them again, where a plain
 * copy is mapped and read in place. The copy is an ELF file of the same
 * class and machine holding the source's build-id note, its debug sections
 * unpacked (but for variable locations and call frames, which lines and
 * inlined functions never read), a .gnu_debugaltlink naming an absolute
 * path, and a header section (.autoprof_cache: version, file size, the
 * unpacked .debug_info size, a CRC of its layout). It is used only when all
 * of those match the source it stands for and its sections are the
 * source's kept ones (names, types, flags, unpacked sizes); anything else
 * (truncated, foreign, damaged headers, of another version) is ignored and
 * written again. Trust: the folders (autoprof/ and debug/) and the copy
 * are opened through cachedir.c: this user's alone, no link followed.
 * Written to a temporary file then renamed, so a reader sees a whole file
 * or none; objects whose kept
 * sections unpack to more than MAX_OBJECT are not cached, and the folder
 * is kept under MAX_DIR (the copies used longest ago removed first).
 * AUTOPROF_REPORT_NO_DEBUG_CACHE=1 turns it off. Failures are silent: the
 * compressed file is read as before.
 */
#include "autoprof/env.h"
#include "model/model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_OBJECT (256ULL << 20) /* the most one copy may hold */
#define MAX_DIR	   (1ULL << 30)	  /* the most the folder holds */
#define STALE_TMP  (3600)	  /* seconds after which a left temporary file is removed */
#define HDR_NAME   ".autoprof_cache"

static const char dc_magic[8] = "APDBGC\0";
#define DC_VERSION 2

/* The header section of a copy. */
struct dc_hdr {
	char magic[8];
	u64 version;
	u64 file_size; /* the whole copy's size */
	u64 info_size; /* .debug_info, unpacked */
	u64 layout;    /* dc_layout() of the copy: its ELF header, section headers and names */
};

/* True for the sections a copy keeps: the debug sections read, the build id, the alt link. */
static bool kept(const char *name)
{
	return (!strncmp(name, ".debug_", 7) && !dwarf_lazy__unread(name)) ||
	       !strcmp(name, ".note.gnu.build-id") || !strcmp(name, ".gnu_debugaltlink");
}

static bool dc_enabled(void)
{
	const char *env = ap_env(AP_ENV_REPORT_NO_DEBUG_CACHE);

	return !env || !*env || !strcmp(env, "0");
}

/*
 * The cache folder (cachedir.c's autoprof/, then debug/) opened, its
 * missing parts made (0700) with @mkdirs: a descriptor, or -1 when there is
 * no such folder or it is not ours alone (as when it cannot be made, no
 * copy is then read or written, silently).
 */
static int dc_dir(bool mkdirs)
{
	return cachedir__sub(cachedir__open(mkdirs), "debug", mkdirs);
}

/*
 * Add a section to a running CRC (@crc): its @name, type, flags (but
 * SHF_COMPRESSED and SHF_ALLOC, which a copy drops), entry size and @size
 * unpacked: what a copy keeps of each section of its source.
 */
static u32 dc_section_sum(u32 crc, const char *name, const GElf_Shdr *shdr, u64 size)
{
	u64 v[4] = {shdr->sh_type, shdr->sh_flags & ~(GElf_Xword)(SHF_COMPRESSED | SHF_ALLOC),
		    shdr->sh_entsize, size};

	crc = (u32)crc32(crc, (const Bytef *)name, (uInt)strlen(name) + 1);
	return (u32)crc32(crc, (const Bytef *)v, sizeof(v));
}

/*
 * The CRC of @elf's layout: its ELF header's fields, every section header's
 * (index 0 too) and every section's name, from @names (@len bytes: the
 * section names of a copy being written) or else @elf's own string table.
 * Any change to those bytes in a written copy changes it. False when a
 * header or a name cannot be read.
 */
static bool dc_layout(Elf *elf, const char *names, size_t len, u32 *out)
{
	GElf_Ehdr e;
	size_t shstrndx, nr, i;
	u32 crc = 0;

	if (!gelf_getehdr(elf, &e) || elf_getshdrstrndx(elf, &shstrndx) || elf_getshdrnum(elf, &nr))
		return false;
	{
		u64 v[] = {e.e_type,	  e.e_machine, e.e_version,  e.e_entry,	    e.e_phoff,
			   e.e_shoff,	  e.e_flags,   e.e_ehsize,   e.e_phentsize, e.e_phnum,
			   e.e_shentsize, e.e_shnum,   e.e_shstrndx, shstrndx,	    nr};

		crc = (u32)crc32(crc, e.e_ident, EI_NIDENT);
		crc = (u32)crc32(crc, (const Bytef *)v, sizeof(v));
	}
	for (i = 0; i < nr; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		const char *name;

		if (!scn || !gelf_getshdr(scn, &sh))
			return false;
		if (names)
			name = sh.sh_name < len && memchr(names + sh.sh_name, 0, len - sh.sh_name)
				   ? names + sh.sh_name
				   : NULL;
		else
			name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			return false;
		u64 v[] = {sh.sh_name, sh.sh_type, sh.sh_flags, sh.sh_addr,	 sh.sh_offset,
			   sh.sh_size, sh.sh_link, sh.sh_info,	sh.sh_addralign, sh.sh_entsize};

		crc = (u32)crc32(crc, (const Bytef *)v, sizeof(v));
		crc = (u32)crc32(crc, (const Bytef *)name, (uInt)strlen(name) + 1);
	}
	*out = crc;
	return true;
}

/*
 * Whether @elf (a debug file, or an object carrying its DWARF) is worth a
 * copy: its .debug_info SHF_COMPRESSED, a build id, an ET_EXEC or ET_DYN
 * of this machine's byte order, no alt link by a relative path, kept
 * sections under MAX_OBJECT unpacked. Fills @key (for debugcache__open and
 * debugcache__store) and returns true when so.
 */
bool debugcache__wanted(Elf *elf, struct debugcache_key *key)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;
	u64 total = 0;

	memset(key, 0, sizeof(*key));
	if (!dc_enabled() || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_ident[EI_DATA] !=
		(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0 || elffile__build_id(elf, key->hex) < 4)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		GElf_Chdr chdr;
		const char *name;
		u64 size;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, shdr.sh_name)) || !kept(name))
			continue;
		size = shdr.sh_size;
		if (shdr.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &chdr))
				return false;
			size = chdr.ch_size;
		}
		if (size > MAX_OBJECT - total)
			return false; /* too big (or a hostile size) */
		total += size;
		key->sections = dc_section_sum(key->sections, name, &shdr, size);
		key->nr_sections++;
		if (!strcmp(name, ".debug_info")) {
			if (!(shdr.sh_flags & SHF_COMPRESSED))
				return false; /* plain already: read in place */
			key->info_size = size;
		} else if (!strcmp(name, ".gnu_debugaltlink")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			/* libdw finds a relative one beside the file: not beside a copy */
			if (!d || !d->d_buf || !d->d_size || ((const char *)d->d_buf)[0] != '/')
				return false;
		}
	}
	return key->info_size != 0;
}

/*
 * Open the copy named @name in cache folder @dir into @eh: a regular file of
 * this user (no link followed), an ELF file. False when it is not.
 */
static bool dc_open_copy(int dir, const char *name, struct elf_handle *eh)
{
	eh->elf = NULL;
	eh->fd = cachedir__file(dir, name);
	if (eh->fd < 0)
		return false;
	if (!(eh->elf = elf_begin(eh->fd, ELF_C_READ_MMAP, NULL)) ||
	    elf_kind(eh->elf) != ELF_K_ELF) {
		elffile__close(eh);
		return false;
	}
	return true;
}

/*
 * True when @eh (opened by dc_open_copy()) is a whole copy for @key: its
 * header, build id, layout (dc_layout()) and section set (the source's
 * kept sections, debugcache__wanted()) match, every section inside the
 * file and plain.
 */
static bool dc_valid(struct elf_handle *eh, const struct debugcache_key *key)
{
	char hex[2 * BUILD_ID_MAX + 1];
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *d;
	struct stat st;
	struct dc_hdr h;
	size_t shstrndx, nr = 0;
	u32 layout, sum = 0;

	if (fstat(eh->fd, &st) || !(scn = elffile__section_by_name(eh->elf, HDR_NAME, &shdr)) ||
	    shdr.sh_size != sizeof(h) || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    d->d_size != sizeof(h))
		return false;
	memcpy(&h, d->d_buf, sizeof(h));
	if (memcmp(h.magic, dc_magic, sizeof(h.magic)) || h.version != DC_VERSION ||
	    h.file_size != (u64)st.st_size || h.info_size != key->info_size ||
	    !dc_layout(eh->elf, NULL, 0, &layout) || h.layout != layout ||
	    elf_getshdrstrndx(eh->elf, &shstrndx) || !elffile__build_id(eh->elf, hex) ||
	    strcmp(hex, key->hex) != 0)
		return false;
	/* every section inside the file, plain; the kept ones the source's */
	scn = NULL;
	while ((scn = elf_nextscn(eh->elf, scn)) != NULL) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || (shdr.sh_flags & SHF_COMPRESSED) ||
		    shdr.sh_type == SHT_NOBITS || shdr.sh_offset > h.file_size ||
		    shdr.sh_size > h.file_size - shdr.sh_offset ||
		    !(name = elf_strptr(eh->elf, shstrndx, shdr.sh_name)))
			return false;
		if (elf_ndxscn(scn) == shstrndx || !strcmp(name, HDR_NAME))
			continue;
		sum = dc_section_sum(sum, name, &shdr, shdr.sh_size);
		nr++;
	}
	return sum == key->sections && nr == key->nr_sections &&
	       elffile__section_by_name(eh->elf, ".debug_info", &shdr) &&
	       shdr.sh_size == key->info_size;
}

/*
 * Open the copy for @key (from debugcache__wanted()) into @fd and @elf (for
 * the caller to elf_end() and close()). Returns 0, or -ENOENT when there is
 * no whole copy of that build that is ours.
 */
int debugcache__open(const struct debugcache_key *key, int *fd, Elf **elf)
{
	struct elf_handle eh;
	int dir;
	bool ok;

	if (!key->info_size || (dir = dc_dir(false)) < 0)
		return -ENOENT;
	ok = dc_open_copy(dir, key->hex, &eh);
	close(dir);
	if (!ok)
		return -ENOENT;
	if (!dc_valid(&eh, key)) {
		elffile__close(&eh);
		return -ENOENT;
	}
	futimens(eh.fd, NULL); /* used now: the last to be pruned (dc_prune()) */
	*fd = eh.fd;
	*elf = eh.elf;
	return 0;
}

struct dc_entry {
	time_t mtime;
	u64 size;
	char name[2 * BUILD_ID_MAX + 16];
};

static int dc_entry_cmp(const void *pa, const void *pb)
{
	const struct dc_entry *a = pa, *b = pb;

	return a->mtime < b->mtime ? -1 : a->mtime > b->mtime;
}

/*
 * Make room for @need more bytes in folder @dir (a descriptor): the copies used longest ago
 * (their mtime, set at each use by debugcache__open()) go until
 * the folder holds at most MAX_DIR with them; temporary files left by a
 * reader that died an hour ago go too.
 */
static void dc_prune(int dir, u64 need)
{
	struct dc_entry *v = NULL;
	size_t nr = 0, cap = 0, i;
	struct dirent *de;
	u64 total = need;
	time_t now = time(NULL);
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' || len >= sizeof(v->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (strchr(de->d_name, '.')) { /* a temporary file */
			if (now - st.st_mtime > STALE_TMP)
				unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (array__reserve(&v, &cap, nr + 1, sizeof(*v)))
			break;
		v[nr].mtime = st.st_mtime;
		v[nr].size = (u64)st.st_size;
		memcpy(v[nr].name, de->d_name, len + 1);
		total += v[nr++].size;
	}
	if (total > MAX_DIR && nr) {
		qsort(v, nr, sizeof(*v), dc_entry_cmp);
		for (i = 0; i < nr && total > MAX_DIR; i++) {
			if (!unlinkat(dirfd(d), v[i].name, 0))
				total -= v[i].size;
		}
	}
	free(v);
	closedir(d);
}

/* The section names of a copy being written. */
struct dc_names {
	char *buf;
	size_t len, cap;
};

/* Add section @name to the copy @out with @len plain bytes at @buf. */
static bool dc_add(Elf *out, struct dc_names *names, const GElf_Shdr *src, const char *name,
		   const void *buf, u64 len)
{
	Elf_Scn *scn = elf_newscn(out);
	Elf_Data *d;
	GElf_Shdr shdr;

	if (!scn || !(d = elf_newdata(scn)) || !gelf_getshdr(scn, &shdr))
		return false;
	shdr.sh_name = (GElf_Word)names->len;
	shdr.sh_type = src->sh_type;
	shdr.sh_flags = src->sh_flags & ~(GElf_Xword)(SHF_COMPRESSED | SHF_ALLOC);
	shdr.sh_addr = 0;
	shdr.sh_entsize = src->sh_entsize;
	shdr.sh_addralign = 1;
	if (array__reserve(&names->buf, &names->cap, names->len + strlen(name) + 1, 1) ||
	    !gelf_update_shdr(scn, &shdr))
		return false;
	memcpy(names->buf + names->len, name, strlen(name) + 1);
	names->len += strlen(name) + 1;
	d->d_buf = (void *)buf;
	d->d_size = len;
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	d->d_version = EV_CURRENT;
	return true;
}

/* Write the copy of @src into @fd: its kept sections, .debug_info from @info when not NULL. */
static bool dc_write(int fd, Elf *src, const struct debugcache_key *key, const void *info)
{
	struct dc_names names = {0};
	struct dc_hdr h = {.version = DC_VERSION, .info_size = key->info_size};
	GElf_Ehdr seh, eh;
	GElf_Shdr hs = {.sh_type = SHT_PROGBITS}, ss = {.sh_type = SHT_STRTAB};
	Elf_Scn *scn = NULL, *strscn;
	size_t shstrndx;
	Elf *out;
	off_t size;
	u32 layout;
	bool ok = false;

	memcpy(h.magic, dc_magic, sizeof(h.magic));
	if (!gelf_getehdr(src, &seh) || elf_getshdrstrndx(src, &shstrndx) != 0 ||
	    !(out = elf_begin(fd, ELF_C_WRITE, NULL)))
		return false;
	if (!gelf_newehdr(out, gelf_getclass(src)) || !gelf_getehdr(out, &eh) ||
	    array__reserve(&names.buf, &names.cap, 1, 1))
		goto out;
	names.buf[names.len++] = 0;
	memcpy(eh.e_ident, seh.e_ident, EI_NIDENT);
	eh.e_type = seh.e_type;
	eh.e_machine = seh.e_machine;
	eh.e_version = seh.e_version;
	eh.e_flags = seh.e_flags;
	while ((scn = elf_nextscn(src, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(src, shstrndx, shdr.sh_name)) || !kept(name))
			continue;
		if (info && !strcmp(name, ".debug_info")) {
			if (!dc_add(out, &names, &shdr, name, info, key->info_size))
				goto out;
			continue;
		}
		/* unpacked in memory (libdw may have done so already) */
		if ((shdr.sh_flags & SHF_COMPRESSED) &&
		    (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &shdr)))
			goto out;
		d = elf_getdata(scn, NULL);
		if (!d || (shdr.sh_size && !d->d_buf) || d->d_size != shdr.sh_size ||
		    (!strcmp(name, ".debug_info") && d->d_size != key->info_size) ||
		    !dc_add(out, &names, &shdr, name, d->d_buf, d->d_size))
			goto out;
	}
	if (!dc_add(out, &names, &hs, HDR_NAME, &h, sizeof(h)))
		goto out;
	if (!dc_add(out, &names, &ss, ".shstrtab", NULL, 0))
		goto out;
	/* the string table's own data: the names, now all added */
	for (strscn = scn = NULL; (scn = elf_nextscn(out, scn)) != NULL;)
		strscn = scn;
	if (!strscn || elf_ndxscn(strscn) >= SHN_LORESERVE)
		goto out;
	elf_getdata(strscn, NULL)->d_buf = names.buf;
	elf_getdata(strscn, NULL)->d_size = names.len;
	eh.e_shstrndx = (GElf_Half)elf_ndxscn(strscn);
	if (!gelf_update_ehdr(out, &eh) || (size = elf_update(out, ELF_C_NULL)) < 0)
		goto out;
	/* set after the layout, which does not change with them */
	h.file_size = (u64)size;
	if (!dc_layout(out, names.buf, names.len, &layout))
		goto out;
	h.layout = layout;
	ok = elf_update(out, ELF_C_WRITE) == size;
out:
	elf_end(out);
	free(names.buf);
	return ok;
}

/*
 * Write the copy of @src for @key (from debugcache__wanted() on @src before
 * it was read): its sections unpacked, .debug_info taken from @info (all
 * key->info_size bytes) when not NULL (dwarf_lazy.c's buffer), else from
 * @src. Silent on failure: nothing is left behind but what the next
 * writer cleans up.
 */
void debugcache__store(Elf *src, const struct debugcache_key *key, const void *info)
{
	char tmp[2 * BUILD_ID_MAX + 32];
	struct elf_handle eh;
	int dir, fd;

	if (!key->info_size || (dir = dc_dir(true)) < 0)
		return;
	/* another reader may have written it meanwhile */
	if (dc_open_copy(dir, key->hex, &eh)) {
		bool valid = dc_valid(&eh, key);

		elffile__close(&eh);
		if (valid)
			goto out;
	}
	dc_prune(dir, key->info_size);
	/* a new temporary name (with a '.': dc_prune() knows it), never a link's */
	fd = cachedir__tmp(dir, key->hex, tmp, sizeof(tmp));
	if (fd < 0)
		goto out;
	if (!dc_write(fd, src, key, info)) {
		close(fd);
		unlinkat(dir, tmp, 0);
		goto out;
	}
	if (close(fd) || renameat(dir, tmp, dir, key->hex))
		unlinkat(dir, tmp, 0);
out:
	close(dir);
}
