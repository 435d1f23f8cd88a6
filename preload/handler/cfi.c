/* SPDX-License-Identifier: MIT */
/*
 * cfi.c - unwind a copy of a user stack (a batched sample's snippet) with the
 * objects' .eh_frame call-frame information, x86-64 only; the rules are read
 * by eh_frame.c and kept here in a per-thread cache.
 *
 * A batched sample (AUTOPROF_BATCH) carries the registers ip, sp, bp and the
 * first bytes of the stack above sp, copied by the kernel when the sample was
 * taken; by the time the handler reads it the stack has moved on, so
 * libunwind's local unwinder (which reads live memory) cannot be used. This
 * one reads the stack only from the copy, and the unwind tables from the
 * loaded objects (found by objects__eh_frame(), readers in flight):
 *  - each frame's rule is the CFA (rsp or rbp + offset), where the return
 *    address and the caller's rbp are saved (CFA-relative), found through
 *    .eh_frame_hdr's binary-search table and the FDE's and CIE's DW_CFA
 *    programs run up to the pc;
 *  - rules are kept in a per-thread direct-mapped cache keyed by pc (the hot
 *    frames of a program are a few dozen pcs), failures too, so a warm
 *    sample costs a few loads per frame;
 *  - two kinds of frame whose CFA is a DWARF expression are recognised: a
 *    PLT entry (the CFA is rsp + 8, or + 16 past the entry's push; the
 *    expression GCC and binutils emit for .plt) and a signal frame (a 'S'
 *    FDE over the rt_sigreturn trampoline: the interrupted registers are in
 *    the ucontext at rsp), so a walk goes on through PLT stubs and through
 *    signal handlers, the program's and ours, into the interrupted code;
 *  - other rules (any other expression) end the walk there, and the sample
 *    is counted as cut short, as is a walk that leaves the copy.
 * Everything here is async-signal-safe: no allocation, no locks.
 */
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#include "eh_frame.h"

#if defined(__x86_64__)

struct cfi_entry {
	uint64_t pc; /* 0: empty */
	struct rule r;
};

/*
 * A thread's cache: the objects table's generation its rules were found
 * under (objects__generation()) plus 1, 0 while the cache is as mapped
 * (all zero, never filled), then the entries. An object loaded or
 * unloaded since empties it: a pc's rule, or its lack of one, may have
 * changed with the code mapped there. A cache never filled is not
 * emptied (it is zero as mapped): its first walk does not write 24 KB.
 */
struct cfi_cache {
	uint64_t gen;
	struct cfi_entry e[AP_CFI_ENTRIES];
};

_Static_assert(sizeof(struct cfi_cache) == AP_CFI_BYTES, "cache size");

/* The rule at pc, from the cache or found and cached. Async-signal-safe. */
static struct rule cached_rule(struct cfi_cache *cache, uint64_t pc)
{
	struct cfi_entry *e = &cache->e[(pc ^ (pc >> 11)) & (AP_CFI_ENTRIES - 1)];

	if (e->pc != pc) {
		e->r = eh_frame__rule(pc);
		e->pc = pc;
	}
	return e->r;
}

/*
 * Read the 8 bytes at addr from the copy of [sp, sp + size); *reach becomes
 * at least the bytes of the copy up to them (what a copy must hold for the
 * walk, adaptive copies: on_signal.c).
 */
static bool read_stack(const uint8_t *copy, uint64_t sp, uint64_t size, uint64_t addr,
		       uint64_t *out, uint64_t *reach)
{
	if (addr < sp || addr - sp > size || size - (addr - sp) < 8)
		return false;
	memcpy(out, copy + (addr - sp), 8);
	if (addr - sp + 8 > *reach)
		*reach = addr - sp + 8;
	return true;
}

/* Where the interrupted registers are in a signal frame's ucontext. */
#define UC_REG(r) (offsetof(ucontext_t, uc_mcontext.gregs) + (r) * sizeof(greg_t))

/*
 * Unwind from ip/sp/bp over the stack copy (size bytes from sp) into ips,
 * innermost first; cache is the thread's rule cache (AP_CFI_BYTES, zeroed
 * once; emptied here when an object came or went since it was filled).
 * Returns the frames stored (at least 1) and fills *w: complete when the
 * walk ended at the outermost frame (a return address marked undefined),
 * not at the copy's end (ran_out) or an unfollowed rule; the first signal
 * frame crossed. Readers in flight (objects__enter). Async-signal-safe.
 */
int cfi__unwind(void *cache, uint64_t ip, uint64_t sp, uint64_t bp, const void *copy, uint64_t size,
		uint64_t *ips, int max, struct cfi_walk *w)
{
	uint64_t stack_lo = sp, pc = ip, cfa, gen = objects__generation();
	bool bp_known = true, exact = true; /* pc is where the code was stopped */
	struct cfi_cache *cc = cache;
	int n = 0;

	memset(w, 0, sizeof(*w));
	if (cc->gen != gen + 1) {
		if (cc->gen)
			memset(cc->e, 0, sizeof(cc->e));
		cc->gen = gen + 1;
	}
	while (n < max) {
		struct rule r;
		uint64_t ra, base;

		ips[n++] = pc;
		r = cached_rule(cc, exact ? pc : pc - 1);
		exact = false;
		if (!r.ok)
			return n;
		if (r.frame == FRAME_SIGNAL) {
			uint64_t uc = sp, isp, iip, ibp;

			if (!read_stack(copy, stack_lo, size, uc + UC_REG(REG_RBP), &ibp,
					&w->reach) ||
			    !read_stack(copy, stack_lo, size, uc + UC_REG(REG_RSP), &isp,
					&w->reach) ||
			    !read_stack(copy, stack_lo, size, uc + UC_REG(REG_RIP), &iip,
					&w->reach)) {
				w->ran_out = true;
				w->need = uc + UC_REG(REG_RIP) + 8 - stack_lo;
				return n;
			}
			if (!w->signal_uc) {
				w->signal_uc = uc;
				w->signal_sp = isp;
				w->signal_at = n;
				w->signal_reach = w->reach;
			}
			sp = isp, bp = ibp, pc = iip;
			bp_known = exact = true;
			continue;
		}
		if (r.cfa_reg == DW_RBP && !bp_known)
			return n;
		base = r.cfa_reg == DW_RSP ? sp : bp;
		cfa = base + (uint64_t)(int64_t)r.cfa_off;
		if (r.frame == FRAME_PLT && (pc & 15) >= r.plt_ge)
			cfa += 8;
		if (r.ra_how == SAVED_UNDEF) {
			w->complete = true;
			return n;
		}
		if (!read_stack(copy, stack_lo, size, cfa + (uint64_t)(int64_t)r.ra_off, &ra,
				&w->reach)) {
			w->need = cfa + (uint64_t)(int64_t)r.ra_off + 8 - stack_lo;
			w->ran_out = w->need > size;
			return n;
		}
		if (r.rbp_how == SAVED_AT) {
			bp_known = read_stack(copy, stack_lo, size,
					      cfa + (uint64_t)(int64_t)r.rbp_off, &bp, &w->reach);
		} else if (r.rbp_how != SAVED_SAME) {
			bp_known = false;
		}
		if (cfa <= sp || ra < 4096)
			return n; /* the stack must grow towards the caller */
		sp = cfa;
		pc = ra;
	}
	w->complete = true; /* as deep as asked */
	return n;
}

#else

int cfi__unwind(void *cache, uint64_t ip, uint64_t sp, uint64_t bp, const void *copy, uint64_t size,
		uint64_t *ips, int max, struct cfi_walk *w)
{
	(void)cache, (void)sp, (void)bp, (void)copy, (void)size;
	memset(w, 0, sizeof(*w));
	if (max <= 0)
		return 0;
	ips[0] = ip;
	return 1;
}

#endif
