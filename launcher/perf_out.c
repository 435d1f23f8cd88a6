/* SPDX-License-Identifier: MIT */
/*
 * perf_out.c - the perf.data file of an outside run (outside.h), laid out as
 * the library's writer lays it: header (104) | the event ids (8 each) | one
 * attr (136) | data ... | feature table and bodies. The data is appended in
 * 256 KiB writes, and after each the header's data size is rewritten: a
 * launcher killed mid-run leaves a file perf reads up to its last write
 * (without features). The features are those perf record writes; the
 * host's and the machine's come from preload/session/file_host.c and
 * file_machine.c, as in the library's files.
 * Not async-signal-safe.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autoprof/perf_file.h"
#include "outside.h"
#include "session/blob.h"

#define IDS_AT	 sizeof(struct perf_file_header)
#define FLUSH_AT (256 * 1024)

/*
 * file_machine.c keeps the machine's description in the library's control
 * directory between process images; one launcher run reads it once from
 * /proc and /sys, so it has no cache to share.
 */
int control__dir(char *out, size_t cap);
int control__dir(char *out, size_t cap)
{
	(void)out;
	(void)cap;
	return -ENOENT;
}

static int pwrite_all(int fd, const void *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p = (const char *)p + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int write_header(struct perf_out *o, const uint64_t *bits)
{
	struct perf_file_header h = {
	    .magic = PERF_FILE_MAGIC,
	    .size = sizeof(h),
	    .attr_size = sizeof(struct perf_file_attr),
	    .attrs = {IDS_AT + (uint64_t)o->nr_ids * 8, sizeof(struct perf_file_attr)},
	    .data = {o->data_off, o->end - o->data_off},
	};

	if (bits)
		memcpy(h.adds_features, bits, sizeof(h.adds_features));
	return pwrite_all(o->fd, &h, sizeof(h), 0);
}

int perf_out__open(struct perf_out *o, const char *path, const struct perf_event_attr *attr,
		   const char *name, const uint64_t *ids, int n, char **argv)
{
	struct perf_file_attr fa;
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path))
		return -ENAMETOOLONG;
	err = old_file__move_aside(path);
	if (err)
		return err;
	o->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (o->fd < 0)
		return -errno;
	o->attr = *attr;
	o->attr.size = PERF_FILE_ATTR_SIZE;
	snprintf(o->ev_name, sizeof(o->ev_name), "%s", name);
	o->ids = malloc((size_t)(n ? n : 1) * sizeof(*ids));
	if (!o->ids) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(o->ids, ids, (size_t)n * sizeof(*ids));
	o->nr_ids = n;
	o->argv = argv;
	o->data_off = o->end = PERF_ALIGN8(IDS_AT + (uint64_t)n * 8 + sizeof(fa));
	memset(&fa, 0, sizeof(fa));
	memcpy(fa.attr, &o->attr, PERF_FILE_ATTR_SIZE);
	fa.ids.offset = IDS_AT;
	fa.ids.size = (uint64_t)n * 8;
	err = write_header(o, NULL);
	if (!err)
		err = pwrite_all(o->fd, ids, (size_t)n * 8, IDS_AT);
	if (!err)
		err = pwrite_all(o->fd, &fa, sizeof(fa), IDS_AT + (uint64_t)n * 8);
	if (!err)
		return 0;
fail: /* (RLIMIT_FSIZE, a full disk): no file of ours left without a header */
	close(o->fd);
	o->fd = -1;
	unlink(path);
	return err;
}

void perf_out__add(struct perf_out *o, const void *rec, size_t len)
{
	if (o->note && len >= sizeof(struct perf_event_header)) {
		const struct perf_event_header *h = rec;

		if (h->type != PERF_RECORD_SAMPLE && h->type != PERF_RECORD_FINISHED_ROUND)
			o->note(o->note_ctx, h);
	}
	if (o->fd < 0)
		return; /* a window's file that could not be made (said): its records are lost */
	if (o->len + len > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 2 * FLUSH_AT;
		char *p;

		while (cap < o->len + len)
			cap *= 2;
		p = realloc(o->buf, cap);
		if (!p) {
			o->err = o->err ? o->err : -ENOMEM;
			return;
		}
		o->buf = p;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, rec, len);
	o->len += len;
	if (o->len >= FLUSH_AT)
		perf_out__flush(o);
}

void perf_out__note_file(struct perf_out *o, const char *name)
{
	if (name[0] != '/')
		return; /* [vdso], [heap], //anon: no file */
	for (size_t i = 0; i < o->nr_files; i++)
		if (!strcmp(o->files[i], name))
			return;
	if (o->nr_files == o->cap_files) {
		size_t cap = o->cap_files ? o->cap_files * 2 : 64;
		char **v = realloc(o->files, cap * sizeof(*v));

		if (!v)
			return;
		o->files = v;
		o->cap_files = cap;
	}
	o->files[o->nr_files] = strdup(name);
	if (o->files[o->nr_files])
		o->nr_files++;
}

int perf_out__flush(struct perf_out *o)
{
	int err;

	if (o->fd < 0)
		return -EBADF;
	if (!o->len)
		return o->err;
	err = pwrite_all(o->fd, o->buf, o->len, o->end);
	if (!err) {
		o->end += o->len;
		o->len = 0;
		err = write_header(o, NULL);
	}
	if (err && !o->err)
		o->err = err;
	return err;
}

/* The GNU build id of the ELF file at @path into @id (at most 20 bytes). Returns its size or 0. */
static size_t build_id_of(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (e && !got && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz <= 20 &&
			    nh.n_descsz > 0) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				got = nh.n_descsz;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return got;
}

static void feat_build_ids(struct perf_out *o, struct blob *b)
{
	for (size_t i = 0; i < o->nr_files; i++) {
		uint8_t id[20];
		size_t n = build_id_of(o->files[i], id);

		if (n)
			blob_build_id(b, o->files[i], id, n);
	}
}

static void feat_cmdline(struct perf_out *o, struct blob *b)
{
	uint32_t n = 1;

	for (char **a = o->argv; a && *a; a++)
		n++;
	blob_u32(b, n);
	blob_string(b, "autoprof");
	for (char **a = o->argv; a && *a; a++)
		blob_string(b, *a);
}

static void feat_event_desc(struct perf_out *o, struct blob *b)
{
	blob_u32(b, 1);
	blob_u32(b, PERF_FILE_ATTR_SIZE);
	blob_put(b, &o->attr, PERF_FILE_ATTR_SIZE);
	blob_u32(b, (uint32_t)o->nr_ids);
	blob_string(b, o->ev_name);
	for (int i = 0; i < o->nr_ids; i++)
		blob_u64(b, o->ids[i]);
}

/* One feature's body into @b; false when this run has none. */
static bool feature(struct perf_out *o, int feat, struct blob *b)
{
	switch (feat) {
	case PERF_FEAT_BUILD_ID:
		feat_build_ids(o, b);
		return true;
	case PERF_FEAT_CMDLINE:
		feat_cmdline(o, b);
		return true;
	case PERF_FEAT_EVENT_DESC:
		feat_event_desc(o, b);
		return true;
	case PERF_FEAT_SAMPLE_TIME:
		blob_u64(b, o->first_time);
		blob_u64(b, o->last_time);
		return true;
	default: /* the host's and the machine's description */
		return file_host__feature(feat, b) || file_machine__feature(feat, b, 0);
	}
}

int perf_out__finish(struct perf_out *o)
{
	enum { NF = MACHINE_NR_FEATURES };
	struct perf_file_section table[NF];
	uint64_t bits[PERF_FEAT_BITS / 64] = {0};
	struct blob body = {0};
	int n = 0, err = perf_out__flush(o);

	if (o->fd < 0) {
		for (size_t i = 0; i < o->nr_files; i++)
			free(o->files[i]);
		free(o->files);
		free(o->buf);
		free(o->ids);
		return -EBADF;
	}
	for (int i = 0; i < NF; i++) {
		size_t start = body.len;

		if (!feature(o, file_machine__feature_order[i], &body))
			continue;
		table[n].offset = start;
		table[n].size = body.len - start;
		bits[file_machine__feature_order[i] / 64] |=
		    1ULL << (file_machine__feature_order[i] % 64);
		n++;
	}
	if (body.err) {
		blob_free(&body);
		return err ? err : body.err;
	}
	for (int i = 0; i < n; i++)
		table[i].offset += o->end + (uint64_t)n * sizeof(table[0]);
	if (!err)
		err = pwrite_all(o->fd, table, (size_t)n * sizeof(table[0]), o->end);
	if (!err)
		err = pwrite_all(o->fd, body.p, body.len, o->end + (uint64_t)n * sizeof(table[0]));
	if (!err)
		err = write_header(o, bits);
	blob_free(&body);
	if (close(o->fd) < 0 && !err)
		err = -errno;
	o->fd = -1;
	for (size_t i = 0; i < o->nr_files; i++)
		free(o->files[i]);
	free(o->files);
	free(o->buf);
	free(o->ids);
	return err ? err : o->err;
}

int perf_out__rotate(struct perf_out *o, const char *path)
{
	struct perf_event_attr attr = o->attr;
	uint64_t samples = o->prev_samples + o->samples, lost = o->prev_lost + o->lost;
	void (*note)(void *, const struct perf_event_header *) = o->note;
	void *note_ctx = o->note_ctx;
	char name[sizeof(o->ev_name)], **argv = o->argv;
	int n = o->nr_ids, err, err2;
	uint64_t *ids = malloc((size_t)(n ? n : 1) * sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	memcpy(ids, o->ids, (size_t)n * sizeof(*ids));
	memcpy(name, o->ev_name, sizeof(name));
	err = perf_out__finish(o);
	err2 = perf_out__open(o, path, &attr, name, ids, n, argv);
	free(ids);
	o->prev_samples = samples;
	o->prev_lost = lost;
	o->note = note;
	o->note_ctx = note_ctx;
	return err ? err : err2;
}
