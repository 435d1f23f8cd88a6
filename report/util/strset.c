// SPDX-License-Identifier: MIT
/*
 * strset.c - a set of strings with dense u32 ids, for row keys that are
 * names (comms, source lines). Id 0 is always the empty string.
 */
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>

u64 strset__hash(const void *p, size_t len)
{
	const u8 *s = p;
	u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

static int push(struct strset *ss, char *copy, u32 *id)
{
	if (array__reserve(&ss->v, &ss->cap, ss->nr + 1, sizeof(*ss->v)))
		return -ENOMEM;
	*id = (u32)ss->nr;
	ss->v[ss->nr++] = copy;
	return 0;
}

/*
 * The id of the @len-byte string @str (NUL-terminated or not), added on
 * first sight. Returns 0 or -ENOMEM.
 */
int strset__intern(struct strset *ss, const char *str, size_t len, u32 *id)
{
	u64 h, salt, idx;
	char *copy;
	int err;

	if (!ss->nr) {
		copy = strdup("");
		if (!copy || push(ss, copy, id)) {
			free(copy);
			return -ENOMEM;
		}
	}
	len = strnlen(str, len);
	if (!len) {
		*id = 0;
		return 0;
	}
	h = strset__hash(str, len);
	for (salt = 0; kvmap__get(&ss->idx, h, salt, &idx); salt++) {
		if (strlen(ss->v[idx]) == len && !memcmp(ss->v[idx], str, len)) {
			*id = (u32)idx;
			return 0;
		}
	}
	copy = strndup(str, len);
	if (!copy)
		return -ENOMEM;
	err = push(ss, copy, id);
	if (!err)
		err = kvmap__put(&ss->idx, h, salt, *id);
	if (err && ss->nr && ss->v[ss->nr - 1] == copy)
		ss->nr--;
	if (err)
		free(copy);
	return err;
}

/* The string with id @id, or "" for an id never handed out. */
const char *strset__str(const struct strset *ss, u32 id)
{
	return id < ss->nr ? ss->v[id] : "";
}

void strset__exit(struct strset *ss)
{
	size_t i;

	for (i = 0; i < ss->nr; i++)
		free(ss->v[i]);
	free(ss->v);
	kvmap__exit(&ss->idx);
	memset(ss, 0, sizeof(*ss));
}
