// SPDX-License-Identifier: MIT
/*
 * dwarf_lazy.c - a dso's DWARF read only up to the compilation units its
 * addresses need, when its .debug_info is compressed (SHF_COMPRESSED, as in
 * Debian's -dbgsym packages: libc's is 2.3 MB packed, 5.8 MB unpacked).
 * libdw unpacks every debug section whole when it opens a file; here the
 * .debug_info stream is inflated only as far as the last CU asked for (its
 * offset from .debug_aranges), the sections never read for lines or
 * inlined functions (variable locations, call frames, macros) are left out, and
 * libdw is given the prefix as an uncompressed section. DIE offsets are the
 * file's own, so a later CU past the prefix inflates more and reopens libdw
 * over the longer prefix without changing any offset kept. Files whose
 * .debug_info is not zlib-compressed, or that have no .debug_aranges, are
 * opened whole by the caller as before.
 */
#include "model/model.h"

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <zlib.h>

/* The largest .debug_info we unpack by parts (a hostile ch_size cannot make us allocate more). */
#define MAX_INFO (1ULL << 31)

struct arange {
	u64 lo, hi; /* [lo, hi) */
	u64 cu;	    /* the CU's offset in .debug_info */
};

struct dwarf_lazy {
	Elf *elf;
	Dwarf *dw;	   /* over info[0, begun), or NULL before the first CU */
	Elf_Scn *info_scn; /* .debug_info, handed to libdw as plain bytes */
	Elf_Data *info_data;
	u8 *info;	       /* the unpacked prefix (room for all of it) */
	bool in_place;	       /* info is the file's plain section (not ours) */
	u64 have, begun, size; /* bytes unpacked, bytes libdw was opened over, in all */
	z_stream zs;
	bool zs_open, zs_end;
	struct arange *ar;
	size_t nr_ar;
};

static int arange_cmp(const void *pa, const void *pb)
{
	const struct arange *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static u64 load_addr(const u8 *p, u8 size)
{
	return size == 8 ? ld64(p) : ld32(p);
}

/* Read the address ranges of .debug_aranges (@p, @len bytes) into dl->ar, sorted. */
static bool read_aranges(struct dwarf_lazy *dl, const u8 *p, u64 len)
{
	size_t cap = 0;
	const u8 *end = p + len;

	while (end - p >= 4) {
		const u8 *set = p, *q, *set_end;
		u64 unit = ld32(p), cu;
		bool is64 = unit == 0xffffffff;
		u8 asz, ssz;

		q = p + 4;
		if (is64) {
			if (end - p < 12)
				return false;
			unit = ld64(p + 4);
			q = p + 12;
		}
		if (unit > (u64)(end - q) || unit < 2 + (is64 ? 8 : 4) + 2)
			return false;
		set_end = q + unit;
		q += 2; /* version */
		cu = is64 ? ld64(q) : ld32(q);
		q += is64 ? 8 : 4;
		asz = q[0];
		ssz = q[1];
		q += 2;
		if ((asz != 4 && asz != 8) || ssz)
			return false;
		q = set + (((size_t)(q - set) + 2 * asz - 1) / (2 * asz)) * (2 * asz);
		for (; set_end - q >= 2 * asz; q += 2 * asz) {
			u64 lo = load_addr(q, asz), n = load_addr(q + asz, asz);

			if (!lo && !n)
				break;
			if (!n)
				continue;
			if (array__reserve(&dl->ar, &cap, dl->nr_ar + 1, sizeof(*dl->ar)))
				return false;
			dl->ar[dl->nr_ar++] = (struct arange){lo, lo + n, cu};
		}
		p = set_end;
	}
	if (!dl->nr_ar)
		return false; /* (dl->ar is NULL: no qsort of it) */
	qsort(dl->ar, dl->nr_ar, sizeof(*dl->ar), arange_cmp);
	return true;
}

/* Unpack .debug_info up to @want bytes (or its end). False on a zlib error. */
static bool inflate_to(struct dwarf_lazy *dl, u64 want)
{
	if (want > dl->size)
		want = dl->size;
	while (dl->have < want && !dl->zs_end) {
		int ret;

		dl->zs.next_out = dl->info + dl->have;
		dl->zs.avail_out =
		    (uInt)(dl->size - dl->have > (1U << 30) ? (1U << 30) : dl->size - dl->have);
		ret = inflate(&dl->zs, Z_SYNC_FLUSH);
		dl->have = (u64)(dl->zs.next_out - dl->info);
		if (ret == Z_STREAM_END)
			dl->zs_end = true;
		else if (ret != Z_OK)
			return false;
		if (dl->have < want && ret == Z_OK && !dl->zs.avail_in)
			return false;
	}
	return dl->have >= want;
}

/* Hand section @scn to libdw as @len plain bytes at @buf. */
static bool set_plain(Elf_Scn *scn, Elf_Data *data, void *buf, u64 len)
{
	GElf_Shdr shdr;

	if (!gelf_getshdr(scn, &shdr))
		return false;
	shdr.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	shdr.sh_size = len;
	if (!gelf_update_shdr(scn, &shdr))
		return false;
	data->d_buf = buf;
	data->d_size = len;
	data->d_type = ELF_T_BYTE;
	data->d_align = 1;
	return true;
}

/*
 * True for the debug sections lines and inlined functions never read:
 * variable locations, call frames, macros. Left out by dwarf_lazy__open()
 * and from debugcache.c's copies.
 */
bool dwarf_lazy__unread(const char *name)
{
	static const char *const names[] = {".debug_loc", ".debug_loclists", ".debug_frame",
					    ".debug_macro", ".debug_macinfo"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(name, names[i]))
			return true;
	}
	return false;
}

/* Read section @aranges (unpacked by libelf when compressed: it is small) into dl->ar. */
static bool load_aranges(struct dwarf_lazy *dl, Elf_Scn *aranges)
{
	Elf_Data *data;
	GElf_Shdr shdr;

	if (!gelf_getshdr(aranges, &shdr) ||
	    ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(aranges, 0, 0) < 0))
		return false;
	data = elf_getdata(aranges, NULL);
	return data && data->d_buf && read_aranges(dl, data->d_buf, data->d_size);
}

/*
 * The handle over a plain .debug_info (@info, read in place: the unpacked
 * copy of debugcache.c), so that its CUs are found as when it was
 * compressed; NULL when it is compressed or cannot be read.
 */
static struct dwarf_lazy *open_plain(Elf *elf, Elf_Scn *info, Elf_Scn *aranges)
{
	struct dwarf_lazy *dl;
	Elf_Data *data;
	GElf_Shdr shdr;

	if (!gelf_getshdr(info, &shdr) || (shdr.sh_flags & SHF_COMPRESSED) ||
	    !(data = elf_getdata(info, NULL)) || !data->d_buf || !data->d_size ||
	    data->d_size > MAX_INFO || !(dl = calloc(1, sizeof(*dl))))
		return NULL;
	dl->elf = elf;
	dl->info_scn = info;
	dl->info_data = data;
	dl->info = data->d_buf;
	dl->have = dl->size = data->d_size;
	dl->zs_end = dl->in_place = true;
	if (!load_aranges(dl, aranges)) {
		dwarf_lazy__close(dl);
		return NULL;
	}
	return dl;
}

/*
 * Open @elf's DWARF by parts when its .debug_info is zlib-compressed and
 * .debug_aranges says which CU holds an address. Returns the handle (which
 * owns nothing of @elf: the caller ends @elf after dwarf_lazy__close()),
 * or NULL: open the file whole. With @plain, @elf's .debug_info is plain
 * (debugcache.c's copy): read in place, its CUs found the same way.
 */
struct dwarf_lazy *dwarf_lazy__open(Elf *elf, bool plain)
{
	Elf_Scn *info = NULL, *aranges = NULL, *scn = NULL;
	struct dwarf_lazy *dl;
	GElf_Chdr chdr;
	Elf_Data *data;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(&*scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, shdr.sh_name)))
			continue;
		if (!strcmp(name, ".debug_info"))
			info = scn;
		else if (!strcmp(name, ".debug_aranges"))
			aranges = scn;
	}
	if (!info || !aranges)
		return NULL;
	if (plain)
		return open_plain(elf, info, aranges);
	if (!gelf_getchdr(info, &chdr) || chdr.ch_type != ELFCOMPRESS_ZLIB || !chdr.ch_size ||
	    chdr.ch_size > MAX_INFO)
		return NULL;
	dl = calloc(1, sizeof(*dl));
	if (!dl)
		return NULL;
	dl->elf = elf;
	dl->info_scn = info;
	dl->size = chdr.ch_size;
	if (!load_aranges(dl, aranges))
		goto fail;
	data = elf_getdata(info, NULL);
	if (!data || !data->d_buf || data->d_size <= sizeof(Elf64_Chdr))
		goto fail;
	dl->info_data = data;
	dl->info = malloc(dl->size); /* pages never written cost no memory */
	if (!dl->info || inflateInit(&dl->zs) != Z_OK)
		goto fail;
	dl->zs_open = true;
	dl->zs.next_in =
	    (Bytef *)data->d_buf +
	    (gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr));
	dl->zs.avail_in = (uInt)(data->d_size - (size_t)(dl->zs.next_in - (Bytef *)data->d_buf));
	/* never read here (the locations: the largest section after .debug_info) */
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;
		Elf_Data *d;

		if (gelf_getshdr(scn, &shdr) && (name = elf_strptr(elf, shstrndx, shdr.sh_name)) &&
		    dwarf_lazy__unread(name) && (d = elf_getdata(scn, NULL)) != NULL)
			set_plain(scn, d, d->d_buf, 0);
	}
	return dl;
fail:
	dwarf_lazy__close(dl);
	return NULL;
}

/* The arange holding @vaddr, or NULL. */
static const struct arange *find_arange(const struct dwarf_lazy *dl, u64 vaddr)
{
	size_t lo = array__upper(dl->ar, dl->nr_ar, sizeof(*dl->ar), vaddr);

	/* ranges may overlap; the nearest start at or below is what libdw finds too */
	if (lo == 0 || vaddr >= dl->ar[lo - 1].hi)
		return NULL;
	return &dl->ar[lo - 1];
}

/*
 * The Dwarf to read the CU holding @vaddr with, its CU DIE in @cudie:
 * .debug_info is unpacked up to that CU's end first (libdw reopened over
 * the longer prefix when needed). NULL when no CU covers @vaddr or the data
 * is bad. The Dwarf stays valid until the next call.
 */
Dwarf *dwarf_lazy__cu(struct dwarf_lazy *dl, u64 vaddr, Dwarf_Die *cudie)
{
	const struct arange *a = find_arange(dl, vaddr);
	u64 len, end, next;
	size_t hsize;

	/* the unit's length first (4 bytes, or 12 in 64-bit DWARF), all checked
	 * against the section's size: a bad file cannot make us read past it */
	if (!a || a->cu >= dl->size || dl->size - a->cu < 4 ||
	    !inflate_to(dl, a->cu + 12 < dl->size ? a->cu + 12 : dl->size))
		return NULL;
	len = ld32(dl->info + a->cu);
	if (len == 0xffffffff) {
		if (dl->size - a->cu < 12)
			return NULL;
		len = ld64(dl->info + a->cu + 4);
		if (len > dl->size - a->cu - 12)
			return NULL;
		end = a->cu + 12 + len;
	} else {
		if (len > dl->size - a->cu - 4)
			return NULL;
		end = a->cu + 4 + len;
	}
	if (!inflate_to(dl, end))
		return NULL;
	if (!dl->dw || end > dl->begun) {
		if (dl->dw)
			dwarf_end(dl->dw);
		dl->dw = NULL;
		if (dl->in_place || set_plain(dl->info_scn, dl->info_data, dl->info, dl->have))
			dl->dw = dwarf_begin_elf(dl->elf, DWARF_C_READ, NULL);
		dl->begun = dl->have;
		if (!dl->dw) {
			dl->size = 0; /* unusable: no more lookups */
			return NULL;
		}
	}
	if (dwarf_next_unit(dl->dw, a->cu, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL) ||
	    !dwarf_offdie(dl->dw, a->cu + hsize, cudie))
		return NULL;
	return dl->dw;
}

/*
 * All of .debug_info, unpacked to its end (for a copy of the file,
 * debugcache.c): *@len bytes, owned by @dl. NULL when it cannot be.
 */
const void *dwarf_lazy__all(struct dwarf_lazy *dl, u64 *len)
{
	if (!dl->size || !inflate_to(dl, dl->size))
		return NULL;
	*len = dl->have;
	return dl->info;
}

void dwarf_lazy__close(struct dwarf_lazy *dl)
{
	if (!dl)
		return;
	if (dl->dw)
		dwarf_end(dl->dw);
	if (dl->zs_open)
		inflateEnd(&dl->zs);
	if (!dl->in_place)
		free(dl->info);
	free(dl->ar);
	free(dl);
}
