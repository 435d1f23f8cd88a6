// SPDX-License-Identifier: MIT
/*
 * srcline.c - source file:line of a code address, and the functions inlined
 * at it, through libdw. A dso's DWARF (its own, or its separate debug file)
 * is opened the first time one of its addresses is resolved (for its inlined
 * functions) or shown, and kept open until the dso goes away; a compressed
 * one is read a CU at a time, as far as the addresses asked for need
 * (dwarf_lazy.c). The inlined
 * functions at an address are found from its out-of-line function's DIE
 * (each CU's functions are listed once), so the cost per address is that
 * function's subtree, not the CU's.
 */
#include "model/model.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <unistd.h>

/* How many inlined frames one line names at most. */
#define MAX_INLINES 4

/* One address range of an out-of-line function's DIE. */
struct fn_range {
	u64 lo, hi;    /* [lo, hi) */
	Dwarf_Off die; /* the DW_TAG_subprogram */
};

struct dwarf_handle {
	int fd;
	Elf *elf;
	Dwarf *dw;		 /* the whole file's DWARF, or NULL when read by parts */
	struct dwarf_lazy *lazy; /* by parts: only the CUs asked for (dwarf_lazy.c) */
	/* The functions of the CUs looked at so far, sorted by lo: an address's
	 * function is found without walking its CU again (nested_scopes()). */
	struct fn_range *fr;
	size_t nr_fr, cap_fr;
	struct kvmap cus; /* CU offset -> 1: its functions are in fr */
	bool store;	  /* compressed, no copy yet: write one when done (debugcache.c) */
	struct debugcache_key key;
};

static struct dwarf_handle *dwarf_of(struct dso *dso)
{
	struct debugcache_key key;
	struct dwarf_handle *dh;
	bool store = false, copy_open = false;
	Elf *copy;
	void *elf;
	int fd, copy_fd;

	if (dso->dw_tried)
		return dso->dw;
	dso->dw_tried = true;
	if (!dso__has_file(dso) || elffile__open_dwarf(dso, &fd, &elf))
		return NULL;
	/* compressed: its unpacked copy when one was kept, else keep one at the end */
	if (debugcache__wanted(elf, &key)) {
		if (!debugcache__open(&key, &copy_fd, &copy)) {
			elf_end(elf);
			close(fd);
			elf = copy;
			fd = copy_fd;
			copy_open = true;
		} else {
			store = true;
		}
	}
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		goto fail;
	dh->fd = fd;
	dh->elf = elf;
	dh->store = store;
	dh->key = key;
	dh->lazy = dwarf_lazy__open(elf, copy_open);
	if (!dh->lazy)
		dh->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dh->dw && !dh->lazy) {
		free(dh);
		goto fail;
	}
	dso->dw = dh;
	return dh;
fail:
	elf_end(elf);
	close(fd);
	return NULL;
}

/*
 * The Dwarf and CU DIE (into @cudie) for ELF address @vaddr of @dso, its
 * DWARF opened first; NULL when it has none there. The Dwarf is valid until
 * the next lookup in the same dso.
 */
static Dwarf *cu_of(struct dso *dso, u64 vaddr, Dwarf_Die *cudie, struct dwarf_handle **dhp)
{
	struct dwarf_handle *dh = dwarf_of(dso);

	*dhp = dh;
	if (!dh)
		return NULL;
	if (dh->lazy)
		return dwarf_lazy__cu(dh->lazy, vaddr, cudie);
	return dwarf_addrdie(dh->dw, vaddr, cudie) ? dh->dw : NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static int fn_range_cmp(const void *pa, const void *pb)
{
	const struct fn_range *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int add_fn_ranges(Dwarf_Die *die, void *arg)
{
	struct dwarf_handle *dh = arg;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (array__reserve(&dh->fr, &dh->cap_fr, dh->nr_fr + 1, sizeof(*dh->fr)))
			return DWARF_CB_ABORT;
		dh->fr[dh->nr_fr++] = (struct fn_range){lo, hi, dwarf_dieoffset(die)};
	}
	return DWARF_CB_OK;
}

/*
 * The DIE of the out-of-line function containing @vaddr in CU @cudie into
 * @fn: the CU's functions are listed once (dwarf_getfuncs()), then found by
 * binary search. False if none.
 */
static bool function_die(struct dwarf_handle *dh, Dwarf *dw, Dwarf_Die *cudie, u64 vaddr,
			 Dwarf_Die *fn)
{
	u64 val, cu = dwarf_dieoffset(cudie);
	size_t lo;

	if (!kvmap__get(&dh->cus, cu, 0, &val)) {
		if (kvmap__put(&dh->cus, cu, 0, 1))
			return false;
		dwarf_getfuncs(cudie, add_fn_ranges, dh, 0);
		if (dh->nr_fr) /* none yet: fr is NULL, which qsort() may not be given */
			qsort(dh->fr, dh->nr_fr, sizeof(*dh->fr), fn_range_cmp);
	}
	lo = array__upper(dh->fr, dh->nr_fr, sizeof(*dh->fr), vaddr);
	if (lo == 0 || vaddr >= dh->fr[lo - 1].hi)
		return false;
	return dwarf_offdie(dw, dh->fr[lo - 1].die, fn) != NULL;
}

/*
 * The scopes around @vaddr from function DIE @fn down, innermost first:
 * the lexical blocks and inlined subroutines that contain it, then @fn.
 * Only @fn's own subtree is read. Sets *scopes (malloc'ed); returns how many.
 */
static int scopes_in(Dwarf_Die *fn, u64 vaddr, Dwarf_Die **scopes)
{
	Dwarf_Die path[64], c;
	int n = 1, i;

	path[0] = *fn;
	while (n < (int)ARRAY_SIZE(path) && dwarf_child(&path[n - 1], &c) == 0) {
		bool found = false;

		do {
			int tag = dwarf_tag(&c);

			if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) &&
			    dwarf_haspc(&c, vaddr) == 1) {
				path[n++] = c;
				found = true;
				break;
			}
		} while (dwarf_siblingof(&c, &c) == 0);
		if (!found)
			break;
	}
	*scopes = malloc((size_t)n * sizeof(**scopes));
	if (!*scopes)
		return 0;
	for (i = 0; i < n; i++)
		(*scopes)[i] = path[n - 1 - i];
	return n;
}

/*
 * The scopes around @vaddr in the CU @cudie, as they nest in the tree.
 * Through the function's DIE when it is listed (function_die()); else
 * dwarf_getscopes(), which stops at the innermost inlined subroutine (its
 * parents are of the abstract definition), so the chain is read from there
 * up with dwarf_getscopes_die(). Sets *scopes (malloc'ed); returns how many,
 * <= 0 for none.
 */
static int nested_scopes(struct dwarf_handle *dh, Dwarf *dw, Dwarf_Die *cudie, u64 vaddr,
			 Dwarf_Die **scopes)
{
	Dwarf_Die fn;

	Dwarf_Die *first = NULL, inl;
	int n, i;

	*scopes = NULL;
	if (function_die(dh, dw, cudie, vaddr, &fn))
		return scopes_in(&fn, vaddr, scopes);
	n = dwarf_getscopes(cudie, vaddr, &first);
	for (i = 0; i < n && dwarf_tag(&first[i]) != DW_TAG_inlined_subroutine; i++)
		;
	if (i >= n) {
		free(first);
		return 0;
	}
	inl = first[i];
	free(first);
	return dwarf_getscopes_die(&inl, scopes);
}

/* Append " [inlined a <- b]" for the inlined subroutines around @vaddr, innermost first. */
static void add_inlines(struct dwarf_handle *dh, Dwarf *dw, Dwarf_Die *cudie, u64 vaddr, char *buf,
			size_t len)
{
	Dwarf_Die *scopes = NULL;
	int n, i, shown = 0;
	size_t used = strlen(buf);

	n = nested_scopes(dh, dw, cudie, vaddr, &scopes);
	for (i = 0; i < n && shown < MAX_INLINES; i++) {
		const char *name;
		int w;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		name = dwarf_diename(&scopes[i]);
		w = snprintf(buf + used, len - used, "%s%s", shown ? " <- " : " [inlined ",
			     name ? name : "?");
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
		shown++;
	}
	if (shown && used + 1 < len) {
		buf[used++] = ']';
		buf[used] = 0;
	}
	free(scopes);
}

/*
 * "file.c:123" for ELF address @vaddr of @dso into @buf, followed with
 * @inlines by the functions inlined there. Returns 0, or -ENOENT when the
 * dso has no line information for it (@buf is then "").
 */
int srcline__find(struct dso *dso, u64 vaddr, bool inlines, char *buf, size_t len)
{
	struct dwarf_handle *dh;
	Dwarf_Die cudie;
	Dwarf_Line *line;
	const char *file;
	int lineno = 0;
	Dwarf *dw;

	buf[0] = 0;
	dw = cu_of(dso, vaddr, &cudie, &dh);
	if (!dw)
		return -ENOENT;
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (!line)
		return -ENOENT;
	file = dwarf_linesrc(line, NULL, NULL);
	if (!file || dwarf_lineno(line, &lineno) != 0)
		return -ENOENT;
	snprintf(buf, len, "%s:%d", base_name(file), lineno);
	if (inlines)
		add_inlines(dh, dw, &cudie, vaddr, buf, len);
	return 0;
}

/* The name of inlined or out-of-line function @die: demangled linkage name, else its name. */
static char *scope_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *link = NULL, *name;
	char *d;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		link = dwarf_formstring(&attr);
	if (link && (d = demangle__name(link)) != NULL)
		return d;
	name = dwarf_diename(die);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return strdup(name ? name : link ? link : "[inlined]");
}

/*
 * The functions inlined at ELF address @vaddr of @dso, innermost first, into
 * @out (at most @max): each its name and definition's line (malloc'ed, the
 * caller frees them).
 * Returns how many (0: none, or no DWARF).
 */
int srcline__inlines(struct dso *dso, u64 vaddr, struct inline_frame *out, int max)
{
	struct dwarf_handle *dh;
	Dwarf_Die cudie, *scopes = NULL;
	const char *file;
	int n, i, k = 0, line;
	Dwarf *dw = cu_of(dso, vaddr, &cudie, &dh);

	if (!dw)
		return 0;
	n = nested_scopes(dh, dw, &cudie, vaddr, &scopes);
	for (i = 0; i < n && k < max; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		out[k].name = scope_name(&scopes[i]);
		if (!out[k].name)
			break;
		out[k].decl = NULL;
		if (dwarf_decl_line(&scopes[i], &line) == 0 &&
		    (file = dwarf_decl_file(&scopes[i])) != NULL &&
		    asprintf(&out[k].decl, "%s:%d", base_name(file), line) < 0)
			out[k].decl = NULL;
		k++;
	}
	free(scopes);
	return k;
}

/*
 * Like srcline__find(), for the frame @depth levels out of the inline chain
 * at @vaddr: depth 0 is the address's own line, depth d the line that calls
 * the d-th innermost inlined function (its DW_AT_call_file:call_line).
 */
int srcline__find_depth(struct dso *dso, u64 vaddr, u32 depth, char *buf, size_t len)
{
	struct dwarf_handle *dh;
	Dwarf_Die cudie, *scopes = NULL;
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word fidx, lineno;
	const char *file = NULL;
	size_t nfiles;
	int n, i;
	u32 seen = 0;
	Dwarf *dw;

	if (!depth)
		return srcline__find(dso, vaddr, false, buf, len);
	buf[0] = 0;
	dw = cu_of(dso, vaddr, &cudie, &dh);
	if (!dw)
		return -ENOENT;
	n = nested_scopes(dh, dw, &cudie, vaddr, &scopes);
	for (i = 0; i < n; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine || ++seen < depth)
			continue;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &fidx) == 0 &&
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &lineno) == 0 &&
		    dwarf_getsrcfiles(&cudie, &files, &nfiles) == 0 && fidx < nfiles)
			file = dwarf_filesrc(files, fidx, NULL, NULL);
		if (file)
			snprintf(buf, len, "%s:%llu", base_name(file), (unsigned long long)lineno);
		break;
	}
	free(scopes);
	return buf[0] ? 0 : -ENOENT;
}

/* Keep the unpacked copy of @dh's compressed file (debugcache.c), when it has none. */
static void store_copy(struct dwarf_handle *dh)
{
	const void *info = NULL;
	u64 len = 0;

	if (dh->lazy && (!(info = dwarf_lazy__all(dh->lazy, &len)) || len != dh->key.info_size))
		return;
	debugcache__store(dh->elf, &dh->key, info);
}

void srcline__close(struct dso *dso)
{
	struct dwarf_handle *dh = dso->dw;

	if (!dh)
		return;
	if (dh->store)
		store_copy(dh);
	if (dh->dw)
		dwarf_end(dh->dw);
	dwarf_lazy__close(dh->lazy);
	free(dh->fr);
	kvmap__exit(&dh->cus);
	elf_end(dh->elf);
	close(dh->fd);
	free(dh);
	dso->dw = NULL;
}
