// SPDX-License-Identifier: MIT
/*
 * unwind_dwarf.c - the user stack of a `perf record --call-graph dwarf`
 * sample, unwound by libdw from the dumped registers and stack bytes.
 *
 * One Dwfl per process image (pid and exec epoch), kept for the whole
 * session: its modules are the process's mapped object files, reported the
 * first time a frame's pc falls in them (as perf's unwind-libdw.c does), so
 * each ELF and its CFI are opened once per process, not once per sample.
 * The Dwfl's thread callbacks read memory from the current sample's stack
 * dump and registers from its REGS_USER block, mapped to DWARF numbers.
 */
#include "autoprof/env.h"
#include "model/model.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>

#define RCACHE_SIZE 1024

/* One process image and its Dwfl. */
struct uw_proc {
	struct unwinder *uw;
	Dwfl *dwfl;
	struct kvmap reported; /* dso id -> 1: already reported to dwfl */
	struct kvmap rules;    /* lookup pc -> struct rule, see fast_unwind() */
	bool attached, broken;
	u32 nr_reported; /* modules reported so far, see unwind_dwarf__user() */
	struct {
		u64 pc, rule;
	} rcache[RCACHE_SIZE]; /* direct-mapped in front of rules; pc 0: empty */
};

/*
 * How to find the caller of a frame at one pc, when the CFI says it simply
 * (x86-64): CFA = rsp or rbp + cfa_off, the return address at CFA + ra_off,
 * rbp unchanged or at CFA + rbp_off; the caller's rsp is the CFA.
 */
/* libdw needed; a rule; no caller; no FDE: no caller if rbp is 0, else libdw (see compute_rule) */
enum { RULE_SLOW, RULE_OK, RULE_END, RULE_NOFDE };
enum { RBP_SAME, RBP_AT, RBP_UNDEF }; /* where the caller's rbp is */
#define RULE(kind, cfa_rbp, rbp, cfa_off, ra_off, rbp_off)                                         \
	((u64)(kind) | (u64)(cfa_rbp) << 2 | (u64)(rbp) << 3 | (u64)(u16)(cfa_off) << 16 |         \
	 (u64)(u16)(ra_off) << 32 | (u64)(u16)(rbp_off) << 48)

/* The sample being unwound: what the callbacks read. */
struct uw_cur {
	const struct user_stack *us;
	struct proc *p;
	u64 time, sp;
	u32 epoch;
	u64 *out;
	u32 max, n;
	bool no_load;
};

struct unwinder {
	struct kvmap idx; /* (pid, epoch) -> index into v */
	struct uw_proc **v;
	size_t nr, cap;
	struct uw_cur cur;
	u64 nr_failed; /* samples whose unwinding stopped at the first frame */
	bool no_cache; /* AUTOPROF_REPORT_NO_CFI_CACHE set: libdw for every sample */
	u64 out[MAX_FRAMES];
};

#if defined(__x86_64__)
/* DWARF register i (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip) is perf register map[i].
 */
static const int regmap[] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
#define PERF_REG_SP 7
#define PERF_REG_PC 8
#define PC_IN_REGS  1 /* rip is DWARF register 16, set with the others */
#elif defined(__aarch64__)
/* x0-x30 and sp are DWARF 0-31 and perf 0-31; pc is perf 32. */
static const int regmap[] = {0,	 1,  2,	 3,  4,	 5,  6,	 7,  8,	 9,  10, 11, 12, 13, 14, 15,
			     16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
#define PERF_REG_SP 31
#define PERF_REG_PC 32
#define PC_IN_REGS  0
#else
#define NO_UNWIND 1
#endif

/* Perf register @r of @us into *val; false when the sample did not dump it. */
static bool perf_reg(const struct user_stack *us, int r, u64 *val)
{
	u64 bit = 1ULL << r;

	if (!(us->mask & bit))
		return false;
	*val = ld64(us->regs + 8 * __builtin_popcountll(us->mask & (bit - 1)));
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	(void)thread_argp;
	return 0; /* threads are only asked for by tid */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* A word of the current sample's stack dump; false outside it. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw_cur *c = &((struct uw_proc *)arg)->uw->cur;

	(void)dwfl;
	if (addr < c->sp || addr - c->sp > c->us->size || c->us->size - (addr - c->sp) < 8)
		return false;
	*result = ld64(c->us->stack + (addr - c->sp));
	return true;
}

/* The registers of the current sample, in DWARF numbering. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
#ifdef NO_UNWIND
	(void)thread;
	(void)arg;
	return false;
#else
	struct uw_cur *c = &((struct uw_proc *)arg)->uw->cur;
	Dwarf_Word regs[ARRAY_SIZE(regmap)];
	size_t i;
	u64 v;

	for (i = 0; i < ARRAY_SIZE(regmap); i++)
		regs[i] = perf_reg(c->us, regmap[i], &v) ? v : 0;
	if (!dwfl_thread_state_registers(thread, 0, ARRAY_SIZE(regmap), regs))
		return false;
	if (!PC_IN_REGS && perf_reg(c->us, PERF_REG_PC, &v))
		dwfl_thread_state_register_pc(thread, v);
	return true;
#endif
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static char *debuginfo_path;

/*
 * No separate debug info file for the unwinder: the call frame information
 * it needs is the object file's own (.eh_frame, or .debug_frame in the file
 * itself). libdw would otherwise load and decompress a whole debug file
 * (50 ms for libc's) to look for .debug_frame at a pc without an FDE, such
 * as clone3's first instruction in a new thread, and then unwind no better.
 */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	(void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = no_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

/*
 * Report to @up's Dwfl the object file mapped at @pc in the current sample's
 * process, the first time it is seen. Quietly does nothing for addresses in
 * no file (anonymous memory, [vdso]) or files that cannot be opened.
 */
static void report_pc(struct uw_proc *up, u64 pc)
{
	struct uw_cur *c = &up->uw->cur;
	const struct map *mp = machine__proc_find_map(c->p, pc, c->time, c->epoch);
	struct dso *dso;
	u64 v;

	if (!mp || !(dso = mp->dso) || dso->special)
		return;
	if (kvmap__get(&up->reported, dso->id, 0, &v))
		return;
	if (kvmap__put(&up->reported, dso->id, 0, 1))
		return;
	dso__load(dso, c->no_load);
	if (dso->missing || dso__vaddr(dso, mp->pgoff, &v))
		return;
	dwfl_report_begin_add(up->dwfl);
	dwfl_report_elf(up->dwfl, dso->short_name, dso->path, -1, mp->start - v, false);
	dwfl_report_end(up->dwfl, NULL, NULL);
	up->nr_reported++;
}

#if defined(__x86_64__)
#include <dwarf.h>

/* Offset N of a register rule "at CFA + N" in @ops/@nops, false for any other rule. */
static bool at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

static bool fits16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* The rule for lookup address @pc in @up's process, from its module's .eh_frame (see RULE). */
static u64 compute_rule(struct uw_proc *up, u64 pc)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Frame *frame = NULL;
	Dwfl_Module *mod;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias, start, end;
	size_t nops;
	int64_t cfa_off, ra_off, rbp_off = 0;
	bool signal, cfa_rbp;
	int ra_reg, rbp = RBP_SAME;
	u64 rule = RULE_SLOW;

	report_pc(up, pc);
	mod = dwfl_addrmodule(up->dwfl, pc);
	if (!mod)
		return RULE_SLOW; /* no file there ([vdso], JIT code): libdw tries frame pointers */
	cfi = dwfl_module_eh_cfi(mod, &bias);
	/*
	 * Code without an FDE in .eh_frame: libdw looks in the file's own
	 * .debug_frame and then follows the frame pointer. Where rbp is 0
	 * (_start, clone3's child side: the outermost frames) that fails, and
	 * the stack ends there (as tests/report-dwarf-cache.t checks against
	 * libdw); elsewhere (crtstuff's __do_global_dtors_aux) libdw is asked.
	 */
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
		return RULE_NOFDE;
	ra_reg = dwarf_frame_info(frame, &start, &end, &signal);
	if (ra_reg != 16 || signal || dwarf_frame_cfa(frame, &ops, &nops) || nops != 1 ||
	    ops[0].atom != DW_OP_bregx || (ops[0].number != 7 && ops[0].number != 6))
		goto out;
	cfa_rbp = ops[0].number == 6;
	cfa_off = (int64_t)ops[0].number2;
	if (dwarf_frame_register(frame, ra_reg, mem, &ops, &nops))
		goto out;
	if (nops == 0 && ops == mem) {
		rule = RULE_END; /* the return address is undefined: the outermost frame */
		goto out;
	}
	if (!at_cfa(ops, nops, &ra_off))
		goto out;
	if (dwarf_frame_register(frame, 6, mem, &ops, &nops))
		goto out;
	if (nops == 0)
		rbp = ops ? RBP_UNDEF : RBP_SAME;
	else if (at_cfa(ops, nops, &rbp_off))
		rbp = RBP_AT;
	else
		goto out;
	if (fits16(cfa_off) && fits16(ra_off) && fits16(rbp_off))
		rule = RULE(RULE_OK, cfa_rbp, rbp, cfa_off, ra_off, rbp_off);
out:
	free(frame);
	return rule;
}

/*
 * Unwind the current sample with the cached simple rules: true when done
 * (c->out filled), false when some frame needs libdw's general unwinder
 * (c->n is then reset). Frames end where libdw's would: an undefined return
 * address, a pc in no file, or a read outside the stack dump.
 */
static bool fast_unwind(struct uw_proc *up)
{
	struct uw_cur *c = &up->uw->cur;
	u64 rsp = c->sp, rbp, pc, rule, cfa, v, slot;
	bool rbp_ok, first = true;

	if (!perf_reg(c->us, 8, &pc) || !perf_reg(c->us, 6, &rbp))
		return false;
	rbp_ok = true;
	c->n = 0;
	for (;;) {
		u64 look = first ? pc : pc - 1;

		c->out[c->n++] = look;
		if (c->n == c->max)
			return true;
		slot = (look * 0x9e3779b97f4a7c15ULL) >> 54;
		if (up->rcache[slot].pc == look) {
			rule = up->rcache[slot].rule;
		} else {
			if (!kvmap__get(&up->rules, look, 0, &rule)) {
				rule = compute_rule(up, look);
				if (kvmap__put(&up->rules, look, 0, rule))
					return false;
			}
			up->rcache[slot].pc = look;
			up->rcache[slot].rule = rule;
		}
		if ((rule & 3) == RULE_END || ((rule & 3) == RULE_NOFDE && rbp_ok && rbp == 0))
			return true;
		if ((rule & 3) == RULE_NOFDE) {
			c->n = 0;
			return false;
		}
		if ((rule & 3) == RULE_SLOW || ((rule >> 2 & 1) && !rbp_ok)) {
			c->n = 0;
			return false;
		}
		cfa = ((rule >> 2 & 1) ? rbp : rsp) + (u64)(int64_t)(int16_t)(rule >> 16);
		v = cfa + (u64)(int64_t)(int16_t)(rule >> 32);
		if (v < c->sp || v - c->sp > c->us->size || c->us->size - (v - c->sp) < 8)
			return true;
		pc = ld64(c->us->stack + (v - c->sp));
		switch (rule >> 3 & 3) {
		case RBP_AT:
			v = cfa + (u64)(int64_t)(int16_t)(rule >> 48);
			rbp_ok = v >= c->sp && v - c->sp <= c->us->size &&
				 c->us->size - (v - c->sp) >= 8;
			if (rbp_ok)
				rbp = ld64(c->us->stack + (v - c->sp));
			break;
		case RBP_UNDEF:
			rbp_ok = false;
			break;
		}
		rsp = cfa;
		if (pc == 0)
			return true;
		first = false;
	}
}
#else
static bool fast_unwind(struct uw_proc *up)
{
	(void)up;
	return false;
}
#endif

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct uw_proc *up = arg;
	struct uw_cur *c = &up->uw->cur;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	if (!activation)
		pc--; /* a return address: look up the call */
	c->out[c->n++] = pc;
	if (c->n == c->max)
		return DWARF_CB_ABORT;
	report_pc(up, pc);
	return DWARF_CB_OK;
}

/* The Dwfl of process @pid in exec epoch @epoch, made on first use; NULL on failure. */
static struct uw_proc *findnew_proc(struct unwinder *uw, u32 pid, u32 epoch)
{
	struct uw_proc *up;
	u64 idx;

	if (kvmap__get(&uw->idx, pid, epoch, &idx))
		return uw->v[idx];
	if (array__reserve(&uw->v, &uw->cap, uw->nr + 1, sizeof(*uw->v)))
		return NULL;
	up = calloc(1, sizeof(*up));
	if (!up)
		return NULL;
	up->uw = uw;
	up->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!up->dwfl || kvmap__put(&uw->idx, pid, epoch, uw->nr)) {
		if (up->dwfl)
			dwfl_end(up->dwfl);
		free(up);
		return NULL;
	}
	uw->v[uw->nr++] = up;
	return up;
}

/*
 * A new unwinder. AUTOPROF_REPORT_NO_CFI_CACHE=1 in the environment turns
 * off the cached rules (fast_unwind()): every sample goes through libdw, for
 * tests that compare the two.
 */
struct unwinder *unwind_dwarf__new(void)
{
	struct unwinder *uw = calloc(1, sizeof(struct unwinder));
	const char *env = ap_env(AP_ENV_REPORT_NO_CFI_CACHE);

	if (uw)
		uw->no_cache = env && *env && strcmp(env, "0") != 0;
	return uw;
}

/*
 * Unwind the user stack of sample @s of process @p (registers and stack in
 * @us) into *out, owned by @uw until the next call: at most @max code
 * addresses, the interrupted pc first, then each caller's call address
 * (return address - 1). *nr is how many (0 when nothing could be unwound).
 * Returns 0, or -ENOMEM.
 */
int unwind_dwarf__user(struct unwinder *uw, struct proc *p, const struct sample *s,
		       const struct user_stack *us, bool no_load, const u64 **out, u32 max, u32 *nr)
{
	struct uw_cur *c = &uw->cur;
	struct uw_proc *up;
	u64 ip;

	*nr = 0;
	*out = uw->out;
	if (max > MAX_FRAMES)
		max = MAX_FRAMES;
#ifdef NO_UNWIND
	return 0;
#endif
	if (!p || !max || !perf_reg(us, PERF_REG_SP, &c->sp) || !perf_reg(us, PERF_REG_PC, &ip))
		return 0;
	*c = (struct uw_cur){.us = us,
			     .p = p,
			     .time = s->time,
			     .sp = c->sp,
			     .epoch = machine__proc_epoch(p, s->time),
			     .out = uw->out,
			     .max = max,
			     .no_load = no_load};
	up = findnew_proc(uw, p->pid, c->epoch);
	if (!up)
		return -ENOMEM;
	if (up->broken)
		return 0;
	if (!up->attached) {
		report_pc(up, ip);
		/* The architecture comes from the first module's ELF. */
		if (!dwfl_attach_state(up->dwfl, NULL, (pid_t)p->pid, &thread_callbacks, up)) {
			if (!up->reported.nr) /* retry once a module is known */
				return 0;
			up->broken = true;
			return 0;
		}
		up->attached = true;
	}
	if (uw->no_cache || !fast_unwind(up)) {
		/*
		 * A module reported while libdw walks (frame_cb()) may not serve
		 * that walk: libdw then goes on by frame pointers, a path it would
		 * not take once the module is known. Walk again until no new
		 * module came, so the result never depends on which samples
		 * came first (nor on what the cached rules reported).
		 */
		u32 seen, tries = 0;

		do {
			seen = up->nr_reported;
			c->n = 0;
			dwfl_getthread_frames(up->dwfl, (pid_t)(s->tid ? s->tid : p->pid), frame_cb,
					      up);
		} while (up->nr_reported != seen && ++tries < 8);
	}
	if (c->n <= 1)
		uw->nr_failed++;
	*nr = c->n;
	return 0;
}

/* Samples whose user stack went no further than the interrupted pc. */
u64 unwind_dwarf__failed(const struct unwinder *uw)
{
	return uw ? uw->nr_failed : 0;
}

void unwind_dwarf__free(struct unwinder *uw)
{
	size_t i;

	if (!uw)
		return;
	for (i = 0; i < uw->nr; i++) {
		dwfl_end(uw->v[i]->dwfl);
		kvmap__exit(&uw->v[i]->reported);
		kvmap__exit(&uw->v[i]->rules);
		free(uw->v[i]);
	}
	free(uw->v);
	kvmap__exit(&uw->idx);
	free(uw);
}
