// SPDX-License-Identifier: MIT
/*
 * array.c - the one growable-array helper of autoprof-report.
 */
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Make the array at *(void **)@pv, of *@cap elements of @elem bytes, hold at
 * least @need elements: doubles the capacity (16 at least), never shrinks.
 * Returns 0, or -ENOMEM (overflow or no memory) with the array untouched.
 */
int array__reserve(void *pv, size_t *cap, size_t need, size_t elem)
{
	void **v = pv;
	size_t ncap = *cap ? *cap : 16;
	void *nv;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	nv = realloc(*v, ncap * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}
