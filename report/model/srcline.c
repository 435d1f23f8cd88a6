// SPDX-License-Identifier: MIT
/*
 * srcline.c - source file:line of a code address, and the functions inlined
 * at it, through libdw. A dso's DWARF (its own, or its separate debug file)
 * is opened the first time one of its addresses is shown and kept open until
 * the dso goes away; only the views that print lines ever call this.
 */
#include "internal.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <unistd.h>

/* How many inlined frames one line names at most. */
#define MAX_INLINES 4

struct dwarf_handle {
	int fd;
	Elf *elf;
	Dwarf *dw;
};

static struct dwarf_handle *dwarf_of(struct dso *dso)
{
	struct dwarf_handle *dh;
	void *elf;
	int fd;

	if (dso->dw_tried)
		return dso->dw;
	dso->dw_tried = true;
	if (dso->special || symbols__open_dwarf(dso, &fd, &elf))
		return NULL;
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		goto fail;
	dh->fd = fd;
	dh->elf = elf;
	dh->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dh->dw) {
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

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Append " [inlined a <- b]" for the inlined subroutines around @vaddr, innermost first. */
static void add_inlines(Dwarf_Die *cudie, u64 vaddr, char *buf, size_t len)
{
	Dwarf_Die *scopes = NULL;
	int n, i, shown = 0;
	size_t used = strlen(buf);

	n = dwarf_getscopes(cudie, vaddr, &scopes);
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
	struct dwarf_handle *dh = dwarf_of(dso);
	Dwarf_Die cudie;
	Dwarf_Line *line;
	const char *file;
	int lineno = 0;

	buf[0] = 0;
	if (!dh || !dwarf_addrdie(dh->dw, vaddr, &cudie))
		return -ENOENT;
	line = dwarf_getsrc_die(&cudie, vaddr);
	if (!line)
		return -ENOENT;
	file = dwarf_linesrc(line, NULL, NULL);
	if (!file || dwarf_lineno(line, &lineno) != 0)
		return -ENOENT;
	snprintf(buf, len, "%s:%d", base_name(file), lineno);
	if (inlines)
		add_inlines(&cudie, vaddr, buf, len);
	return 0;
}

void srcline__close(struct dso *dso)
{
	struct dwarf_handle *dh = dso->dw;

	if (!dh)
		return;
	dwarf_end(dh->dw);
	elf_end(dh->elf);
	close(dh->fd);
	free(dh);
	dso->dw = NULL;
}
