/* SPDX-License-Identifier: MIT */
/*
 * unwind.c - walk the interrupted user stack with libunwind.
 *
 * libunwind reads DWARF CFI (.eh_frame), so programs built without frame
 * pointers unwind fully. Its traps in a signal handler (../shared/FACTS.md,
 * section 5) and what we do about them:
 *  - the first init takes a mutex: unwind__init() and unwind__prime_thread()
 *    run it outside any handler;
 *  - FDE lookup calls dl_iterate_phdr(), which walks the loader's list: we do
 *    not unwind when the thread was interrupted inside the dynamic loader
 *    (dlopen/dlclose in progress) or inside libunwind itself, and keep the ip;
 *  - names are never resolved here (unw_get_proc_name may malloc).
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/ucontext.h>

#include "internal.h"

/* Text ranges where the interrupted code must not be unwound from. */
/* The code of the loader, libunwind and this library: where the profiler is "inside". */
enum text_kind { TEXT_LOADER, TEXT_UNWINDER, TEXT_SELF };
static struct {
	uintptr_t lo, hi;
	enum text_kind kind;
} unsafe_text[8];
static int nr_unsafe;

static int note_unsafe(struct dl_phdr_info *info, size_t size, void *self_base)
{
	const char *name = info->dlpi_name;
	enum text_kind kind;
	(void)size;

	if (info->dlpi_addr == (uintptr_t)self_base)
		kind = TEXT_SELF;
	else if (name && strstr(name, "/ld-linux"))
		kind = TEXT_LOADER;
	else if (name && strstr(name, "libunwind"))
		kind = TEXT_UNWINDER;
	else
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nr_unsafe < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			unsafe_text[nr_unsafe].lo = info->dlpi_addr + ph->p_vaddr;
			unsafe_text[nr_unsafe].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			unsafe_text[nr_unsafe].kind = kind;
			nr_unsafe++;
		}
	}
	return 0;
}

/* One-time set-up, outside any handler. Returns 0. Not async-signal-safe. */
int unwind__init(void)
{
	Dl_info self;

	nr_unsafe = 0;
	if (!dladdr((void *)unwind__init, &self))
		self.dli_fbase = NULL;
	dl_iterate_phdr(note_unsafe, self.dli_fbase);
	unwind__prime_thread();
	return 0;
}

/*
 * Run one unwind on the calling thread so that libunwind's lazy, locking
 * initialisation is done before the first signal. Not async-signal-safe.
 */
void unwind__prime_thread(void)
{
	unw_context_t ctx;
	unw_cursor_t cursor;

	if (unw_getcontext(&ctx) || unw_init_local(&cursor, &ctx))
		return;
	unw_step(&cursor);
}

static uintptr_t ucontext_pc(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
#error "autoprof: add this architecture's program counter to ucontext_pc()"
#endif
}

static bool pc_is_unsafe(uintptr_t pc)
{
	for (int i = 0; i < nr_unsafe; i++)
		if (unsafe_text[i].kind != TEXT_SELF && pc >= unsafe_text[i].lo &&
		    pc < unsafe_text[i].hi)
			return true;
	return false;
}

/* Is pc in libunwind's code or in this library's? Async-signal-safe. */
bool unwind__is_profiler_pc(uintptr_t pc)
{
	for (int i = 0; i < nr_unsafe; i++)
		if (unsafe_text[i].kind != TEXT_LOADER && pc >= unsafe_text[i].lo &&
		    pc < unsafe_text[i].hi)
			return true;
	return false;
}

/* The interrupted pc of a signal context. Async-signal-safe. */
uint64_t unwind__pc(void *ucontext)
{
	return ucontext_pc(ucontext);
}

/* Is pc in libunwind's own code? Async-signal-safe. */
bool unwind__owns_pc(uintptr_t pc)
{
	for (int i = 0; i < nr_unsafe; i++)
		if (unsafe_text[i].kind == TEXT_UNWINDER && pc >= unsafe_text[i].lo &&
		    pc < unsafe_text[i].hi)
			return true;
	return false;
}

/*
 * Store the interrupted pc and then the return addresses of its callers,
 * innermost first, from the signal handler's ucontext. Returns how many were
 * stored (at least 1), or 0 when this context must not be unwound.
 * Async-signal-safe under the conditions in the file comment.
 */
int unwind__stack(void *ucontext, uint64_t *ips, int max)
{
	ucontext_t *uc = ucontext;
	uintptr_t pc = ucontext_pc(uc);
	unw_cursor_t cursor;
	int n = 0;

	if (max <= 0 || pc_is_unsafe(pc))
		return 0;
	if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	do {
		unw_word_t ip;

		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		ips[n++] = ip;
	} while (n < max && unw_step(&cursor) > 0);
	return n;
}
