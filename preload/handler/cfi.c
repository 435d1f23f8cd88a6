/* SPDX-License-Identifier: MIT */
/*
 * cfi.c - unwind a copy of a user stack (a batched sample's snippet) with the
 * objects' .eh_frame call-frame information, x86-64 only.
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

#include "handler.h"

#if defined(__x86_64__)

enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };
enum { SAVED_SAME, SAVED_AT, SAVED_UNDEF, SAVED_OTHER };
enum { FRAME_CALL, FRAME_PLT, FRAME_SIGNAL };

/* A frame's rule, as the DW_CFA program leaves it at the pc. */
struct rule {
	uint8_t cfa_reg; /* DW_RSP or DW_RBP */
	uint8_t rbp_how, ra_how;
	uint8_t ok;
	int32_t cfa_off;
	int16_t rbp_off, ra_off;
	uint8_t frame;	/* FRAME_*; FRAME_SIGNAL: the registers are in the ucontext at rsp */
	uint8_t plt_ge; /* FRAME_PLT: the CFA is rsp + 8 + ((pc & 15) >= plt_ge) * 8 */
	uint16_t pad;
};

_Static_assert(sizeof(struct rule) == 16, "rule size");

struct cfi_entry {
	uint64_t pc; /* 0: empty */
	struct rule r;
};

/*
 * A thread's cache: the objects table's generation its rules were found
 * under (objects__generation()), then the entries. An object loaded or
 * unloaded since empties it: a pc's rule, or its lack of one, may have
 * changed with the code mapped there.
 */
struct cfi_cache {
	uint64_t gen;
	struct cfi_entry e[AP_CFI_ENTRIES];
};

_Static_assert(sizeof(struct cfi_cache) == AP_CFI_BYTES, "cache size");

/* A bounded reader over [p, end). */
struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0x80;

	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	}
	if (b & 0x80)
		c->bad = true;
	else if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* n bytes, little-endian, unsigned. */
static uint64_t fixed(struct cursor *c, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n);
	c->p += n;
	return v;
}

/*
 * A pointer in DW_EH_PE encoding enc (pcrel, datarel against data_base;
 * indirect and the other applications are refused). Async-signal-safe.
 */
static uint64_t encoded(struct cursor *c, uint8_t enc, uint64_t data_base)
{
	uint64_t here = (uint64_t)(uintptr_t)c->p, v;

	if (enc == 0xff) /* omit */
		return 0;
	switch (enc & 0x0f) {
	case 0x00:
		v = fixed(c, 8);
		break;
	case 0x01:
		v = uleb(c);
		break;
	case 0x02:
		v = fixed(c, 2);
		break;
	case 0x03:
		v = fixed(c, 4);
		break;
	case 0x04:
		v = fixed(c, 8);
		break;
	case 0x09:
		v = (uint64_t)sleb(c);
		break;
	case 0x0a:
		v = (uint64_t)(int64_t)(int16_t)fixed(c, 2);
		break;
	case 0x0b:
		v = (uint64_t)(int64_t)(int32_t)fixed(c, 4);
		break;
	case 0x0c:
		v = fixed(c, 8);
		break;
	default:
		c->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10:
		v += here;
		break;
	case 0x30:
		v += data_base;
		break;
	default:
		c->bad = true;
	}
	if (enc & 0x80)
		c->bad = true;
	return v;
}

/* Run DW_CFA instructions [c) while the location stays <= pc. */
struct cfa_state {
	struct rule r, init, stack[8];
	int depth;
	uint64_t loc, code_align;
	int64_t data_align;
};

static void set_saved(struct cfa_state *s, uint64_t reg, int how, int64_t off)
{
	if (off < INT16_MIN || off > INT16_MAX)
		how = SAVED_OTHER;
	if (reg == DW_RBP) {
		s->r.rbp_how = (uint8_t)how;
		s->r.rbp_off = (int16_t)off;
	} else if (reg == DW_RA) {
		s->r.ra_how = (uint8_t)how;
		s->r.ra_off = (int16_t)off;
	} else if (reg == DW_RSP && how != SAVED_SAME) {
		s->r.ok = 0; /* rsp other than the CFA: not followed */
	}
}

static void restore_reg(struct cfa_state *s, uint64_t reg)
{
	if (reg == DW_RBP) {
		s->r.rbp_how = s->init.rbp_how;
		s->r.rbp_off = s->init.rbp_off;
	} else if (reg == DW_RA) {
		s->r.ra_how = s->init.ra_how;
		s->r.ra_off = s->init.ra_off;
	}
}

/*
 * The CFA expression of a lazy-binding PLT entry, as GCC and binutils emit
 * it for .plt (16-byte entries whose push comes after byte 10 or 11):
 * DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit10 or 11;
 * DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus. Sets r's PLT rule and skips
 * the len bytes at c; false for any other expression.
 */
static bool plt_expression(struct cursor *c, int64_t len, struct rule *r)
{
	static const uint8_t head[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
	static const uint8_t tail[] = {0x2a, 0x33, 0x24, 0x22};
	const uint8_t *e = c->p;

	if (len != 11 || c->end - c->p < len || memcmp(e, head, sizeof(head)) ||
	    (e[6] != 0x3a && e[6] != 0x3b) || memcmp(e + 7, tail, sizeof(tail)))
		return false;
	r->frame = FRAME_PLT;
	r->plt_ge = (uint8_t)(e[6] - 0x30);
	r->cfa_reg = DW_RSP;
	r->cfa_off = 8;
	c->p += len;
	return true;
}

/* Returns false when the program stops being followable. */
static bool run_cfa(struct cfa_state *s, struct cursor *c, uint64_t pc)
{
	while (c->p < c->end && !c->bad && s->r.ok) {
		uint8_t op = *c->p++;
		uint64_t reg, delta = 0;
		int64_t off;

		switch (op & 0xc0) {
		case 0x40:
			delta = op & 0x3f;
			goto advance;
		case 0x80:
			set_saved(s, op & 0x3f, SAVED_AT, (int64_t)uleb(c) * s->data_align);
			continue;
		case 0xc0:
			restore_reg(s, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00:
			continue; /* nop */
		case 0x01:
			return false; /* set_loc: not in .eh_frame from GCC/clang */
		case 0x02:
			delta = fixed(c, 1);
			goto advance;
		case 0x03:
			delta = fixed(c, 2);
			goto advance;
		case 0x04:
			delta = fixed(c, 4);
			goto advance;
		case 0x05: /* offset_extended */
			reg = uleb(c);
			set_saved(s, reg, SAVED_AT, (int64_t)uleb(c) * s->data_align);
			continue;
		case 0x06:
			restore_reg(s, uleb(c));
			continue;
		case 0x07:
			set_saved(s, uleb(c), SAVED_UNDEF, 0);
			continue;
		case 0x08:
			set_saved(s, uleb(c), SAVED_SAME, 0);
			continue;
		case 0x09: /* register */
			reg = uleb(c);
			uleb(c);
			set_saved(s, reg, SAVED_OTHER, 0);
			continue;
		case 0x0a: /* remember_state */
			if (s->depth >= 8)
				return false;
			s->stack[s->depth++] = s->r;
			continue;
		case 0x0b: /* restore_state */
			if (s->depth <= 0)
				return false;
			s->r = s->stack[--s->depth];
			continue;
		case 0x0c: /* def_cfa */
			s->r.cfa_reg = (uint8_t)uleb(c);
			s->r.cfa_off = (int32_t)uleb(c);
			break;
		case 0x0d:
			s->r.cfa_reg = (uint8_t)uleb(c);
			break;
		case 0x0e:
			s->r.cfa_off = (int32_t)uleb(c);
			break;
		case 0x0f: /* def_cfa_expression: a PLT entry's, or not followed */
			off = (int64_t)uleb(c);
			if (!plt_expression(c, off, &s->r))
				return false;
			continue;
		case 0x11: /* offset_extended_sf */
			reg = uleb(c);
			set_saved(s, reg, SAVED_AT, sleb(c) * s->data_align);
			continue;
		case 0x12: /* def_cfa_sf */
			s->r.cfa_reg = (uint8_t)uleb(c);
			s->r.cfa_off = (int32_t)(sleb(c) * s->data_align);
			break;
		case 0x13:
			s->r.cfa_off = (int32_t)(sleb(c) * s->data_align);
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = uleb(c);
			op == 0x14 ? (void)uleb(c) : (void)sleb(c);
			set_saved(s, reg, SAVED_OTHER, 0);
			continue;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = uleb(c);
			off = (int64_t)uleb(c);
			if (off < 0 || off > c->end - c->p)
				return false;
			c->p += off;
			set_saved(s, reg, SAVED_OTHER, 0);
			continue;
		case 0x2e:
			uleb(c);
			continue; /* GNU_args_size */
		case 0x2f:	  /* GNU_negative_offset_extended */
			reg = uleb(c);
			set_saved(s, reg, SAVED_AT, -(int64_t)uleb(c) * s->data_align);
			continue;
		default:
			return false;
		}
		/* after a def_cfa*: the CFA must be rsp or rbp based */
		s->r.frame = FRAME_CALL;
		if (s->r.cfa_reg != DW_RSP && s->r.cfa_reg != DW_RBP)
			return false;
		continue;
	advance:
		s->loc += delta * s->code_align;
		if (s->loc > pc)
			return true;
	}
	return !c->bad && s->r.ok;
}

/*
 * The rule of a signal frame ('S' FDE over [start, start + range), in a
 * loaded object's text): the FDE must cover the x86-64 rt_sigreturn
 * trampoline, mov $15, %rax; syscall (glibc's __restore_rt), whose CFI
 * reads every register from the ucontext at rsp.
 * Async-signal-safe.
 */
static struct rule sigreturn_rule(uint64_t start, uint64_t range)
{
	static const uint8_t code[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
	struct rule r = {0};

	if (range < sizeof(code) || range > 64)
		return r;
	for (uint64_t at = start; at + sizeof(code) <= start + range; at++) {
		if (!memcmp((const void *)(uintptr_t)at, code, sizeof(code))) {
			r.ok = 1;
			r.frame = FRAME_SIGNAL;
			r.cfa_reg = DW_RSP;
			return r;
		}
	}
	return r;
}

/*
 * The rule at pc from the FDE at fde (in an object's .eh_frame), or ok = 0.
 * Async-signal-safe.
 */
static struct rule rule_from_fde(const uint8_t *fde, const uint8_t *eh_end, uint64_t pc)
{
	struct rule bad = {0};
	struct cfa_state s;
	struct cursor c = {fde, eh_end, false}, cie;
	uint32_t len = (uint32_t)fixed(&c, 4), cie_len, cie_ptr;
	const uint8_t *fde_end, *cie_start, *cie_end, *aug;
	uint8_t fde_enc = 0, version;
	bool has_z = false, signal = false;
	uint64_t start, range;

	if (c.bad || len == 0 || len == 0xffffffff || len > (size_t)(eh_end - c.p))
		return bad;
	fde_end = c.p + len;
	c.end = fde_end;
	cie_ptr = (uint32_t)fixed(&c, 4);
	if (c.bad || cie_ptr == 0)
		return bad;
	cie_start = c.p - 4 - cie_ptr;
	/* the CIE */
	cie.p = cie_start;
	cie.end = eh_end;
	cie.bad = false;
	cie_len = (uint32_t)fixed(&cie, 4);
	if (cie.bad || cie_len == 0 || cie_len == 0xffffffff || cie_len > (size_t)(eh_end - cie.p))
		return bad;
	cie_end = cie.p + cie_len;
	cie.end = cie_end;
	if (fixed(&cie, 4) != 0)
		return bad;
	version = (uint8_t)fixed(&cie, 1);
	aug = cie.p;
	while (cie.p < cie.end && *cie.p)
		cie.p++;
	if (cie.p >= cie.end)
		return bad;
	cie.p++;
	if (aug[0] == 'e' && aug[1] == 'h')
		return bad;
	memset(&s, 0, sizeof(s));
	s.code_align = uleb(&cie);
	s.data_align = sleb(&cie);
	if (version == 1)
		fixed(&cie, 1);
	else
		uleb(&cie);
	if (aug[0] == 'z') {
		uint64_t alen = uleb(&cie);
		const uint8_t *aend = cie.p + alen;

		has_z = true;
		if (alen > (size_t)(cie.end - cie.p))
			return bad;
		for (const uint8_t *a = aug + 1; *a && (cie.p < aend || *a == 'S'); a++) {
			if (*a == 'R') {
				fde_enc = (uint8_t)fixed(&cie, 1);
			} else if (*a == 'P') {
				uint8_t penc = (uint8_t)fixed(&cie, 1);

				encoded(&cie, penc & 0x7f, 0); /* the personality: skipped */
				cie.bad = false;
			} else if (*a == 'L') {
				fixed(&cie, 1);
			} else if (*a == 'S') {
				signal = true; /* a signal frame: see sigreturn_rule() */
			} else {
				break;
			}
		}
		cie.p = aend;
	} else if (aug[0]) {
		return bad;
	}
	if (cie.bad)
		return bad;
	/* the FDE's range */
	start = encoded(&c, fde_enc, 0);
	range = encoded(&c, fde_enc & 0x0f, 0);
	if (c.bad || pc < start || pc - start >= range)
		return bad;
	if (signal)
		return sigreturn_rule(start, range);
	if (has_z) {
		uint64_t alen = uleb(&c);

		if (alen > (size_t)(c.end - c.p))
			return bad;
		c.p += alen;
	}
	s.r.ok = 1;
	s.r.cfa_reg = DW_RSP;
	s.r.rbp_how = SAVED_SAME;
	s.r.ra_how = SAVED_UNDEF;
	s.loc = start;
	if (!run_cfa(&s, &cie, UINT64_MAX))
		return bad;
	s.init = s.r;
	s.depth = 0;
	if (!run_cfa(&s, &c, pc))
		return bad;
	if (s.r.cfa_reg != DW_RSP && s.r.cfa_reg != DW_RBP)
		return bad;
	if (s.r.ra_how != SAVED_AT && s.r.ra_how != SAVED_UNDEF)
		return bad;
	return s.r;
}

/*
 * The rule at pc: .eh_frame_hdr's table searched for the last FDE starting
 * at or before pc. Readers in flight (objects__enter). Async-signal-safe.
 */
static struct rule lookup(uint64_t pc)
{
	struct rule bad = {0};
	const uint8_t *hdr, *eh_end;
	struct cursor c;
	uint64_t count, eh_frame;
	const int32_t *table;
	size_t lo = 0, hi;

	if (!objects__eh_frame(pc, &hdr, &eh_end))
		return bad;
	c.p = hdr;
	c.end = eh_end > hdr ? eh_end : hdr + 64;
	c.bad = false;
	if (fixed(&c, 1) != 1)
		return bad;
	{
		uint8_t ptr_enc = (uint8_t)fixed(&c, 1), count_enc = (uint8_t)fixed(&c, 1),
			table_enc = (uint8_t)fixed(&c, 1);

		eh_frame = encoded(&c, ptr_enc, (uint64_t)(uintptr_t)hdr);
		count = encoded(&c, count_enc, (uint64_t)(uintptr_t)hdr);
		if (c.bad || table_enc != 0x3b || count == 0)
			return bad;
	}
	(void)eh_frame;
	table = (const int32_t *)c.p;
	hi = count;
	/* the last entry whose start is <= pc */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uint64_t)(uintptr_t)hdr + (uint64_t)(int64_t)table[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if ((uint64_t)(uintptr_t)hdr + (uint64_t)(int64_t)table[2 * lo] > pc)
		return bad;
	return rule_from_fde(hdr + table[2 * lo + 1], eh_end, pc);
}

/* The rule at pc, from the cache or found and cached. Async-signal-safe. */
static struct rule cached_rule(struct cfi_cache *cache, uint64_t pc)
{
	struct cfi_entry *e = &cache->e[(pc ^ (pc >> 11)) & (AP_CFI_ENTRIES - 1)];

	if (e->pc != pc) {
		e->r = lookup(pc);
		e->pc = pc;
	}
	return e->r;
}

/* Read the 8 bytes at addr from the copy of [sp, sp + size). */
static bool read_stack(const uint8_t *copy, uint64_t sp, uint64_t size, uint64_t addr,
		       uint64_t *out)
{
	if (addr < sp || addr - sp > size || size - (addr - sp) < 8)
		return false;
	memcpy(out, copy + (addr - sp), 8);
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
	if (cc->gen != gen) {
		memset(cc->e, 0, sizeof(cc->e));
		cc->gen = gen;
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

			if (!read_stack(copy, stack_lo, size, uc + UC_REG(REG_RBP), &ibp) ||
			    !read_stack(copy, stack_lo, size, uc + UC_REG(REG_RSP), &isp) ||
			    !read_stack(copy, stack_lo, size, uc + UC_REG(REG_RIP), &iip)) {
				w->ran_out = true;
				return n;
			}
			if (!w->signal_uc) {
				w->signal_uc = uc;
				w->signal_sp = isp;
				w->signal_at = n;
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
		if (!read_stack(copy, stack_lo, size, cfa + (uint64_t)(int64_t)r.ra_off, &ra)) {
			w->ran_out = cfa + (uint64_t)(int64_t)r.ra_off + 8 > stack_lo + size;
			return n;
		}
		if (r.rbp_how == SAVED_AT) {
			bp_known = read_stack(copy, stack_lo, size,
					      cfa + (uint64_t)(int64_t)r.rbp_off, &bp);
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
