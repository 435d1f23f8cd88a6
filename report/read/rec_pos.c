// SPDX-License-Identifier: MIT
/*
 * rec_pos.c - the order of record positions: time, then file, then offset.
 */
#include "read/read.h"

int rec_pos__cmp(const void *pa, const void *pb)
{
	const struct rec_pos *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}
