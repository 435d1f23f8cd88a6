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
 *  - names are never resolved here (unw_get_proc_name may malloc);
 *  - the walk is unw_backtrace(), libunwind's fast tracer: it caches each
 *    ip's frame layout (CFA = rsp or rbp + offset) in a per-thread table, so
 *    a warm sample costs a few loads per frame instead of a DWARF step. It
 *    starts in the handler and crosses the signal frame; we keep what
 *    follows the interrupted pc. The table is made by unwind__prime_thread(),
 *    outside any handler. When the trace does not reach the signal frame,
 *    an unw_init_local2(UNW_INIT_SIGNAL_FRAME) + unw_step() walk does it;
 *  - libunwind blocks every signal with sigprocmask around its cache lock,
 *    twice per frame: in our handler, whose sa_mask already blocks them all,
 *    those calls are redundant, and the signals.c wrappers skip them while
 *    unwind__in_handler() says so (12 system calls per 6-frame sample).
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <string.h>
#include <sys/ucontext.h>

#include "internal.h"

/*
 * The code of the loader, libunwind and this library: where a sample must
 * not be unwound from (loader, libunwind), and where a call comes from the
 * profiler itself (libunwind, this library).
 */
enum text_kind { TEXT_LOADER = 1, TEXT_UNWINDER = 2, TEXT_SELF = 4 };
static struct {
	uintptr_t lo, hi;
	enum text_kind kind;
} profiler_text[8];
static int nr_profiler_text;

/* Set while this thread unwinds inside the sampling handler. */
static AP_TLS bool unwinding_in_handler;

/*
 * What unw_backtrace() stores for a caller: its return address (bias 0, as
 * perf's chains have it) or one less (bias 1, added back); fast_trace is
 * false when a probe at start-up made sense of neither.
 */
static bool fast_trace;
static uintptr_t trace_bias;

/* Learn trace_bias from one unw_backtrace() whose answer is known. Not async-signal-safe. */
static __attribute__((noinline)) void probe_fast_trace(void)
{
	void *trace[4];
	int n = unw_backtrace(trace, 4);
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);

	/* trace[0] is in this function, trace[1] is its caller. */
	fast_trace = n >= 2 && ((uintptr_t)trace[1] == ret || (uintptr_t)trace[1] == ret - 1);
	trace_bias = fast_trace ? ret - (uintptr_t)trace[1] : 0;
	__asm__ volatile("" ::: "memory"); /* not a tail call: the caller's frame must stay */
}

static int note_profiler_text(struct dl_phdr_info *info, size_t size, void *self_base)
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
	for (int i = 0; i < info->dlpi_phnum && nr_profiler_text < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			profiler_text[nr_profiler_text].lo = info->dlpi_addr + ph->p_vaddr;
			profiler_text[nr_profiler_text].hi =
			    info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			profiler_text[nr_profiler_text].kind = kind;
			nr_profiler_text++;
		}
	}
	return 0;
}

/* One-time set-up, outside any handler. Returns 0. Not async-signal-safe. */
int unwind__init(void)
{
	Dl_info self;

	nr_profiler_text = 0;
	if (!dladdr((void *)unwind__init, &self))
		self.dli_fbase = NULL;
	dl_iterate_phdr(note_profiler_text, self.dli_fbase);
	probe_fast_trace();
	unwind__prime_thread();
	return 0;
}

/*
 * Run one unwind on the calling thread so that libunwind's lazy, locking
 * initialisation (and this thread's trace table) is done before the first
 * signal. Not async-signal-safe.
 */
void unwind__prime_thread(void)
{
	unw_context_t ctx;
	unw_cursor_t cursor;
	void *trace[2];

	if (fast_trace)
		unw_backtrace(trace, 2);
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

/* Is pc in the code of one of the kinds (a mask of enum text_kind)? Async-signal-safe. */
static bool pc_in(uintptr_t pc, unsigned kinds)
{
	for (int i = 0; i < nr_profiler_text; i++)
		if ((profiler_text[i].kind & kinds) && pc >= profiler_text[i].lo &&
		    pc < profiler_text[i].hi)
			return true;
	return false;
}

/* Is pc in libunwind's code or in this library's? Async-signal-safe. */
bool unwind__is_profiler_pc(uintptr_t pc)
{
	return pc_in(pc, TEXT_UNWINDER | TEXT_SELF);
}

/* Is pc in libunwind's own code? Async-signal-safe. */
bool unwind__owns_pc(uintptr_t pc)
{
	return pc_in(pc, TEXT_UNWINDER);
}

/*
 * Is this thread unwinding from inside the sampling handler, where every
 * asynchronous signal is blocked already? Async-signal-safe.
 */
bool unwind__in_handler(void)
{
	return unwinding_in_handler;
}

/* The interrupted pc of a signal context. Async-signal-safe. */
uint64_t unwind__pc(void *ucontext)
{
	return ucontext_pc(ucontext);
}

/*
 * The fast trace from here (in the handler) through the signal frame; the
 * part after the interrupted pc goes to ips. Returns the frames stored, or
 * 0 when the trace did not get past the signal frame. Async-signal-safe.
 */
static int fast_stack(uintptr_t pc, uint64_t *ips, int max, void **trace, int trace_max)
{
	int got, i = 0, n = 0;

	if (trace_max > max + AP_HANDLER_FRAMES)
		trace_max = max + AP_HANDLER_FRAMES;
	got = unw_backtrace(trace, trace_max);
	while (i < got && (uintptr_t)trace[i] != pc)
		i++;
	if (i == got)
		return 0;
	ips[n++] = pc;
	for (i++; i < got && n < max; i++)
		ips[n++] = (uintptr_t)trace[i] + trace_bias;
	return n;
}

/*
 * Store the interrupted pc and then the return addresses of its callers,
 * innermost first, from the signal handler's ucontext; trace is room for
 * trace_max raw entries; *slow says whether the DWARF walk had to do it.
 * Returns how many were stored (at least 1), or 0 when this context must
 * not be unwound. Only from the sampling handler,
 * whose mask blocks every asynchronous signal. Async-signal-safe under the
 * conditions in the file comment.
 */
int unwind__stack(void *ucontext, uint64_t *ips, int max, void **trace, int trace_max, bool *slow)
{
	ucontext_t *uc = ucontext;
	uintptr_t pc = ucontext_pc(uc);
	unw_cursor_t cursor;
	int n = 0;

	*slow = false;
	if (max <= 0 || pc_in(pc, TEXT_LOADER | TEXT_UNWINDER))
		return 0;
	unwinding_in_handler = true;
	if (fast_trace && trace && trace_max > 0)
		n = fast_stack(pc, ips, max, trace, trace_max);
	*slow = n == 0;
	if (n == 0 && unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
		do {
			unw_word_t ip;

			if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			ips[n++] = ip;
		} while (n < max && unw_step(&cursor) > 0);
	}
	unwinding_in_handler = false;
	return n;
}
