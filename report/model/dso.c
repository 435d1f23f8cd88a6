// SPDX-License-Identifier: MIT
/*
 * dso.c - one object per mapped path, shared by every process that maps it,
 * with its symbols loaded the first time an address in it is resolved.
 */
#include "model/model.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Names of mappings that are not object files we can or should open: the
 * kernel's [vdso], [heap], //anon ..., devices, shared memory, and /proc or
 * /sys files (a hostile file could name /proc/kcore).
 */
static bool is_special(const char *path)
{
	static const char *const prefixes[] = {
	    "//anon", "/dev/", "/memfd:", "/SYSV", "/proc/", "/sys/"};
	size_t i;

	if (path[0] != '/')
		return true;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	}
	return false;
}

static struct dso *dso__new(const char *path, size_t len, u32 id)
{
	struct dso *dso = calloc(1, sizeof(*dso));
	const char *slash;

	if (!dso)
		return NULL;
	dso->path = strndup(path, len);
	if (!dso->path) {
		free(dso);
		return NULL;
	}
	slash = strrchr(dso->path, '/');
	/* perf's short name: the base name of any path ("[vdso]" as it is) */
	dso->short_name = slash && slash[1] ? slash + 1 : dso->path;
	dso->id = id;
	dso->jitmap = jitmap__is_path(dso->path);
	if (dso->jitmap && asprintf(&dso->own_name, "[JIT] tid %d", atoi(dso->path + 10)) > 0)
		dso->short_name = dso->own_name;
	dso->special = !dso->jitmap && is_special(dso->path);
	return dso;
}

/*
 * The dso for the @len-byte @path (not necessarily NUL-terminated),
 * created on first sight. Returns NULL if out of memory.
 */
struct dso *dsos__findnew(struct dsos *d, const char *path, size_t len)
{
	u64 h, salt, idx;
	struct dso *dso;

	len = strnlen(path, len);
	h = strset__hash(path, len);
	for (salt = 0; kvmap__get(&d->by_hash, h, salt, &idx); salt++) {
		dso = d->v[idx];
		if (strlen(dso->path) == len && !memcmp(dso->path, path, len))
			return dso;
	}
	if (array__reserve(&d->v, &d->cap, d->nr + 1, sizeof(*d->v)))
		return NULL;
	dso = dso__new(path, len, (u32)d->nr);
	if (!dso)
		return NULL;
	for (salt = 0; kvmap__get(&d->ids_by_hash, h, salt, &idx); salt++) {
		if (!strcmp(d->ids[idx].path, dso->path)) {
			strcpy(dso->build_id, d->ids[idx].hex);
			break;
		}
	}
	salt = 0;
	while (kvmap__get(&d->by_hash, h, salt, &idx))
		salt++;
	if (kvmap__put(&d->by_hash, h, salt, d->nr)) {
		free(dso->path);
		free(dso);
		return NULL;
	}
	d->v[d->nr++] = dso;
	return dso;
}

/*
 * Record build id @hex for the @len-byte @path: on its dso when it exists,
 * else kept for the dso created for that path later. The first id given
 * for a path is kept (perf writes one per object).
 */
int dsos__set_build_id(struct dsos *d, const char *path, size_t len, const char *hex)
{
	u64 h, salt, idx;

	len = strnlen(path, len);
	if (!len || !hex[0] || strlen(hex) > 2 * BUILD_ID_MAX)
		return 0;
	h = strset__hash(path, len);
	for (salt = 0; kvmap__get(&d->by_hash, h, salt, &idx); salt++) {
		struct dso *dso = d->v[idx];

		if (strlen(dso->path) == len && !memcmp(dso->path, path, len)) {
			if (!dso->build_id[0])
				strcpy(dso->build_id, hex);
			return 0;
		}
	}
	for (salt = 0; kvmap__get(&d->ids_by_hash, h, salt, &idx); salt++) {
		if (strlen(d->ids[idx].path) == len && !memcmp(d->ids[idx].path, path, len))
			return 0;
	}
	if (array__reserve(&d->ids, &d->cap_ids, d->nr_ids + 1, sizeof(*d->ids)))
		return -ENOMEM;
	d->ids[d->nr_ids].path = strndup(path, len);
	if (!d->ids[d->nr_ids].path)
		return -ENOMEM;
	strcpy(d->ids[d->nr_ids].hex, hex);
	if (kvmap__put(&d->ids_by_hash, h, salt, d->nr_ids)) {
		free(d->ids[d->nr_ids].path);
		return -ENOMEM;
	}
	d->nr_ids++;
	return 0;
}

bool dso__has_file(const struct dso *dso)
{
	return !dso->special ||
	       (!strcmp(dso->path, "[vdso]") && buildid__vdso_known(dso->build_id));
}

/*
 * Load @dso's symbols once; failures leave it without symbols. With
 * @no_load nothing is opened and the dso stays without symbols.
 */
void dso__load(struct dso *dso, bool no_load)
{
	if (dso->loaded)
		return;
	dso->loaded = true;
	if (!dso__has_file(dso) || no_load)
		return;
	if (dso->jitmap) {
		dso->missing = jitmap__load(dso) != 0;
		return;
	}
	if (symbols__load(dso) == -ENOENT && !dso->nr_segs)
		dso->missing = true;
}

/* The ELF virtual address of file offset @file_off: 0, or -ENOENT if in no segment. */
int dso__vaddr(const struct dso *dso, u64 file_off, u64 *vaddr)
{
	size_t i;

	for (i = 0; i < dso->nr_segs; i++) {
		const struct load_seg *seg = &dso->segs[i];

		if (file_off >= seg->offset && file_off - seg->offset < seg->filesz) {
			*vaddr = file_off - seg->offset + seg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The function symbol at file offset @file_off of @dso (loading it first),
 * or NULL when the offset is in no load segment or no symbol.
 */
const struct sym *dso__find_sym(struct dso *dso, u64 file_off, bool no_load)
{
	u64 vaddr;

	dso__load(dso, no_load);
	if (dso__vaddr(dso, file_off, &vaddr))
		return NULL;
	return symbols__lookup(&dso->symtab, vaddr);
}

void dsos__exit(struct dsos *d)
{
	size_t i;

	for (i = 0; i < d->nr; i++) {
		srcline__close(d->v[i]);
		symbols__exit_table(&d->v[i]->symtab);
		free(d->v[i]->segs);
		free(d->v[i]->path);
		free(d->v[i]->own_name);
		free(d->v[i]);
	}
	free(d->v);
	kvmap__exit(&d->by_hash);
	for (i = 0; i < d->nr_ids; i++)
		free(d->ids[i].path);
	free(d->ids);
	kvmap__exit(&d->ids_by_hash);
	memset(d, 0, sizeof(*d));
}
