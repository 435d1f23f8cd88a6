// SPDX-License-Identifier: MIT
/*
 * locate.c - the resolver's tables: an address in a dso (file offset) or in
 * the kernel becomes a location, each location knows its function, and
 * functions are deduped by (dso, symbol start); with inline frames on, the
 * functions inlined at an address get locations of their own chained
 * through loc.next (model/srcline.c finds them), and an inlined function is
 * one function per dso with its out-of-line copy of the same name.
 */
#include "aggregate/aggregate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int locate__add_func(struct resolver *r, char *name, const struct func *proto, u32 *id)
{
	if (!name)
		return -ENOMEM;
	if (array__reserve(&r->funcs, &r->cap_funcs, r->nr_funcs + 1, sizeof(*r->funcs))) {
		free(name);
		return -ENOMEM;
	}
	r->funcs[r->nr_funcs] = *proto;
	r->funcs[r->nr_funcs].name = name;
	*id = (u32)r->nr_funcs++;
	return 0;
}

int locate__add_loc(struct resolver *r, u32 fid, struct dso *dso, u64 off, u32 *id)
{
	if (array__reserve(&r->locs, &r->cap_locs, r->nr_locs + 1, sizeof(*r->locs)))
		return -ENOMEM;
	r->locs[r->nr_locs] = (struct loc){.fid = fid, .next = NONE_LOC, .dso = dso, .off = off};
	*id = (u32)r->nr_locs++;
	return 0;
}

static u64 hash_name(const char *s)
{
	u64 h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (u8)*s++) * 0x100000001b3ULL;
	return h;
}

/*
 * The function id of the function @name inlined somewhere in @dso (takes
 * @name): the function of that name in @dso (its out-of-line copy too, see
 * name_func()), created on first sight.
 */
/*
 * The function of symbol @name (taken) in @dso: a new one, or the function
 * of that name first seen inlined (inline_func()), which gets the symbol's
 * @proto fields: an inlined copy and the out-of-line one are one function.
 * The name is noted for the inlined copies seen later.
 */
static int sym_func(struct resolver *r, struct dso *dso, char *name, const struct func *proto,
		    u32 *fid)
{
	u64 h, salt, val;

	if (!name)
		return -ENOMEM;
	h = hash_name(name);
	for (salt = 0; kvmap__get(&r->func_idx, dso->id | KEY_INLINE, h + salt, &val); salt++) {
		if (strcmp(r->funcs[val].name, name))
			continue;
		if (r->funcs[val].has_sym)
			break; /* another symbol of the same name: a function of its own */
		free(name);
		r->funcs[val].vaddr = proto->vaddr;
		r->funcs[val].has_sym = true;
		*fid = (u32)val;
		return 0;
	}
	if (locate__add_func(r, name, proto, fid))
		return -ENOMEM;
	for (salt = 0; kvmap__get(&r->func_idx, dso->id | KEY_INLINE, h + salt, &val); salt++)
		if (!strcmp(r->funcs[val].name, name))
			return 0;
	return kvmap__put(&r->func_idx, dso->id | KEY_INLINE, h + salt, *fid);
}

static int inline_func(struct resolver *r, struct dso *dso, struct inline_frame *inl, u32 *fid)
{
	char *name = inl->name;
	u64 h = hash_name(name), salt, val;
	int err;

	inl->name = NULL;
	for (salt = 0; kvmap__get(&r->func_idx, dso->id | KEY_INLINE, h + salt, &val); salt++) {
		if (!strcmp(r->funcs[val].name, name)) {
			free(name);
			*fid = (u32)val;
			return 0;
		}
	}
	err = locate__add_func(
	    r, name,
	    &(struct func){.object = dso->short_name, .dso = dso, .obj = OBJ_DSO0 + dso->id}, fid);
	if (err)
		return err;
	r->funcs[*fid].decl = inl->decl; /* taken */
	inl->decl = NULL;
	return kvmap__put(&r->func_idx, dso->id | KEY_INLINE, h + salt, *fid);
}

/*
 * Give location @loc (file offset @off of @dso, in function @fid) the
 * frames of the functions inlined at it: @loc itself becomes the innermost
 * inlined function, and a chain of new locations through loc.next, one per
 * enclosing inlined function, ends with @fid (loc.depth counts the levels).
 * Done once per distinct address; nothing when the dso has no DWARF.
 */
static int add_inlines(struct resolver *r, struct dso *dso, u64 off, u32 fid, u32 loc)
{
	struct inline_frame inl[MAX_INLINE_DEPTH];
	u32 prev = loc, id, f;
	u64 vaddr;
	int n, i, err = 0;

	if (dso__vaddr(dso, off, &vaddr))
		return 0;
	n = srcline__inlines(dso, vaddr, inl, MAX_INLINE_DEPTH);
	for (i = 0; i < n && !err; i++) {
		err = inline_func(r, dso, &inl[i], &f);
		free(inl[i].decl);
		inl[i].decl = NULL;
		if (err)
			break;
		if (i == 0) {
			r->locs[loc].fid = f;
			continue;
		}
		err = locate__add_loc(r, f, dso, off, &id);
		if (!err) {
			r->locs[id].depth = (u32)i;
			r->locs[prev].next = id;
			prev = id;
		}
	}
	for (; i < n; i++) {
		free(inl[i].name);
		free(inl[i].decl);
	}
	if (err || !n)
		return err;
	err = locate__add_loc(r, fid, dso, off, &id);
	if (!err) {
		r->locs[id].depth = (u32)n;
		r->locs[prev].next = id;
		r->any_inline = true;
	}
	return err;
}

/* The location for file offset @off of @dso, creating it (and its function) on first sight. */
int locate__dso(struct resolver *r, struct dso *dso, u64 off, bool no_load, u32 *loc)
{
	const struct sym *sym;
	u64 val, a, b;
	char *name;
	u32 fid;
	int err;

	if (kvmap__get(&r->loc_idx, dso->id, off, &val)) {
		*loc = (u32)val;
		return 0;
	}
	sym = dso__has_file(dso) ? dso__find_sym(dso, off, no_load) : NULL;
	a = dso->id | (sym ? KEY_SYM : KEY_NOSYM);
	b = sym ? sym->start : off;
	if (kvmap__get(&r->func_idx, a, b, &val)) {
		fid = (u32)val;
	} else {
		struct func proto = {.object = dso->short_name,
				     .dso = dso,
				     .vaddr = sym ? sym->start : 0,
				     .obj = OBJ_DSO0 + dso->id,
				     .has_sym = sym != NULL};

		if (sym) {
			name = demangle__name(sym->name);
			if (!name)
				name = strdup(sym->name);
		} else if (asprintf(&name, "%s+0x%llx", dso->short_name, (unsigned long long)off) <
			   0) {
			name = NULL;
		}
		/* Named for its inlined copies only where they can be (DWARF not ruled out). */
		if (sym && !r->no_inline && (!dso->dw_tried || dso->dw))
			err = sym_func(r, dso, name, &proto, &fid);
		else
			err = locate__add_func(r, name, &proto, &fid);
		if (!err)
			err = kvmap__put(&r->func_idx, a, b, fid);
		if (err)
			return err;
	}
	err = locate__add_loc(r, fid, dso, off, loc);
	if (!err && sym && !r->no_inline)
		err = add_inlines(r, dso, off, fid, *loc);
	return err ? err : kvmap__put(&r->loc_idx, dso->id, off, *loc);
}

/* The location of kernel address @addr: a kallsyms function, or [kernel]. */
int locate__kernel(struct resolver *r, u64 addr, u32 *loc)
{
	const struct ksym *ks;
	u64 val;
	u32 fid;
	int err;

	*loc = LOC_KERNEL;
	if (!kallsyms__ready(&r->ksyms))
		return 0;
	if (kvmap__get(&r->loc_idx, KEY_KERNEL, addr, &val)) {
		*loc = (u32)val;
		return 0;
	}
	ks = kallsyms__find(&r->ksyms, addr);
	if (!ks) {
		fid = FUNC_KERNEL;
	} else if (kvmap__get(&r->func_idx, KEY_KSYM, ks->addr, &val)) {
		fid = (u32)val;
	} else {
		struct func proto = {.object = "[kernel.kallsyms]", .obj = OBJ_KERNEL};

		err = locate__add_func(r, strdup(ks->name), &proto, &fid);
		if (!err)
			err = kvmap__put(&r->func_idx, KEY_KSYM, ks->addr, fid);
		if (err)
			return err;
	}
	err = locate__add_loc(r, fid, NULL, addr, loc);
	return err ? err : kvmap__put(&r->loc_idx, KEY_KERNEL, addr, *loc);
}
