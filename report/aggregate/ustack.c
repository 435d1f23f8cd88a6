// SPDX-License-Identifier: MIT
/*
 * ustack.c - the user frames of a --call-graph dwarf sample: its registers
 * and stack dump unwound (model/unwind_dwarf.c) and appended, resolved, to
 * the frames resolver__sample() made from the ip and the kernel callchain, so
 * the stack goes to the same trie as a frame-pointer callchain.
 */
#include "aggregate/aggregate.h"

#include <errno.h>

/*
 * Extend @frames[0..*nr) of sample @s of file @pf (from resolver__sample())
 * with its dwarf-unwound user callers, resolved by @r. Samples without a
 * register and stack dump are left as they are. For a user-mode sample the
 * unwound pc is the ip already there and is skipped; for a kernel-mode one
 * the whole user stack follows the kernel frames. Returns 0 or -ENOMEM.
 */
int ustack__unwind(struct resolver *r, struct unwinder *uw, struct machine *m,
		   const struct perf_file *pf, const struct sample *s, u32 *frames, u32 *nr)
{
	struct user_stack us;
	const u64 *addrs;
	u32 n, skip = 0;
	int err;

	if (!uw || *nr >= MAX_FRAMES || !s->has_tid || sample__user_stack(pf, s, &us))
		return 0;
	err = unwind_dwarf__user(uw, resolver__proc(r, m, s), s, &us, m->dsos.no_load, &addrs,
				 MAX_FRAMES - *nr + 1, &n);
	if (err || !n)
		return err;
	if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER && addrs[0] == s->ip)
		skip = 1;
	return resolver__user(r, m, s, addrs + skip, n - skip, frames, nr);
}
