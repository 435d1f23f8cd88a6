// SPDX-License-Identifier: MIT
/*
 * symbols.c - read an object's function symbols and load segments with
 * libelf.
 *
 * The symbol table is, in order of preference: the object's own .symtab,
 * the .symtab of a separate debug file (by build id under each debug
 * directory, then .gnu_debuglink, then debuginfod: elffile__debug_file()),
 * the object's .dynsym; PLT entries are added as "name@plt" (x86-64).
 * Symbols are copied into one sorted array with one
 * name arena, so the ELF handle is closed again right after loading.
 */
#include "model/model.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <unistd.h>

static int load_segments(struct dso *dso, Elf *elf)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOEXEC;
	dso->segs = calloc(n ? n : 1, sizeof(*dso->segs));
	if (!dso->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		dso->segs[dso->nr_segs++] = (struct load_seg){
		    .offset = ph.p_offset, .filesz = ph.p_filesz, .vaddr = ph.p_vaddr};
	}
	return 0;
}

/* A symbol while loading: where it is, and what decides between aliases. */
struct raw_sym {
	u64 start, size;
	u64 limit; /* end of the symbol's section: a size-0 symbol never extends past it */
	const char *name;
	int rank;   /* lower is preferred */
	bool ifunc; /* STT_GNU_IFUNC: the name an IRELATIVE PLT entry takes */
	size_t seq; /* the order it was read in: the last tie-break, as perf's */
};

static u64 section_end(Elf *elf, size_t shndx)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return UINT64_MAX;
	scn = elf_getscn(elf, shndx);
	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_addr + shdr.sh_size < shdr.sh_addr)
		return UINT64_MAX;
	return shdr.sh_addr + shdr.sh_size;
}

/*
 * Among aliases prefer what perf's choose_best_symbol() does: sized, then
 * global over local over weak, then fewer leading '_' (then the longer name,
 * then the one read first, in raw_sym_cmp(): perf keeps the first of two
 * aliases that tie, as libc's pthread_create@GLIBC_2.2.5 before
 * pthread_create@@GLIBC_2.34, where the names' order had put the second).
 */
static int alias_rank(const GElf_Sym *s, const char *name)
{
	int bind = GELF_ST_BIND(s->st_info), rank = 0;

	if (!s->st_size)
		rank += 1000;
	if (bind == STB_WEAK)
		rank += 200;
	else if (bind != STB_GLOBAL)
		rank += 100;
	while (*name++ == '_' && rank % 100 < 99)
		rank++;
	return rank;
}

static int raw_sym_cmp(const void *pa, const void *pb)
{
	const struct raw_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	if (strlen(a->name) != strlen(b->name))
		return strlen(a->name) > strlen(b->name) ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* A growable array of raw symbols, with the "name@plt" strings it owns. */
struct raw_vec {
	struct raw_sym *v;
	size_t nr, cap;
	char **owned;
	size_t nr_owned, cap_owned;
};

static int raw_vec__push(struct raw_vec *rv, const struct raw_sym *rs)
{
	if (array__reserve(&rv->v, &rv->cap, rv->nr + 1, sizeof(*rv->v)))
		return -ENOMEM;
	rv->v[rv->nr] = *rs;
	rv->v[rv->nr].seq = rv->nr;
	rv->nr++;
	return 0;
}

static void raw_vec__exit(struct raw_vec *rv)
{
	size_t i;

	for (i = 0; i < rv->nr_owned; i++)
		free(rv->owned[i]);
	free(rv->owned);
	free(rv->v);
}

/* Append the function symbols of symbol section @scn to @rv. Returns 0 or -errno. */
static int collect_syms(struct raw_vec *rv, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;

	if (!data || !shdr->sh_entsize)
		return -ENOEXEC;
	n = shdr->sh_size / shdr->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_value == 0)
			continue;
		name = elf_strptr(elf, shdr->sh_link, s.st_name);
		if (!name || !name[0])
			continue;
		if (raw_vec__push(
			rv, &(struct raw_sym){s.st_value, s.st_size, section_end(elf, s.st_shndx),
					      name, alias_rank(&s, name), type == STT_GNU_IFUNC}))
			return -ENOMEM;
	}
	return 0;
}

/* A GOT slot and the function its relocation names (or, for IRELATIVE, its resolver). */
struct got_slot {
	u64 got;
	const char *name; /* NULL: IRELATIVE, see addend */
	u64 addend;
};

static int got_slot_cmp(const void *pa, const void *pb)
{
	const struct got_slot *a = pa, *b = pb;

	return a->got < b->got ? -1 : a->got > b->got;
}

/*
 * The preferred name (an ifunc, then by alias_rank()) among the symbols of @rv (its first @nr
 * entries) that start at @addr, or NULL.
 */
static const char *raw_name_at(const struct raw_vec *rv, size_t nr, u64 addr)
{
	const struct raw_sym *best = NULL;
	size_t i;

	for (i = 0; i < nr; i++) {
		if (rv->v[i].start == addr &&
		    (!best || rv->v[i].ifunc > best->ifunc ||
		     (rv->v[i].ifunc == best->ifunc && rv->v[i].rank < best->rank)))
			best = &rv->v[i];
	}
	return best ? best->name : NULL;
}

/*
 * The GOT slots named by the x86-64 relocations of @elf (JUMP_SLOT and
 * GLOB_DAT through .dynsym, IRELATIVE by their resolver), sorted, into
 * *slots. Returns how many (0 on any problem).
 */
static size_t read_got_slots(Elf *elf, struct got_slot **slots)
{
	Elf_Scn *scn = NULL;
	size_t nr = 0, cap = 0;

	*slots = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr, symshdr;
		Elf_Data *data, *symdata;
		Elf_Scn *symscn;
		size_t i, n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || !shdr.sh_entsize)
			continue;
		symscn = elf_getscn(elf, shdr.sh_link);
		data = elf_getdata(scn, NULL);
		if (!symscn || !gelf_getshdr(symscn, &symshdr) || symshdr.sh_type != SHT_DYNSYM ||
		    !data)
			continue;
		symdata = elf_getdata(symscn, NULL);
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			struct got_slot gs = {0};
			u64 type;

			if (!gelf_getrela(data, (int)i, &rela))
				continue;
			type = GELF_R_TYPE(rela.r_info);
			gs.got = rela.r_offset;
			if (type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) {
				if (!symdata ||
				    !gelf_getsym(symdata, (int)GELF_R_SYM(rela.r_info), &sym))
					continue;
				gs.name = elf_strptr(elf, symshdr.sh_link, sym.st_name);
				if (!gs.name || !gs.name[0])
					continue;
			} else if (type == R_X86_64_IRELATIVE) {
				gs.addend = (u64)rela.r_addend;
			} else {
				continue;
			}
			if (array__reserve(slots, &cap, nr + 1, sizeof(**slots))) {
				free(*slots);
				*slots = NULL;
				return 0;
			}
			(*slots)[nr++] = gs;
		}
	}
	if (nr > 1)
		qsort(*slots, nr, sizeof(**slots), got_slot_cmp);
	return nr;
}

static const struct got_slot *find_got_slot(const struct got_slot *v, size_t nr, u64 got)
{
	size_t i = array__upper(v, nr, sizeof(*v), got);

	_Static_assert(offsetof(struct got_slot, got) == 0, "array__upper keys on the first u64");

	return i && v[i - 1].got == got ? &v[i - 1] : NULL;
}

/*
 * Add a "name@plt" symbol for every x86-64 PLT entry of @elf (.plt,
 * .plt.sec, .plt.got): each entry's jmp *disp(%rip) names a GOT slot, whose
 * relocation names the function. Entries that name no slot (the .plt
 * header, IBT's lazy .plt entries) get none. Returns 0 or -ENOMEM.
 */
static int add_plt_syms(struct raw_vec *rv, Elf *elf)
{
	static const char *const plts[] = {".plt", ".plt.sec", ".plt.got"};
	size_t nr_slots, nr_real = rv->nr, k;
	struct got_slot *slots;
	GElf_Ehdr ehdr;
	int err = 0;

	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64)
		return 0;
	nr_slots = read_got_slots(elf, &slots);
	for (k = 0; k < ARRAY_SIZE(plts) && nr_slots && !err; k++) {
		GElf_Shdr shdr;
		Elf_Scn *scn = elffile__section_by_name(elf, plts[k], &shdr);
		Elf_Data *data;
		u64 ent, off;

		if (!scn || shdr.sh_type != SHT_PROGBITS)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < shdr.sh_size)
			continue;
		ent = k == 2 && shdr.sh_entsize ? shdr.sh_entsize : 16;
		for (off = 0; off + ent <= shdr.sh_size && !err; off += ent) {
			const u8 *e = (const u8 *)data->d_buf + off;
			const struct got_slot *gs = NULL;
			const char *name;
			char *pltname;
			u64 p;

			for (p = 0; p + 6 <= ent && !gs; p++) {
				if (e[p] == 0xff && e[p + 1] == 0x25)
					gs = find_got_slot(
					    slots, nr_slots,
					    shdr.sh_addr + off + p + 6 +
						(u64)(int64_t)(int32_t)ld32(e + p + 2));
			}
			if (!gs)
				continue;
			name = gs->name ? gs->name : raw_name_at(rv, nr_real, gs->addend);
			if (!name)
				continue;
			if (asprintf(&pltname, "%s@plt", name) < 0) {
				err = -ENOMEM;
				break;
			}
			if (array__reserve(&rv->owned, &rv->cap_owned, rv->nr_owned + 1,
					   sizeof(*rv->owned))) {
				free(pltname);
				err = -ENOMEM;
				break;
			}
			rv->owned[rv->nr_owned++] = pltname;
			err = raw_vec__push(rv, &(struct raw_sym){shdr.sh_addr + off, ent,
								  shdr.sh_addr + shdr.sh_size,
								  pltname, 0, false});
		}
	}
	free(slots);
	return err;
}

/*
 * The function symbols of symbol section @scn of @elf and the PLT entries
 * of @plt_elf (the object itself; NULL: none) into @t: sorted,
 * deduplicated, sized.
 */
static int build_symtab(struct symtab *t, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
			Elf *plt_elf)
{
	struct raw_vec rv = {0};
	struct raw_sym *raw;
	size_t i, n, out, names = 0;
	char *arena;
	int err;

	err = collect_syms(&rv, elf, scn, shdr);
	if (!err && plt_elf)
		err = add_plt_syms(&rv, plt_elf);
	if (err)
		goto out;
	err = -ENOMEM;
	raw = rv.v;
	out = rv.nr;
	if (out)
		qsort(raw, out, sizeof(*raw), raw_sym_cmp);
	/* Keep the preferred symbol at each address; count its name's bytes. */
	for (i = 0, n = 0; i < out; i++) {
		if (n && raw[n - 1].start == raw[i].start)
			continue;
		raw[n++] = raw[i];
		names += strlen(raw[i].name) + 1;
	}
	t->syms = calloc(n ? n : 1, sizeof(*t->syms));
	arena = malloc(names ? names : 1);
	if (!t->syms || !arena) {
		free(arena);
		symbols__exit_table(t);
		goto out;
	}
	t->names = arena;
	for (i = 0; i < n; i++) {
		size_t len = strlen(raw[i].name) + 1;

		memcpy(arena, raw[i].name, len);
		t->syms[i] = (struct sym){raw[i].start, raw[i].start + raw[i].size, arena};
		arena += len;
		/*
		 * A size-0 symbol covers up to the next one, across sections as
		 * perf's symbols__fixup_end() does (a static program's _init takes
		 * its .plt); the last one up to the end of its section.
		 */
		if (!raw[i].size) {
			u64 end = raw[i].start + 4096;

			if (i + 1 < n)
				t->syms[i].end = raw[i + 1].start;
			else
				t->syms[i].end = end < raw[i].limit ? end : raw[i].limit;
		}
	}
	t->nr = n;
	err = 0;
out:
	raw_vec__exit(&rv);
	return err;
}

/*
 * Load @dso's load segments and function symbols from its file (see the
 * file comment for where symbols come from). Returns 0 or -errno; on error
 * the dso keeps whatever was loaded and addresses in it stay unresolved.
 */
int symbols__load(struct dso *dso)
{
	static bool elf_ready;
	struct elf_handle eh, dbg = {.fd = -1};
	Elf_Scn *scn;
	GElf_Shdr shdr;
	int err;

	if (!elf_ready) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return -ENOSYS;
		elf_ready = true;
	}
	err = elffile__open_object(dso, &eh);
	if (err)
		return err;
	err = load_segments(dso, eh.elf);
	if (err)
		goto out;
	scn = elffile__section(eh.elf, SHT_SYMTAB, &shdr);
	if (scn) {
		err = build_symtab(&dso->symtab, eh.elf, scn, &shdr, eh.elf);
	} else if (elffile__debug_file(dso, eh.elf, &dbg)) {
		scn = elffile__section(dbg.elf, SHT_SYMTAB, &shdr);
		err = build_symtab(&dso->symtab, dbg.elf, scn, &shdr, eh.elf);
		elffile__close(&dbg);
	} else {
		scn = elffile__section(eh.elf, SHT_DYNSYM, &shdr);
		err = scn ? build_symtab(&dso->symtab, eh.elf, scn, &shdr, eh.elf) : -ENOENT;
	}
out:
	elffile__close(&eh);
	return err;
}

/* The symbol containing @vaddr, or NULL. */
const struct sym *symbols__lookup(const struct symtab *t, u64 vaddr)
{
	size_t lo = array__upper(t->syms, t->nr, sizeof(*t->syms), vaddr);

	if (lo == 0 || vaddr >= t->syms[lo - 1].end)
		return NULL;
	return &t->syms[lo - 1];
}

void symbols__exit_table(struct symtab *t)
{
	free(t->syms);
	free(t->names);
	memset(t, 0, sizeof(*t));
}
