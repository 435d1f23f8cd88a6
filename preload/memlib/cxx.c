/* SPDX-License-Identifier: MIT */
/*
 * cxx.c - C++'s operator new and delete, every form (new and new[], nothrow,
 * aligned; delete and delete[], sized, nothrow, aligned), interposed for
 * memory profiles. An allocator loaded as a shared library before
 * libstdc++ (jemalloc, tcmalloc, mimalloc) defines them itself, and the
 * loader binds the program's new to its, which never calls malloc: without
 * these wrappers every new and delete of such a program went unseen.
 *
 * Each calls the next definition in the lookup order (dlsym RTLD_NEXT, at
 * the library's start or at the first call; failing that, the first
 * definition of any loaded object, as for a C++ module that a C program
 * dlopened with RTLD_LOCAL). Per form, once: when the object that defines it
 * also defines malloc (the allocator's own new) and a probe sees that it
 * does not reach alloc.c's wrappers, the wrapper counts and samples the
 * block as malloc does (own); else (libstdc++'s new calls malloc, jemalloc's
 * aligned new its aligned_alloc: counted there) it only passes the call on,
 * a tail call (pass). A delete of an own form takes a block maybe sampled
 * out of the live table before the real one frees it, as free does.
 *
 * Fast paths as alloc.c's: a byte of state, in own forms the thread-local
 * count or the filter's bit, then a tail call. The rest is in functions of
 * their own, which call the real new without a cleanup: a std::bad_alloc
 * it throws passes through their frames (.eh_frame) as without us.
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "../dynsym.h"
#include "alloc.h"

/* The forms, in the order of names[]; kinds: new (sizes), delete (pointer, then the rest). */
enum {
	NEW,
	NEW_A,
	NEW_NT,
	NEW_A_NT,
	NEW_AL,
	NEW_A_AL,
	NEW_AL_NT,
	NEW_A_AL_NT,
	DEL,
	DEL_A,
	DEL_S,
	DEL_A_S,
	DEL_NT,
	DEL_A_NT,
	DEL_AL,
	DEL_A_AL,
	DEL_S_AL,
	DEL_A_S_AL,
	DEL_AL_NT,
	DEL_A_AL_NT,
	NR_FORMS
};

static const char *const names[NR_FORMS] = {
    DYNSYM_NEW_NAMES,
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* A form's state: not looked up, not found by dlsym (the walk at its first call), pass, own. */
enum { UNSEEN, LATER, PASS, OWN, NONE };

static struct {
	uint8_t state[NR_FORMS]; /* atomic; set after fn (release) */
	void *fn[NR_FORMS];
} cxx __attribute__((aligned(64)));

static int resolved; /* 0, 1 while a thread looks them up, 2 when done; atomic */

/* The objects that define malloc (their bases), found when the forms are looked up. */
struct bases {
	int n;
	uintptr_t base[8];
};

static void find_malloc(struct bases *m)
{
	struct dynsym_def d[8];
	int n = dynsym__all("malloc", d, 8);
	Dl_info info;

	m->n = 0;
	for (int k = 0; k < n; k++)
		if (dladdr((void *)d[k].addr, &info))
			m->base[m->n++] = (uintptr_t)info.dli_fbase;
}

/*
 * Does the object that defines f define malloc too (an allocator's own new,
 * which does not call malloc)? Every object that defines malloc counts: an
 * allocator that a module dlopened with RTLD_LOCAL brought is one too,
 * though the program's malloc is another's.
 */
static bool own_allocator(void *f, const struct bases *m)
{
	Dl_info fi;

	if (!f || !dladdr(f, &fi))
		return false;
	for (int k = 0; k < m->n; k++)
		if (m->base[k] == (uintptr_t)fi.dli_fbase)
			return true;
	return false;
}

typedef void *new1_fn(size_t);
typedef void *new2_fn(size_t, size_t);
typedef void *new3_fn(size_t, size_t, const void *);
typedef void *new_nt_fn(size_t, const void *);
typedef void del1_fn(void *);
typedef void del2_fn(void *, size_t);
typedef void del3_fn(void *, size_t, size_t);
typedef void del_nt_fn(void *, const void *);
typedef void del_al_nt_fn(void *, size_t, const void *);

/* Call new form i's real function: n bytes, alignment al, nothrow tag nt (where the form has them).
 */
static inline __attribute__((always_inline)) void *call_new(int i, size_t n, size_t al,
							    const void *nt)
{
	void *f = cxx.fn[i];

	switch (i) {
	case NEW:
	case NEW_A:
		return ((new1_fn *)f)(n);
	case NEW_NT:
	case NEW_A_NT:
		return ((new_nt_fn *)f)(n, nt);
	case NEW_AL:
	case NEW_A_AL:
		return ((new2_fn *)f)(n, al);
	default:
		return ((new3_fn *)f)(n, al, nt);
	}
}

/*
 * Does new form i's real function (an allocator's own) reach alloc.c's
 * wrappers? jemalloc's aligned new calls its aligned_alloc through the
 * PLT: counted there, it must not be counted again here. A block of 1 byte
 * with the thread's count at 0 (any allocation the wrappers see takes a
 * slow path, which notes reach_probe), deleted by the matching real delete.
 * The count is restored.
 */
static bool reaches_wrappers(int i)
{
	static const char tag; /* std::nothrow: its address only */
	int d = i & 1 ? (i >= NEW_AL ? DEL_A_AL : DEL_A) : (i >= NEW_AL ? DEL_AL : DEL);
	struct probe pr;
	Dl_info a, b;
	bool hit;
	void *p;

	if (!probe_begin(
		&pr)) /* alloc.c's lookup not done (never here): pass, never counted twice */
		return true;
	p = call_new(i, 1, 64, &tag);
	hit = probe_end(&pr);
	if (!p || !cxx.fn[d] || !dladdr(cxx.fn[i], &a) || !dladdr(cxx.fn[d], &b) ||
	    a.dli_fbase != b.dli_fbase)
		return hit; /* no delete of the same allocator: 1 byte left, not freed by another */
	if (i >= NEW_AL)
		((del2_fn *)cxx.fn[d])(p, 64);
	else
		((del1_fn *)cxx.fn[d])(p);
	return hit;
}

/* Form i's real function is f: its state (a new form probed when the allocator defines it). */
static void set_form(int i, void *f, const struct bases *m)
{
	int s = !f ? NONE : own_allocator(f, m) ? OWN : PASS;

	cxx.fn[i] = f;
	__atomic_store_n(&cxx.state[i], s, __ATOMIC_RELEASE);
	if (s == OWN && i < DEL && reaches_wrappers(i))
		__atomic_store_n(&cxx.state[i], PASS, __ATOMIC_RELEASE);
}

/*
 * Does an object after this library (at self) in the load order define
 * name, where dlsym RTLD_NEXT finds it? Asked before dlsym, which is never
 * to fail: a failed lookup formats its message, and its malloc and free
 * reach a program's own free that calls dlsym itself (recursing for ever).
 */
static bool defined_after(const char *name, uintptr_t self)
{
	struct dynsym_def d[4];
	int n = dynsym__all(name, d, 4);
	bool after = false;

	for (int k = 0; k < n; k++) {
		if (after)
			return true;
		after = d[k].base == self;
	}
	return false;
}

/*
 * Look every form up (once: the library's constructor, or the first call of
 * one): the next definition, dlsym RTLD_NEXT, asked only when some other
 * object defines it; a form not found waits for its first call (LATER). The deletes first: the
 * probes of the news free their blocks with them. Another thread waits for the one looking; the
 * looking thread's own calls (from a probe) find the forms set.
 */
void cxx__resolve(void)
{
	static __thread __attribute__((tls_model("initial-exec"))) bool resolving;
	Dl_info self = {0};
	struct bases m = {0};

	if (!alloc__once(&resolved, resolving))
		return;
	resolving = true;
	alloc__resolve();
	if (dladdr((void *)cxx__resolve, &self))
		find_malloc(&m);
	for (int k = 0; k < NR_FORMS; k++) {
		int i = (k + DEL) % NR_FORMS;
		void *f = self.dli_fbase && defined_after(names[i], (uintptr_t)self.dli_fbase)
			      ? dlsym(RTLD_NEXT, names[i])
			      : NULL;

		if (f)
			set_form(i, f, &m);
		else
			__atomic_store_n(&cxx.state[i], LATER, __ATOMIC_RELEASE);
	}
	resolving = false;
	__atomic_store_n(&resolved, 2, __ATOMIC_RELEASE);
}

/*
 * Form i's state, looked up first if need be: for a LATER one, the first
 * definition not ours in the loaded objects (its delete's first, for a
 * new's probe).
 */
static int state_of(int i)
{
	int s = __atomic_load_n(&cxx.state[i], __ATOMIC_ACQUIRE);
	struct dynsym_def d[4];
	struct bases m;
	int n;

	if (s == UNSEEN) {
		cxx__resolve();
		s = __atomic_load_n(&cxx.state[i], __ATOMIC_ACQUIRE);
	}
	if (s != LATER)
		return s;
	if (i < DEL)
		state_of(i & 1 ? (i >= NEW_AL ? DEL_A_AL : DEL_A) : (i >= NEW_AL ? DEL_AL : DEL));
	n = dynsym__all(names[i], d, 4);
	find_malloc(&m);
	for (int k = 0; k < n; k++) {
		Dl_info self, other;

		if (dladdr((void *)state_of, &self) && dladdr((void *)d[k].addr, &other) &&
		    self.dli_fbase == other.dli_fbase)
			continue; /* ours */
		set_form(i, (void *)d[k].addr, &m);
		return __atomic_load_n(&cxx.state[i], __ATOMIC_ACQUIRE);
	}
	return LATER; /* nowhere (yet): the fallbacks below */
}

/* Why new_slow is called: the form not looked up, a block of at least the interval or of 0 bytes,
 * a sample due (the count counted down already). */
enum { FIRST, BIG, DUE };

/*
 * New form i's rare cases (how). FIRST: the form looked up, then on as the
 * fast path goes (a pass form's call a tail call: nothing of ours stays on
 * the stack under the real new). An own form's BIG or DUE: the real call,
 * then the block counted or sampled (a probe's: only noted). Defined
 * nowhere (a call no loaded object could have been linked against): the C
 * allocator's block, as libstdc++'s new gives, or for the throwing forms
 * an abort when there is none (nothing here can throw std::bad_alloc).
 */
static __attribute__((noinline)) void *new_slow(int i, size_t n, size_t al, const void *nt, int how,
						uintptr_t ret)
{
	void *q;

	if (how == FIRST) {
		static const char msg[] = "autoprof: operator new is defined nowhere: aborting\n";
		int s = state_of(i);

		if (s == PASS)
			return call_new(i, n, al, nt);
		if (s == OWN && n - 1 >= __atomic_load_n(&real.big1, __ATOMIC_RELAXED))
			how = BIG;
		else if (s == OWN && count_down((int64_t)n))
			how = DUE;
		else if (s == OWN)
			return call_new(i, n, al, nt);
		else {
			q = i >= NEW_AL ? aligned_alloc(al, (n + al - 1) & ~(al - 1))
					: malloc(n ? n : 1);
			if (!q && i != NEW_NT && i != NEW_A_NT && i != NEW_AL_NT &&
			    i != NEW_A_AL_NT) {
				if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
					abort();
				abort();
			}
			return q;
		}
	}
	q = call_new(i, n, al, nt);
	sampled_due(q, n, ret, how == BIG);
	__asm__ volatile("" ::: "memory"); /* not a tail call: nothing of ours after the throw */
	return q;
}

/*
 * The fast path: pass, a tail call; own, malloc's (a block from 1 byte to
 * below the interval: a thread-local subtraction, then a tail call).
 * Macro arguments: the name, the form, its type, its parameters, the real
 * call's arguments, the alignment and nothrow tag for new_slow.
 */
#define NEW_WRAPPER(name, i, type, params, args, al, nt)                                           \
	AP_API AP_FAST void *name params                                                           \
	{                                                                                          \
		int s = __atomic_load_n(&cxx.state[i], __ATOMIC_ACQUIRE);                          \
                                                                                                   \
		if (__builtin_expect(s != PASS, 0)) {                                              \
			if (s != OWN)                                                              \
				return new_slow(i, n, al, nt, FIRST, RET);                         \
			if (__builtin_expect(                                                      \
				n - 1 >= __atomic_load_n(&real.big1, __ATOMIC_RELAXED), 0))        \
				return new_slow(i, n, al, nt, BIG, RET);                           \
			if (__builtin_expect(count_down((int64_t)n), 0))                           \
				return new_slow(i, n, al, nt, DUE, RET);                           \
		}                                                                                  \
		return ((type *)cxx.fn[i])args;                                                    \
	}

NEW_WRAPPER(_Znwm, NEW, new1_fn, (size_t n), (n), 16, NULL)
NEW_WRAPPER(_Znam, NEW_A, new1_fn, (size_t n), (n), 16, NULL)
NEW_WRAPPER(_ZnwmRKSt9nothrow_t, NEW_NT, new_nt_fn, (size_t n, const void *nt), (n, nt), 16, nt)
NEW_WRAPPER(_ZnamRKSt9nothrow_t, NEW_A_NT, new_nt_fn, (size_t n, const void *nt), (n, nt), 16, nt)
NEW_WRAPPER(_ZnwmSt11align_val_t, NEW_AL, new2_fn, (size_t n, size_t al), (n, al), al, NULL)
NEW_WRAPPER(_ZnamSt11align_val_t, NEW_A_AL, new2_fn, (size_t n, size_t al), (n, al), al, NULL)
NEW_WRAPPER(_ZnwmSt11align_val_tRKSt9nothrow_t, NEW_AL_NT, new3_fn,
	    (size_t n, size_t al, const void *nt), (n, al, nt), al, nt)
NEW_WRAPPER(_ZnamSt11align_val_tRKSt9nothrow_t, NEW_A_AL_NT, new3_fn,
	    (size_t n, size_t al, const void *nt), (n, al, nt), al, nt)

/*
 * Delete form i's rare cases: not looked up yet, or (own) the filter's bit
 * set: an arena's block (never freed), or a block maybe sampled, out of the
 * live table first, as free_slow does. Arguments a and b: the form's after
 * the pointer (size, alignment, nothrow tag as an integer). Not found
 * anywhere: free, as libstdc++'s delete does.
 */
static __attribute__((noinline)) void delete_slow(int i, void *p, uintptr_t a, uintptr_t b)
{
	int s = __atomic_load_n(&cxx.state[i], __ATOMIC_ACQUIRE);
	void *f;

	if (s != PASS && s != OWN)
		s = state_of(i);
	if (s == LATER || s == NONE)
		return free(p);
	if (s == OWN && p) {
		struct live_block blk;

		if (alloc__in_arena(p))
			return;
		if (__atomic_load_n(&real.filter, __ATOMIC_RELAXED) != off_filter &&
		    live__filter_has(real.filter, (uintptr_t)p))
			core->take(p, &blk);
	}
	f = cxx.fn[i];
	switch (i) {
	case DEL:
	case DEL_A:
		return ((del1_fn *)f)(p);
	case DEL_S:
	case DEL_A_S:
	case DEL_AL:
	case DEL_A_AL:
		return ((del2_fn *)f)(p, a);
	case DEL_NT:
	case DEL_A_NT:
		return ((del_nt_fn *)f)(p, (const void *)a);
	case DEL_S_AL:
	case DEL_A_S_AL:
		return ((del3_fn *)f)(p, a, b);
	default:
		return ((del_al_nt_fn *)f)(p, a, (const void *)b);
	}
}

/* The fast path: pass, a tail call; own, free's (the filter's bit, then a tail call). */
#define DEL_WRAPPER(name, i, type, params, args, a, b)                                             \
	AP_API AP_FAST void name params                                                            \
	{                                                                                          \
		int s = __atomic_load_n(&cxx.state[i], __ATOMIC_ACQUIRE);                          \
                                                                                                   \
		if (__builtin_expect(s != PASS, 0) &&                                              \
		    (s != OWN || live__filter_has(__atomic_load_n(&real.filter, __ATOMIC_RELAXED), \
						  (uintptr_t)p)))                                  \
			return delete_slow(i, p, (uintptr_t)(a), (uintptr_t)(b));                  \
		return ((type *)cxx.fn[i])args;                                                    \
	}

DEL_WRAPPER(_ZdlPv, DEL, del1_fn, (void *p), (p), 0, 0)
DEL_WRAPPER(_ZdaPv, DEL_A, del1_fn, (void *p), (p), 0, 0)
DEL_WRAPPER(_ZdlPvm, DEL_S, del2_fn, (void *p, size_t n), (p, n), n, 0)
DEL_WRAPPER(_ZdaPvm, DEL_A_S, del2_fn, (void *p, size_t n), (p, n), n, 0)
DEL_WRAPPER(_ZdlPvRKSt9nothrow_t, DEL_NT, del_nt_fn, (void *p, const void *nt), (p, nt), nt, 0)
DEL_WRAPPER(_ZdaPvRKSt9nothrow_t, DEL_A_NT, del_nt_fn, (void *p, const void *nt), (p, nt), nt, 0)
DEL_WRAPPER(_ZdlPvSt11align_val_t, DEL_AL, del2_fn, (void *p, size_t al), (p, al), al, 0)
DEL_WRAPPER(_ZdaPvSt11align_val_t, DEL_A_AL, del2_fn, (void *p, size_t al), (p, al), al, 0)
DEL_WRAPPER(_ZdlPvmSt11align_val_t, DEL_S_AL, del3_fn, (void *p, size_t n, size_t al), (p, n, al),
	    n, al)
DEL_WRAPPER(_ZdaPvmSt11align_val_t, DEL_A_S_AL, del3_fn, (void *p, size_t n, size_t al), (p, n, al),
	    n, al)
DEL_WRAPPER(_ZdlPvSt11align_val_tRKSt9nothrow_t, DEL_AL_NT, del_al_nt_fn,
	    (void *p, size_t al, const void *nt), (p, al, nt), al, nt)
DEL_WRAPPER(_ZdaPvSt11align_val_tRKSt9nothrow_t, DEL_A_AL_NT, del_al_nt_fn,
	    (void *p, size_t al, const void *nt), (p, al, nt), al, nt)
